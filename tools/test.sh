#!/usr/bin/env bash
# test.sh - the README's second command: set up, build and run every test (CTest).
# GPU tests report "skipped" (exit 77) on a machine without a usable GPU.
#   BGNN_BUILD_DIR  build directory (default build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
dir=${BGNN_BUILD_DIR:-build-test}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBGNN_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure
