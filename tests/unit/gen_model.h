/* gen_model.h - a generator of random *valid* .bgnn models (text), for differential tests:
 * the same model must give bit-identical outputs through every pass pipeline (and, on a GPU,
 * on the GPU and the CPU reference).  Models mix high-level layers and low-level ops of every
 * precision combination the checker accepts, with awkward widths (1, 31, 33, 70, ...), and the
 * patterns the fusion passes rewrite: per-channel chains (bias, signed column scale,
 * batchnorm with or without gamma / beta, relu) before a bin or an add.FFB (fold-threshold),
 * bin(standardize) (bin.center), scl / bias / tensor add / relu after a product
 * (fuse-add), batchnorm read by a bmm.F?? (fuse-batchnorm), a small popcount product (with or
 * without steps, or a gcn_conv layer) read by an aggregation (fuse-mm-spmm).  Every value
 * nothing reads is an output, so every pattern is observed.
 * bg_gen_model(seed, buf, size) writes the model and returns its length; bg_gen_batch_model
 * the same model (the same random stream) plus graph-level values for a batch of graphs: one
 * or two readouts (sum / mean / max of a node-level F value) each read by a small classifier
 * (linear FFF or BBF, relu, log_softmax) and a bin, all outputs. */
#ifndef BG_GEN_MODEL_H
#define BG_GEN_MODEL_H
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char name[16];
    char prec;  /* 'F' or 'B' */
    int width;
} GenVal;

typedef struct {
    char *buf;
    size_t size, len;
    unsigned long long s;
    GenVal v[64];
    int nv, nparams, ngraphs;
    const char *graphs[3];
} Gen;

static unsigned gen_rand(Gen *g, unsigned n) {
    g->s ^= g->s >> 12; g->s ^= g->s << 25; g->s ^= g->s >> 27;
    return (unsigned)((g->s * 2685821657736338717ULL) >> 33) % n;
}

static void gen_put(Gen *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(g->buf + g->len, g->size - g->len, fmt, ap);
    va_end(ap);
    if (k > 0 && g->len + (size_t)k < g->size) g->len += (size_t)k;
}

static int gen_width(Gen *g) {
    static const int w[] = {1, 3, 8, 31, 32, 33, 40, 64, 70};
    return w[gen_rand(g, 9)];
}

/* Declares a parameter and returns its name. */
static const char *gen_param(Gen *g, char prec, int rows, int cols, char *out) {
    snprintf(out, 16, "P%d", g->nparams);
    if (cols > 0)
        gen_put(g, "param %s : %s[%d, %d] = \"p%d\"%s\n", out, prec == 'B' ? "b1" : "f32", rows, cols,
                g->nparams, gen_rand(g, 2) ? ".T" : "");
    else
        gen_put(g, "param %s : f32[%d] = \"p%d\"\n", out, rows, g->nparams);
    g->nparams++;
    return out;
}

static GenVal *gen_pick(Gen *g, char prec) {
    int idx[64], n = 0;
    for (int i = 0; i < g->nv; i++)
        if (!prec || g->v[i].prec == prec) idx[n++] = i;
    return n ? &g->v[idx[gen_rand(g, (unsigned)n)]] : NULL;
}

static GenVal *gen_new(Gen *g, char prec, int width) {
    GenVal *v = &g->v[g->nv];
    snprintf(v->name, sizeof v->name, "v%d", g->nv);
    v->prec = prec;
    v->width = width;
    g->nv++;
    return v;
}

static char gen_pb(Gen *g) { return gen_rand(g, 2) ? 'B' : 'F'; }

/* A float value to fold or fuse into: a bmm / bspmm of x with an F result (the producer the
 * fusion passes look for), or the relu of an existing float value. */
static GenVal *gen_float_producer(Gen *g, GenVal *x, const char *A, int width) {
    char w[16];
    GenVal *y;
    switch (gen_rand(g, 3)) {
    case 0: {
        char yl = gen_pb(g);
        gen_param(g, yl, x->width, width, w);
        y = gen_new(g, 'F', width);
        gen_put(g, "%s = bmm.%c%cF(%s, %s)\n", y->name, x->prec, yl, x->name, w);
        break;
    }
    case 1:
        y = gen_new(g, 'F', x->width);
        gen_put(g, "%s = bspmm.%c%cF(%s, %s)\n", y->name, x->prec, gen_pb(g), A, x->name);
        break;
    default: {
        GenVal *xf = gen_pick(g, 'F');
        y = gen_new(g, 'F', xf->width);
        gen_put(g, "%s = relu(%s)\n", y->name, xf->name);
        break;
    }
    }
    return y;
}

/* One per-channel step of a chain on value v (fold-threshold, fuse-add): a bias, a column
 * scale of either sign (a parameter), a batchnorm (affine or not), a relu, or (epi != 0) a
 * scl with Bi-GCN row and column scales or the add of another value of the same width. */
static GenVal *gen_chain_op(Gen *g, GenVal *v, int epi) {
    char p1[16], p2[16], p3[16], p4[16];
    GenVal *y = NULL;
    switch (gen_rand(g, epi ? 6 : 4)) {
    case 0:
        gen_param(g, 'F', v->width, 0, p1);
        y = gen_new(g, 'F', v->width);
        gen_put(g, "%s = add.FFF(%s, %s)\n", y->name, v->name, p1);
        break;
    case 1:
        gen_param(g, 'F', v->width, 0, p1);
        y = gen_new(g, 'F', v->width);
        gen_put(g, "%s = scl(%s, cols: %s)\n", y->name, v->name, p1);
        break;
    case 2: {
        int affine = (int)gen_rand(g, 3); /* 0: none, 1: gamma and beta, 2: eps attribute */
        gen_param(g, 'F', v->width, 0, p1);
        gen_param(g, 'F', v->width, 0, p2);
        y = gen_new(g, 'F', v->width);
        if (affine == 1) {
            gen_param(g, 'F', v->width, 0, p3);
            gen_param(g, 'F', v->width, 0, p4);
            gen_put(g, "%s = batchnorm(%s, %s, %s, %s, %s)\n", y->name, v->name, p1, p2, p3, p4);
        } else {
            gen_put(g, "%s = batchnorm(%s, %s, %s)%s\n", y->name, v->name, p1, p2, affine ? " { eps: 0.001 }" : "");
        }
        break;
    }
    case 3:
        y = gen_new(g, 'F', v->width);
        gen_put(g, "%s = relu(%s)\n", y->name, v->name);
        break;
    case 4: {
        GenVal *src = gen_pick(g, 'F');
        gen_param(g, 'B', gen_width(g), v->width, p1);
        y = gen_new(g, 'F', v->width);
        gen_put(g, "%s = scl(%s, rows: absmean(%s), cols: scale(%s))\n", y->name, v->name, src->name, p1);
        break;
    }
    default: {
        GenVal *z = NULL;
        for (int i = 0; i < g->nv; i++)
            if (&g->v[i] != v && g->v[i].prec == 'F' && g->v[i].width == v->width) z = &g->v[i];
        y = gen_new(g, 'F', v->width);
        if (z && gen_rand(g, 2)) gen_put(g, "%s = add.FFF(%s, %s)\n", y->name, z->name, v->name);
        else if (z) gen_put(g, "%s = add.FFF(%s, %s)\n", y->name, v->name, z->name);
        else gen_put(g, "%s = relu(%s)\n", y->name, v->name);
        break;
    }
    }
    return y;
}

static void gen_step(Gen *g) {
    char w[16], b[16], w2[16];
    GenVal *x = gen_pick(g, 0);
    const char *A = g->graphs[gen_rand(g, (unsigned)g->ngraphs)];
    int out = gen_width(g);
    unsigned kind = gen_rand(g, 17);
    if (kind >= 11 && (g->nv > 50 || g->nparams > 36)) kind = 3; /* the fused patterns take several values */
    switch (kind) {
    case 11:
    case 12: { /* fold-threshold: producer, 1-4 per-channel steps, then bin or add.FFB */
        GenVal *v = gen_float_producer(g, x, A, out);
        int n = 1 + (int)gen_rand(g, 4);
        for (int k = 0; k < n; k++) v = gen_chain_op(g, v, 0);
        if (gen_rand(g, 4) == 0) {
            gen_param(g, 'F', v->width, 0, b);
            GenVal *y = gen_new(g, 'B', v->width);
            gen_put(g, "%s = add.FFB(%s, %s)\n", y->name, v->name, b);
        } else {
            GenVal *y = gen_new(g, 'B', v->width);
            gen_put(g, "%s = bin(%s)\n", y->name, v->name);
        }
        break;
    }
    case 13: { /* fuse-add: producer, then scl / bias / tensor add / relu steps, maybe a bin */
        GenVal *v = gen_float_producer(g, x, A, out);
        int n = 1 + (int)gen_rand(g, 3);
        for (int k = 0; k < n; k++) v = gen_chain_op(g, v, 1);
        if (gen_rand(g, 3) == 0) {
            GenVal *y = gen_new(g, 'B', v->width);
            gen_put(g, "%s = bin(%s)\n", y->name, v->name);
        }
        break;
    }
    case 14: { /* fuse-batchnorm: batchnorm read only by a bmm.F?? */
        GenVal *xf = gen_pick(g, 'F');
        char mu[16], var[16], ga[16], be[16];
        gen_param(g, 'F', xf->width, 0, mu);
        gen_param(g, 'F', xf->width, 0, var);
        GenVal *t = gen_new(g, 'F', xf->width);
        switch (gen_rand(g, 3)) {
        case 0: gen_put(g, "%s = batchnorm(%s, %s, %s)\n", t->name, xf->name, mu, var); break;
        case 1:
            gen_param(g, 'F', xf->width, 0, ga);
            gen_param(g, 'F', xf->width, 0, be);
            gen_put(g, "%s = batchnorm(%s, %s, %s, %s, %s) { eps: 0.01 }\n", t->name, xf->name, mu, var, ga, be);
            break;
        default:
            gen_param(g, 'F', xf->width, 0, ga);
            gen_param(g, 'F', xf->width, 0, be);
            gen_put(g, "%s = batchnorm(%s, %s, %s, %s, %s)\n", t->name, xf->name, mu, var, ga, be);
            break;
        }
        char p[4] = {'F', gen_pb(g), gen_pb(g), 0};
        gen_param(g, p[1], xf->width, out, w);
        GenVal *y = gen_new(g, p[2], out);
        gen_put(g, "%s = bmm.%s(%s, %s)\n", y->name, p, t->name, w);
        break;
    }
    case 15: { /* bin(standardize): bin.center when nothing else reads the standardize */
        GenVal *xf = gen_pick(g, 'F'); /* (eps: 0 would give NaN rows, whose bits are unspecified) */
        GenVal *t = gen_new(g, 'F', xf->width);
        gen_put(g, "%s = standardize(%s)%s\n", t->name, xf->name, gen_rand(g, 2) ? " { eps: 0.5 }" : "");
        GenVal *y = gen_new(g, 'B', xf->width);
        gen_put(g, "%s = bin(%s)\n", y->name, t->name);
        break;
    }
    case 16: { /* fuse-mm-spmm: a small popcount product (B activation, B weights) read by a bspmm */
        static const int mw[] = {1, 3, 7, 8, 16, 33, 80}; /* 80: too wide for fuse-mm-spmm (aggregate-first) */
        int mo = mw[gen_rand(g, 7)];
        GenVal *xb = gen_pick(g, 'B');
        if (!xb || gen_rand(g, 3) == 0) {
            GenVal *xf = gen_pick(g, 'F');
            xb = gen_new(g, 'B', xf->width);
            gen_put(g, "%s = bin(%s)\n", xb->name, xf->name);
        }
        char zl = gen_pb(g), yl = gen_pb(g), ol = gen_pb(g);
        gen_param(g, 'B', xb->width, mo, w);
        if (gen_rand(g, 3) == 0) { /* the layer: product, Bi-GCN scale, aggregation, bias */
            int bias = gen_rand(g, 2);
            if (bias) gen_param(g, 'F', mo, 0, b);
            GenVal *y = gen_new(g, ol, mo);
            gen_put(g, "%s = gcn_conv(%s, %s, %s%s%s) { mm: BB%c, agg: %c%c%c }\n", y->name, xb->name, A, w,
                    bias ? ", " : "", bias ? b : "", zl, zl, yl, ol);
            break;
        }
        GenVal *t = gen_new(g, 'F', mo);
        gen_put(g, "%s = bmm.BBF(%s, %s)\n", t->name, xb->name, w);
        int n = (int)gen_rand(g, 3); /* steps of the product (fuse-add), a bin (fuse-bin, fold-threshold) */
        for (int k = 0; k < n; k++) t = gen_chain_op(g, t, 1);
        if (zl == 'B') {
            GenVal *tb = gen_new(g, 'B', mo);
            gen_put(g, "%s = bin(%s)\n", tb->name, t->name);
            t = tb;
        }
        GenVal *y = gen_new(g, ol, mo);
        gen_put(g, "%s = bspmm.%c%c%c(%s, %s)\n", y->name, zl, yl, ol, A, t->name);
        break;
    }
    default: break;
    }
    if (kind >= 11) return;
    switch (kind) {
    case 0: { /* linear */
        char mm[4] = {gen_pb(g), gen_pb(g), gen_pb(g), 0};
        const char *bin = "";
        if (mm[0] == 'B' && x->prec == 'F') bin = gen_rand(g, 2) ? ", bin: absmean" : ", bin: sign";
        else mm[0] = x->prec;
        gen_param(g, mm[1], x->width, out, w);
        int bias = gen_rand(g, 2);
        if (bias) gen_param(g, 'F', out, 0, b);
        GenVal *y = gen_new(g, mm[2], out);
        gen_put(g, "%s = linear(%s, %s%s%s) { mm: %s%s }\n", y->name, x->name, w, bias ? ", " : "", bias ? b : "", mm, bin);
        break;
    }
    case 1: { /* gcn_conv */
        char mm[4] = {gen_pb(g), gen_pb(g), gen_pb(g), 0}, agg[4] = {0, gen_pb(g), gen_pb(g), 0};
        const char *bin = "";
        if (mm[0] == 'B' && x->prec == 'F') bin = ", bin: absmean";
        else mm[0] = x->prec;
        agg[0] = mm[2];
        gen_param(g, mm[1], x->width, out, w);
        int bias = gen_rand(g, 2);
        if (bias) gen_param(g, 'F', out, 0, b);
        GenVal *y = gen_new(g, agg[2], out);
        gen_put(g, "%s = gcn_conv(%s, %s, %s%s%s) { mm: %s, agg: %s%s }\n", y->name, x->name, A, w,
                bias ? ", " : "", bias ? b : "", mm, agg, bin);
        break;
    }
    case 2: { /* sage_conv / graph_conv on a float input */
        GenVal *xf = gen_pick(g, 'F');
        if (!xf) return;
        int sage = gen_rand(g, 2);
        char mm[4] = {gen_pb(g), gen_pb(g), 'F', 0};
        const char *bin = mm[0] == 'B' ? ", bin: absmean" : "";
        gen_param(g, mm[1], xf->width, out, w);
        gen_param(g, mm[1], xf->width, out, w2);
        gen_param(g, 'F', out, 0, b);
        GenVal *y = gen_new(g, 'F', out);
        gen_put(g, "%s = %s(%s, %s, %s, %s, %s) { mm: %s, agg: F%cF, add: FFF%s }\n", y->name,
                sage ? "sage_conv" : "graph_conv", xf->name, A, w, w2, b, mm, gen_pb(g), bin);
        break;
    }
    case 3: { /* bmm.XYZ */
        char p[4] = {x->prec, gen_pb(g), gen_pb(g), 0};
        gen_param(g, p[1], x->width, out, w);
        GenVal *y = gen_new(g, p[2], out);
        gen_put(g, "%s = bmm.%s(%s, %s)\n", y->name, p, x->name, w);
        break;
    }
    case 4: { /* bspmm.XYZ */
        static const char *const m[] = {"", " { method: ifelse }", " { method: andnot }", " { method: popc2 }"};
        char p[4] = {x->prec, gen_pb(g), gen_pb(g), 0};
        GenVal *y = gen_new(g, p[2], x->width);
        gen_put(g, "%s = bspmm.%s(%s, %s)%s\n", y->name, p, A, x->name, m[gen_rand(g, 4)]);
        break;
    }
    case 5: { /* add.XYZ of two values of equal precision and width, or a bias */
        GenVal *z = NULL;
        for (int i = 0; i < g->nv; i++)
            if (&g->v[i] != x && g->v[i].prec == x->prec && g->v[i].width == x->width) z = &g->v[i];
        char p[4] = {x->prec, x->prec, gen_pb(g), 0};
        if (!z && x->prec == 'F') {
            gen_param(g, 'F', x->width, 0, b);
            GenVal *y = gen_new(g, p[2], x->width);
            gen_put(g, "%s = add.%s(%s, %s)\n", y->name, p, x->name, b);
            break;
        }
        if (!z) z = x;
        GenVal *y = gen_new(g, p[2], x->width);
        gen_put(g, "%s = add.%s(%s, %s)\n", y->name, p, x->name, z->name);
        break;
    }
    case 6: { /* bin / relu / standardize / log_softmax on a float */
        static const char *const f[] = {"bin", "relu", "standardize", "log_softmax"};
        GenVal *xf = gen_pick(g, 'F');
        if (!xf) return;
        int k = (int)gen_rand(g, 4);
        GenVal *y = gen_new(g, k == 0 ? 'B' : 'F', xf->width);
        gen_put(g, "%s = %s(%s)\n", y->name, f[k], xf->name);
        break;
    }
    case 7: { /* batchnorm */
        GenVal *xf = gen_pick(g, 'F');
        if (!xf) return;
        char mu[16], var[16], ga[16], be[16];
        gen_param(g, 'F', xf->width, 0, mu);
        gen_param(g, 'F', xf->width, 0, var);
        int affine = gen_rand(g, 2);
        if (affine) { gen_param(g, 'F', xf->width, 0, ga); gen_param(g, 'F', xf->width, 0, be); }
        GenVal *y = gen_new(g, 'F', xf->width);
        if (affine) gen_put(g, "%s = batchnorm(%s, %s, %s, %s, %s)\n", y->name, xf->name, mu, var, ga, be);
        else gen_put(g, "%s = batchnorm(%s, %s, %s) { eps: 0.001 }\n", y->name, xf->name, mu, var);
        break;
    }
    case 8: { /* scl with Bi-GCN scales, then maybe bin */
        GenVal *xf = gen_pick(g, 'F');
        if (!xf) return;
        GenVal *src = gen_pick(g, 'F');
        GenVal *y;
        if (gen_rand(g, 3) == 0) { /* a user factor: may be negative, so never removable */
            /* every other time, of a b1 value of that width when there is one (GIN's
             * (1 + eps) v(h)); chosen without a draw, so the random stream stays as it was */
            const GenVal *xs = xf;
            for (int i = 0; i < g->nv && (g->nv & 1); i++)
                if (g->v[i].prec == 'B' && g->v[i].width == xf->width) xs = &g->v[i];
            gen_param(g, 'F', xf->width, 0, w);
            y = gen_new(g, 'F', xf->width);
            gen_put(g, "%s = scl(%s, cols: %s)\n", y->name, xs->name, w);
        } else {
            gen_param(g, 'B', gen_width(g), xf->width, w);
            y = gen_new(g, 'F', xf->width);
            gen_put(g, "%s = scl(%s, rows: absmean(%s), cols: scale(%s))\n", y->name, xf->name, src->name, w);
        }
        if (gen_rand(g, 2)) {
            GenVal *z = gen_new(g, 'B', xf->width);
            gen_put(g, "%s = bin(%s)\n", z->name, y->name);
        }
        break;
    }
    case 9: { /* concat of two values of one precision */
        GenVal *z = gen_pick(g, x->prec);
        GenVal *y = gen_new(g, x->prec, x->width + z->width);
        gen_put(g, "%s = concat(%s, %s)\n", y->name, x->name, z->name);
        break;
    }
    default: { /* a binary chain: bmm.?BB then bspmm.BBB (the paper's fused pair) */
        char p[4] = {x->prec, 'B', 'B', 0};
        gen_param(g, 'B', x->width, out, w);
        GenVal *t = gen_new(g, 'B', out);
        gen_put(g, "%s = bmm.%s(%s, %s)\n", t->name, p, x->name, w);
        GenVal *y = gen_new(g, 'B', out);
        gen_put(g, "%s = bspmm.BBB(%s, %s)\n", y->name, A, t->name);
        break;
    }
    }
}

/* Occurrences of the identifier name in text (its definition included). */
static int gen_uses(const char *text, const char *name) {
    size_t n = strlen(name);
    int c = 0;
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '"');
        bool after = isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '"';
        if (!before && !after) c++;
    }
    return c;
}

/* Graph-level values at the end of a batch model (see the top). */
static void gen_readouts(Gen *g) {
    static const char *const ops[] = {"sum", "mean", "max"};
    int nr = 1 + (int)gen_rand(g, 2), nodes = g->nv, fv[64], nf = 0; /* readouts of node-level F values */
    for (int i = 0; i < nodes; i++)
        if (g->v[i].prec == 'F') fv[nf++] = i;
    for (int k = 0; k < nr && g->nv < 58; k++) {
        GenVal *v = &g->v[fv[gen_rand(g, (unsigned)nf)]]; /* X at least */
        int c = v->width, m = 1 + (int)gen_rand(g, 8);
        bool bw = gen_rand(g, 2);
        char w[16], b[16];
        gen_param(g, bw ? 'B' : 'F', c, m, w);
        gen_param(g, 'F', m, 0, b);
        GenVal *r = gen_new(g, 'F', c);
        gen_put(g, "%s = readout(%s, A) { op: %s }\n", r->name, v->name, ops[gen_rand(g, 3)]);
        GenVal *y = gen_new(g, 'F', m);
        gen_put(g, "%s = log_softmax(relu(linear(%s, %s, %s) { mm: %s }))\n", y->name, r->name, w, b,
                bw ? "BBF, bin: absmean" : "FFF");
        GenVal *z = gen_new(g, 'B', c);
        gen_put(g, "%s = bin(%s)\n", z->name, r->name);
    }
}

static size_t gen_model_text(unsigned long long seed, char *buf, size_t size, bool batch) {
    static const char *const norms[] = {"none", "sym", "mean"};
    Gen g;
    memset(&g, 0, sizeof g);
    g.buf = buf;
    g.size = size;
    g.s = seed * 0x9E3779B97F4A7C15ULL + 12345;
    buf[0] = 0;
    gen_put(&g, "# random model, seed %llu\nmodel random%llu\n", seed, seed);
    g.ngraphs = 1 + (int)gen_rand(&g, 2);
    static const char *const gnames[] = {"A", "B"};
    for (int i = 0; i < g.ngraphs; i++) {
        g.graphs[i] = gnames[i];
        gen_put(&g, "graph %s = adjacency(self_loops: %s, norm: %s)\n", gnames[i],
                gen_rand(&g, 2) ? "true" : "false", norms[gen_rand(&g, 3)]);
    }
    GenVal *x = gen_new(&g, 'F', gen_width(&g));
    snprintf(x->name, sizeof x->name, "X");
    gen_put(&g, "input X : f32[N, %d]\n", x->width);
    int steps = 2 + (int)gen_rand(&g, 7);
    for (int i = 0; i < steps && g.nv < 60 && g.nparams < 48; i++) gen_step(&g);
    if (batch) gen_readouts(&g);
    gen_put(&g, "output %s\n", g.v[g.nv - 1].name);
    int extra = g.nv > 2 && gen_rand(&g, 2) ? 1 + (int)gen_rand(&g, (unsigned)(g.nv - 2)) : -1;
    if (extra > 0) gen_put(&g, "output %s\n", g.v[extra].name);
    /* every value nothing reads is an output too, so every fused pattern is observed */
    for (int i = 1; i < g.nv - 1; i++)
        if (i != extra && gen_uses(g.buf, g.v[i].name) == 1) gen_put(&g, "output %s\n", g.v[i].name);
    return g.len;
}

static inline size_t bg_gen_model(unsigned long long seed, char *buf, size_t size) {
    return gen_model_text(seed, buf, size, false);
}
static inline size_t bg_gen_batch_model(unsigned long long seed, char *buf, size_t size) {
    return gen_model_text(seed, buf, size, true);
}
#endif
