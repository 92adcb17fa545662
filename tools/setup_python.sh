#!/usr/bin/env bash
# setup_python.sh - what the Python stage of .ci/run needs beyond tools/setup.sh, on a fresh
# Debian machine: python3 with venv and its headers (python3-venv, python3-dev: the extension
# is compiled by `pip install .`), then a fresh virtual environment VENV (default
# build-venv/) holding the test packages from PyPI (numpy, pytest) and scikit-learn (the
# schedule predictor's trainer, tools/train_predictor.py).  scikit-build-core comes
# with `pip install .` itself (build isolation).  Installs only what is missing.
#   tools/setup_python.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build-venv}
need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
  python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || need+=(python3-dev)
else
  need+=(python3-venv python3-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  tools/setup.sh "${need[@]}"   # the one apt-get path (root or sudo)
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q numpy pytest scikit-learn
echo "setup_python: $venv ($("$venv/bin/python" --version), $("$venv/bin/python" -c 'import numpy, pytest; print("numpy", numpy.__version__, "pytest", pytest.__version__)'))"
