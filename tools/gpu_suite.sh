#!/usr/bin/env bash
# gpu_suite.sh - everything bgnn checks on a GPU machine, in one script.
#
#   cd REPO && OUT=/some/dir tools/gpu_suite.sh
#
# Configures and builds (Release, make -j16) into build-gpu/, then runs: ctest -L gpu (but the
# schedule test), the schedule test (tests/gpu/test_gpu_sched.c: every schedule point), the
# host_jit example, the CLI on Cora (JIT, AOT cubin, CPU reference), compute-sanitizer
# memcheck, racecheck, synccheck and initcheck on the GPU example test (quick mode:
# synthetic graphs), memcheck and racecheck on the batches test (quick mode: three models),
# memcheck and racecheck on the variant x method test (quick mode: three
# models, small graphs and one row of 10000 neighbours), memcheck and racecheck on the
# BSpMM benchmark's kernels (--check-only, when .carry/bench/bspmm_bench is built), the same
# three tools on the bit-tensor-core BMM benchmark (when .carry/bench/bmm_tc_bench is built), and
# ctest -LE gpu.  Logs go to $OUT/<step>.log; a table of steps, results and times ends the
# output.  Data: BGNN_DATA_DIR (default $PWD/.carry/data, holding cora/ and mutag/).
# SUITE_SKIP="memcheck racecheck" leaves steps out (default: cpu_tests, which CI runs);
# SUITE_JOBS sets make -j.  Fill .carry first: tools/prepare_carry.sh.
# At the end every log goes into $OUT/logs.tgz (tar xzf it; summary.txt stays beside it).
# Exit status: 0 when every step that ran passed (or skipped), else 1.
set -u
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-suite-logs}
mkdir -p "$OUT"
export BGNN_DATA_DIR=${BGNN_DATA_DIR:-$ROOT/.carry/data}
tools/unpack_carry.sh "$BGNN_DATA_DIR"
BUILD=${BUILD:-$ROOT/build-gpu}
JOBS=${SUITE_JOBS:-16}
SKIP=" ${SUITE_SKIP:-cpu_tests} "   # the CPU suite runs in CI; SUITE_SKIP= runs it here too
export BGNN_CACHE_DIR=$BUILD/jit-cache
export BGNN_DUMP_DIR=$OUT/nvrtc-dumps
RESULTS=()
FAILED=0

# step NAME TIMEOUT_S CMD...: runs CMD with its output in $OUT/NAME.log; records the result.
step() {
    local name=$1 limit=$2
    shift 2
    if [[ $SKIP == *" $name "* ]]; then
        RESULTS+=("$(printf '%-12s %-8s %6s  %s' "$name" skipped - "SUITE_SKIP")")
        return 0
    fi
    local t0=$SECONDS rc
    echo "== $name: $*" | tee "$OUT/$name.log"
    timeout --kill-after=10 "$limit" "$@" >>"$OUT/$name.log" 2>&1
    rc=$?
    local dt=$((SECONDS - t0)) res=ok
    case $rc in
        0) res=ok ;;
        77) res=skipped ;;
        124 | 137) res=TIMEOUT; FAILED=1 ;;
        *) res=FAIL; FAILED=1 ;;
    esac
    local note
    note=$(grep -E "tests passed|passed, .* failed|accuracy|latency|compile +cold|ERROR SUMMARY|RACECHECK SUMMARY|time +" "$OUT/$name.log" | tail -n 3 | sed -E 's/compile .*inference/inference/'  | tr '\n' ';' | cut -c1-150)
    RESULTS+=("$(printf '%-12s %-8s %5ss  %s' "$name" "$res" "$dt" "$note")")
    printf '%s\n' "${RESULTS[-1]}" >>"$OUT/summary.txt"   # survives a kill of the whole run
    echo "   -> $res (rc $rc, ${dt}s); log $OUT/$name.log"
    tail -n 25 "$OUT/$name.log" | sed 's/^/   | /'
}

{
    echo "host: $(hostname)  date: $(date -u +%FT%TZ)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
    echo "data: $BGNN_DATA_DIR"; ls "$BGNN_DATA_DIR" 2>&1
    command -v nvcc >/dev/null && nvcc --version | tail -n 2
} >"$OUT/env.log" 2>&1
cat "$OUT/env.log"
printf '%-12s %-8s %6s  %s\n' step result time notes >"$OUT/summary.txt"

# No bison/flex on the GPU machine: use parser/lexer sources generated elsewhere and carried in
# .carry/generated (cp build/generated/{parser,lexer}.[ch] .carry/generated/).
PREGEN=()
if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
    [[ -f $ROOT/.carry/generated/parser.c ]] && PREGEN=(-DBGNN_PREGENERATED_DIR="$ROOT/.carry/generated")
fi
step configure 60 cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBG_SHARED_DATA="$BGNN_DATA_DIR" "${PREGEN[@]}"
step build 180 make -C "$BUILD" -j"$JOBS"
if [[ ! -x $BUILD/bgnnc ]]; then
    printf '%s\n' "${RESULTS[@]}"
    echo "build failed; see $OUT/build.log"
    exit 1
fi

step gpu_tests 300 ctest --test-dir "$BUILD" -L gpu -E test_gpu_sched --output-on-failure
# the tiled FB / FF product's tall-input path (templates/bmm_fb_big.cuh) on every shape of the
# variant models with products of 128 outputs or more (3: M = 130; 7: M = 288), every mode
step gpu_fb_big 300 env BGNN_NVRTC_DEFINES=BGNN_FBG_MIN_TILES_PER_SM=0 BGNN_VARIANTS_ONLY=3,7 BGNN_SOURCE_DIR="$ROOT" "$BUILD/tests/test_gpu_variants"
# every point of every schedule space of every example on awkward graphs (docs/tuning.md)
step gpu_sched 590 env BGNN_SOURCE_DIR="$ROOT" "$BUILD/tests/test_gpu_sched"
step host_jit 60 "$BUILD/host_jit" "$ROOT"

# The CLI end to end on Cora: JIT (twice: cold then cache hit), AOT cubin, CPU reference.
cli() {
    local w=$BUILD/gcn_bin_w.safetensors c=$BUILD/gcn_bin.cubin d=$BGNN_DATA_DIR/cora
    "$BUILD/bgnnc" gen-weights examples/gcn_bin.bgnn --seed 1 -o "$w" &&
    "$BUILD/bgnnc" run examples/gcn_bin.bgnn --data "$d" --weights "$w" --target gpu --repeat 50 &&
    "$BUILD/bgnnc" run examples/gcn_bin.bgnn --data "$d" --weights "$w" --target gpu --repeat 50 --logits "$BUILD/gpu.npy" &&
    "$BUILD/bgnnc" examples/gcn_bin.bgnn -o "$c" &&
    "$BUILD/bgnnc" run "$c" --data "$d" --weights "$w" --target gpu --repeat 50 &&
    "$BUILD/bgnnc" run examples/gcn_bin.bgnn --data "$d" --weights "$w" --target cpu --logits "$BUILD/cpu.npy" &&
    cmp "$BUILD/gpu.npy" "$BUILD/cpu.npy" && echo "logits: GPU and CPU files identical" &&
    { "$BUILD/bgnnc" run "$c" --data "$d" --weights "$w" --target cpu; [[ $? == 2 ]]; }
}
export -f cli
export BUILD
step cli 90 bash -c cli

SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
if [[ -n $SAN ]]; then
    step memcheck 150 env BGNN_GPU_TEST_QUICK=1 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_gpu_examples"
    # racecheck runs blocks one by one: the fused kernel's grid barrier would wait forever, so
    # these two run the separate kernels (the same device code, phase by phase).
    step racecheck 400 env BGNN_GPU_TEST_NO_COOP=1 BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY=gcn_bin.bgnn,mutag_gcn_bin.bgnn,gcn_full.bgnn BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_gpu_examples"
    step synccheck 90 env BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY=gcn_bin.bgnn,mutag_gcn_bin.bgnn,gcn_full.bgnn BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool synccheck --error-exitcode 3 "$BUILD/tests/test_gpu_examples"
    step memcheck_jit 120 "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/host_jit" "$ROOT"
    step memcheck_conc 150 env BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_concurrency"
    step racecheck_conc 300 env BGNN_EXEC=graph BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_concurrency"
    # Every kernel variant x bspmm method (quick mode); racecheck as above, and on the CUDA
    # graph only (the separate kernels' code; launching them one by one adds nothing).
    step memcheck_var 300 env BGNN_GPU_TEST_QUICK=1 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_gpu_variants"
    step racecheck_var 400 env BGNN_GPU_TEST_NO_COOP=1 BGNN_EXEC=graph BGNN_GPU_TEST_QUICK=1 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_gpu_variants"
    # Model 5 (K = 600): the split-k float order on the tiled and the generic FB kernels, and
    # bmm.BB* on the tensor cores by the plan's own choice (auto, K >= 512).
    step memcheck_var5 300 env BGNN_VARIANTS_ONLY=5 BGNN_GPU_TEST_QUICK=1 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_gpu_variants"
    step racecheck_var5 400 env BGNN_VARIANTS_ONLY=5 BGNN_GPU_TEST_NO_COOP=1 BGNN_EXEC=graph BGNN_GPU_TEST_QUICK=1 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_gpu_variants"
    step initcheck 90 env BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY=gcn_bin.bgnn,mutag_gcn_bin.bgnn,gcn_full.bgnn BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool initcheck --error-exitcode 3 "$BUILD/tests/test_gpu_examples"
    # the per-graph kernel of batches (seeds 17, 33: a bspmm_mm staged in shared memory)
    # The schedule points (tests/gpu/test_gpu_sched.c, quick mode: blocks of 64 to 1024, grid caps,
    # work-item chunks and groups, the features kernels) under memcheck, and racecheck on gcn_bin's
    # (the aggregation's block-wide hub rows at every block size)
    step memcheck_sched 300 env BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY=gcn_bin.bgnn,gcn_full.bgnn,sage_bin.bgnn BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_gpu_sched"
    step racecheck_sched 450 env BGNN_GPU_TEST_QUICK=1 BGNN_GPU_TEST_ONLY=gcn_bin.bgnn BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_gpu_sched"
    step memcheck_bat 200 env BGNN_GPU_TEST_QUICK=1 BGNN_BATCHES_MODELS=3 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool memcheck --leak-check full --error-exitcode 3 "$BUILD/tests/test_gpu_batches"
    step racecheck_bat 540 env BGNN_GPU_TEST_QUICK=1 BGNN_BATCHES_MODELS=3 BGNN_SOURCE_DIR="$ROOT" "$SAN" --tool racecheck --error-exitcode 3 "$BUILD/tests/test_gpu_batches"
    # The BSpMM microbenchmark's kernels (every CSR / FRDC / hub / grouped variant and method)
    # on its awkward shapes, when the benchmark is built (bench/run_bench.sh build).
    BENCH=${BGNN_BENCH_BIN:-$ROOT/.carry/bench/bspmm_bench}
    if [[ -x $BENCH ]]; then
        step memcheck_bsp 200 "$SAN" --tool memcheck --error-exitcode 3 "$BENCH" --check-only
        step racecheck_bsp 300 "$SAN" --tool racecheck --error-exitcode 3 "$BENCH" --check-only
    fi
    # The bit-tensor-core BMM (templates/bmm_bb_tc.cuh) on the awkward shapes of its benchmark
    # (every tile configuration, K not a multiple of 256, N = 1, M = 1), when it is built
    # (bench/run_bmm_tc_bench.sh build).
    TCB=${BGNN_BMM_TC_BENCH_BIN:-$ROOT/.carry/bench/bmm_tc_bench}
    if [[ -x $TCB ]]; then
        step memcheck_tc 200 "$SAN" --tool memcheck --error-exitcode 3 "$TCB" --check-only
        step racecheck_tc 300 "$SAN" --tool racecheck --error-exitcode 3 "$TCB" --check-only
        step synccheck_tc 200 "$SAN" --tool synccheck --error-exitcode 3 "$TCB" --check-only
    fi
else
    RESULTS+=("$(printf '%-12s %-8s %6s  %s' sanitizer missing - "compute-sanitizer not found")")
fi
# gcn_bin on Cora with the trained weights in each execution mode (runtime/rt.h BgExecMode).
modes() {
    local d=$BGNN_DATA_DIR/cora w=examples/weights/gcn_bin_cora.safetensors m
    for m in auto coop graph launches; do
        echo "-- BGNN_EXEC=$m"
        BGNN_EXEC=$m "$BUILD/bgnnc" run examples/gcn_bin.bgnn --data "$d" --weights "$w" --target gpu --repeat 2000 $([[ $m == launches ]] && echo --profile) || return 1
    done
}
export -f modes
step exec_modes 120 bash -c modes
# Code-level schedules in every execution mode (the fused cooperative kernel runs them too):
# gcn_bin, gcn_full and indgcn_bin on Cora with their bspmm_mm at lanes=8 and lanes=16 (and one
# with launch knobs beside), the logits byte for byte against the CPU reference's.
sched_modes() {
    local d=$BGNN_DATA_DIR/cora name ex w inst s m
    for name in gcn_bin gcn_full indgcn_bin; do
        ex=examples/$name.bgnn w=examples/weights/${name}_cora.safetensors
        inst=$("$BUILD/bgnnc" "$ex" --emit=ir | grep -m1 -oE '^%[0-9]+ += bspmm_mm' | grep -oE '[0-9]+')
        [[ -n $inst ]] || { echo "$name: no bspmm_mm"; return 1; }
        "$BUILD/bgnnc" run "$ex" --data "$d" --weights "$w" --target cpu --logits "$OUT/sched_cpu.npy" >/dev/null || return 1
        for s in lanes=8 lanes=16 lanes=8,block=64,grid=2; do
            for m in auto coop graph launches; do
                BGNN_EXEC=$m "$BUILD/bgnnc" run "$ex" --data "$d" --weights "$w" --target gpu --tune-db off \
                    --sched "$inst:$s" --repeat 200 --logits "$OUT/sched_gpu.npy" | grep -E "^time" | sed "s|^|$name %$inst:$s $m: |" || return 1
                cmp "$OUT/sched_cpu.npy" "$OUT/sched_gpu.npy" || { echo "$name $s $m: logits differ from the CPU's"; return 1; }
            done
        done
    done
    rm -f "$OUT/sched_cpu.npy" "$OUT/sched_gpu.npy"
    echo "sched_modes: 36 runs, logits identical to the CPU reference"
}
export -f sched_modes
step sched_modes 240 bash -c sched_modes
# Every Cora example with its trained weights: the product's time (auto mode) and each separate
# kernel alone (--profile: median of 500), the latency budget of docs/performance.md.
profiles() {
    local d=$BGNN_DATA_DIR/cora ex
    for ex in examples/*.bgnn; do
        local name; name=$(basename "$ex" .bgnn)
        [[ -f examples/weights/${name}_cora.safetensors ]] || continue
        echo "-- $name"
        "$BUILD/bgnnc" run "$ex" --data "$d" --weights "examples/weights/${name}_cora.safetensors" --target gpu \
            --repeat 500 --profile || return 1
    done
}
export -f profiles
step profiles 240 bash -c profiles
# Per-kernel times of gcn_bin on Cora (separate kernels), when Nsight Systems is installed.
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)
kernels() {
    BGNN_EXEC=launches "$NSYS" profile -o "$OUT/gcn_bin_kernels" --force-overwrite true --stats=false \
        "$BUILD/bgnnc" run examples/gcn_bin.bgnn --data "$BGNN_DATA_DIR/cora" \
        --weights examples/weights/gcn_bin_cora.safetensors --target gpu --repeat 200 >/dev/null &&
    "$NSYS" stats --report cuda_gpu_kern_sum --format table "$OUT/gcn_bin_kernels.nsys-rep" &&
    rm -f "$OUT/gcn_bin_kernels.nsys-rep" "$OUT/gcn_bin_kernels.sqlite"
}
export -f kernels
export NSYS OUT
if [[ -n $NSYS ]]; then step kernels 120 bash -c kernels; fi
# Nsight Compute on the separate kernels of gcn_bin on Cora (speed of light, occupancy, stalls).
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [[ -n $NCU ]]; then
    step ncu 240 env BGNN_EXEC=launches "$NCU" -k regex:bgnn_k -c 8 --section SpeedOfLight --section LaunchStats \
        --section Occupancy --section WarpStateStats "$BUILD/bgnnc" run examples/gcn_bin.bgnn \
        --data "$BGNN_DATA_DIR/cora" --weights examples/weights/gcn_bin_cora.safetensors --target gpu
fi
step cpu_tests 200 ctest --test-dir "$BUILD" -LE gpu -j"$JOBS" --output-on-failure

# The device tool brings back at most 8 files: every step's log in one archive.
host_line=$(head -n 1 "$OUT/env.log")
(cd "$OUT" && tar czf logs.tgz --remove-files ./*.log 2>/dev/null)
echo
echo "==== bgnn GPU suite: $host_line"
printf '%-12s %-8s %6s  %s\n' step result time notes
printf '%s\n' "${RESULTS[@]}"
exit $FAILED
