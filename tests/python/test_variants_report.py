"""test_variants_report.py - tools/train/variants.py report without torch (CI): it refuses an
output path (--md, --png) that is one of its input results files and leaves that file as it was."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

TOOL = os.path.join(ROOT, "tools", "train", "variants.py")
RESULTS = os.path.join(ROOT, "tools", "train", "results", "variants", "variants_sage_bin_cora.json")


@pytest.mark.parametrize("flag", ["--md", "--png"])
def test_refuses_to_overwrite_an_input(flag, tmp_path):
    pytest.importorskip("numpy")
    src = tmp_path / "r.json"
    shutil.copy(RESULTS, src)
    before = src.read_bytes()
    args = ["report", "--results", str(src), "--times", str(tmp_path), "--gpu", "X", "--md", str(tmp_path / "v.md")]
    args += [flag, str(src)]
    r = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    assert r.returncode != 0
    assert "would overwrite an input results file" in r.stderr
    assert src.read_bytes() == before
