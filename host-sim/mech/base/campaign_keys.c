/* SPDX-License-Identifier: Apache-2.0 */
/* The campaign keys of each mechanism (campaign_keys.h). */
#include "mech/base/campaign_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_list.h"
#include "estimate/dpauc.h"
#include "mech/base/campaign.h"

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_KEYS ((const char *const[]){NULL})
#define FEDAUC_COLLECTOR_KEYS                                                                      \
    KEYS("upload_seconds", "upload_count", "min_uploaders", "max_examples")

const host_campaign_mech_t host_campaign_mechs[] = {
    {"tuple_mr", DPM_MECH_ID_TUPLE_MR, 1, NO_KEYS, NO_KEYS, 0},
    {"tuple_ml", DPM_MECH_ID_TUPLE_ML, 1, NO_KEYS, NO_KEYS, 0},
    {"roc_hist", DPM_MECH_ID_ROC_HIST, 1, NO_KEYS, KEYS("max_examples"), 0},
    {"roc_hist_groups", DPM_MECH_ID_ROC_HIST, 0, KEYS("group_eps"), KEYS("max_examples"), 0},
    {"dpauc", DPM_MECH_ID_DPAUC, 1, KEYS("thresholds", "calibration"), KEYS("max_examples"), 0},
    {"ustat_bins", DPM_MECH_ID_USTAT_BINS, 1, KEYS("k", "kernel"), NO_KEYS, 0},
    {"ustat_tree", DPM_MECH_ID_USTAT_TREE, 1, KEYS("depth", "grr_levels"), NO_KEYS, 0},
    {"fedauc_rr", DPM_MECH_ID_FEDAUC_RR, 1, KEYS("score_bits"), FEDAUC_COLLECTOR_KEYS, 0},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, 1, KEYS("variant", "p_share", "score_bits"),
     FEDAUC_COLLECTOR_KEYS, 0},
    {"roc_hist_2agg", DPM_MECH_NONE, 0, KEYS("max_device_examples", "noise", "delta", "local_eps"),
     NO_KEYS, 1},
};
const size_t host_campaign_nmechs = sizeof(host_campaign_mechs) / sizeof(host_campaign_mechs[0]);

const host_campaign_mech_t *host_campaign_mech_find(const char *name)
{
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        if (strcmp(host_campaign_mechs[i].name, name) == 0) {
            return &host_campaign_mechs[i];
        }
    }
    return NULL;
}

const char *host_campaign_mech_names(int its_own_only, const char *last, char *buf, size_t cap)
{
    size_t n = 0, total = 0;
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        total += !its_own_only || host_campaign_mechs[i].its_own_name;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        if (its_own_only && !host_campaign_mechs[i].its_own_name) {
            continue;
        }
        size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%s",
                 n == 0           ? ""
                 : n + 1 == total ? last
                                  : ", ",
                 host_campaign_mechs[i].name);
        n++;
    }
    return buf;
}

int host_campaign_key_in(const char *const *list, const char *key)
{
    for (; *list != NULL; list++) {
        if (strcmp(*list, key) == 0) {
            return 1;
        }
    }
    return 0;
}

int host_campaign_mech_takes(const host_campaign_mech_t *m, const char *key, int collector)
{
    return host_campaign_key_in(m->keys, key) ||
           (collector && host_campaign_key_in(m->collector_keys, key));
}

const char *host_campaign_keys_text(const host_campaign_mech_t *m, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (const char *const *k = m->keys; *k != NULL; k++) {
        size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%s", used ? " " : "", *k);
    }
    return buf;
}

/* ---- the values ----------------------------------------------------------------------------- */

#define INT(KEY, LO, HI, CHI, WANT)                                                                \
    {                                                                                              \
        (KEY), HOST_KEY_INT, (LO), (HI), (CHI), NULL, 0, (WANT), NULL                              \
    }
#define CHOICE(KEY, FIRST, WANT, ...)                                                              \
    {                                                                                              \
        (KEY), HOST_KEY_CHOICE, 0, 0, 0, KEYS(__VA_ARGS__), (FIRST), (WANT), (WANT)                \
    }

/* In HOST_CK_ order (campaign_keys.h). */
static const host_campaign_key_t kValues[HOST_CK_COUNT] = {
    /* the campaigns file also takes an explicit list of thresholds (campaigns_auc.h) */
    INT("thresholds", 2, 1024, DPM_CAMPAIGN_MAX_THRESHOLDS,
        "N (2 .. DPM_DPAUC_MAX_THRESHOLDS) or increasing thresholds in [0, 1]"),
    CHOICE("calibration", 0, "published or tight", "published", "tight"),
    INT("k", 2, 65536, DPM_MAX_GRR_K, "an integer 2 .. DPM_MAX_GRR_K"),
    CHOICE("kernel", 0, "auc, auc_private_label or kendall", "auc", "auc_private_label", "kendall"),
    INT("depth", 1, 31, COLL_TREE_MAX_DEPTH, "an integer 1 .. 10 (the collector's largest tree)"),
    INT("grr_levels", 0, 31, COLL_TREE_MAX_DEPTH, "an integer 0 .. depth"),
    {"group_eps", HOST_KEY_EPS, 0, 0, 0, NULL, 0, "a plain decimal in (0, eps), e.g. 0.5",
     "a plain decimal in (0, eps)"},
    /* dpm_fedauc_variant_t: DPM_FEDAUC_LOCAL (1) .. DPM_FEDAUC_ADAPTIVE */
    CHOICE("variant", 1, "local, global, orthogonal or adaptive (fedauc_lap)", "local", "global",
           "orthogonal", "adaptive"),
    {"p_share", HOST_KEY_SHARE, 0, 0, 0, NULL, 0,
     "a decimal in (0, 1): the share of eps on localP (fedauc_lap)",
     "a decimal in (0, 1) (Q0.16: at least 0.0000153)"},
    INT("score_bits", 1, 31, 0, "an integer 1 .. 31"),
    /* the two-aggregator mode's sensitivity (estimate/roc_central.h): 8-bit Prio3 entries */
    INT("max_device_examples", 1, 255, 0, "an integer 1 .. 255"),
    /* the aggregators' noise: discrete Laplace (ε-DP), or discrete Gaussian (zCDP, reported as
     * (ε, δ)-DP at the campaign's delta, as a DAP task's noise = gaussian) */
    CHOICE("noise", 0, "laplace or gaussian", "laplace", "gaussian"),
    {"delta", HOST_KEY_DELTA, 0, 0, 0, NULL, 0, "a decimal in (0, 1e-5], e.g. 1e-9",
     "a decimal in (0, 1e-5], e.g. 1e-9"},
    /* the hybrid: each device also randomizes every example's label at this ε (label RR,
     * dpm/expert/dap.h's DPM_DAP_EXT_LOCAL_LABEL_RR): what holds if both aggregators collude */
    {"local_eps", HOST_KEY_EPS, 0, 0, 0, NULL, 0, "a plain decimal in (0, DPM_EPS_MAX], e.g. 2",
     "a plain decimal in (0, DPM_EPS_MAX], e.g. 2"},
    INT("upload_seconds", 1, UINT32_MAX, 0, "an integer >= 1 (at most period_seconds)"),
    INT("upload_count", 1, UINT32_MAX, 0, "an integer >= 1"),
    INT("min_uploaders", 1, UINT32_MAX, 0,
        "an integer >= 1 (1: ranks for any pool, also one device's own)"),
    INT("max_examples", 1, COLL_MAX_EXAMPLES_LIMIT, 0, "an integer 1 .. 16777216"),
};

const host_campaign_key_t *host_campaign_key_at(int i)
{
    return i >= 0 && i < HOST_CK_COUNT ? &kValues[i] : NULL;
}

const host_campaign_key_t *host_campaign_key_find(const char *key, int *index)
{
    for (int i = 0; i < HOST_CK_COUNT; i++) {
        if (strcmp(kValues[i].key, key) == 0) {
            if (index != NULL) {
                *index = i;
            }
            return &kValues[i];
        }
    }
    return NULL;
}

/* The campaigns file's integers: decimal digits only (no sign, exponent or hexadecimal), at
 * most 10. */
static int parse_uint(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    size_t n = strlen(v);
    if (n == 0 || n > 10 || strspn(v, "0123456789") != n) {
        return -1;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        x = x * 10u + (uint64_t)(v[i] - '0');
    }
    if (x < lo || x > hi) {
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

int host_campaign_key_value(const host_campaign_key_t *k, const char *v, int collector,
                            uint32_t *out)
{
    dpm_eps_t q = 0;
    switch (k->kind) {
    case HOST_KEY_INT:
        if (!collector) { /* a scenario's integers may be written 1e3 (text_u64), never 0x10 */
            uint64_t u = 0;
            if (text_u64(v, &u) != 0 || u < k->lo || u > k->hi) {
                return -1;
            }
            *out = (uint32_t)u;
            return 0;
        }
        return parse_uint(v, k->lo, k->collector_hi != 0 ? k->collector_hi : k->hi, out);
    case HOST_KEY_CHOICE:
        for (uint32_t i = 0; k->choices[i] != NULL; i++) {
            if (strcmp(v, k->choices[i]) == 0) {
                *out = k->first + i;
                return 0;
            }
        }
        return -1;
    case HOST_KEY_EPS:
        if (dpm_eps_from_decimal(v, &q) != DPM_OK) {
            return -1;
        }
        *out = q;
        return 0;
    case HOST_KEY_DELTA: {
        char *end = NULL;
        double x = strtod(v, &end);
        if (end == v || *end != '\0' || !(x > 0.0 && x <= 1e-5)) {
            return -1;
        }
        *out = 0;
        return 0;
    }
    default: /* HOST_KEY_SHARE */
        if (dpm_eps_from_decimal(v, &q) != DPM_OK || q == 0 || q >= 65536u) {
            return -1;
        }
        *out = q;
        return 0;
    }
}

void host_campaign_key_store(const host_campaign_key_t *k, uint32_t value, dpm_campaign_t *c,
                             struct coll_campaign_opts *o)
{
    switch (k - kValues) {
    case HOST_CK_THRESHOLDS: /* the grid i / (N - 1); N is in range, so linspace takes it */
        c->nthresholds = dpm_dpauc_linspace(value, c->thresholds) == DPM_OK ? value : 0;
        break;
    case HOST_CK_CALIBRATION: c->calibration = value; break;
    case HOST_CK_K: c->ustat_k = value; break;
    case HOST_CK_KERNEL: c->ustat_kernel = value; break;
    case HOST_CK_DEPTH: c->tree_depth = value; break;
    case HOST_CK_GRR_LEVELS: c->tree_grr_levels = value; break;
    case HOST_CK_GROUP_EPS: c->group_eps.q16 = value; break;
    case HOST_CK_VARIANT: c->fedauc_variant = value; break;
    case HOST_CK_P_SHARE: c->fedauc_p_share_q16 = value; break;
    case HOST_CK_SCORE_BITS: c->fedauc_score_bits = value; break;
    case HOST_CK_MAX_DEVICE_EXAMPLES: /* no campaigns-file mechanism takes these (sim_only) */
    case HOST_CK_NOISE:
    case HOST_CK_DELTA: break;
    case HOST_CK_UPLOAD_SECONDS: o->fedauc.upload_seconds = value; break;
    case HOST_CK_UPLOAD_COUNT: o->fedauc.upload_count = value; break;
    case HOST_CK_MIN_UPLOADERS: o->fedauc.min_uploaders = value; break;
    default: o->max_examples = value; break; /* HOST_CK_MAX_EXAMPLES */
    }
}
