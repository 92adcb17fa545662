/* test_gcn_fp32_reference.c - end to end: `bgnnc run examples/gcn_fp32.bgnn` on Cora with
 * seeded random weights must give the logits of an independent float64 GCN computed here
 * (dense-free CSR loops written from the GCN formula, not bgnn's kernels or interpreter):
 *   Y = log_softmax(Ahat relu(Ahat X W1^T + b1) W2^T + b2),  Ahat = D^-1/2 (A + I) D^-1/2
 * within 1e-5 relative.  Needs $BGNN_BGNNC (set by CTest) and the Cora dataset. */
#include "reference.h"
#include "bgtest.h"

#include <math.h>
#include <stdint.h>

enum { F = 1433, H = 64, C = 7 };

static void gcn_aggregate(const BgGraph *g, const double *dinv, const double *x, int w, double *y) {
    for (int64_t i = 0; i < g->n; i++) {
        double *yi = y + i * w;
        for (int c = 0; c < w; c++) yi[c] = dinv[i] * dinv[i] * x[i * w + c]; /* self loop */
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) {
            int64_t j = g->col[k];
            if (j == i) continue;
            for (int c = 0; c < w; c++) yi[c] += dinv[i] * dinv[j] * x[j * w + c];
        }
    }
}

int main(void) {
    const char *bgnnc = getenv("BGNN_BGNNC"), *root = getenv("BGNN_DATA_DIR");
    const char *srcdir = getenv("BGNN_SOURCE_DIR");
    if (!bgnnc || !srcdir) bg_test_skip("BGNN_BGNNC / BGNN_SOURCE_DIR not set (run through ctest)");
    char dir[4096], wpath[4096], lpath[4096], cmd[16384];
    snprintf(dir, sizeof dir, "%s/cora", root ? root : "../shared/data");
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    if (!bg_dataset_load(dir, &ds, &d)) bg_test_skip("Cora dataset not found");

    /* Seeded weights in PyTorch layout: conv.weight [out, in]. */
    unsigned long long s = 12345;
    static float w1[H * F], b1[H], w2[C * H], b2[C];
    for (int i = 0; i < H * F; i++) w1[i] = bg_test_randf(&s) * 0.05f;
    for (int i = 0; i < H; i++) b1[i] = bg_test_randf(&s) * 0.1f;
    for (int i = 0; i < C * H; i++) w2[i] = bg_test_randf(&s) * 0.2f;
    for (int i = 0; i < C; i++) b2[i] = bg_test_randf(&s) * 0.1f;
    const char *names[4] = {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"};
    const float *data[4] = {w1, b1, w2, b2};
    int rank[4] = {2, 1, 2, 1};
    int64_t dims[4][4] = {{H, F}, {H}, {C, H}, {C}};
    snprintf(wpath, sizeof wpath, "%s/gcn_fp32_ref.safetensors", bg_test_tmpdir());
    snprintf(lpath, sizeof lpath, "%s/gcn_fp32_ref_logits.npy", bg_test_tmpdir());
    CHECK(bg_safetensors_save_f32(wpath, 4, names, data, rank, (const int64_t(*)[4])dims, &d));
    remove(lpath);
    snprintf(cmd, sizeof cmd, "'%s' run '%s/examples/gcn_fp32.bgnn' --data '%s' --weights '%s' --target cpu --logits '%s' > /dev/null",
             bgnnc, srcdir, dir, wpath, lpath);
    CHECK_EQ_INT(system(cmd), 0);
    BgNpy out;
    CHECK(bg_npy_load(lpath, BG_NPY_AS_F32, &out, &d));
    if (d.nerrors) {
        char *r = bg_diag_render(&d);
        fprintf(stderr, "%s", r);
        free(r);
        return bg_test_finish();
    }
    CHECK(out.rank == 2 && out.dim[0] == ds.graph.n && out.dim[1] == C);

    /* Independent float64 reference. */
    int64_t n = ds.graph.n;
    double *dinv = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t deg = 1;
        for (int64_t k = ds.graph.rowptr[i]; k < ds.graph.rowptr[i + 1]; k++) deg += ds.graph.col[k] != i;
        dinv[i] = 1.0 / sqrt((double)deg);
    }
    const float *X = ds.features.data;
    double *xw = calloc((size_t)(n * H), sizeof(double)), *h = calloc((size_t)(n * H), sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int o = 0; o < H; o++) {
            double acc = 0;
            for (int k = 0; k < F; k++) acc += (double)X[i * F + k] * w1[o * F + k];
            xw[i * H + o] = acc;
        }
    gcn_aggregate(&ds.graph, dinv, xw, H, h);
    for (int64_t i = 0; i < n * H; i++) {
        double v = h[i] + b1[i % H];
        h[i] = v > 0 ? v : 0;
    }
    double *hw = calloc((size_t)(n * C), sizeof(double)), *y = calloc((size_t)(n * C), sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int o = 0; o < C; o++) {
            double acc = 0;
            for (int k = 0; k < H; k++) acc += h[i * H + k] * w2[o * H + k];
            hw[i * C + o] = acc;
        }
    gcn_aggregate(&ds.graph, dinv, hw, C, y);
    double maxrel = 0;
    const float *got = out.data;
    for (int64_t i = 0; i < n; i++) {
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < C; c++) {
            y[i * C + c] += b2[c];
            if (y[i * C + c] > m) m = y[i * C + c];
        }
        for (int c = 0; c < C; c++) sum += exp(y[i * C + c] - m);
        for (int c = 0; c < C; c++) {
            double ref = y[i * C + c] - m - log(sum);
            double rel = fabs(got[i * C + c] - ref) / fmax(1.0, fabs(ref));
            if (rel > maxrel) maxrel = rel;
        }
    }
    printf("max relative difference bgnn vs independent float64 GCN: %.3g\n", maxrel);
    CHECK(maxrel <= 1e-5);
    bg_npy_free(&out);
    free(dinv); free(xw); free(h); free(hw); free(y);
    bg_dataset_free(&ds);
    bg_diag_free(&d);
    return bg_test_finish();
}
