#!/usr/bin/env bash
# run_bmm_tc_bench.sh - build (CMake-free) and run the bit-tensor-core BMM microbenchmark
# (bench/bmm_tc_bench.cu): bmm.BB{F,B} on mma.sync b1 against bgnn's popcount kernel, cuBLAS
# INT8 and FP16 GEMM and the measured b1 peak, checked against bg_ref_bmm.
#   bench/run_bmm_tc_bench.sh build          # build only -> ${BGNN_BMM_TC_BENCH_BIN:-.carry/bench/bmm_tc_bench}
#                                            # (and bmm_tc_probe in the same folder)
#   bench/run_bmm_tc_bench.sh [bench args]   # build if missing, then run; log to $OUT/bmm_tc_bench.log
# Bench args: --reps R (default 50), --quick (no 232965-row timed shapes), --only SUBSTR (shapes
# whose name contains SUBSTR), --check-only (the awkward shapes' checks, no timing: for
# compute-sanitizer, tools/gpu_suite.sh), --tc-only (time the tensor-core kernels alone: no
# popcount kernel, no cuBLAS).  BGNN_TC_BENCH_QUICK_BUILD=1 builds the quick variant
# (-DBGNN_TC_BENCH_BIG_ONLY: the large shapes and the wgmma rule's, about 2 minutes instead of
# 4; run it with --only bnn or --only rule).  Needs nvcc (CUDA
# 12.4+/13), cuBLAS, gcc.  Exit status: the benchmark's (0 ok, 1 a check failed, 2 a CUDA /
# cuBLAS error, 77 no GPU or one older than sm_80).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BGNN_BMM_TC_BENCH_BIN:-.carry/bench/bmm_tc_bench}
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh
# sm_90a: wgmma (bmm_bb_wg.cuh) exists only there; the binary runs on sm_90 GPUs alone.
# The probe (bench/bmm_tc_probe.cu: mma.sync issue rates under a GEMM loop's structures) beside it.
build() {
    local arch=-gencode=arch=compute_90a,code=sm_90a
    [ "${BGNN_TC_BENCH_QUICK_BUILD:-0}" = 1 ] && arch="$arch -DBGNN_TC_BENCH_BIG_ONLY"
    BG_BENCH_ARCH=$arch bg_bench_nvcc bench/bmm_tc_bench.cu "$BIN" "$(dirname "$BIN")/bmm_tc_obj" cublas &&
        nvcc -O3 -std=c++17 -arch=sm_90 bench/bmm_tc_probe.cu -o "$(dirname "$BIN")/bmm_tc_probe"
}
bg_bench_main "$BIN" bmm_tc_bench.log build "$@"
