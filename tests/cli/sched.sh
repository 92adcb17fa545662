#!/usr/bin/env bash
# sched.sh - schedules from the command line (docs/tuning.md), without a GPU: `bgnnc --sched`
# puts a point into the IR dump (sched(...), method=; lanes= also as the kernel call's template
# argument) and the manifest (grid=, fb=, the graph's
# chunk= and group=) of the generated CUDA; a point an instruction cannot take, or a malformed
# one, is an error naming it (exit 1) with no output file; `bgnnc tune` refuses bad arguments
# with a usage error (exit 2) and, where no GPU is usable, fails with the driver's message
# (exit 1) and writes no database; the CPU reference takes --sched with the same logits;
# `bgnnc tune --variants` writes gcn_bin's 32 type-correct precision variants, each compiling.
#   sched.sh BGNNC SOURCE_DIR WORK_DIR
set -uo pipefail
bgnnc=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
m=$src/examples/gcn_bin.bgnn
ir=$("$bgnnc" "$m" --emit=ir --sched=11:block=128,grid=4,chunk=512,group=never --sched=13:method=popc2) || fail "--sched: exit $?"
grep -q '^%11 .*sched(block=128 grid=4 chunk=512 group=never)' <<<"$ir" || fail "no sched(...) on %11: $ir"
grep -q '^%13 .*method=popc2' <<<"$ir" || fail "no method=popc2 on %13"
"$bgnnc" "$m" --emit=cuda --sched=11:chunk=512,group=always --sched=10:fb=sparse -o "$work/m.cu" || fail "emit cuda: exit $?"
# lanes= (a code-level knob of bspmm_mm): in the IR, a template argument of the kernel's call only
# when set, and refused where it does not apply
ir=$("$bgnnc" "$m" --emit=ir --sched=13:lanes=16,block=64) || fail "--sched lanes: exit $?"
grep -q '^%13 .*sched(block=64 lanes=16)' <<<"$ir" || fail "no sched(block=64 lanes=16) on %13"
cu=$("$bgnnc" "$m" --emit=cuda --sched=13:lanes=8) || fail "emit cuda lanes=8: exit $?"
grep -q "bspmm_mm_adjb<.*, 0, 8>(" <<<"$cu" || fail "lanes=8 not in the kernel's call"
cu=$("$bgnnc" "$m" --emit=cuda) || fail "emit cuda: exit $?"
grep -q "bspmm_mm_adjb<.*, false, 0>(" <<<"$cu" || fail "the default call changed"
# the manifest is embedded as bytes: decode them back to text
python3 - "$work/m.cu" >"$work/manifest.txt" <<'PY' || fail "cannot decode the manifest"
import re, sys
body = open(sys.argv[1]).read().split("bgnn_manifest[", 1)[1].split("{", 1)[1].split("}", 1)[0]
print(bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)).decode().rstrip("\0"))
PY
grep -q '^graph 0 .* chunk=512 group=always$' "$work/manifest.txt" || fail "graph 0 line: $(grep '^graph 0' "$work/manifest.txt")"
grep -q '^launch .*kernel=bgnn_k10_bmm .* grid=0 fb=sparse smem=0$' "$work/manifest.txt" || fail "launch of %10: no fb=sparse"
bad() { # expected exit, expected text, args...
    local want=$1 text=$2
    shift 2
    out=$("$bgnnc" "$@" 2>&1)
    rc=$?
    [[ $rc == "$want" ]] || fail "$* exited $rc, want $want: $out"
    grep -q -- "$text" <<<"$out" || fail "$*: no '$text' in: $out"
}
bad 1 "needs 256-thread blocks" "$m" --emit=ir --sched=10:block=128
bad 1 "has no schedule" "$m" --emit=ir --sched=3:block=128
bad 1 "unknown key or value" "$m" --emit=ir --sched=11:block=100
bad 1 "expected INST:SCHEDULE" "$m" --emit=ir --sched=block=64
bad 1 "chunk and group apply" "$m" --emit=ir --sched=13:chunk=512
bad 1 "lanes applies to a bspmm_mm" "$m" --emit=ir --sched=11:lanes=8
bad 1 "unknown key or value" "$m" --emit=ir --sched=13:lanes=4
"$bgnnc" "$m" --emit=ir --sched=11:grid=999 -o "$work/bad.ir" >/dev/null 2>&1 && fail "grid=999 accepted"
[[ -e $work/bad.ir ]] && fail "a refused --sched left an output file"
# the CPU reference takes --sched (same logits), and refuses a bad one
if [[ -f $src/../shared/data/cora/graph.mtx ]]; then
    w=$src/examples/weights/gcn_bin_cora.safetensors d=$src/../shared/data/cora
    "$bgnnc" run "$m" --data "$d" --weights "$w" --logits "$work/a.npy" >/dev/null || fail "cpu run"
    "$bgnnc" run "$m" --data "$d" --weights "$w" --sched 11:block=64,chunk=256 --logits "$work/b.npy" >/dev/null || fail "cpu run --sched"
    cmp -s "$work/a.npy" "$work/b.npy" || fail "--sched changed the CPU reference's logits"
    bad 1 "has no schedule" run "$m" --data "$d" --weights "$w" --sched 2:grid=2
fi
# precision variants: gcn_bin has 4 sites and 32 type-correct combinations, the model among them
vo=$("$bgnnc" tune --variants "$m" -o "$work/var") || fail "tune --variants: exit $?"
grep -q "^32 type-correct variants, written to" <<<"$vo" || fail "variants: $(tail -n 1 <<<"$vo")"
grep -q "^v029  mm=FBB agg=BBB mm=BBF agg=FBF .*(the model)" <<<"$vo" || fail "the model is not v029"
[[ $(ls "$work/var"/gcn_bin_v*.bgnn | wc -l) == 32 ]] || fail "not 32 variant files"
for v in 000 017 031; do
    "$bgnnc" "$work/var/gcn_bin_v$v.bgnn" --emit=ir >/dev/null || fail "variant v$v does not compile"
done
grep -q "bmm.FBF" <("$bgnnc" "$work/var/gcn_bin_v000.bgnn" --emit=ir) || fail "v000 is not mm=FBF"
# outputs never overwrite inputs: --db / --records naming the model, a data file or each other;
# a variant file that is the model through a link (exit 2, the files unchanged)
cp "$m" "$work/model.bgnn"
mkdir -p "$work/data" && cp "$src/examples/weights/gcn_bin_cora.safetensors" "$work/w.st" && printf '%%MatrixMarket matrix coordinate pattern general\n1 1 0\n' >"$work/data/graph.mtx"
sum0=$(cat "$work/model.bgnn" "$work/data/graph.mtx" "$work/w.st" | cksum)
bad 2 "would overwrite the model" tune "$work/model.bgnn" --data "$work/data" --db "$work/model.bgnn"
bad 2 "would overwrite the data file" tune "$work/model.bgnn" --data "$work/data" --records "$work/data/graph.mtx"
bad 2 "would overwrite the weights file" tune "$work/model.bgnn" --data "$work/data" --weights "$work/w.st" --db "$work/w.st"
touch "$work/db.tune"
bad 2 "would overwrite the database" tune "$work/model.bgnn" --data "$work/data" --db "$work/db.tune" --records "$work/db.tune"
mkdir -p "$work/vm" "$work/vself" && cp "$m" "$work/vm/gcn_bin.bgnn" && ln -sf ../vm/gcn_bin.bgnn "$work/vself/gcn_bin_v000.bgnn"
bad 2 "would overwrite the model" tune --variants "$work/vm/gcn_bin.bgnn" -o "$work/vself"
cmp -s "$m" "$work/vm/gcn_bin.bgnn" && [[ -L $work/vself/gcn_bin_v000.bgnn ]] || fail "--variants replaced the model"
[[ $(cat "$work/model.bgnn" "$work/data/graph.mtx" "$work/w.st" | cksum) == "$sum0" ]] || fail "an input changed"
bad 2 "no model file" tune --variants
bad 2 "unknown option" tune --variants "$m" --bogus
bad 2 "no model file" tune
bad 2 "unknown option" tune "$m" --data "$work" --bogus
bad 2 "--budget must be" tune "$m" --data "$work" --budget -3
bad 2 "--reps must be" tune "$m" --data "$work" --reps 1.5
bad 2 "--knobs takes a comma list" tune "$m" --data "$work" --knobs block,speed
bad 2 "is required" tune "$m"
if ! "$bgnnc" run "$m" --dataset cora --weights x --target auto 2>/dev/null | grep -q "^gpu "; then
    export BGNN_TUNE_DIR=$work/tunedb
    out=$("$bgnnc" tune "$m" --data "$work" 2>&1)
    [[ $? == 1 ]] || fail "tune without a GPU: exit not 1: $out"
    [[ -e $work/tunedb ]] && fail "tune without a GPU made a database"
fi
[[ $fails == 0 ]] && echo "sched.sh: all checks passed"
exit $((fails > 0))
