/* SPDX-License-Identifier: Apache-2.0 */
/* Campaigns file parser (format in campaigns.h). Errors name the line and the problem: an
 * operator fixing a campaigns file should not need to read this code. */
#include "collector/ingest/campaigns.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "mech/base/agg_rocg.h"
#include "mech/base/campaign_keys.h"
#include "mech/base/campaigns_auc.h"
#include "mech/host_mech.h"
#include "common/edges.h"
#include "common/err.h"
#include "common/kv.h"
#include "common/text_list.h"

/* a roc_hist campaign's 63 edges, written at full precision by `dpm-sim campaigns`, take 888 */
#define LINE_MAX_CHARS 2048
#define FILE_MAX_BYTES (1u << 20)

typedef struct {
    dpm_campaign_t c;
    coll_campaign_opts_t o; /* collector-side options (not sent to devices) */
    int have_bins;
    int have_id, have_mech, have_eps, have_budget, have_period, have_groups, have_metrics,
        have_frac, have_quota, have_start, have_slack, have_late;
    int line; /* where the block started */
    /* the mechanisms' own keys given (campaign_keys.h), NULL-terminated */
    const char *given[HOST_CK_COUNT + 1];
    int ngiven;
} block_t;

/* 1 to maxlen decimal digits and nothing else (maxlen <= 19: no overflow): Unix seconds
   and the unsigned keys, one rule for both. */
static int parse_digits(const char *v, size_t maxlen, uint64_t *out)
{
    if (*v == '\0' || strlen(v) > maxlen) {
        return -1;
    }
    uint64_t x = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') {
            return -1;
        }
        x = x * 10u + (uint64_t)(*p - '0');
    }
    *out = x;
    return 0;
}

/* "1764547200" (Unix seconds) or "2025-12-01T00:00:00Z" (UTC). */
static int parse_time(const char *v, int64_t *out)
{
    int y, mo, d, h, mi, se;
    char z = 0;
    int n = 0;
    if (sscanf(v, "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &se, &z, &n) == 7 &&
        z == 'Z' && v[n] == '\0' && y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 &&
        h <= 23 && mi <= 59 && se <= 60) {
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        tm.tm_year = y - 1900;
        tm.tm_mon = mo - 1;
        tm.tm_mday = d;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = se;
        *out = (int64_t)timegm(&tm);
        return 0;
    }
    uint64_t x = 0;
    if (parse_digits(v, 12, &x) != 0) {
        return -1;
    }
    *out = (int64_t)x;
    return 0;
}

/* Unsigned decimal in [lo, hi]. */
static int parse_u32(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t x = 0;
    if (parse_digits(v, 10, &x) != 0) {
        return -1;
    }
    if (x < lo || x > hi) {
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

static int parse_metrics(const char *v, dpm_campaign_t *c)
{
    c->nmetrics = 0;
    const char *p = v;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *s = (char *)p;
        text_trim_span(&s, &n);
        dpm_metric_t m;
        if (n == 0 || (m = host_metric_from_name(s, n)) == 0 ||
            c->nmetrics >= DPM_CAMPAIGN_MAX_METRICS) {
            return -1;
        }
        for (uint32_t i = 0; i < c->nmetrics; i++) {
            if (c->metrics[i] == m) {
                return -1;
            }
        }
        c->metrics[c->nmetrics++] = m;
        if (e == NULL) {
            return 0;
        }
        p = e + 1;
    }
}

/* roc_hist: "bins = B" or "edges = e1, e2, ..." (host-sim/common/edges.h, shared with dpm-sim). */
static int parse_bins(const char *key, const char *v, dpm_campaign_t *c)
{
    char why[128];
    return strcmp(key, "bins") == 0
               ? edges_parse_bins(v, c->bin_edges, &c->nbins, why, sizeof(why))
               : edges_parse_list(v, c->bin_edges, &c->nbins, why, sizeof(why));
}

/* The keys every campaign may give; the mechanisms' own keys are those of campaign_keys.h. */
static const char *const kKeys[] = {"id",
                                    "mechanism",
                                    "bins",
                                    "edges",
                                    "eps",
                                    "budget",
                                    "period_seconds",
                                    "groups",
                                    "metrics",
                                    "frac_bits",
                                    "device_quota",
                                    "start",
                                    "clock_slack_seconds",
                                    "late_seconds",
                                    "name",
                                    "group_names"};
#define NKEYS ((int)(sizeof(kKeys) / sizeof(kKeys[0])))

/* "line N: unknown key 'K'", with the closest of every key set_key takes. */
static int unknown_key(char *err, size_t cap, int line, const char *key)
{
    const char *cand[NKEYS + HOST_CK_COUNT];
    memcpy(cand, kKeys, sizeof(kKeys));
    for (int i = 0; i < HOST_CK_COUNT; i++) {
        cand[NKEYS + i] = host_campaign_key_at(i)->key;
    }
    char hint[64];
    return host_fail(err, cap, "line %d: unknown key '%s'%s", line, key,
                     kv_suggest(key, cand, NKEYS + HOST_CK_COUNT, hint, sizeof(hint)));
}

/* "line N: bad KEY 'V' (want EXPECT)", and the trailing-comma hint when V ends with one. */
static int bad_value(char *err, size_t cap, int line, const char *key, const char *v,
                     const char *expect)
{
    return host_fail(err, cap, "line %d: bad %s '%s' (want %s)%s", line, key, v, expect,
                     kv_trailing_comma(v));
}

/* A mechanism's own key (campaign_keys.h): its value, as dpm-sim's scenarios parse it, kept
 * among the keys given (finish_block checks the mechanism takes it). thresholds also takes an
 * explicit list here (campaigns_auc.h). */
static int mech_key(block_t *b, const host_campaign_key_t *k, const char *v, int line, char *err,
                    size_t cap)
{
    if (host_campaign_key_in(b->given, k->key)) {
        return host_fail(err, cap, "line %d: '%s' given twice in one campaign", line, k->key);
    }
    uint32_t x = 0;
    int list = strcmp(k->key, "thresholds") == 0 && coll_thresholds_is_list(v);
    if (list ? coll_thresholds_list(v, &b->c) != 0 : host_campaign_key_value(k, v, 1, &x) != 0) {
        return bad_value(err, cap, line, k->key, v, k->want);
    }
    if (!list) {
        host_campaign_key_store(k, x, &b->c, &b->o);
    }
    b->given[b->ngiven++] = k->key; /* once each: given twice is refused above */
    return 0;
}

/* The keys that are one unsigned integer in a range: one row each, parsed and refused alike. */
typedef struct {
    const char *key;
    size_t have, field; /* offsets in block_t: its given-flag and its uint32_t */
    uint32_t lo, hi;
    const char *expect;
} u32_key_t;

static const u32_key_t kU32Keys[] = {
    {"id", offsetof(block_t, have_id), offsetof(block_t, c.id), 1, UINT32_MAX,
     "an integer 1 .. 4294967295"},
    {"period_seconds", offsetof(block_t, have_period), offsetof(block_t, c.period_seconds), 1,
     UINT32_MAX, "an integer >= 1"},
    {"groups", offsetof(block_t, have_groups), offsetof(block_t, c.groups), 0, UINT32_MAX,
     "an integer"},
    {"frac_bits", offsetof(block_t, have_frac), offsetof(block_t, c.frac_bits), 0, 64,
     "an integer"},
    {"device_quota", offsetof(block_t, have_quota), offsetof(block_t, o.device_quota), 1, 1000000,
     "an integer 1 .. 1000000"},
    {"clock_slack_seconds", offsetof(block_t, have_slack), offsetof(block_t, o.slack_seconds), 0,
     86400, "an integer 0 .. 86400"},
    {"late_seconds", offsetof(block_t, have_late), offsetof(block_t, o.late_seconds), 0, UINT32_MAX,
     "an integer >= 0"},
};

static const u32_key_t *u32_key(const char *key)
{
    for (size_t i = 0; i < sizeof(kU32Keys) / sizeof(kU32Keys[0]); i++) {
        if (strcmp(kU32Keys[i].key, key) == 0) {
            return &kU32Keys[i];
        }
    }
    return NULL;
}

static int set_key(block_t *b, const char *key, const char *v, int line, char *err, size_t cap)
{
    const host_campaign_key_t *mk = host_campaign_key_find(key, NULL);
    if (mk != NULL) {
        return mech_key(b, mk, v, line, err, cap);
    }
    int *have = NULL;
    int bad = 0, twice = 0;
    const char *expect = "";
    char names[160];
    const u32_key_t *u = u32_key(key);
    if (u != NULL) {
        have = (int *)((char *)b + u->have);
        bad = parse_u32(v, u->lo, u->hi, (uint32_t *)((char *)b + u->field));
        expect = u->expect;
    } else if (strcmp(key, "mechanism") == 0) {
        have = &b->have_mech;
        b->c.mechanism = dpm_mech_from_name(v); /* the SDK's one name table */
        bad = b->c.mechanism == DPM_MECH_NONE;
        expect = host_campaign_mech_names(1, " or ", names, sizeof(names));
    } else if (strcmp(key, "bins") == 0 || strcmp(key, "edges") == 0) {
        have = &b->have_bins;
        bad = parse_bins(key, v, &b->c);
        expect = "bins: an integer 2 .. DPM_MAX_BINS; edges: increasing scores in (0, 1]";
    } else if (strcmp(key, "eps") == 0) {
        have = &b->have_eps;
        bad = dpm_eps_from_decimal(v, &b->c.eps.q16) != DPM_OK;
        expect = "a plain decimal in (0, DPM_EPS_MAX], e.g. 1 or 0.5";
    } else if (strcmp(key, "budget") == 0) {
        have = &b->have_budget;
        bad = dpm_eps_from_decimal(v, &b->c.budget.q16) != DPM_OK;
        expect = "a plain decimal in (0, DPM_EPS_MAX]";
    } else if (strcmp(key, "metrics") == 0) {
        have = &b->have_metrics;
        bad = parse_metrics(v, &b->c);
        expect = "1 to 4 distinct of tpr, fpr, accuracy, precision, comma-separated";
    } else if (strcmp(key, "start") == 0) {
        have = &b->have_start;
        bad = parse_time(v, &b->o.start);
        expect = "Unix seconds or YYYY-MM-DDTHH:MM:SSZ";
    } else if (coll_names_key(key, v, &b->o.names, &bad, &twice, &expect)) {
        return twice ? host_fail(err, cap, "line %d: '%s' given twice in one campaign", line, key)
               : bad ? bad_value(err, cap, line, key, v, expect)
                     : 0;
    } else {
        return unknown_key(err, cap, line, key);
    }
    if (*have) {
        return host_fail(err, cap, "line %d: '%s' given twice in one campaign", line, key);
    }
    if (bad) {
        return bad_value(err, cap, line, key, v, expect);
    }
    *have = 1;
    return 0;
}

/* roc_hist with groups (agg_rocg.h): the build's groups and the collector's storage bound. */
static int rocg_check(const block_t *b, char *err, size_t cap)
{
    uint32_t G = b->c.groups, B = b->c.nbins + 1u;
    if (G < 2 || G > DPM_MAX_GROUPS) {
        return host_fail(err, cap,
                         "campaign at line %d: roc_hist groups must be 2 .. %d (this build)",
                         b->line, DPM_MAX_GROUPS);
    }
    if (coll_rocg_len(G, B) > COLL_VEC_LEN) {
        return host_fail(
            err, cap,
            "campaign at line %d: %u groups x %u bins exceed the collector's per-group "
            "sums (groups x (bins + 1) x (2 bins + 1) <= %u: 2 groups up to 44 bins, 4 up "
            "to 31, 8 up to 21, 16 up to 15)",
            b->line, G, B, (unsigned)COLL_VEC_LEN);
    }
    return 0;
}

static int finish_block(block_t *b, coll_campaigns_t *out, char *err, size_t cap)
{
    static const char *required[] = {"id", "mechanism", "eps", "groups", "metrics"};
    const host_mech_t *hm = host_mech_of(&b->c); /* NULL while no mechanism is given */
    unsigned flags = hm != NULL ? hm->flags : 0u;
    int roc = (flags & HOST_MECH_BINS) != 0;
    int fa = (flags & HOST_MECH_TWO_ROUND) != 0;
    int examples = (flags & HOST_MECH_MAX_EXAMPLES) != 0;
    /* the mechanism in the key table (roc_hist with groups is roc_hist_groups there) */
    const host_campaign_mech_t *cm =
        hm == NULL ? NULL
                   : host_campaign_mech_find(hm == &host_mech_roc_hist_groups ? "roc_hist_groups"
                                                                              : hm->name);
    if (roc && (!b->have_bins || b->have_metrics)) {
        return host_fail(
            err, cap, "campaign at line %d: roc_hist needs bins or edges, and no metrics", b->line);
    }
    if (roc && b->have_groups && rocg_check(b, err, cap) != 0) {
        return -1;
    }
    if (host_campaign_key_in(b->given, "group_eps") && !(roc && b->have_groups)) {
        return host_fail(err, cap, "campaign at line %d: group_eps is for roc_hist with groups",
                         b->line);
    }
    if (!roc && b->have_bins) {
        return host_fail(err, cap, "campaign at line %d: bins / edges are for roc_hist", b->line);
    }
    int tuple = (flags & HOST_MECH_TUPLE_VALUES) != 0; /* the only ones with groups and metrics */
    char auc_why[128];
    if (coll_auc_finish(&b->c, cm, b->given, b->have_groups, b->have_metrics, auc_why,
                        sizeof(auc_why)) != 0) {
        return host_fail(err, cap, "campaign at line %d: %s", b->line, auc_why);
    }
    int have_max_examples = host_campaign_key_in(b->given, "max_examples");
    if (!examples && have_max_examples) {
        return host_fail(err, cap,
                         "campaign at line %d: max_examples is for roc_hist, dpauc and fedauc",
                         b->line);
    }
    if (fa && b->o.max_examples > DPM_FEDAUC_MAX_EXAMPLES) {
        return host_fail(err, cap,
                         "campaign at line %d: fedauc max_examples is at most %u (the scores one "
                         "upload can hold)",
                         b->line, (unsigned)DPM_FEDAUC_MAX_EXAMPLES);
    }
    const int have[] = {b->have_id, b->have_mech, b->have_eps, b->have_groups || !tuple,
                        b->have_metrics || !tuple};
    for (size_t i = 0; i < sizeof(have) / sizeof(have[0]); i++) {
        if (!have[i]) {
            return host_fail(err, cap, "campaign at line %d: missing '%s'", b->line, required[i]);
        }
    }
    if (hm == NULL) { /* every mechanism name the file accepts has a module: never */
        return host_fail(err, cap, "campaign at line %d: no collector module for this mechanism",
                         b->line);
    }
    const char *names_why = coll_names_finish(&b->o.names, b->c.groups);
    if (names_why != NULL) {
        return host_fail(err, cap, "campaign at line %d: %s", b->line, names_why);
    }
    if (!b->have_budget) {
        b->c.budget = b->c.eps;
    }
    if (!b->have_period) {
        b->c.period_seconds = 86400;
    }
    const char *fa_why = coll_fedauc_finish(&b->c, &b->o.fedauc, b->given);
    if (fa_why != NULL) {
        return host_fail(err, cap, "campaign at line %d: %s", b->line, fa_why);
    }
    /* the mechanism's own keys as the table (campaign_keys.h) gives them: the same as dpm-sim's
     * scenarios (the checks above word the usual mistakes; this one keeps the two in step) */
    for (int i = 0; cm != NULL && i < b->ngiven; i++) {
        if (!host_campaign_mech_takes(cm, b->given[i], 1)) {
            return host_fail(err, cap, "campaign at line %d: %s takes no key '%s'", b->line,
                             cm->name, b->given[i]);
        }
    }
    if (!b->have_frac) {
        b->c.frac_bits = hm->default_frac_bits;
    }
    if (!have_max_examples) {
        b->o.max_examples = examples ? COLL_DEFAULT_MAX_EXAMPLES : 0;
    }
    if (!b->have_quota) {
        b->o.device_quota = COLL_DEFAULT_DEVICE_QUOTA;
    }
    if (!b->have_slack) {
        b->o.slack_seconds = COLL_DEFAULT_CLOCK_SLACK;
    }
    if (!b->have_late) {
        b->o.late_seconds = b->c.period_seconds;
    }
    b->o.has_start = b->have_start;
    if (coll_campaigns_find(out, b->c.id) != NULL) {
        return host_fail(err, cap, "campaign at line %d: id %u used twice", b->line, b->c.id);
    }
    if (out->n >= COLL_MAX_CAMPAIGNS) {
        return host_fail(err, cap, "campaign at line %d: more than %d campaigns", b->line,
                         COLL_MAX_CAMPAIGNS);
    }
    char cc_why[256] = "";
    if (host_campaign_build(&out->c[out->n], &b->c, &b->o, cc_why, sizeof(cc_why)) != 0) {
        return host_fail(err, cap, "campaign %u (line %d): %s", b->c.id, b->line, cc_why);
    }
    out->n++;
    return 0;
}

int coll_campaigns_parse(const char *text, size_t len, coll_campaigns_t *out, char *err,
                         size_t errcap)
{
    memset(out, 0, sizeof(*out));
    block_t b;
    int in_block = 0;
    kv_t kv;
    kv_item_t it;
    char buf[LINE_MAX_CHARS + 1];
    kv_init(&kv, text, len, buf, sizeof(buf));
    int got;
    while ((got = kv_next(&kv, &it)) != KV_END) {
        int line = it.line;
        if (got == KV_TOO_LONG) {
            return host_fail(err, errcap, "line %d: longer than %d characters", line,
                             LINE_MAX_CHARS);
        }
        if (got == KV_NUL) {
            return host_fail(err, errcap, "line %d: contains a NUL byte", line);
        }
        if (got == KV_SECTION && strcmp(it.kind, "campaign") == 0 && it.name[0] == '\0') {
            if (in_block == 1 && finish_block(&b, out, err, errcap) != 0) {
                return -1;
            }
            memset(&b, 0, sizeof(b));
            b.line = line;
            in_block = 1;
            continue;
        }
        if (got == KV_SECTION && strcmp(it.kind, "dap_task") == 0) {
            /* a two-aggregator task: aggregator/dap_tasks.h reads these blocks */
            if (in_block == 1 && finish_block(&b, out, err, errcap) != 0) {
                return -1;
            }
            in_block = 2;
            out->dap_tasks++;
            continue;
        }
        if (in_block == 2 && got == KV_PAIR) {
            continue;
        }
        if (got != KV_PAIR) { /* "[campain]" gets a spelling; "[campaign x]" takes no name */
            static const char *const kSections[] = {"campaign", "dap_task"};
            char hint[64];
            return host_fail(err, errcap,
                             "line %d: expected '[campaign]', '[dap_task]' or 'key = value'%s",
                             line,
                             got == KV_SECTION && it.name[0] == '\0'
                                 ? kv_suggest(it.kind, kSections, 2, hint, sizeof(hint))
                                 : "");
        }
        if (!in_block) {
            return host_fail(err, errcap, "line %d: 'key = value' before the first [campaign]",
                             line);
        }
        if (set_key(&b, it.key, it.value, line, err, errcap) != 0) {
            return -1;
        }
    }
    if (in_block == 1 && finish_block(&b, out, err, errcap) != 0) {
        return -1;
    }
    if (out->n == 0 && out->dap_tasks == 0) {
        return host_fail(err, errcap, "no [campaign] block");
    }
    return 0;
}

int coll_campaigns_load(const char *path, coll_campaigns_t *out, char *err, size_t errcap)
{
    char *text = NULL;
    size_t n = 0;
    if (kv_load_file(path, FILE_MAX_BYTES, "1 MiB", &text, &n, err, errcap) != 0) {
        return -1;
    }
    char msg[384];
    int rc = coll_campaigns_parse(text, n, out, msg, sizeof(msg));
    free(text);
    if (rc != 0) {
        return host_fail(err, errcap, "%s: %s", path, msg);
    }
    return 0;
}

int coll_campaigns_index(const coll_campaigns_t *cs, uint32_t id)
{
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->c[i].mech.campaign.id == id) {
            return (int)i;
        }
    }
    return -1;
}

const coll_campaign_t *coll_campaigns_find(const coll_campaigns_t *cs, uint32_t id)
{
    int i = coll_campaigns_index(cs, id);
    return i < 0 ? NULL : &cs->c[i];
}

const char *coll_mechanism_name(dpm_mech_id_t m)
{
    const char *name = dpm_mech_name(m);
    return name != NULL ? name : "unknown";
}

int coll_campaign_period_check(const coll_campaign_t *c, uint32_t period, int64_t now)
{
    const coll_campaign_opts_t *o = &c->opts;
    if (!o->has_start) {
        return 0;
    }
    int64_t len = (int64_t)c->mech.campaign.period_seconds;
    int64_t open = o->start + (int64_t)period * len - (int64_t)o->slack_seconds;
    int64_t close = o->start + ((int64_t)period + 1) * len + (int64_t)o->late_seconds +
                    (int64_t)o->slack_seconds;
    return now < open ? -1 : now >= close ? 1 : 0;
}
