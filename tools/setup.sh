#!/usr/bin/env bash
# setup.sh - installs what bgnn needs to build on a fresh Debian machine with the CUDA
# toolkit: a C compiler (and a C++ one for tests/emu), CMake, flex and bison, zlib's headers (compressed .npz graphs) and
# pkg-config (tests/install) (the CUDA toolkit itself is not installed here; without it bgnn
# still builds and runs on the CPU reference).  Python: tools/setup_python.sh.
#   tools/setup.sh [PACKAGE...]   also installs the named Debian packages (tools/setup_fuzz.sh)
set -euo pipefail
need=("$@")
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v c++ >/dev/null 2>&1 || need+=(g++)   # tests/emu (a template run on the host)
command -v make >/dev/null 2>&1 || need+=(make)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v flex >/dev/null 2>&1 || need+=(flex)
command -v bison >/dev/null 2>&1 || need+=(bison)
command -v python3 >/dev/null 2>&1 || need+=(python3)   # tests/check_layers.py
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install ${need[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
