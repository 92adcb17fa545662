// emu_random.h - the random inputs of the host emulation tests in docs/logs (the same sequences
// their logged results came from): a xorshift generator, its seed from argv[1], the float values
// they draw (NaN, inf, -0 and +0 among them), the CSR tests' sparse features, their CSR block and
// their one-value rows.
#ifndef BGNN_EMU_RANDOM_H
#define BGNN_EMU_RANDOM_H
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

static unsigned long long rs = 12345;
static unsigned rnd() {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}
// argv[1], when given, picks the sequence
static void emu_seed(int argc, char **argv) {
    if (argc > 1) rs = strtoull(argv[1], nullptr, 10) * 2654435761ull + 1;
}
// Of 100: 1 NaN, 1 inf, -0 below neg_to, +0 below pos_to, else a value of about -10 to 10.
static float emu_rval(unsigned neg_to, unsigned pos_to) {
    const unsigned u = rnd() % 100;
    if (u < 1) return NAN;
    if (u < 2) return INFINITY;
    if (u < neg_to) return -0.0f;
    if (u < pos_to) return 0.0f;
    return ((int)(rnd() % 2001) - 1000) / 97.0f;
}

// Sparse features X [n][C] of the CSR tests: each value drawn (emu_rval(10, 10)) with pct%
// chance, else +0; then per row one draw of `kinds`: 0 stores column 0, 1 columns 0..k, and with
// constant_rows 2 sets every column to 0.25 (x - mu of 0: standardize's redo with divisions);
// row 2 full (-0 every 7th column), row 3 empty.  The same draws as the tests' own code had.
static inline std::vector<float> emu_sparse_features(long long n, long long C, int pct, unsigned kinds,
                                                     bool constant_rows) {
    std::vector<float> X((size_t)(n * C));
    for (auto &v : X) v = (int)(rnd() % 100) < pct ? emu_rval(10, 10) : 0.0f;
    for (long long r = 0; r < n; r++) {
        const unsigned u = rnd() % kinds;
        if (u == 0) X[(size_t)(r * C)] = 1.5f;
        if (u == 1)
            for (long long c = 0; c < C && c < (long long)(rnd() % 40); c++)
                X[(size_t)(r * C + c)] = emu_rval(10, 10) == 0.0f ? 2.0f : 3.0f;
        if (u == 2 && constant_rows)
            for (long long c = 0; c < C; c++) X[(size_t)(r * C + c)] = 0.25f;
    }
    if (n > 2) for (long long c = 0; c < C; c++) X[(size_t)(2 * C + c)] = c % 7 == 0 ? -0.0f : 1.0f + (float)c;
    if (n > 3) for (long long c = 0; c < C; c++) X[(size_t)(3 * C + c)] = 0.0f;
    return X;
}

// X's CSR block (plan/features_csr.c bg_features_csr: every value other than +0 stored), or null
// (the test links plan/features_csr.c).
extern "C" uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words);
static inline uint32_t *emu_features_csr(const std::vector<float> &X, long long n, long long C) {
    uint64_t nnz = 0;
    for (float v : X) {
        uint32_t u;
        memcpy(&u, &v, 4);
        nnz += u != 0u;
    }
    size_t words = 0;
    return bg_features_csr(X.data(), n, C, nnz, &words);
}

// The rows of X [n][C] whose every value has the same bits (a standardize's x - mu of 0: its
// redo with the divisions).
static inline long emu_constant_rows(const std::vector<float> &X, long long n, long long C) {
    long k = 0;
    for (long long row = 0; row < n; row++) {
        bool same = true;
        for (long long c = 1; c < C && same; c++) same = memcmp(&X[(size_t)(row * C)], &X[(size_t)(row * C + c)], 4) == 0;
        k += same;
    }
    return k;
}
// The CSR standardize tests' sweep: for each width C of Cs in order, X at 1, 5, 30 and 100%
// nonzeros (300 rows, 37 when full), each on grids of 1, 3 and 64 blocks:
// f.template operator()<C>(n, pct, grid) (a lambda []<long long C>(long long, int, unsigned)).
template <long long... Cs, class F>
static void emu_csr_sweep(F f) {
    (
        [&] {
            for (int pct : {1, 5, 30, 100})
                for (unsigned gr : {1u, 3u, 64u}) f.template operator()<Cs>(pct == 100 ? 37 : 300, pct, gr);
        }(),
        ...);
}
// The wide aggregation tests' graph of n rows (n > 4; rowptr rp from 0, columns col): a fifth
// of the rows isolated, the others 0 to 11 random neighbours, rows 1 to 4 of exactly 32, 33, 64
// and 65 edges (LONG = 32 and one slice step of 64 on either side) and row n / 2 a hub of 700.
static inline void emu_wide_graph(long long n, std::vector<long long> &rp, std::vector<int> &col) {
    rp.assign(1, 0);
    col.clear();
    for (long long i = 0; i < n; i++) {
        long long d = rnd() % 5 == 0 ? 0 : rnd() % 12;
        if (i >= 1 && i <= 4) d = i <= 2 ? 31 + i : 61 + i;
        if (i == n / 2) d = 700;
        for (long long k = 0; k < d; k++) col.push_back((int)(rnd() % n));
        rp.push_back((long long)col.size());
    }
}
// A wide aggregation test's case: emu_wide_graph, its work list ORDER (plan/row_order.c; link
// row_order.o), x [n][C] of emu_rval(8, 14) and the factors: the mean's (unit) or random ones.
// False when the order fails.
extern "C" bool bg_plan_row_order(const int64_t *rowptr, int64_t n, int64_t split_min, int32_t *out);
struct EmuWideCase {
    std::vector<long long> rp;
    std::vector<int> col;
    std::vector<int32_t> order;
    std::vector<float> x, rowf, colf;
};
static inline bool emu_wide_case(long long n, long long C, bool unit, EmuWideCase &w) {
    emu_wide_graph(n, w.rp, w.col);
    w.order.assign((size_t)(n + 1) * 4, 0);
    if (!bg_plan_row_order((const int64_t *)w.rp.data(), n, 2048, w.order.data())) return false;
    w.x.resize((size_t)(n * C));
    for (auto &v : w.x) v = emu_rval(8, 14);
    w.rowf.resize((size_t)n);
    w.colf.resize((size_t)n);
    for (long long i = 0; i < n; i++) {
        const long long d = w.rp[(size_t)i + 1] - w.rp[(size_t)i];
        w.rowf[(size_t)i] = unit ? 1.0f / (float)(d ? d : 1) : emu_rval(8, 14);
        w.colf[(size_t)i] = unit ? 1.0f : emu_rval(8, 14);
    }
    return true;
}
#endif
