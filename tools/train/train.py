#!/usr/bin/env python3
"""train.py - train the example models of bgnn in PyTorch and export safetensors.

  python3 tools/train/train.py --model gcn_bin --dataset cora --seed 0 --epochs 1000 \
      --out examples/weights/gcn_bin_cora.safetensors [--data-dir ../shared/data]
  python3 tools/train/train.py --model gcn_bin --dataset cora --seeds 10 [--out ...] [--json R.json]

The reported accuracies are those of bgnn's exact inference semantics (bgnn_ref.ref_forward)
on the exported tensors, i.e. what `bgnnc run` computes.  See tools/train/README.md.
"""
import argparse
import datetime
import json
import os
import shlex
import sys
import time

import numpy as np
import torch
import torch.nn.functional as Fn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bgnn_ref  # noqa: E402
from models import MODELS, export_tensors  # noqa: E402

DEFAULTS = {   # lr, dropout, weight decay
    'gcn_fp32': (0.01, 0.5, 5e-4),
    'gcn_full': (0.001, 0.4, 5e-4),
    'gcn_bin': (0.001, 0.4, 5e-4),
    'sage_full': (0.001, 0.4, 5e-4),
    'sage_bin': (0.001, 0.4, 5e-4),
    'indgcn_full': (0.001, 0.4, 5e-4),
    'indgcn_bin': (0.001, 0.4, 5e-4),
    'saint_full': (0.001, 0.4, 5e-4),
    'saint_bin': (0.001, 0.4, 5e-4),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--model', required=True, choices=sorted(MODELS))
    p.add_argument('--dataset', required=True, choices=['cora', 'citeseer'])
    p.add_argument('--data-dir', default=bgnn_ref.default_data_dir())
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--seeds', type=int, default=0, help='train seeds 0..S-1, report mean/std; '
                   '--out then gets the seed with the best validation accuracy')
    p.add_argument('--seed-start', type=int, default=0, help='with --seeds: first seed')
    p.add_argument('--epochs', type=int, default=1000)
    p.add_argument('--hidden', type=int, default=64, help='must match the .bgnn (64)')
    p.add_argument('--lr', type=float, default=None)
    p.add_argument('--dropout', type=float, default=None)
    p.add_argument('--weight-decay', type=float, default=None)
    p.add_argument('--select', choices=['loss', 'acc'], default='loss',
                   help='keep the epoch with the best validation loss (Bi-GCN) or accuracy')
    p.add_argument('--patience', type=int, default=0,
                   help='stop when the selection key has not improved for this many epochs (0: never)')
    p.add_argument('--lr-schedule', choices=['none', 'cosine'], default='none')
    p.add_argument('--kd', choices=['none'] + sorted(MODELS), default='none',
                   help='distil from a teacher of this kind trained with the same seed')
    p.add_argument('--kd-weight', type=float, default=0.5)
    p.add_argument('--kd-T', type=float, default=1.0)
    p.add_argument('--kd-cache', default='/tmp/bgnn_kd_cache')
    p.add_argument('--kd-wait', type=float, default=0,
                   help='wait up to this many seconds for another job (--write-kd-cache) to put '
                        'the teacher into --kd-cache before training it here')
    p.add_argument('--write-kd-cache', action='store_true',
                   help='put each trained seed into --kd-cache as a teacher for later --kd jobs '
                        '(what --kd would train: same model, dataset, seed, epochs, patience)')
    p.add_argument('--out', default=None)
    p.add_argument('--json', default=None, help='write per-seed results as JSON')
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--device', default='cpu', help='training device (cpu, cuda); export and '
                   'the reported accuracy always use the exact CPU forward')
    p.add_argument('--quiet', action='store_true')
    a = p.parse_args(argv)
    lr, do, wd = DEFAULTS[a.model]
    a.lr = lr if a.lr is None else a.lr
    a.dropout = do if a.dropout is None else a.dropout
    a.weight_decay = wd if a.weight_decay is None else a.weight_decay
    return a


def accuracy(logp, y, idx):
    return float((logp[idx].argmax(1) == y[idx]).float().mean())


def kd_cache_path(args, model, ds, seed):
    return os.path.join(args.kd_cache, '%s_%s_s%d_e%d_p%d.pt' % (model, ds.name, seed, args.epochs,
                                                                 args.patience))


def write_kd_cache(args, ds, res):
    os.makedirs(args.kd_cache, exist_ok=True)
    path = kd_cache_path(args, args.model, ds, res['seed'])
    lp = bgnn_ref.ref_forward(args.model, ds, res['tensors'], exact=False)
    tmp = '%s.%d.tmp' % (path, os.getpid())
    torch.save(lp, tmp)
    os.replace(tmp, path)


def teacher_logits(args, ds, seed):
    """Train (or load from the cache) the KD teacher for this seed; returns log-probs [N, C]."""
    os.makedirs(args.kd_cache, exist_ok=True)
    path = kd_cache_path(args, args.kd, ds, seed)
    t_end = time.time() + args.kd_wait
    while not os.path.exists(path) and time.time() < t_end:
        time.sleep(2)
    if os.path.exists(path):
        return torch.load(path).to(args.device)
    targs = parse_args(['--model', args.kd, '--dataset', ds.name, '--epochs', str(args.epochs),
                        '--patience', str(args.patience), '--kd-cache', args.kd_cache,
                        '--data-dir', args.data_dir, '--device', args.device, '--quiet'])
    write_kd_cache(targs, ds, train_one(targs, ds, seed))
    return torch.load(path).to(args.device)


def train_one(args, ds, seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    dev = torch.device(args.device)
    X = torch.from_numpy(ds.x).to(dev)
    y = torch.from_numpy(ds.y).to(dev)
    tr, va, te = (torch.from_numpy(i).to(dev) for i in (ds.train_idx, ds.val_idx, ds.test_idx))
    teacher = teacher_logits(args, ds, seed) if args.kd != 'none' else None
    torch.manual_seed(seed)
    model = MODELS[args.model](ds, hidden=args.hidden, dropout=args.dropout).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = None
    if args.lr_schedule == 'cosine':
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    best = None
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        opt.zero_grad()
        out = model(X)
        loss = Fn.nll_loss(out[tr], y[tr])
        if teacher is not None:
            T = args.kd_T
            kl = Fn.kl_div(Fn.log_softmax(out / T, dim=1), Fn.log_softmax(teacher / T, dim=1),
                           log_target=True, reduction='batchmean') * T * T
            loss = (1 - args.kd_weight) * loss + args.kd_weight * kl
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        model.eval()
        with torch.no_grad():
            out = model(X)
            vl = float(Fn.nll_loss(out[va], y[va]))
            vacc = accuracy(out, y, va)
        key = (vl,) if args.select == 'loss' else (-vacc, vl)
        if best is None or key < best[0]:
            best = (key, epoch, {k: v.clone() for k, v in model.state_dict().items()})
        elif args.patience and epoch - best[1] >= args.patience:
            break
        if not args.quiet and (epoch % 100 == 0 or epoch == args.epochs - 1):
            print('  epoch %4d loss %.4f val_loss %.4f val_acc %.4f test_acc %.4f (%.0fs)'
                  % (epoch, float(loss.detach()), vl, vacc, accuracy(out, y, te), time.time() - t0),
                  flush=True)
    model.load_state_dict(best[2])
    model.eval()
    tensors = export_tensors(model)
    with torch.no_grad():
        fast = model(X).cpu()
    ref = bgnn_ref.ref_forward(args.model, ds, tensors, exact=True)
    agree = float((fast.argmax(1) == ref.argmax(1)).float().mean())
    y, tr, va, te = y.cpu(), tr.cpu(), va.cpu(), te.cpu()
    return {
        'seed': seed, 'epoch': best[1], 'tensors': tensors,
        'val_acc': accuracy(ref, y, va), 'test_acc': accuracy(ref, y, te),
        'train_acc': accuracy(ref, y, tr), 'val_loss': float(Fn.nll_loss(ref[va], y[va])),
        'torch_eval_agreement': agree, 'seconds': time.time() - t0,
    }


def save(path, res, args, ds, extra=None):
    from safetensors.torch import save_file
    meta = {
        'model': args.model, 'dataset': ds.name, 'seed': str(res['seed']),
        'epoch': str(res['epoch']), 'epochs': str(args.epochs),
        'test_acc': '%.4f' % res['test_acc'], 'val_acc': '%.4f' % res['val_acc'],
        'command': 'python3 tools/train/train.py ' + ' '.join(shlex.quote(a) for a in sys.argv[1:]),
        'torch': torch.__version__, 'date': datetime.date.today().isoformat(),
        'device': 'cpu', 'generator': 'bgnn tools/train/train.py',
    }
    meta.update(extra or {})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    save_file(res['tensors'], path, metadata=meta)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    ds = bgnn_ref.Dataset(args.data_dir, args.dataset)
    seeds = list(range(args.seed_start, args.seed_start + args.seeds)) if args.seeds else [args.seed]
    results = []
    for s in seeds:
        r = train_one(args, ds, s)
        results.append(r)
        if args.write_kd_cache:
            write_kd_cache(args, ds, r)
        print('%s %s seed %d: epoch %d val %.4f test %.4f (torch-eval/ref argmax agreement %.4f, %.0fs)'
              % (args.model, args.dataset, s, r['epoch'], r['val_acc'], r['test_acc'],
                 r['torch_eval_agreement'], r['seconds']), flush=True)
    te = np.array([r['test_acc'] for r in results]) * 100
    print('%s %s: test accuracy %.2f +- %.2f over %d seed(s) [%s]'
          % (args.model, args.dataset, te.mean(), te.std(), len(te),
             ' '.join('%.1f' % v for v in te)))
    pick = max(results, key=lambda r: (r['val_acc'], -r['val_loss']))
    if args.out:
        extra = {}
        if len(results) > 1:
            extra = {'seeds_test_acc_mean': '%.4f' % (te.mean() / 100),
                     'seeds_test_acc_std': '%.4f' % (te.std() / 100),
                     'seeds': str(len(results)), 'picked': 'best validation accuracy'}
        save(args.out, pick, args, ds, extra)
        print('wrote %s (seed %d, test %.4f)' % (args.out, pick['seed'], pick['test_acc']))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, 'w') as f:
            json.dump({'model': args.model, 'dataset': args.dataset, 'argv': sys.argv[1:],
                       'mean': te.mean(), 'std': te.std(),
                       'runs': [{k: v for k, v in r.items() if k != 'tensors'} for r in results]},
                      f, indent=1)


if __name__ == '__main__':
    main()
