#!/usr/bin/env python3
"""check_parity.py - compare `bgnnc run ... --target cpu` with the PyTorch forward.

  python3 tools/train/check_parity.py --bgnnc /tmp/bgt/bgnnc \
      --model examples/gcn_bin.bgnn --weights examples/weights/gcn_bin_cora.safetensors \
      --dataset cora [--data-dir ../shared/data] [--kind gcn_bin]
  python3 tools/train/check_parity.py --bgnnc BGNNC --all [--markdown]
  python3 tools/train/check_parity.py --bgnnc BGNNC --tu [--markdown]   # examples/tu/ (graphs)

For each model it runs bgnnc (logits = the log_softmax output) and bgnn_ref.ref_forward (the
exact semantics in PyTorch, exact=True) on the same safetensors and reports:
  * argmax agreement on the test nodes, in %, not counting nodes where either side has an
    exact tie between the two best classes;
  * the maximum relative error  max_i ||a_i - b_i||_inf / ||b_i||_inf  over all nodes;
  * the test accuracy both sides compute.
Pass: agreement >= 99.9 % and relative error <= 1e-4.  Exit status 1 on any failure.
--tu checks every examples/weights/tu/KIND_FORM_DATASET.safetensors against
examples/tu/KIND_FORM_DATASET.bgnn (tu_ref.ref_forward): pass = the same prediction on every
graph; bit-identical logits are reported too (tu_ref follows the default pipeline's orders).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bgnn_ref  # noqa: E402

KINDS = ['gcn_fp32', 'gcn_full', 'gcn_bin', 'sage_full', 'sage_bin', 'indgcn_full', 'indgcn_bin',
         'saint_full', 'saint_bin']
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))


def example_path(kind, dataset):
    if dataset == 'cora':
        return os.path.join(REPO, 'examples', kind + '.bgnn')
    return os.path.join(REPO, 'examples', dataset, kind + '.bgnn')


def load_tensors(path):
    from safetensors.torch import load_file
    return {k: v.to(torch.float32).contiguous() for k, v in load_file(path).items()}


def two_best_tie(lp):
    s = np.sort(lp, axis=1)
    return s[:, -1] == s[:, -2]


def check(bgnnc, model_file, weights, ds, kind, threads=1):
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, 'logits.npy')
        cmd = [bgnnc, 'run', model_file, '--data', os.path.join(args.data_dir, ds.name),
               '--weights', weights, '--target', 'cpu', '--logits', out]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            return {'ok': False, 'error': 'bgnnc failed (%d): %s' % (p.returncode, p.stdout.strip())}
        a = np.load(out).astype(np.float32)
    ref = bgnn_ref.ref_forward(kind, ds, load_tensors(weights), exact=True).numpy()
    if a.shape != ref.shape:
        return {'ok': False, 'error': 'shape %s vs %s' % (a.shape, ref.shape)}
    te = ds.test_idx
    ties = two_best_tie(a[te]) | two_best_tie(ref[te])
    same = (a[te].argmax(1) == ref[te].argmax(1))
    n_eff = int((~ties).sum())
    agree = 100.0 * float(same[~ties].sum()) / max(n_eff, 1)
    den = np.maximum(np.abs(ref).max(axis=1), 1e-30)
    rel = float((np.abs(a - ref).max(axis=1) / den).max())
    absd = float(np.abs(a - ref).max())
    y = ds.y
    acc_b = 100.0 * float((a[te].argmax(1) == y[te]).mean())
    acc_t = 100.0 * float((ref[te].argmax(1) == y[te]).mean())
    mism = np.nonzero(~same)[0]
    return {'ok': agree >= 99.9 and rel <= 1e-4, 'agree': agree, 'ties': int(ties.sum()),
            'rel': rel, 'abs': absd, 'acc_bgnn': acc_b, 'acc_torch': acc_t,
            'all_nodes_agree': 100.0 * float((a.argmax(1) == ref.argmax(1)).mean()),
            'mismatch_nodes': [int(te[i]) for i in mism[:10]]}


def check_tu(bgnnc, name, data_dir):
    import tu_ref
    kind, dsn = name.rsplit('_', 1)
    ds = tu_ref.TUDataset(data_dir, dsn)
    w = os.path.join(REPO, 'examples', 'weights', 'tu', name + '.safetensors')
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, 'logits.npy')
        p = subprocess.run([bgnnc, 'run', os.path.join(REPO, 'examples', 'tu', name + '.bgnn'), '--data',
                            os.path.join(data_dir, dsn), '--weights', w, '--target', 'cpu', '--logits', out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            return {'ok': False, 'error': 'bgnnc failed (%d): %s' % (p.returncode, p.stdout.strip())}
        a = np.load(out).astype(np.float32)
    ref = tu_ref.ref_forward(kind, ds, load_tensors(w), exact=True).numpy()
    if a.shape != ref.shape:
        return {'ok': False, 'error': 'shape %s vs %s' % (a.shape, ref.shape)}
    same = a.argmax(1) == ref.argmax(1)
    return {'ok': bool(same.all()), 'bitexact': bool(np.array_equal(a.view(np.uint32), ref.view(np.uint32))),
            'abs': float(np.abs(a - ref).max()), 'differ': int((~same).sum()), 'graphs': len(same),
            'acc_bgnn': 100.0 * float((a.argmax(1) == ds.y).mean()),
            'acc_torch': 100.0 * float((ref.argmax(1) == ds.y).mean())}


def main_tu():
    import tu_ref
    fails = 0
    if args.markdown:
        print('| model | graphs | same prediction | bit-identical logits | max abs. error | acc bgnnc (all graphs) | acc PyTorch | pass |')
        print('|---|---|---|---|---|---|---|---|')
    for dsn in tu_ref.TU:
        for kind in tu_ref.KINDS:
            name = '%s_%s' % (kind, dsn)
            if not os.path.exists(os.path.join(REPO, 'examples', 'weights', 'tu', name + '.safetensors')):
                continue
            r = check_tu(args.bgnnc, name, args.data_dir)
            fails += not r['ok']
            if 'error' in r:
                print('%s: FAIL %s' % (name, r['error']))
            elif args.markdown:
                print('| %s | %d | %d / %d | %s | %.2e | %.2f %% | %.2f %% | %s |' % (
                    name, r['graphs'], r['graphs'] - r['differ'], r['graphs'], 'yes' if r['bitexact'] else 'no',
                    r['abs'], r['acc_bgnn'], r['acc_torch'], 'yes' if r['ok'] else 'NO'))
            else:
                print('%s: %d of %d graphs predicted differently, logits %s (max abs err %.2e), '
                      'accuracy (all graphs) bgnnc %.2f%% torch %.2f%% -> %s' % (
                          name, r['differ'], r['graphs'], 'bit-identical' if r['bitexact'] else 'differ',
                          r['abs'], r['acc_bgnn'], r['acc_torch'], 'PASS' if r['ok'] else 'FAIL'))
    sys.exit(1 if fails else 0)


def main():
    global args
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--bgnnc', default='bgnnc')
    p.add_argument('--data-dir', default=bgnn_ref.default_data_dir())
    p.add_argument('--model', help='.bgnn file')
    p.add_argument('--kind', choices=KINDS, help='default: the .bgnn file name')
    p.add_argument('--weights')
    p.add_argument('--dataset', default='cora')
    p.add_argument('--all', action='store_true',
                   help='every examples/weights/KIND_DATASET.safetensors that exists')
    p.add_argument('--tu', action='store_true', help='the graph classifiers of examples/tu/')
    p.add_argument('--markdown', action='store_true')
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.tu:
        main_tu()
    jobs = []
    if args.all:
        for dsn in ('cora', 'citeseer'):
            for k in KINDS:
                w = os.path.join(REPO, 'examples', 'weights', '%s_%s.safetensors' % (k, dsn))
                if os.path.exists(w):
                    jobs.append((example_path(k, dsn), w, dsn, k))
    else:
        kind = args.kind or os.path.splitext(os.path.basename(args.model))[0]
        jobs.append((args.model, args.weights, args.dataset, kind))
    dss = {}
    fails = 0
    if args.markdown:
        print('| model | dataset | test argmax agreement | exact ties | max rel. error | max abs. error '
              '| test acc bgnnc | test acc PyTorch | pass |')
        print('|---|---|---|---|---|---|---|---|---|')
    for model_file, w, dsn, kind in jobs:
        ds = dss.setdefault(dsn, bgnn_ref.Dataset(args.data_dir, dsn))
        r = check(args.bgnnc, model_file, w, ds, kind)
        fails += not r['ok']
        if 'error' in r:
            print('%s %s: FAIL %s' % (kind, dsn, r['error']))
        elif args.markdown:
            print('| %s | %s | %.2f %% | %d | %.2e | %.2e | %.2f %% | %.2f %% | %s |'
                  % (kind, dsn, r['agree'], r['ties'], r['rel'], r['abs'], r['acc_bgnn'],
                     r['acc_torch'], 'yes' if r['ok'] else 'NO'))
        else:
            print('%s %s: argmax agreement %.2f%% on test (%d exact ties left out; all nodes %.2f%%), '
                  'max rel err %.2e (abs %.2e), test acc bgnnc %.2f%% torch %.2f%% -> %s%s'
                  % (kind, dsn, r['agree'], r['ties'], r['all_nodes_agree'], r['rel'], r['abs'],
                     r['acc_bgnn'], r['acc_torch'], 'PASS' if r['ok'] else 'FAIL',
                     '' if r['ok'] else ' mismatching test nodes %s' % r['mismatch_nodes']))
    sys.exit(1 if fails else 0)


if __name__ == '__main__':
    main()
