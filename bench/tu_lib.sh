#!/usr/bin/env bash
# tu_lib.sh - what the TU batch scripts (bench/ab_tu.sh, bench/tu_profile.sh, bench/lone_profile.sh)
# share, sourced by them.
#   tu_ncu               the path of Nsight Compute's ncu (PATH, the CUDA toolkit, /opt), or nothing
#   tu_batch DATA DS B   the graphs of a batch of B from dataset DS under DATA: min(B, its graphs),
#                        read from DS/graph_ptr.npy's header (no numpy on the GPU machine's python
#                        is assumed); fails when the file cannot be read
tu_batch() {
    local ng
    ng=$(python3 - "$1/$2/graph_ptr.npy" <<'PY'
import ast, struct, sys
with open(sys.argv[1], 'rb') as f:   # the .npy header's shape, without numpy: graphs + 1 offsets
    f.read(8)
    h = ast.literal_eval(f.read(struct.unpack('<H', f.read(2))[0]).decode('latin1'))
print(h['shape'][0] - 1)
PY
) || return 1
    echo $(($3 < ng ? $3 : ng))
}
tu_ncu() {
    command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1
}
