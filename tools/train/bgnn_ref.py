"""bgnn_ref.py - datasets, graphs and the exact bgnn inference semantics in PyTorch.

Everything here follows docs/semantics.md:

* bin(x): bit = !signbit(x)  (``~torch.signbit``), +1 / -1.
* +-1 products and +-1 aggregations over an unweighted (norm none/mean) pattern are integer
  sums; they are computed as float32 sums of +-1 values, which are exact in any order
  (|sum| < 2^24), so every binary decision that follows them is exact.
* Float sums that feed a binary decision (bmm.FB*, bspmm.F** before a bin) are computed in
  the default pipeline's recorded orders (docs/semantics.md section 2: sequential, split-k
  for bmm.FB* with K > 256, lanes(32) for the float64 row sums over > 32 columns) when
  ``exact=True`` (slower; used for export, reported accuracy and parity), else with the
  usual fast kernels (used during training).
* Factor vectors r, c and the Bi-GCN scales alpha, m are computed in float64 and rounded
  once to float32; scl is fl(fl(t * r) * c).

This module needs only numpy and torch (no torch_geometric).
"""
import os
import warnings

import numpy as np
import torch

warnings.filterwarnings('ignore', message='Sparse invariant checks')

F32 = torch.float32
EPS_BN = float(np.float32(1e-5))
EPS_STD = float(np.float32(1e-4))   # bgnn widens the float32 attribute to double


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------

def default_data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, '..', '..', '..', 'shared', 'data'), '/work/shared/data'):
        if os.path.isdir(cand):
            return os.path.normpath(cand)
    return '/work/shared/data'


def read_mtx(path):
    """Matrix Market coordinate pattern -> (N, rows, cols) 0-based int64 arrays."""
    with open(path) as f:
        lines = [ln for ln in f if not ln.startswith('%')]
    n, n2, nnz = (int(v) for v in lines[0].split())
    assert n == n2, path
    if nnz:
        ij = np.array([ln.split()[:2] for ln in lines[1:1 + nnz]], dtype=np.int64) - 1
    else:
        ij = np.zeros((0, 2), np.int64)
    return n, ij[:, 0], ij[:, 1]


class Dataset:
    def __init__(self, data_dir, name):
        d = os.path.join(data_dir, name)
        self.name = name
        fp = os.path.join(d, 'features.npy')
        if os.path.exists(fp):
            self.x = np.load(fp).astype(np.float32)
        else:   # a packed 0/1 copy made by pack_data.py (to carry to another machine)
            z = np.load(os.path.join(d, 'features_bits.npz'))
            shape = tuple(int(v) for v in z['shape'])
            self.x = np.unpackbits(z['bits'], axis=1, count=shape[1]).astype(np.float32)
        self.y = np.load(os.path.join(d, 'labels.npy')).astype(np.int64)
        self.train_idx = np.load(os.path.join(d, 'train_idx.npy')).astype(np.int64)
        self.val_idx = np.load(os.path.join(d, 'val_idx.npy')).astype(np.int64)
        self.test_idx = np.load(os.path.join(d, 'test_idx.npy')).astype(np.int64)
        self.n, self.erow, self.ecol = read_mtx(os.path.join(d, 'graph.mtx'))
        assert self.n == self.x.shape[0]
        self.num_features = self.x.shape[1]
        self.num_classes = int(self.y.max()) + 1
        self._graphs = {}

    def graph(self, self_loops, norm):
        key = (bool(self_loops), norm)
        if key not in self._graphs:
            self._graphs[key] = Graph(self.n, self.erow, self.ecol, self_loops, norm)
        return self._graphs[key]


class Graph:
    """bgnn's `adjacency(self_loops, norm)`: CSR pattern (columns ascending) + factors r, c."""

    def __init__(self, n, erow, ecol, self_loops, norm):
        assert norm in ('none', 'mean', 'sym')
        rows, cols = erow, ecol
        if self_loops:
            rows = np.concatenate([rows, np.arange(n, dtype=np.int64)])
            cols = np.concatenate([cols, np.arange(n, dtype=np.int64)])
        key = np.unique(rows * n + cols)          # sorted, duplicates merged (no doubled loop)
        rows, cols = key // n, key % n
        self.n = n
        self.rows, self.cols = rows, cols
        deg = np.bincount(rows, minlength=n).astype(np.int64)
        self.rowptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        self.deg = deg
        d = deg.astype(np.float64)
        nz = d > 0
        r = np.zeros(n, np.float64)
        c = np.zeros(n, np.float64)
        if norm == 'none':
            r[:] = 1.0
            c[:] = 1.0
        elif norm == 'mean':
            r[nz] = 1.0 / d[nz]
            c[:] = 1.0
        else:
            r[nz] = 1.0 / np.sqrt(d[nz])
            c[nz] = 1.0 / np.sqrt(d[nz])
        self.norm = norm
        self._dev = {}
        self.r = torch.from_numpy(r.astype(np.float32))
        self.c = torch.from_numpy(c.astype(np.float32))
        idx = torch.from_numpy(np.stack([rows, cols]))
        self.P = torch.sparse_coo_tensor(idx, torch.ones(len(rows), dtype=F32), (n, n)).coalesce()
        # degree-sorted schedule for the sequential (exact-order) sum
        order = np.argsort(-deg, kind='stable')
        self._seq = []
        for k in range(int(deg.max()) if n else 0):
            cnt = int((deg > k).sum())
            nodes = order[:cnt]
            self._seq.append((torch.from_numpy(nodes),
                              torch.from_numpy(cols[self.rowptr[nodes] + k])))

    def _on(self, device):
        """(P, r, c) on a device (training may run on a GPU; exact inference runs on the CPU)."""
        key = str(device)
        if key not in self._dev:
            self._dev[key] = (self.P.to(device), self.r.to(device), self.c.to(device))
        return self._dev[key]

    def sum_pattern(self, t, exact=False):
        """s_i = sum_{j in row i} t_j; exact=True: sequential float32 in column order."""
        if not exact:
            return torch.sparse.mm(self._on(t.device)[0], t)
        out = torch.zeros_like(t)
        for nodes, src in self._seq:
            out[nodes] = out[nodes] + t[src]
        return out

    def spmm(self, x, exact=False):
        """bspmm with a float activation: y_i = fl(r_i * sum_j fl(c_j * x_j))."""
        _, r, c = self._on(x.device)
        t = x * c[:, None]
        return self.sum_pattern(t, exact) * r[:, None]

    def spmm_bits(self, bits):
        """bspmm with a B activation over norm none/mean (c = 1): exact integer sums."""
        assert self.norm in ('none', 'mean')
        P, r, _ = self._on(bits.device)
        s = torch.sparse.mm(P, pm(bits))           # integers, exact in float32
        return s * r[:, None]


# ---------------------------------------------------------------------------------------
# ops of docs/semantics.md section 4 (inference, float32 / exact where it decides a bit)
# ---------------------------------------------------------------------------------------

def bits(x):
    return ~torch.signbit(x)


def pm(b):
    return b.to(F32) * 2.0 - 1.0


ROW_LANES = 32   # compiler/passes/fp_order.c: row sums over more columns run in lanes(32)


def row_sum(a, lanes=None):
    """Float64 row sums of a [R, C] float64 array in bgnn's recorded order (docs/semantics.md,
    section 2): lanes(32) when C > 32 (the default pipeline's absmean, standardize and
    bin.center), else sequential; lanes=0 forces sequential (--fp-strict).  lanes(L): lane l
    sums columns l, l + L, ... in order from +0, then p[i] = p[i] + p[i + h], h = L/2 .. 1."""
    r, c = a.shape
    if lanes is None:
        lanes = ROW_LANES if c > ROW_LANES else 0
    if c == 0:
        return np.zeros(r)
    if not lanes:
        return np.cumsum(a, axis=1)[:, -1]
    pad = (-c) % lanes
    p = np.concatenate([a, np.zeros((r, pad))], axis=1).reshape(r, -1, lanes)
    p = np.cumsum(p, axis=1)[:, -1, :]          # lane l: its columns in order (+0 pads at the end)
    h = lanes // 2
    while h >= 1:
        p = p[:, :h] + p[:, h:2 * h]
        h //= 2
    return p[:, 0]


def absmean(x, lanes=None):
    """alpha_r = fl32(sum_c |x[r,c]| (float64, in bgnn's row-sum order) / C)."""
    a = np.abs(x.detach().numpy().astype(np.float64))
    s = row_sum(a, lanes)
    return torch.from_numpy((s / a.shape[1]).astype(np.float32))


def wscale(w):
    """Bi-GCN's m_o for a stored PyTorch weight [out, in]: mean over in, float64, sequential
    (the loader computes it, not an absmean instruction)."""
    return absmean(w, lanes=0)


def bmm_bb(xbits, w):
    """+-1 x +-1 dot products, w stored [out, in]; exact integers."""
    return pm(xbits) @ pm(bits(w)).t()


SPLIT_CHUNK = 256   # compiler/passes/fp_order.c: bmm.FB* with K > 256 runs in split-k chunks of 256


def bmm_fb(x, w, exact=False, features=False):
    """acc += (bit ? x : -x), float32 in bgnn's recorded order when exact: split-k (chunks of
    SPLIT_CHUNK k, each from +0, folded left to right) when K > SPLIT_CHUNK, else sequential;
    features=True (a product of the model's input features, seq in bgnn) is always sequential."""
    wpm = pm(bits(w))                       # [out, in]
    if not exact:
        return x @ wpm.t()
    wb = bits(w).t().contiguous()           # [in, out]
    k_all = x.shape[1]
    chunk = k_all if features or k_all <= SPLIT_CHUNK else SPLIT_CHUNK
    tot = None
    for k0 in range(0, max(k_all, 1), chunk):
        acc = torch.zeros(x.shape[0], w.shape[0], dtype=F32)
        for k in range(k0, min(k_all, k0 + chunk)):
            xk = x[:, k:k + 1]
            acc = acc + torch.where(wb[k][None, :], xk, -xk)
        tot = acc if tot is None else tot + acc
    return tot


def bmm_ff(x, w, exact=False):
    """acc += fl(x * W), w stored [out, in]."""
    if not exact:
        return x @ w.t()
    wt = w.t().contiguous()
    acc = torch.zeros(x.shape[0], w.shape[0], dtype=F32)
    for k in range(x.shape[1]):
        acc = acc + x[:, k:k + 1] * wt[k][None, :]
    return acc


def scl(t, rows=None, cols=None):
    if rows is not None:
        t = t * rows[:, None]
    if cols is not None:
        t = t * cols[None, :]
    return t


def bin_linear(x, w, b=None):
    """linear(x, W[, b]) {mm: BBF, bin: absmean}: alpha_i m_o (K - 2 popc) + b_o."""
    t = scl(bmm_bb(bits(x), w), absmean(x), wscale(w))
    return t + b if b is not None else t


def bn_inv(var, eps=EPS_BN):
    """fl(1 / fl(sqrt(fl(var + eps)))), with numpy's correctly rounded sqrt: torch's CPU sqrt
    is sometimes off by an ulp (torch 2.15)."""
    v = var.detach().cpu().numpy().astype(np.float32)
    return torch.from_numpy(np.float32(1.0) / np.sqrt(v + np.float32(eps)))


def batchnorm(x, mean, var, eps=EPS_BN):
    return (x - mean) * bn_inv(var, eps)


def standardize(x, eps=EPS_STD):
    xd = x.detach().numpy().astype(np.float64)
    c = xd.shape[1]
    mu = row_sum(xd)[:, None] / c
    d = xd - mu
    ss = row_sum(d * d)[:, None]
    sd = np.sqrt(ss / (c - 1)) if c > 1 else np.zeros_like(ss)
    return torch.from_numpy((d / (sd + eps)).astype(np.float32))


def log_softmax(x):
    xd = x.to(torch.float64)
    m = x.max(dim=1, keepdim=True).values.to(torch.float64)
    s = torch.exp(xd - m).sum(dim=1, keepdim=True)
    return (xd - m - torch.log(s)).to(F32)


def relu(x):
    return torch.where(x > 0, x, torch.zeros_like(x))


# ---------------------------------------------------------------------------------------
# the example models (examples/*.bgnn) as bgnn computes them, from exported tensors
# ---------------------------------------------------------------------------------------

def ref_forward(model, ds, P, exact=True):
    """P: dict name -> float32 torch tensor (the safetensors contents). Returns logits."""
    X = torch.from_numpy(ds.x)
    with torch.no_grad():
        if model == 'gcn_fp32':
            A = ds.graph(True, 'sym')
            h = A.spmm(bmm_ff(X, P['conv1.weight'], exact), exact) + P['conv1.bias']
            hr = relu(h)
            y = A.spmm(bmm_ff(hr, P['conv2.weight'], exact), exact) + P['conv2.bias']
        elif model == 'gcn_full':
            A = ds.graph(True, 'sym')
            x = batchnorm(X, P['bn.running_mean'], P['bn.running_var'])
            h1 = A.spmm(bin_linear(x, P['conv1.weight'], P['conv1.bias']), exact)
            y = A.spmm(bin_linear(h1, P['conv2.weight'], P['conv2.bias']), exact)
        elif model == 'gcn_bin':
            A = ds.graph(True, 'none')
            Ah = ds.graph(True, 'sym')
            x = batchnorm(X, P['bn.running_mean'], P['bn.running_var'])
            t1 = bits(bmm_fb(x, P['conv1.weight'], exact, features=True))   # bmm.FBB of the features
            h1 = bits(A.spmm_bits(t1))                                # bspmm.BBB
            s2 = scl(bmm_bb(h1, P['conv2.weight']), None, wscale(P['conv2.weight']))
            y = Ah.spmm(s2, exact) + P['conv2.bias']
        elif model == 'sage_full':
            A = ds.graph(False, 'mean')
            h = standardize(X)
            for i in (1, 2):
                a = A.spmm(h, exact)                 # bspmm.FBF, mean
                u = bin_linear(a, P['conv%d.lin_l.weight' % i], P['conv%d.lin_l.bias' % i])
                v = bin_linear(h, P['conv%d.lin_r.weight' % i])
                h = u + v
                if i == 1:
                    h = standardize(relu(h))     # hr = relu(h); hs = standardize(hr) {eps: 1e-4}
            y = h
        elif model == 'sage_bin':
            A = ds.graph(False, 'mean')
            h = standardize(X)
            for i in (1, 2):
                t = bits(bmm_fb(h, P['conv%d.lin_l.weight' % i], exact))       # bmm.FBB
                a = A.spmm_bits(t)                                         # bspmm.BBF, mean
                v = bin_linear(h, P['conv%d.lin_r.weight' % i], P['conv%d.lin_r.bias' % i])
                h = a + v
                if i == 1:
                    h = standardize(relu(h))
            y = h
        elif model == 'indgcn_full':
            A = ds.graph(False, 'mean')
            h = standardize(X)
            for i in (1, 2):
                h = bin_linear(A.spmm(h, exact), P['conv%d.weight' % i], P['conv%d.bias' % i])
                if i == 1:
                    h = standardize(relu(h))
            y = h
        elif model == 'indgcn_bin':
            A = ds.graph(False, 'mean')
            x = standardize(X)
            t1 = bits(bmm_fb(x, P['conv1.weight'], exact))                 # bmm.FBB
            h1 = bits(A.spmm_bits(t1))                                     # bspmm.BBB
            s2 = scl(bmm_bb(h1, P['conv2.weight']), None, wscale(P['conv2.weight']))   # bmm.BBF
            y = A.spmm(s2, exact) + P['conv2.bias']                        # bspmm.FBF, + b2
        elif model in ('saint_full', 'saint_bin'):
            A = ds.graph(False, 'sym' if model == 'saint_full' else 'mean')
            x = standardize(X)
            h = x
            rs = []
            for i in (1, 2):
                w = P['conv%d.lin_rel.weight' % i]
                if model == 'saint_full':
                    a = A.spmm(bin_linear(h, w), exact)
                else:                                # bmm.FBB, then bspmm.BBF (mean of +-1)
                    a = A.spmm_bits(bits(bmm_fb(h, w, exact)))
                v = bin_linear(h, P['conv%d.lin_root.weight' % i], P['conv%d.lin_root.bias' % i])
                h = a + v                        # no relu: layer 2 binarises h1 itself
                rs.append(h)
            c = torch.cat(rs, dim=1)
            y = bmm_ff(c, P['lin.weight'], exact) + P['lin.bias']
        else:
            raise ValueError(model)
        return log_softmax(y)
