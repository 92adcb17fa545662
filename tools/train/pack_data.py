#!/usr/bin/env python3
"""pack_data.py - copy Planetoid datasets with 0/1 features bit-packed (features_bits.npz),
small enough to carry to the GPU machine (CiteSeer's features.npy alone is 49 MB).
bgnn_ref.Dataset reads either form.  TU datasets (mutag, proteins, enzymes, nci1): the graph
files, and the features as float attributes + bit-packed one-hot columns (features_packed.npz,
read by tu_ref.TUDataset).

  python3 tools/train/pack_data.py [--data-dir ../shared/data] --out .carry/train_data cora citeseer
  python3 tools/train/pack_data.py --out .carry/tu_data mutag proteins enzymes nci1
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bgnn_ref  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument('--data-dir', default=bgnn_ref.default_data_dir())
p.add_argument('--out', required=True)
p.add_argument('datasets', nargs='+')
a = p.parse_args()
for name in a.datasets:
    src, dst = os.path.join(a.data_dir, name), os.path.join(a.out, name)
    os.makedirs(dst, exist_ok=True)
    if os.path.exists(os.path.join(src, 'graph_ptr.npy')):     # TU: [attributes] + one-hot
        for f in ('graph.mtx', 'graph_ptr.npy', 'graph_labels.npy'):
            shutil.copy(os.path.join(src, f), dst)
        x = np.load(os.path.join(src, 'features.npy'))
        k = x.shape[1]
        while k > 0 and np.isin(x[:, k - 1], (0.0, 1.0)).all():
            k -= 1
        np.savez_compressed(os.path.join(dst, 'features_packed.npz'), attrs=x[:, :k],
                            bits=np.packbits(x[:, k:].astype(bool), axis=1), onehot_cols=x.shape[1] - k)
        print(name, x.shape, '%d float columns, %d packed' % (k, x.shape[1] - k))
        continue
    for f in ('graph.mtx', 'labels.npy', 'train_idx.npy', 'val_idx.npy', 'test_idx.npy'):
        shutil.copy(os.path.join(src, f), dst)
    x = np.load(os.path.join(src, 'features.npy'))
    assert np.isin(x, (0.0, 1.0)).all(), '%s: features are not 0/1' % name
    np.savez_compressed(os.path.join(dst, 'features_bits.npz'),
                        bits=np.packbits(x.astype(bool), axis=1), shape=np.array(x.shape))
    print(name, x.shape, 'packed')
