#!/usr/bin/env bash
# prepare_ab.sh - readies .carry/ (git-ignored) for one device call that times this tree against
# a base commit and runs the GPU checks on this tree (tools/device_ab.sh there):
#
#   tools/prepare_ab.sh [BASE_REV]        (default HEAD: the last commit, against the working tree)
#
# Here: builds the working tree (build/, Release) and bgnnc of BASE_REV in a worktree
# (/tmp/bgnn-ab-base, build /tmp/bgnn-ab-base-build; templates embedded, so the binary runs as
# it is anywhere), then copies into .carry/bin: bgnnc_base, bgnnc_new and this tree's GPU tests
# (test_gpu_examples, test_gpu_variants, test_gpu_batches, test_gpu_thresholds).  Fills .carry/data first when it
# lacks the TU datasets (tools/prepare_carry.sh, bench/tu_carry.sh).  Pass ".carry" in the
# device tool's carry list afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
base=${1:-HEAD}
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
cmake --build "$wt-build" --target bgnnc -j"$(nproc)" >/dev/null
mkdir -p .carry/bin
cp "$wt-build/bgnnc" .carry/bin/bgnnc_base
cp build/bgnnc .carry/bin/bgnnc_new
cp build/tests/test_gpu_examples build/tests/test_gpu_variants build/tests/test_gpu_batches build/tests/test_gpu_thresholds .carry/bin/
git -C "$ROOT" rev-parse --short "$rev" >.carry/bin/base_rev
echo "prepare_ab.sh: .carry/bin: bgnnc_base ($(cat .carry/bin/base_rev)), bgnnc_new (working tree), GPU tests; $(du -sh .carry | cut -f1) in .carry"
