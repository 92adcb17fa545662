"""tu_models.py - trainable GIN / GCN graph classifiers of examples/tu/*.bgnn (fp32, full, bin).

state_dict keys are the .bgnn tensor names, except GIN's scalar `convK.eps`, which export()
writes as the vector `convK.one_plus_eps` (1 + eps repeated over the layer's input width).
Binary forms train with Bi-GCN's estimators from models.py (BinActive, BinLinear, sign STE).
The forward works on a TBatch (a block-diagonal batch on a device); aggregation and readout
are index_add_ (no torch_geometric).  In eval mode it computes the .bgnn semantics up to float
summation order; sums of +-1 values are exact, so a tie gives bit +1 as at inference (mean_sl,
BinLinearPostFn); tu_ref.ref_forward is the exact inference.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as Fn

from tu_ref import READOUT
from models import BinActiveFn, BinLinear, BinLinearFn, Lin, SignSTEFn, export_tensors, sgn


class TBatch:
    """tu_ref.Batch on a device: edges, A+I with sym / mean weights, graph ids."""

    def __init__(self, b, dev):
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev)  # noqa: E731
        self.x, self.y = t(b.x), t(b.y)
        self.n, self.g = b.n, b.num_graphs
        self.row, self.col = t(b.erow), t(b.ecol)
        loop = np.arange(b.n)
        self.row_sl, self.col_sl = t(np.concatenate([b.erow, loop])), t(np.concatenate([b.ecol, loop]))
        deg = np.bincount(b.erow, minlength=b.n).astype(np.float64) + 1.0   # no self loops in TU
        dsl = np.concatenate([b.erow, loop]), np.concatenate([b.ecol, loop])
        self.w_sym = t((1.0 / np.sqrt(deg[dsl[0]] * deg[dsl[1]])).astype(np.float32))[:, None]
        self.inv_deg = t((1.0 / deg).astype(np.float32))[:, None]       # of A+I
        self.gid = t(b.gid)
        self.cnt = t(np.maximum(np.diff(b.ptr), 1).astype(np.float32))[:, None]

    def agg(self, h):                       # sum_{j in N(i)} h_j (no self loops)
        return torch.zeros_like(h).index_add_(0, self.row, h[self.col])

    def agg_sl(self, h, w):                 # sum over A+I with per-edge weights (None: 1)
        return torch.zeros_like(h).index_add_(0, self.row_sl, h[self.col_sl] if w is None else h[self.col_sl] * w)

    def mean_sl(self, h):
        """The mean over A+I as fl(exact sum * fl(1/deg)): the sign of the exact integer count of
        +-1 values, and +0.0 (bit +1) for a tie, as bspmm.BBB.  Per-edge weights fl(1/deg) summed
        in float32 made a tie a +-tiny value, so about a third of the ties (12 % of ENZYMES'
        layer-1 outputs are ties) got bit -1 in training but +1 at inference."""
        return self.agg_sl(h, None) * self.inv_deg

    def readout(self, h, op):
        s = torch.zeros(self.g, h.shape[1], dtype=h.dtype, device=h.device).index_add_(0, self.gid, h)
        return s / self.cnt if op == 'mean' else s


class BinLinearPostFn(BinLinearFn):
    """BinLinearFn without bias, forward fl(fl(x . sign(W)) * m): with +-1 inputs the dot product
    is an exact integer, so its sign (a tie 0 -> +0.0, bit +1) and the scaled value are those of
    bmm.BBB / bmm.BBF * m.  BinLinearFn's x . (sign(W) m) sums rounded multiples of m, which turns
    a tie into +-tiny (18 % of ENZYMES' gcn_bin layer-2 outputs are ties).  Same backward."""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.has_bias = False
        return (x @ sgn(w).t()) * w.abs().mean(dim=1)

    @staticmethod
    def backward(ctx, g):
        return BinLinearFn.backward(ctx, g)[:2]


def binlin(x, w):
    return BinLinearPostFn.apply(x, w)


def binact(x):
    return BinActiveFn.apply(x)


def ste(x):
    return SignSTEFn.apply(x)


class MLP(nn.Module):
    def __init__(self, fin, hidden, binary):
        super().__init__()
        L = BinLinear if binary else (lambda i, o: Lin(i, o, glorot=True))
        self.lin1 = L(fin, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.lin2 = L(hidden, hidden)


class GINConv(nn.Module):
    def __init__(self, fin, hidden, binary):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(()))
        self.mlp = MLP(fin, hidden, binary)


class TUNet(nn.Module):
    """arch gin | gcn, form fp32 | full | bin; layers x hidden; float classifier."""

    def __init__(self, arch, form, num_features, num_classes, hidden=64, layers=3, dropout=0.5,
                 float_input=False, jk=False):
        super().__init__()
        self.jk = jk
        float_input = float_input and arch == 'gin' and form == 'bin'
        self.arch, self.form, self.layers, self.dropout = arch, form, layers, dropout
        self.bn = nn.BatchNorm1d(num_features, affine=False)
        binary = form != 'fp32'
        if float_input:     # gin_bin's first bits: x . sign(W0) (linear { mm: FBB }), not bin(x)
            self.lin0 = BinLinear(num_features, hidden, bias=False)
        for k in range(1, layers + 1):
            fin = num_features if k == 1 and not float_input else hidden
            if arch == 'gin':
                conv = GINConv(fin, hidden, binary)
            elif binary:
                conv = BinLinear(fin, hidden, bias=form == 'full' or k == layers)
            else:
                conv = Lin(fin, hidden, glorot=True)
            setattr(self, 'conv%d' % k, conv)
        self.lin1 = Lin(hidden, hidden, glorot=True)
        self.lin2 = Lin(hidden, num_classes, glorot=True)
        if jk:   # Xu et al.'s readout of every layer (the input too): the sum of per-layer scores
            for k in range(layers + 1):
                setattr(self, 'pred%d' % k, Lin(num_features if k == 0 else hidden, num_classes, glorot=True))

    def convs(self):
        return [getattr(self, 'conv%d' % k) for k in range(1, self.layers + 1)]

    def set_input_stats(self, x):
        """Fix the input batchnorm to the statistics of the training nodes x [N, F] (mean, unbiased
        variance): it then normalises the same way in training and inference.  With batch
        statistics a one-hot column absent from a mini-batch has variance 0 and normalises to 0.0
        (bit +1) in training but to a negative value (bit -1) with the running statistics, which
        flips whole input columns of the bin forms between training and inference."""
        with torch.no_grad():
            self.bn.running_mean.copy_(x.mean(0))
            self.bn.running_var.copy_(x.var(0) if x.shape[0] > 1 else torch.ones_like(x[0]))
        self.fixed_input_bn = True

    def forward(self, b):
        if getattr(self, 'fixed_input_bn', False):
            x = Fn.batch_norm(b.x, self.bn.running_mean, self.bn.running_var, training=False, eps=self.bn.eps)
        else:
            x = self.bn(b.x)
        hs = []
        h = self.gin(b, x, hs) if self.arch == 'gin' else self.gcn(b, x, hs)
        if self.jk:
            score = 0
            for k, hk in enumerate([x] + hs):
                score = score + Fn.dropout(getattr(self, 'pred%d' % k)(b.readout(hk, READOUT[self.arch])), self.dropout,
                                           self.training)
            return Fn.log_softmax(score, dim=1)
        g = b.readout(h, READOUT[self.arch])
        c = Fn.dropout(Fn.relu(self.lin1(g)), self.dropout, self.training)
        return Fn.log_softmax(self.lin2(c), dim=1)

    def gin(self, b, x, hs):
        h = x if self.form != 'bin' else ste(binlin(x, self.lin0.weight)) if hasattr(self, 'lin0') else ste(x)
        for k, conv in enumerate(self.convs(), 1):
            last = k == self.layers
            z = b.agg(h) + (1 + conv.eps) * h
            m = conv.mlp
            if self.form == 'fp32':
                h = Fn.relu(m.lin2(Fn.relu(m.bn(m.lin1(z)))))
                hs.append(h)
                continue
            o = m.lin2(binact(m.bn(m.lin1(binact(z)))))
            h = Fn.relu(o) if last else (ste(o) if self.form == 'bin' else o)
            hs.append(h)
        return h

    def gcn(self, b, h, hs):
        for k, conv in enumerate(self.convs(), 1):
            last = k == self.layers
            if self.form == 'fp32':
                h = Fn.relu(b.agg_sl(Fn.linear(h, conv.weight), b.w_sym) + conv.bias)
            elif self.form == 'full':
                h = b.agg_sl(conv(binact(h)), b.w_sym)
                h = Fn.relu(h) if last else h
            elif not last:     # bmm.FBB / bmm.BBB, then bspmm.BBB over A+I (STE input: the mean)
                t = ste(binlin(h, conv.weight))
                h = ste(b.mean_sl(t))
            else:              # bmm.BBF * m, bspmm.FBF over Asym, + b
                h = Fn.relu(b.agg_sl(binlin(h, conv.weight), b.w_sym) + conv.bias)
            hs.append(h)
        return h


def export(model):
    """The tensors the .bgnn binds: state_dict, with convK.eps -> convK.one_plus_eps [C_in]."""
    out = export_tensors(model)
    if model.arch == 'gin':
        for k, conv in enumerate(model.convs(), 1):
            e = out.pop('conv%d.eps' % k)
            cin = conv.mlp.lin1.weight.shape[1]
            out['conv%d.one_plus_eps' % k] = (torch.tensor(1.0, dtype=torch.float32) + e).expand(cin).contiguous()
    return out
