#!/usr/bin/env bash
# gpu_python_check.sh - the Python package on a GPU machine, in one call (under 4 minutes):
# installs it from this repository offline, then runs tools/gpu_python_check.py (train a
# GCN-bin on Cora on the GPU, export it, run it through bgnn on a PyG Data on the GPU: same
# predictions as PyTorch, features and outputs without a host copy, timing of the Python
# call path against bgnn_session_time) and, when pytest is installed, tests/python.
#
#   tools/prepare_carry.sh                              # here: datasets + parser sources in .carry/
#   OUT=/some/dir tools/gpu_python_check.sh             # there (carry: .carry)
#
# The package is built by pip with scikit-build-core (--no-build-isolation --no-index: no
# internet there) into $OUT/site (PYTHONPATH; the machine's Python stays untouched); without
# bison/flex CMake gets the carried parser sources through CMAKE_ARGS.  Logs: $OUT/*.log,
# $OUT/timing.txt, $OUT/summary.json.  Exit status 0 only when every step passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-python-logs}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export BGNN_DATA_DIR=${BGNN_DATA_DIR:-$ROOT/.carry/data}
export BGNN_CACHE_DIR=${BGNN_CACHE_DIR:-$OUT/jit-cache}
SITE=$OUT/site
FAILED=0
RESULTS=()
T0=$SECONDS

step() {   # step NAME TIMEOUT CMD...: output in $OUT/NAME.log
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "== $name: $*"
    timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    local res=ok
    [[ $rc == 0 ]] || { res="FAIL (rc $rc)"; FAILED=1; }
    RESULTS+=("$(printf '%-10s %-12s %5ss' "$name" "$res" $((SECONDS - t0)))")
    tail -n 40 "$OUT/$name.log" | sed 's/^/   | /'
    return $rc
}

{
    echo "host: $(hostname)  date: $(date -u +%FT%TZ)  commit: $(git rev-parse --short HEAD 2>/dev/null)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    "$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
    "$PY" -c 'import scikit_build_core; print("scikit-build-core", scikit_build_core.__version__)'
    cmake --version | head -n 1; ninja --version 2>/dev/null | sed 's/^/ninja /'
    echo "data: $BGNN_DATA_DIR"; ls "$BGNN_DATA_DIR"
} >"$OUT/env.log" 2>&1
cat "$OUT/env.log"

CMAKE_ARGS=${CMAKE_ARGS:-}
if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
    if [[ -f $ROOT/.carry/generated/parser.c ]]; then
        CMAKE_ARGS="$CMAKE_ARGS -DBGNN_PREGENERATED_DIR=$ROOT/.carry/generated"
    else
        echo "no bison/flex and no .carry/generated (run tools/prepare_carry.sh and carry .carry)"; exit 1
    fi
fi
export CMAKE_ARGS
echo "CMAKE_ARGS=$CMAKE_ARGS"
rm -rf "$SITE"
if step install 240 "$PY" -m pip install --no-build-isolation --no-index --no-deps -v --target "$SITE" "$ROOT"; then
    export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
    step import 60 "$PY" -c 'import bgnn; print(bgnn.__file__, bgnn.version())'
    step check 180 "$PY" "$ROOT/tools/gpu_python_check.py" --data "$BGNN_DATA_DIR" --out "$OUT"
    if "$PY" -c 'import pytest' 2>/dev/null; then
        step pytest 150 "$PY" -m pytest -q -p no:cacheprovider tests/python
    else
        RESULTS+=("$(printf '%-10s %-12s %5s' pytest "skipped" -)  (pytest not installed)")
    fi
fi
echo
echo "==== bgnn Python on the GPU: $(head -n 1 "$OUT/env.log")"
printf '%s\n' "${RESULTS[@]}"
[[ -f $OUT/timing.txt ]] && cat "$OUT/timing.txt"
echo "total $((SECONDS - T0)) s; logs in $OUT"
exit $FAILED
