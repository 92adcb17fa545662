"""_graphs.py - the graph inputs bgnn takes from Python, as calls on a session:

* a PyG ``Data`` / ``Batch`` (``edge_index``, ``num_nodes``, and for a batch ``ptr`` or
  ``batch``) or any object with an ``edge_index`` attribute;
* an ``edge_index`` array or tensor [2, E] (PyG's (source, target) rows; CPU or CUDA);
* a SciPy sparse matrix (A[i, j]: row i aggregates column j);
* a path: any graph file bgnn reads (docs/formats.md).

PyG's message direction is kept: an edge (src, dst) makes node dst aggregate src, i.e. the
matrix entry A[dst, src] of bgnn_session_set_graph_coo."""
import os

from ._arrays import HostBuffer, is_torch, numpy_module


def graph_ptr_from(data, n):
    """(ngraphs, int64 graph_ptr buffer or None) from a batch's ``ptr`` or ``batch``."""
    ptr = getattr(data, "ptr", None)
    if ptr is not None:
        buf = HostBuffer(ptr, "int64")
        return len(buf) - 1, buf
    batch = getattr(data, "batch", None)
    if batch is None:
        return 0, None
    np = numpy_module()
    b = HostBuffer(batch, "int64").obj
    b = b.numpy() if is_torch(b) else b
    if len(b) != n:
        raise ValueError("batch has %d entries, the graph %d nodes" % (len(b), n))
    if len(b) and (np.any(np.diff(b) < 0) or b[0] < 0):
        raise ValueError("batch must be sorted (PyG's Batch is): nodes of graph g are contiguous")
    ngraphs = int(b[-1]) + 1 if len(b) else 0
    counts = np.bincount(b, minlength=ngraphs)
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return ngraphs, HostBuffer(ptr, "int64")


def set_graph(session, graph, num_nodes=None):
    """Binds graph (see the module text) to the C session; returns what must stay alive."""
    if isinstance(graph, (str, os.PathLike)):
        session.set_graph_file(os.fspath(graph))
        return None
    if hasattr(graph, "tocoo") and hasattr(graph, "shape"):  # scipy.sparse
        coo = graph.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise ValueError("the adjacency matrix must be square, got %s" % (coo.shape,))
        row, col = HostBuffer(coo.row, "int64"), HostBuffer(coo.col, "int64")
        session.set_graph_coo(coo.shape[0], len(row), row.addr, col.addr, 0, 0)
        return None
    data = graph
    edge_index = getattr(graph, "edge_index", None)
    if edge_index is None:
        edge_index, data = graph, None
    if num_nodes is None and data is not None:
        num_nodes = getattr(data, "num_nodes", None)
    ei = HostBuffer(edge_index, "int64")
    if len(ei.shape) != 2 or ei.shape[0] != 2:
        raise ValueError("edge_index must have shape [2, E], got %s" % (ei.shape,))
    e = ei.shape[1]
    src, dst = ei.addr, ei.addr + 8 * e
    if num_nodes is None:
        num_nodes = 0
        if e:
            m = ei.obj.max()
            num_nodes = int(m) + 1
    ngraphs, gp = graph_ptr_from(data, num_nodes) if data is not None else (0, None)
    session.set_graph_coo(int(num_nodes), e, dst, src, ngraphs, gp.addr if gp is not None else 0)
    return ei
