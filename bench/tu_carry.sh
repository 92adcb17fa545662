#!/usr/bin/env bash
# tu_carry.sh - adds the four TU datasets (mutag, proteins, enzymes, nci1) to .carry/data
# (git-ignored) for bench/run_tu_bench.sh on a GPU machine.  Run it here after
# tools/prepare_carry.sh (which carries cora, mutag and the generated parser/lexer), then pass
# ".carry" in the device tool's carry list.  NCI1's features.npy (18 MB) is a one-hot of its
# node_labels.npy: it travels as node_labels.npy + onehot_width + its sha256, and
# run_tu_bench.sh rebuilds it byte for byte there (checked against the sha256).
#   BGNN_DATA_DIR  datasets root (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
src=${BGNN_DATA_DIR:-../shared/data}
mkdir -p .carry/data
for d in mutag proteins enzymes; do
  rm -rf ".carry/data/$d"; cp -r "$src/$d" .carry/data/ && chmod -R u+w ".carry/data/$d"
done
d=.carry/data/nci1
rm -rf "$d"; mkdir -p "$d"
cp "$src/nci1/graph.mtx" "$src/nci1/graph_ptr.npy" "$src/nci1/graph_labels.npy" "$src/nci1/node_labels.npy" "$d/"
chmod -R u+w "$d"
(cd "$src/nci1" && sha256sum features.npy) >"$d/features.sha256"
python3 - "$src/nci1/features.npy" >"$d/onehot_width" <<'PY'
import ast, struct, sys
with open(sys.argv[1], 'rb') as f:   # the .npy header's shape, without numpy
    f.read(8)
    h = ast.literal_eval(f.read(struct.unpack('<H', f.read(2))[0]).decode('latin1'))
print(h['shape'][1])
PY
du -sh .carry
