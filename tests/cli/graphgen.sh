#!/usr/bin/env bash
# graphgen.sh - bgnn_graphgen (tools/graphgen.c), the synthetic graph generator of the tuning
# corpus: every kind (and the main variants) at N = 1, 2, 37 and 1000 passes `--check` (graph.mtx
# sorted, symmetric, no self loops or duplicates, one comment line; splits sorted and disjoint;
# every file's node count, through the project's loaders) and runs through `bgnnc run` (gcn_bin
# with Cora's trained weights on 1433 sparse features, CPU reference) with the same node and edge
# counts; the mean degree, the lattice degrees, the block structure and the relabelling are what
# was asked; two runs give the same bytes and the N = 1000 bytes are pinned (sha256 below, the
# same on every machine); bad arguments exit 2 with a message naming the option and leave no
# directory (nor DIR.tmp-*), also when the run is killed while writing; --check finds broken
# files (exit 1); --force replaces only an earlier output of the tool.
#   graphgen.sh BGNNC GRAPHGEN SOURCE_DIR WORK_DIR
set -euo pipefail
bgnnc=$1 gen=$2 src=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; } # key=value of a summary line
leftovers() { compgen -G "$work/*.tmp-*" || true; compgen -G "$work/*.old-*" || true; }
model=$src/examples/gcn_bin.bgnn weights=$src/examples/weights/gcn_bin_cora.safetensors
files=(graph.mtx features.npy labels.npy train_idx.npy val_idx.npy test_idx.npy)

# kind and options | the sha256 of the N = 1000 directory's six files in the order of $files (with
# --features 1433 --density 0.02), the same from gcc 12 / glibc 2.36 on AMD EPYC and gcc 13 /
# glibc 2.39 on Intel Xeon, gcc -O3 -march=native and clang alike; a deliberate change of the
# generator's output updates them
kinds=(
    "er --degree 8|e9267bdb4c90b9aca009d66dd7d97b319a8603d0fd625daf71093775be04c352"
    "rmat --degree 8|57b6a25218a140a7ec14be41d8fb8ca11eb5c3fd151b6e73fd718370734ef0d9"
    "rmat --degree 8 --skew 0.75,0.1,0.1,0.05 --no-shuffle|07b9bff32e035b98e12be0fced58a4de6d0da70ffe6f95dab1c0138d380bf4aa"
    "grid|bcd3d3384934dee7ec8d0c02ed564a93d10a016a8cb41e84920097cfa731c692"
    "grid --diag|c3b25ea17882e66faccc4c49c27a3debb1263c458979a73afc64fd8c075cf005"
    "grid --dims 3|be24c82d6ef68bc426a3efc20206bc01b0ef057fc5830876817f9f347baf6912"
    "grid --dims 3 --diag --shuffle|00b0fb571bb90c62740a88f247efd1367f9563c48f69533649449e0f82677c57"
    "powerlaw --degree 8|8cda03ef82fec2cade309974eaf897f01d510f22bbfa592a42e63b81d8b8c3c8"
    "powerlaw --degree 8 --gamma 1.8|196656e1a8d59ef6aa284335516468bd37636ccd0d431170133844e9b0d7dfaa"
    "ba --degree 8|5932f3e1190e40f8da9540cd1a87a302d6f4fcde828730ce8fb6030ed9e876e9"
    "sbm --degree 8|8d243e5ae73f9ed587e5780dde620ef4ced725123a7fa48a2ec4c6b4c1021fd1"
    "sbm --degree 8 --blocks 5 --mix 0.3 --shuffle --classes 3|ef40e8fc8db33e85e96179a8c475fe8cc930da6fa07c78c7915743674375823f"
)
# the fraction of graph.mtx's entries inside one of B blocks of consecutive ids (sbm's layout)
in_block() {
    awk -v B="$2" 'NR == 3 { n = $1; next } NR > 3 { t++; if (int(($1 * B - 1) / n) == int(($2 * B - 1) / n)) s++ }
                   END { printf "%.3f", t ? s / t : 0 }' "$1"
}
for n in 1 2 37 1000; do
    for i in "${!kinds[@]}"; do
        k=${kinds[$i]%|*} d=$work/g${i}_n$n
        what="$k --nodes $n"
        # shellcheck disable=SC2086 # $k is a word list
        if ! out=$("$gen" $k --nodes "$n" --features 1433 --density 0.02 --out "$d" 2>"$work/err.txt"); then
            fail "$what: $(cat "$work/err.txt")"
            continue
        fi
        [[ $out == "wrote $d: "* ]] || fail "$what: no summary line: $out"
        if ! chk=$("$gen" --check "$d" 2>&1); then
            fail "$what: --check: $chk"
            continue
        fi
        nnz=$(kv nnz "$chk") mean=$(kv mean_degree "$chk") maxd=$(kv max_degree "$chk")
        [[ $(kv n "$chk") == "$n" && $nnz == "$(kv nnz "$out")" && $maxd == "$(kv max_degree "$out")" ]] ||
            fail "$what: --check '$chk' disagrees with '$out'"
        [[ $(kv features "$chk") == 1433 ]] || fail "$what: features: $chk"
        splits=$(($(kv train "$chk") + $(kv val "$chk") + $(kv test "$chk")))
        [[ $splits == "$n" ]] || fail "$what: the splits hold $splits nodes, not all $n: $chk"
        head -2 "$d/graph.mtx" | tail -1 | grep -q "^% bgnn_graphgen ${k%% *} --nodes $n " ||
            fail "$what: comment line: $(sed -n 2p "$d/graph.mtx")"
        if run=$("$bgnnc" run "$model" --data "$d" --weights "$weights" --target cpu 2>&1); then
            grep -q "^data .*: $n nodes, $nnz edges" <<<"$run" || fail "$what: bgnnc run: $run"
        else
            fail "$what: bgnnc run: $run"
        fi
        # the structure asked for
        case "$n:$k" in
        1:*) [[ $nnz == 0 ]] || fail "$what: $nnz entries" ;;
        2:sbm*) [[ $nnz == 0 || $nnz == 2 ]] || fail "$what: $nnz entries" ;;
        2:*) [[ $nnz == 2 ]] || fail "$what: $nnz entries, expected the one edge" ;;
        1000:er* | 1000:sbm*) awk -v m="$mean" 'BEGIN { exit !(m > 7 && m < 9) }' || fail "$what: mean degree $mean" ;;
        1000:rmat* | 1000:powerlaw*) [[ $mean == 8.000 ]] || fail "$what: mean degree $mean, expected 8 (N D / 2 distinct edges)" ;;
        1000:ba*) [[ $nnz == $((2 * (4 * 5 / 2 + 995 * 4))) ]] || fail "$what: $nnz entries, expected a 5-clique and 4 edges a node" ;;
        1000:grid) [[ $maxd == 4 && $nnz == $((2 * (31 * 31 + 7 + 30 * 32 + 8))) ]] || fail "$what: max degree $maxd, $nnz entries (32 x 32 lattice, 1000 nodes)" ;;
        1000:grid\ --diag) [[ $maxd == 8 ]] || fail "$what: max degree $maxd" ;;
        1000:grid\ --dims\ 3) [[ $maxd == 6 && $nnz == $((2 * 3 * 10 * 10 * 9)) ]] || fail "$what: max degree $maxd, $nnz entries (10^3 lattice)" ;;
        1000:grid\ --dims\ 3\ --diag*) [[ $maxd == 26 ]] || fail "$what: max degree $maxd" ;;
        esac
        case "$n:$k" in
        1000:"rmat --degree 8 --skew 0.75"*) # not relabelled: node 1 (raw id 0) is the hub
            [[ $(awk 'NR > 3 && $1 == 1' "$d/graph.mtx" | wc -l) == "$maxd" ]] || fail "$what: node 1 is not the hub" ;;
        1000:"sbm --degree 8") f=$(in_block "$d/graph.mtx" 8)
            awk -v f="$f" 'BEGIN { exit !(f > 0.85 && f < 0.95) }' || fail "$what: $f of the entries inside blocks, expected ~0.9" ;;
        1000:"sbm --degree 8 --blocks 5"*) f=$(in_block "$d/graph.mtx" 5)
            awk -v f="$f" 'BEGIN { exit !(f < 0.4) }' || fail "$what: $f of the entries inside id ranges: not relabelled?" ;;
        esac
        # determinism: a second run, the same bytes; N = 1000: the pinned digest
        if [[ $n == 37 || $n == 1000 ]]; then
            # shellcheck disable=SC2086
            "$gen" $k --nodes "$n" --features 1433 --density 0.02 --out "$d.again" >/dev/null 2>&1
            for f in "${files[@]}"; do cmp -s "$d/$f" "$d.again/$f" || fail "$what: $f differs between two runs"; done
            rm -rf "$d.again"
        fi
        if [[ $n == 1000 ]]; then
            sum=$(cd "$d" && cat "${files[@]}" | sha256sum | cut -d' ' -f1)
            [[ $sum == "${kinds[$i]#*|}" ]] || fail "$what: sha256 $sum, pinned ${kinds[$i]#*|} (a changed generator, or arithmetic that differs on this machine)"
        fi
    done
done
# another seed, another graph
"$gen" er --nodes 1000 --degree 8 --features 1433 --density 0.02 --seed 2 --out "$work/seed2" >/dev/null
cmp -s "$work/g0_n1000/graph.mtx" "$work/seed2/graph.mtx" && fail "--seed 2 gives the graph of seed 1"
cmp -s "$work/g0_n1000/features.npy" "$work/seed2/features.npy" && fail "--seed 2 gives the features of seed 1"

# bad arguments: exit 2, a message naming the option, no directory
bad() { # bad MESSAGE ARGS...
    local msg=$1 rc=0
    shift
    "$gen" "$@" >/dev/null 2>"$work/err.txt" || rc=$?
    [[ $rc == 2 ]] || fail "$* exited $rc, expected 2"
    grep -q -e "$msg" "$work/err.txt" || fail "$*: no '$msg' in: $(cat "$work/err.txt")"
    [[ ! -e $work/bad ]] || { fail "$*: made $work/bad"; rm -rf "$work/bad"; }
    [[ -z $(leftovers) ]] || fail "$*: left $(leftovers)"
}
o=$work/bad
bad "unknown KIND 'foo'" foo --nodes 10 --out "$o"
bad "no KIND" --nodes 10 --out "$o"
bad "one KIND only" er rmat --nodes 10 --out "$o"
bad "\-\-nodes expects a whole number" er --nodes 0 --out "$o"
bad "\-\-nodes expects a whole number" er --nodes 12x --out "$o"
bad "\-\-nodes expects a whole number" er --nodes 3000000000 --out "$o"
bad "\-\-nodes N is required" er --out "$o"
bad "\-\-nodes needs a value" er --out "$o" --nodes
bad "\-\-out DIR is required" er --nodes 10
bad "\-\-degree expects a number" er --nodes 10 --degree -1 --out "$o"
bad "\-\-degree expects a number" er --nodes 10 --degree nan --out "$o"
bad "\-\-seed expects" er --nodes 10 --seed -3 --out "$o"
bad "\-\-skew expects four probabilities" rmat --nodes 10 --skew 0.5,0.5,0.5,0.5 --out "$o"
bad "\-\-skew expects four probabilities" rmat --nodes 10 --skew 0.5,0.5 --out "$o"
bad "\-\-skew applies to rmat graphs only" er --nodes 10 --skew 0.25,0.25,0.25,0.25 --out "$o"
bad "\-\-gamma expects a number > 1" powerlaw --nodes 10 --gamma 1 --out "$o"
bad "\-\-gamma applies to powerlaw" rmat --nodes 10 --gamma 2 --out "$o"
bad "\-\-dims expects a whole number 2 .. 3" grid --nodes 10 --dims 4 --out "$o"
bad "\-\-diag applies to grid" er --nodes 10 --diag --out "$o"
bad "\-\-mix expects a number 0 .. 1" sbm --nodes 10 --mix 1.5 --out "$o"
bad "\-\-blocks expects a whole number" sbm --nodes 10 --blocks 0 --out "$o"
bad "\-\-blocks applies to sbm" ba --nodes 10 --blocks 2 --out "$o"
bad "\-\-density needs \-\-features" er --nodes 10 --density 0.5 --out "$o"
bad "\-\-density expects a number 0 .. 1" er --nodes 10 --features 4 --density 2 --out "$o"
bad "\-\-features expects a whole number" er --nodes 10 --features -1 --out "$o"
bad "\-\-classes expects a whole number" er --nodes 10 --classes 0 --out "$o"
bad "\-\-degree must be at least 1 for ba" ba --nodes 10 --degree 0.4 --out "$o"
bad "\-\-degree 1000 gives about 4e+09 directed edges, over the limit" er --nodes 4000000 --degree 1000 --out "$o"
bad "\-\-features 4096 with \-\-nodes 1000000 .* over the limit" er --nodes 1000000 --features 4096 --out "$o"
bad "unknown option '\-\-bogus'" er --nodes 10 --bogus --out "$o"
bad "\-\-shuffle takes no value" er --nodes 10 --shuffle=1 --out "$o"
bad "\-\-out .*: the parent directory .* does not exist" er --nodes 10 --out "$work/no/such/dir"
bad "\-\-check DIR takes no other arguments" --check "$work/g0_n37" --nodes 3
before=$(sha256sum "$work/g0_n37/graph.mtx")
bad "\-\-out .*g0_n37 already exists" er --nodes 10 --out "$work/g0_n37"
mkdir -p "$work/notours" && echo keep >"$work/notours/graph.mtx"
bad "not an earlier bgnn_graphgen output" er --nodes 10 --force --out "$work/notours"
[[ $(sha256sum "$work/g0_n37/graph.mtx") == "$before" && $(cat "$work/notours/graph.mtx") == keep ]] ||
    fail "a refused --out was changed"
for k in er rmat grid powerlaw ba sbm; do "$gen" --help | grep -q "^  $k " || fail "--help does not describe $k"; done

# --force replaces an earlier output (and removes it), nothing else
"$gen" er --nodes 37 --degree 4 --seed 2 --force --out "$work/g0_n37" >/dev/null || fail "--force over an earlier output"
grep -q -- "--seed 2 " "$work/g0_n37/graph.mtx" || fail "--force did not replace the directory"
"$gen" --check "$work/g0_n37" >/dev/null || fail "--force: the new directory does not check"
[[ -z $(leftovers) ]] || fail "--force left $(leftovers)"

# killed while writing (SIGTERM once DIR.tmp-* exists): no DIR, no DIR.tmp-*
"$gen" er --nodes 1000000 --degree 16 --features 256 --out "$work/killed" >/dev/null &
pid=$!
for _ in $(seq 400); do [[ -z $(compgen -G "$work/killed.tmp-*") ]] || break; sleep 0.025; done
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [[ -e $work/killed ]]; then # finished before the signal: then it must be whole
    "$gen" --check "$work/killed" >/dev/null || fail "killed: a partial $work/killed"
fi
[[ -z $(leftovers) ]] || fail "killed: left $(leftovers)"
rm -rf "$work/killed"

# --check finds broken graph files (exit 1, the reason named)
broken() { # broken MESSAGE MTX-BODY
    local d=$work/broken rc=0
    rm -rf "$d" && mkdir -p "$d"
    printf '%%%%MatrixMarket matrix coordinate pattern general\n%b' "$2" >"$d/graph.mtx"
    "$gen" --check "$d" >/dev/null 2>"$work/err.txt" || rc=$?
    [[ $rc == 1 ]] || fail "--check of '$2' exited $rc, expected 1"
    grep -q -e "$1" "$work/err.txt" || fail "--check of '$2': no '$1' in: $(cat "$work/err.txt")"
}
mkdir -p "$work/fine"
printf '%%%%MatrixMarket matrix coordinate pattern general\n%% x\n3 3 4\n1 2\n2 1\n2 3\n3 2\n' >"$work/fine/graph.mtx"
"$gen" --check "$work/fine" >/dev/null || fail "--check refuses a correct graph"
broken "entry 3 (2 1) is not sorted after entry 2 (2 3)" '% x\n3 3 4\n1 2\n2 3\n2 1\n3 2\n'
broken "entry 2 (1 2) duplicates entry 1" '% x\n3 3 3\n1 2\n1 2\n2 1\n'
broken "entry 1 is a self loop" '% x\n3 3 3\n1 1\n1 2\n2 1\n'
broken "not symmetric: (2 3) without (3 2)" '% x\n3 3 3\n1 2\n2 1\n2 3\n'
broken "one % comment line" '3 3 2\n1 2\n2 1\n'
broken "one % comment line" '% x\n% y\n3 3 2\n1 2\n2 1\n'
cp -r "$work/g0_n1000" "$work/overlap" && cp "$work/overlap/val_idx.npy" "$work/overlap/train_idx.npy"
rc=0
"$gen" --check "$work/overlap" >/dev/null 2>"$work/err.txt" || rc=$?
if [[ $rc != 1 ]] || ! grep -q "val_idx.npy: node .* is in train_idx.npy too" "$work/err.txt"; then
    fail "--check of overlapping splits: exit $rc, $(cat "$work/err.txt")"
fi

[[ $fails == 0 ]] && echo "graphgen: all checks passed"
exit $((fails > 0))
