#!/usr/bin/env python3
"""collect_tu.py - merge train_tu.py results (folds split over jobs), print the 10-fold table
(test accuracy mean +- std, population std, per dataset and model) and install fold 0's weights.

  python3 tools/train/collect_tu.py --results DIR [DIR...] [--install examples/weights/tu]
  python3 tools/train/collect_tu.py --results DIR --prune   # (GPU machine) keep fold-0 weights only

Results are grouped by the (model, dataset) in each JSON; the installed file is
examples/weights/tu/MODEL_DATASET.safetensors (the name of examples/tu/MODEL_DATASET.bgnn), the
job's --out of the job that trained fold 0, with the 10-fold result added to its metadata.
"""
import argparse
import glob
import json
import os

import numpy as np

KINDS = ['%s_%s' % (k, f) for k in ('gin', 'gcn') for f in ('fp32', 'full', 'bin')]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--results', nargs='+', required=True)
    p.add_argument('--install', default=None)
    p.add_argument('--prune', action='store_true')
    p.add_argument('--gpu', default='H100', help="the GPU of the jobs' --device cuda (metadata)")
    a = p.parse_args()
    groups = {}
    for d in a.results:
        for f in sorted(glob.glob(os.path.join(d, '*.json'))):
            j = json.load(open(f))
            g = groups.setdefault((j['model'], j['dataset']), {'runs': [], 'fold0': None})
            g['runs'] += j['runs']
            st = f[:-5] + '.safetensors'
            if any(r['fold'] == 0 for r in j['runs']):
                g['fold0'] = (st if os.path.exists(st) else None, j['argv'])
            elif a.prune and os.path.exists(st):
                os.remove(st)
    datasets = [d for d in ('mutag', 'proteins', 'enzymes', 'nci1') if any(k[1] == d for k in groups)]
    print('| model | ' + ' | '.join(datasets) + ' |')
    print('|---|' + '---|' * len(datasets))
    for kind in KINDS:
        cells = []
        for ds in datasets:
            g = groups.get((kind, ds))
            if not g:
                cells.append('-')
                continue
            te = np.array([r['test_acc'] for r in g['runs']]) * 100
            ep = [r.get('epochs_run', 0) for r in g['runs']]
            cells.append('%.1f +- %.1f%s' % (te.mean(), te.std(), '' if len(te) == 10 else ' (%d folds)' % len(te)))
            g['summary'] = (te, min(ep), max(ep))
        print('| %s | %s |' % (kind, ' | '.join(cells)))
    print()
    for (kind, ds), g in sorted(groups.items()):
        te, e0, e1 = g['summary']
        print('%s %s: %d folds, epochs run %d..%d, picked epochs %s' % (
            kind, ds, len(te), e0, e1, ' '.join(str(r['epoch']) for r in sorted(g['runs'], key=lambda r: r['fold']))))
        if a.install and g['fold0'] and g['fold0'][0]:
            from safetensors import safe_open
            from safetensors.torch import save_file
            with safe_open(g['fold0'][0], 'pt') as fh:
                meta = dict(fh.metadata())
                tensors = {k: fh.get_tensor(k) for k in fh.keys()}
            meta.update({'folds': str(len(te)), 'folds_test_acc_mean': '%.4f' % (te.mean() / 100),
                         'folds_test_acc_std': '%.4f' % (te.std() / 100),
                         'trained_on': 'cuda (%s), exact eval on cpu' % a.gpu if meta.get('device') == 'cuda'
                         else meta.get('device', 'cpu')})
            meta.pop('device', None)
            os.makedirs(a.install, exist_ok=True)
            out = os.path.join(a.install, '%s_%s.safetensors' % (kind, ds))
            save_file(tensors, out, metadata=meta)
            print('    -> %s (fold 0: test %s)' % (out, meta.get('test_acc')))


if __name__ == '__main__':
    main()
