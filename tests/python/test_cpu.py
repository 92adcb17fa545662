"""test_cpu.py - the Python package on the CPU reference interpreter with NumPy only (no
torch needed): the example script's 81.30 % on Cora, arrays vs the data directory (bit-equal
logits), weights from a mapping (state_dict-like), graph files of every format, batches,
b1 outputs, the export helper's round trip, and BgnnError carrying the C diagnostics."""
import os
import subprocess
import sys

import pytest

import bgnn
from conftest import ROOT, data_root, read_mtx_edge_index

np = pytest.importorskip("numpy")


def cora_arrays(cora):
    n, ei = read_mtx_edge_index(os.path.join(cora, "graph.mtx"))
    x = np.load(os.path.join(cora, "features.npy"))
    y = np.load(os.path.join(cora, "labels.npy"))
    test = np.load(os.path.join(cora, "test_idx.npy"))
    return n, ei, x, y, test


def reference_logits(gcn_bin, cora):
    m = bgnn.compile(gcn_bin[0], target="cpu", output="numpy")
    s = m.session(weights=gcn_bin[1], data=cora)
    return s, s.run()


def test_example_script(cora):
    r = subprocess.run([sys.executable, "examples/python_cora.py", data_root()], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    assert "test accuracy 81.30%" in r.stdout, r.stdout + r.stderr


def test_data_dir_accuracy(gcn_bin, cora):
    s, logits = reference_logits(gcn_bin, cora)
    assert isinstance(logits, np.ndarray) and logits.shape == (2708, 7) and logits.dtype == np.float32
    assert round(s.accuracy("test"), 2) == 81.30
    assert round(s.accuracy("val"), 2) == 80.20
    assert s.model.target == "cpu" and "reference" in s.model.device_name
    assert s.model.output_names == ("logits",)


def test_arrays_equal_data_dir(gcn_bin, cora):
    _, want = reference_logits(gcn_bin, cora)
    n, ei, x, y, test = cora_arrays(cora)
    m = bgnn.compile(gcn_bin[0], target="cpu", output="numpy")
    got = m(x=x, graph=ei, weights=gcn_bin[1])
    assert np.array_equal(got, want)
    acc = float((got[test].argmax(1) == y[test]).mean()) * 100
    assert round(acc, 2) == 81.30
    # float64 features and int32 edge ids are converted; the same graph object is not rebound
    s = m.session(weights=gcn_bin[1])
    assert np.array_equal(s.run(x=x.astype(np.float64), graph=ei.astype(np.int32)), want)
    assert np.array_equal(s.run(x=x, graph=ei), want)


def test_requests(gcn_bin, cora):
    """Three feature sets in one run: each third of the logits is that set's single run."""
    n, ei, x, y, test = cora_arrays(cora)
    xs = [x, x * 1.5, np.where(x != 0, 0, 1).astype(np.float32) * (np.arange(x.shape[1]) % 97 == 0)]
    m = bgnn.compile(gcn_bin[0], target="cpu", output="numpy")
    singles = [m.session(weights=gcn_bin[1]).run(x=xi, graph=ei) for xi in xs]
    s = m.session(weights=gcn_bin[1]).set_requests(3)
    got = s.run(x=np.concatenate(xs), graph=ei)
    assert got.shape == (3 * n, 7)
    for r in range(3):
        assert np.array_equal(got[r * n:(r + 1) * n], singles[r])
    with pytest.raises(bgnn.BgnnError) as e:
        s.run(x=x)
    assert "3 requests over a graph of 2708 nodes need 8124" in str(e.value)
    with pytest.raises(bgnn.BgnnError):
        s.set_requests(0)


def test_weights_from_mapping(gcn_bin, cora):
    _, want = reference_logits(gcn_bin, cora)
    sd = bgnn.load_safetensors(gcn_bin[1])
    sd["bn.num_batches_tracked"] = np.array(7, dtype=np.int64)  # skipped, as in a state_dict
    m = bgnn.compile(gcn_bin[0], target="cpu", output="numpy")
    s = m.session(weights=sd, data=cora)
    assert np.array_equal(s.run(), want)
    # a wrong shape is reported like a file's, naming the in-memory source
    sd["conv2.weight"] = sd["conv2.weight"].T.copy()
    with pytest.raises(bgnn.BgnnError) as e:
        s.run(weights=sd)
    assert e.value.status_name == "DATA"
    assert "(in-memory weights): tensor 'conv2.weight' has shape [64, 7]" in str(e.value)


def test_graph_files(root):
    """Every graph format of tests/diag/data gives the tiny model the same output."""
    model = os.path.join(root, "tests", "diag", "models", "tiny_gcn.bgnn")
    w = os.path.join(root, "tests", "diag", "data", "weights", "good.safetensors")
    m = bgnn.compile(model, target="cpu", output="numpy")
    d = os.path.join(root, "tests", "diag", "data")
    x = np.load(os.path.join(d, "tiny", "features.npy"))
    outs = []
    for g in ("tiny/graph.mtx", "npz_tiny/graph.npz", "edges_tiny/edges.txt"):
        s = m.session(weights=w)
        outs.append(s.run(x=x, graph=os.path.join(d, g)))
    assert all(np.array_equal(o, outs[0]) for o in outs)
    with pytest.raises(bgnn.BgnnError) as e:
        m.session(weights=w).run(x=x, graph=os.path.join(d, "bad_edges", "edges.txt"))
    assert "edges.txt:4: expected two node ids 'src dst', got '1 2x'" in str(e.value)


def test_scipy_sparse(gcn_bin, cora):
    sp = pytest.importorskip("scipy.sparse")
    _, want = reference_logits(gcn_bin, cora)
    n, ei, x, _, _ = cora_arrays(cora)
    a = sp.csr_matrix((np.ones(ei.shape[1]), (ei[1], ei[0])), shape=(n, n))
    m = bgnn.compile(gcn_bin[0], target="cpu", output="numpy")
    assert np.array_equal(m(x=x, graph=a, weights=gcn_bin[1]), want)


class FakeBatch:
    """What the package reads of a PyG Batch: x, edge_index, batch, num_nodes."""

    def __init__(self, x, edge_index, batch):
        self.x, self.edge_index, self.batch, self.num_nodes = x, edge_index, batch, x.shape[0]


def test_batch_of_graphs(root, mutag, tmp_path):
    model = bgnn.compile(os.path.join(root, "examples", "mutag_gcn_bin.bgnn"), target="cpu", output="numpy")
    w = model.write_random_weights(str(tmp_path / "w.safetensors"), seed=3)
    want = model.session(weights=w, data=mutag).run()
    n, ei = read_mtx_edge_index(os.path.join(mutag, "graph.mtx"))
    gp = np.load(os.path.join(mutag, "graph_ptr.npy"))
    batch = np.repeat(np.arange(len(gp) - 1), np.diff(gp))
    x = np.load(os.path.join(mutag, "features.npy"))
    got = model.session(weights=w).run(FakeBatch(x, ei, batch))
    assert got.shape == want.shape == (len(gp) - 1, want.shape[1])
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="sorted"):
        model.session(weights=w).run(FakeBatch(x, ei, batch[::-1].copy()))


TINY_B1 = """model tiny
graph A = adjacency(self_loops: true, norm: sym)
graph B = adjacency(self_loops: true, norm: none)
input X : f32[N, 40]
param W1 : b1[40, 33] = "w1".T
param W : f32[33, 3] = "w"
param b : f32[3] = "b"
h = gcn_conv(X, B, W1) { mm: FBB, agg: BBB }
y = gcn_conv(h, A, W, b) { mm: BFF, agg: FFF }
output logits = log_softmax(y)
output hidden = h
"""


def test_source_text_b1_outputs(tmp_path):
    m = bgnn.compile(TINY_B1, target="cpu", output="numpy", name="tiny.bgnn")
    w = m.write_random_weights(str(tmp_path / "w.safetensors"), seed=1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 40)).astype(np.float32)
    ei = np.array([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]])
    out = m(x=x, graph=ei, weights=w)
    assert set(out) == {"logits", "hidden"}
    assert out["logits"].shape == (6, 3)
    words = out["hidden"]
    assert words.dtype == np.uint32 and words.shape == (6, 2)
    pm = bgnn.unpack_bits(words, 33)
    assert pm.shape == (6, 33) and set(np.unique(pm)) <= {-1.0, 1.0}
    assert not (words[:, 1] >> 1).any()  # padding bits are zero


def test_export_round_trip(gcn_bin, cora, tmp_path):
    _, want = reference_logits(gcn_bin, cora)
    sd = bgnn.load_safetensors(gcn_bin[1])
    path, wpath = bgnn.export.export(sd, str(tmp_path / "my-gcn.bgnn"), kind="gcn_bin")
    assert wpath.endswith("my-gcn.safetensors") and os.path.exists(wpath)
    text = open(path).read()
    assert "model my_gcn" in text and "b1[1433, 64]" in text and "{ mm: FBB, agg: BBB }" in text
    m = bgnn.compile(path, target="cpu", output="numpy")
    s = m.session(weights=wpath, data=cora)
    assert np.array_equal(s.run(), want)
    assert round(s.accuracy("test"), 2) == 81.30
    with pytest.raises(ValueError, match="kind"):
        bgnn.export.export(sd, str(tmp_path / "x.bgnn"))
    with pytest.raises(ValueError, match="needs state_dict entries"):
        bgnn.export.export({"conv1.weight": sd["conv1.weight"]}, str(tmp_path / "x.bgnn"), kind="gcn_full")


def test_errors_carry_diagnostics(gcn_bin, cora, tmp_path):
    with pytest.raises(bgnn.BgnnError) as e:
        bgnn.compile("model x\ninput X : f32[N, 4\n", target="cpu", name="bad.bgnn")
    assert e.value.status_name == "SYNTAX" and "bad.bgnn:2:14: error[E0105]" in str(e.value)
    assert isinstance(e.value, RuntimeError)
    m = bgnn.compile(gcn_bin[0], target="cpu")
    missing = str(tmp_path / "missing.safetensors")
    with pytest.raises(bgnn.BgnnError) as e:
        m.session(weights=missing, data=cora).run()
    assert missing in str(e.value) and e.value.status_name == "IO"
    with pytest.raises(bgnn.BgnnError) as e:
        m.session(weights=gcn_bin[1]).run(x=np.zeros((3, 5), np.float32), graph=np.array([[0], [1]]))
    assert "does not match input 'X'" in str(e.value)
    with pytest.raises(bgnn.BgnnError) as e:
        m.session().run()
    assert e.value.status_name == "STATE" and "no graph bound" in str(e.value)
    with pytest.raises(bgnn.BgnnError) as e:
        m.session(data=str(tmp_path / "nowhere"))
    assert "nowhere" in str(e.value)
    with pytest.raises(ValueError):
        bgnn.compile(gcn_bin[0], target="tpu")


def test_outputs_numpy_without_torch(gcn_bin, cora):
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed: outputs are torch tensors (test_torch.py)")
    except ImportError:
        pass
    s = bgnn.compile(gcn_bin[0], target="cpu").session(weights=gcn_bin[1], data=cora)
    assert isinstance(s.run(), np.ndarray)
    assert bgnn.version() == bgnn.__version__ == "0.1.0"


class _HostView:
    """A host buffer exported through the extension's DLPack code (the GPU path's capsules,
    on kDLCPU so NumPy can consume them here)."""

    def __init__(self, session, arr, legacy=False):
        self.s, self.arr, self.legacy = session, arr, legacy

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, **kw):
        versioned = not self.legacy and max_version is not None and tuple(max_version)[0] >= 1
        return self.s._s._dlpack_host(self.arr.ctypes.data, *self.arr.shape, versioned)


def test_dlpack_capsules(gcn_bin):
    """Capsules keep the session alive, count as live exports until the consumer frees them,
    and an unconsumed capsule is released by its destructor; both capsule kinds."""
    import gc
    m = bgnn.compile(gcn_bin[0], target="cpu")
    s = m.session()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    legacy = np.from_dlpack(_HostView(s, a, legacy=True))
    assert np.array_equal(legacy, a) and s._s.exports() == 1
    del legacy
    gc.collect()
    view = np.from_dlpack(_HostView(s, a))
    assert np.array_equal(view, a) and s._s.exports() == 1
    with pytest.raises(bgnn.BgnnError) as e:  # a rebind while a view is alive
        s.set_weights(gcn_bin[1])
    assert e.value.status_name == "STATE" and "alias" in str(e.value)
    del view
    gc.collect()
    assert s._s.exports() == 0
    for versioned in (False, True):
        cap = s._s._dlpack_host(a.ctypes.data, 2, 3, versioned)
        assert s._s.exports() == 1
        del cap  # never consumed: the destructor frees it
        assert s._s.exports() == 0
    s.set_weights(gcn_bin[1])


def test_fp_strict(cora):
    """fp_strict=True keeps the semantics from before the recorded float orders: gcn_fp32's
    logits are the main branch's (the SHA-256 of their float32 bytes, as commit d1c7e31's
    `bgnnc run --logits` wrote them; tests/cli/fp_strict.sh checks every example); the
    default orders (fma in bmm.FFF) differ slightly but predict the same classes."""
    import hashlib
    model = os.path.join(ROOT, "examples", "gcn_fp32.bgnn")
    weights = os.path.join(ROOT, "examples", "weights", "gcn_fp32_cora.safetensors")
    strict = bgnn.compile(model, target="cpu", output="numpy", fp_strict=True)
    default = bgnn.compile(model, target="cpu", output="numpy")
    ys = strict.session(weights=weights, data=cora).run()
    yd = default.session(weights=weights, data=cora).run()
    digest = hashlib.sha256(np.ascontiguousarray(ys, dtype="<f4").tobytes()).hexdigest()
    assert digest == "37c0464b2eb0685ff35844d9e489d63246ccaa55b5217957b15e80c2e3d2298f"
    assert not np.array_equal(ys, yd)
    assert (ys.argmax(1) == yd.argmax(1)).mean() >= 0.999
    assert np.abs(ys - yd).max() <= 1e-5 * np.abs(ys).max()
