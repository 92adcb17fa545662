#!/usr/bin/env bash
# clobber.sh - outputs never clobber inputs (base/outguard.c, bgnnc.c): every output flag of
# bgnnc refuses a path that names one of the command's inputs - given directly, "./"-prefixed,
# through a symlink and through a hard link - with exit status 2 and a message naming the flag,
# the path and the input; the input's bytes stay unchanged and no temporary file is left.
# A fresh or non-input output path still works, and a failed command leaves no output file.
#   clobber.sh BGNNC SOURCE_DIR WORK_DIR CASE      CASE: compile | gen-weights | run
set -euo pipefail
bgnnc=$1 src=$2 work=$3 case=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A little-endian f32 .npy of ones: path, shape text "(4, 3)", element count.
npy_ones() {
    local hdr="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
    local pad=$(( (64 - (10 + ${#hdr} + 1) % 64) % 64 ))
    hdr="$hdr$(printf '%*s' "$pad" '')"
    local len=$(( ${#hdr} + 1 ))
    {
        printf '\x93NUMPY\x01\x00'
        printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
        printf '%s\n' "$hdr"
        for ((k = 0; k < $3; k++)); do printf '\x00\x00\x80\x3f'; done
    } >"$1"
}

# The fixtures: the tiny GCN of the diag tests, its data and weights, an npy variant.
cp "$src/tests/diag/models/tiny_gcn.bgnn" model.bgnn
cp -r "$src/tests/diag/data/tiny" data
cp "$src/tests/diag/data/weights/good.safetensors" w.safetensors
mkdir -p wdir wst
sed 's/= "w"/= npy("w.npy")/; s/= "b"/= npy("b.npy")/' model.bgnn >npy_model.bgnn
npy_ones wdir/w.npy "(4, 3)" 12
npy_ones wdir/b.npy "(3,)" 3
sed 's/= "w"/= npy("w.npy")/' model.bgnn >mixed_model.bgnn # W next to the safetensors file
cp w.safetensors wst/w.safetensors
npy_ones wst/w.npy "(4, 3)" 12
printf '\x7fELF not really a cubin\n' >model.cubin
printf 'model bad\ninput X : f32[N, 4]\noutput y = relu(Z)\n' >bad.bgnn

no_tmp_left() { # no PATH.tmp.PID file anywhere under the work directory
    local t
    t=$(find . -name '*.tmp.*' | head -n 1)
    [ -z "$t" ] || fail "$1: temporary file $t left behind"
}

# refused NAME FLAG INPUT OUT CMD...: CMD (with OUT as the output path) must exit 2 naming FLAG
# and OUT, and leave INPUT byte for byte as it was.
refused() {
    local name=$1 flag=$2 input=$3 out=$4
    shift 4
    local before after rc=0
    before=$(sha256sum <"$input")
    "$@" >stdout.txt 2>stderr.txt || rc=$?
    after=$(sha256sum <"$input")
    [ "$rc" = 2 ] || fail "$name: exit status $rc, expected 2 ($(cat stderr.txt))"
    grep -qF -- "bgnnc: $flag $out would overwrite " stderr.txt ||
        fail "$name: message does not name '$flag $out': $(cat stderr.txt)"
    [ "$before" = "$after" ] || fail "$name: input $input was modified"
    no_tmp_left "$name"
}

# each_spelling NAME FLAG INPUT CMD... : CMD's output placeholder @OUT@ replaced by INPUT itself,
# ./INPUT, a symlink to INPUT and a hard link to INPUT.
each_spelling() {
    local name=$1 flag=$2 input=$3
    shift 3
    rm -f sym.out hard.out
    ln -s "$PWD/$input" sym.out
    ln "$input" hard.out
    local out
    for out in "$input" "./$input" sym.out hard.out; do
        local cmd=() a
        for a in "$@"; do cmd+=("${a//@OUT@/$out}"); done
        refused "$name ($out)" "$flag" "$input" "$out" "${cmd[@]}"
    done
    [ -L sym.out ] || fail "$name: the symlink was replaced"
    [ hard.out -ef "$input" ] || fail "$name: the hard link was replaced"
    rm -f sym.out hard.out
}

# ok NAME CMD...: a command that must succeed.
ok() {
    local name=$1 rc=0
    shift
    "$@" >stdout.txt 2>stderr.txt || rc=$?
    [ "$rc" = 0 ] || fail "$name: exit status $rc ($(cat stderr.txt))"
    no_tmp_left "$name"
}

case $case in
compile)
    for emit in ir ast cuda cubin; do
        each_spelling "bgnnc --emit=$emit -o" -o model.bgnn "$bgnnc" model.bgnn --emit=$emit -o @OUT@
    done
    each_spelling "bgnnc -o (AOT cubin)" -o model.bgnn "$bgnnc" model.bgnn -o @OUT@
    ok "--emit=ir -o fresh" "$bgnnc" model.bgnn --emit=ir -o out.ir
    ok "--emit=ir -o existing" "$bgnnc" model.bgnn --emit=ir -o out.ir
    rc=0
    "$bgnnc" bad.bgnn --emit=ir -o bad.ir 2>/dev/null || rc=$?
    [ "$rc" = 1 ] || fail "a model with an error: exit status $rc, expected 1"
    [ ! -e bad.ir ] || fail "a model with an error left bad.ir behind"
    no_tmp_left "failed compile"
    ;;
gen-weights)
    each_spelling "gen-weights -o" -o model.bgnn "$bgnnc" gen-weights model.bgnn --seed 1 -o @OUT@
    ok "gen-weights -o fresh" "$bgnnc" gen-weights model.bgnn --seed 1 -o gen.safetensors
    rc=0
    "$bgnnc" gen-weights bad.bgnn --seed 1 -o bad.safetensors 2>/dev/null || rc=$?
    [ "$rc" = 1 ] || fail "gen-weights of a model with an error: exit status $rc, expected 1"
    [ ! -e bad.safetensors ] || fail "gen-weights of a model with an error left bad.safetensors behind"
    ;;
run)
    run=("$bgnnc" run model.bgnn --data data --weights w.safetensors --logits)
    each_spelling "run --logits (model)" --logits model.bgnn "${run[@]}" @OUT@
    each_spelling "run --logits (weights file)" --logits w.safetensors "${run[@]}" @OUT@
    for f in graph.mtx features.npy labels.npy train_idx.npy; do
        each_spelling "run --logits (data file $f)" --logits "data/$f" "${run[@]}" @OUT@
    done
    each_spelling "run --logits (data file, --data data/)" --logits data/features.npy \
        "$bgnnc" run model.bgnn --data data/ --weights w.safetensors --logits @OUT@
    for f in w.npy b.npy; do
        each_spelling "run --logits (weights directory file $f)" --logits "wdir/$f" \
            "$bgnnc" run npy_model.bgnn --data data --weights wdir --logits @OUT@
    done
    each_spelling "run --logits (npy parameter next to the weights file)" --logits wst/w.npy \
        "$bgnnc" run mixed_model.bgnn --data data --weights wst/w.safetensors --logits @OUT@
    cp data/graph.mtx other_graph.mtx
    each_spelling "run --logits (--graph file)" --logits other_graph.mtx \
        "$bgnnc" run model.bgnn --data data --graph other_graph.mtx --weights w.safetensors --logits @OUT@
    each_spelling "run --logits (cubin)" --logits model.cubin \
        "$bgnnc" run model.cubin --target gpu --data data --weights w.safetensors --logits @OUT@
    ok "run --logits fresh" "${run[@]}" logits.npy
    ok "run --logits existing" "${run[@]}" logits.npy
    ok "run npy model" "$bgnnc" run npy_model.bgnn --data data --weights wdir --logits logits2.npy
    ok "run mixed model" "$bgnnc" run mixed_model.bgnn --data data --weights wst/w.safetensors --logits wst/logits.npy
    ;;
*)
    echo "clobber.sh: unknown case '$case'" >&2
    exit 2
    ;;
esac
if [ "$fails" -ne 0 ]; then
    echo "clobber.sh $case: $fails failure(s)"
    exit 1
fi
echo "clobber.sh $case: ok"
