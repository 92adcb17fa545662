#!/usr/bin/env bash
# tu_onehot.sh - rebuilds the one-hot features.npy of every dataset under DATA_DIR that travelled
# without it (bench/tu_carry.sh sends NCI1's node_labels.npy + onehot_width + the sha256 of
# its features instead of 18 MB), byte for byte, checked against that sha256:
#
#   bench/tu_onehot.sh DATA_DIR
#
# Used by bench/run_tu_bench.sh and bench/ab_tu.sh on the GPU machine (needs numpy there).
set -euo pipefail
data=${1:?usage: bench/tu_onehot.sh DATA_DIR}
for d in "$data"/*/; do
    if [[ -f $d/onehot_width && ! -f $d/features.npy ]]; then
        python3 -c 'import numpy as np, sys
d = sys.argv[1]
l = np.load(d + "/node_labels.npy")
x = np.zeros((len(l), int(open(d + "/onehot_width").read())), np.float32)
x[np.arange(len(l)), l] = 1
np.save(d + "/features.npy", x)' "$d"
        (cd "$d" && sha256sum -c --quiet features.sha256) || { echo "tu_onehot.sh: $d/features.npy differs" >&2; exit 1; }
        echo "rebuilt $d/features.npy"
    fi
done
