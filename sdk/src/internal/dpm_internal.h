/* SPDX-License-Identifier: Apache-2.0 */
/* Included first by every sdk/ source file. It forbids the heap at compile time (the nm test
 * in tests/unit checks the linked library as well) and holds small shared helpers. */
#ifndef DPM_INTERNAL_H
#define DPM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dpm/config.h"
#include "dpm/status.h"

#pragma GCC poison malloc calloc realloc free

#define DPM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Hints for hot paths: keep a rarely taken branch's code out of line. */
#if defined(__GNUC__)
#define DPM_LIKELY(x) __builtin_expect(!!(x), 1)
#define DPM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define DPM_NOINLINE __attribute__((noinline))
#define DPM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define DPM_LIKELY(x) (x)
#define DPM_UNLIKELY(x) (x)
#define DPM_NOINLINE
#define DPM_ALWAYS_INLINE inline
#endif

/* Marks a decision on secret-derived data that is public by design (a verdict the caller gets
 * as the status anyway). Compiles to nothing; the constant-time check (tests/unit/
 * test_constant_time.sh) builds with it defined to valgrind's VALGRIND_MAKE_MEM_DEFINED, so
 * these points pass and no other, and it lists them exactly. */
#ifndef DPM_CT_DECLASSIFY
#define DPM_CT_DECLASSIFY(x) ((void)0)
#endif

/* a * b = *hi * 2^64 + (return value), exactly, with 32x32->64 multiplies only. */
static inline uint64_t dpm_mul_u64(uint64_t a, uint64_t b, uint64_t *hi)
{
    const uint64_t m32 = UINT64_C(0xFFFFFFFF);
    uint64_t p00 = (a & m32) * (b & m32);
    uint64_t p01 = (a & m32) * (b >> 32);
    uint64_t p10 = (a >> 32) * (b & m32);
    uint64_t p11 = (a >> 32) * (b >> 32);
    uint64_t mid = (p00 >> 32) + (p01 & m32) + (p10 & m32); /* three terms < 2^32: no overflow */
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (p00 & m32);
}

/* Greatest common divisor (Euclid); dpm_gcd_u64(a, 0) = a, dpm_gcd_u64(0, 0) = 0. */
static inline uint64_t dpm_gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif /* DPM_INTERNAL_H */
