#!/usr/bin/env bash
# tu_profile.sh - Nsight Compute on the kernels of TU batch models (the large-graph path: separate
# launches and row groups, in a CUDA graph), one GPU, one call:
#
#   OUT=/some/dir bench/tu_profile.sh BGNNC [--models LIST] [--datasets LIST] [--batch B]
#                                           [--kernel layers|graphs|auto]
#
# For every model of LIST (default gin_bin) and dataset (default "enzymes nci1"): `BGNNC run
# examples/tu/MODEL_DATASET.bgnn --graphs 0:B --target gpu` under ncu at real clocks (no cache
# flush, no clock lock), every kernel of the third run (the first two warm up), with duration,
# the busiest and average SM's active cycles, warp instructions, L2 / L1 traffic, achieved
# occupancy and the launch's shape; the warp-state section gives the stall reasons.  A table of
# each kernel's figures last, and in $OUT/prof_table.txt; full reports in $OUT/prof_*.log.  --kernel
# picks the batch kernel (BGNN_BATCH_KERNEL; default layers, the large-graph path).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/tu_lib.sh
. bench/tu_lib.sh
B=$(realpath "${1:?usage: OUT=DIR bench/tu_profile.sh BGNNC [--models L] [--datasets L] [--batch B] [--kernel K]}")
shift
MODELS=gin_bin DATASETS="enzymes nci1" BATCH=1024 KERNEL=layers
while [[ $# -gt 0 ]]; do
    case $1 in
    --models) MODELS=$2; shift 2 ;;
    --datasets) DATASETS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --kernel) KERNEL=$2; shift 2 ;;
    *) echo "tu_profile.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$PWD/tu-profile-out}
mkdir -p "$OUT"
DATA=${BGNN_DATA_DIR:-$PWD/.carry/data}
bench/tu_onehot.sh "$DATA" >/dev/null || exit 1
NCU=$(tu_ncu)
[[ -n $NCU ]] || { echo "tu_profile.sh: no ncu" >&2; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
METRICS=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,smsp__inst_executed.sum
METRICS+=,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active
METRICS+=,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static
table=$OUT/prof_table.txt
echo "GPU: ${gpu:-?}; ncu at real clocks, the third run's kernels; us, kcycles, M warp instructions, MB" >"$table"
printf '%-9s %-8s %-26s %8s %8s %8s %8s %8s %8s %6s %6s %6s\n' dataset model kernel time_us smAvgK smMaxK instM L2MB L1MB occ% grid block >>"$table"
for ds in $DATASETS; do
    b=$(tu_batch "$DATA" "$ds" "$BATCH") || exit 1
    for m in $MODELS; do
        log=$OUT/prof_${ds}_$m.log
        # the kernels of one run: count them from the plan (launch count of a CUDA-graph run)
        BGNN_BATCH_KERNEL=$KERNEL "$NCU" --cache-control none --clock-control none --metrics "$METRICS" \
            --section WarpStateStats -k regex:bgnn_ \
            "$B" run "examples/tu/${m}_$ds.bgnn" --data "$DATA/$ds" \
            --weights "examples/weights/tu/${m}_$ds.safetensors" --graphs "0:$b" --target gpu --repeat 3 >"$log" 2>&1
        # the last launch of each kernel name (the third run), its figures on one line
        awk -v ds="$ds" -v m="$m" '
            /^  bgnn_[A-Za-z0-9_]+ \(/ { k = $1; order[k] = (k in order) ? order[k] : ++n; next }
            k != "" && $1 == "gpu__time_duration.sum" { t[k] = $NF; u[k] = $(NF-1) }
            k != "" && $1 == "sm__cycles_active.avg" { a[k] = $NF }
            k != "" && $1 == "sm__cycles_active.max" { x[k] = $NF }
            k != "" && $1 == "smsp__inst_executed.sum" { i[k] = $NF }
            k != "" && $1 == "lts__t_bytes.sum" { l2[k] = $NF; l2u[k] = $(NF-1) }
            k != "" && $1 == "l1tex__t_bytes.sum" { l1[k] = $NF; l1u[k] = $(NF-1) }
            k != "" && $1 == "sm__warps_active.avg.pct_of_peak_sustained_active" { o[k] = $NF }
            k != "" && $1 == "launch__grid_size" { g[k] = $NF }
            k != "" && $1 == "launch__block_size" { b[k] = $NF }
            function us(v, unit) { gsub(",", "", v); return unit == "nsecond" ? v / 1000 : (unit == "msecond" ? v * 1000 : v) }
            function mb(v, unit) { gsub(",", "", v); return unit == "Kbyte" ? v / 1000 : (unit == "Gbyte" ? v * 1000 : (unit == "byte" ? v / 1e6 : v)) }
            function num(v) { gsub(",", "", v); return v }
            END { for (k in order) printf "%d %-9s %-8s %-26s %8.2f %8.1f %8.1f %8.3f %8.2f %8.2f %6.1f %6s %6s\n", order[k], ds, m, k,
                      us(t[k], u[k]), num(a[k]) / 1000, num(x[k]) / 1000, num(i[k]) / 1e6, mb(l2[k], l2u[k]), mb(l1[k], l1u[k]),
                      num(o[k]), g[k], b[k] }' "$log" | sort -n | cut -d' ' -f2- >>"$table"
    done
done
cat "$table"
