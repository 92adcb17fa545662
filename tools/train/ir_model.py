"""ir_model.py - a trainable PyTorch model built from bgnnc's lowered IR (issue 17 point 3: the
precision variants of a model are trained by one generic recipe, not a hand-written class each).

`bgnnc MODEL.bgnn --emit=ir --passes=` prints the IR right after lowering (docs/ir.md): one line
an instruction, `%ID = OP OPERANDS ATTRS : TYPE ; LINE:COL`.  IRModel runs those instructions
in PyTorch, with Bi-GCN's straight-through estimators (models.py) where a value becomes 1-bit:

* `param ... : b1[..]`     a float latent weight (stored layout, exported under its name); the
                           forward uses its signs (bit rule), the backward passes g where |w| <= 1;
* `param.scale NAME`       m = mean |W| per output channel of that weight (differentiable);
* `param ... : f32[..]`    a float parameter (zeros), except the statistics a `batchnorm` reads:
                           those are BatchNorm1d(affine=False) running statistics, exported;
* `bin`, a B output        sign with the hardtanh STE (models.SignSTEFn); a 1-bit aggregation's
                           STE input is the degree-normalised mean of the same sum (as GCNBin);
* `bmm` / `bspmm` / `scl` / `add` / `absmean` / `relu` / `standardize` / `log_softmax` as
                           docs/semantics.md, in float (training need not be bit exact: the
                           exported tensors are scored by `bgnnc run --target cpu`).
Dropout (p) is applied to the left operand of every bmm while training.  An op outside this
list is refused with its line, so a new op cannot be trained silently wrong.
"""
import re
import subprocess

import torch
import torch.nn as nn
import torch.nn.functional as Fn

from models import SignSTEFn, sgn, standardize_t

LINE = re.compile(r'^(%\d+)\s*=\s*(\S+)\s*(.*?)\s*:\s*(\S+)\s*(?:;\s*(\d+:\d+))?\s*$')
OUT = re.compile(r'^output\s+(%\d+)\s+"([^"]*)"')
TOKEN = re.compile(r'"[^"]*"(?:\.T)?|%\d+|\w+=(?:"[^"]*"|\S+)|\S+')


class SignViaFn(torch.autograd.Function):
    """sign(v) forward; the gradient of the STE input u (same sign as v) where |u| <= 1."""
    @staticmethod
    def forward(ctx, v, u):
        ctx.save_for_backward(u)
        return sgn(v)

    @staticmethod
    def backward(ctx, g):
        (u,) = ctx.saved_tensors
        return None, g * (u.abs() <= 1).to(g.dtype)


class Inst:
    def __init__(self, vid, op, operands, attrs, typ, pos):
        self.id, self.op, self.operands, self.attrs, self.type, self.pos = vid, op, operands, attrs, typ, pos

    @property
    def base(self):
        return self.op.split('.')[0]

    @property
    def prec(self):
        return self.op.split('.')[1] if '.' in self.op else ''


def parse_ir(text, source='IR'):
    """The instructions and the outputs (value id, name) of an IR dump."""
    insts, outputs = [], []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith('model ') or s.startswith('#'):
            continue
        m = OUT.match(s)
        if m:
            outputs.append((m.group(1), m.group(2)))
            continue
        m = LINE.match(s)
        if not m:
            raise ValueError('%s line %d: cannot read "%s"' % (source, n, s))
        operands, attrs = [], {}
        for tok in TOKEN.findall(m.group(3).replace(',', ' ')):
            if '=' in tok and not tok.startswith('"'):
                k, v = tok.split('=', 1)
                attrs[k] = v.strip('"')
            else:
                operands.append(tok)
        insts.append(Inst(m.group(1), m.group(2), operands, attrs, m.group(4), m.group(5) or '?'))
    if not outputs:
        raise ValueError('%s: no output' % source)
    return insts, outputs


def lowered_ir(bgnnc, model_path):
    r = subprocess.run([bgnnc, model_path, '--emit=ir', '--passes='], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('%s --emit=ir failed: %s' % (model_path, r.stderr.strip()))
    return r.stdout


def shape_of(typ):
    m = re.match(r'(\w+)\[([^\]]*)\]', typ)
    return m.group(1), [d.strip() for d in m.group(2).split(',')]


class IRModel(nn.Module):
    """The model of an IR dump over dataset ds (bgnn_ref.Dataset); forward() -> the first output."""

    def __init__(self, ir_text, ds, dropout=0.4, source='IR'):
        super().__init__()
        self.insts, self.outputs = parse_ir(ir_text, source)
        self.ds, self.p, self.source = ds, dropout, source
        self.latent = nn.ParameterDict()   # key: safe name -> parameter
        self.bns = nn.ModuleDict()
        self.names = {}                    # IR value id -> (kind, key, transposed)
        bn_stats = {}
        for i in self.insts:
            if i.base == 'batchnorm':
                bn_stats[i.operands[1]] = (i, 'running_mean')
                bn_stats[i.operands[2]] = (i, 'running_var')
        for i in self.insts:
            if i.op != 'param':
                continue
            name, tr = i.operands[0].rstrip('T').rstrip('.').strip('"'), i.operands[0].endswith('.T')
            dt, dims = shape_of(i.type)
            dims = [int(d) for d in dims]
            stored = list(reversed(dims)) if tr else dims
            key = re.sub(r'\W', '_', name)
            if i.id in bn_stats:
                bi, _ = bn_stats[i.id]
                if bi.id not in self.bns:
                    self.bns[bi.id.strip('%')] = nn.BatchNorm1d(dims[0], affine=False,
                                                                eps=float(bi.attrs.get('eps', 1e-5)))
                self.names[i.id] = ('bn', name, bn_stats[i.id][1])
                continue
            w = torch.empty(*stored)
            if dt == 'b1':
                fin = dims[0] if len(dims) == 2 else 1
                w.normal_(0.0, (1.0 / fin) ** 0.5)
            else:
                w.zero_()
            self.latent[key] = nn.Parameter(w)
            self.names[i.id] = ('param', name, key, tr)
        # each param.scale's weight, resolved once
        self.scale_of = {i.id: self._param_id(i.operands[0]) for i in self.insts if i.op == 'param.scale'}

    def weight_io(self, vid):
        _, _, key, tr = self.names[vid]
        w = self.latent[key]
        return w.t() if tr else w

    def tensors(self):
        """name -> float32 tensor, in the stored layouts the .bgnn binds."""
        out = {}
        for vid, v in self.names.items():
            if v[0] == 'param':
                out[v[1]] = self.latent[v[2]].detach().float().contiguous().clone()
        for i in self.insts:
            if i.base == 'batchnorm':
                bn = self.bns[i.id.strip('%')]
                out[self.names[i.operands[1]][1]] = bn.running_mean.detach().float().clone()
                out[self.names[i.operands[2]][1]] = bn.running_var.detach().float().clone()
        return out

    def load_tensors(self, tensors):
        """Set the parameters and batchnorm statistics from name -> tensor (stored layouts)."""
        import torch as _t
        with _t.no_grad():
            for vid, v in self.names.items():
                if v[0] == 'param':
                    self.latent[v[2]].copy_(_t.as_tensor(tensors[v[1]]))
            for i in self.insts:
                if i.base == 'batchnorm':
                    bn = self.bns[i.id.strip('%')]
                    bn.running_mean.copy_(_t.as_tensor(tensors[self.names[i.operands[1]][1]]))
                    bn.running_var.copy_(_t.as_tensor(tensors[self.names[i.operands[2]][1]]))

    def _bits(self, v, ste_in=None):
        return SignSTEFn.apply(v) if ste_in is None else SignViaFn.apply(v, ste_in)

    def forward(self, X):
        env = {}
        graphs = {}
        ds = self.ds
        for i in self.insts:
            a = i.operands
            b = i.base
            if b == 'graph':
                sl, norm = i.attrs.get('self_loops') == 'true', i.attrs.get('norm', 'none')
                graphs[i.id] = (ds.graph(sl, norm), ds.graph(sl, 'mean'))
                continue
            if b == 'input':
                v = X
            elif i.op == 'param':
                kind = self.names[i.id][0]
                v = None if kind == 'bn' else self.weight_io(i.id)
                if v is not None and shape_of(i.type)[0] == 'b1':
                    v = SignSTEFn.apply(v)   # the weight STE: g where |w| <= 1
            elif i.op == 'param.scale':
                w = self.weight_io(self.scale_of[i.id])
                v = w.abs().mean(dim=0)
            elif b == 'batchnorm':
                v = self.bns[i.id.strip('%')](env[a[0]])
            elif b == 'standardize':
                v = standardize_t(env[a[0]], float(i.attrs.get('eps', 1e-4)))
            elif b == 'bmm':
                x = env[a[0]]
                if self.training and self.p > 0:
                    x = Fn.dropout(x, self.p, True)
                v = x @ env[a[1]]
                if i.prec[2:] == 'B':
                    v = self._bits(v)
            elif b == 'scl':
                v = env[a[0]]
                if a[1] != 'none':
                    v = v * env[a[1]][:, None]
                if a[2] != 'none':
                    v = v * env[a[2]][None, :]
            elif b == 'bin':
                v = self._bits(env[a[0]])
            elif b == 'absmean':
                v = env[a[0]].abs().mean(dim=1)
            elif b == 'bspmm':
                g, gm = graphs[a[0]]
                h = env[a[1]]
                v = g.spmm(h)
                if i.prec[2:] == 'B':
                    v = self._bits(v, gm.spmm(h))
            elif b == 'add':
                v = env[a[0]] + env[a[1]]
                if i.prec[2:] == 'B':
                    v = self._bits(v)
            elif b == 'relu':
                v = Fn.relu(env[a[0]])
            elif b == 'log_softmax':
                v = Fn.log_softmax(env[a[0]], dim=1)
            else:
                raise ValueError('%s %s: op %s cannot be trained by ir_model.py' % (self.source, i.pos, i.op))
            env[i.id] = v
        return env[self.outputs[0][0]]

    def _param_id(self, quoted):
        name = quoted.rstrip('T').rstrip('.').strip('"')
        for vid, v in self.names.items():
            if v[0] == 'param' and v[1] == name:
                return vid
        raise ValueError('%s: param.scale of an unknown weight %s' % (self.source, quoted))
