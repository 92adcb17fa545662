"""_safetensors.py - the safetensors format from Python without the safetensors package:
``save(tensors, path)`` (float32, written atomically) and ``load(path)`` (float32 / float16 /
bfloat16 / int32 / int64 as NumPy arrays).  Used by bgnn.export and the tests."""
import json
import os
import struct

from ._arrays import is_torch, numpy_module

_NP = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8", "F64": "<f8"}


def _as_f32(np, v):
    if is_torch(v):
        v = v.detach().to("cpu").float().numpy()
    return np.ascontiguousarray(np.asarray(v), dtype="<f4")


def save(tensors, path, metadata=None):
    """Writes {name: array or tensor} as F32 safetensors (float values; integer entries of a
    state_dict such as num_batches_tracked are skipped); temp file + rename."""
    np = numpy_module()
    items = []
    for name, v in tensors.items():
        kind = str(getattr(v, "dtype", "float"))
        if not any(k in kind for k in ("float", "half", "bfloat")):
            continue
        items.append((name, _as_f32(np, v)))
    header, off = {}, 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, a in items:
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for _, a in items:
                f.write(a.tobytes())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def load(path):
    """{name: NumPy array} of a safetensors file (BF16 widened to float32)."""
    np = numpy_module()
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        if t["dtype"] == "BF16":
            u = np.frombuffer(data[b:e], dtype="<u2").astype(np.uint32) << 16
            a = u.view(np.float32)
        else:
            a = np.frombuffer(data[b:e], dtype=_NP[t["dtype"]])
        out[name] = a.reshape(t["shape"]).copy()
    return out
