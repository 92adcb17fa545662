#!/usr/bin/env bash
# run_bmm_bench.sh - build (CMake-free) and run the BMM microbenchmark (bench/bmm_bench.cu):
# every bmm.XYZ kernel against cuBLAS FP32 SGEMM and FP16 GEMM, checked against bg_ref_bmm.
#   bench/run_bmm_bench.sh build            # build only -> ${BGNN_BMM_BENCH_BIN:-.carry/bench/bmm_bench}
#   bench/run_bmm_bench.sh [bench args]     # build if missing, then run; log to $OUT/bmm_bench.log
# Bench args: --reps R (default 50), --quick, --only SUBSTR, --fbt-tpr T.  Needs nvcc (CUDA 12.4+/13),
# cuBLAS, gcc with OpenMP; no data files.  Exit status: the benchmark's (0 ok, 1 a check
# failed, 2 a CUDA/cuBLAS error, 77 no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BGNN_BMM_BENCH_BIN:-.carry/bench/bmm_bench}
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh
# the CPU reference (bg_ref_bmm), the plan's launch shape and what they need
# (bench/product_sources.txt) as libbgprod.a, and cuBLAS
build() { bg_bench_nvcc bench/bmm_bench.cu "$BIN" "$(dirname "$BIN")/bmm_obj" cublas; }
bg_bench_main "$BIN" bmm_bench.log build "$@"
