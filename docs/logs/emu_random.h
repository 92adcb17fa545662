// emu_random.h - the random inputs of the host emulation tests in docs/logs (the same sequences
// their logged results came from): a xorshift generator, its seed from argv[1], and the float
// values they draw (NaN, inf, -0 and +0 among them).
#ifndef BGNN_EMU_RANDOM_H
#define BGNN_EMU_RANDOM_H
#include <cmath>
#include <cstdlib>

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
#endif
