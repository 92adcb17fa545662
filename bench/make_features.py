#!/usr/bin/env python3
"""make_features.py - writes random 0/1 float32 node features as a .npy (no numpy needed), for
timing models on a graph whose features are not in the data folder (PubMed here).
Usage: bench/make_features.py N F OUT.npy [density] - about density (default 0.1) of the
entries are 1.0, the rest 0.0 (bag-of-words-like, as Cora's); seed fixed (1)."""
import array
import random
import sys

n, f, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
density = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (n, f)
hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'  # data starts at a multiple of 64
rnd = random.Random(1)
data = array.array('f', (1.0 if rnd.random() < density else 0.0 for _ in range(n * f)))
with open(path, 'wb') as out:
    out.write(b'\x93NUMPY\x01\x00' + len(hdr).to_bytes(2, 'little') + hdr.encode())
    data.tofile(out)
