#!/usr/bin/env bash
# run.sh - installs a built bgnn into a temporary prefix and builds and runs two outside
# programs against it: a CMake project (find_package(bgnn), shared and static) and a
# Makefile using pkg-config; each runs gcn_bin on Cora on the CPU reference and must print
# the trained test accuracy (81.30 %).  Also checks the installed files: the SONAME, the
# exported symbols (bgnn_* only), bgnnc runs.
#   tests/install/run.sh [BUILD_DIR]       (default build-test; configured and built already)
#   BGNN_DATA_DIR  datasets root (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(cd "${1:-build-test}" && pwd)
data=${BGNN_DATA_DIR:-$root/../shared/data}
[[ -d $data/cora ]] || { echo "[SKIP] no Cora under $data"; exit 77; }
command -v pkg-config >/dev/null || { echo "[SKIP] pkg-config missing (tools/setup.sh installs it)"; exit 77; }
data=$(cd "$data" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libbgnn.so' | head -n 1)")
echo "installed into $prefix: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
soname=$(readelf -d "$libdir/libbgnn.so" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[[ $soname == libbgnn.so.0.1 ]] || { echo "unexpected SONAME '$soname'"; exit 1; }
cmake -DLIB="$libdir/libbgnn.so" -DHEADER="$prefix/include/bgnn/bgnn.h" -P tests/install/check_exports.cmake
"$prefix/bin/bgnnc" --version
args=("$root/examples/gcn_bin.bgnn" "$data/cora" "$root/examples/weights/gcn_bin_cora.safetensors")

echo "== CMake project (find_package(bgnn CONFIG))"
cmake -S tests/install/cmake_project -B "$tmp/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cmake_build" -j"$(nproc)" >/dev/null
"$tmp/cmake_build/gcn_cora" "${args[@]}"
"$tmp/cmake_build/gcn_cora_static" "${args[@]}"
readelf -d "$tmp/cmake_build/gcn_cora" | grep -q "libbgnn.so.0.1" || { echo "gcn_cora does not link libbgnn.so.0.1"; exit 1; }

echo "== Makefile project (pkg-config bgnn)"
cp -r tests/install/pkgconfig_project tests/install/gcn_cora.c "$tmp/"
PKG_CONFIG_PATH="$libdir/pkgconfig" make -s -C "$tmp/pkgconfig_project"
"$tmp/pkgconfig_project/gcn_cora" "${args[@]}"
echo "install: ok"
