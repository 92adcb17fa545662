#!/usr/bin/env python3
"""train_predictor.py - the learned schedule predictor (issue 17 point 4, docs/tuning.md): trains
small decision trees on `bgnnc tune --records` files and writes them as a text model that the C
side (plan/sched_model.c) reads and applies with no Python; scores it on graphs it never saw.

    tools/train_predictor.py TRAIN.tsv [...] -o MODEL [--test TEST.tsv ...] [--depth D|auto]
                             [--kind regret|joint|knob|gbdt|auto] [--setting FAMILY=KIND:DEPTH[:MARGIN[:EMPHASIS]] ...]
                             [--report FILE.md] [--expect FILE]

Records: one TSV line per schedule point measured (cli/tune.c): gpu, graph key, N, entries, mean
degree, its coefficient of variation, largest degree, skewness, hub fraction, span, op key,
schedule, time us, default us.  A graph is a (file name, graph key) pair: bench/predictor_bench.sh
writes one file a graph; several timing passes of a graph (in one file, or in files of the same
name in other folders) keep each point's least time.  For every (graph, op key) the label is the fastest point measured,
unless it is within 2% of the default (bgnnc tune's rule): then the default.

Model: per op family (the op key's first two fields, "bspmm.BBB fast") the knobs block, grid,
chunk, group and fb (values as in the schedule text, 0 = default).  Features: those of
loaders/graph_features.c (log2 N, log2 entries, mean degree, its cv, log2(1 + largest degree),
skewness, hub fraction, span) and the op's widths (log2 of the key's k= and c=), the vector of
bg_sched_model_features + bg_sched_model_widths.  Kinds of model (scikit-learn, fixed
random_state, so the file is a function of the records):
  joint  one classification tree per family whose classes are whole schedules, written as one
         tree per knob with the same splits (each leaf: that knob's value of the leaf's
         schedule), so the knobs predicted together are a point that was measured together;
  regret the same splits, each leaf the schedule of least total log slowdown over its cases;
  knob   one classification tree per (family, knob), each knob on its own;
  gbdt   a regression: gradient-boosted trees (GradientBoostingRegressor, GBDT_TREES trees of
         the depth) fitted to log(time / default time) of every point measured, from the graph's
         features and the point's (point_features), each point weighted by (its case's best time /
         its time) ** EMPHASIS (GBDT_EMPHASES; 0: unweighted); the predicted schedule is the family's
         candidate point (every point measured for the family in training) of the least
         predicted time.  It learns from every point, not only each case's fastest, so a few
         graphs teach it more than a classifier of their labels.
--depth and --kind `auto` (the default) choose per family (with gbdt's margin and emphasis) by leave-one-graph-out cross-validation
over the training graphs only (the least geometric-mean slowdown over the best, then the share
within 10%); --setting fixes one family's instead (CI uses it: the gbdt cross-validation takes
minutes).  The test graphs are scored once, with the chosen settings, beside the fixed
heuristics (the default plan).

A predicted point that was not measured for a graph (the instruction cannot take it, or a block
larger than the kernel's registers allow) counts as the default, which is what the runtime runs
then (bg_sched_apply_model); a gbdt family takes its candidates in order of predicted time and
uses the first one measured, as the runtime takes the first one the instruction can run.

Model file (text, every line ends in '\\n'; plan/sched_model.h):
    bgnn-sched-model 2
    # gpu: NAME; graphs G; records R; ...
    tree FAMILY<TAB>KNOB<TAB>NODES            (a classification tree: joint, regret, knob)
    node ID FEATURE THRESHOLD LEFT RIGHT      (float32(x[FEATURE]) <= THRESHOLD: LEFT, else RIGHT)
    leaf ID VALUE
    regress FAMILY<TAB>POINTS<TAB>TREES<TAB>RATE<TAB>INIT<TAB>MARGIN     (a gbdt family)
    range LO0 HI0 ... LO9 HI9                 (the features' range, widened; outside it: the default)
    point BLOCK GRID CHUNK GROUP FB LANES     (POINTS lines: the candidates, KNOBS order, 0 = default)
    rtree NODES                               (TREES times, each followed by its NODES lines)
    node ID FEATURE THRESHOLD LEFT RIGHT      (FEATURE of point_features)
    value ID VALUE
Nodes are numbered 0..NODES-1 in scikit-learn's order, the root first.  A gbdt prediction is
INIT, then + RATE x the leaf's VALUE of each tree in order, in doubles, as scikit-learn sums it.
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


GBDT_TREES, GBDT_RATE = 200, 0.1
GBDT_DEPTHS = (3, 4)
# a gbdt family keeps the default unless a point is predicted faster by more than exp(KEEP): the
# margin is chosen per family by cross-validation (0 = always the least predicted time)
GBDT_KEEPS = (0.0, 0.05, 0.1)
# a point's weight in the gbdt fit is (best time of its case / its time) ** EMPHASIS: what the
# schedule needs right is the order of the points near each case's best, not how slow the slow
# ones are (0 = every point alike); chosen per family by cross-validation
GBDT_EMPHASES = (0, 1, 2, 3, 5, 8)
RANGE_SLACK = 0.1
# a knob's value when the schedule leaves it at the default, for point_features
POINT_DEFAULTS = {"block": 256, "grid": 64, "chunk": 2048, "lanes": 32}


def point_features(x, k):
    """x (the case's features) and the point's: log2 of block, grid (blocks per SM), chunk and
    lanes (their defaults as POINT_DEFAULTS), group, fb, and log2(N x lanes / (block x grid)):
    how many rows of work each thread slot gets.  plan/sched_model.c computes the same."""
    d = dict(zip(KNOBS, k))
    lb, lg, lc, ll = (math.log2(d[n] if d[n] > 0 else POINT_DEFAULTS[n]) for n in ("block", "grid", "chunk", "lanes"))
    return list(x) + [lb, lg, lc, float(d["group"]), float(d["fb"]), ll, x[0] + ll - lb - lg]


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
                graph = (os.path.basename(p), c[1])  # a graph's passes may lie in several folders
                e = cases.get((graph, c[10]))
                if e is None:
                    e = cases[(graph, c[10])] = Case(graph, c[10], features(c[2:10], c[10]), float(c[13]))
                if float(c[13]) < e.tdef:  # a graph timed in several passes: each point's least time
                    e.tdef = e.times[key_of(knobs_of("default"))] = float(c[13])
                k = key_of(knobs_of(c[11]))
                e.times[k] = min(float(c[12]), e.times.get(k, math.inf))
    for e in cases.values():
        e.finish()
    return list(cases.values()), gpus, nrec


class Predictor:
    def __init__(self, train, kinds, depths, keeps=0.0, emphs=0):
        """kinds, depths, keeps (gbdt's margin), emphs (gbdt's emphasis on the points near each
        case's best): one setting for every family, or a dict by family."""
        from sklearn.tree import DecisionTreeClassifier  # tools/setup_python.sh installs it
        self.trees = {}
        fams = {}
        for c in train:
            fams.setdefault(c.fam, []).append(c)
        for fam, cs in sorted(fams.items()):
            kind = kinds[fam] if isinstance(kinds, dict) else kinds
            depth = depths[fam] if isinstance(depths, dict) else depths
            xs = [c.x for c in cs]
            if kind == "gbdt":
                from sklearn.ensemble import GradientBoostingRegressor
                points = sorted(set(k for c in cs for k in c.times))
                rows = [(c, k) for c in cs for k in sorted(c.times)]  # sorted: the fit depends on the order
                px = [point_features(c.x, k) for c, k in rows]
                py = [math.log(c.times[k] / c.tdef) for c, k in rows]
                emph = emphs[fam] if isinstance(emphs, dict) else emphs
                pw = [(c.best / c.times[k]) ** emph for c, k in rows] if emph else None
                reg = GradientBoostingRegressor(n_estimators=GBDT_TREES, max_depth=depth, learning_rate=GBDT_RATE,
                                                random_state=0).fit(px, py, sample_weight=pw)
                # the training graphs' range of each feature: a graph outside it keeps the default
                # (trees extrapolate flat, from the nearest graphs, which a far graph is not like)
                lo = [min(c.x[i] for c in cs) for i in range(len(cs[0].x))]
                hi = [max(c.x[i] for c in cs) for i in range(len(cs[0].x))]
                w = [b - a for a, b in zip(lo, hi)]  # widened by a tenth of the width on each side
                lo, hi = [a - RANGE_SLACK * d for a, d in zip(lo, w)], [b + RANGE_SLACK * d for b, d in zip(hi, w)]
                keep = keeps[fam] if isinstance(keeps, dict) else keeps
                self.trees[fam] = ("gbdt", reg, (points, lo, hi, keep))
                continue
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

    def ranked(self, c, keep=None):
        """A gbdt family's candidates in order of predicted time (ties: the file's order); the
        default first when c lies outside the training range or no point beats the default's
        prediction by more than the margin (plan/sched_model.c bg_sched_model_ranked)."""
        _, reg, (points, lo, hi, k0) = self.trees[c.fam]
        keep = k0 if keep is None else keep
        pred = reg.predict([point_features(c.x, k) for k in points])
        order = sorted(range(len(points)), key=lambda i: (pred[i], i))
        dflt = key_of(knobs_of("default"))
        if dflt in points:
            d = points.index(dflt)
            far = any(v < a or v > b for v, a, b in zip(c.x, lo, hi))
            if far or pred[order[0]] > pred[d] - keep:
                order.remove(d)
                order.insert(0, d)
        return [points[i] for i in order]

    def predict(self, c, measured_only=True, keep=None):
        """The schedule for case c; a gbdt family's first candidate measured for c (the runtime: the
        first one the instruction can run), or with measured_only False its first candidate."""
        t = self.trees.get(c.fam)
        if t is None:
            return key_of(knobs_of("default"))
        if t[0] == "gbdt":
            order = self.ranked(c, keep)
            if not measured_only:
                return order[0]
            return next((k for k in order if k in c.times), key_of(knobs_of("default")))
        if t[0] == "joint":
            return t[2][int(t[1].apply([c.x])[0])]
        return tuple(int(t[1][k].predict([c.x])[0]) if k in t[1] else 0 for k in KNOBS)

    def export(self):
        out = []
        for fam, (kind, obj, labels) in sorted(self.trees.items()):
            if kind == "gbdt":  # labels: the candidate points, the features' range, the margin
                points, lo, hi, keep = labels
                init = float(obj.init_.constant_.ravel()[0])  # the mean: squared error's first guess
                out.append(f"regress {fam}\t{len(points)}\t{len(obj.estimators_)}\t{obj.learning_rate!r}\t{init!r}\t{keep!r}")
                out.append("range " + " ".join(f"{a!r} {b!r}" for a, b in zip(lo, hi)))
                out.extend("point " + " ".join(str(v) for v in k) for k in points)
                for est in obj.estimators_[:, 0]:
                    out.append(f"rtree {est.tree_.node_count}")
                    out.extend(export_tree(est, lambda i, t=est.tree_: f"value {i} {float(t.value[i][0][0])!r}"))
                continue
            if kind == "joint":
                for ki, knob in enumerate(KNOBS):
                    if all(v[ki] == 0 for v in labels.values()):
                        continue
                    nodes = export_tree(obj, lambda i, ki=ki: f"leaf {i} {int(labels[i][ki])}")  # labels: the leaves' schedules
                    out.append(f"tree {fam}\t{knob}\t{len(nodes)}")
                    out.extend(nodes)
            else:
                for knob in KNOBS:
                    if knob in obj:
                        c = obj[knob]  # a class is the knob's value: the leaf's majority class
                        nodes = export_tree(c, lambda i, c=c: f"leaf {i} {int(c.classes_[int(c.tree_.value[i][0].argmax())])}")
                        out.append(f"tree {fam}\t{knob}\t{len(nodes)}")
                        out.extend(nodes)
        return out


def export_tree(clf, leaf_line):
    """The tree's lines: its splits, and leaf_line(node id) for each leaf ("leaf ID VALUE" of a
    classification, "value ID VALUE" of a regression)."""
    t = clf.tree_
    lines = []
    for i in range(t.node_count):
        if t.children_left[i] == -1:
            lines.append(leaf_line(i))
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


def held_out_score(train, g, kind, depth, keeps, emph=0):
    """For each margin of keeps: (cases within 10%, sum of log slowdowns, cases) on graph g of a
    model fitted without it (one fit: the margin only changes the choice)."""
    held = [c for c in train if c.graph == g]
    p = Predictor([c for c in train if c.graph != g], kind, depth, emphs=emph)
    out = []
    for k in keeps:
        s, gm, _ = score(held, lambda c: p.predict(c, keep=k))
        out.append((s * len(held), math.log(gm) * len(held), len(held)))
    return out


def cross_validate(train, kind, depth):
    """{(margin, emphasis): (share within 10%, geometric-mean slowdown)}; classification kinds:
    margin 0 and emphasis 0 only."""
    graphs = sorted(set(c.graph for c in train))
    keeps = GBDT_KEEPS if kind == "gbdt" else (0.0,)
    emphs = GBDT_EMPHASES if kind == "gbdt" else (0,)
    if kind == "gbdt":
        from joblib import Parallel, delayed  # scikit-learn's own dependency
    res = {}
    for e in emphs:
        if kind == "gbdt":  # seconds a fold: the folds in parallel
            parts = Parallel(n_jobs=-1)(delayed(held_out_score)(train, g, kind, depth, keeps, e) for g in graphs)
        else:
            parts = [held_out_score(train, g, kind, depth, keeps) for g in graphs]
        for j, k in enumerate(keeps):
            hits, logs, total = (sum(p[j][i] for p in parts) for i in range(3))
            res[(k, e)] = (hits / max(total, 1), math.exp(logs / max(total, 1)))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--test", nargs="*", default=[])
    ap.add_argument("--depth", default="auto")
    ap.add_argument("--kind", choices=["regret", "joint", "knob", "gbdt", "auto"], default="auto")
    ap.add_argument("--setting", action="append", default=[], metavar="FAMILY=KIND:DEPTH[:MARGIN[:EMPHASIS]]",
                    help="fix one family's kind, depth, gbdt margin and emphasis (no cross-validation for it)")
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
    kinds = ["regret", "joint", "knob", "gbdt"] if a.kind == "auto" else [a.kind]
    depths = [2, 3, 4, 5, 6] if a.depth == "auto" else [int(a.depth)]
    fixed = {}
    for st in a.setting:
        num = r"\d+(?:\.\d+)?"
        m = re.fullmatch(rf"(.+)=(regret|joint|knob|gbdt):(\d+)(?::({num})(?::({num}))?)?", st)
        if not m:
            sys.exit(f"train_predictor.py: --setting '{st}': expected FAMILY=KIND:DEPTH[:MARGIN[:EMPHASIS]], KIND "
                     "regret|joint|knob|gbdt")
        emph = float(m.group(5) or 0)
        fixed[m.group(1)] = (m.group(2), int(m.group(3)), float(m.group(4) or 0), int(emph) if emph.is_integer() else emph)
    # per op family, the tree kind and depth by cross-validation on the training graphs: the least
    # mean slowdown (geometric) over the best, then the most cases within 10%, then the shallower
    # tree (a setting that is often near the best but now and then far off loses: a user pays the
    # slowdown)
    fams = sorted(set(c.fam for c in train))
    unknown = set(fixed) - set(fams)
    if unknown:
        sys.exit(f"train_predictor.py: --setting for a family not in the records: {', '.join(sorted(unknown))}")
    settings = [(k, d) for k in kinds for d in depths if k != "gbdt" or a.depth != "auto" or d in GBDT_DEPTHS]
    cv, kind, depth, keep, emph = {}, {}, {}, {}, {}
    for f in fams:
        if f in fixed:
            kind[f], depth[f], keep[f], emph[f] = fixed[f]
            continue
        mine = [c for c in train if c.fam == f]
        if len(settings) == 1:
            (kind[f], depth[f]), keep[f], emph[f] = settings[0], 0.0, 0
            continue
        for k, d in settings:
            for (kp, e), r in cross_validate(mine, k, d).items():
                cv[(f, k, d, kp, e)] = r
        cands = [key[1:] for key in cv if key[0] == f]
        kind[f], depth[f], keep[f], emph[f] = max(
            cands, key=lambda s: (-round(cv[(f,) + s][1], 6), cv[(f,) + s][0], -s[1], -s[2], -s[3]))
    model = Predictor(train, kind, depth, keep, emph)
    gpu = next(iter(gpus))
    ngraphs = len(set(c.graph for c in train))
    chosen = "; ".join(f"{f}: {kind[f]}, depth {depth[f]}" +
                       (f", margin {keep[f]}, emphasis {emph[f]}" if kind[f] == "gbdt" else "") for f in fams)
    out = ["bgnn-sched-model 2", f"# gpu: {gpu}; graphs {ngraphs}; records {nrec}; {chosen}"]
    out.extend(model.export())
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    ntrees = sum(1 for l in out if l.startswith(("tree ", "rtree ")))
    print(f"{a.out}: {len(train)} (graph, op) labels of {ngraphs} graphs from {nrec} records; {ntrees} trees ({chosen})")
    rep = []
    if cv:
        rep.append("Leave-one-graph-out cross-validation on the training graphs, per op family: share of (graph, op) "
                   "within 10% of the best / geometric-mean time over the best (the chosen setting in bold):")
        rep.append("")
        rep.append("| family | trees | " + " | ".join(f"depth {d}" for d in depths) + " |")
        rep.append("|---|---|" + "---|" * len(depths))
        for f in fams:
            rows = sorted(set((key[1], key[3], key[4]) for key in cv if key[0] == f),
                          key=lambda r: (kinds.index(r[0]), r[2], r[1]))
            for k, kp, e in rows:
                cells = []
                for d in depths:
                    r = cv.get((f, k, d, kp, e))
                    if r is None:
                        cells.append("")
                        continue
                    t = f"{100 * r[0]:.1f}% / {r[1]:.3f}"
                    cells.append(f"**{t}**" if (k, d, kp, e) == (kind[f], depth[f], keep[f], emph[f]) else t)
                k = f"{k}, emphasis {e}, margin {kp}" if k == "gbdt" else k
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
                p = model.predict(c, measured_only=False)
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
