/* SPDX-License-Identifier: Apache-2.0 */
/* Golden vectors: for each case in tests/vectors/noise.json (seed, sampler, parameters), the
 * first 64 outputs must match bit for bit. The same runner is built for every cross target, so
 * any platform dependence in a sampler (word size, byte order, compiler) shows up here.
 *
 *   test_vectors            check every case (run from the repository root, or set VECTORS)
 *   test_vectors --write    regenerate the file from the case table below (after a deliberate
 *                           change of a sampler; review the diff) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/noise.h"
#include "common/json_read.h"
#include "test_rng.h"

#define OUTPUTS 64
#define MAX_CASES 64
#define MAX_PARAMS 4

typedef struct {
    char name[48];
    char sampler[24];
    uint64_t seed;
    int nparams;
    char pname[MAX_PARAMS][16];
    int64_t pval[MAX_PARAMS];
    int64_t outputs[OUTPUTS];
} vector_case_t;

/* The cases written by --write: a spread of parameters per sampler, including edge values. */
static const struct {
    const char *name, *sampler;
    uint64_t seed;
    const char *params; /* "key=value,key=value" */
} case_table[] = {
    {"uniform.n1", "uniform", 1, "n=1"},
    {"uniform.n10", "uniform", 2, "n=10"},
    {"uniform.n2^40+3", "uniform", 3, "n=1099511627779"},
    {"bernoulli.1/3", "bernoulli", 4, "num=1,den=3"},
    {"bernoulli.999/1000", "bernoulli", 5, "num=999,den=1000"},
    {"bernoulli_exp.1/10", "bernoulli_exp", 6, "num=1,den=10"},
    {"bernoulli_exp.5/2", "bernoulli_exp", 7, "num=5,den=2"},
    {"dlap.t1/2", "dlap", 8, "num=1,den=2"},
    {"dlap.t1", "dlap", 9, "num=1,den=1"},
    {"dlap.t10", "dlap", 10, "num=10,den=1"},
    {"dlap.t1000", "dlap", 11, "num=1000,den=1"},
    {"dlap.t2^33/6553", "dlap", 12, "num=8589934592,den=6553"},
    {"laplace.s2^17.eps1", "laplace", 13, "sensitivity=131072,eps=65536,value=1000"},
    {"laplace.s2^17.eps0.1", "laplace", 14, "sensitivity=131072,eps=6553,value=-5"},
    {"laplace_fixed.s2^17.eps1", "laplace_fixed", 15, "sensitivity=131072,eps=65536,value=7"},
    {"laplace_fixed.s1.eps10", "laplace_fixed", 16, "sensitivity=1,eps=655360,value=0"},
    {"grr.k2.eps1", "grr", 17, "k=2,eps=65536,x=1"},
    {"grr.k4.eps0.1", "grr", 18, "k=4,eps=6553,x=3"},
    {"grr.k64.eps1", "grr", 19, "k=64,eps=65536,x=17"},
    {"grr.k256.eps5", "grr", 20, "k=256,eps=327680,x=0"},
    {"rr.eps1", "rr", 21, "eps=65536,x=1"},
    {"rr.eps10", "rr", 22, "eps=655360,x=0"},
};

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

/* Compute the first OUTPUTS outputs of a case. */
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
    for (int i = 0; i < OUTPUTS; i++) {
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
    int64_t got[OUTPUTS];
    run_case(c, got);
    for (int i = 0; i < OUTPUTS; i++) {
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
    const jr_value_t *params = jr_get(o, "params"), *outputs = jr_get(o, "outputs");
    int64_t seed = 0;
    memset(c, 0, sizeof(*c));
    if (name == NULL || sampler == NULL || params == NULL || params->kind != JR_OBJECT ||
        params->n > MAX_PARAMS || outputs == NULL || outputs->n != OUTPUTS ||
        jr_int64(jr_get(o, "seed"), &seed) != 0) {
        return -1;
    }
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->sampler, sizeof(c->sampler), "%s", sampler);
    c->seed = (uint64_t)seed;
    for (size_t i = 0; i < params->n; i++) {
        snprintf(c->pname[i], sizeof(c->pname[i]), "%s", params->keys[i]);
        if (jr_int64(&params->items[i], &c->pval[i]) != 0) {
            return -1;
        }
    }
    c->nparams = (int)params->n;
    for (int i = 0; i < OUTPUTS; i++) {
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

static int write_cases(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return 1;
    }
    fprintf(f, "{\n \"about\": \"first %d outputs of each sampler; random bytes from tests/support/"
               "test_rng (xoshiro256** seeded by splitmix64, little-endian); regenerate with "
               "test_vectors --write\",\n \"cases\": [\n",
            OUTPUTS);
    for (size_t k = 0; k < sizeof(case_table) / sizeof(case_table[0]); k++) {
        vector_case_t c;
        memset(&c, 0, sizeof(c));
        snprintf(c.name, sizeof(c.name), "%s", case_table[k].name);
        snprintf(c.sampler, sizeof(c.sampler), "%s", case_table[k].sampler);
        c.seed = case_table[k].seed;
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", case_table[k].params);
        fprintf(f, "  {\"name\": \"%s\", \"sampler\": \"%s\", \"seed\": %llu, \"params\": {",
                c.name, c.sampler, (unsigned long long)c.seed);
        for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            snprintf(c.pname[c.nparams], sizeof(c.pname[0]), "%s", tok);
            c.pval[c.nparams] = strtoll(eq + 1, NULL, 10);
            fprintf(f, "%s\"%s\": %lld", c.nparams ? ", " : "", tok, (long long)c.pval[c.nparams]);
            c.nparams++;
        }
        int64_t out[OUTPUTS];
        run_case(&c, out);
        fprintf(f, "},\n   \"outputs\": [");
        for (int i = 0; i < OUTPUTS; i++) {
            fprintf(f, "%s%lld", i ? ", " : "", (long long)out[i]);
        }
        fprintf(f, "]}%s\n", k + 1 < sizeof(case_table) / sizeof(case_table[0]) ? "," : "");
    }
    fprintf(f, " ]\n}\n");
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    const char *path = getenv("VECTORS") ? getenv("VECTORS") : "tests/vectors/noise.json";
    if (argc > 1 && strcmp(argv[1], "--write") == 0) {
        return write_cases(path);
    }
    int n = parse_cases(path);
    if (n <= 0) {
        fprintf(stderr, "cannot read golden vectors from %s\n", path);
        return 1;
    }
    struct CMUnitTest tests[MAX_CASES];
    for (int i = 0; i < n; i++) {
        tests[i] = (struct CMUnitTest){cases[i].name, test_case, NULL, NULL, &cases[i]};
    }
    return _cmocka_run_group_tests("vectors", tests, (size_t)n, NULL, NULL);
}
