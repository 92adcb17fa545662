"""test_train_predictor.py - tools/train_predictor.py (the learned schedule predictor's trainer,
docs/tuning.md) on the committed H100 corpus records: it trains, scores the held-out graphs,
and refuses an output path (-o, --report, --expect) that is one of its input records files,
leaving that file as it was."""
import glob
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import ROOT

pytest.importorskip("sklearn")

TOOL = os.path.join(ROOT, "tools", "train_predictor.py")
RECORDS = os.path.join(ROOT, "docs", "logs", "predictor_records_h100_2026-11-26.tgz")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    d = tmp_path_factory.mktemp("pred")
    with tarfile.open(RECORDS) as t:
        t.extractall(d, filter="data")
    return sorted(glob.glob(str(d / "records" / "train_*.tsv"))), sorted(glob.glob(str(d / "records" / "test_*.tsv")))


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def test_trains_and_scores(records, tmp_path):
    train, test = records
    model, report = tmp_path / "m.model", tmp_path / "r.md"
    # fixed settings (the gbdt cross-validation of the default `auto` takes minutes); few trees
    r = run(*train, "-o", str(model), "--test", *test, "--report", str(report), "--setting", "bmm.FBB fb_rows=knob:3",
            "--setting", "bspmm.BBB fast=joint:3", "--setting", "bspmm_mm.FBF mm_spmm=gbdt:2:0.1")
    assert r.returncode == 0, r.stderr
    text = model.read_text()
    assert text.startswith("bgnn-sched-model 2\n")
    assert "\ntree bmm.FBB fb_rows\t" in text and "\nregress bspmm_mm.FBF mm_spmm\t" in text and "\nrange " in text
    assert "12 (" in report.read_text() and "learned predictor" in report.read_text()


def test_emphasis_weights_the_fit(records, tmp_path):
    # a gbdt family's EMPHASIS weights each point by (its case's best / its time) ** EMPHASIS:
    # the trees change, the model's comment names it, and 0 is the unweighted fit
    train, _ = records
    fixed = ["--setting", "bmm.FBB fb_rows=knob:2", "--setting", "bspmm.BBB fast=knob:2"]
    texts = {}
    for e in ("0", "3"):
        out = tmp_path / f"e{e}.model"
        r = run(*train, "-o", str(out), *fixed, "--setting", f"bspmm_mm.FBF mm_spmm=gbdt:2:0:{e}")
        assert r.returncode == 0, r.stderr
        texts[e] = out.read_text()
    assert f"bspmm_mm.FBF mm_spmm: gbdt, depth 2, margin 0.0, emphasis 3" in texts["3"]
    body = {e: [l for l in t.splitlines() if not l.startswith("#")] for e, t in texts.items()}
    assert body["0"] != body["3"]
    r = run(*train, "-o", str(tmp_path / "e4.model"), *fixed, "--setting", "bspmm_mm.FBF mm_spmm=gbdt:2")
    assert r.returncode == 0, r.stderr
    assert [l for l in (tmp_path / "e4.model").read_text().splitlines() if not l.startswith("#")] == body["0"]


def test_refuses_a_bad_setting(records, tmp_path):
    train, test = records
    r = run(*train, "-o", str(tmp_path / "m.model"), "--setting", "bspmm.BBB fast=forest:3")
    assert r.returncode != 0 and "expected FAMILY=KIND:DEPTH" in r.stderr
    for bad in ("gbdt:3:0.1:much", "gbdt:3:0.1.2", "gbdt:3:0:1:2"):
        r = run(*train, "-o", str(tmp_path / "m.model"), "--setting", "bspmm.BBB fast=" + bad)
        assert r.returncode != 0 and "expected FAMILY=KIND:DEPTH[:MARGIN[:EMPHASIS]]" in r.stderr, bad
    r = run(*train, "-o", str(tmp_path / "m.model"), "--setting", "no such family=knob:3")
    assert r.returncode != 0 and "not in the records" in r.stderr


@pytest.mark.parametrize("flag", ["-o", "--report", "--expect"])
def test_refuses_to_overwrite_an_input(records, flag, tmp_path):
    train, test = records
    victim = test[0]
    before = open(victim, "rb").read()
    args = [*train, "-o", str(tmp_path / "m.model") if flag != "-o" else victim, "--test", *test, "--kind", "knob",
            "--depth", "3"]
    if flag != "-o":
        args += [flag, victim]
    r = run(*args)
    assert r.returncode != 0
    assert "would overwrite an input records file" in r.stderr
    assert open(victim, "rb").read() == before
