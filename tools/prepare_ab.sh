#!/usr/bin/env bash
# prepare_ab.sh - readies .carry/ (git-ignored) for one device call that times this tree against
# a base commit and runs the GPU checks on this tree (tools/device_ab.sh there):
#
#   tools/prepare_ab.sh [BASE_REV] [--patch NAME=FILE[,FILE...]]...
#       (BASE_REV default HEAD: the last commit, against the working tree)
#
# Each --patch also builds .carry/bin/bgnnc_NAME and bgnn_time_NAME: BASE_REV with the patch files applied in order
# (git apply), in its own worktree (/tmp/bgnn-ab-NAME), so that several pending patches are timed
# against the base and each other in one device call (the GPU tests copied are this tree's: run
# a patch's own tests by applying it here first).
#
# Here: builds the working tree (build/, Release) and bgnnc of BASE_REV in a worktree
# (/tmp/bgnn-ab-base, build /tmp/bgnn-ab-base-build; templates embedded, so the binary runs as
# it is anywhere), then copies into .carry/bin: bgnnc_base, bgnnc_new, bgnn_time_base and
# bgnn_time_new (bench/bgnn_time.c on each tree's libbgnn, as bench/run_models.sh builds it: the
# Reddit-sized A/B, device_ab.sh --reddit) and this tree's GPU tests (test_gpu_examples,
# test_gpu_variants, test_gpu_batches, test_gpu_thresholds).  Fills .carry/data first when it
# lacks the TU datasets (tools/prepare_carry.sh, bench/tu_carry.sh).  Pass ".carry" in the
# device tool's carry list afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
base=HEAD
PATCHES=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --patch) PATCHES+=("$2"); shift 2 ;;
    --patch=*) PATCHES+=("${1#--patch=}"); shift ;;
    -*) echo "prepare_ab.sh: unknown option '$1'" >&2; exit 2 ;;
    *) base=$1; shift ;;
    esac
done
for pv in "${PATCHES[@]}"; do
    [[ $pv == *=* && -n ${pv%%=*} && -n ${pv#*=} ]] || { echo "prepare_ab.sh: --patch takes NAME=FILE[,FILE...], not '$pv'" >&2; exit 2; }
    IFS=, read -r -a files <<<"${pv#*=}"
    for f in "${files[@]}"; do [[ -f $f ]] || { echo "prepare_ab.sh: --patch ${pv%%=*}: no file '$f'" >&2; exit 2; }; done
done
rev=$(git rev-parse --verify "$base^{commit}")
[[ -d .carry/data/cora && -d .carry/generated ]] || tools/prepare_carry.sh
[[ -f .carry/data/nci1/graph_ptr.npy ]] || bench/tu_carry.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
wt=/tmp/bgnn-ab-base
git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git worktree prune
git worktree add --detach "$wt" "$rev" >/dev/null
cmake -S "$wt" -B "$wt-build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$wt-build" --target bgnnc bgnn -j"$(nproc)" >/dev/null
mkdir -p .carry/bin
cp "$wt-build/bgnnc" .carry/bin/bgnnc_base
cp build/bgnnc .carry/bin/bgnnc_new
bgnn_time() { # TREE BUILD OUT: bench/bgnn_time.c of TREE on BUILD's libbgnn (bench/product_lib.sh)
    (cd "$1" && . "$ROOT/bench/product_lib.sh" && bg_bgnn_time "$2/libbgnn.a" "$3")
}
bgnn_time "$wt" "$wt-build" "$ROOT/.carry/bin/bgnn_time_base"
bgnn_time "$ROOT" "$ROOT/build" "$ROOT/.carry/bin/bgnn_time_new"
cp build/tests/test_gpu_examples build/tests/test_gpu_variants build/tests/test_gpu_batches build/tests/test_gpu_thresholds .carry/bin/
for pv in "${PATCHES[@]}"; do # BASE_REV + the patches, one worktree and binary each
    name=${pv%%=*}
    IFS=, read -r -a files <<<"${pv#*=}"
    pwt=/tmp/bgnn-ab-$name
    git worktree remove --force "$pwt" 2>/dev/null || rm -rf "$pwt"
    git worktree prune
    git worktree add --detach "$pwt" "$rev" >/dev/null
    for f in "${files[@]}"; do git -C "$pwt" apply "$(realpath "$f")"; done
    cmake -S "$pwt" -B "$pwt-build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$pwt-build" --target bgnnc bgnn -j"$(nproc)" >/dev/null
    cp "$pwt-build/bgnnc" ".carry/bin/bgnnc_$name"
    bgnn_time "$pwt" "$pwt-build" "$ROOT/.carry/bin/bgnn_time_$name"
    echo "prepare_ab.sh: .carry/bin/bgnnc_$name = $(git rev-parse --short "$rev") + ${files[*]}"
done
git -C "$ROOT" rev-parse --short "$rev" >.carry/bin/base_rev
echo "prepare_ab.sh: .carry/bin: bgnnc_base ($(cat .carry/bin/base_rev)), bgnnc_new (working tree), GPU tests; $(du -sh .carry | cut -f1) in .carry"
