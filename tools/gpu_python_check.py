#!/usr/bin/env python3
"""gpu_python_check.py - the Python package end to end on a GPU (tools/gpu_python_check.sh
installs the package and runs this):

1. trains a GCN-bin (tools/train/models.py GCNBin) on Cora on the GPU, shortly;
2. exports it with bgnn.export (.bgnn + safetensors);
3. runs it through bgnn from Python on a PyG Data already on the GPU, weights straight from
   the state_dict, and checks: predictions equal PyTorch's own forward on >= 99.9 % of the
   nodes; logits bit-equal to bgnn's CPU reference and to a run with the exported weights
   file; the features used in place (the device pointer bgnn reads its input from is
   x.data_ptr()) and the output a tensor over bgnn's own buffer (its data_ptr() is
   bgnn_session_output_device_ptr); new features of the same shape repointed without a
   rebind; rebinding refused while outputs are alive; a PyG Batch of MUTAG graphs equal to
   the CPU reference;
4. times the Python call path (model.run(data): CUDA events around the call, and the host
   time of the call) against the C API's bgnn_session_time (CUDA events, kernels only) and
   PyTorch's forward, and prints a table.

Every check raises with a message on failure (exit status 1).  Writes OUT/summary.json and
OUT/timing.txt.
    python3 tools/gpu_python_check.py --data .carry/data --out OUT [--epochs 200] [--repeat 300]
"""
import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))

CHECKS = []


def check(cond, what):
    CHECKS.append((bool(cond), what))
    print("%-6s %s" % ("ok" if cond else "FAILED", what), flush=True)
    if not cond:
        raise SystemExit("gpu_python_check: FAILED: " + what)


def train(models, ds, torch, epochs, device):
    """GCNBin with tools/train's recipe (Adam 1e-3, wd 5e-4, dropout 0.4), no distillation;
    keeps the epoch of the best validation loss."""
    import torch.nn.functional as Fn
    torch.manual_seed(0)
    X = torch.from_numpy(ds.x).to(device)
    y = torch.from_numpy(ds.y).to(device)
    tr, va = (torch.from_numpy(i).to(device) for i in (ds.train_idx, ds.val_idx))
    net = models.GCNBin(ds).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=0.001, weight_decay=5e-4)
    best = None
    for epoch in range(epochs):
        net.train()
        opt.zero_grad()
        loss = Fn.nll_loss(net(X)[tr], y[tr])
        loss.backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            vl = float(Fn.nll_loss(net(X)[va], y[va]))
        if best is None or vl < best[0]:
            best = (vl, epoch, {k: v.clone() for k, v in net.state_dict().items()})
    net.load_state_dict(best[2])
    net.eval()
    return net, X, best[1]


def cuda_median_us(torch, fn, repeat, warmup=20):
    """Median of fn() between CUDA events on the current stream, in microseconds, and the
    median host time of the call itself (no synchronisation inside)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    host = []
    for a, b in ev:
        a.record()
        t0 = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t0) * 1e6)
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) * 1000 for a, b in ev), statistics.median(host)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.environ.get("BGNN_DATA_DIR", os.path.join(ROOT, ".carry", "data")))
    ap.add_argument("--out", default=os.environ.get("OUT", os.path.join(ROOT, "gpu-python-logs")))
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=300)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()

    import numpy as np
    import torch
    import bgnn
    import bgnn_ref
    import models
    from torch_geometric.data import Batch, Data
    import torch_geometric
    print("python %s, torch %s, torch_geometric %s, bgnn %s (%s)" % (
        sys.version.split()[0], torch.__version__, torch_geometric.__version__, bgnn.__version__, bgnn.__file__))
    check(torch.cuda.is_available(), "torch sees a CUDA device")
    dev = torch.device("cuda", 0)
    print("device: %s" % torch.cuda.get_device_name(0))

    # 1. train
    ds = bgnn_ref.Dataset(a.data, "cora")
    t0 = time.time()
    net, X, best_epoch = train(models, ds, torch, a.epochs, dev)
    train_s = time.time() - t0
    with torch.no_grad():
        ref = net(X)
    pred_torch = ref.argmax(1)
    test = torch.from_numpy(ds.test_idx).to(dev)
    yt = torch.from_numpy(ds.y).to(dev)
    acc_torch = float((pred_torch[test] == yt[test]).float().mean()) * 100
    print("trained GCNBin %d epochs on the GPU in %.1f s (best epoch %d); PyTorch test accuracy %.2f%%"
          % (a.epochs, train_s, best_epoch, acc_torch))

    # 2. export
    bgnn_path, w_path = bgnn.export.export(net, os.path.join(a.out, "gcn_bin_trained.bgnn"),
                                           metadata={"epochs": a.epochs, "best_epoch": best_epoch})
    check(os.path.getsize(w_path) > 0 and "model gcn_bin_trained" in open(bgnn_path).read(),
          "bgnn.export wrote %s and %s" % (os.path.basename(bgnn_path), os.path.basename(w_path)))

    # 3. run through bgnn on a PyG Data already on the GPU
    edge_index = torch.from_numpy(np.stack([ds.ecol, ds.erow])).to(dev)   # (source, target)
    data = Data(x=X, edge_index=edge_index, num_nodes=ds.n)
    check(data.x.is_cuda and data.edge_index.is_cuda, "PyG Data on %s" % data.x.device)
    model = bgnn.compile(bgnn_path, target="gpu")
    check(model.target == "gpu", "bgnn model on %s (%s)" % (model.device_name, model.info["arch"]))
    sess = model.session(weights=net.state_dict())
    out = sess.run(data)
    check(isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == torch.float32 and tuple(out.shape) == (ds.n, 7),
          "output is a float32 CUDA tensor [%d, 7]" % ds.n)
    in_ptr = sess.input_device_ptr
    check(in_ptr == data.x.data_ptr(),
          "features used in place: bgnn's input device pointer 0x%x == x.data_ptr() 0x%x" % (in_ptr, data.x.data_ptr()))
    out_ptr = sess.output_device_ptr(0)
    check(out.data_ptr() == out_ptr,
          "output not copied: tensor.data_ptr() 0x%x == bgnn_session_output_device_ptr 0x%x" % (out.data_ptr(), out_ptr))
    pred_bgnn = out.argmax(1)
    agree = float((pred_bgnn == pred_torch).float().mean())
    if agree < 0.999:  # say whether bgnn or PyTorch's (unordered float) forward is off
        exact = bgnn_ref.ref_forward("gcn_bin", ds, models.export_tensors(net), exact=True).argmax(1)
        print("diagnosis: %d nodes differ from PyTorch's forward; bgnn vs the exact-order CPU reference "
              "(bgnn_ref.ref_forward): %.2f%%" % (int((pred_bgnn != pred_torch).sum()),
                                                    100 * float((pred_bgnn.cpu() == exact).float().mean())))
    check(agree >= 0.999, "predictions equal PyTorch's on %.2f%% of the %d nodes (>= 99.9%%)" % (100 * agree, ds.n))
    acc_bgnn = float((pred_bgnn[test] == yt[test]).float().mean()) * 100
    print("bgnn test accuracy %.2f%% (PyTorch %.2f%%)" % (acc_bgnn, acc_torch))
    cpu = bgnn.compile(bgnn_path, target="cpu")
    out_cpu = cpu.session(weights=w_path).run(x=X.cpu(), graph=edge_index.cpu())
    check(torch.equal(out.cpu(), out_cpu), "GPU logits bit-equal to the CPU reference (weights from the file)")
    s2 = model.session(weights=w_path)
    check(torch.equal(s2.run(data), out), "weights from the exported file == weights from the state_dict")
    del s2

    # rebinding while out is alive is refused; new features of the same shape are repointed
    try:
        sess.set_weights(w_path)
        check(False, "set_weights while an output tensor is alive raises BgnnError")
    except bgnn.BgnnError as e:
        check(e.status_name == "STATE", "set_weights while an output tensor is alive raises BgnnError (%s)"
              % str(e).split(":")[0])
    logits = out.clone()
    del out
    x2 = X.clone()
    out = sess.run(x=x2)
    check(sess.input_device_ptr == x2.data_ptr() and torch.equal(out, logits),
          "other features of the same shape: input repointed to x2.data_ptr(), same logits")
    del out

    # a PyG Batch of MUTAG graphs (random weights) against the CPU reference
    mut = os.path.join(a.data, "mutag")
    if os.path.isdir(mut):
        mpath = os.path.join(ROOT, "examples", "mutag_gcn_bin.bgnn")
        mg = bgnn.compile(mpath, target="gpu")
        mw = mg.write_random_weights(os.path.join(a.out, "mutag_w.safetensors"), seed=7)
        want = bgnn.compile(mpath, target="cpu").session(weights=mw, data=mut).run()
        gp = np.load(os.path.join(mut, "graph_ptr.npy"))
        mx = torch.from_numpy(np.load(os.path.join(mut, "features.npy"))).to(dev)
        with open(os.path.join(mut, "graph.mtx")) as f:
            lines = [ln for ln in f if not ln.startswith("%")]
        ij = np.array([ln.split()[:2] for ln in lines[1:]], dtype=np.int64) - 1
        graphs = []
        for g in range(len(gp) - 1):
            lo, hi = int(gp[g]), int(gp[g + 1])
            keep = (ij[:, 0] >= lo) & (ij[:, 0] < hi)
            e = torch.from_numpy(np.stack([ij[keep, 1], ij[keep, 0]]) - lo)
            graphs.append(Data(x=mx[lo:hi], edge_index=e, num_nodes=hi - lo))
        batch = Batch.from_data_list(graphs).to(dev)
        got = mg.session(weights=mw).run(batch)
        check(torch.equal(got.cpu(), want), "PyG Batch of %d MUTAG graphs on the GPU == CPU reference" % (len(gp) - 1))
        del got
    else:
        print("note: no MUTAG under %s; the Batch check is skipped" % a.data)

    # 4. timing
    c_ms = sess.time(a.repeat)
    py_us, py_host_us = cuda_median_us(torch, lambda: sess.run(data), a.repeat)
    with torch.no_grad():
        pt_us, pt_host_us = cuda_median_us(torch, lambda: net(X), a.repeat)
    rows = [
        ("C API bgnn_session_time (CUDA events, kernels only)", 1000 * c_ms, None),
        ("Python session.run(PyG Data) (CUDA events around the call)", py_us, py_host_us),
        ("PyTorch GCNBin forward, eval (CUDA events)", pt_us, pt_host_us),
    ]
    lines = ["%-62s %12s %14s" % ("path (Cora, gcn_bin, median of %d)" % a.repeat, "GPU us", "host call us")]
    for name, us, host in rows:
        lines.append("%-62s %12.1f %14s" % (name, us, "-" if host is None else "%.1f" % host))
    lines.append("Python call path overhead over the C API: %.1f us per call" % (py_us - 1000 * c_ms))
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out, "timing.txt"), "w") as f:
        f.write(table + "\n")
    check(py_us > 0 and c_ms > 0, "timings measured")

    summary = {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "torch_geometric": torch_geometric.__version__, "bgnn": bgnn.__version__,
        "epochs": a.epochs, "best_epoch": best_epoch, "train_s": train_s,
        "test_acc_torch": acc_torch, "test_acc_bgnn": acc_bgnn, "agreement": agree,
        "input_ptr_equals_x": in_ptr == data.x.data_ptr(), "output_ptr_equals_tensor": True,
        "bgnn_session_time_us": 1000 * c_ms, "python_call_us": py_us, "python_call_host_us": py_host_us,
        "pytorch_forward_us": pt_us, "checks": [w for _, w in CHECKS], "seconds": time.time() - t_start,
    }
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("gpu_python_check: all %d checks passed in %.0f s" % (len(CHECKS), time.time() - t_start))


if __name__ == "__main__":
    main()
