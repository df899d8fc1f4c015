/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign-file keys of dpauc, ustat_bins and ustat_tree (format in campaigns_auc.h). */
#include "mech/base/campaigns_auc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/dpauc.h"

enum { K_THRESHOLDS, K_CALIBRATION, K_K, K_KERNEL, K_DEPTH, K_GRR_LEVELS, K_COUNT };
static const char *const KEYS[K_COUNT] = {"thresholds", "calibration", "k",
                                          "kernel",     "depth",       "grr_levels"};
/* which mechanism each key belongs to */
static const dpm_mech_id_t KEY_MECH[K_COUNT] = {DPM_MECH_ID_DPAUC,      DPM_MECH_ID_DPAUC,
                                                DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_BINS,
                                                DPM_MECH_ID_USTAT_TREE, DPM_MECH_ID_USTAT_TREE};

int coll_auc_mech(dpm_mech_id_t m)
{
    return m == DPM_MECH_ID_DPAUC || m == DPM_MECH_ID_USTAT_BINS || m == DPM_MECH_ID_USTAT_TREE;
}

/* Plain decimal digits in [lo, hi]. */
static int parse_uint(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (*v == '\0' || strlen(v) > 9 || strspn(v, "0123456789") != strlen(v)) {
        return -1;
    }
    unsigned long x = strtoul(v, NULL, 10);
    if (x < lo || x > hi) {
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

/* "N" (the linspace grid) or "t1, t2, ..." in [0, 1], Q1.31 nearest, strictly increasing. */
static int parse_thresholds(const char *v, dpm_campaign_t *c)
{
    if (strchr(v, ',') == NULL && strchr(v, '.') == NULL) {
        uint32_t n;
        return parse_uint(v, 2, DPM_CAMPAIGN_MAX_THRESHOLDS, &n) != 0 ||
                       dpm_dpauc_linspace(n, c->thresholds) != DPM_OK
                   ? -1
                   : (c->nthresholds = n, 0);
    }
    uint32_t n = 0;
    const char *p = v;
    for (;;) {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        size_t len = strspn(p, "0123456789.");
        if (len == 0 || len > 20 || n >= DPM_CAMPAIGN_MAX_THRESHOLDS) {
            return -1;
        }
        char num[24];
        memcpy(num, p, len);
        num[len] = '\0';
        char *end = NULL;
        double x = strtod(num, &end);
        if (*end != '\0' || !(x >= 0.0 && x <= 1.0)) {
            return -1;
        }
        uint32_t q = (uint32_t)llround(x * 2147483648.0);
        if (n > 0 && q <= c->thresholds[n - 1]) {
            return -1;
        }
        c->thresholds[n++] = q;
        p += len;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        if (*p++ != ',') {
            return -1;
        }
    }
    c->nthresholds = n;
    return 0;
}

static int parse_choice(const char *v, const char *const *names, uint32_t n, uint32_t *out)
{
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

int coll_auc_key(dpm_campaign_t *c, unsigned *seen, const char *key, const char *v,
                 const char **expect)
{
    static const char *const CALIB[] = {"published", "tight"};
    static const char *const KERNEL[] = {"auc", "auc_private_label", "kendall"};
    int k = 0;
    while (k < K_COUNT && strcmp(key, KEYS[k]) != 0) {
        k++;
    }
    if (k == K_COUNT) {
        return 1;
    }
    if (*seen & (1u << k)) {
        *expect = NULL;
        return -1;
    }
    int bad = 0;
    switch (k) {
    case K_THRESHOLDS:
        bad = parse_thresholds(v, c);
        *expect = "N (2 .. DPM_DPAUC_MAX_THRESHOLDS) or increasing thresholds in [0, 1]";
        break;
    case K_CALIBRATION:
        bad = parse_choice(v, CALIB, 2, &c->calibration);
        *expect = "published or tight";
        break;
    case K_K:
        bad = parse_uint(v, 2, DPM_MAX_GRR_K, &c->ustat_k);
        *expect = "an integer 2 .. DPM_MAX_GRR_K";
        break;
    case K_KERNEL:
        bad = parse_choice(v, KERNEL, 3, &c->ustat_kernel);
        *expect = "auc, auc_private_label or kendall";
        break;
    case K_DEPTH:
        bad = parse_uint(v, 1, COLL_TREE_MAX_DEPTH, &c->tree_depth);
        *expect = "an integer 1 .. 10 (the collector's largest tree)";
        break;
    default:
        bad = parse_uint(v, 0, COLL_TREE_MAX_DEPTH, &c->tree_grr_levels);
        *expect = "an integer 0 .. depth";
        break;
    }
    if (bad) {
        return -1;
    }
    *seen |= 1u << k;
    return 0;
}

int coll_auc_finish(const dpm_campaign_t *c, unsigned seen, int have_groups, int have_metrics,
                    const char **why)
{
    for (int k = 0; k < K_COUNT; k++) {
        if ((seen & (1u << k)) && KEY_MECH[k] != c->mechanism) {
            *why = k <= K_CALIBRATION ? "thresholds / calibration are for dpauc"
                   : k <= K_KERNEL    ? "k / kernel are for ustat_bins"
                                      : "depth / grr_levels are for ustat_tree";
            return -1;
        }
    }
    if (!coll_auc_mech(c->mechanism)) {
        return 0;
    }
    if (have_groups || have_metrics) {
        *why = "dpauc, ustat_bins and ustat_tree take no groups or metrics";
        return -1;
    }
    if (c->mechanism == DPM_MECH_ID_DPAUC && !(seen & (1u << K_THRESHOLDS))) {
        *why = "dpauc needs thresholds";
        return -1;
    }
    if (c->mechanism == DPM_MECH_ID_USTAT_BINS && !(seen & (1u << K_K))) {
        *why = "ustat_bins needs k";
        return -1;
    }
    if (c->mechanism == DPM_MECH_ID_USTAT_TREE && !(seen & (1u << K_DEPTH))) {
        *why = "ustat_tree needs depth";
        return -1;
    }
    return 0;
}
