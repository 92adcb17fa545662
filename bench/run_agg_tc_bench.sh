#!/usr/bin/env bash
# run_agg_tc_bench.sh - build (CMake-free) and run the tensor-core aggregation microbenchmark
# (bench/agg_tc_bench.cu): bspmm.BB{B,F} on mma.sync b1 over dense 16 x 256 adjacency tiles
# (bench/kernels/bspmm_bb_tc.cuh) against bgnn's CSR popc2 kernels (templates/bspmm_fast.cuh),
# checked against bg_ref_bspmm.
#   bench/run_agg_tc_bench.sh build          # build only -> ${BGNN_AGG_TC_BENCH_BIN:-.carry/bench/agg_tc_bench}
#   bench/run_agg_tc_bench.sh [bench args]   # build if missing, then run; log to $OUT/agg_tc_bench.log
# Bench args: --data DIR (default .carry/data: cora/ pubmed/ mutag/ proteins/ nci1/ graph.mtx),
# --reps R (default 100), --only SUBSTR (graphs whose name contains SUBSTR), --check-only (the
# awkward graphs' checks, no timing: for compute-sanitizer).  Needs nvcc (CUDA 12.4+/13), gcc
# with OpenMP.  Exit status: the benchmark's (0 ok, 1 a check failed, 2 a CUDA or setup error,
# 77 no GPU or one older than sm_80).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BGNN_AGG_TC_BENCH_BIN:-.carry/bench/agg_tc_bench}
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh
build() { bg_bench_nvcc bench/agg_tc_bench.cu "$BIN" "$(dirname "$BIN")/agg_tc_obj"; }
bg_bench_main "$BIN" agg_tc_bench.log build "$@"
