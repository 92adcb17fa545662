#!/usr/bin/env python3
"""ncu_regions.py - where a kernel's time goes between its block barriers, from Nsight Compute's
SASS source page (`ncu --import R.ncu-rep --page source --csv --print-source sass > R.csv`, a
report taken with warp sampling, e.g. `--set full --warp-sampling-interval 0`).

The kernel's SASS is split at each BAR.SYNC into regions in address order (the per-graph
kernel's phases are straight-line code, so address order is time order).  For each region:
its warp-stall samples (about one per 32 cycles of an SM at interval 0), the share waiting at
a barrier (warps idle while others finish the phase), the warp instructions executed, and its
top stall reasons.  The last lines: the whole kernel's stall reasons.  Used for the lone-graph
profiles of docs/performance.md ("The lone graph's first barrier, sooner"):

    python3 bench/ncu_regions.py src_gin_bin.csv [--top 3] [--hot N]
    python3 bench/ncu_regions.py --self-test

--hot N also lists the N instructions with the most samples (address, samples, warp
instructions executed, the instruction, its stall reasons)."""
import argparse
import collections
import csv
import sys


def num(s):
    return int(s) if s not in ("", "-") else 0


SELF_TEST = """"Kernel Name","k",
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_barrier","stall_long_sb","stall_barrier (Not Issued)"
"0x100","      LDG.E R1, desc[UR4][R2.64]","1","4","0","0","0"
"0x110","      FADD R1, R1, R1","6","4","0","6","0"
"0x120","      BAR.SYNC.DEFER_BLOCKING 0x0","0","4","0","0","0"
"0x130","      UMOV UR8, URZ","9","4","9","0","9"
"0x140","      EXIT","2","4","0","0","0"
"""


def self_test():
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(SELF_TEST)
    g, w, _ = regions_of(f.name)
    assert [(r["from"], r["to"], r["samples"], r["instr"], r["why"]["barrier"]) for r in g] == \
        [(0, 0x20, 7, 12, 0), (0x30, 0x40, 11, 8, 9)], g
    assert w["long_sb"] == 6 and w["barrier"] == 9, w
    print("ncu_regions.py: self-test passed")


def regions_of(path):
    """The regions between barriers (dicts: from, to, samples, instr, why), the kernel's stall
    counts, and the page's rows with their column indices (for --hot)."""
    rows = list(csv.reader(open(path, newline="")))
    hi = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if hi is None:
        sys.exit(f"ncu_regions.py: {path}: no 'Address' / 'Source' header (not a --page source --csv file?)")
    hdr, data = rows[hi], [r for r in rows[hi + 1:] if len(r) == len(rows[hi])]
    if not data:
        sys.exit(f"ncu_regions.py: {path}: no instruction rows")
    ia, isrc = hdr.index("Address"), hdr.index("Source")
    iss = hdr.index("Warp Stall Sampling (All Samples)")
    iex = hdr.index("Instructions Executed")
    stalls = [(i, h[len("stall_"):]) for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    base = int(data[0][ia], 16)
    regions, cur, whole = [], None, collections.Counter()
    for r in data:
        addr = int(r[ia], 16) - base
        if cur is None:
            cur = {"from": addr, "to": addr, "samples": 0, "instr": 0, "why": collections.Counter()}
        cur["to"] = addr
        cur["samples"] += num(r[iss])
        cur["instr"] += num(r[iex])
        for i, name in stalls:
            cur["why"][name] += num(r[i])
            whole[name] += num(r[i])
        if "BAR.SYNC" in r[isrc] and num(r[iex]) > 0:
            regions.append(cur)
            cur = None
    if cur:
        regions.append(cur)
    cols = {"data": data, "addr": ia, "src": isrc, "samples": iss, "instr": iex, "stalls": stalls, "base": base}
    return regions, whole, cols


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=3, help="stall reasons shown per region")
    ap.add_argument("--hot", type=int, default=0, help="list the N instructions with the most samples")
    a = ap.parse_args()
    regions, whole, cols = regions_of(a.csv)
    data, ia, isrc, iss, iex = cols["data"], cols["addr"], cols["src"], cols["samples"], cols["instr"]
    stalls, base = cols["stalls"], cols["base"]
    total = sum(g["samples"] for g in regions) or 1
    print(f"{'region':>15} {'samples':>8} {'share':>6} {'barrier':>8} {'instr':>8}  top stalls")
    for g in regions:
        if not g["samples"] and not g["instr"]:
            continue
        top = ", ".join(f"{k} {v}" for k, v in g["why"].most_common(a.top) if v)
        print(f"{g['from']:6x}-{g['to']:6x} {g['samples']:8d} {100 * g['samples'] / total:5.1f}% "
              f"{g['why']['barrier']:8d} {g['instr']:8d}  {top}")
    print(f"kernel: {total} samples; stalls: " + ", ".join(f"{k} {v}" for k, v in whole.most_common(8) if v))
    if a.hot:
        print("hot instructions:")
        for r in sorted(data, key=lambda r: -num(r[iss]))[:a.hot]:
            why = ", ".join(f"{n} {num(r[i])}" for i, n in stalls if num(r[i]))
            print(f"{int(r[ia], 16) - base:6x} {num(r[iss]):5d} ex {num(r[iex]):5d}  {r[isrc].strip()[:56]:56}  {why}")


if __name__ == "__main__":
    main()
