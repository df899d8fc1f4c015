/* SPDX-License-Identifier: Apache-2.0 */
/* Scenario file parser (see scenario_parse.h). One pass over the lines fills the structure;
 * checks that need the whole file (shares, each campaign's mechanism) run at the end and name
 * the line of the entry at fault. */
#include "sim/scenario/scenario_parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "common/kv.h" /* and text_list.h: numbers, lists */
#include "mech/base/campaign_keys.h"
#include "sim/scenario/pop_csv.h"

#define MAX_LINE 1024
#define MAX_KEYS 32
#define MAX_FILE (1u << 20)
#define SHARE_TOL 1e-6

typedef enum { SEC_NONE, SEC_SCENARIO, SEC_POPULATION, SEC_GROUP, SEC_CAMPAIGN, SEC_PLAN } sec_t;

typedef struct {
    const char *src;
    int line;
    char *err;
    size_t errcap;
    sim_scenario_t *sc;
    sec_t sec;
    int seen_scenario, seen_population;
    int devices_given;
    int model_line; /* the first [population] key of the synthetic model (examples, ...) */
    char keys[MAX_KEYS][SIM_NAME_MAX];
    int nkeys;
} parser_t;

static int fail_at(parser_t *p, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errcap, "%s:%d: %s", p->src, line, msg);
    return -1;
}

#define FAIL(p, ...) fail_at((p), (p)->line, __VA_ARGS__)

/* A comma-separated value of key `what`: the count, or -1 after saying what is wrong. */
static int list(parser_t *p, const char *what, char *v, char **items, int max)
{
    char why[96];
    int n = text_list_split(v, items, max, why, sizeof(why));
    return n >= 0 ? n : FAIL(p, "%s: %s", what, why);
}

/* ---- lexical helpers ------------------------------------------------------------------------ */

/* A number in [0, 1] as an exact rational: "a/b" or a decimal with at most 9 fraction
 * digits ("0.891005" = 891005 / 10^6). */
static int parse_ratio(const char *s, dpm_ratio_t *out)
{
    const char *slash = strchr(s, '/');
    if (slash != NULL) {
        char a[32], b[32];
        size_t la = (size_t)(slash - s);
        if (la == 0 || la >= sizeof(a) || strlen(slash + 1) >= sizeof(b)) {
            return -1;
        }
        memcpy(a, s, la);
        a[la] = '\0';
        snprintf(b, sizeof(b), "%s", slash + 1);
        uint64_t num, den;
        if (text_u64(text_trim(a), &num) != 0 || text_u64(text_trim(b), &den) != 0 || den == 0 ||
            num > den || den > UINT32_MAX) {
            return -1;
        }
        out->num = num;
        out->den = den;
        return 0;
    }
    uint64_t num = 0, den = 1;
    int digits = 0, frac = 0, seen_dot = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '.' && !seen_dot) {
            seen_dot = 1;
        } else if (*c >= '0' && *c <= '9') {
            if (++digits > 12 || (seen_dot && ++frac > 9)) {
                return -1;
            }
            num = num * 10u + (uint64_t)(*c - '0');
            den = seen_dot ? den * 10u : den;
        } else {
            return -1;
        }
    }
    if (digits == 0 || num > den) {
        return -1;
    }
    out->num = num;
    out->den = den;
    return 0;
}

/* "name(args)": copies name and the text between the parentheses. */
static int split_call(const char *s, char *name, size_t ncap, char *args, size_t acap)
{
    const char *open = strchr(s, '(');
    size_t n = strlen(s);
    if (open == NULL || n < 2 || s[n - 1] != ')') {
        return -1;
    }
    size_t ln = (size_t)(open - s), la = n - ln - 2;
    if (ln == 0 || ln >= ncap || la >= acap) {
        return -1;
    }
    memcpy(name, s, ln);
    name[ln] = '\0';
    memcpy(args, open + 1, la);
    args[la] = '\0';
    char *t = text_trim(name);
    memmove(name, t, strlen(t) + 1);
    return 0;
}

/* ---- values ---------------------------------------------------------------------------------- */

static int parse_dist(parser_t *p, const char *v, sim_dist_t *d)
{
    char name[32], args[256], *items[3];
    if (split_call(v, name, sizeof(name), args, sizeof(args)) != 0) {
        return FAIL(p, "expected constant(X) or beta(a, b), got '%s'", v);
    }
    int n = list(p, name, args, items, 3);
    if (n < 0) {
        return -1;
    }
    memset(d, 0, sizeof(*d));
    d->line = p->line;
    if (strcmp(name, "constant") == 0) {
        if (n != 1 || parse_ratio(items[0], &d->value) != 0) {
            return FAIL(p, "constant(X) needs one value in [0, 1] (decimal or a/b)");
        }
        d->kind = SIM_DIST_CONSTANT;
        return 0;
    }
    if (strcmp(name, "beta") == 0) {
        if (n != 2 || text_double(items[0], &d->a) != 0 || text_double(items[1], &d->b) != 0 ||
            !(d->a > 0.0) || !(d->b > 0.0)) {
            return FAIL(p, "beta(a, b) needs two positive numbers");
        }
        d->kind = SIM_DIST_BETA;
        return 0;
    }
    return FAIL(p, "unknown distribution '%s' (constant, beta)", name);
}

/* key=value arguments of a call, each looked up in keys[]; values into vals[]. */
static int parse_kwargs(parser_t *p, char *args, const char *const *keys, int nkeys, double *vals,
                        int *set)
{
    char *items[8];
    int n = args[0] == '\0' ? 0 : list(p, "arguments", args, items, 8);
    if (n < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *eq = strchr(items[i], '=');
        if (eq == NULL) {
            return FAIL(p, "argument '%s' is not key=value", items[i]);
        }
        *eq = '\0';
        char *k = text_trim(items[i]), *v = text_trim(eq + 1);
        int j = 0;
        while (j < nkeys && strcmp(k, keys[j]) != 0) {
            j++;
        }
        if (j == nkeys) {
            char hint[64];
            return FAIL(p, "unknown argument '%s'%s", k,
                        kv_suggest(k, keys, nkeys, hint, sizeof(hint)));
        }
        if (set[j]) {
            return FAIL(p, "argument '%s' given twice", k);
        }
        if (text_double(v, &vals[j]) != 0) {
            return FAIL(p, "argument '%s' needs a number", k);
        }
        set[j] = 1;
    }
    return 0;
}

/* v is the call fn(key=value, ...) of the given keys, into vals and set; anything else fails
   with usage. The value shapes of [population] (binormal, pairs, partition) share it. */
static int parse_call(parser_t *p, const char *v, const char *fn, const char *usage,
                      const char *const *keys, int nkeys, double *vals, int *set)
{
    char name[32], args[256];
    if (split_call(v, name, sizeof(name), args, sizeof(args)) != 0 || strcmp(name, fn) != 0) {
        return FAIL(p, "%s", usage);
    }
    return parse_kwargs(p, args, keys, nkeys, vals, set);
}

static int parse_binormal(parser_t *p, const char *v, sim_binormal_t *b)
{
    static const char *const keys[4] = {"auc", "base_rate", "examples", "threshold"};
    double vals[4] = {0};
    int set[4] = {0};
    if (parse_call(p, v, "binormal",
                   "expected binormal(auc=A, base_rate=P[, examples=E][, threshold=T])", keys, 4,
                   vals, set) != 0) {
        return -1;
    }
    if (!set[0] || !(vals[0] > 0.0 && vals[0] < 1.0)) {
        return FAIL(p, "binormal needs auc in (0, 1)");
    }
    if (!set[1] || !(vals[1] > 0.0 && vals[1] < 1.0)) {
        return FAIL(p, "binormal needs base_rate in (0, 1)");
    }
    if (set[2] && !(vals[2] >= 1.0 && vals[2] <= 10000.0 && vals[2] == floor(vals[2]))) {
        return FAIL(p, "examples must be an integer in 1..10000");
    }
    memset(b, 0, sizeof(*b));
    b->set = 1;
    b->auc = vals[0];
    b->base_rate = vals[1];
    b->examples = set[2] ? (uint32_t)vals[2] : 0;
    b->has_threshold = set[3];
    b->threshold = vals[3];
    b->line = p->line;
    return 0;
}

static int parse_pairs(parser_t *p, const char *v, sim_pairs_t *out)
{
    static const char *const keys[1] = {"rho"};
    double vals[1] = {0};
    int set[1] = {0};
    if (parse_call(p, v, "bivariate_normal", "expected bivariate_normal(rho=R)", keys, 1, vals,
                   set) != 0) {
        return -1;
    }
    if (!set[0] || !(vals[0] > -1.0 && vals[0] < 1.0)) {
        return FAIL(p, "bivariate_normal needs rho in (-1, 1)");
    }
    out->set = 1;
    out->rho = vals[0];
    out->line = p->line;
    return 0;
}

static int parse_partition(parser_t *p, const char *v, sim_partition_t *out)
{
    static const char *const keys[2] = {"concentration", "auc_sd"};
    if (strcmp(v, "iid") == 0) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    double vals[2] = {0};
    int set[2] = {0};
    if (parse_call(p, v, "noniid", "expected iid or noniid(concentration=C, auc_sd=S)", keys, 2,
                   vals, set) != 0) {
        return -1;
    }
    if (set[0] && !(vals[0] > 0.0)) {
        return FAIL(p, "concentration must be > 0");
    }
    if (set[1] && !(vals[1] >= 0.0 && vals[1] <= 5.0)) {
        return FAIL(p, "auc_sd must be in [0, 5]");
    }
    out->noniid = 1;
    out->concentration = set[0] ? vals[0] : 0.0; /* 0: no label skew */
    out->auc_sd = set[1] ? vals[1] : 0.0;
    return 0;
}

static int parse_choice(parser_t *p, const char *v, const char *a, const char *b, int *out)
{
    if (strcmp(v, a) == 0 || strcmp(v, b) == 0) {
        *out = strcmp(v, b) == 0;
        return 0;
    }
    return FAIL(p, "expected %s or %s, got '%s'", a, b, v);
}

/* A mechanism of the campaign key table (mech/base/campaign_keys.h): the names the collector's
 * campaigns file takes too. */
static int parse_mechanism(parser_t *p, const char *v, const host_campaign_mech_t **out)
{
    const char *names[16];
    char known[256], hint[64];
    int n = 0;
    *out = host_campaign_mech_find(v);
    if (*out != NULL) {
        return 0;
    }
    for (size_t i = 0; i < host_campaign_nmechs && n < 16; i++) {
        names[n++] = host_campaign_mechs[i].name;
    }
    return FAIL(p, "unknown mechanism '%s'%s (known: %s)", v,
                kv_suggest(v, names, n, hint, sizeof(hint)),
                host_campaign_mech_names(0, ", ", known, sizeof(known)));
}

/* A list of numbers, '-' allowed (NaN) when dash_ok. */
static int parse_number_list(parser_t *p, char *v, double *out, uint32_t max, uint32_t *n,
                             int dash_ok)
{
    char *items[SIM_MAX_PLAN_CELLS];
    int k = list(p, "values", v, items, (int)max);
    if (k < 0) {
        return -1;
    }
    for (int i = 0; i < k; i++) {
        if (dash_ok && strcmp(items[i], "-") == 0) {
            out[i] = NAN;
        } else if (text_double(items[i], &out[i]) != 0) {
            return FAIL(p, "'%s' is not a number", items[i]);
        }
    }
    *n = (uint32_t)k;
    return 0;
}

/* ---- sections -------------------------------------------------------------------------------- */

static const char *const kScenarioKeys[] = {"name", "description", "devices", "runs",
                                            "seed", "confidence",  "sizes",   "nu2",
                                            "mode", "population"};
static const char *const kPopulationKeys[] = {"seed", "examples", "beta_levels", "partition"};
static const char *const kGroupKeys[] = {"share", "scores", "pairs",    "partition",
                                         "tpr",   "fpr",    "accuracy", "precision"};
/* and the mechanisms' own keys (campaign_keys.h) */
static const char *const kCampaignKeys[] = {"id",     "mechanism", "eps",   "metrics",
                                            "groups", "bins",      "edges", "split"};
static const char *const kPlanKeys[] = {"mechanism",  "split",   "scale", "bound",
                                        "confidence", "devices", "error"};
static const char *const kSections[] = {"scenario", "population", "group", "campaign", "plan"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int unknown_key(parser_t *p, const char *k, const char *section, const char *const *keys,
                       int n)
{
    char hint[64], known[320] = "";
    for (int i = 0; i < n; i++) {
        snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", i ? ", " : "",
                 keys[i]);
    }
    return FAIL(p, "unknown key '%s' in [%s]%s (keys: %s)", k, section,
                kv_suggest(k, keys, n, hint, sizeof(hint)), known);
}

/* population = csv(PATH[, threshold=T]): the file is read now, its group labels become the
 * scenario's groups (shares: their fractions of the file's devices), so that campaigns name them
 * and every error in the file is reported with the scenario's. PATH is relative to the scenario
 * file's directory. */
static int parse_population(parser_t *p, char *v)
{
    sim_scenario_t *sc = p->sc;
    char name[16], args[600];
    if (split_call(v, name, sizeof(name), args, sizeof(args)) != 0 || strcmp(name, "csv") != 0) {
        return FAIL(p, "population must be csv(PATH) or csv(PATH, threshold=T)");
    }
    if (sc->ngroups > 0) {
        return FAIL(p, "population = csv(...) takes its groups from the file: remove the [group] "
                       "sections");
    }
    double thr = 0.5;
    char *comma = strchr(args, ',');
    if (comma != NULL) {
        static const char *const keys[] = {"threshold"};
        int set = 0;
        *comma = '\0';
        if (parse_kwargs(p, comma + 1, keys, 1, &thr, &set) != 0) {
            return -1;
        }
        if (!(thr >= 0.0 && thr <= 1.0)) {
            return FAIL(p, "csv(): threshold must be in [0, 1]");
        }
    }
    const char *file = text_trim(args), *slash = strrchr(p->src, '/');
    if (*file == '\0') {
        return FAIL(p, "csv(): missing PATH");
    }
    int dir = file[0] != '/' && slash != NULL ? (int)(slash - p->src) + 1 : 0;
    if (snprintf(sc->data.path, sizeof(sc->data.path), "%.*s%s", dir, p->src, file) >=
        (int)sizeof(sc->data.path)) {
        return FAIL(p, "csv(): path longer than %zu characters", sizeof(sc->data.path) - 1);
    }
    sim_csv_t d;
    char why[512];
    if (sim_csv_read_file(sc->data.path, thr, &d, why, sizeof(why)) != 0) {
        return FAIL(p, "population: %s", why);
    }
    for (uint32_t g = 0; g < d.ngroups; g++) {
        sim_group_spec_t *gs = &sc->group[g];
        snprintf(gs->name, sizeof(gs->name), "%s", d.group[g]);
        gs->data = 1;
        gs->share = (double)d.group_devices[g] / (double)d.ndevices;
        gs->share_line = gs->line = p->line;
        gs->scores.examples = d.group_most[g];
        gs->scores.line = p->line;
    }
    sc->ngroups = d.ngroups;
    sc->data.set = 1;
    sc->data.threshold = thr;
    sc->data.devices = d.ndevices;
    sc->data.line = p->line;
    sim_csv_free(&d);
    return 0;
}

static int key_scenario(parser_t *p, const char *k, char *v)
{
    sim_scenario_t *sc = p->sc;
    if (strcmp(k, "population") == 0) {
        return parse_population(p, v);
    }
    if (strcmp(k, "name") == 0) {
        if (!sim_name_valid(v)) {
            return FAIL(p, "bad name '%s' (letters, digits, _ . -; at most 31)", v);
        }
        snprintf(sc->name, sizeof(sc->name), "%s", v);
    } else if (strcmp(k, "description") == 0) {
        snprintf(sc->description, sizeof(sc->description), "%s", v);
    } else if (strcmp(k, "devices") == 0) {
        char *items[SIM_MAX_LIST];
        int n = list(p, "devices", v, items, SIM_MAX_LIST);
        if (n < 0) {
            return -1;
        }
        for (int i = 0; i < n; i++) {
            if (text_u64(items[i], &sc->devices[i]) != 0 || sc->devices[i] < 2) {
                return FAIL(p, "devices: '%s' is not an integer >= 2", items[i]);
            }
        }
        sc->ndevices = (uint32_t)n;
        p->devices_given = 1;
    } else if (strcmp(k, "runs") == 0) {
        uint64_t r;
        if (text_u64(v, &r) != 0 || r < 1 || r > 10000000) {
            return FAIL(p, "runs must be in 1..10^7");
        }
        sc->runs = (uint32_t)r;
    } else if (strcmp(k, "seed") == 0) {
        if (text_u64(v, &sc->seed) != 0) {
            return FAIL(p, "seed must be a non-negative integer");
        }
    } else if (strcmp(k, "confidence") == 0) {
        if (text_double(v, &sc->confidence) != 0 || !(sc->confidence > 0.0) ||
            !(sc->confidence < 1.0)) {
            return FAIL(p, "confidence must be in (0, 1)");
        }
    } else if (strcmp(k, "sizes") == 0) {
        return parse_choice(p, v, "known", "estimated", &sc->sizes_estimated);
    } else if (strcmp(k, "nu2") == 0) {
        return parse_choice(p, v, "true", "worst", &sc->nu2_worst);
    } else if (strcmp(k, "mode") == 0) {
        if (strcmp(v, "inprocess") == 0) {
            sc->mode = SIM_MODE_INPROCESS;
        } else if (strcmp(v, "exact") == 0) {
            sc->mode = SIM_MODE_EXACT;
        } else if (strcmp(v, "network") == 0) {
            sc->mode = SIM_MODE_NETWORK;
        } else {
            return FAIL(p, "mode: inprocess, exact or network");
        }
    } else {
        return unknown_key(p, k, "scenario", kScenarioKeys, COUNT(kScenarioKeys));
    }
    return 0;
}

static int key_population(parser_t *p, const char *k, const char *v)
{
    sim_scenario_t *sc = p->sc;
    uint64_t u;
    if (strcmp(k, "seed") != 0 && p->model_line == 0) {
        p->model_line = p->line;
    }
    if (strcmp(k, "seed") == 0) {
        if (text_u64(v, &sc->population_seed) != 0) {
            return FAIL(p, "seed must be a non-negative integer");
        }
    } else if (strcmp(k, "examples") == 0) {
        if (text_u64(v, &u) != 0 || u < 1 || u > 10000) {
            return FAIL(p, "examples must be in 1..10000");
        }
        sc->examples = (uint32_t)u;
    } else if (strcmp(k, "beta_levels") == 0) {
        if (text_u64(v, &u) != 0 || u < 1 || u > 100000) {
            return FAIL(p, "beta_levels must be in 1..100000");
        }
        sc->beta_levels = (uint32_t)u;
    } else if (strcmp(k, "partition") == 0) {
        return parse_partition(p, v, &sc->partition);
    } else {
        return unknown_key(p, k, "population", kPopulationKeys, COUNT(kPopulationKeys));
    }
    return 0;
}

static int key_group(parser_t *p, const char *k, const char *v)
{
    sim_group_spec_t *g = &p->sc->group[p->sc->ngroups - 1];
    if (strcmp(k, "share") == 0) {
        dpm_ratio_t r;
        if (parse_ratio(v, &r) != 0 || r.num == 0) {
            return FAIL(p, "share must be in (0, 1]: a decimal or a/b");
        }
        g->share = (double)r.num / (double)r.den;
        g->share_line = p->line;
        return 0;
    }
    if (strcmp(k, "scores") == 0) {
        return parse_binormal(p, v, &g->scores);
    }
    if (strcmp(k, "pairs") == 0) {
        return parse_pairs(p, v, &g->pairs);
    }
    if (strcmp(k, "partition") == 0) {
        g->has_partition = 1;
        return parse_partition(p, v, &g->partition);
    }
    dpm_metric_t m = sim_metric_from_name(k);
    if (m != 0) {
        return parse_dist(p, v, &g->metric[m - 1]);
    }
    return unknown_key(p, k, "group", kGroupKeys, COUNT(kGroupKeys));
}

static int find_group(const sim_scenario_t *sc, const char *name)
{
    for (uint32_t i = 0; i < sc->ngroups; i++) {
        if (strcmp(sc->group[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int campaign_eps(parser_t *p, sim_campaign_spec_t *c, char *v)
{
    char *items[SIM_MAX_LIST];
    int n = list(p, "eps", v, items, SIM_MAX_LIST);
    if (n < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (dpm_eps_from_decimal(items[i], &c->eps[i]) != DPM_OK) {
            return FAIL(p, "eps: '%s' is not a plain decimal in (0, %d]", items[i], DPM_EPS_MAX);
        }
        snprintf(c->eps_text[i], sizeof(c->eps_text[i]), "%s", items[i]);
    }
    c->neps = (uint32_t)n;
    return 0;
}

static int campaign_metrics(parser_t *p, sim_campaign_spec_t *c, char *v)
{
    char *items[DPM_CAMPAIGN_MAX_METRICS];
    int n = list(p, "metrics (1 to 4 of tpr, fpr, accuracy, precision)", v, items,
                 DPM_CAMPAIGN_MAX_METRICS);
    if (n < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        c->metrics[i] = sim_metric_from_name(items[i]);
        if (c->metrics[i] == 0) {
            return FAIL(p, "unknown metric '%s'", items[i]);
        }
        for (int j = 0; j < i; j++) {
            if (c->metrics[j] == c->metrics[i]) {
                return FAIL(p, "metric '%s' listed twice", items[i]);
            }
        }
    }
    c->nmetrics = (uint32_t)n;
    c->metrics_line = p->line;
    return 0;
}

static int campaign_groups(parser_t *p, sim_campaign_spec_t *c, char *v)
{
    char *items[SIM_MAX_GROUPS];
    int n = list(p, "groups", v, items, SIM_MAX_GROUPS);
    if (n < 1) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int g = find_group(p->sc, items[i]);
        if (g < 0 && p->sc->data.set) {
            char known[SIM_MAX_GROUPS * (SIM_NAME_MAX + 2)] = "";
            for (uint32_t j = 0; j < p->sc->ngroups; j++) {
                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                         j ? ", " : "", p->sc->group[j].name);
            }
            return FAIL(p, "group '%s' has no devices in %s (its groups: %s)", items[i],
                        p->sc->data.path, known);
        }
        if (g < 0) {
            return FAIL(p, "unknown group '%s' (define its [group] section first)", items[i]);
        }
        for (int j = 0; j < i; j++) {
            if (c->groups[j] == (uint32_t)g) {
                return FAIL(p, "group '%s' listed twice", items[i]);
            }
        }
        c->groups[i] = (uint32_t)g;
    }
    c->ngroups = (uint32_t)n;
    c->groups_line = p->line;
    return 0;
}

/* Score bins (histogram mechanisms): "bins = B" or "edges = e1, e2, ..." (common/edges.h). */
static int campaign_bins(parser_t *p, sim_campaign_spec_t *c, const char *k, char *v)
{
    char why[128];
    if (c->bins_line != 0) {
        return FAIL(p, "give bins or edges once");
    }
    c->bins_line = p->line;
    int st = strcmp(k, "bins") == 0 ? edges_parse_bins(v, c->edges, &c->nedges, why, sizeof(why))
                                    : edges_parse_list(v, c->edges, &c->nedges, why, sizeof(why));
    return st == 0 ? 0 : FAIL(p, "%s", why);
}

/* A mechanism's own key (the table of mech/base/campaign_keys.h says which mechanism takes it
 * and what its value may be; the campaigns file parses it the same way). The module checks the
 * value against the SDK's build. */
static int campaign_mech_key(parser_t *p, sim_campaign_spec_t *c, int key, const char *v)
{
    const host_campaign_key_t *mk = host_campaign_key_at(key);
    const char *k = mk->key;
    if (c->keys_line[key] != 0) {
        return FAIL(p, "%s given twice", k);
    }
    c->keys_line[key] = p->line;
    uint32_t x = 0;
    if (host_campaign_key_value(mk, v, 0, &x) != 0) {
        if (mk->kind != HOST_KEY_INT) {
            return FAIL(p, "%s must be %s, not '%s'", k, mk->must, v);
        }
        return FAIL(p, "%s must be an integer in %u..%u%s, not '%s'", k, mk->lo, mk->hi,
                    text_is_decimal(v) ? "" : " written in decimal", v);
    }
    switch (key) { /* where the scenario keeps it */
    case HOST_CK_THRESHOLDS: c->thresholds = x; break;
    case HOST_CK_CALIBRATION: c->calibration_tight = x != 0; break;
    case HOST_CK_K: c->ustat_k = x; break;
    case HOST_CK_KERNEL: c->ustat_kernel = x; break;
    case HOST_CK_DEPTH: c->tree_depth = x; break;
    case HOST_CK_GRR_LEVELS: c->tree_grr_set = 1, c->tree_grr_levels = x; break;
    case HOST_CK_GROUP_EPS: c->group_eps = x; break;
    case HOST_CK_VARIANT: c->fedauc_variant = x; break;
    case HOST_CK_P_SHARE: c->fedauc_p_share = x; break;
    case HOST_CK_MAX_DEVICE_EXAMPLES: c->max_device_examples = x; break;
    case HOST_CK_NOISE: c->noise_gauss = x; break;
    case HOST_CK_DELTA: c->delta = strtod(v, NULL); break; /* checked above */
    case HOST_CK_LOCAL_EPS: c->local_eps = x; break;
    default: c->fedauc_score_bits = x; break; /* HOST_CK_SCORE_BITS */
    }
    return 0;
}

static int key_campaign(parser_t *p, const char *k, char *v)
{
    int key = -1;
    if (host_campaign_key_find(k, &key) != NULL && key < HOST_CK_SCENARIO) {
        return campaign_mech_key(p, &p->sc->campaign[p->sc->ncampaigns - 1], key, v);
    }
    sim_campaign_spec_t *c = &p->sc->campaign[p->sc->ncampaigns - 1];
    if (strcmp(k, "id") == 0) {
        uint64_t id;
        if (text_u64(v, &id) != 0 || id < 1 || id > UINT32_MAX) {
            return FAIL(p, "id must be in 1..4294967295");
        }
        c->id = (uint32_t)id;
    } else if (strcmp(k, "mechanism") == 0) {
        if (parse_mechanism(p, v, &c->campaign_mech) != 0) {
            return -1;
        }
        c->mechanism = c->campaign_mech->id;
    } else if (strcmp(k, "eps") == 0) {
        c->eps_line = p->line;
        return campaign_eps(p, c, v);
    } else if (strcmp(k, "metrics") == 0) {
        return campaign_metrics(p, c, v);
    } else if (strcmp(k, "groups") == 0) {
        return campaign_groups(p, c, v);
    } else if (strcmp(k, "bins") == 0 || strcmp(k, "edges") == 0) {
        return campaign_bins(p, c, k, v);
    } else if (strcmp(k, "split") == 0) {
        c->split_line = p->line;
        return parse_choice(p, v, "sdk", "paper", &c->split_paper);
    } else {
        const char *keys[COUNT(kCampaignKeys) + HOST_CK_SCENARIO];
        memcpy(keys, kCampaignKeys, sizeof(kCampaignKeys));
        for (int i = 0; i < HOST_CK_SCENARIO; i++) {
            keys[COUNT(kCampaignKeys) + i] = host_campaign_key_at(i)->key;
        }
        return unknown_key(p, k, "campaign", keys, COUNT(keys));
    }
    return 0;
}

static int key_plan(parser_t *p, const char *k, char *v)
{
    sim_plan_spec_t *pl = &p->sc->plan[p->sc->nplans - 1];
    if (strcmp(k, "mechanism") == 0) {
        const host_campaign_mech_t *m = NULL;
        if (parse_mechanism(p, v, &m) != 0) {
            return -1;
        }
        if (m->id != DPM_MECH_ID_TUPLE_MR && m->id != DPM_MECH_ID_TUPLE_ML) {
            return FAIL(p, "[plan] answers tuple_mr and tuple_ml questions (roc_hist: dpm-sim plan "
                           "--mechanism roc_hist)");
        }
        pl->mechanism = m->id;
        return 0;
    }
    if (strcmp(k, "split") == 0) {
        return parse_choice(p, v, "sdk", "paper", &pl->split_paper);
    }
    if (strcmp(k, "scale") == 0) {
        return parse_choice(p, v, "value", "metric", &pl->scale_metric);
    }
    if (strcmp(k, "bound") == 0) {
        return parse_choice(p, v, "chebyshev", "normal", &pl->bound_normal);
    }
    if (strcmp(k, "confidence") == 0) {
        if (text_double(v, &pl->confidence) != 0 || !(pl->confidence > 0.0) ||
            !(pl->confidence < 1.0)) {
            return FAIL(p, "confidence must be in (0, 1)");
        }
        return 0;
    }
    if (strcmp(k, "devices") == 0 || strcmp(k, "error") == 0) {
        int dev = k[0] == 'd';
        double *out = dev ? pl->devices : pl->error;
        uint32_t *n = dev ? &pl->ndevices : &pl->nerror;
        if (parse_number_list(p, v, out, SIM_MAX_LIST, n, 0) != 0) {
            return -1;
        }
        for (uint32_t i = 0; i < *n; i++) {
            if (!(out[i] > 0.0) || (dev && out[i] != floor(out[i]))) {
                return FAIL(p, "%s must be positive%s", k, dev ? " integers" : " numbers");
            }
        }
        return 0;
    }
    return unknown_key(p, k, "plan", kPlanKeys, COUNT(kPlanKeys));
}

/* A "[kind]" or "[kind NAME]" line (kv.h). */
static int open_section(parser_t *p, const char *kind, const char *name)
{
    sim_scenario_t *sc = p->sc;
    p->nkeys = 0;
    int known = 0;
    for (int i = 0; i < COUNT(kSections); i++) {
        known |= strcmp(kind, kSections[i]) == 0;
    }
    if (!known) { /* said first: "[grup a]" is a misspelled section, not a misplaced name */
        char hint[64];
        return FAIL(p,
                    "unknown section [%s]%s (sections: scenario, population, group, campaign, "
                    "plan)",
                    kind, kv_suggest(kind, kSections, COUNT(kSections), hint, sizeof(hint)));
    }
    int named =
        strcmp(kind, "group") == 0 || strcmp(kind, "campaign") == 0 || strcmp(kind, "plan") == 0;
    if (named && !sim_name_valid(name)) {
        return FAIL(p, "[%s NAME]: bad or missing name '%s'", kind, name);
    }
    if (!named && *name) {
        return FAIL(p, "[%s] takes no name", kind);
    }
    if (strcmp(kind, "scenario") == 0 || strcmp(kind, "population") == 0) {
        int *seen = kind[0] == 's' ? &p->seen_scenario : &p->seen_population;
        if (*seen) {
            return FAIL(p, "[%s] given twice", kind);
        }
        *seen = 1;
        p->sec = kind[0] == 's' ? SEC_SCENARIO : SEC_POPULATION;
        return 0;
    }
    if (strcmp(kind, "group") == 0) {
        if (sc->ncampaigns > 0) {
            return FAIL(p, "[group] sections must come before the campaigns");
        }
        if (sc->ngroups >= SIM_MAX_GROUPS) {
            return FAIL(p, "more than %d groups", SIM_MAX_GROUPS);
        }
        if (sc->data.set) {
            return FAIL(p,
                        "no [group] sections with population = csv(...): the groups are the "
                        "group labels of %s",
                        sc->data.path);
        }
        if (find_group(sc, name) >= 0) {
            return FAIL(p, "group '%s' defined twice", name);
        }
        sim_group_spec_t *g = &sc->group[sc->ngroups++];
        snprintf(g->name, sizeof(g->name), "%s", name);
        g->line = p->line;
        p->sec = SEC_GROUP;
        return 0;
    }
    if (strcmp(kind, "campaign") == 0) {
        if (sc->ncampaigns >= SIM_MAX_CAMPAIGNS) {
            return FAIL(p, "more than %d campaigns", SIM_MAX_CAMPAIGNS);
        }
        for (uint32_t i = 0; i < sc->ncampaigns; i++) {
            if (strcmp(sc->campaign[i].name, name) == 0) {
                return FAIL(p, "campaign '%s' defined twice", name);
            }
        }
        sim_campaign_spec_t *c = &sc->campaign[sc->ncampaigns++];
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->id = sc->ncampaigns;
        c->line = p->line;
        p->sec = SEC_CAMPAIGN;
        return 0;
    }
    if (strcmp(kind, "plan") == 0) {
        if (sc->nplans >= SIM_MAX_PLANS) {
            return FAIL(p, "more than %d plans", SIM_MAX_PLANS);
        }
        sim_plan_spec_t *pl = &sc->plan[sc->nplans++];
        snprintf(pl->name, sizeof(pl->name), "%s", name);
        pl->line = p->line;
        pl->confidence = 0.99;
        p->sec = SEC_PLAN;
        return 0;
    }
    char hint[64];
    return FAIL(p, "unknown section [%s]%s (sections: scenario, population, group, campaign, plan)",
                kind, kv_suggest(kind, kSections, COUNT(kSections), hint, sizeof(hint)));
}

static int key_line(parser_t *p, const char *k, char *v)
{
    if (*k == '\0') {
        return FAIL(p, "missing key before '='");
    }
    if (*v == '\0') {
        return FAIL(p, "missing value for '%s'", k);
    }
    if (p->sec == SEC_NONE) {
        return FAIL(p, "'%s' outside any section", k);
    }
    for (int i = 0; i < p->nkeys; i++) {
        if (strcmp(p->keys[i], k) == 0) {
            return FAIL(p, "key '%s' given twice in this section", k);
        }
    }
    if (p->nkeys < MAX_KEYS) {
        snprintf(p->keys[p->nkeys++], SIM_NAME_MAX, "%s", k);
    }
    switch (p->sec) {
    case SEC_SCENARIO: return key_scenario(p, k, v);
    case SEC_POPULATION: return key_population(p, k, v);
    case SEC_GROUP: return key_group(p, k, v);
    case SEC_CAMPAIGN: return key_campaign(p, k, v);
    default: return key_plan(p, k, v);
    }
}

/* ---- whole-file checks ----------------------------------------------------------------------- */

static int check_groups(parser_t *p)
{
    sim_scenario_t *sc = p->sc;
    double total = 0.0;
    for (uint32_t i = 0; i < sc->ngroups; i++) {
        sim_group_spec_t *g = &sc->group[i];
        int explicit_metrics = 0;
        for (int m = 0; m < SIM_NMETRICS; m++) {
            explicit_metrics += g->metric[m].kind != SIM_DIST_NONE;
        }
        if (g->share_line == 0) {
            return fail_at(p, g->line, "group '%s' has no share", g->name);
        }
        if (g->scores.set && explicit_metrics > 0) {
            return fail_at(p, g->scores.line,
                           "group '%s': give either scores = binormal(...) or metric lines, "
                           "not both",
                           g->name);
        }
        if (!g->scores.set && explicit_metrics == 0 && !g->pairs.set && !g->data) {
            return fail_at(p, g->line,
                           "group '%s' has no scores, no metric distribution and no pairs",
                           g->name);
        }
        if (g->scores.set && g->scores.examples == 0) {
            g->scores.examples = sc->examples;
        }
        if (!g->has_partition) {
            g->partition = sc->partition;
        }
        total += g->share;
    }
    if (sc->data.set && sc->ngroups < 2) {
        return fail_at(p, sc->data.line,
                       "%s has one group ('%s'): a scenario needs at least 2 groups", sc->data.path,
                       sc->group[0].name);
    }
    if (sc->data.set && p->model_line != 0) {
        return fail_at(p, p->model_line,
                       "population = csv(...) takes its examples from the file: [population] "
                       "takes only seed (the resampling's)");
    }
    if (sc->data.set && !p->devices_given) { /* default: the file's devices as they are */
        sc->ndevices = 1;
        sc->devices[0] = sc->data.devices;
    }
    if (sc->ngroups < 2) {
        return fail_at(p, p->line, "a scenario needs at least 2 [group] sections");
    }
    if (fabs(total - 1.0) > SHARE_TOL) {
        return fail_at(p, sc->group[sc->ngroups - 1].share_line,
                       "the group shares sum to %.9g, not 1", total);
    }
    return 0;
}

static int check_campaigns(parser_t *p)
{
    sim_scenario_t *sc = p->sc;
    if (sc->ncampaigns == 0 && sc->nplans == 0) {
        return fail_at(p, p->line, "no [campaign] (or [plan]) section");
    }
    for (uint32_t i = 0; i < sc->ncampaigns; i++) {
        sim_campaign_spec_t *c = &sc->campaign[i];
        if (c->campaign_mech == NULL || c->neps == 0) {
            return fail_at(p, c->line, "campaign '%s' needs mechanism and eps", c->name);
        }
        for (uint32_t j = 0; j < i; j++) {
            if (sc->campaign[j].id == c->id) {
                return fail_at(p, c->line, "campaign '%s' repeats id %u", c->name, c->id);
            }
        }
        if (c->ngroups == 0) {
            c->ngroups = sc->ngroups;
            for (uint32_t g = 0; g < sc->ngroups; g++) {
                c->groups[g] = g;
            }
            c->groups_line = c->line;
        }
        /* a mechanism's own keys only where the table gives them to it (the campaigns file
         * takes the same: mech/base/campaign_keys.h) */
        const host_campaign_mech_t *m = c->campaign_mech;
        for (int k = 0; k < HOST_CK_SCENARIO; k++) {
            const char *key = host_campaign_key_at(k)->key;
            if (c->keys_line[k] != 0 && !host_campaign_mech_takes(m, key, 0)) {
                char its[128];
                int none = m->keys[0] == NULL;
                return fail_at(p, c->keys_line[k], "campaign '%s' (%s) takes no key '%s'%s%s%s",
                               c->name, m->name, key, none ? "" : " (its keys: ",
                               host_campaign_keys_text(m, its, sizeof(its)), none ? "" : ")");
            }
        }
    }
    for (uint32_t i = 0; i < sc->nplans; i++) {
        sim_plan_spec_t *pl = &sc->plan[i];
        if (pl->mechanism == 0 || pl->ndevices == 0 || pl->nerror == 0) {
            return fail_at(p, pl->line, "plan '%s' needs mechanism, devices and error", pl->name);
        }
    }
    return 0;
}

static void defaults(sim_scenario_t *sc, const char *source)
{
    memset(sc, 0, sizeof(*sc));
    const char *base = strrchr(source, '/');
    base = base != NULL ? base + 1 : source;
    snprintf(sc->name, sizeof(sc->name), "%s", base);
    char *dot = strstr(sc->name, ".scn");
    if (dot != NULL) {
        *dot = '\0';
    }
    sc->ndevices = 1;
    sc->devices[0] = 100000;
    sc->runs = 10;
    sc->seed = 1;
    sc->population_seed = 1;
    sc->confidence = 0.95;
    sc->mode = SIM_MODE_INPROCESS;
    sc->examples = 40;
    sc->beta_levels = 100;
}

int sim_scenario_read(const char *text, size_t len, const char *source, sim_scenario_t *out,
                      char *err, size_t errcap)
{
    parser_t p;
    memset(&p, 0, sizeof(p));
    p.src = source;
    p.err = err;
    p.errcap = errcap;
    p.sc = out;
    defaults(out, source);
    kv_t kv;
    kv_item_t it;
    char line[MAX_LINE];
    kv_init(&kv, text, len, line, sizeof(line));
    int got;
    while ((got = kv_next(&kv, &it)) != KV_END) {
        p.line = it.line;
        int st = got == KV_TOO_LONG      ? FAIL(&p, "line longer than %d characters", MAX_LINE - 1)
                 : got == KV_NUL         ? FAIL(&p, "NUL byte in the line")
                 : got == KV_SECTION     ? open_section(&p, it.kind, it.name)
                 : got == KV_BAD_SECTION ? FAIL(&p, "malformed section header")
                 : got == KV_TEXT        ? FAIL(&p, "expected 'key = value' or a [section]")
                                         : key_line(&p, it.key, it.value);
        if (st != 0) {
            return -1;
        }
    }
    p.line = it.line > 0 ? it.line : 1; /* end-of-file checks name the last line */
    /* a planner-only scenario needs no population */
    int plans_only = out->ncampaigns == 0 && out->ngroups == 0 && out->nplans > 0;
    if ((!plans_only && check_groups(&p) != 0) || check_campaigns(&p) != 0) {
        return -1;
    }
    return 0;
}

int sim_scenario_read_file(const char *path, sim_scenario_t *out, char *err, size_t errcap)
{
    char *buf = NULL;
    size_t n = 0;
    int got = text_read_file(path, MAX_FILE, &buf, &n);
    if (got != 0) {
        if (got == TEXT_FILE_OPEN) {
            snprintf(err, errcap, "%s: cannot open: %s", path, strerror(errno));
        } else {
            snprintf(err, errcap, "%s: cannot read (or larger than 1 MiB)", path);
        }
        return -1;
    }
    int st = sim_scenario_read(buf, n, path, out, err, errcap);
    free(buf);
    return st;
}
