"""test_variants_train.py - the generic trainer of the precision variants (tools/train/ir_model.py,
tools/train/variants.py; issue 17 point 3), skipped without torch, safetensors or a built bgnnc
($BGNNC, else build/bgnnc): the model built from bgnnc's lowered IR, given examples/gcn_bin's
trained tensors, predicts what `bgnnc run --target cpu` predicts on Cora (float sums in another
order: >= 99% of nodes); a variant trained a few epochs and exported is scored by bgnnc as
trained (the accuracy bgnnc prints is the trainer's own eval accuracy, up to those orders);
an op the trainer does not know is refused with its line."""
import argparse
import os
import subprocess
import sys

import pytest

from conftest import ROOT, data_root

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
np = pytest.importorskip("numpy")
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
BGNNC = os.environ.get("BGNNC") or os.path.join(ROOT, "build", "bgnnc")


@pytest.fixture
def bgnnc():
    if not os.access(BGNNC, os.X_OK):
        pytest.skip("no bgnnc at %s (set BGNNC)" % BGNNC)
    return BGNNC


@pytest.fixture
def ds(cora):
    import bgnn_ref
    return bgnn_ref.Dataset(data_root(), "cora")


def test_ir_model_matches_bgnn(bgnnc, ds, tmp_path):
    from ir_model import IRModel, lowered_ir
    from safetensors.torch import load_file
    model = os.path.join(ROOT, "examples", "gcn_bin.bgnn")
    weights = os.path.join(ROOT, "examples", "weights", "gcn_bin_cora.safetensors")
    net = IRModel(lowered_ir(bgnnc, model), ds, source=model)
    net.load_tensors(load_file(weights))
    net.eval()
    with torch.no_grad():
        mine = net(torch.from_numpy(ds.x)).argmax(1).numpy()
    out = tmp_path / "logits.npy"
    r = subprocess.run([bgnnc, "run", model, "--data", os.path.join(data_root(), "cora"), "--weights", weights,
                        "--target", "cpu", "--logits", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    theirs = np.load(out).argmax(1)
    assert (mine == theirs).mean() >= 0.99


def test_variant_trains_and_exports(bgnnc, ds, tmp_path):
    import variants
    args = argparse.Namespace(
        bgnnc=bgnnc, dropout=0.4, lr=0.01, weight_decay=5e-4, epochs=40, eval_every=5, threads=1)
    vs = variants.list_variants(bgnnc, os.path.join(ROOT, "examples", "gcn_bin.bgnn"), str(tmp_path))
    assert len(vs) == 32 and sum(v["is_model"] for v in vs) == 1
    v = next(v for v in vs if v["precisions"] == "mm=FBF agg=FFF mm=FBF agg=FFF")
    w = str(tmp_path / "w.safetensors")
    epoch = variants.train_variant(args, ds, v, 0, w)
    assert 0 <= epoch < 40
    tra, val, test = variants.bgnn_accuracy(bgnnc, v["file"], os.path.join(data_root(), "cora"), w)
    assert test > 60.0 and val > 60.0   # 40 epochs of a float-aggregation GCN: well above chance (1/7)


def test_unknown_op_is_refused(ds):
    from ir_model import IRModel
    ir = ('%0 = input "X" file="features.npy" : f32[N,1433]    ; 3:1\n'
          '%1 = frobnicate %0 : f32[N,1433]    ; 4:1\n'
          'output %1 "y" : f32[N,1433]    ; 5:1\n')
    net = IRModel(ir, ds, source="m.bgnn")
    with pytest.raises(ValueError, match=r"m.bgnn 4:1: op frobnicate"):
        net(torch.from_numpy(ds.x))
