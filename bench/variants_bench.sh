#!/usr/bin/env bash
# variants_bench.sh - the precision variants of a model on a dataset (issue 17 point 3,
# docs/tuning.md): `bgnnc tune --variants` writes every type-correct variant, then each runs with
# the model's weights (its float tensors; b1 parameters are their signs, as for the model
# itself: the variants are not retrained here) for the test accuracy, and on a GPU for the time
# (`bgnnc run --target gpu --repeat 1000 --json`, CUDA events median, in us to 0.01); the table ends with the Pareto
# front (no other variant at least as accurate and faster; without a GPU: with at least as
# many 1-bit operands).  VARIANTS_ACC=no skips the accuracy runs (the GPU machine's part of
# tools/train/variants.py: time only; the accuracy of each trained variant is measured there).
#
#   bench/variants_bench.sh MODEL.bgnn DATA_DIR WEIGHTS [OUT_DIR]     (BGNNC: the bgnnc to use)
set -uo pipefail
model=$1 data=$2 weights=$3 out=${4:-variants-out}
B=${BGNNC:-build/bgnnc}
mkdir -p "$out"
rm -f "$out"/*.bgnn
"$B" tune --variants "$model" -o "$out" >"$out/variants.txt" || { cat "$out/variants.txt"; exit 1; }
gpu=no
"$B" run "$model" --data "$data" --weights "$weights" --target auto 2>/dev/null | grep -q "^gpu " && gpu=yes
rows=()
while read -r id desc; do
    f=$(ls "$out"/*_"$id".bgnn)
    bits=$(grep "^$id " "$out/variants.txt" | grep -oE "[0-9]+ of [0-9]+ operands" | awk '{print $1}')
    acc=-
    [[ ${VARIANTS_ACC:-yes} == no ]] || acc=$("$B" run "$f" --data "$data" --weights "$weights" --target cpu 2>&1 | grep -oE "test [0-9.]+%" | head -1 | tr -d 'test %')
    t=-
    if [[ $gpu == yes ]]; then
        t=$("$B" run "$f" --data "$data" --weights "$weights" --target gpu --repeat 1000 --json 2>/dev/null |
            awk '/"inference":/ {printf "%.2f", $2 * 1000}')
    fi
    mark=$(grep "^$id " "$out/variants.txt" | grep -q "(the model)" && echo " (the model)")
    rows+=("$id|${acc:--}|$t|$bits|$desc$mark")
done < <(grep -E "^v[0-9]{3} " "$out/variants.txt" | sed -E 's/  +[0-9]+ of [0-9]+ operands.*//')
{
    echo "variants of $model on $data (weights $weights; GPU: $gpu)"
    printf '%-5s %9s %9s %5s  %s\n' id "test %" "time us" bits precisions
    printf '%s\n' "${rows[@]}" | awk -F'|' -v gpu=$gpu '
        { id[NR]=$1; acc[NR]=$2; t[NR]=$3; b[NR]=$4; d[NR]=$5 }
        END {
            for (i = 1; i <= NR; i++) {
                dom = 0
                for (j = 1; j <= NR && !dom; j++) {
                    if (j == i || acc[j] == "-" || acc[i] == "-") continue
                    if (gpu == "yes") better = (t[j] + 0 <= t[i] + 0) && (acc[j] + 0 >= acc[i] + 0) && (t[j] + 0 < t[i] + 0 || acc[j] + 0 > acc[i] + 0)
                    else better = (b[j] + 0 >= b[i] + 0) && (acc[j] + 0 >= acc[i] + 0) && (b[j] + 0 > b[i] + 0 || acc[j] + 0 > acc[i] + 0)
                    if (better) dom = 1
                }
                printf "%-5s %9s %9s %5s  %s%s\n", id[i], acc[i], t[i], b[i], d[i], dom ? "" : "  [pareto]"
            }
        }'
} | tee "$out/table.txt"
