#!/usr/bin/env python3
"""train_predictor.py - the learned schedule predictor (issue 17 point 4, docs/tuning.md): trains
small decision trees on `bgnnc tune --records` files and writes them as a text model that the C
side (plan/sched_model.c) reads and applies with no Python; scores it on graphs it never saw.

    tools/train_predictor.py TRAIN.tsv [...] -o MODEL [--test TEST.tsv ...] [--depth D|auto]
                             [--kind joint|knob|auto] [--report FILE.md]

Records: one TSV line per schedule point measured (cli/tune.c): gpu, graph key, N, entries, mean
degree, its coefficient of variation, largest degree, skewness, hub fraction, span, op key,
schedule, time us, default us.  A graph is a (file, graph key) pair: bench/predictor_bench.sh
writes one file a graph.  For every (graph, op key) the label is the fastest point measured,
unless it is within 2% of the default (bgnnc tune's rule): then the default.

Model: per op family (the op key's first two fields, "bspmm.BBB fast") the knobs block, grid,
chunk, group and fb (values as in the schedule text, 0 = default).  Features: those of
loaders/graph_features.c (log2 N, log2 entries, mean degree, its cv, log2(1 + largest degree),
skewness, hub fraction, span) and the op's widths (log2 of the key's k= and c=), the vector of
bg_sched_model_features + bg_sched_model_widths.  Two kinds of tree (scikit-learn's
DecisionTreeClassifier, fixed random_state, so the file is a function of the records):
  joint  one tree per family whose classes are whole schedules, written as one tree per knob
         with the same splits (each leaf: that knob's value of the leaf's schedule), so the
         knobs predicted together are a point that was measured together;
  knob   one tree per (family, knob), each knob on its own.
--depth and --kind `auto` (the default) choose by leave-one-graph-out cross-validation over the
training graphs only (the share of (graph, op) within 10% of the best measured); the test
graphs are scored once, with the chosen setting, beside the fixed heuristics (the default plan).

A predicted point that was not measured for a graph (the instruction cannot take it, or a block
larger than the kernel's registers allow) counts as the default, which is what the runtime runs
then (bg_sched_apply_model).

Model file (text, every line ends in '\\n'):
    bgnn-sched-model 1
    # gpu: NAME; graphs G; records R; ...
    tree FAMILY<TAB>KNOB<TAB>NODES
    node ID FEATURE THRESHOLD LEFT RIGHT      (float32(x[FEATURE]) <= THRESHOLD: LEFT, else RIGHT)
    leaf ID VALUE
Nodes are numbered 0..NODES-1 in scikit-learn's order, the root first.
"""
import argparse
import math
import os
import re
import sys
import warnings

warnings.filterwarnings("ignore", message="The number of unique classes")  # few graphs, many schedules

KNOBS = ["block", "grid", "chunk", "group", "fb", "lanes"]
GROUP = {"always": 1, "never": -1}
FB = {"rows": 1, "tiled": 2, "sparse": 3}
WITHIN = 1.10  # the "within 10% of the exhaustive best"


def width_log2(op, name):
    m = re.search(r"\s" + name + r"=(\d+)", op)
    return math.log2(int(m.group(1))) if m and int(m.group(1)) > 0 else 0.0


def features(cols, op):
    """The vector of plan/sched_model.c (bg_sched_model_features, bg_sched_model_widths)."""
    n, nnz, mean, cv, dmax, skew, hub, span = (float(v) for v in cols)
    return [math.log2(max(n, 1)), math.log2(max(nnz, 1)), mean, cv, math.log2(1 + dmax), skew, hub, span,
            width_log2(op, "k"), width_log2(op, "c")]


# A dense product's time depends on the sizes only: the bmm families see log2 N and the widths
# (the other features are zeroed, so no split uses them and a graph's degrees cannot steer them).
DENSE_FEATURES = (0, 8, 9)


def family_x(fam, x):
    if fam.startswith("bmm."):
        return [v if i in DENSE_FEATURES else 0.0 for i, v in enumerate(x)]
    return x


def knobs_of(sched):
    """The schedule text (bg_sched_str) -> {knob: value}, defaults 0 (method/path: not predicted)."""
    v = {k: 0 for k in KNOBS}
    if sched != "default":
        for f in sched.split():
            k, _, x = f.partition("=")
            if k in ("block", "grid", "chunk", "lanes"):
                v[k] = int(x)
            elif k == "group":
                v[k] = GROUP[x]
            elif k == "fb":
                v[k] = FB[x]
    return v


def key_of(knobs):
    return tuple(knobs[k] for k in KNOBS)


class Case:
    """One (graph, op): its features, the default's time, every point's time, the label."""

    def __init__(self, graph, op, x, tdef):
        self.graph, self.op, self.tdef = graph, op, tdef
        self.fam = " ".join(op.split()[:2])
        self.x = family_x(self.fam, x)
        self.times = {key_of(knobs_of("default")): tdef}

    def finish(self):
        self.best = min(self.times.values())
        lab = min(sorted(self.times), key=lambda k: self.times[k])
        if self.times[lab] > 0.98 * self.tdef:  # within the timing noise of the default
            lab = key_of(knobs_of("default"))
        self.label = lab

    def time_of(self, pred):
        """The predicted point's time; the default's when it was not measured (the runtime's fallback)."""
        return self.times.get(pred, self.tdef), pred in self.times


def read(paths):
    cases, gpus, nrec = {}, set(), 0
    for p in paths:
        with open(p) as f:
            for ln, line in enumerate(f, 1):
                c = line.rstrip("\n").split("\t")
                if len(c) != 14:
                    sys.exit(f"{p}:{ln}: expected 14 tab-separated fields, got {len(c)}")
                gpus.add(c[0])
                nrec += 1
                graph = (p, c[1])
                e = cases.get((graph, c[10]))
                if e is None:
                    e = cases[(graph, c[10])] = Case(graph, c[10], features(c[2:10], c[10]), float(c[13]))
                k = key_of(knobs_of(c[11]))
                e.times[k] = min(float(c[12]), e.times.get(k, math.inf))
    for e in cases.values():
        e.finish()
    return list(cases.values()), gpus, nrec


class Predictor:
    def __init__(self, train, kinds, depths):
        """kinds, depths: one setting for every family, or a dict of them by family."""
        from sklearn.tree import DecisionTreeClassifier  # tools/setup_python.sh installs it
        self.trees = {}
        fams = {}
        for c in train:
            fams.setdefault(c.fam, []).append(c)
        for fam, cs in sorted(fams.items()):
            kind = kinds[fam] if isinstance(kinds, dict) else kinds
            depth = depths[fam] if isinstance(depths, dict) else depths
            xs = [c.x for c in cs]
            if kind in ("joint", "regret"):
                labels = sorted(set(c.label for c in cs))
                if len(labels) == 1 and labels[0] == key_of(knobs_of("default")):
                    continue
                ys = [labels.index(c.label) for c in cs]
                clf = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(xs, ys)
                t = clf.tree_
                if kind == "joint":  # each leaf: its majority schedule
                    leaf = {i: labels[int(clf.classes_[int(t.value[i][0].argmax())])]
                            for i in range(t.node_count) if t.children_left[i] == -1}
                else:  # each leaf: the schedule of least total log slowdown over its cases
                    leaf = {}
                    ids = clf.apply(xs)
                    for i in range(t.node_count):
                        if t.children_left[i] != -1:
                            continue
                        mine = [c for c, l in zip(cs, ids) if l == i]
                        cands = sorted(set(k for c in mine for k in c.times))
                        cost = lambda k: sum(math.log(c.time_of(k)[0] / c.best) for c in mine)
                        dflt = key_of(knobs_of("default"))
                        best = min(cands, key=cost)
                        leaf[i] = dflt if dflt in cands and cost(dflt) <= cost(best) + 1e-12 else best
                self.trees[fam] = ("joint", clf, leaf)
            else:
                per = {}
                for ki, knob in enumerate(KNOBS):
                    ys = [c.label[ki] for c in cs]
                    if all(y == 0 for y in ys):
                        continue
                    per[knob] = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(xs, ys)
                self.trees[fam] = ("knob", per, None)

    def predict(self, c):
        t = self.trees.get(c.fam)
        if t is None:
            return key_of(knobs_of("default"))
        if t[0] == "joint":
            return t[2][int(t[1].apply([c.x])[0])]
        return tuple(int(t[1][k].predict([c.x])[0]) if k in t[1] else 0 for k in KNOBS)

    def export(self):
        out = []
        for fam, (kind, obj, labels) in sorted(self.trees.items()):
            if kind == "joint":
                for ki, knob in enumerate(KNOBS):
                    if all(v[ki] == 0 for v in labels.values()):
                        continue
                    nodes = export_tree(obj, lambda i, ki=ki: labels[i][ki])  # labels: the leaves' schedules
                    out.append(f"tree {fam}\t{knob}\t{len(nodes)}")
                    out.extend(nodes)
            else:
                for knob in KNOBS:
                    if knob in obj:
                        c = obj[knob]  # a class is the knob's value: the leaf's majority class
                        nodes = export_tree(c, lambda i, c=c: c.classes_[int(c.tree_.value[i][0].argmax())])
                        out.append(f"tree {fam}\t{knob}\t{len(nodes)}")
                        out.extend(nodes)
        return out


def export_tree(clf, leaf_value):
    """The tree's lines; leaf_value(node id) is a leaf's value."""
    t = clf.tree_
    lines = []
    for i in range(t.node_count):
        if t.children_left[i] == -1:
            lines.append(f"leaf {i} {int(leaf_value(i))}")
        else:
            lines.append(f"node {i} {int(t.feature[i])} {float(t.threshold[i]):.17g} {t.children_left[i]} {t.children_right[i]}")
    return lines


def score(cases, pick):
    """(share within 10% of the best, geometric-mean slowdown against the best, rows)."""
    rows, ok, logsum = [], 0, 0.0
    for c in cases:
        pred = pick(c)
        t, measured = c.time_of(pred)
        r = t / c.best
        ok += r <= WITHIN
        logsum += math.log(r)
        rows.append((c, pred, t, measured, r))
    n = max(len(cases), 1)
    return ok / n, math.exp(logsum / n), rows


def sched_text(k):
    parts = []
    for knob, v in zip(KNOBS, k):
        if v == 0:
            continue
        if knob == "group":
            parts.append(f"group={'always' if v > 0 else 'never'}")
        elif knob == "fb":
            parts.append(f"fb={ {1: 'rows', 2: 'tiled', 3: 'sparse'}[v] }")
        else:
            parts.append(f"{knob}={v}")
    return " ".join(parts) or "default"


def graph_name(g):
    base = g[0].rsplit("/", 1)[-1]
    return re.sub(r"^(train|test)_|\.tsv$", "", base)


def cross_validate(train, kind, depth):
    graphs = sorted(set(c.graph for c in train))
    hits = total = 0
    logs = 0.0
    for g in graphs:
        fit = [c for c in train if c.graph != g]
        held = [c for c in train if c.graph == g]
        p = Predictor(fit, kind, depth)
        s, gm, _ = score(held, p.predict)
        hits += s * len(held)
        logs += math.log(gm) * len(held)
        total += len(held)
    return hits / max(total, 1), math.exp(logs / max(total, 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--test", nargs="*", default=[])
    ap.add_argument("--depth", default="auto")
    ap.add_argument("--kind", choices=["regret", "joint", "knob", "auto"], default="auto")
    ap.add_argument("--report")
    ap.add_argument("--expect", help="write every case's features and predicted knobs (tests/unit/test_sched.c "
                    "checks that the C side predicts the same)")
    a = ap.parse_args()
    inputs = {os.path.realpath(p) for p in a.records + a.test}
    for flag, out in (("-o", a.out), ("--report", a.report), ("--expect", a.expect)):
        if out and os.path.realpath(out) in inputs:
            sys.exit(f"train_predictor.py: {flag} {out} would overwrite an input records file; choose another path")
    train, gpus, nrec = read(a.records)
    test, tgpus, _ = read(a.test) if a.test else ([], set(), 0)
    if len(gpus | tgpus) != 1:
        sys.exit(f"records from {len(gpus | tgpus)} GPUs ({', '.join(sorted(gpus | tgpus))}): a model is for one GPU")
    overlap = set(graph_name(c.graph) for c in train) & set(graph_name(c.graph) for c in test)
    if overlap:
        sys.exit(f"graphs in both the training and the test records: {', '.join(sorted(overlap))}")
    kinds = ["regret", "joint", "knob"] if a.kind == "auto" else [a.kind]
    depths = [2, 3, 4, 5, 6] if a.depth == "auto" else [int(a.depth)]
    # per op family, the tree kind and depth by cross-validation on the training graphs: the least
    # mean slowdown (geometric) over the best, then the most cases within 10%, then the shallower
    # tree (a setting that is often near the best but now and then far off loses: a user pays the
    # slowdown)
    fams = sorted(set(c.fam for c in train))
    cv, kind, depth = {}, {}, {}
    for f in fams:
        mine = [c for c in train if c.fam == f]
        for k in kinds:
            for d in depths:
                cv[(f, k, d)] = cross_validate(mine, k, d) if len(kinds) * len(depths) > 1 else (math.nan, math.nan)
        kind[f], depth[f] = max(((k, d) for k in kinds for d in depths),
                                key=lambda kd: (-round(cv[(f,) + kd][1], 6), cv[(f,) + kd][0], -kd[1]))
    model = Predictor(train, kind, depth)
    gpu = next(iter(gpus))
    ngraphs = len(set(c.graph for c in train))
    chosen = "; ".join(f"{f}: {kind[f]} trees, depth {depth[f]}" for f in fams)
    out = ["bgnn-sched-model 1", f"# gpu: {gpu}; graphs {ngraphs}; records {nrec}; {chosen}"]
    out.extend(model.export())
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    ntrees = sum(1 for l in out if l.startswith("tree "))
    print(f"{a.out}: {len(train)} (graph, op) labels of {ngraphs} graphs from {nrec} records; {ntrees} trees ({chosen})")
    rep = []
    if len(kinds) * len(depths) > 1:
        rep.append("Leave-one-graph-out cross-validation on the training graphs, per op family: share of (graph, op) "
                   "within 10% of the best / geometric-mean time over the best (the chosen setting in bold):")
        rep.append("")
        rep.append("| family | trees | " + " | ".join(f"depth {d}" for d in depths) + " |")
        rep.append("|---|---|" + "---|" * len(depths))
        for f in fams:
            for k in kinds:
                cells = []
                for d in depths:
                    t = f"{100 * cv[(f, k, d)][0]:.1f}% / {cv[(f, k, d)][1]:.3f}"
                    cells.append(f"**{t}**" if (k, d) == (kind[f], depth[f]) else t)
                rep.append(f"| {f} | {k} | " + " | ".join(cells) + " |")
        rep.append("")
    if test:
        sp, gp, rows = score(test, model.predict)
        sd, gd, _ = score(test, lambda c: key_of(knobs_of("default")))
        tgraphs = sorted(set(c.graph for c in test), key=graph_name)
        rep.append(f"Held-out graphs: {len(tgraphs)} ({', '.join(graph_name(g) for g in tgraphs)}), {len(test)} (graph, op) cases, GPU {gpu}.")
        rep.append("")
        rep.append("| schedule | within 10% of the exhaustive best | geometric-mean time / best |")
        rep.append("|---|---|---|")
        rep.append(f"| learned predictor (trees per family as above) | {100 * sp:.1f}% ({round(sp * len(test))} of {len(test)}) | {gp:.3f} |")
        rep.append(f"| fixed heuristics (the default plan) | {100 * sd:.1f}% ({round(sd * len(test))} of {len(test)}) | {gd:.3f} |")
        rep.append("")
        rep.append("| graph | op | best us (schedule) | default us | predicted schedule | its us | / best |")
        rep.append("|---|---|---|---|---|---|---|")
        for c, pred, t, measured, r in sorted(rows, key=lambda r: (graph_name(r[0].graph), r[0].op)):
            best = min(sorted(c.times), key=lambda k: c.times[k])
            rep.append(f"| {graph_name(c.graph)} | {c.op} | {c.best:.2f} ({sched_text(best)}) | {c.tdef:.2f} | "
                       f"{sched_text(pred)}{'' if measured else ' (not measured: default)'} | {t:.2f} | {r:.3f} |")
    if a.expect:  # family, the 10 features, the predicted knob values (KNOBS order; 0 = default)
        with open(a.expect, "w") as f:
            for c in sorted(train + test, key=lambda c: (graph_name(c.graph), c.op)):
                p = model.predict(c)
                f.write("\t".join([c.fam] + [repr(v) for v in c.x] + [str(v) for v in p]) + "\n")
    text = "\n".join(rep)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")
    if rep:
        print(text if not a.report else "\n".join(r for r in rep if not r.startswith("|") or "predictor" in r
                                                     or "heuristics" in r))


if __name__ == "__main__":
    main()
