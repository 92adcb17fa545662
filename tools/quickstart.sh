#!/usr/bin/env bash
# quickstart.sh - the README's first command: set up, build, compile examples/gcn_bin.bgnn
# and run it on Cora with the committed trained weights, printing accuracy and time (on the
# GPU when one is usable, else on the CPU reference interpreter).
#   BGNN_DATA_DIR  datasets root (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target bgnnc >/dev/null
weights=examples/weights/gcn_bin_cora.safetensors
exec build/bgnnc run examples/gcn_bin.bgnn --dataset cora --weights "$weights" --target auto --repeat 20
