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
build() {
    local obj; obj=$(dirname "$BIN")/bmm_obj; mkdir -p "$obj"
    rm -f "$obj"/*.o "$obj"/libbgref.a
    # The CPU reference (bg_ref_bmm) and what it needs, as an archive: the linker takes only
    # the objects it needs.
    for f in reference/ref_ops.c base/tensor.c base/arena.c compiler/ir.c base/diag.c \
             base/source.c base/strbuf.c; do
        [ -f "$f" ] || continue
        gcc -O3 -std=c11 -D_GNU_SOURCE -ffp-contract=off -Ibase -Iloaders -Icompiler -Ireference -c "$f" \
            -o "$obj/$(basename "${f%.c}").o"
    done
    ar rcs "$obj/libbgref.a" "$obj"/*.o
    # --fmad=false as runtime/nvrtc.c compiles the generated kernels
    nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -lineinfo -Ibase -Iloaders -Icompiler -Ireference -Xcompiler -fopenmp,-Wall,-Wextra \
        bench/bmm_bench.cu -o "$BIN" -L"$obj" -lbgref -lcublas -lgomp -lm
}
if [ "${1:-}" = build ]; then build; exit 0; fi
[ -x "$BIN" ] || build
out=${OUT:-.}
mkdir -p "$out"
"$BIN" "$@" 2>&1 | tee "$out/bmm_bench.log"
