#!/usr/bin/env bash
# graphs_select.sh - `bgnnc run --graphs FROM:TO` (a batch cut to graphs FROM..TO-1, nodes
# renumbered from 0; loaders/dataset_select.c): on MUTAG (CPU reference) with the trained GIN and
# GCN bin classifiers, the logits of graphs 10..29 run alone are byte for byte rows 10..29 of the
# whole dataset's (a graph's value depends on its own nodes only), and the accuracy line counts 20
# graphs; bad ranges, a dataset without graph_ptr and a cut through an edge between graphs are
# clear errors (exit 2 for the syntax, exit 1 for the data) with no output file.  Skips (77) without MUTAG.
#   graphs_select.sh BGNNC SOURCE_DIR WORK_DIR DATA_ROOT
set -euo pipefail
bgnnc=$1 src=$2 work=$3 data=$4
[[ -f $data/mutag/graph_ptr.npy ]] || { echo "no $data/mutag: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the data bytes of an .npy file from float index $2, $3 floats
npy_floats() {
    local h
    h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
    tail -c +$((10 + h + 4 * $2 + 1)) "$1" | head -c $((4 * $3))
}
for m in gin_bin gcn_bin; do
    model=$src/examples/tu/${m}_mutag.bgnn w=$src/examples/weights/tu/${m}_mutag.safetensors
    "$bgnnc" run "$model" --data "$data/mutag" --weights "$w" --logits "$work/$m.all.npy" >/dev/null
    out=$("$bgnnc" run "$model" --data "$data/mutag" --weights "$w" --graphs 10:30 --logits "$work/$m.part.npy")
    grep -q "(output 'logits', 20 graphs)" <<<"$out" || fail "$m: the accuracy line does not count 20 graphs: $out"
    cmp -s <(npy_floats "$work/$m.all.npy" 20 40) <(npy_floats "$work/$m.part.npy" 0 40) ||
        fail "$m: graphs 10..29 alone differ from rows 10..29 of the whole batch"
    [[ $(stat -c %s "$work/$m.part.npy") -lt $(stat -c %s "$work/$m.all.npy") ]] || fail "$m: the cut logits are not smaller"
done
model=$src/examples/tu/gin_bin_mutag.bgnn w=$src/examples/weights/tu/gin_bin_mutag.safetensors
expect() { # expect CODE MESSAGE ARGS...: exit status CODE, MESSAGE on stderr, no logits file
    local code=$1 msg=$2 rc=0
    shift 2
    "$bgnnc" run "$model" --weights "$w" --logits "$work/bad.npy" "$@" 2>"$work/err.txt" >/dev/null || rc=$?
    [[ $rc == "$code" ]] || fail "$* exited $rc, expected $code"
    grep -q -- "$msg" "$work/err.txt" || fail "$*: no '$msg' in: $(cat "$work/err.txt")"
    [[ ! -e $work/bad.npy ]] || fail "$*: wrote a logits file"
}
expect 2 "expects FROM:TO" --data "$data/mutag" --graphs 10
expect 2 "0 <= FROM < TO" --data "$data/mutag" --graphs 5:5
expect 1 "0 <= FROM < TO <= 188" --data "$data/mutag" --graphs 100:189
[[ -f $data/cora/graph.mtx ]] && expect 1 "holds one graph" --data "$data/cora" --graphs 0:1
# a batch with an edge between its graphs 0 and 1 (nodes 1 and 2): cutting graph 0 alone is an
# error naming the node; graphs 0..1 together are block-diagonal and run
bd=$work/crossing
mkdir -p "$bd"
printf '%%%%MatrixMarket matrix coordinate pattern general\n4 4 4\n1 2\n2 1\n2 3\n3 2\n' >"$bd/graph.mtx"
python3 - "$bd" <<'PY'
import struct, sys
def npy(path, descr, shape, data):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data)
npy(sys.argv[1] + "/graph_ptr.npy", "<i8", "(3,)", struct.pack("<3q", 0, 2, 4))
npy(sys.argv[1] + "/features.npy", "<f4", "(4, 7)", struct.pack("<28f", *range(28)))
PY
expect 1 "node 1 of .* has an edge to node 2" --data "$bd" --graphs 0:1
"$bgnnc" run "$model" --weights "$w" --data "$bd" --graphs 0:2 >/dev/null || fail "graphs 0..1 of the crossing batch do not run"
echo "graphs_select: $fails failures"
[[ $fails == 0 ]]
