#!/usr/bin/env python3
"""models_bench.py - end-to-end GNN inference: bgnn against PyG and a PyTorch simulation.

One run on one GPU measures, per dataset and model, the test accuracy, the median latency of
one full-graph inference (CUDA events, warm-up first, inputs already on the GPU) and the peak
GPU memory of the GCN family (below) and of the inductive families (after it).

GCN:

  PyG eager            GCNConv x 2 (torch_geometric), edge_index, normalisation each call
                       (GCNConv's default); the gcn_fp32 weights
  PyG eager, cached    the same with GCNConv(cached=True): normalised once, at the warm-up
  PyG eager, CSR       GCNConv(cached=True) over a torch sparse CSR adj_t (normalised once;
                       cuSPARSE SpMM): PyG's memory-lean full-graph path
  PyG CUDA graph       GCNConv(cached=True), edge_index, the forward captured with
                       torch.cuda.graphs and replayed
  PyTorch sim [graph]  the binary models (gcn_full = Bi-GCN, gcn_bin = BitGNN "bin") simulated
                       in float32 PyTorch as bgnn_ref.py computes them (+-1 as floats, dense
                       matmul, torch sparse CSR SpMM), eager and in a CUDA graph
  bgnn                 examples/gcn_{full,bin,fp32}.bgnn through the C API (bench/bgnn_time.c:
                       JIT, bgnn_session_time)

Inductive families F = sage (GraphSAGE), indgcn (indGCN), saint (GraphSAINT-style), each as
(model names as in the table):
  F_fp32  PyG eager / PyG eager, CSR / PyG CUDA graph: the float model in PyG (SAGEConv mean
          aggregation; indGCN = SAGEConv(root_weight=False); GraphConv over D^-1/2 A D^-1/2 with a
          linear layer over concat(h1, h2)), ReLU between the layers, over edge_index, over a
          torch sparse CSR adj_t (cuSPARSE), and edge_index captured in a CUDA graph.  On Cora it
          runs the latent float weights of the trained F_full (no float model is trained), so
          its accuracy is not reported: latency and memory only.
  F_full  Bi-GCN's binary form (examples/F_full.bgnn): PyTorch sim [, CUDA graph], bgnn
  F_bin   the BitGNN "bin" form (examples/F_bin.bgnn): PyTorch sim [, CUDA graph], bgnn
Speed-up and memory ratios are against the PyG eager row of the same family (its CSR row where
PyG eager failed).

Datasets: cora (trained weights, accuracy), pubmed (its graph, random 500 features, random
weights: latency and memory only), reddit (the R-MAT graph of bench/rmat.h with 232,965 nodes
and ~114.6M directed edges, random 602 features, hidden 128, 41 classes, random weights).

Memory: for PyTorch systems torch.cuda.max_memory_allocated() over building the inputs on the
GPU (graph, features, weights) and the runs, from an empty allocator; for bgnn the drop of the
driver's free memory over prepare and the runs (bench/bgnn_time.c).  Both count graph,
features, weights and intermediates; neither counts the CUDA context or code.

The pubmed and reddit versions of the inductive models are written to --tmp from
examples/F_{full,bin}.bgnn with only the widths changed (as bench/gcn_*_{pubmed,reddit}.bgnn).

Usage (GPU machine, from the repo root; bench/run_models.sh builds bgnn_time first):
  python3 bench/models_bench.py --bgnn-time build-models/bgnn_time --out $OUT [--families gcn,sage]
Writes models_results.json, models_table.md, performance_models.png (GCN) and
performance_models_inductive.png (one column per inductive family) to --out.  --report A.json [B.json ...] merges the
results of several runs (e.g. --families split over two calls) into one table.
Without a GPU (--cpu-smoke) it runs every path once on the CPU, for testing.
"""
import argparse
import datetime
import gc
import json
import math
import os
import struct
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as Fn

warnings.filterwarnings('ignore')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DATASETS = {
    # name: (features, hidden, classes, trained)
    'cora': (1433, 64, 7, True),
    'pubmed': (500, 64, 3, False),
    'reddit': (602, 128, 41, False),
}
FAMILIES = ('gcn', 'sage', 'indgcn', 'saint')
INDUCTIVE = ('sage', 'indgcn', 'saint')
GCN_SYSTEMS = [  # (system, model) in table order
    ('PyG eager', 'gcn_fp32'),
    ('PyG eager, cached', 'gcn_fp32'),
    ('PyG eager, CSR', 'gcn_fp32'),
    ('PyG CUDA graph', 'gcn_fp32'),
    ('bgnn', 'gcn_fp32'),
    ('PyTorch sim', 'gcn_full'),
    ('PyTorch sim, CUDA graph', 'gcn_full'),
    ('bgnn', 'gcn_full'),
    ('PyTorch sim', 'gcn_bin'),
    ('PyTorch sim, CUDA graph', 'gcn_bin'),
    ('bgnn', 'gcn_bin'),
]


def family_systems(f):
    if f == 'gcn':
        return list(GCN_SYSTEMS)
    return [('PyG eager', f + '_fp32'), ('PyG eager, CSR', f + '_fp32'), ('PyG CUDA graph', f + '_fp32'),
            ('PyTorch sim', f + '_full'), ('PyTorch sim, CUDA graph', f + '_full'), ('bgnn', f + '_full'),
            ('PyTorch sim', f + '_bin'), ('PyTorch sim, CUDA graph', f + '_bin'), ('bgnn', f + '_bin')]


SYSTEMS = [sm for f in FAMILIES for sm in family_systems(f)]
MODELS = sorted({m for _, m in SYSTEMS})


def family(model):
    return model.rsplit('_', 1)[0]


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------

def read_mtx(path):
    """Matrix Market pattern -> (n, rows, cols) 0-based int64 (as bgnn reads it)."""
    with open(path) as f:
        line = f.readline()
        while line.startswith('%'):
            line = f.readline()
        n, n2, nnz = (int(v) for v in line.split())
        ij = np.loadtxt(f, dtype=np.int64, usecols=(0, 1), max_rows=nnz, ndmin=2) - 1
    assert n == n2 and len(ij) == nnz, path
    return n, ij[:, 0], ij[:, 1]


def read_csr(path):
    with open(path, 'rb') as f:
        n, nnz = struct.unpack('<qq', f.read(16))
        rowptr = np.fromfile(f, dtype=np.int64, count=n + 1)
        col = np.fromfile(f, dtype=np.int32, count=nnz)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(rowptr))
    return n, rows, col.astype(np.int64)


def read_safetensors(path):
    with open(path, 'rb') as f:
        hl = struct.unpack('<Q', f.read(8))[0]
        hdr = json.loads(f.read(hl))
        data = f.read()
    out = {}
    for k, v in hdr.items():
        if k == '__metadata__':
            continue
        assert v['dtype'] == 'F32', (k, v['dtype'])
        a, b = v['data_offsets']
        out[k] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).reshape(v['shape']).copy())
    return out


def random_weights(F, H, C, seed=1):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    return {'bn.running_mean': r(F) * 0.1, 'bn.running_var': 0.5 + r(F).abs(),
            'conv1.weight': r(H, F) / math.sqrt(F), 'conv1.bias': r(H) * 0.1,
            'conv2.weight': r(C, H) / math.sqrt(H), 'conv2.bias': r(C) * 0.1}


from scaled_models import scaled_model  # noqa: E402  (bench/, beside this script)


def param_specs(path):
    """[(tensor name, stored shape)] of a .bgnn file's params ("name".T: stored transposed)."""
    import re
    specs = []
    for line in open(path):
        mo = re.match(r'\s*param\s+\w+\s*:\s*\w+\[([^\]]*)\]\s*=\s*"([^"]+)"(\.T)?', line)
        if mo:
            dims = [int(t) for t in mo.group(1).split(',')]
            specs.append((mo.group(2), dims[::-1] if mo.group(3) else dims))
    return specs


def random_weights_for(path, seed=1):
    """Random tensors for every param of a .bgnn file: weights normal / sqrt(fan in) (PyTorch
    layout [out, in]), biases normal * 0.1."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in param_specs(path):
        t = torch.randn(*shape, generator=g)
        out[name] = t / math.sqrt(shape[-1]) if len(shape) == 2 else t * 0.1
    return out


class Data:
    """Graph (no self loops added; as stored), host features, labels, weights per model."""

    def __init__(self, name, args, models=None):
        self.name = name
        self.tmp = args.tmp
        models = models or MODELS
        F, H, C, trained = DATASETS[name]
        self.F, self.H, self.C, self.trained = F, H, C, trained
        t0 = time.time()
        if name == 'reddit':
            self.csr = os.path.join(args.tmp, 'rmat_%d_%d.csr' % (args.rmat_nodes, args.rmat_edges))
            if not os.path.exists(self.csr):
                r = run_bgnn_time(args, ['--gen-rmat', self.csr, '--nodes', str(args.rmat_nodes),
                                         '--edges', str(args.rmat_edges)], timeout=300)
                log('  rmat:', r)
                self.gen = r
            self.n, self.rows, self.cols = read_csr(self.csr)
            self.dir = None
        else:
            self.dir = os.path.join(args.data, name)
            self.n, self.rows, self.cols = read_mtx(os.path.join(self.dir, 'graph.mtx'))
        # the float PyG models of the inductive families run the weights of their _full model
        wname = lambda m: m[:-len('_fp32')] + '_full' if m.endswith('_fp32') and m != 'gcn_fp32' else m
        if trained:
            self.x = torch.from_numpy(np.load(os.path.join(self.dir, 'features.npy')).astype(np.float32))
            self.y = torch.from_numpy(np.load(os.path.join(self.dir, 'labels.npy')).astype(np.int64))
            self.test_idx = torch.from_numpy(np.load(os.path.join(self.dir, 'test_idx.npy')).astype(np.int64))
            self.w = {m: read_safetensors(os.path.join(ROOT, 'examples', 'weights', '%s_%s.safetensors' % (wname(m), name)))
                      for m in models}
        else:
            g = torch.Generator().manual_seed(7)
            self.x = torch.rand(self.n, F, generator=g) * 2 - 1
            self.y = self.test_idx = None
            w = random_weights(F, H, C)
            self.w = {'gcn_full': w, 'gcn_fp32': w,
                      'gcn_bin': {k: v for k, v in w.items() if k != 'conv1.bias'}}
            for m in models:
                if family(m) != 'gcn':
                    self.w[m] = random_weights_for(self.bgnn_model(wname(m)))
        self.edges = len(self.rows)
        log('  %s: %d nodes, %d stored edges, %d features (%.1f s)' % (name, self.n, self.edges, F, time.time() - t0))

    def bgnn_model(self, m):
        if self.name == 'cora':
            return os.path.join(ROOT, 'examples', m + '.bgnn')
        if family(m) == 'gcn':
            return os.path.join(ROOT, 'bench', '%s_%s.bgnn' % (m, self.name))
        return scaled_model(m, self.name, self.F, self.H, self.C, self.tmp)


def adjacency(d, dev, norm, self_loops=True):
    """bgnn's adjacency(self_loops, norm) as a torch sparse CSR matrix on dev."""
    n = d.n
    rows = torch.from_numpy(d.rows).to(dev)
    cols = torch.from_numpy(d.cols).to(dev)
    key = rows * n + cols
    if self_loops:
        ar = torch.arange(n, device=dev, dtype=torch.int64)
        key = torch.cat([key, ar * n + ar])
    key = torch.unique(key)   # sorted, merged
    rows, cols = key // n, key % n
    del key
    deg = torch.bincount(rows, minlength=n)
    rowptr = torch.zeros(n + 1, dtype=torch.int64, device=dev)
    rowptr[1:] = torch.cumsum(deg, 0)
    if norm == 'none':
        val = torch.ones(len(cols), dtype=torch.float32, device=dev)
    elif norm == 'mean':
        val = (1.0 / deg.to(torch.float64))[rows].to(torch.float32)   # rows hold >= 1 entry
    else:
        r = deg.to(torch.float64).rsqrt()
        val = (r[rows] * r[cols]).to(torch.float32)
    del rows
    return torch.sparse_csr_tensor(rowptr, cols, val, (n, n))


# ---------------------------------------------------------------------------------------
# the PyTorch systems
# ---------------------------------------------------------------------------------------

def sgn(x):
    return torch.where(torch.signbit(x), -1.0, 1.0)


def spmm(A, x):
    return torch.sparse.mm(A, x)


def build_sim(model, d, dev):
    """Bi-GCN / BitGNN-bin inference in float PyTorch (bgnn_ref.ref_forward, fast kernels)."""
    P = {k: v.to(dev) for k, v in d.w[model].items()}
    inv = 1.0 / torch.sqrt(P['bn.running_var'] + 1e-5)
    mu = P['bn.running_mean']
    S1 = sgn(P['conv1.weight']).t().contiguous()
    S2 = sgn(P['conv2.weight']).t().contiguous()
    m1 = P['conv1.weight'].abs().mean(1)
    m2 = P['conv2.weight'].abs().mean(1)
    b2 = P['conv2.bias']
    Ah = adjacency(d, dev, 'sym')
    if model == 'gcn_full':
        b1 = P['conv1.bias']

        def fwd(X):
            x = (X - mu) * inv
            for S, m, b in ((S1, m1, b1), (S2, m2, b2)):
                alpha = x.abs().mean(1, keepdim=True)
                x = spmm(Ah, (sgn(x) @ S) * alpha * m + b)
            return torch.log_softmax(x, 1)
        return fwd, (Ah,)
    A = adjacency(d, dev, 'none')

    def fwd(X):
        x = (X - mu) * inv
        u = sgn(x @ S1)                    # bmm.FBB
        h = sgn(spmm(A, u))                # bspmm.BBB over A + I
        s2 = (h @ S2) * m2                 # bmm.BBF
        return torch.log_softmax(spmm(Ah, s2) + b2, 1)   # bspmm.FBF + b
    return fwd, (A, Ah)


def standardize(x, eps=1e-4):
    """Per row (x - mean) / (unbiased std + eps), as bgnn's standardize (float32 here)."""
    mu = x.mean(1, keepdim=True)
    return (x - mu) / (x.std(1, keepdim=True) + eps)


def build_sim_inductive(model, d, dev):
    """The inductive models (examples/{sage,indgcn,saint}_{full,bin}.bgnn) in float PyTorch, as
    tools/train/bgnn_ref.ref_forward computes them, with fast kernels: +-1 values as float32,
    dense matmuls, torch sparse CSR SpMM."""
    P = {k: v.to(dev) for k, v in d.w[model].items()}
    fam, form = model.rsplit('_', 1)
    S = {k[:-len('.weight')]: sgn(v).t().contiguous() for k, v in P.items()
         if k.endswith('.weight') and k != 'lin.weight'}
    M = {k[:-len('.weight')]: v.abs().mean(1) for k, v in P.items()
         if k.endswith('.weight') and k != 'lin.weight'}
    B = lambda name: P.get(name + '.bias', 0.0)

    def binlin(x, name, bias=True):        # linear {mm: BBF, bin: absmean}: alpha m (+-1 . +-1) + b
        t = (sgn(x) @ S[name]) * x.abs().mean(1, keepdim=True) * M[name]
        return t + B(name) if bias else t

    def fbb(x, name):                      # linear {mm: FBB}: bin(x . sign(W))
        return sgn(x @ S[name])

    keep = []        # only the adjacencies this model uses (their memory is part of the peak)
    if fam != 'saint' and (form == 'full' or fam == 'indgcn'):   # float activations, mean
        Am = adjacency(d, dev, 'mean', self_loops=False)
        keep.append(Am)
    if form == 'bin':   # +-1 activations: the integer sum over the 0/1 pattern, then * 1/d_i (exact, as bgnn)
        A1 = adjacency(d, dev, 'none', self_loops=False)
        deg = (A1.crow_indices()[1:] - A1.crow_indices()[:-1]).to(torch.float64)
        rinv = torch.where(deg > 0, 1.0 / deg, torch.zeros_like(deg)).to(torch.float32)[:, None]
        keep += [A1, rinv]
        bmean = lambda t: spmm(A1, t) * rinv         # bspmm.BBF, norm mean
    if fam == 'sage':
        def fwd(X):
            h = standardize(X)
            for i in (1, 2):
                if form == 'full':
                    h = binlin(spmm(Am, h), 'conv%d.lin_l' % i) + binlin(h, 'conv%d.lin_r' % i, False)
                else:
                    h = bmean(fbb(h, 'conv%d.lin_l' % i)) + binlin(h, 'conv%d.lin_r' % i)
                if i == 1:
                    h = standardize(torch.relu(h))
            return torch.log_softmax(h, 1)
    elif fam == 'indgcn':
        def fwd(X):
            h = standardize(X)
            if form == 'full':
                h = binlin(spmm(Am, h), 'conv1')
                h = binlin(spmm(Am, standardize(torch.relu(h))), 'conv2')
            else:
                h = sgn(spmm(A1, fbb(h, 'conv1')))                       # bmm.FBB, bspmm.BBB
                h = spmm(Am, (h @ S['conv2']) * M['conv2']) + B('conv2')  # bmm.BBF, bspmm.FBF, + b
            return torch.log_softmax(h, 1)
    else:
        if form == 'full':
            As = adjacency(d, dev, 'sym', self_loops=False)
            keep.append(As)
            agg = lambda h, name: spmm(As, binlin(h, name, False))        # bmm.BBF, bspmm.FBF (sym)
        else:
            agg = lambda h, name: bmean(fbb(h, name))                      # bmm.FBB, bspmm.BBF (mean)
        Wo, bo = P['lin.weight'].t().contiguous(), P['lin.bias']

        def fwd(X):
            h = standardize(X)
            hs = []
            for i in (1, 2):
                h = agg(h, 'conv%d.lin_rel' % i) + binlin(h, 'conv%d.lin_root' % i)
                hs.append(h)
            return torch.log_softmax(torch.cat(hs, 1) @ Wo + bo, 1)
    return fwd, keep


def build_pyg_inductive(system, model, d, dev):
    """The float model of an inductive family in PyG (SAGEConv / GraphConv), with the weights
    of d.w[model] (the latent floats of the trained _full model on Cora)."""
    from torch_geometric.nn import GraphConv, SAGEConv
    fam = family(model)
    P = d.w[model]

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if fam == 'saint':
                self.conv1 = GraphConv(d.F, d.H, aggr='add')
                self.conv2 = GraphConv(d.H, d.H, aggr='add')
                self.lin = torch.nn.Linear(2 * d.H, d.C)
            else:
                root = fam == 'sage'
                self.conv1 = SAGEConv(d.F, d.H, aggr='mean', root_weight=root)
                self.conv2 = SAGEConv(d.H, d.C, aggr='mean', root_weight=root)

        def forward(self, x, g, ew):
            if fam == 'saint':
                h1 = torch.relu(self.conv1(x, g, ew))
                h2 = torch.relu(self.conv2(h1, g, ew))
                return torch.log_softmax(self.lin(torch.cat([h1, h2], 1)), 1)
            h = torch.relu(self.conv1(x, g))
            return torch.log_softmax(self.conv2(h, g), 1)

    net = Net()
    with torch.no_grad():
        for i in (1, 2):
            conv = getattr(net, 'conv%d' % i)
            if fam == 'sage':
                conv.lin_l.weight.copy_(P['conv%d.lin_l.weight' % i])
                conv.lin_l.bias.copy_(P['conv%d.lin_l.bias' % i])
                conv.lin_r.weight.copy_(P['conv%d.lin_r.weight' % i])
            elif fam == 'indgcn':
                conv.lin_l.weight.copy_(P['conv%d.weight' % i])
                conv.lin_l.bias.copy_(P['conv%d.bias' % i])
            else:   # PyG's GraphConv has its bias on lin_rel, saint_full on lin_root: the same sum
                conv.lin_rel.weight.copy_(P['conv%d.lin_rel.weight' % i])
                conv.lin_rel.bias.copy_(P['conv%d.lin_root.bias' % i])
                conv.lin_root.weight.copy_(P['conv%d.lin_root.weight' % i])
        if fam == 'saint':
            net.lin.weight.copy_(P['lin.weight'])
            net.lin.bias.copy_(P['lin.bias'])
    net = net.to(dev).eval()
    ew = None
    if system == 'PyG eager, CSR':
        if fam == 'saint':     # D^-1/2 A D^-1/2 as the values of adj_t
            g = adjacency(d, dev, 'sym', self_loops=False)
        else:                  # the pattern; SAGEConv's mean divides by the row degree
            rows = torch.from_numpy(d.rows).to(dev)
            cols = torch.from_numpy(d.cols).to(dev)
            rowptr = torch.zeros(d.n + 1, dtype=torch.int64, device=dev)
            rowptr[1:] = torch.cumsum(torch.bincount(rows, minlength=d.n), 0)
            del rows
            g = torch.sparse_csr_tensor(rowptr, cols, torch.ones(len(cols), device=dev), (d.n, d.n))
    else:
        g = torch.stack([torch.from_numpy(d.cols), torch.from_numpy(d.rows)]).to(dev)  # j -> i
        if fam == 'saint':     # per-edge weights 1 / sqrt(d_i d_j) of the stored edges
            deg = torch.bincount(g[1], minlength=d.n).to(torch.float64)
            r = deg.rsqrt()
            ew = (r[g[0]] * r[g[1]]).to(torch.float32)
    return net, g, ew


def build_pyg(system, d, dev):
    from torch_geometric.nn import GCNConv
    cached = system != 'PyG eager'

    class GCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GCNConv(d.F, d.H, cached=cached)
            self.conv2 = GCNConv(d.H, d.C, cached=cached)

        def forward(self, x, ei):
            h = Fn.relu(self.conv1(x, ei))
            return torch.log_softmax(self.conv2(h, ei), 1)

    net = GCN()
    P = d.w['gcn_fp32']
    with torch.no_grad():
        for i in (1, 2):
            conv = getattr(net, 'conv%d' % i)
            conv.lin.weight.copy_(P['conv%d.weight' % i])
            conv.bias.copy_(P['conv%d.bias' % i])
    net = net.to(dev).eval()
    if system == 'PyG eager, CSR':
        rows = torch.from_numpy(d.rows).to(dev)
        cols = torch.from_numpy(d.cols).to(dev)
        rowptr = torch.zeros(d.n + 1, dtype=torch.int64, device=dev)
        rowptr[1:] = torch.cumsum(torch.bincount(rows, minlength=d.n), 0)
        del rows    # the stored graph has sorted rows (mtx: checked below; rmat: by construction)
        g = torch.sparse_csr_tensor(rowptr, cols, torch.ones(len(cols), device=dev), (d.n, d.n))
    else:
        g = torch.stack([torch.from_numpy(d.cols), torch.from_numpy(d.rows)]).to(dev)  # j -> i
    return net, g


def time_events(fn, repeat, warmup, dev):
    """Median ms of `repeat` runs, each between two CUDA events, after `warmup` runs."""
    for _ in range(warmup):
        fn()
    if dev.type != 'cuda':
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1e3)
        return float(np.median(ts))
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(repeat)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return float(np.median([a.elapsed_time(b) for a, b in ev]))


def capture(fn, dev):
    """fn captured into a CUDA graph (warm-up on a side stream first); returns (replay, out)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def accuracy(d, out):
    if d.y is None:
        return None
    pred = out.argmax(1).cpu()
    return float((pred[d.test_idx] == d.y[d.test_idx]).double().mean() * 100)


def run_torch(system, model, d, args, dev):
    cuda = dev.type == 'cuda'
    gc.collect()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    keep = []
    with torch.no_grad():
        X = d.x.to(dev)
        if system.startswith('PyG') and family(model) == 'gcn':
            net, g = build_pyg(system, d, dev)
            fn = lambda: net(X, g)
            keep = [net, g]
        elif system.startswith('PyG'):
            net, g, ew = build_pyg_inductive(system, model, d, dev)
            fn = lambda: net(X, g, ew)
            keep = [net, g, ew]
        else:
            fwd, keep = (build_sim if family(model) == 'gcn' else build_sim_inductive)(model, d, dev)
            fn = lambda: fwd(X)
        out = fn()                       # warm (also fills PyG's normalisation cache)
        graph = None
        if system.endswith('CUDA graph'):
            if not cuda:
                return {'error': 'no GPU'}
            graph, out = capture(fn, dev)
            fn = graph.replay
            fn()
        # the float PyG models of the inductive families run untrained-for-float weights
        acc = None if system.startswith('PyG') and family(model) != 'gcn' else accuracy(d, out)
        small = d.name != 'reddit'
        ms = time_events(fn, args.repeat if small else args.repeat_large,
                         args.warmup if small else 3, dev)
        if cuda:
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
        else:
            peak = None
    del fn, out, graph, keep, X
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return {'test_acc': acc, 'median_ms': ms, 'mem_bytes': peak}


# ---------------------------------------------------------------------------------------
# bgnn through bench/bgnn_time.c
# ---------------------------------------------------------------------------------------

def run_bgnn_time(args, argv, timeout):
    cmd = [args.bgnn_time] + argv
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    res = None
    for line in p.stdout.splitlines():
        if line.startswith('RESULT '):
            res = json.loads(line[7:])
    if p.returncode != 0 or res is None:
        err = (p.stderr.strip().splitlines() or ['exit %d' % p.returncode])
        return {'error': ' | '.join(err[-3:])[:300]}
    return res


def run_bgnn(model, d, args, dev):
    if dev.type == 'cuda':
        torch.cuda.empty_cache()
    small = d.name != 'reddit'
    argv = [d.bgnn_model(model), '--target', 'gpu' if dev.type == 'cuda' else 'cpu',
            '--repeat', str(args.repeat if small else args.repeat_large)]
    argv += ['--data', d.dir] if d.dir else ['--csr', d.csr]
    if d.trained:
        argv += ['--weights', os.path.join(ROOT, 'examples', 'weights', '%s_%s.safetensors' % (model, d.name))]
    else:
        argv += ['--features-random', str(d.F), '--random-weights', '1']
    r = run_bgnn_time(args, argv, timeout=120 if small else 150)
    if 'model' in r:
        r['bgnn_model'] = r.pop('model')
    if 'error' not in r:
        r['test_acc'] = r['test_acc'] if r.get('test_acc', -1) >= 0 else None
        if r.get('mem_bytes', -1) < 0:
            r['mem_bytes'] = None
    return r


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------

def fmt_ms(ms):
    if ms is None:
        return '-'
    return '%.0f us' % (ms * 1e3) if ms < 1 else '%.2f ms' % ms if ms < 100 else '%.0f ms' % ms


def fmt_mem(b):
    if b is None:
        return '-'
    return '%.1f MiB' % (b / 2**20) if b < 10 * 2**30 else '%.1f GiB' % (b / 2**30)


def table(results, header):
    lines = [header, '',
             '| dataset | model | system | test acc (%) | median latency | speed-up vs PyG eager | '
             'peak GPU memory | memory vs PyG eager |',
             '|---|---|---|---:|---:|---:|---:|---:|']
    for ds in DATASETS:
        rows = [r for r in results if r['dataset'] == ds]
        bases = {}   # family -> (PyG eager row of its float model, or its CSR row, note)
        for f in FAMILIES:
            fr = [r for r in rows if r['model'] == f + '_fp32' and r.get('median_ms')]
            b = next((r for r in fr if r['system'] == 'PyG eager'), None)
            bases[f] = (b, '') if b else (next((r for r in fr if r['system'] == 'PyG eager, CSR'), None), ' (vs CSR)')
        for r in rows:
            base, note = bases.get(family(r['model']), (None, ''))
            acc = '-' if r.get('test_acc') is None else '%.1f' % r['test_acc']
            if r.get('error'):
                lines.append('| %s | %s | %s | - | %s | - | - | - |' % (
                    ds, r['model'], r['system'], r['error'][:80].replace('|', '/')))
                continue
            sp = mr = '-'
            if base and r.get('median_ms'):
                sp = '%.2fx%s' % (base['median_ms'] / r['median_ms'], note)
            if base and base.get('mem_bytes') and r.get('mem_bytes'):
                mr = '%.2fx%s' % (r['mem_bytes'] / base['mem_bytes'], note)
            lines.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
                ds, r['model'], r['system'], acc, fmt_ms(r.get('median_ms')), sp,
                fmt_mem(r.get('mem_bytes')), mr))
    return '\n'.join(lines) + '\n'


def chart(results, path, title, graphs=None, panels=(('', GCN_SYSTEMS),)):
    """Bar chart: latency (top) and memory (bottom) per dataset, one column per panel
    (panel title, [(system, model)]); panels share colours by position."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        log('no matplotlib: no chart')
        return
    dss = [ds for ds in DATASETS if any(r['dataset'] == ds for r in results)]
    systems0 = panels[0][1]
    if systems0 == GCN_SYSTEMS:
        labels = ['%s %s' % (s, m) for s, m in systems0]
        colors = ['#4c72b0', '#5f86c0', '#7b9fd1', '#b3c9e8', '#1b7837', '#dd8452', '#f3c19d', '#5aae61',
                  '#c44e52', '#eba3a5', '#a6dba0']
    else:   # PyG eager / CSR / CUDA graph, sim full / graph, bgnn full, sim bin / graph, bgnn bin
        labels = ['%s %s' % (s, m.rsplit('_', 1)[1]) for s, m in systems0]
        colors = ['#4c72b0', '#7b9fd1', '#b3c9e8', '#dd8452', '#f3c19d', '#1b7837',
                  '#c44e52', '#eba3a5', '#5aae61']
    nc = len(panels)
    fig, axes = plt.subplots(2, nc, figsize=(12 if nc == 1 else 6 * nc, 8.5), squeeze=False)
    for col, (ptitle, systems) in enumerate(panels):
        w = 0.8 / len(systems)
        for ax, key, ylab in ((axes[0][col], 'median_ms', 'median latency (ms, log)'),
                              (axes[1][col], 'mem_bytes', 'peak GPU memory (MiB, log)')):
            for k, (s, m) in enumerate(systems):
                xs, ys = [], []
                for i, ds in enumerate(dss):
                    r = next((r for r in results if r['dataset'] == ds and r['system'] == s and r['model'] == m), None)
                    v = r.get(key) if r else None
                    if r and 'memory' in (r.get('error') or ''):
                        ax.text(i - 0.4 + w * (k + 0.5), 0.03, 'out of memory', rotation=90, ha='center',
                                va='bottom', fontsize=7, color='#444444', transform=ax.get_xaxis_transform())
                    if v:
                        xs.append(i - 0.4 + w * (k + 0.5))
                        ys.append(v if key == 'median_ms' else v / 2**20)
                ax.bar(xs, ys, w, label=labels[k], color=colors[k % len(colors)])
            ax.set_yscale('log')
            ax.set_xticks(range(len(dss)))
            sep = ', ' if nc == 1 else '\n'
            ax.set_xticklabels(['%s\n%s nodes%s%s edges' % (ds, format(graphs[ds]['nodes'], ','), sep,
                                                            format(graphs[ds]['edges'], ','))
                                if graphs and ds in graphs else ds for ds in dss], fontsize=8 if nc == 1 else 7)
            if col == 0:
                ax.set_ylabel(ylab)
            ax.grid(axis='y', which='both', alpha=0.3)
        if ptitle:
            axes[0][col].set_title(ptitle, fontsize=10)
    fig.suptitle(title, fontsize=10) if nc > 1 else axes[0][0].set_title(title, fontsize=10)
    from matplotlib.patches import Patch
    fig.legend([Patch(color=colors[k % len(colors)]) for k in range(len(labels))], labels,
               loc='lower center', ncol=4 if nc == 1 else 5, fontsize=8)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path, dpi=110)
    log('chart:', path)


def report(info, results, out):
    """Sorts results into table order, writes models_table.md and the chart, prints the table."""
    key = {sm: i for i, sm in enumerate(SYSTEMS)}
    results.sort(key=lambda r: (list(DATASETS).index(r['dataset']), key[(r['system'], r['model'])]))
    bdev = next((r['device'] for r in results if r.get('device')), '')
    header = ('GPU: **%s** (driver %s; bgnn: %s), torch %s, torch_geometric %s, %s. Median of %d runs '
              '(cora, pubmed) / %d runs (reddit) after warm-up, CUDA events, inputs on the GPU.'
              % (info['gpu'], info.get('driver') or '?', bdev or '?', info['torch'],
                 info['torch_geometric'], info['date'], info['repeat'], info['repeat_large']))
    md = table(results, header)
    with open(os.path.join(out, 'models_table.md'), 'w') as f:
        f.write(md)
    names = {'sage': 'GraphSAGE', 'indgcn': 'indGCN', 'saint': 'GraphSAINT-style'}
    if any(family(r['model']) == 'gcn' for r in results):
        chart(results, os.path.join(out, 'performance_models.png'),
              'End-to-end GCN inference: bgnn, PyG and a PyTorch simulation of the binary models (%s)'
              % info['gpu'], info.get('graphs'))
    panels = [(names[f], family_systems(f)) for f in INDUCTIVE if any(family(r['model']) == f for r in results)]
    if panels:
        chart(results, os.path.join(out, 'performance_models_inductive.png'),
              'End-to-end inference of the inductive models (full graph): bgnn, PyG (float) and a '
              'PyTorch simulation of the binary full / bin forms (%s)' % info['gpu'], info.get('graphs'), panels)
    log('')
    log(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bgnn-time', default=os.path.join(ROOT, 'build-models', 'bgnn_time'))
    ap.add_argument('--data', default=os.environ.get('BGNN_DATA_DIR', os.path.join(ROOT, '.carry', 'data')))
    ap.add_argument('--out', default=os.environ.get('OUT', '.'))
    ap.add_argument('--tmp', default='/tmp')
    ap.add_argument('--datasets', default='cora,pubmed,reddit')
    ap.add_argument('--repeat', type=int, default=1000, help='timed runs, cora and pubmed')
    ap.add_argument('--warmup', type=int, default=50)
    ap.add_argument('--repeat-large', type=int, default=20, help='timed runs, reddit')
    ap.add_argument('--rmat-nodes', type=int, default=232965)
    ap.add_argument('--rmat-edges', type=int, default=90500000, help='R-MAT stream length')
    ap.add_argument('--budget-s', type=float, default=1e9, help='skip what is left after this')
    ap.add_argument('--families', default=','.join(FAMILIES),
                    help='model families to run, of %s' % ','.join(FAMILIES))
    ap.add_argument('--report', metavar='RESULTS_JSON', nargs='+',
                    help='only write table and charts from results files (several: merged, the first '
                         "one's info; a later row replaces an earlier one of the same dataset/system/model)")
    ap.add_argument('--cpu-smoke', action='store_true', help='no GPU: every path once, on the CPU')
    args = ap.parse_args()
    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    if args.report:
        info, merged = None, {}
        for path in args.report:
            with open(path) as f:
                j = json.load(f)
            info = info or j['info']
            for g, v in j['info'].get('graphs', {}).items():
                info.setdefault('graphs', {}).setdefault(g, v)
            for r in j['results']:
                merged[(r['dataset'], r['system'], r['model'])] = r
        report(info, list(merged.values()), args.out)
        return
    fams = [f for f in args.families.split(',') if f]
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        sys.exit('models_bench.py: unknown families %s (have %s)' % (bad, ','.join(FAMILIES)))
    systems = [sm for sm in SYSTEMS if family(sm[1]) in fams]
    models = sorted({m for _, m in systems})
    cuda = torch.cuda.is_available() and not args.cpu_smoke
    if not cuda and not args.cpu_smoke:
        sys.exit('models_bench.py: no GPU (use --cpu-smoke to test on the CPU)')
    dev = torch.device('cuda' if cuda else 'cpu')
    if args.cpu_smoke:
        args.repeat, args.warmup, args.repeat_large = 3, 1, 1
    os.makedirs(args.out, exist_ok=True)
    try:
        import torch_geometric
        pygv = torch_geometric.__version__
    except ImportError:
        pygv = 'missing'
    gpu = torch.cuda.get_device_name(0) if cuda else 'cpu (smoke test)'
    drv = ''
    try:
        drv = subprocess.run(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        pass
    info = {'gpu': gpu, 'driver': drv, 'torch': torch.__version__, 'torch_geometric': pygv,
            'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d'),
            'repeat': args.repeat, 'repeat_large': args.repeat_large}
    log('models_bench: %s' % json.dumps(info))
    results = []
    res_path = os.path.join(args.out, 'models_results.json')

    def save():
        with open(res_path, 'w') as f:
            json.dump({'info': info, 'results': results}, f, indent=1)

    for ds in args.datasets.split(','):
        log('== %s' % ds)
        try:
            d = Data(ds, args, models)
        except Exception as e:   # noqa: BLE001 - report and go on
            log('  data failed: %r' % e)
            continue
        if d.dir and np.any(np.diff(d.rows) < 0):
            log('  note: graph.mtx rows are not sorted; sorting for the CSR path')
            o = np.lexsort((d.cols, d.rows))
            d.rows, d.cols = d.rows[o], d.cols[o]
        info.setdefault('graphs', {})[ds] = {'nodes': d.n, 'edges': d.edges, 'features': d.F,
                                             'hidden': d.H, 'classes': d.C,
                                             **({'rmat': d.gen} if getattr(d, 'gen', None) else {})}
        # reddit: bgnn first, then the PyTorch systems from the leanest to the most memory
        pyg = ('PyG eager, CSR', 'PyG eager, cached', 'PyG eager', 'PyG CUDA graph')
        order = systems if ds != 'reddit' else (
            [sm for sm in systems if sm[0] == 'bgnn'] + [sm for sm in systems if sm[0].startswith('PyTorch')]
            + [sm for p in pyg for sm in systems if sm[0] == p])
        for system, model in order:
            r = {'dataset': ds, 'system': system, 'model': model}
            if time.time() - t_start > args.budget_s:
                r['error'] = 'skipped (time budget)'
            else:
                t0 = time.time()
                try:
                    if system == 'bgnn':
                        r.update(run_bgnn(model, d, args, dev))
                    else:
                        r.update(run_torch(system, model, d, args, dev))
                except torch.cuda.OutOfMemoryError as e:
                    import re
                    m = re.search(r'Tried to allocate ([0-9.]+ [GMK]iB)', str(e))
                    t = re.search(r'([0-9.]+ [GMK]iB) is allocated by PyTorch', str(e))
                    r['error'] = 'out of GPU memory' + (' (%s more asked, %s held)' % (m.group(1), t.group(1))
                                                        if m and t else '')
                except subprocess.TimeoutExpired:
                    r['error'] = 'timed out'
                except Exception as e:   # noqa: BLE001 - one failure must not end the run
                    r['error'] = ('%s: %s' % (type(e).__name__, e)).splitlines()[0][:200]
                r['wall_s'] = round(time.time() - t0, 1)
                gc.collect()
                if cuda:
                    torch.cuda.empty_cache()
            log('  %-24s %-11s acc %-6s %-10s mem %-10s %s' % (
                system, model, '-' if r.get('test_acc') is None else '%.1f' % r['test_acc'],
                fmt_ms(r.get('median_ms')), fmt_mem(r.get('mem_bytes')),
                r.get('error', '') or '(%.1f s)' % r['wall_s']))
            results.append(r)
            save()
        del d
        gc.collect()
    report(info, results, args.out)
    save()
    log('total %.0f s' % (time.time() - t_start))


if __name__ == '__main__':
    main()
