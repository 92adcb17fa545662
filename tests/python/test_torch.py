"""test_torch.py - the Python package with PyTorch (skipped without torch; PyG parts without
torch_geometric; GPU parts without CUDA): torch tensors in and out, a state_dict as weights,
a tools/train GCNBin exported and run (bgnn agrees with PyTorch's own forward), PyG Data and
Batch, and on a GPU: features used in place (the input's device pointer is x.data_ptr()),
outputs as tensors over the session's buffers (no copy), bit-equal to the CPU reference, and
rebinding refused while such outputs are alive."""
import os
import sys

import pytest

import bgnn
from conftest import ROOT, data_root, read_mtx_edge_index

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


def cora_inputs(cora):
    n, ei = read_mtx_edge_index(os.path.join(cora, "graph.mtx"))
    x = np.load(os.path.join(cora, "features.npy"))
    return n, torch.from_numpy(ei), torch.from_numpy(x)


def reference(gcn_bin, cora):
    s = bgnn.compile(gcn_bin[0], target="cpu", output="numpy").session(weights=gcn_bin[1], data=cora)
    return s.run()


def state_dict(path):
    return {k: torch.from_numpy(v) for k, v in bgnn.load_safetensors(path).items()}


def test_cpu_tensors(gcn_bin, cora):
    want = reference(gcn_bin, cora)
    _, ei, x = cora_inputs(cora)
    m = bgnn.compile(gcn_bin[0], target="cpu")
    out = m(x=x, graph=ei, weights=state_dict(gcn_bin[1]))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and not out.is_cuda
    assert np.array_equal(out.numpy(), want)


def train_modules():
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import bgnn_ref
    import models
    return bgnn_ref, models


def test_exported_gcn_bin_agrees_with_pytorch(gcn_bin, cora, tmp_path):
    bgnn_ref, models = train_modules()
    ds = bgnn_ref.Dataset(data_root(), "cora")
    net = models.GCNBin(ds)
    net.load_state_dict(state_dict(gcn_bin[1]), strict=False)
    net.eval()
    with torch.no_grad():
        ref = net(torch.from_numpy(ds.x))
    path, wpath = bgnn.export.export(net, str(tmp_path / "gcn_bin_trained.bgnn"))
    m = bgnn.compile(path, target="cpu")
    s = m.session(weights=net.state_dict(), data=cora)   # the state_dict itself, no file
    out = s.run()
    assert round(s.accuracy("test"), 2) == 81.30
    agree = float((out.argmax(1) == ref.argmax(1)).float().mean())
    assert agree >= 0.99, agree
    assert torch.equal(m.session(weights=wpath, data=cora).run(), out)


def test_pyg_data_and_batch(gcn_bin, cora, mutag, tmp_path):
    pyg = pytest.importorskip("torch_geometric")
    from torch_geometric.data import Batch, Data
    want = reference(gcn_bin, cora)
    n, ei, x = cora_inputs(cora)
    m = bgnn.compile(gcn_bin[0], target="cpu", weights=gcn_bin[1])
    assert np.array_equal(m(Data(x=x, edge_index=ei, num_nodes=n)).numpy(), want)
    # a batch of MUTAG graphs against the data directory (graph_ptr.npy)
    mm = bgnn.compile(os.path.join(ROOT, "examples", "mutag_gcn_bin.bgnn"), target="cpu")
    w = mm.write_random_weights(str(tmp_path / "w.safetensors"), seed=5)
    want = mm.session(weights=w, data=mutag).run()
    _, mei = read_mtx_edge_index(os.path.join(mutag, "graph.mtx"))
    gp = np.load(os.path.join(mutag, "graph_ptr.npy"))
    mx = torch.from_numpy(np.load(os.path.join(mutag, "features.npy")))
    graphs = []
    for g in range(len(gp) - 1):
        lo, hi = int(gp[g]), int(gp[g + 1])
        keep = (mei[0] >= lo) & (mei[0] < hi)
        graphs.append(Data(x=mx[lo:hi], edge_index=torch.from_numpy(mei[:, keep] - lo), num_nodes=hi - lo))
    got = mm.session(weights=w).run(Batch.from_data_list(graphs))
    assert torch.equal(got, want)
    assert pyg is not None


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@cuda
def test_gpu_in_place(gcn_bin, cora):
    want = torch.from_numpy(reference(gcn_bin, cora))
    n, ei, x = cora_inputs(cora)
    x = x.cuda()
    m = bgnn.compile(gcn_bin[0], target="gpu")
    s = m.session(weights=gcn_bin[1])
    out = s.run(x=x, graph=ei.cuda())
    assert out.is_cuda and out.dtype == torch.float32
    assert s.input_device_ptr == x.data_ptr()          # the features were not copied
    assert out.data_ptr() == s.output_device_ptr(0)    # nor the output
    assert torch.equal(out.cpu(), want)                # bit-equal to the CPU reference
    # while out is alive, a rebind (which frees the buffers) is refused
    with pytest.raises(bgnn.BgnnError) as e:
        s.set_weights(gcn_bin[1])
    assert e.value.status_name == "STATE"
    # other features of the same shape: repointed, no rebind
    x2 = x.clone()
    del out
    out = s.run(x=x2)
    assert s.input_device_ptr == x2.data_ptr() and torch.equal(out.cpu(), want)
    del out
    s.set_weights(state_dict(gcn_bin[1]))              # no live outputs: fine
    assert torch.equal(s.run().cpu(), want)
    assert s.time(10) > 0
