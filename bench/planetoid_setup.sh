# planetoid_setup.sh - sourced by bench/latency_budget.sh and bench/tune_bench.sh: planetoid_setup
# NAME prints "DATA_DIR MODEL WEIGHTS" for gcn_bin on cora, citeseer or pubmed, preparing what
# the carried data lacks in $TMP: CiteSeer's features from features.npy.gz, PubMed's random 0/1
# features (bench/make_features.py, 10% ones, seed 1) and random weights (`$B gen-weights`,
# seed 1).  Needs $DATA (the datasets), $TMP (scratch) and $B (bgnnc).  Returns 1 for another name.
planetoid_setup() {
    case $1 in
    cora) echo "$DATA/cora examples/gcn_bin.bgnn examples/weights/gcn_bin_cora.safetensors" ;;
    citeseer)
        mkdir -p "$TMP/citeseer"
        cp "$DATA"/citeseer/*.npy "$DATA/citeseer/graph.mtx" "$TMP/citeseer/" 2>/dev/null
        [[ -f $TMP/citeseer/features.npy ]] || gzip -dc "$DATA/citeseer/features.npy.gz" >"$TMP/citeseer/features.npy"
        echo "$TMP/citeseer examples/citeseer/gcn_bin.bgnn examples/weights/gcn_bin_citeseer.safetensors" ;;
    pubmed)
        mkdir -p "$TMP/pubmed"
        cp "$DATA"/pubmed/*.npy "$DATA/pubmed/graph.mtx" "$TMP/pubmed/" 2>/dev/null
        python3 bench/make_features.py 19717 500 "$TMP/pubmed/features.npy" 0.1
        "$B" gen-weights bench/gcn_bin_pubmed.bgnn --seed 1 -o "$TMP/pubmed_w.safetensors" >/dev/null
        echo "$TMP/pubmed bench/gcn_bin_pubmed.bgnn $TMP/pubmed_w.safetensors" ;;
    *) return 1 ;;
    esac
}
