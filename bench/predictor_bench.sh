#!/usr/bin/env bash
# predictor_bench.sh - issue 17 point 4's data: exhaustive tuning records of gcn_bin over a
# corpus of graphs, for training the learned schedule predictor and for judging it on graphs
# it never saw (docs/tuning.md "The learned predictor").  One command on a GPU machine:
#
#   OUT=/some/dir bench/predictor_bench.sh [--set train|test|all] [--reps R] [--budget S] [--only LIST] [--passes P]
#
# Builds bgnnc and bgnn_graphgen (Release, $BUILD, default build-pred/), generates the set's
# graphs (tools/graphgen.c, 128 dense features, seed 7 for training and 11 for the held-out set,
# so no held-out graph is a training graph), and runs `bgnnc tune --exhaustive --knobs
# block,grid,chunk,group,fb,lanes --dry-run` on each: every point of every tunable op but the method and path
# of bench/gcn_bin_f128.bgnn (Planetoid's graphs: their own gcn_bin models; the TU datasets,
# each whole dataset as one block-diagonal batch, with 128 dense features), each point timed
# alone (median of R runs, CUDA events) and checked bit for bit against the default plan, in P
# whole passes a graph (default 1; tools/train_predictor.py keeps each point's least time: the
# built-in model's records are two passes, docs/tuning.md).
# Records: records/SET_NAME.tsv in $OUT/records.tgz (cli/tune.c's --records lines; one file a
# graph, so a graph is its file; the tune logs in $OUT/logs.tgz; PRED_KEEP_RAW=1 also keeps
# them unpacked in $OUT/raw), then tools/train_predictor.py trains on the train files and scores the
# test files.  The table last: graph, nodes, entries, points measured, seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/predictor-bench-out}
BUILD=${BUILD:-$ROOT/build-pred}
DATA=${BGNN_DATA_DIR:-$ROOT/.carry/data}
"$ROOT/tools/unpack_carry.sh" "$DATA" # Cora's features travel gzipped in .carry
SET=all REPS=30 BUDGET=120 ONLY="" PASSES=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --set) SET=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --only) ONLY=",$2,"; shift 2 ;;
    --passes) PASSES=$2; shift 2 ;;
    *) echo "predictor_bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ $SET == train || $SET == test || $SET == all ]] || { echo "predictor_bench.sh: --set train, test or all" >&2; exit 2; }
[[ $PASSES =~ ^[1-9][0-9]*$ ]] || { echo "predictor_bench.sh: --passes takes a whole number >= 1, not '$PASSES'" >&2; exit 2; }
mkdir -p "$OUT" || exit 1
RAW=$OUT/raw   # records/ and logs/ (archived into $OUT/records.tgz and $OUT/logs.tgz)
[[ -n ${PRED_KEEP_RAW:-} ]] || RAW=$(mktemp -d)
mkdir -p "$RAW/records" "$RAW/logs"
. bench/tools_build.sh
tools_build "$RAW/logs/build.log" predictor_bench.sh
trap 'rm -rf "$TMP"; [[ -n ${PRED_KEEP_RAW:-} ]] || rm -rf "$RAW"' EXIT
. bench/planetoid_setup.sh

dense="--features 128 --density 1"
# set name generator-arguments (train: seed 7; test: seed 11 and parameters of their own)
CORPUS=(
    "train rmat_n4096_d8_a57        rmat --nodes 4096 --degree 8 --skew 0.57,0.19,0.19,0.05"
    "train rmat_n16384_d16_a45      rmat --nodes 16384 --degree 16 --skew 0.45,0.25,0.25,0.05"
    "train rmat_n16384_d16_a75      rmat --nodes 16384 --degree 16 --skew 0.75,0.1,0.1,0.05"
    "train rmat_n65536_d4_a57       rmat --nodes 65536 --degree 4 --skew 0.57,0.19,0.19,0.05"
    "train rmat_n65536_d16_a57      rmat --nodes 65536 --degree 16 --skew 0.57,0.19,0.19,0.05"
    "train rmat_n65536_d32_a65      rmat --nodes 65536 --degree 32 --skew 0.65,0.15,0.15,0.05"
    "train rmat_n131072_d8_a70      rmat --nodes 131072 --degree 8 --skew 0.7,0.12,0.12,0.06"
    "train er_n1000_d4              er --nodes 1000 --degree 4"
    "train er_n10000_d16            er --nodes 10000 --degree 16"
    "train er_n50000_d2             er --nodes 50000 --degree 2"
    "train er_n100000_d24           er --nodes 100000 --degree 24"
    "train grid2d_n1024             grid --nodes 1024"
    "train grid2d_n65536            grid --nodes 65536"
    "train grid3d_n32768            grid --nodes 32768 --dims 3"
    "train grid2d_diag_n16384       grid --nodes 16384 --diag"
    "train powerlaw_n10000_d8_g18   powerlaw --nodes 10000 --degree 8 --gamma 1.8"
    "train powerlaw_n50000_d16_g21  powerlaw --nodes 50000 --degree 16 --gamma 2.1"
    "train powerlaw_n100000_d8_g30  powerlaw --nodes 100000 --degree 8 --gamma 3.0"
    "train ba_n2000_d4              ba --nodes 2000 --degree 4"
    "train ba_n50000_d8             ba --nodes 50000 --degree 8"
    "train ba_n100000_d16           ba --nodes 100000 --degree 16"
    "train sbm_n5000_d16_b8_m05     sbm --nodes 5000 --degree 16 --blocks 8 --mix 0.05"
    "train sbm_n20000_d64_b16_m02   sbm --nodes 20000 --degree 64 --blocks 16 --mix 0.02"
    "train sbm_n50000_d8_b32_m10    sbm --nodes 50000 --degree 8 --blocks 32 --mix 0.1"
    "train ba_n5000_d16             ba --nodes 5000 --degree 16"
    "train ba_n30000_d10            ba --nodes 30000 --degree 10"
    "train ba_n150000_d6            ba --nodes 150000 --degree 6"
    "train powerlaw_n20000_d12_g24  powerlaw --nodes 20000 --degree 12 --gamma 2.4"
    "train powerlaw_n75000_d10_g22  powerlaw --nodes 75000 --degree 10 --gamma 2.2"
    "train powerlaw_n200000_d6_g26  powerlaw --nodes 200000 --degree 6 --gamma 2.6"
    "train rmat_n32768_d8_a62       rmat --nodes 32768 --degree 8 --skew 0.62,0.16,0.16,0.06"
    "train rmat_n196608_d6_a64      rmat --nodes 196608 --degree 6 --skew 0.64,0.15,0.15,0.06"
    "train sbm_n15000_d24_b10_m05   sbm --nodes 15000 --degree 24 --blocks 10 --mix 0.05"
    "train sbm_n120000_d10_b20_m12  sbm --nodes 120000 --degree 10 --blocks 20 --mix 0.12"
    "train er_n8000_d10             er --nodes 8000 --degree 10"
    "train grid3d_n8000             grid --nodes 8000 --dims 3"
    "train cora                     planetoid"
    "train citeseer                 planetoid"
    "train pubmed                   planetoid"
    "train tu_mutag                 tu mutag"
    "train tu_enzymes               tu enzymes"
    "train tu_proteins              tu proteins"
    "train tu_nci1                  tu nci1"
    "test  rmat_n32768_d12_a60      rmat --nodes 32768 --degree 12 --skew 0.6,0.17,0.17,0.06"
    "test  rmat_n98304_d6_a67       rmat --nodes 98304 --degree 6 --skew 0.67,0.14,0.14,0.05"
    "test  er_n20000_d8             er --nodes 20000 --degree 8"
    "test  er_n150000_d4            er --nodes 150000 --degree 4"
    "test  grid2d_n40000            grid --nodes 40000"
    "test  grid3d_diag_n27000       grid --nodes 27000 --dims 3 --diag"
    "test  powerlaw_n30000_d12_g23  powerlaw --nodes 30000 --degree 12 --gamma 2.3"
    "test  powerlaw_n150000_d6_g27  powerlaw --nodes 150000 --degree 6 --gamma 2.7"
    "test  ba_n10000_d12            ba --nodes 10000 --degree 12"
    "test  ba_n75000_d6             ba --nodes 75000 --degree 6"
    "test  sbm_n10000_d32_b12_m05   sbm --nodes 10000 --degree 32 --blocks 12 --mix 0.05"
    "test  sbm_n80000_d12_b24_m15   sbm --nodes 80000 --degree 12 --blocks 24 --mix 0.15"
    "test  rmat_n8192_d24_a55       rmat --nodes 8192 --degree 24 --skew 0.55,0.2,0.2,0.05"
    "test  rmat_n163840_d10_a62     rmat --nodes 163840 --degree 10 --skew 0.62,0.16,0.16,0.06"
    "test  er_n3000_d6              er --nodes 3000 --degree 6"
    "test  er_n60000_d12            er --nodes 60000 --degree 12"
    "test  grid2d_diag_n90000       grid --nodes 90000 --diag"
    "test  grid3d_n64000            grid --nodes 64000 --dims 3"
    "test  powerlaw_n5000_d10_g20   powerlaw --nodes 5000 --degree 10 --gamma 2.0"
    "test  powerlaw_n60000_d8_g25   powerlaw --nodes 60000 --degree 8 --gamma 2.5"
    "test  ba_n20000_d4             ba --nodes 20000 --degree 4"
    "test  ba_n120000_d10           ba --nodes 120000 --degree 10"
    "test  sbm_n30000_d16_b16_m08   sbm --nodes 30000 --degree 16 --blocks 16 --mix 0.08"
    "test  sbm_n160000_d8_b32_m20   sbm --nodes 160000 --degree 8 --blocks 32 --mix 0.2"
)
"$B" gen-weights bench/gcn_bin_f128.bgnn --seed 1 -o "$TMP/f128_w.safetensors" >/dev/null ||
    { echo "predictor_bench.sh: gen-weights failed"; exit 1; }

# the set's synthetic graphs, generated in parallel (each a pure function of its arguments)
gen_list=()
for row in "${CORPUS[@]}"; do
    read -r set name kind args <<<"$row"
    [[ $SET != all && $set != "$SET" ]] && continue
    [[ -n $ONLY && $ONLY != *",$name,"* ]] && continue
    [[ $kind == planetoid || $kind == tu ]] && continue
    seed=7; [[ $set == test ]] && seed=11
    gen_list+=("$kind $args $dense --seed $seed --out $TMP/$name")
done
printf '%s\n' "${gen_list[@]}" | xargs -P "$(nproc)" -I{} sh -c "$GG {} >/dev/null" ||
    { echo "predictor_bench.sh: graph generation failed"; exit 1; }

TABLE=()
start=$(date +%s)
for row in "${CORPUS[@]}"; do
    read -r set name kind args <<<"$row"
    [[ $SET != all && $set != "$SET" ]] && continue
    [[ -n $ONLY && $ONLY != *",$name,"* ]] && continue
    if [[ $kind == planetoid ]]; then
        read -r dir model w < <(planetoid_setup "$name") || continue
    elif [[ $kind == tu ]]; then
        # a whole TU dataset as one batch: its block-diagonal graph (graph_ptr left out: the
        # node-level model), 128 dense features as the synthetic graphs have
        dir=$TMP/$name model=bench/gcn_bin_f128.bgnn w=$TMP/f128_w.safetensors
        mkdir -p "$dir" && cp "$DATA/$args/graph.mtx" "$dir/" ||
            { echo "predictor_bench.sh: no $DATA/$args/graph.mtx (tools/prepare_carry.sh)"; continue; }
        python3 bench/make_features.py "$(awk '!/^%/ {print $1; exit}' "$dir/graph.mtx")" 128 "$dir/features.npy" 1
    else
        dir=$TMP/$name model=bench/gcn_bin_f128.bgnn w=$TMP/f128_w.safetensors
    fi
    rec=$RAW/records/${set}_$name.tsv
    rm -f "$rec"
    t0=$(date +%s.%N)
    for ((pass = 1; pass <= PASSES; pass++)); do  # every pass appends its lines to the graph's file
        log=$RAW/logs/tune_${set}_$name.log
        ((PASSES > 1)) && log=$RAW/logs/tune_${set}_${name}_pass$pass.log
        "$B" tune "$model" --data "$dir" --weights "$w" --exhaustive --knobs block,grid,chunk,group,fb,lanes \
            --reps "$REPS" --budget "$BUDGET" --records "$rec" --dry-run >"$log" 2>&1 ||
            { echo "predictor_bench.sh: bgnnc tune failed on $name (see $log)"; tail -n 3 "$log"; }
    done
    t1=$(date +%s.%N)
    npts=$(($( (wc -l <"$rec") 2>/dev/null || echo 0) / PASSES))  # points a pass
    row=$(awk -F'\t' 'NR == 1 {print $3, $4}' "$rec" 2>/dev/null)
    TABLE+=("$(printf '%-5s %-26s %-22s %5s points %6.1f s' "$set" "$name" "${row:-?}" "$npts" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")")
    echo "${TABLE[-1]}"
    # the device tool brings back a few files: the records and logs as two archives, remade
    # after every graph so a run cut short keeps what it measured
    tar czf "$OUT/records.tgz" -C "$RAW" records && tar czf "$OUT/logs.tgz" -C "$RAW" logs
done
{
    echo "GPU: $GPU; gcn_bin exhaustive launch-level tuning records (reps $REPS, budget $BUDGET s a graph, $PASSES pass(es)), $(($(date +%s) - start)) s in all"
    echo "set   graph                      N E                    points  seconds"
    printf '%s\n' "${TABLE[@]}"
} | tee "$OUT/predictor_table.txt"
