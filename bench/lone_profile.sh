#!/usr/bin/env bash
# lone_profile.sh - where a lone graph's per-graph kernel spends its time, one GPU, one call:
#
#   OUT=/some/dir bench/lone_profile.sh BGNNC [--models LIST] [--datasets LIST] [--graph I]
#
# For every model of LIST (default "gin_bin gcn_bin") and dataset (default mutag): `BGNNC run
# examples/tu/MODEL_DATASET.bgnn --graphs I:I+1 --target gpu` (graph I alone, default 0: the
# per-graph kernel, its launch in a CUDA graph) under Nsight Compute at real clocks (no cache
# flush, no clock lock, the sixth launch of bgnn_graphs, warp sampling every 32 cycles,
# --set full), then its SASS source page split at the kernel's barriers by bench/ncu_regions.py.
# Writes $OUT/lone_DATASET_MODEL.{csv,txt} (the source page, the regions and hot
# instructions) and $OUT/lone_DATASET_MODEL_details.txt; prints the region tables last.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/tu_lib.sh
. bench/tu_lib.sh
B=$(realpath "${1:?usage: OUT=DIR bench/lone_profile.sh BGNNC [--models L] [--datasets L] [--graph I]}")
shift
MODELS="gin_bin gcn_bin" DATASETS=mutag GRAPH=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --models) MODELS=$2; shift 2 ;;
    --datasets) DATASETS=$2; shift 2 ;;
    --graph) GRAPH=$2; shift 2 ;;
    *) echo "lone_profile.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$PWD/lone-profile-out}
mkdir -p "$OUT"
DATA=${BGNN_DATA_DIR:-$PWD/.carry/data}
bench/tu_onehot.sh "$DATA" >/dev/null || exit 1
NCU=$(tu_ncu)
[[ -n $NCU ]] || { echo "lone_profile.sh: no ncu" >&2; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
rc=0
for ds in $DATASETS; do
    for m in $MODELS; do
        base=$OUT/lone_${ds}_$m
        BGNN_BATCH_KERNEL=graphs "$NCU" --set full --import-source no --cache-control none --clock-control none \
            --warp-sampling-interval 0 -k regex:bgnn_graphs --launch-skip 5 --launch-count 1 -f -o "$base" \
            "$B" run "examples/tu/${m}_$ds.bgnn" --data "$DATA/$ds" --weights "examples/weights/tu/${m}_$ds.safetensors" \
            --graphs "$GRAPH:$((GRAPH + 1))" --target gpu --repeat 10 >"$base.log" 2>&1 || { echo "lone_profile.sh: ncu failed, $base.log" >&2; rc=1; continue; }
        "$NCU" --import "$base.ncu-rep" --page source --csv --print-source sass >"$base.csv" 2>&1
        "$NCU" --import "$base.ncu-rep" --page details >"${base}_details.txt" 2>&1
        rm -f "$base.ncu-rep"
        { echo "== $ds $m (graph $GRAPH), ${gpu:-?}: $(grep -m1 -E '^\s+Duration' "${base}_details.txt" | tr -s ' ')"
          python3 bench/ncu_regions.py "$base.csv" --hot 12; } >"$base.txt" || rc=1
    done
done
cat "$OUT"/lone_*.txt 2>/dev/null
exit $rc
