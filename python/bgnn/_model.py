"""_model.py - Model (a compiled .bgnn on a device or the CPU reference) and Session (one
bound graph, features and weights; runs and outputs), over the extension bgnn._bgnn.

GPU: CUDA tensors cross without a host copy.  Features are bound in place
(bgnn_session_set_features_device; the session keeps the tensor alive), and outputs come back
as tensors over the session's own device buffers (DLPack; each tensor keeps the session
alive).  Those outputs are overwritten by the next run of the session: ``.clone()`` what
must be kept.  Kernels run on the current PyTorch CUDA stream."""
import os
import sys

from . import _bgnn
from ._arrays import (HostBuffer, host_empty, is_cuda, is_torch, torch_module, version_key,
                      want_torch)
from ._graphs import set_graph

_TARGETS = {"auto": _bgnn.TARGET_AUTO, "cpu": _bgnn.TARGET_CPU, "gpu": _bgnn.TARGET_GPU,
            "cuda": _bgnn.TARGET_GPU}


def _is_path(source):
    if isinstance(source, os.PathLike):
        return True
    if isinstance(source, bytes):
        return False
    return "\n" not in source and (source.endswith((".bgnn", ".cubin")) or os.path.isfile(source))


class Model:
    """A compiled model.

    ``source``: a .bgnn file, a .cubin made by ``bgnnc -o`` (GPU only), or model text.
    ``target``: "auto" (the GPU when usable, else the CPU reference), "cpu" or "gpu".
    ``output``: what runs return: "auto" (torch tensors when torch is installed, else NumPy),
    "torch" or "numpy".  ``fp_strict``: compile with ``--fp-strict`` (every float reduction in
    index order, no fma: docs/semantics.md section 2); default: the compiler's recorded orders.  Calling the model runs its default session (``model.session()``
    makes more)."""

    def __init__(self, source, *, target="auto", device=0, name=None, cache_dir=None,
                 disable_cache=False, arch=None, weights=None, output="auto", fp_strict=False):
        if target not in _TARGETS:
            raise ValueError("target must be auto, cpu or gpu, got %r" % (target,))
        self._ctx = _bgnn.Context(_TARGETS[target], int(device), cache_dir, bool(disable_cache), arch,
                                  bool(fp_strict))
        if _is_path(source):
            path = os.fspath(source)
            with open(path, "rb") as f:
                cubin = f.read(4) == b"\x7fELF"
            self._m = self._ctx.compile_file(path, cubin)
        else:
            text = source.encode() if isinstance(source, str) else bytes(source)
            self._m = self._ctx.compile(text, name or "<string>")
        self.device = int(device)
        self.output = output
        self._weights = weights
        self._default = None

    @property
    def target(self):
        """"cpu" or "gpu": what the context runs on (what "auto" chose)."""
        return "gpu" if self._ctx.target() == _bgnn.TARGET_GPU else "cpu"

    @property
    def device_name(self):
        return self._ctx.device_name()

    @property
    def info(self):
        """name, arch, compile_ms, cache_hit, from_cubin, nkernels, outputs."""
        return self._m.info()

    @property
    def output_names(self):
        return self._m.info()["outputs"]

    def session(self, weights=None, data=None):
        """A new Session; weights (a path or a state_dict) and a data directory optional."""
        s = Session(self)
        if weights is not None:
            s.set_weights(weights)
        if data is not None:
            s.load_data(data)
        return s

    def write_random_weights(self, path, seed=0):
        self._m.write_random_weights(int(seed), os.fspath(path))
        return path

    def default_session(self):
        if self._default is None:
            self._default = self.session(self._weights)
        return self._default

    def __call__(self, data=None, *, x=None, graph=None, weights=None, stream=None):
        """Runs the default session: see Session.run."""
        return self.default_session().run(data, x=x, graph=graph, weights=weights, stream=stream)

    def __repr__(self):
        i = self.info
        return "bgnn.Model(%r on %s, outputs %s)" % (i["name"], self.device_name, list(i["outputs"]))


class Session:
    """One bound graph, node features and weights; runs and outputs."""

    def __init__(self, model):
        self.model = model
        self._s = model._m.session()
        self._keep = {}     # arrays the C session borrows or that identify what is bound
        self._ran = False

    # ---- inputs ---------------------------------------------------------------------------
    def load_data(self, directory):
        """A data directory: graph file, features.npy, labels.npy, splits (docs/formats.md)."""
        self._s.load_data(os.fspath(directory))
        self._keep.pop("graph", None)
        self._keep.pop("x", None)
        return self

    def set_graph(self, graph, num_nodes=None):
        """A PyG Data/Batch, an edge_index [2, E], a SciPy sparse matrix or a graph file."""
        self._keep["graph"] = set_graph(self._s, graph, num_nodes)
        self._keep["graph_obj"] = graph   # held: the ids in its key stay unique while it is bound
        self._keep["graph_key"] = _graph_key(graph)
        return self

    def set_features(self, x):
        """Node features [N, F]: a CUDA tensor is used in place (float32, contiguous; else a
        device-side converted copy the session keeps), a host array is copied, a path is a
        .npy file."""
        if isinstance(x, (str, os.PathLike)):
            self._s.set_features_file(os.fspath(x))
            self._keep.pop("x", None)
            return self
        if is_cuda(x):
            if self.model.target != "gpu":
                raise ValueError("CUDA features need a GPU model (target='gpu'); this one runs on the CPU")
            if x.device.index is not None and x.device.index != self.model.device:
                raise ValueError("features on cuda:%d, the model on cuda:%d" % (x.device.index, self.model.device))
            torch = torch_module(required=True)
            t = x.detach()
            if t.dtype != torch.float32 or not t.is_contiguous():
                t = t.to(torch.float32).contiguous()
            if t.dim() != 2:
                raise ValueError("features must be [N, F], got %s" % (tuple(t.shape),))
            self._s.set_features_device(t.data_ptr(), t.shape[0], t.shape[1])
            self._keep["x"] = t
            self._keep["x_key"] = version_key(x)
            return self
        buf = HostBuffer(x, "float32")
        if len(buf.shape) != 2:
            raise ValueError("features must be [N, F], got %s" % (buf.shape,))
        self._s.set_features(buf.addr, buf.shape[0], buf.shape[1])
        self._keep["x"] = x
        self._keep["x_key"] = _input_key(x)
        return self

    def set_requests(self, k):
        """Serve k independent requests in every run over the bound graph: the features hold
        the k feature sets one after another ([k N, F]) and every output the k results in the
        same order ([k N, C], or [k G, C] for graph outputs); request r's rows are bit for bit
        a run of request r alone (bgnn_session_set_requests)."""
        self._s.set_requests(int(k))
        return self

    def set_weights(self, weights):
        """A .safetensors file (or a directory for npy(...) parameters), or a mapping of names
        to tensors / arrays such as a PyTorch state_dict (float entries are used; the others,
        e.g. num_batches_tracked, skipped)."""
        if isinstance(weights, (str, os.PathLike)):
            self._s.set_weights(os.fspath(weights))
        else:
            items = list(weights.items() if hasattr(weights, "items") else weights)
            self._s.clear_weights()
            for name, v in items:
                kind = str(getattr(v, "dtype", "float32"))
                if not any(k in kind for k in ("float", "half", "bfloat")):
                    continue
                buf = HostBuffer(v, "float32")
                self._s.set_weights_tensor(str(name), buf.addr, buf.shape)
        self._keep["weights"] = weights
        self._keep["w_key"] = _weights_key(weights)
        return self

    # ---- running --------------------------------------------------------------------------
    def _stream(self, stream):
        if stream is not None:
            return int(getattr(stream, "cuda_stream", stream))
        if self.model.target == "gpu" and "torch" in sys.modules:
            torch = sys.modules["torch"]
            if torch.cuda.is_available():
                return int(torch.cuda.current_stream(self.model.device).cuda_stream)
        return 0

    def run(self, data=None, *, x=None, graph=None, weights=None, stream=None):
        """Binds what is given (data: a PyG Data/Batch with edge_index and x; or x and graph
        separately; weights: a path or a state_dict), runs, and returns the outputs: the one
        output, or a dict by name when the model has several.

        What is already bound is not bound again: the same graph object (a torch edge_index
        also unchanged by its version counter), the same weights (a path with the same file
        time and size; a state_dict's tensors at the same addresses, unchanged), the same host
        features; CUDA features are always taken (a new tensor of the same shape only
        repoints).  A NumPy array changed in place is not noticed here: pass a new array, or
        call set_graph / set_features / set_weights, which always bind."""
        if weights is not None:
            key = _weights_key(weights)
            if key is None or key != self._keep.get("w_key"):
                self.set_weights(weights)
        if data is not None:
            if graph is None and hasattr(data, "edge_index"):
                graph = data
            if x is None:
                x = getattr(data, "x", None)
        if graph is not None:
            key = _graph_key(graph)
            if key is None or key != self._keep.get("graph_key"):
                self.set_graph(graph)
        if x is not None:
            key = _input_key(x)
            if is_cuda(x) or key is None or key != self._keep.get("x_key"):
                self.set_features(x)
        self._s.run(self._stream(stream))
        self._ran = True
        return self.outputs()

    def outputs(self):
        """The outputs of the last run (GPU: tensors over the session's buffers)."""
        names = self.model.output_names
        outs = {names[i]: self.output(i) for i in range(len(names))}
        return outs[names[0]] if len(names) == 1 else outs

    def output(self, i=0):
        """Output i (or by name).  f32 outputs as float32 [rows, cols]; b1 outputs as their
        packed words (int32 on torch, uint32 on NumPy: column c is bit c % 32 of word c // 32,
        1 = +1; bgnn.unpack_bits gives +-1 floats)."""
        if isinstance(i, str):
            i = self._s.output_index(i)
        info = self._s.output_info(i)
        shape = list(info["shape"])
        packed = info["dtype"] == "b1"
        if packed:
            shape[-1] = info["words_per_row"]
        if self.model.target == "gpu":
            return self._device_output(i, info)
        use_torch = want_torch(self.model.output)
        arr, addr = host_empty(tuple(shape), ("int32" if use_torch else "uint32") if packed else "float32",
                               use_torch)
        self._s.read_output(i, addr, info["bytes"])
        return arr

    def _device_output(self, i, info):
        view = _DeviceView(self, i)
        if want_torch(self.model.output):
            return torch_module(required=True).from_dlpack(view)
        return view   # for CuPy, JAX, Numba: __dlpack__ / __cuda_array_interface__

    def accuracy(self, split="test", output=0):
        """Accuracy in percent (argmax per row) against the data directory's labels."""
        return self._s.accuracy(int(output), split)

    def time(self, repeat=100, stream=None):
        """bgnn_session_time: median ms of one run (GPU: CUDA events, kernels only)."""
        return self._s.time(int(repeat), self._stream(stream))

    def prepare(self):
        self._s.prepare()
        return self

    @property
    def input_device_ptr(self):
        """The device address the model reads its features from (GPU): x.data_ptr() when the
        features are a float32 contiguous CUDA tensor (no copy)."""
        return self._s.input_device_ptr()

    def output_device_ptr(self, i=0):
        if isinstance(i, str):
            i = self._s.output_index(i)
        return self._s.output_device_ptr(i)


def _input_key(a):
    """What identifies a bound array: the object and, for torch, its version counter; None for
    paths and anything else (always bound again)."""
    if isinstance(a, (str, os.PathLike)) or a is None:
        return None
    return version_key(a)


def _graph_key(graph):
    """A graph's _input_key: its edge_index (held by the session, so the id stays unique), the
    node count and a batch's ptr / batch."""
    ei = getattr(graph, "edge_index", None)
    if ei is None:
        return _input_key(graph)
    return (_input_key(ei), getattr(graph, "num_nodes", None), _input_key(getattr(graph, "ptr", None)),
            _input_key(getattr(graph, "batch", None)))


def _weights_key(w):
    """A path: its name, file time and size; a mapping of torch tensors: each tensor's address,
    version, shape and dtype (state_dict() gives new objects over the same storage); None
    otherwise (NumPy mappings are bound every time)."""
    if isinstance(w, (str, os.PathLike)):
        try:
            st = os.stat(w)
        except OSError:
            return None
        return ("path", os.fspath(w), st.st_mtime_ns, st.st_size)
    if not hasattr(w, "items"):
        return None
    key = []
    for name, v in w.items():
        if not is_torch(v):
            return None
        key.append((name, v.data_ptr(), v._version, tuple(v.shape), str(v.dtype), str(v.device)))
    return tuple(key)


class _DeviceView:
    """An output's device buffer for consumers: __dlpack__ (torch.from_dlpack, CuPy, JAX) and
    __cuda_array_interface__ (torch.as_tensor, Numba); holds the session alive."""

    def __init__(self, session, i):
        self._session = session
        self._i = i
        self._info = session._s.output_info(i)
        self._ptr = session._s.output_device_ptr(i)

    def __dlpack_device__(self):
        return (2, self._session.model.device)  # kDLCUDA

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        # the kernels ran on the stream bgnn was given (PyTorch's current one): nothing to sync
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return self._session._s.output_dlpack(self._i, self._session.model.device, versioned)

    @property
    def __cuda_array_interface__(self):
        shape = list(self._info["shape"])
        packed = self._info["dtype"] == "b1"
        if packed:
            shape[-1] = self._info["words_per_row"]
        if not hasattr(self, "_token"):  # counts as a live view until this object dies
            self._token = self._session._s.output_dlpack(self._i, self._session.model.device)
        return {"shape": tuple(shape), "typestr": "<u4" if packed else "<f4", "data": (self._ptr, False),
                "version": 3, "strides": None, "stream": None}
