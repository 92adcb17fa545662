#!/usr/bin/env bash
# latency_budget.sh - issue 15's latency budget of gcn_bin on Cora, CiteSeer and PubMed, in one
# command on a GPU machine (docs/performance.md, "Latency budget"):
#
#   OUT=/some/dir bench/latency_budget.sh
#
# For each dataset: the model's time a run (CUDA events, median of 2000, as auto runs it), each
# kernel alone (`bgnnc run --profile`: median of 1000, one launch each) and each kernel's
# duration and busiest / average SM active cycles under Nsight Compute at real clocks (no cache
# flush, no clock lock).  Data: $BGNN_DATA_DIR (default .carry/data from tools/prepare_carry.sh):
# Cora as it is; CiteSeer's features from features.npy.gz; PubMed has no features, so random
# 0/1 ones (bench/make_features.py, 10% ones, seed 1) and random weights (`bgnnc gen-weights`,
# seed 1) as bench/run_models.sh uses.  Builds bgnnc (Release) into $BUILD (default
# build-budget/), or runs the one $BGNNC names.  Logs in $OUT; a table last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/latency-budget-out}
BUILD=${BUILD:-$ROOT/build-budget}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
mkdir -p "$OUT"
export BGNN_CACHE_DIR=${BGNN_CACHE_DIR:-$BUILD/jit-cache}
PREGEN=()
if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
    [[ -f $ROOT/.carry/generated/parser.c ]] && PREGEN=(-DBGNN_PREGENERATED_DIR="$ROOT/.carry/generated")
fi
if [[ -n ${BGNNC:-} ]]; then # a bgnnc built elsewhere (it embeds its templates)
    B=$(realpath "$BGNNC")
else
    { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${PREGEN[@]}" && cmake --build "$BUILD" --target bgnnc -j"$(nproc)"; } >"$OUT/build.log" 2>&1 ||
        { tail -n 20 "$OUT/build.log"; echo "latency_budget.sh: build failed"; exit 1; }
    B=$BUILD/bgnnc
fi
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
TMP=$(mktemp -d)
. bench/planetoid_setup.sh
TABLE=()
for ds in cora citeseer pubmed; do
    read -r dir model w < <(planetoid_setup $ds)
    log=$OUT/budget_$ds.log
    echo "== $ds ($GPU): $model on $dir" | tee "$log"
    "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 2000 >>"$log" 2>&1
    "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 1000 --profile 2>&1 | grep -E "^kernel" >>"$log"
    if [[ -n $NCU ]]; then
        BGNN_EXEC=launches "$NCU" --cache-control none --clock-control none -k regex:bgnn_k -c 40 \
            --metrics gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,smsp__inst_executed.sum \
            "$B" run "$model" --data "$dir" --weights "$w" --target gpu --repeat 3 >"$OUT/ncu_$ds.log" 2>&1
    fi
    total=$(grep -oE "inference [0-9.]+ ms" "$log" | head -1 | awk '{printf "%.1f us", $2 * 1000}')
    acc=$(grep -oE "test [0-9.]+%" "$log" | head -1)
    TABLE+=("$(printf '%-9s %-10s %-12s' "$ds" "$total" "$acc")")
    while read -r _ name t _; do
        # the last profiled launch of the kernel (or its _sparse / _dense / _wave variant): duration, SM avg, SM max
        read -r k a m < <(awk -v n="$name" '/, Context / {f = $0 ~ n"(_sparse|_dense|_wave)? \\("} f && /, Context / {d=x=y="-"}
            f && /gpu__time_duration/ {d=$NF} f && /sm__cycles_active.avg/ {x=$NF} f && /sm__cycles_active.max/ {y=$NF}
            END {print (d == "" ? "-" : d), (x == "" ? "-" : x), (y == "" ? "-" : y)}' "$OUT/ncu_$ds.log" 2>/dev/null)
        TABLE+=("$(printf '            %-28s alone %8s us  kernel %6s us  SM active avg %7s max %7s cycles' "$name" "$t" "${k:--}" "${a:--}" "${m:--}")")
    done < <(grep -E "^kernel" "$log" | grep -v "batchnorm_s")
done
rm -rf "$TMP"
{
    echo "GPU: $GPU; gcn_bin; time a run = median of 2000 (CUDA events); alone = bgnnc run --profile (one launch each);"
    echo "kernel = Nsight Compute gpu__time_duration at real clocks"
    printf '%s\n' "${TABLE[@]}"
} | tee "$OUT/budget_table.txt"
