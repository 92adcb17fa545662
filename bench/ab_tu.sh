#!/usr/bin/env bash
# ab_tu.sh - bgnnc binaries (a base and one or more changes) timed side by side on batches of TU
# graphs (MUTAG, PROTEINS, ENZYMES, NCI1), one GPU, one call:
#
#   OUT=/some/dir bench/ab_tu.sh BASE_BGNNC NEW_BGNNC [MORE...] [--rounds R] [--repeat N]
#                                [--models LIST] [--datasets LIST] [--batch B] [--kernel K]
#
# For every model of LIST (default "gin_bin gcn_bin": examples/tu/MODEL_DATASET.bgnn with its
# weights in examples/weights/tu/) and dataset, each binary runs `bgnnc run ... --graphs 0:B
# --target gpu --repeat N` (B = 1024 or the whole dataset where smaller; median of N with CUDA
# events, inputs on the device) R times, the binaries in turn, with BGNN_BATCH_KERNEL=K (default
# layers: the separate launches and row groups, the large-graph path; auto also weighs the
# per-graph kernel).  The table gives the median of each binary's R medians (us) and each one's
# ratio to the first.  Data: $BGNN_DATA_DIR (default .carry/data: tools/prepare_carry.sh and
# bench/tu_carry.sh; NCI1's one-hot features are rebuilt from node_labels.npy where they
# travelled without them).  Logs in $OUT/abt_*.log; the table last and in $OUT/abt_table.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/ab_lib.sh
. bench/ab_lib.sh
# shellcheck source=bench/tu_lib.sh
. bench/tu_lib.sh
BINS=()
while [[ $# -gt 0 && $1 != --* ]]; do BINS+=("$(realpath "$1")"); shift; done
[[ ${#BINS[@]} -ge 2 ]] || { echo "usage: OUT=DIR bench/ab_tu.sh BASE_BGNNC NEW_BGNNC [MORE...] [--rounds R] [--repeat N] [--models LIST] [--datasets LIST] [--batch B] [--kernel K]" >&2; exit 2; }
ROUNDS=2 REPEAT=500 MODELS="gin_bin gcn_bin" DATASETS="mutag proteins enzymes nci1" BATCH=1024 KERNEL=layers
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --datasets) DATASETS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --kernel) KERNEL=$2; shift 2 ;;
    *) echo "ab_tu.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$PWD/ab-tu-out}
mkdir -p "$OUT"
DATA=${BGNN_DATA_DIR:-$PWD/.carry/data}
bench/tu_onehot.sh "$DATA" >/dev/null || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
table=$OUT/abt_table.txt
{
    echo "GPU: ${gpu:-?}; bgnnc run --graphs 0:B --target gpu --repeat $REPEAT (median, CUDA events), BGNN_BATCH_KERNEL=$KERNEL, $ROUNDS rounds, the binaries in turn, median of the rounds (us)"
    for j in "${!BINS[@]}"; do echo "bin$j: ${BINS[j]}"; done
    printf '%-9s %-9s %6s' dataset model graphs
    for j in "${!BINS[@]}"; do printf ' %9s' "bin$j"; done
    for ((j = 1; j < ${#BINS[@]}; j++)); do printf ' %8s' "$j/0"; done
    echo
} >"$table"
for ds in $DATASETS; do
    b=$(tu_batch "$DATA" "$ds" "$BATCH") || exit 1
    for m in $MODELS; do
        declare -a times=()
        log=$OUT/abt_${ds}_$m.log
        : >"$log"
        for ((r = 0; r < ROUNDS; r++)); do
            for j in "${!BINS[@]}"; do
                out=$(BGNN_CACHE_DIR=/tmp/abt_cache_$j BGNN_BATCH_KERNEL=$KERNEL "${BINS[j]}" run "examples/tu/${m}_$ds.bgnn" \
                      --data "$DATA/$ds" --weights "examples/weights/tu/${m}_$ds.safetensors" --graphs "0:$b" \
                      --target gpu --repeat "$REPEAT" 2>&1)
                echo "== round $r bin$j" >>"$log"
                echo "$out" >>"$log"
                t=$(sed -n 's/.*inference \([0-9.]*\) ms.*/\1/p' <<<"$out" | awk '{printf "%.1f", $1 * 1000}')
                times[j]+=" $t"
            done
        done
        ab_row "$(printf '%-9s %-9s %6s' "$ds" "$m" "$b")" "${times[@]}" >>"$table"
        unset times
    done
done
cat "$table"
