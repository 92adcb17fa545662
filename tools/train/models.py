"""models.py - trainable PyTorch versions of examples/*.bgnn.

Parameter names are exactly the tensor names the .bgnn files bind (state_dict keys), weights in
PyTorch Linear layout [out, in].  Training uses Bi-GCN's straight-through estimators
(reference-notes section 2):

* BinActive: forward alpha_i * sign(x) (alpha = mean|x| per node), backward g * 1[|x| <= 1]
  (no alpha);
* BinLinear: forward x @ (sign(W) * m).T + b (m = mean|W| per output channel); backward to the
  input through the unscaled sign(W); weight gradient m*gW*1[|W|<=1] + sign(W)*sum_k(sign(W)*gW)/in;
* sign uses bgnn's bit rule (sign bit clear -> +1), never torch.sign (which maps 0 to 0).

In eval mode the forward computes the .bgnn semantics (up to float summation order); the exact
bit-for-bit inference lives in bgnn_ref.ref_forward and runs on the exported tensors.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as Fn

from bgnn_ref import bits, pm


def sgn(x):
    return pm(bits(x))


class BinActiveFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        alpha = x.abs().mean(dim=1, keepdim=True)
        return sgn(x) * alpha

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)


class SignSTEFn(torch.autograd.Function):
    """+-1 with the bit rule; gradient passed where |x| <= 1 (hardtanh STE)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return sgn(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)


class BinLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        m = w.abs().mean(dim=1, keepdim=True)
        out = x @ (sgn(w) * m).t()
        if b is not None:
            out = out + b
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        n = w.shape[1]
        sw = sgn(w)
        gw = g.t() @ x
        m = w.abs().mean(dim=1, keepdim=True).expand_as(w) * (w.abs() <= 1).to(w.dtype)
        grad_w = m * gw + sw * (sw * gw).sum(dim=1, keepdim=True) / n
        grad_x = g @ sw if ctx.needs_input_grad[0] else None
        grad_b = g.sum(0) if ctx.has_bias else None
        return grad_x, grad_w, grad_b


class BinLinear(nn.Module):
    def __init__(self, fin, fout, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(fout, fin))
        self.bias = nn.Parameter(torch.zeros(fout)) if bias else None
        with torch.no_grad():
            self.weight.normal_(0.0, math.sqrt(1.0 / fin))

    def forward(self, x):
        return BinLinearFn.apply(x, self.weight, self.bias)


class Lin(nn.Module):
    """Float Linear with Bi-GCN's init (normal(0, sqrt(1/in)), zero bias) or PyTorch's."""
    def __init__(self, fin, fout, bias=True, glorot=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(fout, fin))
        self.bias = nn.Parameter(torch.zeros(fout)) if bias else None
        with torch.no_grad():
            if glorot:
                a = math.sqrt(6.0 / (fin + fout))
                self.weight.uniform_(-a, a)
            else:
                self.weight.normal_(0.0, math.sqrt(1.0 / fin))

    def forward(self, x):
        return Fn.linear(x, self.weight, self.bias)


def binact(x):
    return BinActiveFn.apply(x)


def make_rng():
    """A numpy generator seeded from torch's stream (so torch.manual_seed fixes it too)."""
    return np.random.default_rng(int(torch.randint(0, 2 ** 62, ()).item()))


def dropout(x, p, training, rng):
    """Inverted dropout (as Fn.dropout: keep with probability 1-p, scale 1/(1-p)). On the CPU
    the mask comes from numpy's PCG64, about 3x faster than torch's bernoulli_ for the
    N x F input masks of sage_bin/saint_bin; on other devices Fn.dropout."""
    if not training or p == 0:
        return x
    if x.device.type != 'cpu':
        return Fn.dropout(x, p, True)
    m = (rng.random(tuple(x.shape), dtype=np.float32) >= p).astype(np.float32)
    m *= np.float32(1.0 / (1.0 - p))
    return x * torch.from_numpy(m)


def standardize_t(x, eps=1e-4):
    """Per row (x - mean) / (unbiased std + eps). The variance is clamped at 1e-30 before the
    square root so that a constant row (e.g. an all-zero relu row: forward 0 either way) has a
    finite gradient; otherwise the value is torch.std's."""
    mu = x.mean(dim=1, keepdim=True)
    d = x - mu
    var = (d * d).sum(dim=1, keepdim=True) / max(x.shape[1] - 1, 1)
    return d / (var.clamp_min(1e-30).sqrt() + eps)


class GCNFP32(nn.Module):
    def __init__(self, ds, hidden=64, dropout=0.5):
        super().__init__()
        self.A = ds.graph(True, 'sym')
        self.dropout = dropout
        self.conv1 = Lin(ds.num_features, hidden, glorot=True)
        self.conv2 = Lin(hidden, ds.num_classes, glorot=True)

    def forward(self, X):
        x = Fn.dropout(X, self.dropout, self.training)
        h = self.A.spmm(Fn.linear(x, self.conv1.weight)) + self.conv1.bias
        h = Fn.relu(h)
        h = Fn.dropout(h, self.dropout, self.training)
        y = self.A.spmm(Fn.linear(h, self.conv2.weight)) + self.conv2.bias
        return Fn.log_softmax(y, dim=1)


class GCNFull(nn.Module):
    """Bi-GCN: BN(affine=False) once; per layer BinActive -> dropout -> BinLinear(+b) -> Asym."""
    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(True, 'sym')
        self.dropout = dropout
        self.bn = nn.BatchNorm1d(ds.num_features, affine=False, eps=1e-5)
        self.conv1 = BinLinear(ds.num_features, hidden)
        self.conv2 = BinLinear(hidden, ds.num_classes)

    def forward(self, X):
        x = self.bn(X)
        for conv in (self.conv1, self.conv2):
            x = binact(x)
            x = Fn.dropout(x, self.dropout, self.training)
            x = self.A.spmm(conv(x))
        return Fn.log_softmax(x, dim=1)


class GCNBin(nn.Module):
    """The paper's "bin" GCN: BMM.FBB, BSpMM.BBB over A+I (0/1), BMM.BBF, BSpMM.FBF over Asym.

    The BBB aggregation is trained through a sign STE whose input is the degree-normalised
    mean of the +-1 values (same sign as the integer sum, in [-1, 1])."""
    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(True, 'none')
        self.Am = ds.graph(True, 'mean')    # same pattern, r = 1/d: the STE's input
        self.Ah = ds.graph(True, 'sym')
        self.dropout = dropout
        self.bn = nn.BatchNorm1d(ds.num_features, affine=False, eps=1e-5)
        self.conv1 = BinLinear(ds.num_features, hidden, bias=False)
        self.conv2 = BinLinear(hidden, ds.num_classes, bias=False)
        self.conv2.bias = nn.Parameter(torch.zeros(ds.num_classes))   # added after aggregation

    def forward(self, X):
        x = self.bn(X)
        x = Fn.dropout(x, self.dropout, self.training)
        t1 = BinLinearFn.apply(x, self.conv1.weight, None)        # float x . sign(W1) m
        u = SignSTEFn.apply(t1)                                    # bmm.FBB output bits
        h1 = SignSTEFn.apply(self.Am.spmm(u))                      # bspmm.BBB (sign of mean)
        h = Fn.dropout(h1, self.dropout, self.training)
        s2 = BinLinearFn.apply(h, self.conv2.weight, None)         # bmm.BBF, * m
        y = self.Ah.spmm(s2) + self.conv2.bias                     # bspmm.FBF + b
        return Fn.log_softmax(y, dim=1)


def bin_fbb(x, w):
    """bmm.FBB in training: the bits of x . sign(w) (float x, binary weights) through a sign
    STE whose input is x . sign(w) m (same sign, m > 0), as GCNBin's first layer."""
    return SignSTEFn.apply(BinLinearFn.apply(x, w, None))


class SageConvB(nn.Module):
    def __init__(self, fin, fout, root_bias=False):
        super().__init__()
        self.lin_l = BinLinear(fin, fout, bias=not root_bias)
        self.lin_r = BinLinear(fin, fout, bias=root_bias)


class SageFull(nn.Module):
    """sage_full: standardize; sage_conv {agg FBF mean, mm BBF absmean}; relu; standardize;
    sage_conv; log_softmax.

    SageBin: per layer  mean_j bin(x_j . sign(W_l))  (bmm.FBB on the float standardised input,
    then bspmm.BBF: the mean of +-1 over the 0/1 pattern)  + BinLinear_r(x) + b_r; relu and
    standardize between the layers as sage_full."""
    binary_agg = False

    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(False, 'mean')
        self.dropout = dropout
        self.conv1 = SageConvB(ds.num_features, hidden, self.binary_agg)
        self.conv2 = SageConvB(hidden, ds.num_classes, self.binary_agg)
        self.xb = None
        self.rng = make_rng()

    def forward(self, X):
        if self.xb is None:   # layer 1's (binarised) inputs are constant (no gradient to X)
            with torch.no_grad():
                xs = standardize_t(X)
                self.xb = (xs if self.binary_agg else binact(self.A.spmm(xs)), binact(xs))
        h = None
        for i, conv in enumerate((self.conv1, self.conv2)):
            h_bin = self.xb[1] if i == 0 else binact(h)
            h_b = dropout(h_bin, self.dropout, self.training, self.rng)
            if self.binary_agg:
                x = self.xb[0] if i == 0 else h
                t = bin_fbb(dropout(x, self.dropout, self.training, self.rng), conv.lin_l.weight)
                u = self.A.spmm(t)                                    # bspmm.BBF, mean
            else:
                a_bin = self.xb[0] if i == 0 else binact(self.A.spmm(h))
                u = conv.lin_l(dropout(a_bin, self.dropout, self.training, self.rng))
            h = u + conv.lin_r(h_b)
            if i == 0:
                h = standardize_t(Fn.relu(h))
        return Fn.log_softmax(h, dim=1)


class SageBin(SageFull):
    binary_agg = True


class IndGCNFull(nn.Module):
    """indgcn_full: standardize; per layer BinLinear(mean_j h_j) (+b); relu + standardize
    between the layers."""

    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(False, 'mean')
        self.dropout = dropout
        self.conv1 = BinLinear(ds.num_features, hidden)
        self.conv2 = BinLinear(hidden, ds.num_classes)
        self.xb = None
        self.rng = make_rng()

    def forward(self, X):
        if self.xb is None:
            with torch.no_grad():
                self.xb = binact(self.A.spmm(standardize_t(X)))
        h = None
        for i, conv in enumerate((self.conv1, self.conv2)):
            a_bin = self.xb if i == 0 else binact(self.A.spmm(h))
            h = conv(dropout(a_bin, self.dropout, self.training, self.rng))
            if i == 0:
                h = standardize_t(Fn.relu(h))
        return Fn.log_softmax(h, dim=1)


class IndGCNBin(nn.Module):
    """indgcn_bin: gcn_bin's structure with indGCN's aggregation (neighbour mean, no self loop)
    and per-node standardisation:  bmm.FBB -> bspmm.BBB (sign of the mean of +-1, trained
    through a sign STE whose input is that mean, in [-1, 1]) -> bmm.BBF (* m) -> bspmm.FBF
    (mean) -> + b2."""

    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(False, 'mean')
        self.dropout = dropout
        self.conv1 = BinLinear(ds.num_features, hidden, bias=False)
        self.conv2 = BinLinear(hidden, ds.num_classes, bias=False)
        self.conv2.bias = nn.Parameter(torch.zeros(ds.num_classes))   # added after aggregation
        self.xs = None
        self.rng = make_rng()

    def forward(self, X):
        if self.xs is None:
            with torch.no_grad():
                self.xs = standardize_t(X)
        x = dropout(self.xs, self.dropout, self.training, self.rng)
        u = bin_fbb(x, self.conv1.weight)                          # bmm.FBB
        h = SignSTEFn.apply(self.A.spmm(u))                        # bspmm.BBB (sign of mean)
        h = dropout(h, self.dropout, self.training, self.rng)
        s2 = BinLinearFn.apply(h, self.conv2.weight, None)         # bmm.BBF, * m
        y = self.A.spmm(s2) + self.conv2.bias                      # bspmm.FBF + b
        return Fn.log_softmax(y, dim=1)


class GraphConvB(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin_rel = BinLinear(fin, fout, bias=False)
        self.lin_root = BinLinear(fin, fout, bias=True)


class SaintFull(nn.Module):
    """saint_full: standardize; 2 x (Asym . BinLinear(x) + BinLinear_root(x) + b), no ReLU;
    Linear(concat).

    SaintBin: the neighbour branch is mean_j bin(x_j . sign(W)) (bmm.FBB on the float layer
    input, then bspmm.BBF: the mean of +-1 over the 0/1 pattern), trained through a sign STE."""
    binary_agg = False

    def __init__(self, ds, hidden=64, dropout=0.4):
        super().__init__()
        self.A = ds.graph(False, 'mean' if self.binary_agg else 'sym')
        self.dropout = dropout
        self.conv1 = GraphConvB(ds.num_features, hidden)
        self.conv2 = GraphConvB(hidden, hidden)
        self.lin = Lin(2 * hidden, ds.num_classes)
        self.xb = None
        self.rng = make_rng()

    def forward(self, X):
        if self.xb is None:   # layer 1's (binarised) input is constant (no gradient to X)
            with torch.no_grad():
                xs = standardize_t(X)
                self.xb = (xs, binact(xs))
        h = None
        rs = []
        for i, conv in enumerate((self.conv1, self.conv2)):
            hb = dropout(self.xb[1] if i == 0 else binact(h), self.dropout, self.training, self.rng)
            if self.binary_agg:
                x = self.xb[0] if i == 0 else h
                t = bin_fbb(dropout(x, self.dropout, self.training, self.rng), conv.lin_rel.weight)
            else:
                t = conv.lin_rel(hb)
            h = self.A.spmm(t) + conv.lin_root(hb)
            rs.append(h)
        c = dropout(torch.cat(rs, dim=1), self.dropout, self.training, self.rng)
        return Fn.log_softmax(self.lin(c), dim=1)


class SaintBin(SaintFull):
    binary_agg = True


MODELS = {
    'gcn_fp32': GCNFP32,
    'gcn_full': GCNFull,
    'gcn_bin': GCNBin,
    'sage_full': SageFull,
    'sage_bin': SageBin,
    'indgcn_full': IndGCNFull,
    'indgcn_bin': IndGCNBin,
    'saint_full': SaintFull,
    'saint_bin': SaintBin,
}


def export_tensors(model):
    """state_dict minus bookkeeping, as contiguous float32 CPU tensors."""
    out = {}
    for k, v in model.state_dict().items():
        if k.endswith('num_batches_tracked'):
            continue
        out[k] = v.detach().to('cpu', torch.float32).contiguous().clone()
    return out
