#!/usr/bin/env python3
"""variants.py - trains every type-correct precision variant of a model (issue 17 point 3,
BitGNN's tuning utilities; docs/tuning.md "Precision variants") and writes the accuracy-latency
Pareto front.

  # train: `bgnnc tune --variants MODEL -o DIR` writes the variants; each is trained by one
  # recipe (ir_model.IRModel over its lowered IR, Adam, the epoch of best validation accuracy),
  # exported, and scored by `bgnnc run --target cpu` (bgnn's exact inference): results as JSON
  python3 tools/train/variants.py train --model examples/gcn_bin.bgnn --dataset cora \
      --bgnnc build/bgnnc --json R.json [--seeds 2] [--epochs 300] [--jobs N] [--weights-dir DIR]
  # report: the JSONs plus bench/variants_pareto.sh's GPU times -> a markdown table and a PNG
  python3 tools/train/variants.py report --results R1.json ... --times DIR --gpu NAME \
      --md docs/variants.md --png docs/variants_pareto.png

A variant's accuracy is the mean over --seeds of the test accuracy of the seed's selected epoch
(what `bgnnc run` prints for the exported tensors); the front: no other variant of the same model
and dataset is at least as accurate and at least as fast, and better in one.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def list_variants(bgnnc, model, outdir):
    r = subprocess.run([bgnnc, 'tune', '--variants', model, '-o', outdir], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('bgnnc tune --variants %s: %s' % (model, r.stderr.strip()))
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r'^(v\d{3})\s+(.*?)\s+(\d+) of (\d+) operands 1-bit(\s+\(the model\))?', line)
        if m:
            files = [f for f in os.listdir(outdir) if f.endswith('_%s.bgnn' % m.group(1))]
            out.append({'id': m.group(1), 'precisions': m.group(2), 'bits': int(m.group(3)),
                        'operands': int(m.group(4)), 'is_model': bool(m.group(5)),
                        'file': os.path.join(outdir, files[0])})
    return out


def bgnn_accuracy(bgnnc, model, data_dir, weights):
    """(train, val, test) % of `bgnnc run --target cpu --json` on the exported tensors"""
    r = subprocess.run([bgnnc, 'run', model, '--data', data_dir, '--weights', weights, '--target', 'cpu', '--json'],
                       capture_output=True, text=True)
    try:
        acc = json.loads(r.stdout)['accuracy'] if r.returncode == 0 else None
    except (ValueError, KeyError):
        acc = None
    if not acc:
        raise RuntimeError('bgnnc run %s: %s' % (model, (r.stderr or r.stdout).strip()))
    return float(acc['train']), float(acc['val']), float(acc['test'])


def train_variant(args, ds, v, seed, weights_path):
    import torch
    import torch.nn.functional as Fn
    from ir_model import IRModel, lowered_ir
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    net = IRModel(lowered_ir(args.bgnnc, v['file']), ds, dropout=args.dropout, source=v['file'])
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    X = torch.from_numpy(ds.x)
    y = torch.from_numpy(ds.y)
    tr, va = torch.from_numpy(ds.train_idx), torch.from_numpy(ds.val_idx)
    best, best_key = None, None
    for epoch in range(args.epochs):
        net.train()
        opt.zero_grad()
        out = net(X)
        loss = Fn.nll_loss(out[tr], y[tr])
        loss.backward()
        opt.step()
        if epoch % args.eval_every and epoch != args.epochs - 1:
            continue
        net.eval()
        with torch.no_grad():
            out = net(X)
            acc = float((out[va].argmax(1) == y[va]).float().mean())
            vloss = float(Fn.nll_loss(out[va], y[va]))
        key = (acc, -vloss)
        if best_key is None or key > best_key:
            best_key, best = key, (epoch, net.tensors())
    save_file(best[1], weights_path)
    return best[0]


_DATASETS = {}  # a worker's datasets, read once (with their graphs) for all the tasks it runs


def train_task(task):
    """one (variant, seed): train, export, score; run in a worker process"""
    import torch
    import bgnn_ref
    args, v, s, w = task
    torch.set_num_threads(args.threads)
    key = (args.data_dir, args.dataset)
    if key not in _DATASETS:
        _DATASETS[key] = bgnn_ref.Dataset(args.data_dir, args.dataset)
    ds = _DATASETS[key]
    t0 = time.time()
    epoch = train_variant(args, ds, v, s, w)
    tra, val, test = bgnn_accuracy(args.bgnnc, v['file'], os.path.join(args.data_dir, args.dataset), w)
    return {'seed': s, 'epoch': epoch, 'train': tra, 'val': val, 'test': test, 'seconds': round(time.time() - t0, 1)}


def cmd_train(args):
    from concurrent.futures import ProcessPoolExecutor
    import bgnn_ref
    args.data_dir = args.data_dir or bgnn_ref.default_data_dir()
    tmp = tempfile.mkdtemp(prefix='bgnn_variants_')
    variants = list_variants(args.bgnnc, args.model, tmp)
    if args.only:
        variants = [v for v in variants if v['id'] in args.only.split(',')]
    wdir = args.weights_dir or tmp
    os.makedirs(wdir, exist_ok=True)
    tasks = [(args, v, s, os.path.join(wdir, '%s_%s_s%d.safetensors' % (os.path.basename(v['file'])[:-5], args.dataset, s)))
             for v in variants for s in range(args.seeds)]
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        runs = list(ex.map(train_task, tasks))
    results = []
    for k, v in enumerate(variants):
        rs = runs[k * args.seeds:(k + 1) * args.seeds]
        tests = [r['test'] for r in rs]
        res = dict(v, file=os.path.basename(v['file']), model=os.path.basename(args.model)[:-5],
                   dataset=args.dataset, runs=rs, test_mean=float(np.mean(tests)),
                   test_std=float(np.std(tests)), val_mean=float(np.mean([r['val'] for r in rs])))
        results.append(res)
        print('%s %-62s test %5.2f +- %4.2f  (%d seeds, %.0f s)' % (v['id'], v['precisions'], res['test_mean'],
              res['test_std'], args.seeds, sum(r['seconds'] for r in rs)), flush=True)
    if args.json:
        write_json(args.json, args, results)
    return 0


def write_json(path, args, results):
    doc = {'model': args.model, 'dataset': args.dataset, 'epochs': args.epochs, 'lr': args.lr,
           'dropout': args.dropout, 'weight_decay': args.weight_decay, 'seeds': args.seeds,
           'variants': results}
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def read_times(tdir, model, dataset):
    """variant id -> GPU time (us) from bench/variants_pareto.sh's table.txt."""
    path = os.path.join(tdir, '%s_%s' % (model, dataset), 'table.txt')
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'^(v\d{3})\s+(\S+)\s+(\S+)\s+', line)
            if m and m.group(3) != '-':
                out[m.group(1)] = float(m.group(3))
    return out


def pareto(points):
    """indices of points (acc, time) that no other point dominates"""
    front = []
    for i, (a, t) in enumerate(points):
        if not any((a2 >= a and t2 <= t and (a2 > a or t2 < t)) for j, (a2, t2) in enumerate(points) if j != i):
            front.append(i)
    return front


def cmd_report(args):
    inputs = {os.path.realpath(p) for p in args.results}
    for flag, out in (('--md', args.md), ('--png', args.png)):
        if out and os.path.realpath(out) in inputs:
            sys.exit('variants.py: %s %s would overwrite an input results file; choose another path' % (flag, out))
    groups = []
    for path in args.results:
        with open(path) as f:
            doc = json.load(f)
        vs = doc['variants']
        model, dataset = vs[0]['model'], vs[0]['dataset']
        times = read_times(args.times, model, dataset)
        for v in vs:
            v['time'] = times.get(v['id'])
        groups.append((model, dataset, doc, vs))
    lines = ['<!-- written by tools/train/variants.py report; do not edit -->', '',
             '# Precision variants: accuracy against latency', '',
             'Every type-correct precision variant of each model (`bgnnc tune --variants`), trained by one '
             'recipe (tools/train/variants.py train: tools/train/ir_model.py over the variant\'s lowered IR) and '
             'timed on the GPU (bench/variants_pareto.sh). Variants that compute the same function (an adjacency '
             'spelled F or B under the same normalisation) train to the same accuracy. Plot: '
             '[variants_pareto.png](variants_pareto.png); how it was made: docs/tuning.md "Precision variants".', '']
    for model, dataset, doc, vs in groups:
        timed = [v for v in vs if v['time'] is not None]
        front = set(timed[i]['id'] for i in pareto([(v['test_mean'], v['time']) for v in timed]))
        lines.append('### %s on %s' % (model, dataset))
        lines.append('')
        lines.append('%d variants, each trained %d seeds x %d epochs (lr %g, dropout %g, weight decay %g); '
                     'test accuracy of `bgnnc run --target cpu` on the exported tensors, mean +- std over the seeds; '
                     'time: `bgnnc run --target gpu --repeat 1000` (CUDA events, median) on the %s. **Bold**: the Pareto front.'
                     % (len(vs), doc['seeds'], doc['epochs'], doc['lr'], doc['dropout'], doc['weight_decay'], args.gpu))
        lines.append('')
        lines.append('| variant | precisions | 1-bit operands | test % | time us |')
        lines.append('|---|---|---|---|---|')
        for v in sorted(vs, key=lambda v: (v['time'] if v['time'] is not None else 1e9, -v['test_mean'])):
            b = '**' if v['id'] in front else ''
            name = v['id'] + (' (the model)' if v['is_model'] else '')
            lines.append('| %s%s%s | %s | %d of %d | %.2f +- %.2f | %s |' % (
                b, name, b, v['precisions'], v['bits'], v['operands'], v['test_mean'], v['test_std'],
                '%.1f' % v['time'] if v['time'] is not None else '-'))
        lines.append('')
    tmp = args.md + '.tmp'
    with open(tmp, 'w') as f:
        f.write('\n'.join(lines))
    os.replace(tmp, args.md)
    if args.png:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        ncols = min(2, len(groups))
        nrows = (len(groups) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
        for ax in axes.flat[len(groups):]:
            ax.set_visible(False)
        for ax, (model, dataset, doc, vs) in zip(axes.flat, groups):
            timed = [v for v in vs if v['time'] is not None]
            pts = [(v['test_mean'], v['time']) for v in timed]
            fr = sorted(pareto(pts), key=lambda i: pts[i][1])
            ax.scatter([p[1] for p in pts], [p[0] for p in pts], s=14, c='0.55', label='variant')
            ax.plot([pts[i][1] for i in fr], [pts[i][0] for i in fr], 'o-', c='C3', ms=5, label='Pareto front')
            for v in timed:
                if v['is_model']:
                    ax.scatter([v['time']], [v['test_mean']], marker='*', s=120, c='C0', zorder=5, label='the model')
            ax.set_title('%s, %s' % (model, dataset), fontsize=10)
            ax.set_xlabel('time us (%s)' % args.gpu)
            ax.set_ylabel('test accuracy %')
            ax.grid(alpha=0.3)
        axes.flat[0].legend(fontsize=7, loc='lower right')
        fig.tight_layout()
        fig.savefig(args.png + '.tmp.png', dpi=110)
        os.replace(args.png + '.tmp.png', args.png)
    print('wrote %s%s' % (args.md, (' and ' + args.png) if args.png else ''))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    t = sub.add_parser('train')
    t.add_argument('--model', required=True)
    t.add_argument('--dataset', required=True, choices=['cora', 'citeseer'])
    t.add_argument('--data-dir', default=None, help='default: bgnn_ref.default_data_dir() (../shared/data)')
    t.add_argument('--bgnnc', default='build/bgnnc')
    t.add_argument('--seeds', type=int, default=2)
    t.add_argument('--epochs', type=int, default=300)
    t.add_argument('--eval-every', type=int, default=5)
    t.add_argument('--lr', type=float, default=0.01)
    t.add_argument('--dropout', type=float, default=0.4)
    t.add_argument('--weight-decay', type=float, default=5e-4)
    t.add_argument('--threads', type=int, default=1, help='torch threads a job')
    t.add_argument('--jobs', type=int, default=os.cpu_count(), help='variants x seeds trained at once')
    t.add_argument('--only', default='', help='variant ids, comma separated')
    t.add_argument('--weights-dir', default=None, help='keep the exported tensors here')
    t.add_argument('--json', default=None)
    r = sub.add_parser('report')
    r.add_argument('--results', nargs='+', required=True)
    r.add_argument('--times', required=True, help='the variants/ directory of bench/variants_pareto.sh')
    r.add_argument('--gpu', required=True)
    r.add_argument('--md', required=True)
    r.add_argument('--png', default=None)
    a = ap.parse_args(argv)
    return cmd_train(a) if a.cmd == 'train' else cmd_report(a)


if __name__ == '__main__':
    sys.exit(main())
