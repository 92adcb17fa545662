#!/usr/bin/env bash
# unpack_carry.sh - run first on the GPU machine: unpacks the gzipped feature files that
# tools/prepare_carry.sh put in .carry/data (Cora's 15 MB of 0/1 features travel as 96 KB, which
# keeps the working tree plus .carry under the device tool's 64 MiB), next to their .gz.
#   tools/unpack_carry.sh [DATA_DIR]   (default $BGNN_DATA_DIR, else .carry/data)
# CiteSeer's features stay packed: bench/planetoid_setup.sh unpacks them into its own temp dir.
set -euo pipefail
data=${1:-${BGNN_DATA_DIR:-$(dirname "$0")/../.carry/data}}   # a relative DATA_DIR: from the caller's directory
for gz in "$data"/cora/features.npy.gz; do
    [[ -f $gz ]] || continue
    npy=${gz%.gz}
    if [[ ! -f $npy || $gz -nt $npy ]]; then gzip -dc "$gz" >"$npy.tmp" && mv "$npy.tmp" "$npy"; fi
done
