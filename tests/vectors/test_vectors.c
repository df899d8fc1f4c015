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

#include "dpm/expert/noise.h"
#include "common/json_read.h"
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
        assert_int_equal(
            dpm_laplace_init(&lap, (uint64_t)param(c, "sensitivity"), (dpm_eps_t)param(c, "eps")),
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
        } else if (strcmp(s, "dgauss") == 0) {
            st = dpm_dgauss(&r, (uint64_t)param(c, "sigma2"), &z);
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

/* One case object (host-sim's JSON reader, common/json_read.h: integers exactly). */
static int parse_case(const jr_value_t *o, vector_case_t *c)
{
    const char *name = jr_string(o, "name"), *sampler = jr_string(o, "sampler");
    const char *producer = jr_string(o, "producer");
    const jr_value_t *params = jr_get(o, "params"), *outputs = jr_get(o, "outputs");
    int64_t seed = 0;
    memset(c, 0, sizeof(*c));
    if (name == NULL || sampler == NULL || params == NULL || params->kind != JR_OBJECT ||
        params->n > MAX_PARAMS || outputs == NULL || outputs->kind != JR_ARRAY || outputs->n == 0 ||
        outputs->n > MAX_OUTPUTS || jr_int64(jr_get(o, "seed"), &seed) != 0) {
        return -1;
    }
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->sampler, sizeof(c->sampler), "%s", sampler);
    /* no producer: test_case fails the case (only the independent reference may write it) */
    snprintf(c->producer, sizeof(c->producer), "%s", producer != NULL ? producer : "");
    c->seed = (uint64_t)seed;
    for (size_t i = 0; i < params->n; i++) {
        snprintf(c->pname[i], sizeof(c->pname[i]), "%s", params->keys[i]);
        if (jr_int64(&params->items[i], &c->pval[i]) != 0) {
            return -1;
        }
    }
    c->nparams = (int)params->n;
    c->noutputs = (int)outputs->n;
    for (int i = 0; i < c->noutputs; i++) {
        if (jr_int64(jr_at(outputs, (size_t)i), &c->outputs[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

static int parse_cases(const char *path)
{
    jr_value_t root;
    if (jr_parse_file(path, &root) != 0) {
        return -1;
    }
    const jr_value_t *list = jr_get(&root, "cases");
    int n = list != NULL && list->kind == JR_ARRAY && list->n <= MAX_CASES ? (int)list->n : -1;
    for (int i = 0; i < n; i++) {
        if (parse_case(jr_at(list, (size_t)i), &cases[i]) != 0) {
            n = -1;
        }
    }
    jr_free(&root);
    return n;
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
