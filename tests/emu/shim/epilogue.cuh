// epilogue.cuh (host shim for tests/emu): EpEnd and ep_val / ep_bit as templates/epilogue.cuh has them.
#pragma once
#include "bgnn_common.cuh"
namespace bgnn {
struct EpEnd {
    float val(long long, long long, float v) const { return v; }
    u32 bit(long long, float v) const { return bit_of(v); }
};
// an epilogue with a bias (reads global only)
struct EpBias {
    const float *b;
    float val(long long, long long c, float v) const { return fadd(v, b[c]); }
    u32 bit(long long, float v) const { return bit_of(v); }
};
template <class E> inline float ep_val(const E &e, long long r, long long c, float t) { return e.val(r, c, t); }
template <class E> inline u32 ep_bit(const E &e, long long r, long long c, float t) { return e.bit(c, e.val(r, c, t)); }
}
