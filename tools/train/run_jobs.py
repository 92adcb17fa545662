#!/usr/bin/env python3
"""run_jobs.py - run several train.py jobs in parallel (e.g. on the GPU machine).

  python3 tools/train/run_jobs.py JOBS.txt --outdir DIR [--parallel 4] [--script train_tu.py]

JOBS.txt: one job a line, `NAME  train.py-arguments...` ('#' starts a comment).  Each job runs
`train.py ARGS --json DIR/NAME.json` (or --script, another script of this folder with those options) (OUTDIR in ARGS is replaced by DIR) with its log in DIR/NAME.log; the summary line of every job
is printed as it ends.
"""
import argparse
import os
import shlex
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument('jobs')
p.add_argument('--outdir', required=True)
p.add_argument('--parallel', type=int, default=4)
p.add_argument('--script', default='train.py', help='train.py or train_tu.py')
a = p.parse_args()
os.makedirs(a.outdir, exist_ok=True)
train = os.path.join(os.path.dirname(os.path.abspath(__file__)), a.script)
jobs = []
for ln in open(a.jobs):
    ln = ln.split('#', 1)[0].strip()
    if ln:
        name, rest = ln.split(None, 1)
        jobs.append((name, [w.replace('OUTDIR', a.outdir) for w in shlex.split(rest)]))
running = []
t0 = time.time()


def reap(block):
    while running and (block or any(pr.poll() is not None for _, pr, _ in running)):
        for item in list(running):
            name, pr, f = item
            if pr.poll() is not None:
                running.remove(item)
                f.close()
                tail = [ln for ln in open(os.path.join(a.outdir, name + '.log')) if 'test accuracy' in ln]
                print('[%5.0fs] %-28s rc=%d %s' % (time.time() - t0, name, pr.returncode,
                                                   tail[-1].strip() if tail else ''), flush=True)
        if block and running:
            time.sleep(0.5)
        if not block:
            break


for name, args in jobs:
    while len(running) >= a.parallel:
        reap(False)
        time.sleep(0.5)
    f = open(os.path.join(a.outdir, name + '.log'), 'w')
    cmd = [sys.executable, train] + args + ['--json', os.path.join(a.outdir, name + '.json'), '--quiet']
    running.append((name, subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT), f))
reap(True)
