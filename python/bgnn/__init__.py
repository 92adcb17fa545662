"""bgnn - binary graph neural networks: compile a .bgnn model and run it on PyTorch / PyG /
NumPy data, on the GPU (CUDA tensors in place, outputs as tensors without a copy) or on the
CPU reference interpreter.

    import bgnn
    model = bgnn.compile("examples/gcn_bin.bgnn", target="cpu")
    s = model.session(weights="examples/weights/gcn_bin_cora.safetensors", data="../shared/data/cora")
    s.run()
    print(s.accuracy("test"))                     # 81.30

    out = model(data, weights=net.state_dict())   # a PyG Data (x, edge_index), a state_dict

Errors raise bgnn.BgnnError carrying the C library's diagnostics.  bgnn.export turns a trained
PyTorch model of tools/train (GCN-bin, Bi-GCN, GCN) into a .bgnn file and safetensors weights.
README.md ("Python") and docs/api.md describe the package."""
from . import _bgnn
from ._bgnn import BgnnError
from ._model import Model, Session
from . import export
from ._safetensors import load as load_safetensors, save as save_safetensors

__version__ = "0.1.0"


def version():
    """The C library's version ("0.1.0")."""
    return _bgnn.version()


def compile(source, **kwargs):  # noqa: A001 (bgnn.compile is the obvious name)
    """Model(source, **kwargs): a .bgnn path, a .cubin path or model text."""
    return Model(source, **kwargs)


def unpack_bits(words, cols):
    """+-1 floats [rows, cols] from a b1 output's packed words [rows, ceil(cols / 32)]."""
    from ._arrays import is_torch, numpy_module
    np = numpy_module()
    w = words.cpu().numpy() if is_torch(words) else np.asarray(words)
    w = w.astype(np.uint32)
    bits = (w[..., :, None] >> np.arange(32, dtype=np.uint32)) & 1
    bits = bits.reshape(w.shape[:-1] + (w.shape[-1] * 32,))[..., :cols]
    return np.where(bits == 1, 1.0, -1.0).astype(np.float32)


__all__ = ["BgnnError", "Model", "Session", "compile", "export", "load_safetensors", "save_safetensors",
           "unpack_bits", "version"]
