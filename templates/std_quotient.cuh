// std_quotient.cuh - when a multiply by the reciprocal gives standardize's float quotient exactly.
//
// standardize stores fl32(fl64(a / den)) (a = fl64(x - mu), den = sd + eps; docs/semantics.md).
// With r = fl64(1 / den), once a row, and r a normal double (den below 2^1022: always so for
// standardize, whose den comes from float data; a subnormal r carries a relative error up to
// 2^-51, and counterexamples exist), q = fl64(a r) = (a / den)(1 + d1)(1 + d2), |d1|, |d2| <=
// 2^-53, so q is within 2 double ulps of the exact quotient and within 2.5 of fl64(a / den); two
// doubles of one binade differ by a whole number of ulps, so by at most 2.  fl32 of a double
// changes only across a float rounding boundary: in the float normal range a midpoint between
// two floats, a double whose 29 bits below the float significand are exactly 2^28 (a power of
// two, at 0, is a float, not a boundary).  So when q's 29 low bits are more than 3 from 2^28 and
// q lies in the float normal range (the lowest and highest binades left out, where subnormals
// and the overflow to infinity begin), every double within 2 ulps of q, fl64(a / den) among them,
// rounds to the same float as q: fl32(q) is the stored value, one DMUL in place of a division.
// Otherwise (zero, non-finite, out of range, near a midpoint: about 1 quotient in 10^7 of random
// data, and every value of a constant row, whose x - mu is 0) the division itself runs.  A q of
// +-0 would be exact too, but testing for it took rowwise.cuh's unrolled rows 17 registers more
// (sage_bin's first row group 128 -> 145, half the blocks an SM).
// Plain C as well as CUDA: tests/unit/test_std_quotient.c checks this rule on the host
// against the division on 4 M random and near-boundary quotients (a guard of 0 ulps fails),
// with den up to 2^1024 (where bg_std_rden_normal turns the rule off).
#ifndef BGNN_STD_QUOTIENT_CUH
#define BGNN_STD_QUOTIENT_CUH

#ifdef __CUDACC__
#define BG_STD_QUOTIENT_FN __host__ __device__ __forceinline__
#else
#define BG_STD_QUOTIENT_FN static inline
#endif

// Whether r = fl64(1 / den) is a normal double, from its bits: the rule's precondition, once a row.
BG_STD_QUOTIENT_FN int bg_std_rden_normal(unsigned long long rbits) {
    const unsigned e = (unsigned)(rbits >> 52) & 0x7ffu;
    return e >= 1u && e <= 2046u;
}
// Given that, whether fl32(q) equals fl32(fl64(a / den)), from the bits of q = fl64(a * r).
BG_STD_QUOTIENT_FN int bg_std_quotient_exact(unsigned long long qbits) {
    const unsigned e = (unsigned)(qbits >> 52) & 0x7ffu, low = (unsigned)qbits & 0x1fffffffu;
    return e >= 898u && e <= 1149u && (unsigned)(low - 0x0ffffffdu) > 6u;
}

#endif // BGNN_STD_QUOTIENT_CUH
