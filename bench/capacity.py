#!/usr/bin/env python3
"""capacity.py - the largest graph one H100 / H200 holds, per example model (issue 14, "on paper").

    python3 bench/capacity.py BGNNC [--markdown] [--check DOC]

For every example model at the widths of Cora (1433 features, hidden 64, 7 classes), PubMed
(500, 64, 3) and the Reddit-sized benchmark graph (602, 128, 41; bench/scaled_models.py), runs
`BGNNC MODEL --stats --json` at that dataset's nodes and edges and prints the plan's device
bytes per node and per graph entry (plan/stats.c: every buffer: graph arrays, features,
parameters, intermediates) and the most nodes whose buffers fit on each device at that
dataset's entries per node (`largest_graph`: an H100 80GB's free bytes after a CUDA context, as
measured; an H200 141GB's about 139 GiB, not measured here), with that as a multiple of the
dataset.  On paper: nothing runs on a GPU.  --check DOC (ctest docs.capacity_up_to_date): exit 1
unless DOC holds the Markdown table exactly as printed (docs/performance.md keeps it).  Not counted: the features' CSR that the runtime
adds where they are sparse (8 bytes a stored value, about 8 a row; Cora's 1.3 % of 1433 is
under 160 bytes a node) and the cubin.  Needs only the Python standard library."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scaled_models import ROOT, scaled_model  # noqa: E402

# name: (features, hidden, classes, nodes, directed edges) as bench/models_bench.py sets them up
DATASETS = {
    'cora': (1433, 64, 7, 2708, 10556),
    'pubmed': (500, 64, 3, 19717, 88648),
    'reddit': (602, 128, 41, 232965, 114646484),
}
MODELS = ['gcn_bin', 'gcn_full', 'gcn_fp32', 'sage_bin', 'sage_full', 'indgcn_bin', 'indgcn_full',
          'saint_bin', 'saint_full']


def stats(bgnnc, path, n, e):
    out = subprocess.run([bgnnc, path, '--stats', '--json', '--nodes=%d' % n, '--edges=%d' % e],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('bgnnc')
    ap.add_argument('--markdown', action='store_true', help='a Markdown table')
    ap.add_argument('--check', metavar='DOC', help='exit 1 unless DOC holds the Markdown table as printed')
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ds, (F, H, C, n, e) in DATASETS.items():
            for m in MODELS:
                src = os.path.join(ROOT, 'examples', m + '.bgnn')
                path = src if ds == 'cora' else scaled_model(m, ds, F, H, C, tmp)
                s = stats(a.bgnnc, path, n, e)
                mem, big = s['device_memory'], s['largest_graph']
                rows.append((m, ds, mem['per_node'], mem['per_edge'], mem['at_sizes'], big['entries_per_node'],
                             big['h100_80gb']['nodes'], big['h200_141gb']['nodes'], n))
    table = ['| model | widths of | bytes a node | bytes a graph entry | at the dataset | E/N |'
             ' largest N, H100 80GB | largest N, H200 141GB |', '|---|---|---|---|---|---|---|---|']
    for m, ds, pn, pe, at, epn, h100, h200, n in rows:
        table.append('| %s | %s | %.0f | %.0f | %.1f MB | %.1f | %.1fM (%.0fx) | %.1fM (%.0fx) |'
                     % (m, ds, pn, pe, at / 1e6, epn, h100 / 1e6, h100 / n, h200 / 1e6, h200 / n))
    table = '\n'.join(table) + '\n'
    if a.check:
        if table not in open(a.check).read():
            sys.stdout.write(table)
            sys.exit('%s does not hold the table above (bench/capacity.py BGNNC --markdown): update it' % a.check)
        print('%s holds the capacity table (%d rows)' % (a.check, len(rows)))
    elif a.markdown:
        sys.stdout.write(table)
    else:
        print('%-12s %-7s %10s %8s %12s %8s %14s %14s' % ('model', 'widths', 'B/node', 'B/entry', 'at dataset',
                                                         'E/N', 'N max H100', 'N max H200'))
        for m, ds, pn, pe, at, epn, h100, h200, n in rows:
            print('%-12s %-7s %10.0f %8.0f %10.1fMB %8.1f %14.0f %14.0f' % (m, ds, pn, pe, at / 1e6, epn, h100, h200))

if __name__ == '__main__':
    main()
