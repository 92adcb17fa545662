#!/usr/bin/env bash
# requests.sh - `bgnnc run --requests K` (K copies of the data in one run;
# loaders/graph_replicate.c) on the CPU reference: MUTAG's GCN bin classifier (graph outputs)
# and Cora's gcn_bin (node outputs) with K = 3 give logits that are the single run's three times,
# byte for byte, the same accuracy, and a requests/s line; K = 0 or junk is a usage error
# (exit 2) with no output file.  Skips (77) without MUTAG and Cora.
#   requests.sh BGNNC SOURCE_DIR WORK_DIR DATA_ROOT
set -euo pipefail
bgnnc=$1 src=$2 work=$3 data=$4
[[ -f $data/mutag/graph_ptr.npy && -f $data/cora/graph.mtx ]] || { echo "no $data/mutag or cora: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
npy_data() { # the data bytes of an .npy file
    local h
    h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
    tail -c +$((10 + h + 1)) "$1"
}
for c in "mutag examples/tu/gcn_bin_mutag.bgnn examples/weights/tu/gcn_bin_mutag.safetensors" \
         "cora examples/gcn_bin.bgnn examples/weights/gcn_bin_cora.safetensors"; do
    read -r ds model w <<<"$c"
    one=$("$bgnnc" run "$src/$model" --data "$data/$ds" --weights "$src/$w" --logits "$work/$ds.1.npy")
    three=$("$bgnnc" run "$src/$model" --data "$data/$ds" --weights "$src/$w" --requests 3 --logits "$work/$ds.3.npy")
    cmp -s <(npy_data "$work/$ds.1.npy"; npy_data "$work/$ds.1.npy"; npy_data "$work/$ds.1.npy") \
        <(npy_data "$work/$ds.3.npy") || fail "$ds: 3 requests are not the single run's logits 3 times"
    a1=$(grep '^accuracy' <<<"$one" | sed 's/(output.*//') a3=$(grep '^accuracy' <<<"$three" | sed 's/(output.*//')
    [[ $a1 == "$a3" ]] || fail "$ds: accuracy '$a3' with 3 requests, '$a1' alone"
    grep -q "^requests 3 a run (copies of the data): .* requests/s" <<<"$three" || fail "$ds: no requests/s line: $three"
done
for bad in 0 x 1000001; do
    rc=0
    "$bgnnc" run "$src/examples/gcn_bin.bgnn" --data "$data/cora" --weights "$src/examples/weights/gcn_bin_cora.safetensors" \
        --requests $bad --logits "$work/bad.npy" 2>"$work/err.txt" >/dev/null || rc=$?
    [[ $rc == 2 ]] || fail "--requests $bad exited $rc, expected 2"
    grep -q -- "--requests must be a whole number" "$work/err.txt" || fail "--requests $bad: $(cat "$work/err.txt")"
    [[ ! -e $work/bad.npy ]] || fail "--requests $bad: wrote a logits file"
done
[[ $fails == 0 ]] && echo "requests: all checks passed"
exit $((fails > 0))
