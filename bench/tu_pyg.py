"""tu_pyg.py - the PyG side of bench/tu_bench.py: TU datasets, the float GIN / GCN graph classifiers
in torch_geometric, and their throughput over a dataset batch after batch.

Models (the architecture of examples/tu/{gin,gcn}_fp32_<ds>.bgnn, tools/train/gen_tu_models.py):
  GIN: L x GINConv(MLP(Linear(in, H), BatchNorm1d(H), ReLU, Linear(H, H), ReLU), train_eps=True),
       global_add_pool, Linear(H, H), ReLU, Linear(H, C), log_softmax
  GCN: L x ReLU(GCNConv(in, H)), global_add_pool (the sum readout of examples/tu), the same classifier
The trained fp32 weights (examples/weights/tu/<arch>_fp32_<ds>.safetensors, bgnn's tensor names)
are loaded when present, else seeded random ones (then the accuracy means nothing).

Batches: torch_geometric.loader.DataLoader(shuffle=False) over per-graph Data objects, i.e.
consecutive graphs collated into a block-diagonal Batch; collation (and the copy to the device)
is timed separately, once per batch size, and is not in the GPU timing.  All batches are on
the device before timing.  A sweep runs every batch in order between two CUDA events;
graphs/s = graphs / median sweep time.  Pooling gets the batch's graph count (size=), so no
host sync there.
  eager       model(x, edge_index, batch): GCNConv normalises each call (PyG's default; its
              self-loop removal is a boolean mask: one host sync per layer)
  CUDA graph  one torch.cuda.CUDAGraph captured per batch (every batch has its own shape; all
              captures share one memory pool and replay in capture order), replayed per batch.
              GCN there uses the same normalisation precomputed per batch outside the graph
              (gcn_norm -> GCNConv(normalize=False) with edge_weight), as the mask cannot be
              captured; the precomputation is counted with collation, not in the GPU timing.
Memory: torch.cuda.max_memory_allocated() over the sweep from the allocator's state before the
model and batches were moved (weights, every batch's inputs, intermediates, graph pools), and for
the largest batch alone: weights + its inputs + the peak of one forward above what was resident.
"""
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn.functional as Fn


def load_tu(d):
    """A TU data directory -> dict: n, rows, cols (int64, graph.mtx 0-based), ptr, x, y."""
    with open(os.path.join(d, 'graph.mtx')) as f:
        line = f.readline()
        while line.startswith('%'):
            line = f.readline()
        n, _, nnz = (int(v) for v in line.split())
        ij = np.array(f.read().split(), dtype=np.int64).reshape(-1, 2) - 1
    assert len(ij) == nnz, d
    ptr = np.load(os.path.join(d, 'graph_ptr.npy')).astype(np.int64)
    x = np.load(os.path.join(d, 'features.npy')).astype(np.float32)
    yp = os.path.join(d, 'graph_labels.npy')
    y = np.load(yp).astype(np.int64) if os.path.exists(yp) else None
    return {'n': n, 'rows': ij[:, 0], 'cols': ij[:, 1], 'ptr': ptr, 'x': x, 'y': y}


def graph_list(tu, g0, g1):
    """Per-graph torch_geometric Data (edge_index = (source, target) = (col, row)), graphs g0..g1-1."""
    from torch_geometric.data import Data
    ptr, rows, cols = tu['ptr'], tu['rows'], tu['cols']
    e = np.searchsorted(rows, ptr)   # rows are sorted: the edges of graph g are e[g]..e[g+1]-1
    out = []
    for g in range(g0, g1):
        a, b = e[g], e[g + 1]
        ei = torch.from_numpy(np.stack([cols[a:b], rows[a:b]]) - ptr[g])
        out.append(Data(x=torch.from_numpy(tu['x'][ptr[g]:ptr[g + 1]]), edge_index=ei,
                        y=None if tu['y'] is None else int(tu['y'][g])))
    return out


def build(arch, F, H, C, L, cached_norm=False):
    from torch import nn
    from torch_geometric.nn import GCNConv, GINConv, global_add_pool

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [F] + [H] * L
            if arch == 'gin':
                self.convs = nn.ModuleList(GINConv(nn.Sequential(
                    nn.Linear(i, H), nn.BatchNorm1d(H), nn.ReLU(), nn.Linear(H, H), nn.ReLU()), train_eps=True)
                    for i in dims[:-1])
            else:
                self.convs = nn.ModuleList(GCNConv(i, H, normalize=not cached_norm) for i in dims[:-1])
            self.lin1, self.lin2 = nn.Linear(H, H), nn.Linear(H, C)

        def forward(self, x, edge_index, batch, ng, ew=None):
            for c in self.convs:
                x = c(x, edge_index) if arch == 'gin' else Fn.relu(c(x, edge_index, ew))
            g = global_add_pool(x, batch, ng)
            return torch.log_softmax(self.lin2(torch.relu(self.lin1(g))), -1)
    return Net()


def read_safetensors(path):
    with open(path, 'rb') as f:
        hl = struct.unpack('<Q', f.read(8))[0]
        hdr = json.loads(f.read(hl))
        data = f.read()
    return {k: torch.from_numpy(np.frombuffer(data[v['data_offsets'][0]:v['data_offsets'][1]], dtype=np.float32)
                                .reshape(v['shape']).copy())
            for k, v in hdr.items() if k != '__metadata__' and v['dtype'] == 'F32'}


def load_weights(net, arch, path):
    """bgnn's tensor names (gen_tu_models.py) -> the PyG modules; False when they do not fit."""
    w = read_safetensors(path)
    sd = {}
    for k, c in enumerate(net.convs, 1):
        p = 'conv%d.' % k
        if arch == 'gin':
            for i, sub in ((0, 'lin1'), (3, 'lin2')):
                sd['convs.%d.nn.%d.weight' % (k - 1, i)] = w[p + 'mlp.%s.weight' % sub]
                sd['convs.%d.nn.%d.bias' % (k - 1, i)] = w[p + 'mlp.%s.bias' % sub]
            for s in ('running_mean', 'running_var', 'weight', 'bias'):
                sd['convs.%d.nn.1.%s' % (k - 1, s)] = w[p + 'mlp.bn.' + s]
            sd['convs.%d.eps' % (k - 1)] = (w[p + 'one_plus_eps'].reshape(-1)[0] - 1).reshape(c.eps.shape)
        else:
            sd['convs.%d.lin.weight' % (k - 1)] = w[p + 'weight']
            sd['convs.%d.bias' % (k - 1)] = w[p + 'bias']
    for s in ('lin1', 'lin2'):
        sd[s + '.weight'], sd[s + '.bias'] = w[s + '.weight'], w[s + '.bias']
    own = net.state_dict()
    if any(k not in own or own[k].shape != v.shape for k, v in sd.items()):
        return False
    own.update(sd)
    net.load_state_dict(own)
    return True


def sync(dev):
    if dev.type == 'cuda':
        torch.cuda.synchronize()


def sweeps(fns, dev, repeat, warmup, target_s):
    """Runs every fn in order per sweep: warmup + 1 untimed sweeps (just 1 when long), then up to `repeat` timed
    (fewer when one sweep is long: about target_s in all, at least 3).  -> (median s, min s, n)."""
    t0 = time.perf_counter()
    done = 0
    while done < 1 + warmup:   # a sweep longer than target_s is its own warm-up
        for f in fns:
            f()
        sync(dev)
        done += 1
        if time.perf_counter() - t0 > target_s:
            break
    one = (time.perf_counter() - t0) / done
    n = max(3, min(repeat, int(target_s / max(one, 1e-6))))
    ts = []
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)] if dev.type == 'cuda' else None
    for _ in range(n):
        if ev:
            ev[0].record()
        h = time.perf_counter()
        for f in fns:
            f()
        if ev:
            ev[1].record()
            ev[1].synchronize()
            ts.append(ev[0].elapsed_time(ev[1]) / 1e3)
        else:
            ts.append(time.perf_counter() - h)
    ts.sort()
    return ts[len(ts) // 2], ts[0], n


def latency(fn, dev, repeat):
    """Median seconds of one fn() between two CUDA events (wall clock on the CPU), after warm-up."""
    for _ in range(10):
        fn()
    sync(dev)
    ts = []
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)] if dev.type == 'cuda' else None
    for _ in range(repeat):
        if ev:
            ev[0].record()
            fn()
            ev[1].record()
            ev[1].synchronize()
            ts.append(ev[0].elapsed_time(ev[1]) / 1e3)
        else:
            h = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - h)
    ts.sort()
    return ts[len(ts) // 2]


def run_pyg(arch, mode, tu, graphs, B, args, dev, weights):
    """One PyG measurement: arch gin|gcn, mode eager|graph, batch size B (0: all) over `graphs`
    (the list of graph_list).  -> result dict."""
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn.conv.gcn_conv import gcn_norm
    r = {}
    F, C = tu['x'].shape[1], int(tu['C'])
    bs = B or len(graphs)
    t0 = time.perf_counter()
    host = list(DataLoader(graphs, batch_size=bs, shuffle=False))
    r['collate_s'] = time.perf_counter() - t0
    base = torch.cuda.memory_allocated() if dev.type == 'cuda' else 0
    if dev.type == 'cuda':
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(args.seed)
    net = build(arch, F, args.hidden, C, args.layers, cached_norm=(mode == 'graph' and arch == 'gcn'))
    r['weights'] = 'random'
    if weights and os.path.exists(weights):
        r['weights'] = weights if load_weights(net, arch, weights) else 'random (trained file did not fit)'
    net = net.to(dev).eval()
    wbytes = sum(p.numel() * 4 for p in net.parameters()) + sum(b.numel() * 4 for b in net.buffers())
    t0 = time.perf_counter()
    bat = []
    for b in host:
        b = b.to(dev)
        ew = None
        ei = b.edge_index
        if mode == 'graph' and arch == 'gcn':
            ei, ew = gcn_norm(ei, None, b.num_nodes, add_self_loops=True)
        bat.append((b.x, ei, b.batch, int(b.num_graphs), ew))
    sync(dev)
    r['to_device_s'] = time.perf_counter() - t0
    r['batches'] = len(bat)
    outs = [None] * len(bat)

    def call(i):
        x, ei, bt, ng, ew = bat[i]
        outs[i] = net(x, ei, bt, ng, ew)
    with torch.no_grad():
        if mode == 'eager':
            fns = [lambda i=i: call(i) for i in range(len(bat))]
        else:
            if dev.type != 'cuda':
                raise RuntimeError('no CUDA graph on the CPU')
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):   # warm-up before capture, on a side stream
                for i in range(min(len(bat), 3)):
                    call(i)
            torch.cuda.current_stream().wait_stream(s)
            # capture_begin/end on the side stream rather than `with torch.cuda.graph()`, whose
            # entry synchronises and empties the cache (some versions also gc.collect) per capture
            t0 = time.perf_counter()
            pool, cgs = torch.cuda.graph_pool_handle(), []
            with torch.cuda.stream(s):
                for i in range(len(bat)):
                    g = torch.cuda.CUDAGraph()
                    g.capture_begin(pool=pool)
                    call(i)
                    g.capture_end()
                    cgs.append(g)
            torch.cuda.current_stream().wait_stream(s)
            sync(dev)
            r['capture_s'] = time.perf_counter() - t0
            fns = [g.replay for g in cgs]
        med, mn, n = sweeps(fns, dev, args.repeat, args.warmup, args.target_s)
        r.update(sweep_ms=med * 1e3, sweep_min_ms=mn * 1e3, repeat=n, graphs=len(graphs),
                 graphs_per_s=len(graphs) / med)
        if tu['y'] is not None:
            pred = torch.cat([o.argmax(-1).cpu() for o in outs])
            r['accuracy'] = 100.0 * float((pred == torch.tensor([g.y for g in graphs])).float().mean())
        if dev.type == 'cuda':
            r['mem_sweep_bytes'] = torch.cuda.max_memory_allocated() - base
        # the batch with the median node count: latency (B = 1: batch-1 latency), as tu_time picks it
        sizes = np.array([b[0].shape[0] for b in bat])
        li = int(np.argsort(sizes, kind='stable')[len(sizes) // 2])
        r['latency_ms'] = latency(fns[li], dev, args.latency_repeat if B == 1 else min(args.latency_repeat, 20)) * 1e3
        r['latency_batch'] = {'graphs': bat[li][3], 'nodes': int(sizes[li])}
        if dev.type == 'cuda' and mode == 'eager':   # the largest batch alone
            big = int(np.argmax(sizes))
            sync(dev)
            held = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            call(big)
            sync(dev)
            x, ei, bt, _, _ = bat[big]
            inb = sum(t.numel() * t.element_size() for t in (x, ei, bt))
            r['mem_batch_bytes'] = wbytes + inb + torch.cuda.max_memory_allocated() - held
    del outs, bat, net, fns
    return r
