// emu_random.h - the random inputs of the host emulation tests in docs/logs (the same sequences
// their logged results came from): a xorshift generator, its seed from argv[1], the float values
// they draw (NaN, inf, -0 and +0 among them) and the CSR tests' sparse features.
#ifndef BGNN_EMU_RANDOM_H
#define BGNN_EMU_RANDOM_H
#include <cmath>
#include <cstdlib>
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
#endif
