#!/usr/bin/env bash
# run_bench.sh - build (CMake-free) and run the BSpMM microbenchmark.
#   bench/run_bench.sh build            # build only -> ${BGNN_BENCH_BIN:-.carry/bench/bspmm_bench}
#   bench/run_bench.sh [bench args]     # build if missing, then run; log to $OUT/bspmm_bench.log
# Needs nvcc (CUDA 12.4+/13), cuSPARSE, gcc with OpenMP.  Data: $BGNN_DATA_DIR (default
# .carry/data) with cora/ citeseer/ pubmed/ graph.mtx.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BGNN_BENCH_BIN:-.carry/bench/bspmm_bench}
build() {
    local obj; obj=$(dirname "$BIN")/obj; mkdir -p "$obj"
    rm -f "$obj"/*.o
    for f in reference/ref_ops.c base/tensor.c base/arena.c base/diag.c \
             base/source.c base/strbuf.c compiler/ir.c loaders/graph.c loaders/io_mtx.c; do
        [ -f "$f" ] || continue
        gcc -O2 -std=c11 -D_GNU_SOURCE -ffp-contract=off -Ibase -Iloaders -Icompiler -Ireference -c "$f" \
            -o "$obj/$(basename "${f%.c}").o"
    done
    nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Ibase -Iloaders -Icompiler -Ireference -Xcompiler -fopenmp \
        bench/bspmm_bench.cu "$obj"/*.o -o "$BIN" -lcusparse -lgomp -lm
}
if [ "${1:-}" = build ]; then build; exit 0; fi
[ -x "$BIN" ] || build
out=${OUT:-.}
set -o pipefail
"$BIN" "$@" 2>&1 | tee "$out/bspmm_bench.log"
