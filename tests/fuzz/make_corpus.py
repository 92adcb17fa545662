#!/usr/bin/env python3
"""make_corpus.py - (re)builds the seed corpora in tests/fuzz/corpus/<target>/.

    python3 tests/fuzz/make_corpus.py BGNNC

BGNNC is a built bgnnc (for the manifests: --emit=cuda embeds each example's manifest; and,
when NVRTC is available, one real cubin).  Seeds: the repository's own inputs (examples/,
tests/parse, tests/passes, tests/diag and tests/diag/data) plus small hand-made valid and
invalid files of every format the loaders read (graph files too: edge lists, .npy edge
arrays, .npz archives).  Files under corpus/*/regress-* (inputs that
once crashed) are kept as they are.  Needs only the Python standard library."""
import glob, json, os, re, shutil, struct, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def reset(target):
    d = os.path.join(OUT, target)
    if os.path.isdir(d):
        for f in os.listdir(d):
            if not f.startswith("regress-"):
                os.remove(os.path.join(d, f))


def copy(target, paths, prefix):
    seen = set()
    for p in sorted(paths):
        rel = os.path.relpath(p, ROOT).replace("/", "_")
        with open(p, "rb") as f:
            data = f.read()
        if data not in seen:  # the diag data directories share files
            seen.add(data)
            put(target, prefix + rel, data)


# ---- .npy ------------------------------------------------------------------------------
def npy(descr, shape, payload, version=(1, 0), fortran=False, pad=True):
    hdr = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(" + "".join("%d," % s for s in shape) + ")" if len(shape) == 1 else "(" + ", ".join(str(s) for s in shape) + ")")
    hsz = 4 if version[0] >= 2 else 2
    total = 6 + 2 + hsz + len(hdr) + 1
    if pad:
        hdr += " " * ((64 - total % 64) % 64)
    hdr += "\n"
    enc = "utf8" if version[0] == 3 else "latin1"
    h = hdr.encode(enc)
    ln = struct.pack("<I" if hsz == 4 else "<H", len(h))
    return b"\x93NUMPY" + bytes(version) + ln + h + payload


def npy_seeds():
    t = "npy"
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/data/*/*.npy")), "")
    put(t, "f4_2x3.npy", npy("<f4", (2, 3), struct.pack("<6f", 1, -2, 3.5, 0, 1e30, -0.0)))
    put(t, "f8_3.npy", npy("<f8", (3,), struct.pack("<3d", 1, float("inf"), -7)))
    put(t, "i4_2x2.npy", npy("<i4", (2, 2), struct.pack("<4i", 0, -1, 2**31 - 1, -2**31)))
    put(t, "i8_4.npy", npy("<i8", (4,), struct.pack("<4q", 0, 1, -1, 2**62)))
    put(t, "u1_5.npy", npy("|u1", (5,), bytes([0, 1, 2, 255, 7])))
    put(t, "b1_3.npy", npy("|b1", (3,), bytes([0, 1, 1])))
    put(t, "v2_f4.npy", npy("<f4", (1, 2), struct.pack("<2f", 1, 2), version=(2, 0)))
    put(t, "v3_f4.npy", npy("<f4", (2,), struct.pack("<2f", 1, 2), version=(3, 0)))
    put(t, "fortran_1col.npy", npy("<f4", (3, 1), struct.pack("<3f", 1, 2, 3), fortran=True))
    put(t, "fortran_2x2.npy", npy("<f4", (2, 2), struct.pack("<4f", 1, 2, 3, 4), fortran=True))
    put(t, "empty_0x4.npy", npy("<f4", (0, 4), b""))
    put(t, "rank0.npy", npy("<f4", (), struct.pack("<f", 1)).replace(b"'shape': ()", b"'shape': ()"))
    put(t, "rank3.npy", npy("<f4", (1, 1, 2), struct.pack("<2f", 1, 2)))
    put(t, "bad_bigendian.npy", npy(">f4", (2,), struct.pack(">2f", 1, 2)))
    put(t, "bad_truncated.npy", npy("<f8", (4, 4), struct.pack("<3d", 1, 2, 3)))
    put(t, "bad_huge_shape.npy", npy("<f4", (2**40, 2**30), b"\0" * 16))
    put(t, "bad_hlen.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    put(t, "bad_magic.npy", b"\x93NUMPZ\x01\x00\x10\x00{}              \n")
    put(t, "bad_dict.npy", npy("<f4", (2,), b"\0" * 8).replace(b"'fortran_order'", b"'fortran_order' ", 1))


# ---- .mtx ------------------------------------------------------------------------------
def mtx_seeds():
    t = "mtx"
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/data/*/*.mtx")), "")
    put(t, "pattern_general.mtx", "%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 3\n1 2\n2 3\n3 1\n")
    put(t, "real_symmetric.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n1 1 1.5\n2 1 -2e3\n4 3 0.25\n3 3 7\n")
    put(t, "integer_general.mtx", "%%MatrixMarket matrix coordinate integer general\n%\n\n2 2 3\n1 1 5\n1 2 -1\n1 2 9\n")
    put(t, "empty_graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 0\n")
    put(t, "bad_nonsquare.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 3\n")
    put(t, "bad_index0.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 1\n")
    put(t, "bad_count.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 5\n1 1\n")
    put(t, "bad_array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n")
    put(t, "bad_huge.mtx", "%%MatrixMarket matrix coordinate pattern general\n99999999999 2 1\n1 1\n")
    put(t, "crlf.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\r\n2 2 1\r\n2 1\r\n")


# ---- .safetensors ------------------------------------------------------------------------
def st(tensors, meta=None, raw_header=None):
    hdr, data = {}, b""
    if meta is not None:
        hdr["__metadata__"] = meta
    for name, (dtype, shape, payload) in tensors.items():
        hdr[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    h = raw_header if raw_header is not None else json.dumps(hdr).encode()
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds():
    t = "safetensors"
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/data/weights/*.safetensors")), "")
    put(t, "f32_mixed_ranks.safetensors", st({
        "a": ("F32", (), struct.pack("<f", 1)),
        "b.weight": ("F32", (2, 3), struct.pack("<6f", *range(6))),
        "c": ("F32", (1, 1, 1, 2), struct.pack("<2f", 1, 2))}, meta={"format": "pt"}))
    put(t, "f16_bf16.safetensors", st({
        "h": ("F16", (3,), struct.pack("<3H", 0x3c00, 0x7c00, 0x8001)),
        "bf": ("BF16", (2,), struct.pack("<2H", 0x3f80, 0x7fc1))}))
    put(t, "ints.safetensors", st({
        "i": ("I32", (2,), struct.pack("<2i", -1, 2**31 - 1)),
        "l": ("I64", (1, 2), struct.pack("<2q", -2**63, 5))}))
    put(t, "escaped_name.safetensors", st({"conv\\u00e9.w\"x": ("F32", (1,), struct.pack("<f", 3))}))
    put(t, "empty.safetensors", st({}))
    put(t, "bad_overlap.safetensors", st({}, raw_header=b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                          b'"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}') + b"\0" * 12)
    put(t, "bad_dtype.safetensors", st({"x": ("F64", (1,), b"\0" * 8)}))
    put(t, "bad_hlen.safetensors", struct.pack("<Q", 2**40) + b"{}")
    put(t, "bad_json.safetensors", st({}, raw_header=b'{"a":{"dtype":"F32","shape":[1,],"data_offsets":[0,4]}') + b"\0" * 4)
    put(t, "bad_shape.safetensors", st({"x": ("F32", (2**31, 2**31), b"\0" * 4)}))
    put(t, "deep.safetensors", st({}, raw_header=b'{"__metadata__":' + b"[" * 70 + b"]" * 70 + b"}"))


# ---- edge lists and .npy edge arrays (fuzz_edgelist) ------------------------------------------
def edgelist_seeds():
    t = "edgelist"
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/data/*/edges.txt")), "")
    put(t, "plain.txt", "0 1\n1 0\n1 2\n2 1\n")
    put(t, "snap_header.txt", "# Directed graph\n# Nodes: 4 Edges: 3\n# FromNodeId\tToNodeId\n0\t1\n1\t3\n3\t0\n")
    put(t, "weighted_csv.txt", "% weighted\n0,1,0.5\n1, 2, -3e2\n\n2 0 7\n")
    put(t, "crlf.txt", "# nodes = 3\r\n0 2\r\n2 0\r\n")
    put(t, "empty.txt", "# nothing\n")
    put(t, "bad_token.txt", "0 1\n1 x\n")
    put(t, "bad_negative.txt", "0 -1\n")
    put(t, "bad_range.txt", "# nodes: 2\n0 5\n")
    put(t, "bad_columns.txt", "0 1 2 3\n")
    put(t, "bad_huge.txt", "0 99999999999999999999\n")
    put(t, "edge_index.npy", npy("<i8", (2, 3), struct.pack("<6q", 0, 1, 2, 1, 2, 0)))
    put(t, "edge_index_i4.npy", npy("<i4", (2, 2), struct.pack("<4i", 0, 1, 1, 0)))
    put(t, "bad_transposed.npy", npy("<i8", (3, 2), struct.pack("<6q", 0, 1, 1, 2, 2, 0)))
    put(t, "bad_negative.npy", npy("<i8", (2, 1), struct.pack("<2q", 0, -5)))
    put(t, "bad_float.npy", npy("<f4", (2, 1), struct.pack("<2f", 0, 1)))


# ---- .npz (fuzz_npz) -------------------------------------------------------------------------
def npz(members, compress=True, zip64=True):
    """An archive as numpy.savez writes it (zip64 extras in the local headers)."""
    import io
    import zipfile
    bio = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(bio, "w", method) as z:
        for name, data in members:
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    return bio.getvalue()


def npy_bytes_str(s):
    return npy("|S%d" % len(s), (), s.encode())


def npz_seeds():
    t = "npz"
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/data/*/graph.npz")), "")
    shape = npy("<i8", (2,), struct.pack("<2q", 3, 3))
    csr = [("indices.npy", npy("<i4", (3,), struct.pack("<3i", 1, 2, 0))),
           ("indptr.npy", npy("<i4", (4,), struct.pack("<4i", 0, 1, 2, 3))),
           ("format.npy", npy_bytes_str("csr")), ("shape.npy", shape),
           ("data.npy", npy("<f8", (3,), struct.pack("<3d", 1, 1, 1)))]
    put(t, "csr_deflate.npz", npz(csr))
    put(t, "csr_stored.npz", npz(csr, compress=False))
    put(t, "csr_plain_zip.npz", npz(csr, compress=False, zip64=False))
    put(t, "csc_unicode_format.npz", npz([(n, d) if n != "format.npy" else
                                          ("format.npy", npy("<U3", (), "csc".encode("utf-32-le")))
                                          for n, d in csr]))
    put(t, "coo.npz", npz([("row.npy", npy("<i8", (2,), struct.pack("<2q", 0, 2))),
                           ("col.npy", npy("<i8", (2,), struct.pack("<2q", 1, 1))),
                           ("format.npy", npy_bytes_str("coo")), ("shape.npy", shape)]))
    put(t, "bad_bsr.npz", npz([("format.npy", npy_bytes_str("bsr")), ("shape.npy", shape)]))
    put(t, "bad_indptr.npz", npz([(n, d) if n != "indptr.npy" else
                                  ("indptr.npy", npy("<i4", (4,), struct.pack("<4i", 0, 2, 1, 3))) for n, d in csr]))
    put(t, "bad_index.npz", npz([(n, d) if n != "indices.npy" else
                                 ("indices.npy", npy("<i4", (3,), struct.pack("<3i", 1, 9, 0))) for n, d in csr]))
    good = npz(csr, compress=False)
    put(t, "bad_truncated.npz", good[:-30])
    put(t, "bad_crc.npz", good[:100] + bytes([good[100] ^ 0x55]) + good[101:])


# ---- manifests and cubins ------------------------------------------------------------------
def elf_with(manifest, lenbytes=8):
    """A minimal ELF64 LE image laid out like a cubin: .nv.global.init holding
    bgnn_manifest_len then bgnn_manifest, with section-relative .symtab values."""
    strtab = b"\0bgnn_manifest\0bgnn_manifest_len\0"
    shstr = b"\0.strtab\0.symtab\0.nv.global.init\0.shstrtab\0"
    data = struct.pack("<Q" if lenbytes == 8 else "<I", len(manifest)) + manifest + b"\0"
    off_data = 64
    off_str = off_data + len(data)
    off_sym = (off_str + len(strtab) + 7) & ~7
    syms = b"\0" * 24
    syms += struct.pack("<IBBHQQ", 1, 0x11, 0, 3, lenbytes, len(manifest) + 1)
    syms += struct.pack("<IBBHQQ", 15, 0x11, 0, 3, 0, lenbytes)
    off_shstr = off_sym + len(syms)
    off_sh = (off_shstr + len(shstr) + 7) & ~7
    def sh(name, typ, off, size, link=0, info=0, ent=0):
        return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, link, info, 1, ent)
    shdrs = sh(0, 0, 0, 0) + sh(1, 3, off_str, len(strtab)) + sh(9, 2, off_sym, len(syms), 1, 1, 24) \
        + sh(17, 1, off_data, len(data)) + sh(33, 3, off_shstr, len(shstr))
    eh = b"\x7fELF" + bytes([2, 1, 1, 0x33, 7]) + b"\0" * 7
    eh += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, off_sh, 0, 64, 56, 0, 64, 5, 4)
    img = bytearray(eh + data)
    img += strtab
    img += b"\0" * (off_sym - len(img)) + syms + shstr
    img += b"\0" * (off_sh - len(img)) + shdrs
    return bytes(img)


def manifest_seeds(bgnnc):
    t = "manifest"
    # the examples, and a wide BNN product (its launch has smem=, its plan arch sm_90a; not the
    # smallest: the bad_* seeds and the real cubin come from the examples)
    models = sorted(glob.glob(os.path.join(ROOT, "examples/*.bgnn"))) + [os.path.join(ROOT, "bench/bnn_wide_1024.bgnn")]
    smallest = None
    for m in models:
        for arch in ("sm_90", "sm_80"):
            cu = subprocess.run([bgnnc, m, "--emit=cuda", "--arch=" + arch], check=True,
                                capture_output=True, text=True).stdout
            body = cu.split("bgnn_manifest[", 1)[1].split("{", 1)[1].split("}", 1)[0]
            man = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)).rstrip(b"\0")
            name = os.path.basename(m)[:-5]
            if arch == "sm_90":
                put(t, name + ".manifest", man)
                put(t, name + ".elf", elf_with(man, 8 if len(man) % 2 else 4))
                if m.startswith(os.path.join(ROOT, "examples")) and (smallest is None or len(man) < len(smallest[1])):
                    smallest = (m, man)
            elif name == "gcn_bin":
                put(t, name + "_sm80.manifest", man)
    man = smallest[1]
    put(t, "bad_version.manifest", re.sub(rb"^bgnn-manifest [0-9]+", b"bgnn-manifest 7", man, count=1))
    put(t, "bad_bgnn_version.elf", elf_with(man.replace(b"bgnn 0.1.0", b"bgnn 9.9.9", 1)))
    put(t, "bad_truncated.manifest", man[: len(man) // 2])
    put(t, "bad_truncated.elf", elf_with(man)[:200])
    # One real cubin (NVRTC), when this machine can make one.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.cubin")
        r = subprocess.run([bgnnc, smallest[0], "-o", out, "--arch=sm_90"], capture_output=True)
        if r.returncode == 0:
            with open(out, "rb") as f:
                put(t, "nvrtc_" + os.path.basename(smallest[0])[:-5] + ".cubin", f.read())
        else:
            print("make_corpus: no NVRTC cubin (%s)" % r.stderr.decode().strip(), file=sys.stderr)


def tune_seeds():
    """the tuning database and the learned predictor's model (fuzz_tune)"""
    t = "tune"
    db = os.path.join(ROOT, "docs/logs/tune_db_synthetic_h200_2026-11-26.txt")
    with open(db, "rb") as f:
        good = f.read()
    put(t, "db.tune", good)
    put(t, "db_one.tune", b"bgnn-tune 1\n# gpu: Test GPU, sm_90\nbspmm.BBB fast k=64\tn=11.5 d=2.5 dmax=7 g=0\tblock=64\t8.000\t9.000\t100\n")
    put(t, "bad_db_unsorted.tune", b"bgnn-tune 1\n# gpu: G, sm_90\nb\tk\tdefault\t1.000\t1.000\t1\na\tk\tdefault\t1.000\t1.000\t1\n")
    put(t, "bad_db_fields.tune", b"bgnn-tune 1\n# gpu: G, sm_90\na\tk\tdefault\t1.000\n")
    put(t, "bad_db_number.tune", b"bgnn-tune 1\n# gpu: G, sm_90\na\tk\tdefault\tnan\t1.000\t1\n")
    put(t, "bad_db_truncated.tune", good[: len(good) // 2])
    put(t, "model.model", b"bgnn-sched-model 1\n# gpu: G; graphs 2; records 9\n"
        b"tree bspmm.BBB fast\tblock\t3\nnode 0 0 12 1 2\nleaf 1 64\nleaf 2 128\n"
        b"tree bspmm.BBB fast\tchunk\t5\nnode 0 1 20.0971251 1 2\nleaf 1 512\nnode 2 4 9.5 3 4\nleaf 3 1024\nleaf 4 256\n")
    put(t, "bad_model_cycle.model", b"bgnn-sched-model 1\ntree f x\tblock\t2\nnode 0 0 1 0 1\nleaf 1 64\n")
    put(t, "bad_model_feature.model", b"bgnn-sched-model 1\ntree f x\tblock\t3\nnode 0 9 1 1 2\nleaf 1 1\nleaf 2 2\n")
    put(t, "bad_model_missing.model", b"bgnn-sched-model 1\ntree f x\tblock\t2\nleaf 0 64\n")
    put(t, "model_regress.model", b"bgnn-sched-model 2\nregress bspmm.BBB fast\t2\t2\t0.1\t0.25\t0.05\n"
        b"range 0 20 0 30 0 100 0 10 0 20 -50 200 0 1 0 1 0 20 0 20\npoint 0 0 0 0 0 0\npoint 128 0 512 1 0 0\n"
        b"rtree 3\nnode 0 10 7.5 1 2\nvalue 1 -1\nvalue 2 1\nrtree 3\nnode 0 16 4 1 2\nvalue 1 0.5\nvalue 2 -0.5\n")


def model_seeds():
    t = "model"
    copy(t, glob.glob(os.path.join(ROOT, "examples/*.bgnn")), "")
    copy(t, glob.glob(os.path.join(ROOT, "tests/parse/*.bgnn")), "")
    copy(t, glob.glob(os.path.join(ROOT, "tests/passes/*/*.bgnn")), "")
    copy(t, glob.glob(os.path.join(ROOT, "tests/diag/*.bgnn")), "")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for t in ("model", "npy", "mtx", "safetensors", "manifest", "edgelist", "npz", "tune"):
        reset(t)
    model_seeds()
    npy_seeds()
    mtx_seeds()
    safetensors_seeds()
    edgelist_seeds()
    npz_seeds()
    tune_seeds()
    manifest_seeds(os.path.abspath(sys.argv[1]))


if __name__ == "__main__":
    main()
