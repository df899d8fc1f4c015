/* SPDX-License-Identifier: Apache-2.0 */
/* What the planners share (see plan_check.h). */
#include "sim/plan_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/prob.h"
#include "sim/cli.h"
#include "sim/progress.h"

void sim_plan_cli_init(sim_plan_cli_t *o)
{
    memset(o, 0, sizeof(*o));
    o->runs = SIM_PLAN_DEFAULT_RUNS;
    o->seed = 1;
    o->check = 1;
    o->error = o->confidence = NAN;
}

int sim_plan_cli_option(sim_plan_cli_t *o, const char *a, const char *v, int *bad)
{
    if (strcmp(a, "--error") == 0) {
        *bad = sim_cli_double(v, &o->error) != 0 || !(o->error > 0.0);
    } else if (strcmp(a, "--confidence") == 0) {
        *bad = sim_cli_double(v, &o->confidence) != 0 || !(o->confidence > 0.0) ||
               !(o->confidence < 1.0);
    } else if (strcmp(a, "--devices") == 0) {
        *bad = sim_cli_double(v, &o->devices) != 0 || !(o->devices >= 2.0) ||
               o->devices != floor(o->devices);
    } else if (strcmp(a, "--eps") == 0) {
        dpm_eps_t q16 = 0;
        *bad = sim_plan_eps_parse(v, &q16, o->why, sizeof(o->why)) != 0;
        o->eps = q16 / 65536.0;
    } else if (strcmp(a, "--runs") == 0) {
        *bad = sim_cli_u64(v, &o->runs) != 0 || o->runs < 1 || o->runs > 100000;
    } else if (strcmp(a, "--seed") == 0) {
        *bad = sim_cli_u64(v, &o->seed) != 0;
    } else {
        return 0;
    }
    return 1;
}

/* "1.5e-3" -> "0.0015": the plain decimal of an exponent form, digit for digit (no rounding),
 * so that dpm_eps_from_decimal does all the rounding. A text without an exponent is copied.
 * 0, or -1 (malformed, or too long for out). */
static int plain_decimal(const char *text, char *out, size_t cap)
{
    const char *e = strpbrk(text, "eE");
    if (e == NULL) {
        return snprintf(out, cap, "%s", text) < (int)cap ? 0 : -1;
    }
    char digits[64];
    size_t nd = 0, nint = 0;
    int dot = 0;
    for (const char *p = text; p < e; p++) {
        if (*p == '.' && !dot) {
            dot = 1;
        } else if (*p >= '0' && *p <= '9' && nd < sizeof(digits)) {
            digits[nd++] = *p;
            nint += !dot;
        } else {
            return -1;
        }
    }
    const char *x = e + 1;
    int neg = *x == '-';
    x += *x == '-' || *x == '+';
    long ex = 0;
    for (; *x >= '0' && *x <= '9' && ex < 100000; x++) {
        ex = ex * 10 + (*x - '0');
    }
    if (nd == 0 || *x != '\0' || x == e + 1 || x[-1] < '0' || x[-1] > '9') {
        return -1;
    }
    long point = (long)nint + (neg ? -ex : ex); /* digits before the decimal point */
    if (point < -40) {
        return snprintf(out, cap, "0.0") < (int)cap ? 0 : -1; /* below 10^-40: rounds to 0 */
    }
    if (point > 40) {
        point = 40; /* far above DPM_EPS_MAX either way (or 0 if every digit is 0) */
    }
    size_t n = 0;
    if (point <= 0) { /* 0.000ddd */
        out[n++] = '0';
        out[n++] = '.';
        for (long i = point; i < 0 && n + 1 < cap; i++) {
            out[n++] = '0';
        }
    }
    for (long i = 0; i < (long)nd || i < point; i++) { /* ddd.ddd or ddd000 */
        if (n + 2 >= cap) {
            return -1;
        }
        if (i == point && point > 0) {
            out[n++] = '.';
        }
        out[n++] = i < (long)nd ? digits[i] : '0';
    }
    out[n] = '\0';
    return 0;
}

int sim_plan_eps_parse(const char *text, dpm_eps_t *q16, char *why, size_t whycap)
{
    char plain[128];
    double v = 0.0;
    why[0] = '\0';
    if (plain_decimal(text, plain, sizeof(plain)) == 0 &&
        dpm_eps_from_decimal(plain, q16) == DPM_OK) {
        return 0;
    }
    if (sim_cli_double(text, &v) != 0 || !(v > 0.0) || plain_decimal(text, plain, sizeof(plain))) {
        snprintf(why, whycap, "'%s' is not a positive decimal", text);
    } else if (v > DPM_EPS_MAX) {
        snprintf(why, whycap, "%s is above the largest eps a campaign accepts (%d)", text,
                 DPM_EPS_MAX);
    } else {
        snprintf(why, whycap,
                 "%s rounds down to 0 in the Q16.16 a campaign carries (the SDK rounds eps "
                 "down): no campaign can run at it; the smallest is 2^-16 = 0.0000152587890625",
                 text);
    }
    return -1;
}

double sim_plan_eps_down(double eps)
{
    return eps > 0.0 ? floor(eps * 65536.0) / 65536.0 : 0.0;
}

double sim_plan_eps_up(double eps)
{
    return ceil(eps * 65536.0) / 65536.0;
}

void sim_plan_eps_text(dpm_eps_t q16, char *buf, size_t cap)
{
    /* f / 2^16 = f 5^16 / 10^16 exactly, f 5^16 < 10^16 */
    uint64_t frac = (uint64_t)(q16 & 0xFFFFu) * UINT64_C(152587890625);
    int n = snprintf(buf, cap, "%u.%016llu", (unsigned)(q16 >> 16), (unsigned long long)frac);
    while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.') {
        buf[--n] = '\0';
    }
    if (n > 2 && buf[n - 1] == '0' && buf[n - 2] == '.') {
        buf[n - 2] = '\0'; /* "2.0" -> "2" */
    }
}

const char *sim_plan_uncheckable(double eps, double devices, double eps_campaign)
{
    if (!isfinite(eps) || !isfinite(devices)) {
        return "no answer to check";
    }
    if (eps_campaign > DPM_EPS_MAX || eps_campaign * 65536.0 < 1.0) {
        return "the answer's eps is outside what a campaign accepts";
    }
    return NULL;
}

void sim_plan_scenario_base(sim_scenario_t *sc, const char *name, double devices, uint32_t runs,
                            uint64_t seed, double confidence, uint32_t examples)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->name, sizeof(sc->name), "%s", name);
    sc->ndevices = 1;
    sc->devices[0] = (uint64_t)devices;
    sc->runs = runs;
    sc->seed = seed;
    sc->population_seed = 1;
    sc->confidence = confidence;
    sc->mode = SIM_MODE_EXACT;
    sc->examples = examples;
    sc->beta_levels = 100;
}

int sim_plan_session_run(const sim_scenario_t *sc, uint32_t threads, sim_session_t *s,
                         double *start, char *err, size_t errcap)
{
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = threads;
    ro.quiet = 1;
    *start = sim_now();
    if (sim_session_run(sc, &ro, s, err, errcap) != 0) {
        sim_session_free(s);
        return -1;
    }
    return 0;
}

int sim_plan_verdict(uint32_t within, uint32_t runs, double confidence, double *p_value)
{
    *p_value = prob_binom_cdf(within, runs, confidence);
    return runs > 0 && (double)within >= confidence * (double)runs;
}

int sim_plan_print_answer(double given_devices, double given_eps, double eps, double eps_campaign,
                          double devices)
{
    char text[40];
    (void)given_eps;
    sim_plan_eps_text((dpm_eps_t)fmin(eps_campaign * 65536.0, 4294967295.0), text, sizeof(text));
    if (given_devices > 0.0) {
        printf("  answer: K = %.0f devices -> minimum eps = %.6f -> campaign eps = %s (the "
               "smallest Q16.16 at or above it; write it exactly so, the SDK rounds down)\n",
               given_devices, eps, text);
    } else if (isnan(devices)) {
        printf("  answer: at campaign eps = %s (the Q16.16 of the eps given) no number of devices "
               "up to 2^53 reaches it\n",
               text);
        return -1;
    } else {
        printf("  answer: campaign eps = %s (the Q16.16 the SDK rounds the eps given down to: "
               "what the campaign implements) -> minimum devices K = %.0f\n",
               text, devices);
    }
    return 0;
}

void sim_plan_print_coverage(const char *what, double error, uint32_t within, uint32_t runs,
                             double confidence, double p_value, int pass)
{
    printf("  |%s error| <= %g in %u/%u runs (%.1f%%), target >= %.1f%%: %s (one-sided binomial "
           "p = %.3g of a shortfall this large at a true %.1f%%) -> %s\n",
           what, error, within, runs, 100.0 * within / runs, 100.0 * confidence,
           pass ? "met" : "NOT met", p_value, 100.0 * confidence, pass ? "PASS" : "FAIL");
}
