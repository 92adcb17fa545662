#!/usr/bin/env bash
# graphgen_corpus.sh - the named graph corpus for the schedule auto-tuner and the learned
# schedule predictor: 40 data directories made by bgnn_graphgen (tools/graphgen.c), N from 1k
# to 2M, mean degree 2 to 64, every kind (er, rmat with a = 0.45 .. 0.75, grid 2-D/3-D with and
# without diagonals, powerlaw with gamma = 1.8 .. 3.0, ba, sbm with and without relabelling),
# 128 dense feature columns (density 1) for most and sparse Planetoid-like ones (1433 at 1.3%,
# 3703 at 0.85%, 500 at 10%) for three; plus OUTDIR/corpus.tsv, one row a graph:
#   name kind args N E max_degree mean_degree features density
# (E: the entries of graph.mtx, every edge in both directions, as ../shared/data/README.md's
# "directed edges"; args: the generator's arguments besides --out).  Every graph is a pure
# function of its arguments (seed 1), so a rerun gives the same bytes; it replaces the
# directories of an earlier run (--force) and leaves any other file alone.
#   tools/graphgen_corpus.sh OUTDIR [--small] [--check]
#   --small   the 11 graphs with N <= 50k (0.25 GB, about a second; CI-speed checks)
#   --check   also verify each directory with `bgnn_graphgen --check` (the project's loaders;
#             about 70 s more for the full corpus)
#   GRAPHGEN  the bgnn_graphgen binary (default: build/bgnn_graphgen of this checkout, else PATH)
# The full corpus: 8.5 GB of disk, about 45 s on one core of a 2-core VM.
set -euo pipefail
usage() { echo "usage: tools/graphgen_corpus.sh OUTDIR [--small] [--check]" >&2; exit 2; }
out="" small=0 check=0
for a in "$@"; do
    case $a in
        --small) small=1 ;;
        --check) check=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "graphgen_corpus.sh: unknown option '$a'" >&2; usage ;;
        *) [[ -z $out ]] || { echo "graphgen_corpus.sh: one OUTDIR only ('$out', '$a')" >&2; usage; }; out=$a ;;
    esac
done
[[ -n $out ]] || usage
root=$(cd "$(dirname "$0")/.." && pwd)
gen=${GRAPHGEN:-}
if [[ -z $gen ]]; then
    if [[ -x $root/build/bgnn_graphgen ]]; then gen=$root/build/bgnn_graphgen
    elif command -v bgnn_graphgen >/dev/null; then gen=$(command -v bgnn_graphgen)
    else echo "graphgen_corpus.sh: no bgnn_graphgen (cmake --build build --target bgnn_graphgen, or set GRAPHGEN)" >&2; exit 1
    fi
fi

dense="--features 128 --density 1"
# small? name kind-and-arguments (all with --seed 1)
corpus=(
    "s rmat_n4096_d8_a57           rmat --nodes 4096 --degree 8 --skew 0.57,0.19,0.19,0.05 $dense"
    "s rmat_n16384_d16_a45         rmat --nodes 16384 --degree 16 --skew 0.45,0.25,0.25,0.05 $dense"
    "- rmat_n16384_d16_a57         rmat --nodes 16384 --degree 16 --skew 0.57,0.19,0.19,0.05 $dense"
    "s rmat_n16384_d16_a75         rmat --nodes 16384 --degree 16 --skew 0.75,0.1,0.1,0.05 $dense"
    "- rmat_n65536_d4_a57          rmat --nodes 65536 --degree 4 --skew 0.57,0.19,0.19,0.05 $dense"
    "- rmat_n65536_d16_a57         rmat --nodes 65536 --degree 16 --skew 0.57,0.19,0.19,0.05 $dense"
    "- rmat_n65536_d64_a57         rmat --nodes 65536 --degree 64 --skew 0.57,0.19,0.19,0.05 $dense"
    "- rmat_n262144_d16_a50        rmat --nodes 262144 --degree 16 --skew 0.5,0.225,0.225,0.05 $dense"
    "- rmat_n262144_d16_a65        rmat --nodes 262144 --degree 16 --skew 0.65,0.15,0.15,0.05 $dense"
    "- rmat_n262144_d32_a57        rmat --nodes 262144 --degree 32 --skew 0.57,0.19,0.19,0.05 $dense"
    "- rmat_n1048576_d16_a57       rmat --nodes 1048576 --degree 16 --skew 0.57,0.19,0.19,0.05 $dense"
    "- rmat_n2097152_d8_a70        rmat --nodes 2097152 --degree 8 --skew 0.7,0.125,0.125,0.05 $dense"
    "s er_n1000_d4                 er --nodes 1000 --degree 4 $dense"
    "s er_n10000_d16               er --nodes 10000 --degree 16 --features 1433 --density 0.013"
    "- er_n100000_d2               er --nodes 100000 --degree 2 $dense"
    "- er_n100000_d32              er --nodes 100000 --degree 32 $dense"
    "- er_n1000000_d8              er --nodes 1000000 --degree 8 $dense"
    "s grid2d_n1024                grid --nodes 1024 $dense"
    "- grid2d_n65536               grid --nodes 65536 $dense"
    "- grid2d_diag_n262144         grid --nodes 262144 --diag $dense"
    "s grid3d_n32768               grid --nodes 32768 --dims 3 $dense"
    "- grid3d_diag_n110592         grid --nodes 110592 --dims 3 --diag $dense"
    "- grid3d_n1000000             grid --nodes 1000000 --dims 3 $dense"
    "s powerlaw_n10000_d8_g18      powerlaw --nodes 10000 --degree 8 --gamma 1.8 $dense"
    "s powerlaw_n10000_d8_g25      powerlaw --nodes 10000 --degree 8 --gamma 2.5 --features 3703 --density 0.0085"
    "- powerlaw_n100000_d16_g18    powerlaw --nodes 100000 --degree 16 --gamma 1.8 $dense"
    "- powerlaw_n100000_d16_g21    powerlaw --nodes 100000 --degree 16 --gamma 2.1 $dense"
    "- powerlaw_n100000_d16_g30    powerlaw --nodes 100000 --degree 16 --gamma 3.0 $dense"
    "- powerlaw_n500000_d32_g21    powerlaw --nodes 500000 --degree 32 --gamma 2.1 $dense"
    "- powerlaw_n2000000_d4_g25    powerlaw --nodes 2000000 --degree 4 --gamma 2.5 $dense"
    "s ba_n2000_d4                 ba --nodes 2000 --degree 4 $dense"
    "- ba_n50000_d8                ba --nodes 50000 --degree 8 --features 500 --density 0.1"
    "- ba_n200000_d16              ba --nodes 200000 --degree 16 $dense"
    "- ba_n1000000_d32             ba --nodes 1000000 --degree 32 $dense"
    "s sbm_n5000_d16_b8_m05        sbm --nodes 5000 --degree 16 --blocks 8 --mix 0.05 $dense"
    "- sbm_n20000_d64_b16_m02      sbm --nodes 20000 --degree 64 --blocks 16 --mix 0.02 $dense"
    "- sbm_n50000_d8_b32_m10       sbm --nodes 50000 --degree 8 --blocks 32 --mix 0.1 $dense"
    "- sbm_n200000_d32_b64_m20     sbm --nodes 200000 --degree 32 --blocks 64 --mix 0.2 $dense"
    "- sbm_n200000_d32_b64_m20_shuf sbm --nodes 200000 --degree 32 --blocks 64 --mix 0.2 --shuffle $dense"
    "- sbm_n1000000_d16_b256_m10   sbm --nodes 1000000 --degree 16 --blocks 256 --mix 0.1 $dense"
)

mkdir -p "$out"
todo=()
for c in "${corpus[@]}"; do
    [[ $small == 1 && ${c:0:1} != s ]] || todo+=("${c:2}")
done
tsv=$out/corpus.tsv.tmp.$$
trap 'rm -f "$tsv"' EXIT
printf 'name\tkind\targs\tN\tE\tmax_degree\tmean_degree\tfeatures\tdensity\n' >"$tsv"
val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; } # key=value of the generator's summary line
start=$(date +%s.%N)
i=0
for c in "${todo[@]}"; do
    i=$((i + 1))
    read -r name kind rest <<<"$c"
    args="$kind --seed 1 $rest"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # args is a word list
    line=$("$gen" $args --out "$out/$name" --force)
    if [[ $check == 1 ]]; then
        "$gen" --check "$out/$name" >/dev/null || { echo "graphgen_corpus.sh: $name fails --check" >&2; exit 1; }
    fi
    t1=$(date +%s.%N)
    n=$(val n "$line") e=$(val nnz "$line") mx=$(val max_degree "$line") mean=$(val mean_degree "$line")
    f=$(val features "$line")
    dens=1
    [[ $rest =~ --density\ ([^ ]+) ]] && dens=${BASH_REMATCH[1]}
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$args" "$n" "$e" "$mx" "$mean" "$f" "$dens" >>"$tsv"
    printf '[%2d/%d] %-30s N=%-8s E=%-10s max_degree=%-7s %6.2f s\n' "$i" "${#todo[@]}" "$name" "$n" "$e" "$mx" \
        "$(awk "BEGIN { print $t1 - $t0 }")"
done
mv "$tsv" "$out/corpus.tsv"
trap - EXIT
echo "corpus: ${#todo[@]} graphs in $out ($(du -sh "$out" | cut -f1)), $out/corpus.tsv, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s"
