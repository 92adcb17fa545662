#!/usr/bin/env bash
# run_bench.sh - build (CMake-free) and run the BSpMM microbenchmark.
#   bench/run_bench.sh build            # build only -> ${BGNN_BENCH_BIN:-.carry/bench/bspmm_bench}
#   bench/run_bench.sh [bench args]     # build if missing, then run; log to $OUT/bspmm_bench.log
# Needs nvcc (CUDA 12.4+/13), cuSPARSE, gcc with OpenMP.  Data: $BGNN_DATA_DIR (default
# .carry/data) with cora/ citeseer/ pubmed/ graph.mtx.  The product's C files it links (the
# CPU reference, the graph builder, the work schedule): bench/product_sources.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BGNN_BENCH_BIN:-.carry/bench/bspmm_bench}
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh
build() {
    local obj lib incs; obj=$(dirname "$BIN")/obj
    # the product's C files (bench/product_sources.txt) as libbgprod.a (or the archive already in
    # $BG_PRODUCT_OBJ), the R-MAT builder
    mkdir -p "$obj"
    lib=${BG_PRODUCT_OBJ:-$obj}
    [ -n "${BG_PRODUCT_OBJ:-}" ] || bg_product_lib "$obj"
    incs=$(bg_product_incs)
    # shellcheck disable=SC2086
    gcc -O3 -std=c11 -D_GNU_SOURCE -ffp-contract=off -fopenmp $incs -c bench/rmat.c -o "$obj/rmat.o"
    # shellcheck disable=SC2086
    nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo $incs -Xcompiler -fopenmp \
        bench/bspmm_bench.cu "$obj/rmat.o" -L"$lib" -lbgprod -o "$BIN" -lcusparse -lgomp -lm
}
bg_bench_main "$BIN" bspmm_bench.log build "$@"
