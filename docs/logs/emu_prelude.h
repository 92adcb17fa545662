// emu_prelude.h - what the templates take from CUDA beyond the emulator of
// docs/logs/emu_harness_2026-11-27.tgz (emu_cuda.h), for the host emulation tests in docs/logs that
// include it after the emulator (the earlier ones carry their own copy): the atomics, min / max
// of the integer widths the templates use, isfinite, make_float4, __trap and __reduce_or_sync.
#ifndef BGNN_EMU_PRELUDE_H
#define BGNN_EMU_PRELUDE_H
#include <algorithm>
#include <cmath>
#include <cstdlib>
inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicXor(unsigned *p, unsigned v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
using std::isfinite;
using std::max;
using std::min;
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
inline void __trap() { std::abort(); }
inline unsigned __reduce_or_sync(unsigned m, unsigned v) {
    for (int d = 16; d >= 1; d >>= 1) v |= __shfl_xor_sync(m, v, d);
    return v;
}
#endif
