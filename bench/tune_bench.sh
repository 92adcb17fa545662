#!/usr/bin/env bash
# tune_bench.sh - issue 17's `bgnnc tune` acceptance run, one command on a GPU machine
# (docs/tuning.md, docs/performance.md "Tuning"):
#
#   OUT=/some/dir bench/tune_bench.sh [--budget SECONDS] [--graphs LIST] [--model FILE]
#
# Builds bgnnc and bgnn_graphgen (Release, $BUILD, default build-tune/), then for each graph:
# Cora, CiteSeer and PubMed with their gcn_bin models (as bench/latency_budget.sh prepares them),
# and synthetic graphs of tools/graphgen (128 dense features, bench/gcn_bin_f128.bgnn, random
# weights): `bgnnc tune` (its log: every point measured, each checked bit for bit against the
# default plan) into a fresh database $OUT/tune.db, then `bgnnc run --repeat 1000` with
# `--tune-db off`, with the database, and with the learned predictor alone (no database, the
# built-in model, BGNN_SCHED_MODEL=builtin, or --model FILE), alternately twice; the table last gives the default, tuned
# and predicted end-to-end medians (CUDA events; the better of the two alternations each) and
# their ratios to the default.  --graphs: a comma list of names (cora, citeseer, pubmed, and the synthetic ones below).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/tune-bench-out}
BUILD=${BUILD:-$ROOT/build-tune}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
BUDGET=60
MODEL_FILE=builtin
ONLY=""
while [[ $# -gt 0 ]]; do
    case $1 in
    --budget) BUDGET=$2; shift 2 ;;
    --model) MODEL_FILE=$(realpath "$2"); shift 2 ;;
    --graphs) ONLY=",$2,"; shift 2 ;;
    *) echo "tune_bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT"
. bench/tools_build.sh
tools_build "$OUT/build.log" tune_bench.sh
. bench/planetoid_setup.sh
DB=$OUT/tune.db
rm -f "$DB"
# name -> "data dir, model, weights" (synthetic: generated here)
SYNTH="rmat_n65536_d16 rmat_n262144_d8_a70 powerlaw_n100000_d10 er_n200000_d6 grid_n250000 sbm_n65536_d24 ba_n50000_d4"
setup() {
    planetoid_setup "$1" && return
    case $1 in
    *)
        local kind=${1%%_*} rest=${1#*_} n d args=()
        n=$(grep -oE 'n[0-9]+' <<<"$rest" | head -1 | tr -d n)
        d=$(grep -oE '_d[0-9]+' <<<"$rest" | head -1 | tr -d _d)
        [[ -n $d ]] && args+=(--degree "$d")
        [[ $rest == *_a70* ]] && args+=(--skew 0.70,0.12,0.12,0.06)
        [[ -f $TMP/f128_w.safetensors ]] || "$B" gen-weights bench/gcn_bin_f128.bgnn --seed 1 -o "$TMP/f128_w.safetensors" >/dev/null
        "$GG" "$kind" --nodes "$n" "${args[@]}" --features 128 --density 1 --seed 7 --out "$TMP/$1" >"$OUT/gen_$1.log" 2>&1 ||
            { echo "tune_bench.sh: graphgen $1 failed" >&2; return 1; }
        echo "$TMP/$1 bench/gcn_bin_f128.bgnn $TMP/f128_w.safetensors" ;;
    esac
}
median_us() { grep -oE "inference [0-9.]+ ms" "$1" | head -1 | awk '{printf "%.2f", $2 * 1000}'; }
min2() { awk -v a="$1" -v b="$2" 'BEGIN {print (a + 0 < b + 0 ? a : b)}'; }
TABLE=()
for name in cora citeseer pubmed $SYNTH; do
    [[ -n $ONLY && $ONLY != *",$name,"* ]] && continue
    read -r dir model w < <(setup "$name") || continue
    [[ -z ${dir:-} ]] && continue
    log=$OUT/tune_$name.log
    echo "== $name ($GPU): $model on $dir" | tee "$log"
    "$B" tune "$model" --data "$dir" --weights "$w" --budget "$BUDGET" --reps 200 --db "$DB" --records "$OUT/records.tsv" >>"$log" 2>&1 ||
        { echo "tune_bench.sh: bgnnc tune failed on $name (see $log)"; tail -n 5 "$log"; continue; }
    tail -n 12 "$log"
    d1=$OUT/run_${name}_default1.log t1=$OUT/run_${name}_tuned1.log
    d2=$OUT/run_${name}_default2.log t2=$OUT/run_${name}_tuned2.log
    for pass in 1 2; do
        "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 1000 --tune-db off >"$OUT/run_${name}_default$pass.log" 2>&1
        "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 1000 --tune-db "$DB" >"$OUT/run_${name}_tuned$pass.log" 2>&1
        # the learned predictor alone: no database (a file that does not exist), the built-in model
        BGNN_SCHED_MODEL=$MODEL_FILE "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 1000 --tune-db "$TMP/no.tune" >"$OUT/run_${name}_predicted$pass.log" 2>&1
    done
    def=$(min2 "$(median_us "$d1")" "$(median_us "$d2")")
    tun=$(min2 "$(median_us "$t1")" "$(median_us "$t2")")
    pre=$(min2 "$(median_us "$OUT/run_${name}_predicted1.log")" "$(median_us "$OUT/run_${name}_predicted2.log")")
    nodes=$(grep -oE "[0-9]+ nodes, [0-9]+ edges" "$d1" | head -1)
    used=$(grep -E "^tune " "$t1" | head -1 | grep -oE "^tune +[0-9]+ schedules?" | awk '{print $2}')
    ratio=$(awk -v a="$def" -v b="$tun" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
    pratio=$(awk -v a="$def" -v b="$pre" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
    TABLE+=("$(printf '%-22s %-26s default %9s us  tuned %9s us  %5sx  (%s tuned ops)  predicted %9s us %5sx' "$name" "$nodes" "$def" "$tun" "$ratio" "${used:-0}" "$pre" "$pratio")")
done
rm -rf "$TMP"
cp "$DB" "$OUT/tune_db.txt" 2>/dev/null
{
    echo "GPU: $GPU; gcn_bin; end to end = bgnnc run --repeat 1000 (CUDA events median), default = --tune-db off,"
    echo "tuned = the database bgnnc tune wrote in this run (budget ${BUDGET} s a graph); better of two alternations each"
    printf '%s\n' "${TABLE[@]}"
} | tee "$OUT/tune_table.txt"
