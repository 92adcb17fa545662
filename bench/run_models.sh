#!/usr/bin/env bash
# run_models.sh - the end-to-end model benchmark (docs/performance.md, "End-to-end models")
# in one command on a GPU machine, from the repository root:
#
#   OUT=/some/dir bench/run_models.sh [models_bench.py options]
#
# Builds libbgnn (Release, into $BUILD, default build-models/; with the parser/lexer sources
# from .carry/generated when bison/flex are missing: tools/prepare_carry.sh fills it), builds
# bench/bgnn_time.c against it with cc, then runs bench/models_bench.py: PyG, the PyTorch
# simulation and bgnn (through bgnn_time) on Cora, PubMed (random features) and the
# Reddit-sized R-MAT graph, all in one run on one GPU, for the GCN family (gcn_fp32/full/bin)
# and the inductive families sage, indgcn, saint (float PyG model, full and bin forms;
# full-graph inference).  Options go to models_bench.py, e.g. --families gcn,sage (default all),
# --datasets cora,reddit, --budget-s 480 (skip what is left after that many seconds).
# Writes to $OUT: build.log, env.log, models_bench.log, models_results.json, models_table.md,
# performance_models.png (GCN), performance_models_inductive.png.
# Data: $BGNN_DATA_DIR (default .carry/data, with cora/ and pubmed/graph.mtx).
#   OUT=/some/dir bench/run_models.sh --kernels gcn_bin   # per-kernel times, Reddit size (ncu)
#   OUT=/some/dir bench/run_models.sh --wide-bmm [ROUNDS]  # issue 18's large BB products end to end
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=bench/product_lib.sh
. bench/product_lib.sh   # bg_product_incs: the product's header directories
OUT=${OUT:-$ROOT/models-bench-out}
BUILD=${BUILD:-$ROOT/build-models}
mkdir -p "$OUT" "$BUILD"
export BGNN_DATA_DIR=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$BGNN_DATA_DIR" # Cora's features travel gzipped in .carry
export BGNN_CACHE_DIR=${BGNN_CACHE_DIR:-$BUILD/jit-cache}
export BGNN_DUMP_DIR=${BGNN_DUMP_DIR:-$OUT/nvrtc-dumps}

{
    echo "host: $(hostname)  date: $(date -u +%FT%TZ)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
    command -v nvcc >/dev/null && nvcc --version | tail -n 2
    python3 -c 'import torch, torch_geometric as g; print("torch", torch.__version__, "pyg", g.__version__)' 2>&1
} >"$OUT/env.log" 2>&1 || true
cat "$OUT/env.log"

PREGEN=()
if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
    [[ -f $ROOT/.carry/generated/parser.c ]] && PREGEN=(-DBGNN_PREGENERATED_DIR="$ROOT/.carry/generated")
fi
t0=$SECONDS
if ! { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${PREGEN[@]}" &&
       cmake --build "$BUILD" --target bgnn -j"$(nproc)" &&
       bg_bgnn_time "$BUILD/libbgnn.a" "$BUILD/bgnn_time"; } >"$OUT/build.log" 2>&1; then
    tail -n 30 "$OUT/build.log"
    echo "run_models.sh: build failed (log: $OUT/build.log)"
    exit 1
fi
echo "built libbgnn and bgnn_time in $((SECONDS - t0)) s"

# --kernels MODEL: instead of the benchmark, the time of each separate kernel of MODEL's
# Reddit-sized version (bench/MODEL_reddit.bgnn, random weights and features) under Nsight
# Compute (kernel duration, DRAM throughput): log to $OUT/kernels_MODEL.log.
if [[ ${1:-} == --kernels ]]; then
    model=${2:?--kernels MODEL}
    csr=/tmp/rmat_232965_90500000.csr
    [[ -f $csr ]] || "$BUILD/bgnn_time" --gen-rmat "$csr" --nodes 232965 --edges 90500000
    NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
    # KERNELS_NCU_ARGS: other ncu options, e.g. "-k regex:bgnn_k1[03] -c 2 --section WarpStateStats"
    # shellcheck disable=SC2086
    BGNN_EXEC=launches "$NCU" ${KERNELS_NCU_ARGS:--k regex:bgnn_k -c 16} --section SpeedOfLight "$BUILD/bgnn_time" \
        "$ROOT/bench/${model}_reddit.bgnn" --csr "$csr" --features-random 602 --random-weights 1 --repeat 1 \
        >"$OUT/kernels_$model.log" 2>&1 || { tail -n 20 "$OUT/kernels_$model.log"; exit 1; }
    grep -E "^  bgnn_k|Duration|DRAM Throughput|Stall|Occupancy|Registers|Warp Cycles|Issued|Local" "$OUT/kernels_$model.log"
    exit 0
fi

# --wide-bmm [ROUNDS]: issue 18's two large BB products through libbgnn end to end: the models
# bench/bnn_wide_1024.bgnn (232965 rows, two 1024 x 1024 products) and bnn_wide_4096.bgnn (65536
# rows, one 4096 x 4096 product), random weights and features, over graphs of that many nodes and
# 1024 random edges (nothing aggregates them), each beside its twin with { path: tc } on the wide
# products (the plan's mma.sync kernel; the model as written lets the plan choose, wgmma on
# sm_90), alternating, ROUNDS rounds (default 3) of bgnn_time's median of 50 runs.  Log:
# $OUT/wide_bmm.log (the RESULT lines); a table of the medians last.
if [[ ${1:-} == --wide-bmm ]]; then
    rounds=${2:-3}
    : >"$OUT/wide_bmm.log"
    for spec in "1024 232965" "4096 65536"; do
        read -r k n <<<"$spec"
        csr=$OUT/edges1024_$n.csr
        [[ -f $csr ]] || "$BUILD/bgnn_time" --gen-rmat "$csr" --nodes "$n" --edges 1024 >/dev/null
        sed -E 's/^(h[12] = bmm\.BBB\(.*\))$/\1 { path: tc }/' "$ROOT/bench/bnn_wide_$k.bgnn" >"$OUT/bnn_wide_${k}_tc.bgnn"
        for r in $(seq "$rounds"); do
            for v in auto tc; do
                model=$ROOT/bench/bnn_wide_$k.bgnn
                [[ $v == tc ]] && model=$OUT/bnn_wide_${k}_tc.bgnn
                line=$("$BUILD/bgnn_time" "$model" --csr "$csr" --features-random "$k" --random-weights 1 --repeat 50 |
                       grep '^RESULT') || line="RESULT {\"error\": \"bgnn_time failed\"}"
                echo "$k $n $v $r $line" >>"$OUT/wide_bmm.log"
            done
        done
    done
    python3 - "$OUT/wide_bmm.log" <<'PY'
import json, statistics, sys
rows = {}
for ln in open(sys.argv[1]):
    k, n, v, r, _, js = ln.split(" ", 5)
    d = json.loads(js)
    rows.setdefault((int(k), int(n)), {}).setdefault(v, []).append(d.get("median_ms", float("nan")))
    dev = d.get("device", "?")
print(f"issue 18's large BB products end to end through libbgnn ({dev}); medians of 50 runs, per round")
print("| model | rows | plan's choice (wgmma on sm_90) ms | { path: tc } ms | speedup |")
print("|---|---|---|---|---|")
for (k, n), t in sorted(rows.items()):
    a, b = t.get("auto", []), t.get("tc", [])
    sp = statistics.median(b) / statistics.median(a) if a and b else float("nan")
    print(f"| bnn_wide_{k} | {n} | {' / '.join(f'{x:.3f}' for x in a)} | {' / '.join(f'{x:.3f}' for x in b)} | {sp:.2f}x |")
PY
    exit 0
fi

PYTHONUNBUFFERED=1 python3 "$ROOT/bench/models_bench.py" --bgnn-time "$BUILD/bgnn_time" \
    --data "$BGNN_DATA_DIR" --out "$OUT" "$@" 2>&1 | tee "$OUT/models_bench.log"
