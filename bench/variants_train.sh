#!/usr/bin/env bash
# variants_train.sh - trains every precision variant of gcn_bin and sage_bin on Cora and CiteSeer
# on a machine with many cores (the GPU machine's 16: tools/train/variants.py train, one job a
# core, CPU PyTorch), for issue 17 point 3 (docs/tuning.md "Precision variants").  Results:
# $OUT/variants_MODEL_DATASET.json (one file a pair, written as each finishes), which
# tools/train/variants.py report joins with bench/variants_pareto.sh's GPU times.
#
#   OUT=/some/dir bench/variants_train.sh [EPOCHS] [SEEDS]      (BUILD: default build-pred/)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/variants-train-out}
BUILD=${BUILD:-$ROOT/build-pred}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
EPOCHS=${1:-300} SEEDS=${2:-2}
mkdir -p "$OUT"
. bench/tools_build.sh
tools_build "$OUT/build.log" variants_train.sh
trap 'rm -rf "$TMP"' EXIT
. bench/planetoid_setup.sh
mkdir -p "$TMP/data"
for ds in sage_bin:cora sage_bin:citeseer gcn_bin:cora gcn_bin:citeseer; do
    m=${ds%%:*} d=${ds#*:}
    read -r dir _ _ < <(planetoid_setup "$d")
    [[ -e $TMP/data/$d ]] || ln -s "$dir" "$TMP/data/$d"
    model=examples/$m.bgnn
    [[ $d == cora ]] || model=examples/$d/$m.bgnn
    t0=$(date +%s)
    python3 tools/train/variants.py train --model "$model" --dataset "$d" --data-dir "$TMP/data" --bgnnc "$B" \
        --epochs "$EPOCHS" --seeds "$SEEDS" --json "$OUT/variants_${m}_$d.json" >"$OUT/train_${m}_$d.log" 2>&1 ||
        { echo "variants_train.sh: $m on $d failed"; tail -n 5 "$OUT/train_${m}_$d.log"; }
    echo "$m $d: $(grep -c '^v[0-9]' "$OUT/train_${m}_$d.log") variants trained, $(($(date +%s) - t0)) s"
done
