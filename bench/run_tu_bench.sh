#!/usr/bin/env bash
# run_tu_bench.sh - the TU graph-classification benchmark (issue 16, point 4) in one command on
# a GPU machine, from the repository root:
#
#   OUT=/some/dir bench/run_tu_bench.sh [tu_bench.py options]
#
# Builds libbgnn and bgnnc (Release, into $BUILD, default build-tu/; with the parser/lexer
# sources from .carry/generated when bison/flex are missing: tools/prepare_carry.sh), builds
# bench/tu_time.c against libbgnn.a with cc, then runs bench/tu_bench.py: for MUTAG, PROTEINS,
# ENZYMES and NCI1, graphs/s at batch sizes 1, 32, 1024 and the whole dataset, batch-1 latency,
# peak memory and accuracy of PyG (eager, CUDA graph; float GIN / GCN) and bgnn (the bin
# models of examples/tu: auto, BGNN_BATCH_KERNEL=layers, =graphs, one run per graph).
# Options go to tu_bench.py, e.g. --datasets mutag,nci1 --models gin --budget-s 240
# --b1-graphs 1000 --model 'gin=examples/tu/gin_full_{ds}.bgnn' (see its docstring).
# Writes to $OUT: build.log, env.log, tu_bench.log, tu_results.json, tu_table.md,
# performance_tu.png.
# Data: $BGNN_DATA_DIR (default .carry/data, filled by tools/prepare_carry.sh and
# bench/tu_carry.sh; else ../shared/data): <ds>/graph.mtx, graph_ptr.npy, features.npy (or NCI1's
# node_labels.npy + onehot_width + features.sha256, rebuilt here), graph_labels.npy.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh   # bg_product_incs: the product's header directories
OUT=${OUT:-$ROOT/tu-bench-out}
BUILD=${BUILD:-$ROOT/build-tu}
mkdir -p "$OUT" "$BUILD"
if [[ -z ${BGNN_DATA_DIR:-} ]]; then
    BGNN_DATA_DIR=$ROOT/.carry/data
    [[ -d $BGNN_DATA_DIR/mutag ]] || BGNN_DATA_DIR=$ROOT/../shared/data
fi
export BGNN_DATA_DIR
export BGNN_CACHE_DIR=${BGNN_CACHE_DIR:-$BUILD/jit-cache}
export BGNN_DUMP_DIR=${BGNN_DUMP_DIR:-$OUT/nvrtc-dumps}

{
    echo "host: $(hostname)  date: $(date -u +%FT%TZ)  data: $BGNN_DATA_DIR"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
    python3 -c 'import torch, torch_geometric as g; print("torch", torch.__version__, "pyg", g.__version__)' 2>&1
} >"$OUT/env.log" 2>&1 || true
cat "$OUT/env.log"

# NCI1's one-hot features, rebuilt from node_labels.npy where they travelled without them
bench/tu_onehot.sh "$BGNN_DATA_DIR"

PREGEN=()
if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
    [[ -f $ROOT/.carry/generated/parser.c ]] && PREGEN=(-DBGNN_PREGENERATED_DIR="$ROOT/.carry/generated")
fi
t0=$SECONDS
INCS=$(bg_product_incs)
LZ=()   # zlib, when the archive was built with it (known once libbgnn.a exists)
# shellcheck disable=SC2086  # INCS: -I flags, one word each
if ! { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${PREGEN[@]}" &&
       cmake --build "$BUILD" --target bgnn bgnnc -j"$(nproc)" &&
       { [ "$(nm "$BUILD/libbgnn.a" 2>/dev/null | grep -c ' U inflate$')" != 0 ] && LZ=(-lz) || true; } &&
       cc -O2 -std=c11 -Wall -Wextra -I"$ROOT/include" $INCS "$ROOT/bench/tu_time.c" "$BUILD/libbgnn.a" \
          "${LZ[@]}" -ldl -lm -lpthread -o "$BUILD/tu_time"; } >"$OUT/build.log" 2>&1; then
    tail -n 30 "$OUT/build.log"
    echo "run_tu_bench.sh: build failed (log: $OUT/build.log)"
    exit 1
fi
echo "built libbgnn, bgnnc and tu_time in $((SECONDS - t0)) s"

PYTHONUNBUFFERED=1 python3 "$ROOT/bench/tu_bench.py" --tu-time "$BUILD/tu_time" --bgnnc "$BUILD/bgnnc" \
    --data "$BGNN_DATA_DIR" --out "$OUT" "$@" 2>&1 | tee "$OUT/tu_bench.log"
