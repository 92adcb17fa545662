#!/usr/bin/env bash
# valgrind.sh - memcheck over a CPU subset (docs/reliability.md): the loader, graph, dataset,
# reference-op, interpreter, pass, cache, JSON and public-API input unit tests; `bgnnc --emit=cuda`
# of every example; `bgnnc run` of the tiny test model on its edge-list and .npz data directories;
# `bgnnc run` of examples/gcn_bin.bgnn on Cora and examples/mutag_gcn_bin.bgnn on MUTAG with
# random weights from `bgnnc gen-weights`.  Every run: --error-exitcode=1
# --leak-check=full (definite and possible leaks, invalid reads/writes, uninitialised use).
# The pass differential test runs beside the others (two at a time).
#   BGNN_BUILD_DIR  a built, unsanitised tree (default build-test, from tools/test.sh)
#   BGNN_DATA_DIR   dataset root (default ../shared/data); the Cora run is skipped without it
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(cd "${BGNN_BUILD_DIR:-build-test}" 2>/dev/null && pwd) || { echo "valgrind.sh: no build directory ${BGNN_BUILD_DIR:-build-test} (run tools/test.sh first)" >&2; exit 1; }
[ -x "$dir/bgnnc" ] || { echo "valgrind.sh: no $dir/bgnnc (run tools/test.sh first)" >&2; exit 1; }
command -v valgrind >/dev/null 2>&1 || tools/setup_fuzz.sh
data=${BGNN_DATA_DIR:-$PWD/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BGNN_DATA_DIR=$data BGNN_SOURCE_DIR=$PWD BGNN_TEST_TMP=$tmp BGNN_BGNNC=$dir/bgnnc
vg=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible)
fail=0
run() { # name, command...
  local name=$1 t0=$SECONDS rc=0 log
  log=$tmp/log.${1//[^A-Za-z0-9]/_}
  shift
  "${vg[@]}" "$@" >"$log" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then
    echo "valgrind: $name ok ($((SECONDS - t0)) s)"
  elif [ $rc -eq 77 ]; then
    echo "valgrind: $name skipped"
  else
    echo "valgrind: $name FAILED (exit $rc)"
    tail -n 60 "$log"
    fail=1
  fi
}
# the longest run (test_pass_differential, about half the stage) beside all the others: 2 cores
mkdir -p "$tmp/bg"
(BGNN_TEST_TMP=$tmp/bg; run test_pass_differential "$dir/tests/test_pass_differential"; exit $fail) >"$tmp/bg.out" 2>&1 &
bg=$!
for t in test_io_npy test_io_mtx test_io_safetensors test_graph test_dataset test_ref_ops \
         test_interp test_gcn_fp32_reference test_cache test_sha256 test_json test_api_inputs; do
  run "$t" "$dir/tests/$t"
done
for f in examples/*.bgnn; do # front end, passes and the CUDA code generator (no NVRTC)
  run "bgnnc $f --emit=cuda" "$dir/bgnnc" "$f" --emit=cuda -o "$tmp/out.cu"
done
for d in edges_tiny npz_tiny npz_tiny_deflate; do # the other graph loaders (zip, deflate) end to end
  run "bgnnc run tiny_gcn --data $d" "$dir/bgnnc" run tests/diag/models/tiny_gcn.bgnn \
    --data "tests/diag/data/$d" --weights tests/diag/data/weights/good.safetensors --json
done
for mv in gcn_bin:cora mutag_gcn_bin:mutag; do # CPU reference end to end, random weights
  model=${mv%%:*} ds=${mv##*:}
  if [ -f "$data/$ds/graph.mtx" ]; then
    run "bgnnc gen-weights $model" "$dir/bgnnc" gen-weights "examples/$model.bgnn" --seed 7 \
      -o "$tmp/$model.safetensors"
    run "bgnnc run $model --dataset $ds" "$dir/bgnnc" run "examples/$model.bgnn" --dataset "$ds" \
      --weights "$tmp/$model.safetensors" --logits "$tmp/logits.npy"
  else
    echo "valgrind: bgnnc run $model skipped (no $data/$ds)"
  fi
done
wait "$bg" || fail=1
cat "$tmp/bg.out"
exit $fail
