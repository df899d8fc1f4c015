/* SPDX-License-Identifier: Apache-2.0 */
/* What the planners share (see plan_check.h). */
#include "sim/plan/plan_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "sim/run/cli.h"
#include "sim/pop/progress.h"

void sim_plan_cli_init(sim_plan_cli_t *o)
{
    memset(o, 0, sizeof(*o));
    o->seed = 1;
    o->check = 1;
    o->error = o->confidence = NAN;
}

int sim_plan_usage(const char *usage, const char *what)
{
    fprintf(stderr, "dpm-sim plan: %s\n%s", what, usage);
    return SIM_EXIT_USAGE;
}

int sim_plan_unknown(const char *usage, const char *a)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "unknown option '%.100s' (the options are below)", a);
    return sim_plan_usage(usage, msg);
}

int sim_plan_no_value(const char *usage, const char *a)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%.100s is missing its value", a);
    return sim_plan_usage(usage, msg);
}

int sim_plan_bad_value(const sim_plan_cli_t *o, const char *usage, const char *a)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "bad value for %s%s%s", a, o->why[0] ? ": " : "", o->why);
    return sim_plan_usage(usage, msg);
}

int sim_plan_cli_parse(sim_plan_cli_t *o, int argc, char **argv, const char *usage,
                       int (*mine)(void *ctx, const char *a, const char *v, int *bad), void *ctx)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return SIM_PLAN_HELP;
        }
        if (strcmp(a, "--no-check") == 0) {
            o->check = 0;
            continue;
        }
        if (v == NULL) {
            return sim_plan_no_value(usage, a);
        }
        i++;
        if (!sim_plan_cli_option(o, a, v, &bad) && !mine(ctx, a, v, &bad)) {
            return sim_plan_unknown(usage, a);
        }
        if (bad) {
            return sim_plan_bad_value(o, usage, a);
        }
    }
    return 0;
}

int sim_plan_text_option(const sim_plan_text_opt_t *opts, size_t n, void *base, const char *a,
                         const char *v)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a, opts[i].name) == 0) {
            memcpy((char *)base + opts[i].at, &v, sizeof(v));
            return 1;
        }
    }
    return 0;
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
               o->devices != floor(o->devices) || o->devices > 9007199254740992.0;
    } else if (strcmp(a, "--eps") == 0) {
        dpm_eps_t q16 = 0;
        *bad = sim_plan_eps_parse(v, &q16, o->why, sizeof(o->why)) != 0;
        o->eps = q16 / 65536.0;
    } else if (strcmp(a, "--runs") == 0) {
        *bad = sim_cli_u64(v, &o->runs) != 0 || o->runs < 10 || o->runs > 100000;
        o->runs_given = 1;
    } else if (strcmp(a, "--seed") == 0) {
        *bad = sim_cli_u64(v, &o->seed) != 0;
    } else if (strcmp(a, "--json") == 0) {
        o->json = v;
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
    sim_scenario_start(sc, name, runs, seed, confidence, SIM_MODE_EXACT);
    sc->devices[0] = (uint64_t)devices;
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

dpm_eps_t sim_plan_eps_search(double (*f)(dpm_eps_t q16, void *ctx), void *ctx)
{
    /* the largest ε the mechanism can be built at: a mechanism may refuse the top of the range
     * (tuple_ml's group GRR at eps / 2 runs out of 32-bit thresholds before DPM_EPS_MAX) */
    dpm_eps_t top = DPM_EPS_MAX_Q16, bad = 0;
    double v = f(top, ctx);
    while (isnan(v) && top > 1u) {
        bad = top;
        top = top / 4u * 3u;
        v = f(top, ctx);
    }
    while (bad != 0 && bad - top > 1u) { /* the edge between top (built) and bad (refused) */
        dpm_eps_t mid = top + (bad - top) / 2u;
        double w = f(mid, ctx);
        if (isnan(w)) {
            bad = mid;
        } else {
            top = mid;
            v = w;
        }
    }
    if (!(v <= 0.0)) {
        return 0;
    }
    dpm_eps_t lo = 0, hi = top; /* f(lo) > 0 (or lo = 0), f(hi) <= 0 */
    while (hi - lo > 1u) {
        dpm_eps_t mid = lo + (hi - lo) / 2u;
        double w = f(mid, ctx);
        if (w <= 0.0) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return hi;
}

/* ---- coverage, margin and the find-K search ------------------------------------------------ */

/* The x in [0, 1] with I_x(a, b) = target (I increases in x), by bisection. */
static double beta_quantile(double a, double b, double target)
{
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 200 && hi - lo > 1e-13; i++) {
        double mid = 0.5 * (lo + hi);
        if (prob_beta_inc(a, b, mid) < target) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

void sim_plan_coverage_ci(uint32_t within, uint32_t runs, double level, double *lo, double *hi)
{
    double a = (1.0 - level) / 2.0;
    *lo = within == 0 ? 0.0 : beta_quantile(within, runs - within + 1.0, a);
    *hi = within >= runs ? 1.0 : beta_quantile(within + 1.0, runs - within, 1.0 - a);
}

double sim_plan_design_coverage(double c, uint32_t runs, uint32_t items)
{
    double lo, hi;
    sim_plan_coverage_ci(runs, runs, SIM_PLAN_CI_LEVEL, &lo, &hi);
    if (runs == 0 || !(lo >= c)) {
        return NAN;
    }
    uint32_t a = 0, b = runs; /* the smallest count k whose interval's lower end is >= c */
    while (a < b) {
        uint32_t mid = a + (b - a) / 2u;
        sim_plan_coverage_ci(mid, runs, SIM_PLAN_CI_LEVEL, &lo, &hi);
        if (lo >= c) {
            b = mid;
        } else {
            a = mid + 1u;
        }
    }
    double power = 1.0 - (1.0 - SIM_PLAN_POWER) / (items > 0 ? items : 1u);
    double pl = c, ph = 1.0; /* Pr[Binomial(runs, p) >= k] increases in p */
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (pl + ph);
        double reach = a == 0 ? 1.0 : 1.0 - prob_binom_cdf(a - 1u, runs, mid);
        if (reach >= power) {
            ph = mid;
        } else {
            pl = mid;
        }
    }
    return ph;
}

uint32_t sim_plan_default_runs(double c, uint32_t items)
{
    uint32_t r = SIM_PLAN_DEFAULT_RUNS;
    for (; r < SIM_PLAN_MAX_RUNS; r *= 2u) {
        double d = sim_plan_design_coverage(c, r, items);
        if (d <= c + (1.0 - c) / 2.0) {
            break;
        }
    }
    return r;
}

/* z(p) = Phi^-1((1 + p) / 2): the half-width, in sds, that an unbiased normal error stays
 * within with probability p. */
static double z_of(double p)
{
    return prob_norm_quantile(0.5 + p / 2.0);
}

static void print_step(FILE *out, const sim_plan_search_t *s, const sim_plan_step_t *st)
{
    fprintf(out, "  K = %.0f: %s%s%s%u/%u = %.1f%% [%.1f, %.1f]: %s (%.3g s)\n", st->devices,
            s->items > 1 ? "worst item '" : "", s->items > 1 ? s->names[st->worst] : "",
            s->items > 1 ? "' " : "", st->within, st->runs, 100.0 * st->within / st->runs,
            100.0 * st->lo, 100.0 * st->hi,
            st->verified  ? "verified"
            : st->refuted ? "shown BELOW the target: more devices"
                          : "not shown to reach the target: more devices",
            st->seconds);
    fflush(out);
}

int sim_plan_find_devices(sim_plan_check_fn check, void *ctx, const char *const *names,
                          uint32_t items, double confidence, uint32_t runs, double devices,
                          uint64_t seed, FILE *out, double error, sim_plan_search_t *s, char *err,
                          size_t errcap)
{
    memset(s, 0, sizeof(*s));
    s->confidence = confidence;
    s->design = sim_plan_design_coverage(confidence, runs, items);
    s->runs = runs;
    s->items = items;
    s->devices = devices;
    if (items == 0 || items > SIM_PLAN_MAX_ITEMS || isnan(s->design)) {
        snprintf(err, errcap,
                 "%u runs cannot show a coverage of %g (even %u of %u within has a %g%% "
                 "interval reaching below it): use more --runs",
                 runs, confidence, runs, runs, 100.0 * SIM_PLAN_CI_LEVEL);
        return -1;
    }
    for (uint32_t i = 0; i < items; i++) {
        snprintf(s->names[i], sizeof(s->names[i]), "%s", names[i]);
    }
    if (out != NULL) {
        char target[48] = "within its target";
        if (!isnan(error)) {
            snprintf(target, sizeof(target), "<= %g", error);
        }
        fprintf(out,
                "check by simulation (exact mode, %u runs per check, %g%% Clopper-Pearson "
                "interval on each coverage of |error| %s; verified when its lower end "
                "reaches %g%%):\n",
                runs, 100.0 * SIM_PLAN_CI_LEVEL, target, 100.0 * confidence);
        fflush(out);
    }
    uint32_t within[SIM_PLAN_MAX_ITEMS];
    double k = devices;
    for (uint32_t n = 0; n < SIM_PLAN_MAX_STEPS; n++) {
        sim_plan_step_t *st = &s->step[n];
        double t0 = sim_now();
        if (check(ctx, k, runs, seed + n, within, err, errcap) != 0) {
            return -1;
        }
        st->devices = k;
        st->runs = runs;
        st->verified = 1;
        st->lo = 2.0;
        for (uint32_t i = 0; i < items; i++) {
            double lo, hi;
            sim_plan_coverage_ci(within[i], runs, SIM_PLAN_CI_LEVEL, &lo, &hi);
            st->verified &= lo >= confidence;
            st->refuted |= hi < confidence;
            if (lo < st->lo) {
                st->lo = lo;
                st->hi = hi;
                st->worst = i;
                st->within = within[i];
            }
        }
        st->seconds = sim_now() - t0;
        s->nsteps = n + 1u;
        s->model_refuted |= n == 0 && st->refuted;
        s->devices = k;
        if (out != NULL) {
            print_step(out, s, st);
        }
        if (st->verified) {
            s->found = 1;
            break;
        }
        /* aim the worst item at the design coverage: its error shrinks as 1 / sqrt(K) */
        double p = (double)st->within / runs;
        p = fmin(fmax(p, 0.05), 1.0 - 0.5 / runs);
        double f = z_of(s->design) / z_of(p);
        f = fmin(fmax(f * f, 1.1), 4.0);
        k = ceil(k * f);
    }
    return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

void sim_plan_print_trust(const char *text)
{
    printf("  trust model: %s\n", text);
}

int sim_plan_print_answer(double given_devices, double eps, double eps_campaign, double devices)
{
    char text[40];
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

void sim_plan_print_margin(double confidence, double design, uint32_t runs, uint32_t items,
                           int devices_given, double devices_bound, double devices_design,
                           double design_eps)
{
    const char *what = items > 1 ? "every item" : "the item";
    if (isnan(design)) {
        printf("  margin: none: %u runs cannot show a coverage of %g (even %u of %u leaves the "
               "%g%% interval below it): use more --runs\n",
               runs, confidence, runs, runs, 100.0 * SIM_PLAN_CI_LEVEL);
        return;
    }
    if (devices_given) {
        char text[40];
        sim_plan_eps_text((dpm_eps_t)fmin(design_eps * 65536.0, 4294967295.0), text, sizeof(text));
        printf("  margin: the check runs at campaign eps = %s, planned at coverage %.4g instead "
               "of %g (where a check of %u runs shows >= %g for %s with probability %g)\n",
               text, design, confidence, runs, confidence, what, SIM_PLAN_POWER);
        return;
    }
    printf("  margin: planned at coverage %.4g instead of %g, where a check of %u runs shows "
           ">= %g for %s with probability %g: K = %.0f (%+.0f devices on the bound's K)\n",
           design, confidence, runs, confidence, what, SIM_PLAN_POWER, devices_design,
           devices_design - devices_bound);
}

void sim_plan_print_verdict(const sim_plan_search_t *s, double devices_analytic, int devices_given)
{
    if (s->model_refuted) {
        printf("  warning: at the planned K the simulated coverage lies wholly below the target: "
               "the analytic model over-promised for this population\n");
    }
    double add = s->devices - devices_analytic;
    if (s->found && devices_given && add == 0.0) {
        printf("  -> your K = %.0f devices verified -> PASS\n", s->devices);
    } else if (s->found) {
        printf("  -> K = %.0f devices verified (%s K = %.0f: add %.0f devices) -> PASS\n",
               s->devices, devices_given ? "your" : "the analytic bound's", devices_analytic, add);
    } else {
        printf("  -> not verified up to K = %.0f devices (%.0f more than %s K = %.0f): add more "
               "devices, or raise eps, and plan again -> FAIL\n",
               s->devices, add, devices_given ? "your" : "the analytic bound's", devices_analytic);
    }
}

static void json_check(jw_t *w, const sim_plan_search_t *s, double devices_analytic)
{
    if (s == NULL || s->nsteps == 0) {
        jw_raw(w, "null");
        return;
    }
    jw_raw(w, "{\"mode\": \"exact\", \"runs\": %u, \"ci_level\": ", s->runs);
    jw_num(w, SIM_PLAN_CI_LEVEL, 6);
    jw_raw(w, ", \"target\": ");
    jw_num(w, s->confidence, 9);
    jw_raw(w, ", \"design_coverage\": ");
    jw_num(w, s->design, 9);
    jw_raw(w, ",\n    \"steps\": [");
    for (uint32_t n = 0; n < s->nsteps; n++) {
        const sim_plan_step_t *st = &s->step[n];
        jw_raw(w, "%s\n      {\"devices\": %.0f, \"worst_item\": ", n ? "," : "", st->devices);
        jw_str(w, s->names[st->worst]);
        jw_raw(w, ", \"within\": %u, \"runs\": %u, \"coverage_ci\": ", st->within, st->runs);
        double ci[2] = {st->lo, st->hi};
        jw_nums(w, ci, 2, 6);
        jw_raw(w, ", \"verified\": %s}", st->verified ? "true" : "false");
    }
    jw_raw(w,
           "],\n    \"verified\": %s, \"devices\": %.0f, \"devices_to_add\": %.0f, "
           "\"model_refuted\": %s}",
           s->found ? "true" : "false", s->devices, s->devices - devices_analytic,
           s->model_refuted ? "true" : "false");
}

FILE *sim_plan_json_begin(const char *path, jw_t *w, const char *planner, const char *trust,
                          const sim_plan_search_t *s, double devices_analytic)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "dpm-sim plan: cannot write %s: %s\n", path, strerror(errno));
        return NULL;
    }
    jw_file(w, f);
    jw_raw(w, "{\"planner\": ");
    jw_str(w, planner);
    jw_raw(w, ", \"trust_model\": \"%s\",\n  \"check\": ", trust);
    json_check(w, s, devices_analytic);
    return f;
}

void sim_plan_json_nums(jw_t *w, int more, const char *const *keys, const double *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        jw_raw(w, "%s", more || i > 0 ? ", " : "");
        jw_key(w, keys[i]);
        char text[32]; /* the shortest of 15 or 17 digits that reads back to the value */
        snprintf(text, sizeof(text), "%.15g", vals[i]);
        jw_num(w, vals[i], strtod(text, NULL) == vals[i] ? 15 : 17);
    }
}

void sim_plan_json_text(jw_t *w, int more, const char *key, const char *text)
{
    jw_raw(w, "%s", more ? ", " : "");
    jw_key(w, key);
    if (text != NULL) {
        jw_str(w, text);
    } else {
        jw_raw(w, "null");
    }
}

int sim_plan_json_end(FILE *f, jw_t *w, const char *path)
{
    jw_raw(w, "}\n");
    int bad = jw_error(w);
    bad |= f != stdout ? fclose(f) != 0 : fflush(f) != 0;
    if (bad) {
        fprintf(stderr, "dpm-sim plan: writing %s failed\n", path);
        return -1;
    }
    return 0;
}
