/* SPDX-License-Identifier: Apache-2.0 */
/* The campaign keys of each mechanism (campaign_keys.h). */
#include "mech/base/campaign_keys.h"

#include <stdio.h>
#include <string.h>

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_KEYS ((const char *const[]){NULL})
#define FEDAUC_COLLECTOR_KEYS                                                                      \
    KEYS("upload_seconds", "upload_count", "min_uploaders", "max_examples")

const host_campaign_mech_t host_campaign_mechs[] = {
    {"tuple_mr", DPM_MECH_ID_TUPLE_MR, 1, NO_KEYS, NO_KEYS},
    {"tuple_ml", DPM_MECH_ID_TUPLE_ML, 1, NO_KEYS, NO_KEYS},
    {"roc_hist", DPM_MECH_ID_ROC_HIST, 1, NO_KEYS, KEYS("max_examples")},
    {"roc_hist_groups", DPM_MECH_ID_ROC_HIST, 0, KEYS("group_eps"), KEYS("max_examples")},
    {"dpauc", DPM_MECH_ID_DPAUC, 1, KEYS("thresholds", "calibration"), KEYS("max_examples")},
    {"ustat_bins", DPM_MECH_ID_USTAT_BINS, 1, KEYS("k", "kernel"), NO_KEYS},
    {"ustat_tree", DPM_MECH_ID_USTAT_TREE, 1, KEYS("depth", "grr_levels"), NO_KEYS},
    {"fedauc_rr", DPM_MECH_ID_FEDAUC_RR, 1, KEYS("score_bits"), FEDAUC_COLLECTOR_KEYS},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, 1, KEYS("variant", "p_share", "score_bits"),
     FEDAUC_COLLECTOR_KEYS},
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

/* The keys of list not yet in out[0 .. *n), appended. */
static void add_new(const char *const *list, const char **out, int *n, int max)
{
    for (; *list != NULL; list++) {
        int seen = 0;
        for (int i = 0; i < *n; i++) {
            seen |= strcmp(out[i], *list) == 0;
        }
        if (!seen && *n < max) {
            out[(*n)++] = *list;
        }
    }
}

void host_campaign_all_keys(int collector, const char **out, int *n, int max)
{
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        add_new(host_campaign_mechs[i].keys, out, n, max);
    }
    for (size_t i = 0; collector && i < host_campaign_nmechs; i++) {
        add_new(host_campaign_mechs[i].collector_keys, out, n, max);
    }
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
