"""conftest.py - shared fixtures of the Python package's tests (pytest tests/python, after
`pip install .`): the repository, the datasets root ($BGNN_DATA_DIR, else ../shared/data next
to the repository; tests needing a dataset skip without it), and readers of the data files
(Matrix Market, .npy) that use only NumPy."""
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def data_root():
    return os.environ.get("BGNN_DATA_DIR") or os.path.join(ROOT, "..", "shared", "data")


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def cora():
    d = os.path.join(data_root(), "cora")
    if not os.path.isdir(d):
        pytest.skip("no Cora under %s (set BGNN_DATA_DIR)" % data_root())
    return d


@pytest.fixture
def mutag():
    d = os.path.join(data_root(), "mutag")
    if not os.path.isdir(d):
        pytest.skip("no MUTAG under %s" % data_root())
    return d


def read_mtx_edge_index(path):
    """graph.mtx -> (N, edge_index [2, E] int64): entry (i, j) = row i aggregates column j,
    i.e. the edge j -> i in PyG's (source, target) rows."""
    np = pytest.importorskip("numpy")
    with open(path) as f:
        lines = [ln for ln in f if not ln.startswith("%")]
    n, _, nnz = (int(v) for v in lines[0].split())
    ij = np.array([ln.split()[:2] for ln in lines[1:1 + nnz]], dtype=np.int64).reshape(-1, 2) - 1
    return n, np.stack([ij[:, 1], ij[:, 0]])


@pytest.fixture
def gcn_bin(root):
    return (os.path.join(root, "examples", "gcn_bin.bgnn"),
            os.path.join(root, "examples", "weights", "gcn_bin_cora.safetensors"))
