#!/usr/bin/env python3
"""train_predictor.py - the learned schedule predictor (issue 17 point 4, docs/tuning.md): trains
small decision trees on `bgnnc tune --records` files and writes them as a text model that the C
side (plan/sched_model.c) reads and applies with no Python.

    tools/train_predictor.py RECORDS.tsv [...] -o MODEL [--depth D] [--holdout GRAPHKEY,...]

Records: one TSV line per schedule point measured (cli/tune.c): gpu, graph key, N, entries, mean
degree, its coefficient of variation, largest degree, skewness, hub fraction, span, op key,
schedule, time us, default us.  For every (graph, op key) the fastest point measured is the
label, unless it is within 2% of the default (bgnnc tune's rule): then the default.  One tree per (op family, knob): the family is the op key's first two fields ("bspmm.BBB
fast"); the knobs are block, grid, chunk, group and fb (their values as in the schedule text,
0 = default); the features are those of loaders/graph_features.c, logs of the sizes
(bg_sched_model_features in plan/sched_model.h computes the same vector).  The trees are
scikit-learn's DecisionTreeClassifier (max depth --depth, default 3, fixed random_state), so the
file is the same for the same records.  --holdout: graph keys left out of training; the script
then prints, for each held-out (graph, op), the predicted point's measured time against the
best measured (when the predicted point was measured).

Model file (text, every line ends in '\\n'):
    bgnn-sched-model 1
    # gpu: NAME; graphs G; records R
    tree FAMILY<TAB>KNOB<TAB>NODES
    node ID FEATURE THRESHOLD LEFT RIGHT      (x[FEATURE] <= THRESHOLD: LEFT, else RIGHT)
    leaf ID VALUE
Nodes are numbered 0..NODES-1 in scikit-learn's order, the root first.
"""
import argparse
import math
import sys

KNOBS = ["block", "grid", "chunk", "group", "fb"]
GROUP = {"always": 1, "never": -1}
FB = {"rows": 1, "tiled": 2, "sparse": 3}
NFEAT = 8


def features(n, nnz, mean, cv, dmax, skew, hub, span):
    """The vector of plan/sched_model.c (bg_sched_model_features): same order, same logs."""
    return [math.log2(max(n, 1)), math.log2(max(nnz, 1)), mean, cv, math.log2(1 + dmax), skew, hub, span]


def knobs_of(sched):
    """The schedule text (bg_sched_str) -> {knob: value}, defaults 0."""
    v = {k: 0 for k in KNOBS}
    if sched != "default":
        for f in sched.split():
            k, _, x = f.partition("=")
            if k in ("block", "grid", "chunk"):
                v[k] = int(x)
            elif k == "group":
                v[k] = GROUP[x]
            elif k == "fb":
                v[k] = FB[x]
    return v


def read(paths):
    """{(graph key, op): (best time, best schedule, features, default time, {schedule: time})}, the GPUs, the records."""
    pts = {}
    gpus = set()
    nrec = 0
    for p in paths:
        with open(p) as f:
            for ln, line in enumerate(f, 1):
                c = line.rstrip("\n").split("\t")
                if len(c) != 14:
                    sys.exit(f"{p}:{ln}: expected 14 tab-separated fields, got {len(c)}")
                gpus.add(c[0])
                nrec += 1
                x = features(*(float(v) for v in c[2:10]))
                e = pts.setdefault((c[1], c[10]), [x, float(c[13]), {}])
                e[2][c[11]] = min(float(c[12]), e[2].get(c[11], math.inf))
    best = {}
    for key, (x, tdef, seen) in pts.items():
        seen.setdefault("default", tdef)  # the default point is measured before the others
        sched = min(sorted(seen), key=lambda s: seen[s])
        if seen[sched] > 0.98 * tdef:  # within the timing noise of the default: bgnnc tune's rule
            sched = "default"
        best[key] = (seen[sched], sched, x, tdef, seen)
    return best, gpus, nrec


def export(tree):
    t = tree.tree_
    lines = []
    for i in range(t.node_count):
        if t.children_left[i] == -1:
            cls = tree.classes_[int(t.value[i][0].argmax())]
            lines.append(f"leaf {i} {int(cls)}")
        else:
            lines.append(f"node {i} {int(t.feature[i])} {float(t.threshold[i]):.9g} {t.children_left[i]} {t.children_right[i]}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--holdout", default="")
    a = ap.parse_args()
    from sklearn.tree import DecisionTreeClassifier  # a well-kept library: tools/setup_python.sh installs it

    best, gpus, nrec = read(a.records)
    if len(gpus) != 1:
        sys.exit(f"records from {len(gpus)} GPUs ({', '.join(sorted(gpus))}): a model is for one GPU")
    hold = set(h for h in a.holdout.split(",") if h)
    train = {k: v for k, v in best.items() if k[0] not in hold}
    fams = {}
    for (gkey, op), (t, sched, x, tdef, seen) in sorted(train.items()):
        fam = " ".join(op.split()[:2])
        fams.setdefault(fam, []).append((x, knobs_of(sched)))
    out = ["bgnn-sched-model 1", f"# gpu: {next(iter(gpus))}; graphs {len(set(k[0] for k in train))}; records {nrec}"]
    for fam in sorted(fams):
        xs = [r[0] for r in fams[fam]]
        for knob in KNOBS:
            ys = [r[1][knob] for r in fams[fam]]
            if all(y == 0 for y in ys):
                continue  # the default everywhere: no tree (the plan's default stands)
            clf = DecisionTreeClassifier(max_depth=a.depth, random_state=0).fit(xs, ys)
            nodes = export(clf)
            out.append(f"tree {fam}\t{knob}\t{len(nodes)}")
            out.extend(nodes)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"{a.out}: {len(train)} (graph, op) labels from {nrec} records, {sum(1 for l in out if l.startswith('tree '))} trees")
    if hold:  # the held-out graphs: the predicted point's time against the best measured
        within = total = 0
        for (gkey, op), (t, sched, x, tdef, seen) in sorted(best.items()):
            if gkey not in hold:
                continue
            fam = " ".join(op.split()[:2])
            pred = {}
            for knob in KNOBS:
                ys = [r[1][knob] for r in fams.get(fam, [])]
                if not ys or all(y == 0 for y in ys):
                    pred[knob] = 0
                    continue
                clf = DecisionTreeClassifier(max_depth=a.depth, random_state=0).fit([r[0] for r in fams[fam]], ys)
                pred[knob] = int(clf.predict([x])[0])
            match = [s for s in sorted(seen) if knobs_of(s) == pred]
            tp = seen[match[0]] if match else None
            total += 1
            if tp is not None and tp <= 1.1 * t:
                within += 1
            print(f"  {gkey} | {op}: best {t:.2f} us ({sched}), predicted {pred} -> "
                  f"{'%.2f us' % tp if tp is not None else 'not measured'}")
        print(f"held out: {within} of {total} (graph, op) within 10% of the best measured")


if __name__ == "__main__":
    main()
