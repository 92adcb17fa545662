#!/usr/bin/env python3
"""tu_bench.py - graph-classification throughput on the TU datasets (issue 16, point 4): bgnn
against PyG, all in one run (bench/run_tu_bench.sh builds bench/tu_time and runs this).

For each dataset (mutag, proteins, enzymes, nci1) and architecture (gin, gcn), over the whole
dataset cut into batches of consecutive graphs, at batch sizes 1, 32, 1024 and all:
  PyG eager, PyG CUDA graph    the float model in torch_geometric (bench/tu_pyg.py)
  bgnn auto / layers / graphs  examples/tu/<arch>_bin_<ds>.bgnn through bench/tu_time (one prepared
                               session per batch, features already on the GPU), with
                               BGNN_BATCH_KERNEL=auto (the runtime's choice), layers (one launch
                               per op over the block-diagonal batch: the large-graph path) and
                               graphs (one block per graph: the small-graph kernel)
  bgnn per-graph               one run per graph: the auto row at batch 1 (the same sweep), drawn
                               at every batch size (it does not depend on B)
Each row: graphs/s (median sweep), batch-1 latency (the median-size graph, median of many runs,
CUDA events), peak device memory (PyG: torch.cuda.max_memory_allocated; bgnn: the plan's device
memory of the largest batch's session from `bgnnc --stats`, and the driver's free-memory drop over
all sessions), accuracy (argmax against graph_labels.npy), and for bgnn the largest difference of
its logits from the auto path's at the whole-dataset batch (0 = bit for bit).

  python3 bench/tu_bench.py --tu-time BUILD/tu_time --bgnnc BUILD/bgnnc --out OUT
      [--datasets mutag,nci1] [--models gin,gcn] [--batch-sizes 1,32,1024,all]
      [--systems pyg-eager,pyg-graph,bgnn-auto,bgnn-layers,bgnn-graphs] [--budget-s 300]
      [--model gcn=examples/mutag_gcn_bin.bgnn] [--weights gcn=W.safetensors | gcn=random]
      [--b1-graphs N] [--device cpu]
--model/--weights take {ds} for the dataset name.  --b1-graphs N: at batch size 1, the first N
graphs only (graphs/s over them).  --device cpu: a dry run of every path on the CPU (bgnn on its
reference interpreter; no CUDA graph), small repeats.  --report RESULTS.json: table and plot only.
Writes OUT/tu_results.json (after every measurement), OUT/tu_table.md, OUT/performance_tu.png.
"""
import argparse
import datetime
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tu_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = ('mutag', 'proteins', 'enzymes', 'nci1')
MODELS = ('gin', 'gcn')
SYSTEMS = ('pyg-eager', 'pyg-graph', 'bgnn-auto', 'bgnn-layers', 'bgnn-graphs')


def log(*a):
    print(*a, flush=True)


def templ(spec, arch, ds, default):
    for s in spec or []:
        k, _, v = s.partition('=')
        if k == arch:
            return v.replace('{ds}', ds)
    return default.replace('{ds}', ds)


def bgnn_paths(args, arch, ds):
    model = templ(args.model, arch, ds, os.path.join(ROOT, 'examples', 'tu', arch + '_bin_{ds}.bgnn'))
    stem = os.path.splitext(os.path.basename(model))[0]
    w = templ(args.weights, arch, ds, os.path.join(ROOT, 'examples', 'weights', 'tu', stem + '.safetensors'))
    return model, (w if w != 'random' and os.path.exists(w) else None)


def run_tu_time(args, argv, env, timeout):
    p = subprocess.run([args.tu_time] + argv, capture_output=True, text=True, timeout=timeout, env=env)
    res = None
    for line in p.stdout.splitlines():
        if line.startswith('RESULT '):
            res = json.loads(line[7:])
    if p.returncode != 0 or res is None or 'error' in res:
        err = p.stderr.strip().splitlines() or ['exit %d' % p.returncode]
        return {'error': ' | '.join(err[-3:])[:300]}
    return res


def plan_memory(args, model, lb):
    """The plan's device memory of a session at the largest batch's sizes (bgnnc --stats)."""
    if not args.bgnnc or not os.path.exists(args.bgnnc):
        return None
    p = subprocess.run([args.bgnnc, model, '--stats', '--nodes=%d' % lb['nodes'], '--edges=%d' % lb['edges'],
                        '--graphs=%d' % lb['graphs'], '--json'], capture_output=True, text=True, timeout=60)
    try:
        return int(json.loads(p.stdout)['device_memory']['at_sizes'])
    except (ValueError, KeyError):
        return None


def run_bgnn(args, arch, ds, kernel, B, ng, tmp):
    model, w = bgnn_paths(args, arch, ds)
    if not os.path.exists(model):
        return {'error': 'no model %s' % os.path.relpath(model, ROOT)}
    nb = (ng + B - 1) // B if B else 1
    if B == 1 and args.b1_graphs:
        nb = min(nb, args.b1_graphs)
    rep = max(3, min(args.repeat, int(args.target_s / max(nb * 30e-6, 1e-6))))
    logits = os.path.join(tmp, 'logits_%s_%s_%s_%d.bin' % (arch, ds, kernel, B))
    lrep = args.latency_repeat if B == 1 else min(args.latency_repeat, 20)
    argv = [model, '--data', os.path.join(args.data, ds), '--batch', str(B), '--repeat', str(rep),
            '--warmup', str(args.warmup), '--latency-repeat', str(lrep), '--logits', logits,
            '--target', 'cpu' if args.device == 'cpu' else 'gpu', '--max-batches', str(nb)]
    argv += ['--weights', w] if w else ['--random-weights', '1']
    env = dict(os.environ, BGNN_BATCH_KERNEL=kernel)
    r = run_tu_time(args, argv, env, timeout=args.step_timeout)
    r['model_file'] = os.path.relpath(model, ROOT)
    r['weights'] = os.path.relpath(w, ROOT) if w else 'random (seed 1)'
    if 'error' in r:
        return r
    r['bgnn_model'] = r.pop('model')
    r['mem_batch_bytes'] = plan_memory(args, model, r['largest_batch'])
    r['mem_sweep_bytes'] = r['mem_all_sessions_bytes'] if r['mem_all_sessions_bytes'] >= 0 else None
    r['logits'] = logits
    return r


def logits_diff(a, b):
    x, y = np.fromfile(a, dtype=np.float32), np.fromfile(b, dtype=np.float32)
    if x.shape != y.shape:
        return None
    return float(np.max(np.abs(x - y), initial=0.0)) if not np.array_equal(x, y) else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tu-time', default=os.path.join(ROOT, 'build-tu', 'tu_time'))
    ap.add_argument('--bgnnc', default=os.path.join(ROOT, 'build-tu', 'bgnnc'))
    ap.add_argument('--data', default=os.environ.get('BGNN_DATA_DIR', os.path.join(ROOT, '.carry', 'data')))
    ap.add_argument('--out', default=os.environ.get('OUT', '.'))
    ap.add_argument('--datasets', default=','.join(DATASETS))
    ap.add_argument('--models', default=','.join(MODELS), help='architectures: gin,gcn')
    ap.add_argument('--systems', default=','.join(SYSTEMS))
    ap.add_argument('--batch-sizes', default='1024,all,32,1', help='run in this order (all = whole dataset)')
    ap.add_argument('--model', action='append', metavar='ARCH=PATH', help='bgnn model of ARCH ({ds}: dataset)')
    ap.add_argument('--weights', action='append', metavar='ARCH=PATH', help='its weights, or ARCH=random')
    ap.add_argument('--pyg-weights', action='append', metavar='ARCH=PATH',
                    help='PyG weights (default examples/weights/tu/ARCH_fp32_{ds}.safetensors when present)')
    ap.add_argument('--hidden', type=int, default=64)
    ap.add_argument('--layers', type=int, default=3)
    ap.add_argument('--repeat', type=int, default=50, help='most timed sweeps per measurement')
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--target-s', type=float, default=0.5, help='about this long of timed sweeps each')
    ap.add_argument('--latency-repeat', type=int, default=500)
    ap.add_argument('--b1-graphs', type=int, default=0, help='batch size 1: only the first N graphs')
    ap.add_argument('--budget-s', type=float, default=300, help='skip what is left after this many seconds')
    ap.add_argument('--step-timeout', type=float, default=150)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--device', default='cuda', choices=('cuda', 'cpu'))
    ap.add_argument('--report', metavar='RESULTS_JSON', help='only table and plot from a results file')
    args = ap.parse_args()
    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    if args.report:
        with open(args.report) as f:
            j = json.load(f)
        tu_report.report(j['info'], j['results'], args.out)
        return
    import torch
    import tu_pyg
    if args.device == 'cuda' and not torch.cuda.is_available():
        sys.exit('tu_bench.py: no GPU (--device cpu for a dry run)')
    if args.device == 'cpu':
        args.repeat, args.warmup, args.latency_repeat, args.target_s = 3, 0, 5, 0.01
    dev = torch.device(args.device)
    try:
        import torch_geometric
        pygv = torch_geometric.__version__
    except ImportError:
        pygv = None
    dss, archs = args.datasets.split(','), args.models.split(',')
    systems = args.systems.split(',')
    bad = [x for x in dss if x not in DATASETS] + [x for x in archs if x not in MODELS] + \
        [x for x in systems if x not in SYSTEMS]
    if bad:
        sys.exit('tu_bench.py: unknown %s' % bad)
    if not pygv:
        log('no torch_geometric: PyG rows skipped')
        systems = [s for s in systems if not s.startswith('pyg')]
    sizes = [0 if b == 'all' else int(b) for b in args.batch_sizes.split(',')]
    drv = ''
    try:
        drv = subprocess.run(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    info = {'gpu': torch.cuda.get_device_name(0) if args.device == 'cuda' else 'cpu (dry run)', 'driver': drv,
            'torch': torch.__version__, 'torch_geometric': pygv, 'device': args.device,
            'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M'),
            'repeat': args.repeat, 'target_s': args.target_s, 'latency_repeat': args.latency_repeat,
            'b1_graphs': args.b1_graphs, 'datasets': {}}
    log('tu_bench: %s' % json.dumps(info))
    results = []
    res_path = os.path.join(args.out, 'tu_results.json')
    tmp = tempfile.mkdtemp(prefix='tu_bench_')

    def save():
        with open(res_path, 'w') as f:
            json.dump({'info': info, 'results': results}, f, indent=1)

    data = {}   # every dataset first: the loops below go batch size by batch size
    for ds in dss:
        t0 = time.time()
        try:
            tu = tu_pyg.load_tu(os.path.join(args.data, ds))
        except (OSError, ValueError, AssertionError) as e:
            log('== %s: data failed: %s' % (ds, e))
            continue
        ng = len(tu['ptr']) - 1
        tu['C'] = int(tu['y'].max()) + 1 if tu['y'] is not None else 2
        info['datasets'][ds] = {'graphs': ng, 'nodes': tu['n'], 'edges': len(tu['rows']),
                                'features': int(tu['x'].shape[1]), 'classes': tu['C']}
        data[ds] = (tu, ng, tu_pyg.graph_list(tu, 0, ng) if pygv else None)
        log('%s: %d graphs, %d nodes, %d edges (%.1f s)' % (ds, ng, tu['n'], len(tu['rows']), time.time() - t0))
    # batch size outermost (in --batch-sizes order: 1024, all, 32, 1), so that what the budget
    # cuts is the slow batch-1 sweeps of the last datasets, not the batch-1024 comparison
    for B in sizes:
        log('== batch size %s' % (B or 'all'))
        for ds, (tu, ng, glist) in data.items():
            for arch in archs:
                for system in systems:
                    r = {'dataset': ds, 'model': arch, 'system': system, 'batch': B}
                    if time.time() - t_start > args.budget_s:
                        r['error'] = 'skipped (time budget)'
                        results.append(r)
                        continue
                    t1 = time.time()
                    try:
                        if system.startswith('pyg'):
                            gl = glist[:args.b1_graphs] if B == 1 and args.b1_graphs else glist
                            pw = templ(args.pyg_weights, arch, ds, os.path.join(
                                ROOT, 'examples', 'weights', 'tu', arch + '_fp32_{ds}.safetensors'))
                            r.update(tu_pyg.run_pyg(arch, system[4:], tu, gl, B, args, dev, pw))
                        else:
                            r.update(run_bgnn(args, arch, ds, system[5:], B, ng, tmp))
                    except subprocess.TimeoutExpired:
                        r['error'] = 'timed out'
                    except Exception as e:   # noqa: BLE001 - one failure must not end the run
                        r['error'] = ('%s: %s' % (type(e).__name__, e)).splitlines()[0][:200]
                    r['wall_s'] = round(time.time() - t1, 1)
                    gc.collect()
                    if args.device == 'cuda':
                        torch.cuda.empty_cache()
                    log('  %-8s %-4s %-11s %s' % (ds, arch, system, tu_report.brief(r)))
                    results.append(r)
                    save()
    # exactness: every bgnn row's logits against the auto path's at the whole-dataset batch
    for r in results:
        ref = next((q for q in results if q['dataset'] == r['dataset'] and q['model'] == r['model'] and
                    q['system'] == 'bgnn-auto' and q['batch'] == 0 and q.get('logits')), None)
        if ref and r.get('logits') and r['graphs'] == ref['graphs']:
            r['max_abs_diff_vs_auto_all'] = logits_diff(r['logits'], ref['logits'])
    for r in results:
        r.pop('logits', None)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    info['total_s'] = round(time.time() - t_start, 1)
    save()
    tu_report.report(info, results, args.out)
    log('total %.0f s' % (time.time() - t_start))


if __name__ == '__main__':
    main()
