/* SPDX-License-Identifier: Apache-2.0 */
/* Golden vectors: for each case in tests/vectors/noise.json (seed, sampler, parameters), the
 * SDK's outputs must match the file's bit for bit. The file is written by an independent
 * implementation, tests/vectors/reference.py (Python, from the samplers' definitions, fed the
 * same byte stream), never by the SDK: every case must say "producer": "python", and the test
 * name says so. tests/unit/test_vectors_reference.py recomputes the file with the reference, so
 * the SDK and the reference must agree, and the file can only change when a definition does.
 * The same runner is built for every cross target, so any platform dependence in a sampler
 * (word size, byte order, compiler) shows up here too.
 *
 *   test_vectors            check every case (run from the repository root, or set VECTORS) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/noise.h"
#include "json_min.h"
#include "test_rng.h"

#define MAX_OUTPUTS 1024
#define MAX_CASES 64
#define MAX_PARAMS 4

typedef struct {
    char name[48];
    char title[128];
    char sampler[24];
    char producer[24];
    uint64_t seed;
    int nparams;
    char pname[MAX_PARAMS][16];
    int64_t pval[MAX_PARAMS];
    int noutputs;
    int64_t outputs[MAX_OUTPUTS];
} vector_case_t;

static int64_t param(const vector_case_t *c, const char *key)
{
    for (int i = 0; i < c->nparams; i++) {
        if (strcmp(c->pname[i], key) == 0) {
            return c->pval[i];
        }
    }
    fail_msg("case %s: no parameter %s", c->name, key);
    return 0;
}

/* Compute the first c->noutputs outputs of a case. */
static void run_case(const vector_case_t *c, int64_t *out)
{
    test_rng_t t;
    test_rng_seed(&t, c->seed);
    dpm_rng_t rng = test_rng_port(&t);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &rng), DPM_OK);
    const char *s = c->sampler;
    dpm_laplace_t lap;
    static dpm_laplace_fixed_t fixed;
    dpm_grr_t g;
    if (strcmp(s, "laplace") == 0) {
        assert_int_equal(dpm_laplace_init(&lap, (uint64_t)param(c, "sensitivity"),
                                          (dpm_eps_t)param(c, "eps")),
                         DPM_OK);
    } else if (strcmp(s, "laplace_fixed") == 0) {
        assert_int_equal(dpm_laplace_fixed_init(&fixed, (uint64_t)param(c, "sensitivity"),
                                                (dpm_eps_t)param(c, "eps")),
                         DPM_OK);
    } else if (strcmp(s, "grr") == 0) {
        assert_int_equal(dpm_grr_init(&g, (uint32_t)param(c, "k"), (dpm_eps_t)param(c, "eps")),
                         DPM_OK);
    } else if (strcmp(s, "rr") == 0) {
        assert_int_equal(dpm_rr_init(&g, (dpm_eps_t)param(c, "eps")), DPM_OK);
    }
    for (int i = 0; i < c->noutputs; i++) {
        dpm_status_t st;
        uint64_t u = 0;
        int b = 0;
        int64_t z = 0;
        uint32_t y = 0;
        if (strcmp(s, "uniform") == 0) {
            st = dpm_uniform(&r, (uint64_t)param(c, "n"), &u);
            z = (int64_t)u;
        } else if (strcmp(s, "bernoulli") == 0) {
            st = dpm_bernoulli(&r, (uint64_t)param(c, "num"), (uint64_t)param(c, "den"), &b);
            z = b;
        } else if (strcmp(s, "bernoulli_exp") == 0) {
            st = dpm_bernoulli_exp(&r, (uint64_t)param(c, "num"), (uint64_t)param(c, "den"), &b);
            z = b;
        } else if (strcmp(s, "dlap") == 0) {
            st = dpm_dlap(&r, (uint64_t)param(c, "num"), (uint64_t)param(c, "den"), &z);
        } else if (strcmp(s, "laplace") == 0) {
            st = dpm_laplace_add(&lap, &r, param(c, "value"), &z);
        } else if (strcmp(s, "laplace_fixed") == 0) {
            st = dpm_laplace_fixed_add(&fixed, &r, param(c, "value"), &z);
        } else if (strcmp(s, "grr") == 0) {
            st = dpm_grr_perturb(&g, &r, (uint32_t)param(c, "x"), &y);
            z = y;
        } else if (strcmp(s, "rr") == 0) {
            st = dpm_rr_perturb(&g, &r, (int)param(c, "x"), &b);
            z = b;
        } else {
            fail_msg("case %s: unknown sampler %s", c->name, s);
            return;
        }
        assert_int_equal(st, DPM_OK);
        out[i] = z;
    }
}

static void test_case(void **state)
{
    const vector_case_t *c = *state;
    static int64_t got[MAX_OUTPUTS];
    if (strcmp(c->producer, "python") != 0) {
        fail_msg("case %s: produced by \"%s\", not by tests/vectors/reference.py", c->name,
                 c->producer);
    }
    assert_true(c->noutputs > 0);
    run_case(c, got);
    for (int i = 0; i < c->noutputs; i++) {
        if (got[i] != c->outputs[i]) {
            fail_msg("case %s: output %d is %lld, golden %lld", c->name, i, (long long)got[i],
                     (long long)c->outputs[i]);
        }
    }
}

static vector_case_t cases[MAX_CASES];
static char text[1 << 20];

static int parse_cases(const char *path)
{
    long len = json_read_file(path, text, sizeof(text));
    if (len < 0) {
        return -1;
    }
    json_t j;
    json_init(&j, text, (size_t)len);
    int n = 0;
    char key[32];
    json_expect(&j, '{');
    do {
        json_string(&j, key, sizeof(key));
        json_expect(&j, ':');
        if (strcmp(key, "cases") != 0) {
            json_skip(&j);
            continue;
        }
        json_expect(&j, '[');
        do {
            vector_case_t *c = &cases[n++];
            memset(c, 0, sizeof(*c));
            json_expect(&j, '{');
            do {
                json_string(&j, key, sizeof(key));
                json_expect(&j, ':');
                int64_t v;
                if (strcmp(key, "name") == 0) {
                    json_string(&j, c->name, sizeof(c->name));
                } else if (strcmp(key, "sampler") == 0) {
                    json_string(&j, c->sampler, sizeof(c->sampler));
                } else if (strcmp(key, "seed") == 0) {
                    json_int(&j, &v);
                    c->seed = (uint64_t)v;
                } else if (strcmp(key, "params") == 0) {
                    json_expect(&j, '{');
                    do {
                        json_string(&j, c->pname[c->nparams], sizeof(c->pname[0]));
                        json_expect(&j, ':');
                        json_int(&j, &c->pval[c->nparams++]);
                    } while (c->nparams < MAX_PARAMS && json_accept(&j, ','));
                    json_expect(&j, '}');
                } else if (strcmp(key, "producer") == 0) {
                    json_string(&j, c->producer, sizeof(c->producer));
                } else if (strcmp(key, "outputs") == 0) {
                    json_expect(&j, '[');
                    do {
                        json_int(&j, &c->outputs[c->noutputs++]);
                    } while (c->noutputs < MAX_OUTPUTS && json_accept(&j, ','));
                    json_expect(&j, ']');
                } else {
                    json_skip(&j);
                }
            } while (json_accept(&j, ','));
            json_expect(&j, '}');
        } while (n < MAX_CASES && json_accept(&j, ','));
        json_expect(&j, ']');
    } while (json_accept(&j, ','));
    json_expect(&j, '}');
    return j.error ? -1 : n;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("VECTORS") ? getenv("VECTORS") : "tests/vectors/noise.json";
    int n = parse_cases(path);
    if (n <= 0) {
        fprintf(stderr, "cannot read golden vectors from %s\n", path);
        return 1;
    }
    struct CMUnitTest tests[MAX_CASES];
    for (int i = 0; i < n; i++) {
        char title[sizeof(cases[i].title)]; /* name, producer and count always fit */
        snprintf(title, sizeof(title), "%.47s: SDK == %.23s reference (%d outputs)", cases[i].name,
                 cases[i].producer[0] ? cases[i].producer : "no", cases[i].noutputs);
        memcpy(cases[i].title, title, sizeof(title));
        tests[i] = (struct CMUnitTest){cases[i].title, test_case, NULL, NULL, &cases[i]};
    }
    return _cmocka_run_group_tests("vectors", tests, (size_t)n, NULL, NULL);
}
