"""_arrays.py - arrays in and out of the C library: NumPy arrays and PyTorch tensors (CPU or
CUDA) become contiguous buffers of the dtype bgnn wants plus an address; outputs become
PyTorch tensors when torch is available, else NumPy arrays.  torch is only imported when the
caller uses it (or asks for torch outputs)."""
import importlib
import sys


def torch_module(required=False):
    """torch if it is importable (imported only when needed), else None."""
    mod = sys.modules.get("torch")
    if mod is not None:
        return mod
    try:
        return importlib.import_module("torch")
    except ImportError:
        if required:
            raise
        return None


def numpy_module(required=True):
    try:
        return importlib.import_module("numpy")
    except ImportError:
        if required:
            raise ImportError("bgnn needs NumPy (or PyTorch) for this: pip install numpy") from None
        return None


def is_torch(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def is_cuda(x):
    return is_torch(x) and x.is_cuda


class HostBuffer:
    """A C-contiguous host copy (or view) of x with dtype 'float32', 'int64' or 'int32'; .addr
    is its address, .shape its shape; keep the object alive while the address is in use."""

    def __init__(self, x, dtype):
        if is_torch(x):
            torch = sys.modules["torch"]
            t = x.detach()
            if t.is_cuda:
                t = t.cpu()
            t = t.to(getattr(torch, dtype)).contiguous()
            self.obj, self.addr, self.shape = t, t.data_ptr(), tuple(t.shape)
        else:
            np = numpy_module()
            a = np.ascontiguousarray(np.asarray(x), dtype=dtype)
            self.obj, self.addr, self.shape = a, a.ctypes.data, tuple(a.shape)

    def __len__(self):
        return self.shape[0] if self.shape else 1


def want_torch(output):
    if output == "torch":
        torch_module(required=True)
        return True
    if output == "numpy":
        return False
    return torch_module() is not None


def host_empty(shape, dtype, use_torch):
    """An uninitialised C-contiguous host array and its address (dtype 'float32'/'int32')."""
    if use_torch:
        torch = torch_module(required=True)
        t = torch.empty(shape, dtype=getattr(torch, dtype))
        return t, t.data_ptr()
    np = numpy_module()
    a = np.empty(shape, dtype=dtype)
    return a, a.ctypes.data


def version_key(x):
    """What identifies x's contents cheaply: the object, and torch's in-place version counter."""
    return (id(x), getattr(x, "_version", None), getattr(x, "data_ptr", lambda: None)())
