"""tu_ref.py - TU graph-classification datasets (block-diagonal batches) and the exact bgnn
inference of examples/tu/*.bgnn (GIN / GCN, fp32 / full / bin) on exported tensors.

Follows docs/semantics.md and tools/train/README.md "Semantics", with the orders the default
pipeline records (`bgnnc FILE --emit=ir`): bmm.FF* is `seq+fma` (emulated exactly, fma32),
the classifier's (graph rows, K >= 16) `splitk(ceil(K/8)x8)+fma`;
the GCN bin form's first product reads the raw features through `fold-batchnorm-mm`
(scale s, shift c: semantics.md section 2), computed here the same way; every other float
reduction is `seq` (aggregations in column order, readout in node order).  `bspmm.FFF` over a
normalised graph (gcn_conv's default agg) uses per-edge weights fl(r_i c_j) (spmm_w).
"""
import os

import numpy as np
import torch

import bgnn_ref
from gen_tu_models import READOUT
from bgnn_ref import (F32, absmean, batchnorm, bits, bmm_bb, log_softmax, pm, read_mtx, relu,
                      scl, wscale)

TU = ('mutag', 'proteins', 'enzymes', 'nci1')
KINDS = ['%s_%s' % (k, f) for k in ('gin', 'gcn') for f in ('fp32', 'full', 'bin')]


class TUDataset:
    """graph.mtx (block-diagonal), features.npy (or features_bits.npz + features_float.npy:
    pack_data.py --tu), graph_ptr.npy, graph_labels.npy."""

    def __init__(self, data_dir, name):
        d = os.path.join(data_dir, name)
        self.name = name
        fp = os.path.join(d, 'features.npy')
        if os.path.exists(fp):
            self.x = np.load(fp).astype(np.float32)
        else:
            z = np.load(os.path.join(d, 'features_packed.npz'))
            oh = np.unpackbits(z['bits'], axis=1, count=int(z['onehot_cols'])).astype(np.float32)
            self.x = np.concatenate([z['attrs'].astype(np.float32), oh], axis=1)
        self.ptr = np.load(os.path.join(d, 'graph_ptr.npy')).astype(np.int64)
        self.y = np.load(os.path.join(d, 'graph_labels.npy')).astype(np.int64)
        self.n, self.erow, self.ecol = read_mtx(os.path.join(d, 'graph.mtx'))
        assert self.n == self.x.shape[0] == self.ptr[-1]
        self.num_graphs = len(self.y)
        self.num_features = self.x.shape[1]
        self.num_classes = int(self.y.max()) + 1
        self.rowptr = np.concatenate([[0], np.cumsum(np.bincount(self.erow, minlength=self.n))])
        self._graphs = {}

    def graph(self, self_loops, norm):
        return Batch.graph(self, self_loops, norm)

    def batch(self, gids):
        """The block-diagonal sub-batch of graphs gids (in that order) as a Batch."""
        gids = np.asarray(gids, np.int64)
        cnt = self.ptr[gids + 1] - self.ptr[gids]
        off = np.concatenate([[0], np.cumsum(cnt)])
        nodes = np.repeat(self.ptr[gids] - off[:-1], cnt) + np.arange(off[-1])
        newid = np.empty(self.n, np.int64)
        newid[nodes] = np.arange(len(nodes))
        e0, e1 = self.rowptr[nodes], self.rowptr[nodes + 1]
        ecnt = e1 - e0
        eoff = np.concatenate([[0], np.cumsum(ecnt)])
        eidx = np.repeat(e0 - eoff[:-1], ecnt) + np.arange(eoff[-1])
        return Batch(self.x[nodes], newid[self.erow[eidx]], newid[self.ecol[eidx]], off,
                     self.y[gids])


class Batch:
    """A block-diagonal batch: x [N, F], edges (row-sorted), graph offsets ptr [G+1], labels."""

    def __init__(self, x, erow, ecol, ptr, y):
        self.x, self.erow, self.ecol, self.ptr, self.y = x, erow, ecol, ptr, y
        self.n = x.shape[0]
        self.num_graphs = len(ptr) - 1
        self.gid = np.repeat(np.arange(self.num_graphs), np.diff(ptr))
        self._graphs = {}

    def graph(self, self_loops, norm):
        key = (bool(self_loops), norm)
        if key not in self._graphs:
            self._graphs[key] = bgnn_ref.Graph(self.n, self.erow, self.ecol, self_loops, norm)
        return self._graphs[key]


# ---------------------------------------------------------------------------------------
# exact float operations
# ---------------------------------------------------------------------------------------

def fma32(a, b, c):
    """IEEE fusedMultiplyAdd in float32 (numpy arrays, broadcast): a*b is exact in float64;
    TwoSum gives s + e = a*b + c exactly; float32(s) is the correctly rounded result unless s is
    a float32 midpoint, where the sign of e decides (round to nearest even when e = 0)."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = np.broadcast_to(c, p.shape).astype(np.float64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    rd = r.astype(np.float64)
    up = s > rd
    other = np.where(up, np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf)))
    mid = (s != rd) & ((rd + other.astype(np.float64)) * 0.5 == s) & (e != 0)
    toward_other = np.where(up, e > 0, e < 0)
    return np.where(mid & toward_other, other, r).astype(np.float32)


def bmm_ff(x, w, exact, chunk=0):
    """bmm.FFF with fp=seq+fma (acc = fmaf(x_k, w_k, acc), k ascending), or with chunk > 0
    splitk(ceil(K/chunk)xchunk)+fma (each chunk so from +0, the partials folded left to right);
    w stored [out, in]."""
    if not exact:
        return x @ w.t()
    xn, wt = x.numpy(), w.t().contiguous().numpy()
    K = xn.shape[1]
    step = chunk if chunk > 0 else max(K, 1)
    tot = np.zeros((xn.shape[0], wt.shape[1]), np.float32)
    for k0 in range(0, K, step):
        acc = np.zeros_like(tot)
        for k in range(k0, min(K, k0 + step)):
            acc = fma32(xn[:, k:k + 1], wt[k][None, :], acc)
        tot = acc if k0 == 0 else (tot + acc).astype(np.float32)
    return torch.from_numpy(tot)


def linear_ff(x, w, b, exact):
    return bmm_ff(x, w, exact) + b


# fp-order's chunk for a bmm.FF* of a graph's row (after the readout: the classifier), K >= 16
GRAPH_ROW_CHUNK = 8


def linear_ff_graph(x, w, b, exact):
    """linear of graph rows: bmm.FF* in splitk(ceil(K/8)x8)+fma where K >= 16 (docs/semantics.md)."""
    return bmm_ff(x, w, exact, GRAPH_ROW_CHUNK if x.shape[1] >= 2 * GRAPH_ROW_CHUNK else 0) + b


def bn_affine(x, P, pre):
    return batchnorm(x, P[pre + 'running_mean'], P[pre + 'running_var']) * P[pre + 'weight'] + P[pre + 'bias']


def bin_linear(x, w, b):
    """linear {mm: BBF, bin: absmean}: fl(fl(fl(t * alpha) * m) + b)."""
    return scl(bmm_bb(bits(x), w), absmean(x), wscale(w)) + b


def fb_folded_bits(X, w, mean, var):
    """bits of bmm.FBB(batchnorm(X, mean, var), W) after fold-batchnorm-mm: s_k = fl(1/sqrt(var+eps)),
    c_o = seq sum_k v(W) * -fl(mean_k s_k), t_o = seq sum_k v(W) fl(x_k s_k), bit of fl(t + c)."""
    s = bgnn_ref.bn_inv(var)
    wb = bits(w).t().contiguous()                       # [in, out]
    ms = -(mean * s)
    c = torch.zeros(w.shape[0], dtype=F32)
    acc = torch.zeros(X.shape[0], w.shape[0], dtype=F32)
    xs = X * s
    for k in range(X.shape[1]):
        c = c + torch.where(wb[k], ms[k], -ms[k])
        xk = xs[:, k:k + 1]
        acc = acc + torch.where(wb[k][None, :], xk, -xk)
    return bits(acc + c)


def spmm_w(A, x, exact):
    """bspmm.FFF (adjacency F): y_i = sum_j fl(w_ij * x_j), w_ij = fl(r_i * c_j) in float32,
    sequential in column order."""
    w = A.r[torch.from_numpy(A.rows)] * A.c[torch.from_numpy(A.cols)]
    if not exact:
        P = torch.sparse_coo_tensor(torch.from_numpy(np.stack([A.rows, A.cols])), w, (A.n, A.n))
        return torch.sparse.mm(P, x)
    out = torch.zeros_like(x)
    order = np.argsort(-A.deg, kind='stable')
    for k in range(int(A.deg.max()) if A.n else 0):
        nodes = order[:int((A.deg > k).sum())]
        e = torch.from_numpy(A.rowptr[nodes] + k)
        out[nodes] = out[nodes] + w[e][:, None] * x[torch.from_numpy(A.cols)[e]]
    return out


def readout(h, ptr, op, exact):
    """readout {op: sum | mean}: per graph, float32 sum in node order; mean = fl(sum / count)."""
    g = len(ptr) - 1
    cnt = torch.from_numpy(np.diff(ptr))
    if exact:
        out = torch.zeros(g, h.shape[1], dtype=F32)
        start = torch.from_numpy(ptr[:-1])
        for k in range(int(cnt.max()) if g else 0):
            sel = torch.nonzero(cnt > k).flatten()
            out[sel] = out[sel] + h[start[sel] + k]
    else:
        out = torch.zeros(g, h.shape[1], dtype=h.dtype).index_add_(
            0, torch.from_numpy(np.repeat(np.arange(g), np.diff(ptr))), h)
    if op == 'mean':
        out = torch.where(cnt[:, None] > 0, out / cnt[:, None].to(F32), torch.zeros_like(out))
    return out


# ---------------------------------------------------------------------------------------
# examples/tu/KIND_FORM_DATASET.bgnn
# ---------------------------------------------------------------------------------------

def ref_forward(kind, ds, P, exact=True, layers=3):
    """kind: gin_fp32 | gin_full | gin_bin | gcn_fp32 | gcn_full | gcn_bin; ds: a TUDataset or
    Batch (x, ptr, graph()); P: name -> float32 tensor. Returns the logits [G, classes]."""
    arch, form = kind.split('_')
    X = torch.from_numpy(ds.x)
    with torch.no_grad():
        x0 = batchnorm(X, P['bn.running_mean'], P['bn.running_var'])
        if arch == 'gin':
            A = ds.graph(False, 'none')
            if form == 'bin' and 'lin0.weight' in P:          # linear { mm: FBB }, batchnorm folded
                h = fb_folded_bits(X, P['lin0.weight'], P['bn.running_mean'], P['bn.running_var'])
            else:
                h = bits(x0) if form == 'bin' else x0
            for k in range(1, layers + 1):
                p = 'conv%d.' % k
                last = k == layers
                e = P[p + 'one_plus_eps']
                if form == 'bin':
                    z = A.spmm_bits(h) + pm(h) * e             # bspmm.BBF; scl of the bits
                else:
                    z = A.spmm(h, exact) + h * e               # bspmm.FFF epilogue(add scl)
                w1, b1 = P[p + 'mlp.lin1.weight'], P[p + 'mlp.lin1.bias']
                w2, b2 = P[p + 'mlp.lin2.weight'], P[p + 'mlp.lin2.bias']
                if form == 'fp32':
                    u = relu(bn_affine(linear_ff(z, w1, b1, exact), P, p + 'mlp.bn.'))
                    h = relu(linear_ff(u, w2, b2, exact))
                    continue
                u = bn_affine(bin_linear(z, w1, b1), P, p + 'mlp.bn.')
                o = bin_linear(u, w2, b2)
                h = relu(o) if last else (bits(o) if form == 'bin' else o)
            g = readout(h, ds.ptr, READOUT['gin'], exact)
        else:
            A = ds.graph(True, 'sym')
            h = x0
            for k in range(1, layers + 1):
                w = P['conv%d.weight' % k]
                last = k == layers
                if form == 'fp32':
                    h = relu(spmm_w(A, bmm_ff(h, w, exact), exact) + P['conv%d.bias' % k])
                elif form == 'full':
                    h = A.spmm(bin_linear(h, w, P['conv%d.bias' % k]), exact)
                    h = relu(h) if last else h
                elif k == 1:
                    Ab = ds.graph(True, 'none')
                    t = fb_folded_bits(X, w, P['bn.running_mean'], P['bn.running_var'])
                    h = bits(Ab.spmm_bits(t))                  # bspmm.BBB
                elif not last:
                    h = bits(Ab.spmm_bits(bits(bmm_bb(h, w))))  # bmm.BBB, bspmm.BBB
                else:
                    s = scl(bmm_bb(h, w), None, wscale(w))      # bmm.BBF * m
                    h = relu(A.spmm(s, exact) + P['conv%d.bias' % k])
            g = readout(h, ds.ptr, READOUT['gcn'], exact)
        c = relu(linear_ff_graph(g, P['lin1.weight'], P['lin1.bias'], exact))
        return log_softmax(linear_ff_graph(c, P['lin2.weight'], P['lin2.bias'], exact))
