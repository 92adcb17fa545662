# shellcheck shell=bash
# product_lib.sh - sourced (from the repository root) by bench/run_bench.sh,
# bench/run_bmm_bench.sh and bench/run_models.sh: the product's C files of
# bench/product_sources.txt (the one list) as an archive, and their header directories.
#   bg_product_sources        the listed files, one a line (an error when one is missing)
#   bg_product_incs           -I flags: the listed files' directories
#   bg_product_lib OBJDIR     gcc -O3 every listed file into OBJDIR/libbgprod.a (the linker
#                             takes only the objects a benchmark needs)
#   bg_bench_nvcc SRC BIN OBJDIR LIB...
#                             the archive into OBJDIR (or the one already in $BG_PRODUCT_OBJ,
#                             when set), then nvcc SRC -> BIN (sm_90, or the nvcc
#                             architecture options in $BG_BENCH_ARCH; --fmad=false
#                             as runtime/nvrtc.c compiles the generated kernels, OpenMP) linked
#                             with it and -lLIB...
#   bg_bgnn_time LIBBGNN OUT  bench/bgnn_time.c (the timer of bench/run_models.sh and
#                             bench/ab_reddit.sh) of this tree linked with LIBBGNN (a libbgnn.a;
#                             -lz when it calls inflate) into OUT
#   bg_bench_main BIN LOG BUILD_FN ARGS...
#                             ARGS = build: BUILD_FN only; else BUILD_FN when BIN is missing,
#                             then BIN ARGS with its output also in ${OUT:-.}/LOG

bg_product_sources() {
    local f bad=0
    while read -r f; do
        f=${f%%#*}
        f=${f//[[:space:]]/}
        [ -n "$f" ] || continue
        if [ ! -f "$f" ]; then
            echo "bench/product_sources.txt: $f: no such file (update the list)" >&2
            bad=1
        fi
        echo "$f"
    done <bench/product_sources.txt
    return $bad
}

bg_product_incs() {
    local srcs
    srcs=$(bg_product_sources) || return 1
    printf '%s\n' "$srcs" | xargs -n1 dirname | awk '!seen[$0]++ { printf "-I%s ", $0 }'
}

bg_bgnn_time() {
    local lib=$1 out=$2 incs z=""
    incs=$(bg_product_incs) || return 1
    if [ "$(nm "$lib" 2>/dev/null | grep -c ' U inflate$')" != 0 ]; then z=-lz; fi
    # shellcheck disable=SC2086  # incs: -I flags, one word each; z: empty or one flag
    cc -O2 -std=c11 -Wall -Wextra -fopenmp -I"$PWD/include" $incs "$PWD/bench/bgnn_time.c" "$PWD/bench/rmat.c" \
        "$lib" $z -ldl -lm -lpthread -o "$out"
}

bg_product_lib() {
    local obj=$1 srcs incs f
    srcs=$(bg_product_sources) || return 1
    incs=$(bg_product_incs) || return 1
    mkdir -p "$obj"
    rm -f "$obj"/*.o "$obj"/libbgprod.a
    for f in $srcs; do
        # shellcheck disable=SC2086
        gcc -O3 -std=c11 -D_GNU_SOURCE -ffp-contract=off $incs -c "$f" -o "$obj/$(echo "${f%.c}" | tr / _).o" || return 1
    done
    ar rcs "$obj/libbgprod.a" "$obj"/*.o
}

bg_bench_nvcc() {
    local src=$1 bin=$2 obj=$3 incs l libs=()
    shift 3
    for l in "$@"; do libs+=("-l$l"); done
    if [ -n "${BG_PRODUCT_OBJ:-}" ]; then # an archive built once for several benchmarks (CI)
        obj=$BG_PRODUCT_OBJ
    else
        bg_product_lib "$obj" || return 1
    fi
    incs=$(bg_product_incs) || return 1
    # shellcheck disable=SC2086
    nvcc -O3 -std=c++17 ${BG_BENCH_ARCH:--arch=sm_90} --fmad=false -lineinfo $incs -Xcompiler -fopenmp,-Wall,-Wextra \
        "$src" -o "$bin" -L"$obj" -lbgprod "${libs[@]}" -lgomp -lm
}

bg_bench_main() {
    local bin=$1 log=$2 build_fn=$3 out=${OUT:-.}
    shift 3
    if [ "${1:-}" = build ]; then "$build_fn"; return; fi
    [ -x "$bin" ] || "$build_fn"
    mkdir -p "$out"
    "$bin" "$@" 2>&1 | tee "$out/$log"
}
