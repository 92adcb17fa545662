#!/usr/bin/env python3
"""collect.py - merge run_jobs.py results (seed ranges split over several jobs), print the
accuracy table and install the chosen weights.

  python3 tools/train/collect.py --results DIR [DIR...] --pick gcn_bin=gcn_bin_kd8 \
      [--install examples/weights] [--markdown]
  python3 tools/train/collect.py --results DIR --prune     # (GPU machine) keep one weight file a group

Jobs are grouped by name with the trailing `_hN` (seed range) removed; a group's name is
`VARIANT_DATASET`.  For every (model, dataset) the installed file is the saved seed with the best
validation accuracy among the group's jobs (ties: lower validation loss), re-saved with metadata
naming the 10-seed result.
"""
import argparse
import glob
import json
import os
import re

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--results', nargs='+', required=True)
    p.add_argument('--pick', nargs='*', default=[], help='MODEL=VARIANT: which variant to install')
    p.add_argument('--install', default=None)
    p.add_argument('--markdown', action='store_true')
    p.add_argument('--gpu', default='H200', help="the GPU of the jobs' --device cuda (metadata)")
    p.add_argument('--prune', action='store_true',
                   help="delete every job's .safetensors but the one --install would take from its "
                        'group (so that only those travel back from the GPU machine)')
    a = p.parse_args()
    groups = {}
    for d in a.results:
        for f in sorted(glob.glob(os.path.join(d, '*.json'))):
            name = re.sub(r'_h\d+$', '', os.path.basename(f)[:-5])
            j = json.load(open(f))
            g = groups.setdefault(name, {'model': j['model'], 'dataset': j['dataset'], 'runs': [],
                                         'files': [], 'argv': j['argv']})
            g['runs'] += j['runs']
            st = f[:-5] + '.safetensors'
            if os.path.exists(st):
                sel = max(j['runs'], key=lambda r: (r['val_acc'], -r['val_loss']))
                g['files'].append((sel['val_acc'], -sel['val_loss'], st, sel))
    picks = dict(kv.split('=') for kv in a.pick)
    if a.prune:
        for g in groups.values():
            keep = max(g['files'])[2] if g['files'] else None
            for f in g['files']:
                if f[2] != keep:
                    os.remove(f[2])
    print('| variant | model | dataset | seeds | test acc mean +- std | val acc mean | seeds (test %) |')
    print('|---|---|---|---|---|---|---|')
    for name in sorted(groups):
        g = groups[name]
        te = np.array([r['test_acc'] for r in g['runs']]) * 100
        va = np.array([r['val_acc'] for r in g['runs']]) * 100
        seeds = sorted(r['seed'] for r in g['runs'])
        print('| %s | %s | %s | %d | %.2f +- %.2f | %.2f | %s |' % (
            name, g['model'], g['dataset'], len(seeds), te.mean(), te.std(), va.mean(),
            ' '.join('%.1f' % v for v in te)))
        variant = name[:-len(g['dataset']) - 1]
        if a.install and picks.get(g['model'], g['model']) == variant and g['files']:
            from safetensors import safe_open
            from safetensors.torch import save_file
            best = max(g['files'])
            src, sel = best[2], best[3]
            with safe_open(src, 'pt') as fh:
                meta = dict(fh.metadata())
                tensors = {k: fh.get_tensor(k) for k in fh.keys()}
            args = [w for w in g['argv'] if not w.startswith('--')] and g['argv']
            clean, skip = [], False
            for w in args:
                if skip:
                    skip = False
                    continue
                if w in ('--out', '--json', '--seed-start', '--seeds', '--data-dir', '--device',
                         '--kd-cache', '--kd-wait'):
                    skip = True
                    continue
                if w not in ('--quiet', '--write-kd-cache'):
                    clean.append(w)
            meta.update({
                'seed': str(sel['seed']), 'epoch': str(sel['epoch']),
                'test_acc': '%.4f' % sel['test_acc'], 'val_acc': '%.4f' % sel['val_acc'],
                'command': 'python3 tools/train/train.py %s --seed %d' % (' '.join(clean), sel['seed']),
                'seeds': str(len(seeds)), 'seeds_test_acc_mean': '%.4f' % (te.mean() / 100),
                'seeds_test_acc_std': '%.4f' % (te.std() / 100),
                'picked': 'best validation accuracy of %d seeds' % len(seeds),
                'trained_on': meta.get('device', 'cpu') if 'cuda' not in g['argv']
                else 'cuda (%s), exact export/eval on cpu' % a.gpu,
            })
            meta.pop('device', None)
            os.makedirs(a.install, exist_ok=True)
            out = os.path.join(a.install, '%s_%s.safetensors' % (g['model'], g['dataset']))
            save_file(tensors, out, metadata=meta)
            print('    -> %s (seed %d, val %.4f, test %.4f)' % (out, sel['seed'], sel['val_acc'], sel['test_acc']))


if __name__ == '__main__':
    main()
