# tools_build.sh - sourced by bench/tune_bench.sh and bench/predictor_bench.sh: tools_build LOG
# NAME configures $BUILD (Release; the parser sources carried in .carry/generated when this
# machine has no bison or flex) and builds bgnnc and bgnn_graphgen into it, the output in LOG;
# on failure prints LOG's tail and "NAME: build failed" and exits.  Then B, GG (the binaries),
# GPU (the GPU's name) and TMP (a fresh scratch directory) are set, and the JIT cache defaults
# to $BUILD/jit-cache.  Needs $ROOT and $BUILD.
tools_build() {
    local log=$1 name=$2 pregen=()
    export BGNN_CACHE_DIR=${BGNN_CACHE_DIR:-$BUILD/jit-cache}
    if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
        [[ -f $ROOT/.carry/generated/parser.c ]] && pregen=(-DBGNN_PREGENERATED_DIR="$ROOT/.carry/generated")
    fi
    { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${pregen[@]}" &&
      cmake --build "$BUILD" --target bgnnc bgnn_graphgen -j"$(nproc)"; } >"$log" 2>&1 ||
        { tail -n 20 "$log"; echo "$name: build failed"; exit 1; }
    B=$BUILD/bgnnc
    GG=$BUILD/bgnn_graphgen
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    TMP=$(mktemp -d)
}
