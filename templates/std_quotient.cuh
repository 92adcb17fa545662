// std_quotient.cuh - when a multiply by the reciprocal gives standardize's float quotient exactly.
//
// standardize stores fl32(fl64(a / den)) (a = fl64(x - mu), den = sd + eps; docs/semantics.md).
// With r = fl64(1 / den), once a row, q = fl64(a r) = (a / den)(1 + d1)(1 + d2), |d1|, |d2| <=
// 2^-53, so q is within 2 double ulps of the exact quotient and within 2.5 of fl64(a / den); two
// doubles of one binade differ by a whole number of ulps, so by at most 2.  fl32 of a double
// changes only across a float rounding boundary: in the float normal range a midpoint between
// two floats, a double whose 29 bits below the float significand are exactly 2^28 (a power of
// two, at 0, is a float, not a boundary).  So when q's 29 low bits are more than 3 from 2^28 and
// q lies in the float normal range (the lowest and highest binades left out, where subnormals
// and the overflow to infinity begin), every double within 2 ulps of q, fl64(a / den) among them,
// rounds to the same float as q: fl32(q) is the stored value, one DMUL in place of a division.
// Otherwise (zero, non-finite, out of range: about 1 quotient in 10^7 of real data) the
// division itself runs.
// Plain C as well as CUDA: tests/unit/test_std_quotient.c checks this rule on the host
// against the division on 60 M random and near-boundary quotients (a guard of 0 ulps fails).
#ifndef BGNN_STD_QUOTIENT_CUH
#define BGNN_STD_QUOTIENT_CUH

#ifdef __CUDACC__
#define BG_STD_QUOTIENT_FN __host__ __device__ __forceinline__
#else
#define BG_STD_QUOTIENT_FN static inline
#endif

// Whether fl32(q) equals fl32(fl64(a / den)), from the bits of q = fl64(a * fl64(1 / den)).
BG_STD_QUOTIENT_FN int bg_std_quotient_exact(unsigned long long qbits) {
    const unsigned e = (unsigned)(qbits >> 52) & 0x7ffu, low = (unsigned)qbits & 0x1fffffffu;
    return e >= 898u && e <= 1149u && (unsigned)(low - 0x0ffffffdu) > 6u;
}

#endif // BGNN_STD_QUOTIENT_CUH
