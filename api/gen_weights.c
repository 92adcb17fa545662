/* gen_weights.c - deterministic random weights for a model (`bgnnc gen-weights`).
 * Every PARAM of the lowered module that is not read from an npy file gets Gaussian values
 * (xorshift64* + Box-Muller, seed-derived) with sd sqrt(1/rows) for matrices and 0.1 for
 * vectors; running variances of a batchnorm get 0.5 + |g| (positive).  Params used
 * transposed are stored transposed, as PyTorch would.  The sequence is part of the
 * contract: tests and examples regenerate the same tensors from the same seed. */
#include "driver.h"

#include <math.h>
#include <string.h>

static double gauss(unsigned long long *s) {
    double u1 = 0, u2;
    while (u1 <= 1e-300) {
        *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
        u1 = (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    }
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    u2 = (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

bool bg_gen_weights(const BgModule *m, unsigned long long seed, const char *path, int *ntensors,
                    BgDiagSink *d) {
    BgArena *a = bg_arena_new();
    int n = 0;
    const char **names = bg_arena_alloc(a, sizeof(char *) * (size_t)(m->ninsts + 1));
    const float **data = bg_arena_alloc(a, sizeof(float *) * (size_t)(m->ninsts + 1));
    int *rank = bg_arena_alloc(a, sizeof(int) * (size_t)(m->ninsts + 1));
    int64_t(*dim)[4] = bg_arena_alloc(a, sizeof(int64_t[4]) * (size_t)(m->ninsts + 1));
    unsigned long long s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        if (in->op != BG_OP_PARAM || in->attrs.file) continue;
        bool is_var = false; /* running variance of a batchnorm: positive values */
        for (int j = i + 1; j < m->ninsts; j++)
            if (m->insts[j].op == BG_OP_BATCHNORM && m->insts[j].args[2] == (BgRef)i) is_var = true;
        int64_t rows = in->type.dim[0], cols = in->type.rank == 2 ? in->type.dim[1] : 1;
        float *v = bg_arena_alloc(a, sizeof(float) * (size_t)(rows * cols));
        double sd = in->type.rank == 2 ? sqrt(1.0 / (double)rows) : 0.1;
        for (int64_t k = 0; k < rows * cols; k++)
            v[k] = is_var ? (float)(0.5 + fabs(gauss(&s))) : (float)(gauss(&s) * sd);
        names[n] = in->attrs.name;
        data[n] = v;
        rank[n] = in->type.rank;
        if (in->type.rank == 2 && in->attrs.transposed) {
            float *t = bg_arena_alloc(a, sizeof(float) * (size_t)(rows * cols));
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < cols; c++) t[c * rows + r] = v[r * cols + c];
            data[n] = t;
            dim[n][0] = cols;
            dim[n][1] = rows;
        } else {
            dim[n][0] = rows;
            dim[n][1] = cols;
        }
        bool dup = false;
        for (int k = 0; k < n; k++) dup |= strcmp(names[k], names[n]) == 0;
        if (!dup) n++;
    }
    bool ok = bg_safetensors_save_f32(path, n, names, data, rank, (const int64_t(*)[4])dim, d);
    if (ntensors) *ntensors = n;
    bg_arena_free(a);
    return ok;
}
