#!/usr/bin/env bash
# device_ab.sh - one device call: the binaries tools/prepare_ab.sh put in .carry/bin timed side
# by side, then this tree's GPU checks, a short table last.  On the GPU machine, from the
# repository root:
#
#   OUT=$OUT tools/device_ab.sh [--cora "MODELS"] [--tu "MODELS"] [--rounds R] [--no-tests]
#                               [--memcheck] [--racecheck "EXAMPLES"] [--racecheck-variants "IDX"]
#                               [--reddit "MODELS"]
#
#   --cora    Cora models for bench/ab_latency.sh (default "gcn_bin sage_bin saint_bin"; "" none)
#   --tu      TU models for bench/ab_tu.sh, batches of 1024 (default "gin_bin gcn_bin"; "" none)
#   --reddit  Reddit-sized models for bench/ab_reddit.sh (bgnn_time_base / _new, median of 30;
#             default none: the graph's generation and the JIT take about a minute)
#   --rounds  rounds of each A/B (default 2)
#   --no-tests      leave out test_gpu_examples, test_gpu_variants, test_gpu_batches, test_gpu_thresholds
#                   (env VARIANTS_LIMIT: the variants test's time limit in seconds, default 250)
#   --memcheck      also compute-sanitizer memcheck on the batches test (quick, 3 models)
#   --racecheck E   also racecheck of test_gpu_examples on the examples E (comma-separated file
#                   names, quick mode, the CUDA-graph mode: the separate and row-group kernels)
#   --racecheck-variants I
#                   also racecheck of test_gpu_variants' models I (comma-separated indices) on the
#                   quick mode's power-law and hub graphs (67 and 10,001 rows: the hub's 10,000
#                   edges on a group of four warps in the order slots), the CUDA-graph mode
# Timings run first and alone; the checks run after them, in parallel (each with its own
# time limit).  Writes $OUT/ab/, $OUT/abt/, $OUT/<check>.log, $OUT/rcs and $OUT/logs.tgz (what
# the device tool sends back when it cannot send every file).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/device-ab-out}
CORA="gcn_bin sage_bin saint_bin" TU="gin_bin gcn_bin" REDDIT="" ROUNDS=2 TESTS=1 MEMCHECK=0 RACE="" RACEV=""
while [[ $# -gt 0 ]]; do
    case $1 in
    --cora) CORA=$2; shift 2 ;;
    --tu) TU=$2; shift 2 ;;
    --reddit) REDDIT=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --no-tests) TESTS=0; shift ;;
    --memcheck) MEMCHECK=1; shift ;;
    --racecheck) RACE=$2; shift 2 ;;
    --racecheck-variants) RACEV=$2; shift 2 ;;
    *) echo "device_ab.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
B=$PWD/.carry/bin
for f in bgnnc_base bgnnc_new; do
    [[ -x $B/$f ]] || { echo "device_ab.sh: no $B/$f (run tools/prepare_ab.sh here first, carry .carry)" >&2; exit 2; }
done
mkdir -p "$OUT"
export BGNN_DATA_DIR=${BGNN_DATA_DIR:-$PWD/.carry/data} BGNN_SOURCE_DIR=$PWD BGNN_CACHE_DIR=/tmp/bgnn-ab-jit
tools/unpack_carry.sh "$BGNN_DATA_DIR"
T0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "base $(cat "$B/base_rev" 2>/dev/null || echo ?)"; } | tee "$OUT/env.log"
if [[ -n $CORA ]]; then
    OUT=$OUT/ab bench/ab_latency.sh "$B/bgnnc_base" "$B/bgnnc_new" --rounds "$ROUNDS" --repeat 1000 \
        --datasets cora --models "$CORA" >"$OUT/ab.log" 2>&1
fi
if [[ -n $TU ]]; then
    OUT=$OUT/abt bench/ab_tu.sh "$B/bgnnc_base" "$B/bgnnc_new" --rounds "$ROUNDS" --models "$TU" >"$OUT/abt.log" 2>&1
fi
if [[ -n $REDDIT ]]; then
    OUT=$OUT/abr bench/ab_reddit.sh "$B/bgnn_time_base" "$B/bgnn_time_new" --rounds "$ROUNDS" --repeat 30 \
        --models "$REDDIT" >"$OUT/abr.log" 2>&1
fi
echo "timings done in $((SECONDS - T0)) s"
: >"$OUT/rcs"
check() { # name limit command...: runs in the background, its exit status into rcs
    local name=$1 limit=$2
    shift 2
    ( timeout "$limit" "$@" >"$OUT/$name.log" 2>&1; echo "$name rc $?" >>"$OUT/rcs" ) &
}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [[ $TESTS == 1 ]]; then
    check examples 250 "$B/test_gpu_examples"
    check variants "${VARIANTS_LIMIT:-250}" "$B/test_gpu_variants"
    check batches 250 "$B/test_gpu_batches"
    check thresholds 120 "$B/test_gpu_thresholds"
fi
if [[ $MEMCHECK == 1 && -n $SAN ]]; then
    check memcheck_bat 250 env BGNN_GPU_TEST_QUICK=1 BGNN_BATCHES_MODELS=3 "$SAN" --tool memcheck --error-exitcode 3 "$B/test_gpu_batches"
fi
if [[ -n $RACE && -n $SAN ]]; then
    check racecheck_ex 250 env BGNN_GPU_TEST_NO_COOP=1 BGNN_EXEC=graph BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY="$RACE" \
        "$SAN" --tool racecheck --error-exitcode 3 "$B/test_gpu_examples"
fi
if [[ -n $RACEV && -n $SAN ]]; then
    check racecheck_var 250 env BGNN_GPU_TEST_NO_COOP=1 BGNN_EXEC=graph BGNN_GPU_TEST_QUICK=1 BGNN_VARIANTS_ONLY="$RACEV" \
        BGNN_VARIANTS_GRAPHS=2,3 "$SAN" --tool racecheck --error-exitcode 3 "$B/test_gpu_variants"
fi
wait
(cd "$OUT" && tar czf logs.tgz -- *.log rcs ab abt abr 2>/dev/null)
echo "== $(head -n 1 "$OUT/env.log"), $((SECONDS - T0)) s"
[[ -f $OUT/ab/ab_table.txt ]] && tail -n +4 "$OUT/ab/ab_table.txt"
[[ -f $OUT/abt/abt_table.txt ]] && tail -n +4 "$OUT/abt/abt_table.txt"
[[ -f $OUT/abr/abr_table.txt ]] && cat "$OUT/abr/abr_table.txt"
while read -r name _ rc; do
    printf '%-14s rc %-3s %s\n' "$name" "$rc" "$(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$name.log" | tail -n 1)"
done <"$OUT/rcs"
