// bgnn_common.cuh (host shim for tests/emu): the CUDA built-ins and bgnn helpers bmm_fb_big.cuh uses.
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <barrier>
#include <cassert>
#define __device__
#define __host__
#define __forceinline__ inline
#define __align__(n) alignas(n)
struct Dim3 { unsigned x, y, z; };
extern thread_local Dim3 threadIdx, blockIdx;
extern Dim3 gridDim;
extern thread_local std::barrier<> *g_bar;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
struct alignas(16) float4 { float x, y, z, w; };
namespace bgnn {
typedef uint32_t u32;
__host__ __device__ constexpr long long words_of(long long cols) { return (cols + 31) / 32; }
inline float pm1(u32 bit) { return bit ? 1.0f : -1.0f; }
inline float fadd(float a, float b) { volatile float r = a + b; return r; }
inline float fsub(float a, float b) { volatile float r = a - b; return r; }
inline float fmul(float a, float b) { volatile float r = a * b; return r; }
inline float fdiv(float a, float b) { volatile float r = a / b; return r; }
inline float fsqrt(float a) { return std::sqrt(a); }
inline u32 f2u(float f) { u32 u; memcpy(&u, &f, 4); return u; }
inline float u2f(u32 u) { float f; memcpy(&f, &u, 4); return f; }
inline float f32_from_bits(u32 b) { return u2f(b); }
inline u32 bit_of(float t) { return (f2u(t) >> 31) ^ 1u; }
}
inline float __fmaf_rn(float a, float b, float c) { return std::fmaf(a, b, c); }
inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
