#!/usr/bin/env bash
# ab_latency.sh - bgnnc binaries (a base and one or more changes) timed side by side on one GPU in
# one call, so that a change's effect is read from figures of the same machine and run:
#
#   OUT=/some/dir bench/ab_latency.sh BASE_BGNNC NEW_BGNNC [MORE_BGNNC...] [--rounds R] [--repeat N]
#                                     [--models LIST] [--datasets LIST]
#
# For every case (gcn_bin on Cora, CiteSeer and PubMed as bench/latency_budget.sh sets them up,
# then each model of LIST on Cora with its trained weights; default LIST: gcn_full sage_bin
# indgcn_bin saint_bin; --models "" for none; --datasets picks among cora citeseer pubmed) each
# binary runs `bgnnc run --target gpu --repeat N` (median of N with CUDA events, as auto runs it)
# R times, the binaries in turn; the table gives the median of each binary's R medians and each
# one's ratio to the first.  The binaries embed their templates, so a base built
# elsewhere from an older commit (cmake --build BUILD --target bgnnc) runs as it is.
# Data: $BGNN_DATA_DIR (default .carry/data).  Logs in $OUT/ab_*.log; the table last and in
# $OUT/ab_table.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BINS=()
while [[ $# -gt 0 && $1 != --* ]]; do BINS+=("$(realpath "$1")"); shift; done
[[ ${#BINS[@]} -ge 2 ]] || { echo "usage: OUT=DIR bench/ab_latency.sh BASE_BGNNC NEW_BGNNC [MORE...] [--rounds R] [--repeat N] [--models LIST] [--datasets LIST]" >&2; exit 2; }
ROUNDS=3 REPEAT=2000 MODELS="gcn_full sage_bin indgcn_bin saint_bin" DATASETS="cora citeseer pubmed"
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --datasets) DATASETS=$2; shift 2 ;;
    *) echo "ab_latency.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
for b in "${BINS[@]}"; do [[ -x $b ]] || { echo "ab_latency.sh: $b is not an executable" >&2; exit 2; }; done
OUT=${OUT:-$ROOT/ab-latency-out}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
mkdir -p "$OUT"
TMP=$(mktemp -d)
export BGNN_CACHE_DIR=$TMP/jit-cache
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
B=${BINS[0]} # planetoid_setup's gen-weights
. bench/planetoid_setup.sh
. bench/ab_lib.sh # ab_row: the table

# one_run BIN MODEL DIR WEIGHTS LOG: the median inference time of one run, in us (nothing when
# the run failed: its own output is read, not the log's last time)
one_run() {
    local o
    o=$("$1" run "$2" --data "$3" --weights "$4" --target gpu --repeat "$REPEAT" 2>&1)
    printf '%s\n' "$o" >>"$5"
    grep -oE "inference [0-9.]+ ms" <<<"$o" | tail -1 | awk '{printf "%.2f\n", $2 * 1000}'
}

CASES=()
for ds in $DATASETS; do CASES+=("$ds gcn_bin $(planetoid_setup $ds)"); done
for m in $MODELS; do CASES+=("cora $m $DATA/cora examples/$m.bgnn examples/weights/${m}_cora.safetensors"); done

head=$(printf '%-9s %-11s' dataset model)
for ((j = 0; j < ${#BINS[@]}; j++)); do head+=$(printf ' %9s' "bin$j us"); done
for ((j = 1; j < ${#BINS[@]}; j++)); do head+=$(printf ' %8s' "$j/0"); done
TABLE=("$head")
for c in "${CASES[@]}"; do
    read -r ds m dir model w <<<"$c"
    log=$OUT/ab_${ds}_$m.log
    : >"$log"
    declare -A t=()
    for ((i = 0; i < ROUNDS; i++)); do
        for ((j = 0; j < ${#BINS[@]}; j++)); do
            echo "== bin$j round $i: ${BINS[j]}" >>"$log"
            t[$j]+="$(one_run "${BINS[j]}" "$model" "$dir" "$w" "$log") "
        done
    done
    times=()
    for ((j = 0; j < ${#BINS[@]}; j++)); do times+=("${t[$j]}"); done
    row=$(ab_row "$(printf '%-9s %-11s' "$ds" "$m")" "${times[@]}")
    TABLE+=("$row")
    echo "$row"
    for ((j = 0; j < ${#BINS[@]}; j++)); do ab_rounds "$j" "${t[$j]}" "$ROUNDS" "$log"; done
    grep -E "accuracy" "$log" | sort | uniq -c | sed 's/^/    /'
    unset t
done
rm -rf "$TMP"
{
    echo "GPU: $GPU; bgnnc run --target gpu --repeat $REPEAT (median, CUDA events), $ROUNDS rounds, the binaries in turn, median of the rounds"
    for ((j = 0; j < ${#BINS[@]}; j++)); do echo "bin$j: ${BINS[j]}"; done
    printf '%s\n' "${TABLE[@]}"
} | tee "$OUT/ab_table.txt"
