/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign-file keys of dpauc, ustat_bins and ustat_tree (format in campaigns_auc.h). */
#include "mech/base/campaigns_auc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int coll_auc_mech(dpm_mech_id_t m)
{
    return m == DPM_MECH_ID_DPAUC || m == DPM_MECH_ID_USTAT_BINS || m == DPM_MECH_ID_USTAT_TREE;
}

int coll_thresholds_is_list(const char *v)
{
    return strchr(v, ',') != NULL || strchr(v, '.') != NULL;
}

int coll_thresholds_list(const char *v, dpm_campaign_t *c)
{
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

int coll_auc_finish(const dpm_campaign_t *c, const host_campaign_mech_t *cm,
                    const char *const *given, int have_groups, int have_metrics, char *why,
                    size_t cap)
{
    /* a key of dpauc, ustat_bins or ustat_tree given to another mechanism: "thresholds /
     * calibration are for dpauc" */
    static const char *const kFamily[] = {"dpauc", "ustat_bins", "ustat_tree"};
    for (size_t f = 0; f < sizeof(kFamily) / sizeof(kFamily[0]); f++) {
        const host_campaign_mech_t *owner = host_campaign_mech_find(kFamily[f]);
        for (const char *const *k = owner->keys; *k != NULL; k++) {
            if (host_campaign_key_in(given, *k) &&
                (cm == NULL || !host_campaign_mech_takes(cm, *k, 1))) {
                snprintf(why, cap, "%s / %s are for %s", owner->keys[0], owner->keys[1],
                         owner->name);
                return -1;
            }
        }
    }
    const char *msg = NULL;
    if (!coll_auc_mech(c->mechanism)) {
        return 0;
    }
    if (have_groups || have_metrics) {
        msg = "dpauc, ustat_bins and ustat_tree take no groups or metrics";
    } else if (c->mechanism == DPM_MECH_ID_DPAUC && !host_campaign_key_in(given, "thresholds")) {
        msg = "dpauc needs thresholds";
    } else if (c->mechanism == DPM_MECH_ID_USTAT_BINS && !host_campaign_key_in(given, "k")) {
        msg = "ustat_bins needs k";
    } else if (c->mechanism == DPM_MECH_ID_USTAT_TREE && !host_campaign_key_in(given, "depth")) {
        msg = "ustat_tree needs depth";
    }
    if (msg != NULL) {
        snprintf(why, cap, "%s", msg);
        return -1;
    }
    return 0;
}
