/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign and group names (see campaign_names.h). */
#include "mech/base/campaign_names.h"

#include <string.h>

/* The characters of a name: enough for "TPR by age group (v3)", nothing that needs escaping in
 * JSON, HTML or a CSV cell, so a name reads the same wherever it is shown. */
static int name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr(" _-.:/()+", ch) != NULL);
}

/* s[0, n) as a name into out (cap bytes): 0, or -1 if empty, too long or a bad character. */
static int copy_name(const char *s, size_t n, char *out, size_t cap)
{
    while (n > 0 && *s == ' ') {
        s++, n--;
    }
    while (n > 0 && s[n - 1] == ' ') {
        n--;
    }
    if (n == 0 || n >= cap) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!name_char(s[i])) {
            return -1;
        }
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

int coll_names_key(const char *key, const char *v, coll_campaign_names_t *n, int *bad, int *twice,
                   const char **expect)
{
    if (strcmp(key, "name") == 0) {
        *twice = n->have_name;
        n->have_name = 1;
        *bad = copy_name(v, strlen(v), n->name, sizeof(n->name)) != 0;
        *expect = "1 to 63 letters, digits, spaces or _-.:/()+";
        return 1;
    }
    if (strcmp(key, "group_names") != 0) {
        return 0;
    }
    *twice = n->have_group_names;
    n->have_group_names = 1;
    *expect = "a comma-separated list of names (each 1 to 31 letters, digits, spaces or "
              "_-.:/()+), one per group";
    *bad = 0;
    n->ngroup_names = 0;
    for (const char *p = v;;) {
        const char *e = strchr(p, ',');
        size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
        if (n->ngroup_names == DPM_MAX_GROUPS ||
            copy_name(p, len, n->group_names[n->ngroup_names], COLL_GROUP_NAME_MAX) != 0) {
            *bad = 1;
            n->ngroup_names = 0;
            return 1;
        }
        n->ngroup_names++;
        if (e == NULL) {
            return 1;
        }
        p = e + 1;
    }
}

const char *coll_names_finish(const coll_campaign_names_t *n, uint32_t groups)
{
    if (!n->have_group_names) {
        return NULL;
    }
    if (groups < 2) {
        return "group_names is for campaigns with groups";
    }
    if (n->ngroup_names != groups) {
        return "group_names must name every group, one name each (as many as groups)";
    }
    for (uint32_t i = 0; i < n->ngroup_names; i++) {
        for (uint32_t j = i + 1; j < n->ngroup_names; j++) {
            if (strcmp(n->group_names[i], n->group_names[j]) == 0) {
                return "group_names has the same name twice";
            }
        }
    }
    return NULL;
}

void coll_names_json(jw_t *w, const coll_campaign_names_t *n)
{
    if (n->name[0] != '\0') {
        jw_raw(w, ", \"name\": ");
        jw_str(w, n->name);
    }
    if (n->ngroup_names == 0) {
        return;
    }
    jw_raw(w, ", \"group_names\": ");
    for (uint32_t i = 0; i < n->ngroup_names; i++) {
        jw_raw(w, "%s", i ? ", " : "[");
        jw_str(w, n->group_names[i]);
    }
    jw_raw(w, "]");
}

static const struct {
    const char *name;
    dpm_metric_t m;
} kMetrics[] = {{"tpr", DPM_METRIC_TPR},
                {"fpr", DPM_METRIC_FPR},
                {"accuracy", DPM_METRIC_ACCURACY},
                {"precision", DPM_METRIC_PRECISION}};

const char *host_metric_name(dpm_metric_t m)
{
    for (size_t i = 0; i < sizeof(kMetrics) / sizeof(kMetrics[0]); i++) {
        if (kMetrics[i].m == m) {
            return kMetrics[i].name;
        }
    }
    return "unknown";
}

dpm_metric_t host_metric_from_name(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof(kMetrics) / sizeof(kMetrics[0]); i++) {
        if (strlen(kMetrics[i].name) == n && memcmp(kMetrics[i].name, s, n) == 0) {
            return kMetrics[i].m;
        }
    }
    return (dpm_metric_t)0;
}
