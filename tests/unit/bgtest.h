/* bgtest.h - the tiny assertion kit every C test uses.
 * CHECK(cond) records a failure with file:line and goes on; CHECK_EQ_INT / CHECK_NEAR
 * print both sides.  A test's main returns bg_test_finish(), which prints
 * "N passed, M failed" and exits non-zero on any failure.  GPU tests call
 * bg_test_skip("why") to exit 77 (CTest's skip code). */
#ifndef BGTEST_H
#define BGTEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bgt_pass, bgt_fail;

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (c) bgt_pass++;                                                         \
        else {                                                                     \
            bgt_fail++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);  \
        }                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                         \
    do {                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                        \
        if (a_ == b_) bgt_pass++;                                                  \
        else {                                                                     \
            bgt_fail++;                                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__,    \
                    __LINE__, #a, #b, a_, b_);                                     \
        }                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, rel)                                                      \
    do {                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                 \
        double tol_ = (rel) * fmax(1.0, fmax(fabs(a_), fabs(b_)));                 \
        if (fabs(a_ - b_) <= tol_) bgt_pass++;                                     \
        else {                                                                     \
            bgt_fail++;                                                            \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.9g vs %.9g\n", __FILE__,    \
                    __LINE__, #a, #b, a_, b_);                                     \
        }                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                            \
    do {                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                    \
        if (h_ && strstr(h_, n_)) bgt_pass++;                                      \
        else {                                                                     \
            bgt_fail++;                                                            \
            fprintf(stderr, "%s:%d: expected \"%s\" in \"%s\"\n", __FILE__,        \
                    __LINE__, n_, h_ ? h_ : "(null)");                             \
        }                                                                          \
    } while (0)

static inline int bg_test_finish(void) {
    printf("%d passed, %d failed\n", bgt_pass, bgt_fail);
    return bgt_fail ? 1 : 0;
}

static inline void bg_test_skip(const char *why) {
    printf("[SKIP] %s\n", why);
    exit(77);
}

/* A scratch directory for files a test writes ($BGNN_TEST_TMP or /tmp). */
static inline const char *bg_test_tmpdir(void) {
    const char *t = getenv("BGNN_TEST_TMP");
    return t && *t ? t : "/tmp";
}

/* Deterministic random numbers for tests (xorshift64*). */
static inline unsigned long long bg_test_rand(unsigned long long *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}
static inline float bg_test_randf(unsigned long long *s) { /* uniform in [-1, 1) */
    return (float)((double)(bg_test_rand(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
#endif
