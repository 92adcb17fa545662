#!/usr/bin/env bash
# variants_pareto.sh - the GPU half of issue 17 point 3 (docs/tuning.md "Precision variants"):
# the time of every type-correct precision variant of gcn_bin and sage_bin on Cora and CiteSeer
# (bench/variants_bench.sh with VARIANTS_ACC=no: `bgnnc run --target gpu --repeat 1000`, CUDA
# events median, one variant after the other in this run).  The tables go to $OUT/variants.tgz
# (variants/MODEL_DATASET/table.txt); tools/train/variants.py then trains each variant and
# writes the accuracy-latency Pareto table and plot.
#
#   OUT=/some/dir bench/variants_pareto.sh          (BUILD: the build directory, default build-pred/)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/variants-pareto-out}
BUILD=${BUILD:-$ROOT/build-pred}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
mkdir -p "$OUT"
. bench/tools_build.sh
tools_build "$OUT/build.log" variants_pareto.sh
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/variants"
. bench/planetoid_setup.sh
for ds in cora citeseer; do
    read -r dir _ _ < <(planetoid_setup "$ds")
    for m in gcn_bin sage_bin; do
        model=examples/$m.bgnn
        [[ $ds == cora ]] || model=examples/$ds/$m.bgnn
        o=$TMP/variants/${m}_$ds
        t0=$(date +%s)
        VARIANTS_ACC=no BGNNC=$B bench/variants_bench.sh "$model" "$dir" "examples/weights/${m}_$ds.safetensors" "$o" \
            >"$o.log" 2>&1 || echo "variants_pareto.sh: $m on $ds failed (see $o.log)"
        rm -f "$o"/*.bgnn
        echo "$m $ds: $(grep -c '^v[0-9]' "$o/table.txt" 2>/dev/null || echo 0) variants, $(($(date +%s) - t0)) s"
        tar czf "$OUT/variants.tgz" -C "$TMP" variants
    done
done
