#!/usr/bin/env bash
# ab_lib.sh - the table of the side-by-side timing scripts (bench/ab_latency.sh,
# bench/ab_reddit.sh, bench/ab_tu.sh), sourced by them.
#   ab_median            the median of the numbers on stdin, one a line ("-" when none)
#   ab_row LABEL T0 T1.. one table row: LABEL, each binary's median of its space-separated
#                        times Tj, then each one's ratio to the first
#   ab_rounds J T R LOG  binary J's line of per-round times T, with a warning when fewer than
#                        R runs gave a time (a failed run adds none; LOG has its output)
ab_median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ab_row() {
    local row=$1 j
    shift
    local med=()
    for ((j = 1; j <= $#; j++)); do
        med[j]=$(tr ' ' '\n' <<<"${!j}" | grep . | ab_median)
        row+=$(printf ' %9s' "${med[j]}")
    done
    for ((j = 2; j <= $#; j++)); do
        row+=$(awk -v a="${med[1]}" -v b="${med[j]}" 'BEGIN {if (a > 0 && b > 0) printf " %8.3f", b / a; else printf " %8s", "-"}')
    done
    echo "$row"
}
ab_rounds() {
    local got
    got=$(wc -w <<<"$2")
    echo "    bin$1: $2$([[ $got -lt $3 ]] && echo " (WARNING: $(($3 - got)) of $3 runs failed: $4)")"
}
