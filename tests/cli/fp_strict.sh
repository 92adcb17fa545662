#!/usr/bin/env bash
# fp_strict.sh - --fp-strict keeps the semantics from before the recorded float orders
# (docs/semantics.md, section 2): for every example with trained weights (Cora and CiteSeer,
# CPU reference), `bgnnc run --fp-strict --logits` writes exactly the logits the main branch
# wrote before fp-order existed (fp_strict_logits.sha256, made with commit d1c7e31's bgnnc);
# and for every example the strict IR records `fp=seq` only and, with the fp= attributes
# removed, is the IR of the default pipeline without fold-batchnorm-mm and fold-standardize-mm
# (its fp= removed too): strictness changes the recorded orders and turns those passes off,
# nothing else.  Missing
# datasets skip their part; BGNN_FP_STRICT_DATASETS (a space list) keeps only those (the
# sanitizer build: Cora, whose models take every code path CiteSeer's do).
#   fp_strict.sh BGNNC SOURCE_DIR WORK_DIR DATA_ROOT
set -euo pipefail
bgnnc=$1 src=$2 work=$3 data=$4
rm -rf "$work"
mkdir -p "$work"
fails=0 runs=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
strip_fp() { sed -E 's/ fp=[^ ]+//'; }

unfolded=$("$bgnnc" --list-passes |
    awk '$1 != "fold-batchnorm-mm" && $1 != "fold-standardize-mm" { printf "%s%s", sep, $1; sep = "," }')
for ex in "$src"/examples/*.bgnn; do
    name=$(basename "$ex" .bgnn)
    ir=$("$bgnnc" "$ex" --emit=ir --fp-strict)
    if grep -E ' fp=' <<<"$ir" | grep -vqE ' fp=seq '; then fail "$name: --fp-strict records an order other than seq"; fi
    if ! diff <(strip_fp <<<"$ir") <("$bgnnc" "$ex" --emit=ir --passes="$unfolded" | strip_fp) >/dev/null; then
        fail "$name: the strict IR differs from the unfolded default IR beyond the fp= attributes"
    fi
    if ! "$bgnnc" "$ex" --emit=ir | cmp -s - "$src/tests/ir/$name.ir.expected"; then
        fail "$name: the default IR is not the golden tests/ir/$name.ir.expected"
    fi
done

while read -r sum key; do
    ds=${key##*_} name=${key%_*}
    model="$src/examples/$name.bgnn"
    [ "$ds" = cora ] || model="$src/examples/$ds/$name.bgnn"
    if [ ! -d "$data/$ds" ]; then echo "skip $key: no $data/$ds"; continue; fi
    if [ -n "${BGNN_FP_STRICT_DATASETS:-}" ] && [[ " $BGNN_FP_STRICT_DATASETS " != *" $ds "* ]]; then
        echo "skip $key: BGNN_FP_STRICT_DATASETS=$BGNN_FP_STRICT_DATASETS"
        continue
    fi
    out="$work/$key.npy"
    "$bgnnc" run "$model" --data "$data/$ds" --weights "$src/examples/weights/${key}.safetensors" \
        --target cpu --fp-strict --logits "$out" >/dev/null
    got=$(sha256sum <"$out" | cut -d' ' -f1)
    runs=$((runs + 1))
    [ "$got" = "$sum" ] || fail "$key: --fp-strict logits differ from the main branch's"
done <"$src/tests/cli/fp_strict_logits.sha256"
echo "fp_strict: $runs models' logits compared, $fails failures"
[ "$fails" -eq 0 ]
