"""bgnn.export - a trained PyTorch model of tools/train/models.py as a .bgnn model plus its
weights (safetensors, the state_dict's tensor names, which the .bgnn binds by name).

    from bgnn.export import export
    bgnn_path, weights_path = export(net, "gcn_bin_mine.bgnn")   # + gcn_bin_mine.safetensors
    model = bgnn.compile(bgnn_path, target="gpu")
    out = model(data, weights=weights_path)        # or weights=net.state_dict(): no file at all

Supported: GCNBin ("gcn_bin", the BitGNN paper's bin GCN), GCNFull ("gcn_full", Bi-GCN) and
GCNFP32 ("gcn_fp32", the float GCN), recognised by class name or given as ``kind`` (with a
plain state_dict).  The input width, hidden width and class count come from the weights; the
graph declarations, precisions and layers are those of examples/<kind>.bgnn."""
import os

from ._safetensors import save as _save

_SOURCES = {
    "gcn_bin": """# {name}.bgnn - exported by bgnn.export from a trained GCNBin (tools/train/models.py):
# the BitGNN paper's "bin" GCN, as examples/gcn_bin.bgnn.
model {name}

graph  A   = adjacency(self_loops: true, norm: none)   # A + I, 0/1
graph  Ah  = adjacency(self_loops: true, norm: sym)    # D^-1/2 (A + I) D^-1/2
input  X   : f32[N, {f}]
param  mu  : f32[{f}]    = "bn.running_mean"
param  var : f32[{f}]    = "bn.running_var"
param  W1  : b1[{f}, {h}] = "conv1.weight".T
param  W2  : b1[{h}, {c}] = "conv2.weight".T
param  b2  : f32[{c}]    = "conv2.bias"

x = batchnorm(X, mu, var)
h = gcn_conv(x, A, W1) {{ mm: FBB, agg: BBB }}
y = gcn_conv(h, Ah, W2, b2) {{ mm: BBF, agg: FBF }}
output logits = log_softmax(y)
""",
    "gcn_full": """# {name}.bgnn - exported by bgnn.export from a trained GCNFull (tools/train/models.py):
# Bi-GCN, as examples/gcn_full.bgnn.
model {name}

graph  A   = adjacency(self_loops: true, norm: sym)
input  X   : f32[N, {f}]
param  mu  : f32[{f}]     = "bn.running_mean"
param  var : f32[{f}]     = "bn.running_var"
param  W1  : b1[{f}, {h}] = "conv1.weight".T
param  b1  : f32[{h}]     = "conv1.bias"
param  W2  : b1[{h}, {c}] = "conv2.weight".T
param  b2  : f32[{c}]     = "conv2.bias"

x  = batchnorm(X, mu, var) {{ eps: 1e-5 }}
t1 = linear(x, W1, b1) {{ mm: BBF, bin: absmean }}
h1 = bspmm.FBF(A, t1)
t2 = linear(h1, W2, b2) {{ mm: BBF, bin: absmean }}
y  = bspmm.FBF(A, t2)
output logits = log_softmax(y)
""",
    "gcn_fp32": """# {name}.bgnn - exported by bgnn.export from a trained GCNFP32 (tools/train/models.py):
# the float GCN, as examples/gcn_fp32.bgnn.
model {name}

graph  A  = adjacency(self_loops: true, norm: sym)
input  X  : f32[N, {f}]
param  W1 : f32[{f}, {h}] = "conv1.weight".T
param  b1 : f32[{h}]      = "conv1.bias"
param  W2 : f32[{h}, {c}] = "conv2.weight".T
param  b2 : f32[{c}]      = "conv2.bias"

h  = gcn_conv(X, A, W1, b1)
hr = relu(h)
y  = gcn_conv(hr, A, W2, b2)
output logits = log_softmax(y)
""",
}

_CLASSES = {"GCNBin": "gcn_bin", "GCNFull": "gcn_full", "GCNFP32": "gcn_fp32"}
_NEEDS = {
    "gcn_bin": ("bn.running_mean", "bn.running_var", "conv1.weight", "conv2.weight", "conv2.bias"),
    "gcn_full": ("bn.running_mean", "bn.running_var", "conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"),
    "gcn_fp32": ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"),
}


def kind_of(model):
    """"gcn_bin", "gcn_full" or "gcn_fp32" for a tools/train model (by class name)."""
    k = _CLASSES.get(type(model).__name__)
    if k is None:
        raise ValueError("cannot tell the kind of %s: pass kind='gcn_bin', 'gcn_full' or 'gcn_fp32'"
                         % type(model).__name__)
    return k


def _shape(v):
    return tuple(int(d) for d in v.shape)


def source(kind, state_dict, name=None):
    """The .bgnn text of kind with the widths of state_dict's tensors."""
    if kind not in _SOURCES:
        raise ValueError("unknown kind %r (gcn_bin, gcn_full or gcn_fp32)" % (kind,))
    missing = [k for k in _NEEDS[kind] if k not in state_dict]
    if missing:
        raise ValueError("%s needs state_dict entries %s" % (kind, ", ".join(missing)))
    h, f = _shape(state_dict["conv1.weight"])
    c, h2 = _shape(state_dict["conv2.weight"])
    if h2 != h:
        raise ValueError("conv2.weight is [%d, %d] but conv1.weight gives hidden width %d" % (c, h2, h))
    if f < 1 or h < 1 or c < 1:
        raise ValueError("empty layer widths (%d, %d, %d)" % (f, h, c))
    return _SOURCES[kind].format(name=name or kind, f=f, h=h, c=c)


def export(model, bgnn_path, weights_path=None, *, kind=None, name=None, metadata=None):
    """Writes bgnn_path (the model) and weights_path (default: bgnn_path with .safetensors).

    model: a tools/train model (GCNBin, GCNFull, GCNFP32) or its state_dict with ``kind``.
    Returns (bgnn_path, weights_path)."""
    if hasattr(model, "state_dict") and callable(model.state_dict):
        kind = kind or kind_of(model)
        sd = model.state_dict()
    else:
        if kind is None:
            raise ValueError("a plain state_dict needs kind='gcn_bin', 'gcn_full' or 'gcn_fp32'")
        sd = model
    bgnn_path = os.fspath(bgnn_path)
    if weights_path is None:
        weights_path = os.path.splitext(bgnn_path)[0] + ".safetensors"
    if name is None:
        base = os.path.splitext(os.path.basename(bgnn_path))[0]
        name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base) or kind
        if name[0].isdigit():
            name = "m_" + name
    text = source(kind, sd, name)
    meta = {"generator": "bgnn.export", "model": kind}
    meta.update(metadata or {})
    _save({k: v for k, v in sd.items() if not k.endswith("num_batches_tracked")}, weights_path, meta)
    tmp = "%s.tmp.%d" % (bgnn_path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, bgnn_path)
    return bgnn_path, weights_path
