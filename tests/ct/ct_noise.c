/* SPDX-License-Identifier: Apache-2.0 */
/* Constant-time check of the randomizers whose input is the secret, in the style of ctgrind:
 * run under valgrind memcheck, the secret input's varying bits are marked undefined
 * (VALGRIND_SET_VBITS), so memcheck reports every conditional jump or move and every memory
 * address that depends on them ("Conditional jump or move depends on uninitialised value",
 * "Use of uninitialised value of size N"). The random bytes and the parameters are public and
 * stay defined; the output is public by design and is declassified (marked defined) after each
 * call, before anything looks at it. The status a call returns is looked at before that: it
 * must not depend on the secret either.
 *
 *   ct_noise rr | grr | laplace_fixed     the SDK functions, over many inputs and streams:
 *                                         memcheck must report no error
 *   ct_noise neg_branch | neg_table       negative controls: a branch on the secret and a
 *                                         table lookup indexed by it; memcheck must report them
 *
 * Which bits are secret: those that vary over the input's domain. RR: bit 0 of the bit. GRR
 * (k a power of two): the log2(k) low bits of x. Fixed-draw Laplace: all 64 bits of the value.
 *
 * Two places legitimately test the secret, and tests/unit/test_constant_time.sh accepts
 * memcheck errors at exactly those source lines and nowhere else: GRR's argument check
 * "x >= g->k" (memcheck cannot prove the comparison with a k held in memory independent of
 * x's low bits; its answer, "x is valid", is public), and fixed-draw Laplace's overflow test
 * of value + Z (a function of the output, which is released anyway). RR's argument check
 * compares with constants, which memcheck decides exactly: no error there. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "dpm/expert/noise.h"
#include "test_rng.h"

#define ROUNDS 400

/* Mark the bits of *p set in mask (len bytes, little-endian mask) undefined. */
static void secret(void *p, uint64_t mask, size_t len)
{
    uint8_t vbits[8];
    for (size_t i = 0; i < len; i++) {
        vbits[i] = (uint8_t)(mask >> (8 * i));
    }
    if (VALGRIND_SET_VBITS(p, vbits, len) != 1 && RUNNING_ON_VALGRIND) {
        fprintf(stderr, "ct_noise: VALGRIND_SET_VBITS failed\n");
        exit(2);
    }
}

static void must(dpm_status_t st, const char *what)
{
    if (st != DPM_OK) { /* a status that depends on the secret is reported right here */
        fprintf(stderr, "ct_noise: %s: %s\n", what, dpm_strerror(st));
        exit(1);
    }
}

static volatile uint64_t sink; /* keeps the negative controls' work alive */

static uint64_t run_rr(dpm_rand_t *r)
{
    static const dpm_eps_t eps[4] = {6553, 65536, 327680, 655360};
    uint64_t acc = 0;
    for (int e = 0; e < 4; e++) {
        dpm_grr_t g;
        must(dpm_rr_init(&g, eps[e]), "rr_init");
        for (int i = 0; i < ROUNDS; i++) {
            int bit = i & 1;
            int out = 0;
            secret(&bit, 1u, sizeof(bit));
            must(dpm_rr_perturb(&g, r, bit, &out), "rr_perturb");
            VALGRIND_MAKE_MEM_DEFINED(&out, sizeof(out));
            acc += (uint64_t)out;
        }
    }
    return acc;
}

static uint64_t run_grr(dpm_rand_t *r)
{
    static const uint32_t ks[4] = {2, 4, 64, 256};
    static const dpm_eps_t eps[3] = {6553, 65536, 327680};
    uint64_t acc = 0;
    for (int kk = 0; kk < 4; kk++) {
        for (int e = 0; e < 3; e++) {
            dpm_grr_t g;
            must(dpm_grr_init(&g, ks[kk], eps[e]), "grr_init");
            for (int i = 0; i < ROUNDS; i++) {
                uint32_t x = (uint32_t)(i * 37) % ks[kk];
                uint32_t y = 0;
                secret(&x, ks[kk] - 1u, sizeof(x));
                must(dpm_grr_perturb(&g, r, x, &y), "grr_perturb");
                VALGRIND_MAKE_MEM_DEFINED(&y, sizeof(y));
                acc += y;
            }
        }
    }
    return acc;
}

static uint64_t run_laplace_fixed(dpm_rand_t *r)
{
    static const struct {
        uint64_t sensitivity;
        dpm_eps_t eps;
    } cfg[3] = {{1, 655360}, {2, 65536}, {131072, 65536}};
    static dpm_laplace_fixed_t m;
    uint64_t acc = 0;
    for (int c = 0; c < 3; c++) {
        must(dpm_laplace_fixed_init(&m, cfg[c].sensitivity, cfg[c].eps), "laplace_fixed_init");
        for (int i = 0; i < ROUNDS / 4; i++) {
            /* values all over [-2^59, 2^59]: far enough from the int64 limits never to overflow */
            int64_t value = (int64_t)((uint64_t)i * UINT64_C(0x9E3779B97F4A7C15) >> 4) -
                            ((int64_t)1 << 59);
            int64_t out = 0;
            secret(&value, UINT64_MAX, sizeof(value));
            must(dpm_laplace_fixed_add(&m, r, value, &out), "laplace_fixed_add");
            VALGRIND_MAKE_MEM_DEFINED(&out, sizeof(out));
            acc += (uint64_t)out;
        }
    }
    return acc;
}

/* Negative controls: what the check must catch. */
static __attribute__((noinline)) uint64_t leak_branch(uint32_t x)
{
    if (x & 1u) { /* branch on the secret */
        sink += 3;
    }
    return sink;
}

static const uint8_t table[256] = {1, 2, 3};

static __attribute__((noinline)) uint64_t leak_table(uint32_t x)
{
    return table[x]; /* address depends on the secret */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ct_noise rr|grr|laplace_fixed|neg_branch|neg_table\n");
        return 2;
    }
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    must(test_rand_init(&r, &t, &rng, 20240601), "rand_init");
    uint64_t acc = 0;
    const char *mode = argv[1];
    if (strcmp(mode, "rr") == 0) {
        acc = run_rr(&r);
    } else if (strcmp(mode, "grr") == 0) {
        acc = run_grr(&r);
    } else if (strcmp(mode, "laplace_fixed") == 0) {
        acc = run_laplace_fixed(&r);
    } else if (strcmp(mode, "neg_branch") == 0 || strcmp(mode, "neg_table") == 0) {
        for (uint32_t i = 0; i < 8; i++) {
            uint32_t x = i * 29u % 256u;
            secret(&x, 0xFFu, sizeof(x));
            uint64_t v = mode[4] == 'b' ? leak_branch(x) : leak_table(x);
            VALGRIND_MAKE_MEM_DEFINED(&v, sizeof(v));
            acc += v;
        }
    } else {
        fprintf(stderr, "ct_noise: unknown mode %s\n", mode);
        return 2;
    }
    printf("ct_noise %s: done (checksum %llu)\n", mode, (unsigned long long)acc);
    return 0;
}
