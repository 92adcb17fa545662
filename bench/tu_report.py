"""tu_report.py - the report of bench/tu_bench.py: the markdown table (tu_table.md), the plot
(performance_tu.png: graphs/s against batch size, log-log, one panel per dataset) and the short
table printed last.  `python3 bench/tu_bench.py --report OUT/tu_results.json --out DIR` redraws
both from a results file."""
import os

LABEL = {'pyg-eager': 'PyG eager', 'pyg-graph': 'PyG CUDA graph', 'bgnn-auto': 'bgnn (auto)',
         'bgnn-layers': 'bgnn large-graph path (layers)', 'bgnn-graphs': 'bgnn small-graph kernel (graphs)',
         'bgnn-pergraph': 'bgnn one run per graph'}
ORDER = ['pyg-eager', 'pyg-graph', 'bgnn-auto', 'bgnn-layers', 'bgnn-graphs', 'bgnn-pergraph']
COLOR = {'pyg-eager': '#4c72b0', 'pyg-graph': '#8fb0e0', 'bgnn-auto': '#1b7837', 'bgnn-layers': '#dd8452',
         'bgnn-graphs': '#c44e52', 'bgnn-pergraph': '#7f7f7f'}
SIZES = [1, 32, 1024, 0]


def fmt_rate(v):
    if v is None:
        return '-'
    return '%.3g M' % (v / 1e6) if v >= 1e6 else '%.3g k' % (v / 1e3) if v >= 1e3 else '%.3g' % v


def fmt_us(ms):
    return '-' if ms is None or ms < 0 else '%.1f' % (ms * 1e3) if ms < 1 else '%.0f' % (ms * 1e3)


def fmt_mem(b):
    if b is None:
        return '-'
    return '%.2f MiB' % (b / 2**20) if b >= 2**20 else '%.0f KiB' % (b / 2**10)


def brief(r):
    if r.get('error'):
        return 'error: ' + r['error']
    s = '%s graphs/s' % fmt_rate(r.get('graphs_per_s'))
    if r.get('latency_ms') is not None:
        s += ', latency %s us' % fmt_us(r['latency_ms'])
    if r.get('accuracy') is not None and r['accuracy'] >= 0:
        s += ', acc %.1f' % r['accuracy']
    m = r.get('mem_batch_bytes') or r.get('mem_sweep_bytes')
    if m:
        s += ', mem %s' % fmt_mem(m)
    return s + ' (%.1f s)' % r.get('wall_s', 0)


def with_pergraph(results):
    """The derived 'one run per graph' rows: bgnn auto at batch 1, at every batch size."""
    out = [r for r in results if r['system'] != 'bgnn-pergraph']
    for r in results:
        if r['system'] == 'bgnn-auto' and r['batch'] == 1 and r.get('graphs_per_s'):
            for B in SIZES:
                out.append(dict(r, system='bgnn-pergraph', batch=B, derived=True))
    return out


def find(results, ds, arch, system, B):
    return next((r for r in results if r['dataset'] == ds and r['model'] == arch and
                 r['system'] == system and r['batch'] == B), None)


def val(r, k):
    return r.get(k) if r and not r.get('error') else None


def ratio(a, b):
    return '%.1fx' % (a / b) if a and b else '-'


def table(info, results):
    dss = [d for d in info.get('datasets', {}) if any(r['dataset'] == d for r in results)]
    head = ('Device: **%s** (driver %s), torch %s, torch_geometric %s, %s.  Graphs/s over the whole dataset '
            'processed batch after batch (consecutive graphs; inputs on the device; median of up to %d sweeps, '
            'CUDA events; a sweep includes each system\'s host-side launch cost between batches); latency: '
            'one batch of the median-size graph, median of %d runs.  bgnn rows run the bin model; PyG runs '
            'the float model of the same architecture.'
            % (info.get('gpu'), info.get('driver') or '?', info.get('torch'), info.get('torch_geometric'),
               info.get('date'), info.get('repeat', 0), info.get('latency_repeat', 0)))
    if info.get('b1_graphs'):
        head += '  Batch size 1: the first %d graphs only.' % info['b1_graphs']
    L = [head, '', '| dataset | model | system | B=1 | B=32 | B=1024 | B=all | batch-1 latency (us) | '
         'memory, B=all | accuracy (%) | logits vs auto, B=all |',
         '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for ds in dss:
        for arch in ('gin', 'gcn'):
            for s in ORDER:
                rows = [find(results, ds, arch, s, B) for B in SIZES]
                if not any(rows):
                    continue
                cells = []
                for r in rows:
                    if r and r.get('error'):
                        cells.append('skipped' if 'skipped' in r['error'] else 'error')
                    else:
                        cells.append(fmt_rate(val(r, 'graphs_per_s')))
                ra, r1 = rows[3], rows[0]
                mem = val(ra, 'mem_batch_bytes') or val(ra, 'mem_sweep_bytes')
                acc = val(ra, 'accuracy')
                diff = val(ra, 'max_abs_diff_vs_auto_all')
                L.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                    ds, arch, LABEL[s], *cells, fmt_us(val(r1, 'latency_ms')), fmt_mem(mem),
                    '-' if acc is None or acc < 0 else '%.1f' % acc,
                    '-' if diff is None or s.startswith('pyg') else 'equal' if diff == 0 else '%.2g' % diff))
    L += ['', 'Memory: PyG eager, the weights + the largest batch\'s inputs + the peak of its forward above what '
          'was resident (torch.cuda.max_memory_allocated); PyG CUDA graph, max_memory_allocated over the whole '
          'sweep (every batch resident, graph pools); bgnn, the device memory of the largest batch\'s session as '
          'its plan allocates it (`bgnnc --stats` at its nodes, edges, graphs).  Collation (DataLoader) and '
          'the copies to the device are timed apart (tu_results.json: collate_s, to_device_s, capture_s).']
    L += ['', 'Speed-ups (graphs/s ratios; the issue\'s targets: bgnn >= 10x PyG eager and >= 3x PyG CUDA graph '
          'at B=1024, small-graph kernel >= 3x large-graph path, MUTAG batch-1 latency <= 10 us):', '',
          '| dataset | model | bgnn / PyG eager, B=1024 | bgnn / PyG CUDA graph, B=1024 | graphs / layers, B=1024 '
          '| graphs / layers, B=all | bgnn / PyG eager, B=1 | bgnn batch-1 latency (us) |',
          '|---|---|---:|---:|---:|---:|---:|---:|']
    for ds in dss:
        for arch in ('gin', 'gcn'):
            g = lambda s, B: val(find(results, ds, arch, s, B), 'graphs_per_s')  # noqa: E731
            if not any(g(s, B) for s in ORDER for B in SIZES):
                continue
            L.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
                ds, arch, ratio(g('bgnn-auto', 1024), g('pyg-eager', 1024)),
                ratio(g('bgnn-auto', 1024), g('pyg-graph', 1024)),
                ratio(g('bgnn-graphs', 1024), g('bgnn-layers', 1024)), ratio(g('bgnn-graphs', 0), g('bgnn-layers', 0)),
                ratio(g('bgnn-auto', 1), g('pyg-eager', 1)),
                fmt_us(val(find(results, ds, arch, 'bgnn-auto', 1), 'latency_ms'))))
    return '\n'.join(L) + '\n'


def plot(info, results, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('no matplotlib: no plot')
        return
    dss = [d for d in info.get('datasets', {}) if any(r['dataset'] == d for r in results)]
    if not dss:
        return
    fig, axes = plt.subplots(1, len(dss), figsize=(max(4.6 * len(dss), 10), 4.8), squeeze=False)
    for ax, ds in zip(axes[0], dss):
        ng = info['datasets'][ds]['graphs']
        for s in ORDER:
            for arch, ls, mk in (('gin', '-', 'o'), ('gcn', '--', 's')):
                # a batch size >= the dataset is the whole dataset: one point at x = graphs
                pts = dict((min(B or ng, ng), val(find(results, ds, arch, s, B), 'graphs_per_s'))
                           for B in SIZES)   # B = 0 (all) last: it wins
                pts = sorted((x, y) for x, y in pts.items() if y)
                flat = s == 'bgnn-pergraph'   # independent of B: a dotted line without markers
                if pts:
                    ax.plot(*zip(*pts), ls=(':' if arch == 'gin' else '-.') if flat else ls,
                            marker=None if flat else mk, ms=4, color=COLOR[s],
                            label='%s, %s' % (LABEL[s], arch.upper()))
        ax.set_xscale('log')
        ax.set_yscale('log')
        ax.set_title('%s (%d graphs)' % (ds.upper(), ng), fontsize=10)
        ax.set_xlabel('batch size (graphs; the last point: whole dataset)', fontsize=8)
        ax.grid(which='both', alpha=0.3)
    axes[0][0].set_ylabel('graphs / s')
    h, lab = axes[0][0].get_legend_handles_labels()
    fig.legend(h, lab, loc='lower center', ncol=4, fontsize=7)
    fig.suptitle('Graph classification throughput: bgnn (bin models) vs PyG (float), %s' % info.get('gpu'), fontsize=10)
    fig.tight_layout(rect=(0, 0.16, 1, 0.96))
    fig.savefig(path, dpi=110)
    print('plot:', path)


def report(info, results, out):
    results = with_pergraph(results)
    md = table(info, results)
    with open(os.path.join(out, 'tu_table.md'), 'w') as f:
        f.write(md)
    plot(info, results, os.path.join(out, 'performance_tu.png'))
    print()
    print(md)
