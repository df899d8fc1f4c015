/* SPDX-License-Identifier: Apache-2.0 */
/* The one list of mechanisms: wire id -> name (every id, built or not, so that errors can name
 * a mechanism this build left out) and wire id -> ops (the mechanisms of this build). A new
 * mechanism adds its id to dpm/mech.h, one line to each table here, and its own mech/<m>.c. */
#include "dpm_internal.h"

#include <string.h>

#include "dpm/mech.h"
#include "mech/mech_ops.h"

#define LAST_ID DPM_MECH_ID_TUPLE_ML

typedef struct {
    const char *name;   /* the campaign files' and the wire enum's name, lower case */
    const char *absent; /* the reason when this build leaves it out */
} mech_name_t;

#define ABSENT(m, sw) m ": mechanism not available in this build (" sw "=0)"

static const mech_name_t kNames[LAST_ID + 1] = {
    [DPM_MECH_ID_ROC_HIST] = {"roc_hist", ABSENT("roc_hist", "DPM_MECH_ROC_HIST")},
    [DPM_MECH_ID_DPAUC] = {"dpauc", ABSENT("dpauc", "DPM_MECH_DPAUC")},
    [DPM_MECH_ID_FEDAUC_RR] = {"fedauc_rr", ABSENT("fedauc_rr", "DPM_MECH_FEDAUC")},
    [DPM_MECH_ID_FEDAUC_LAP] = {"fedauc_lap", ABSENT("fedauc_lap", "DPM_MECH_FEDAUC")},
    [DPM_MECH_ID_USTAT_BINS] = {"ustat_bins", ABSENT("ustat_bins", "DPM_MECH_USTAT")},
    [DPM_MECH_ID_USTAT_TREE] = {"ustat_tree", ABSENT("ustat_tree", "DPM_MECH_USTAT")},
    [DPM_MECH_ID_TUPLE_MR] = {"tuple_mr", ABSENT("tuple_mr", "DPM_MECH_TUPLE")},
    [DPM_MECH_ID_TUPLE_ML] = {"tuple_ml", ABSENT("tuple_ml", "DPM_MECH_TUPLE")},
};

static const dpm_mech_ops_t *const kOps[LAST_ID + 1] = {
#if DPM_MECH_ROC_HIST
    [DPM_MECH_ID_ROC_HIST] = &dpm_mech_ops_roc_hist,
#endif
#if DPM_MECH_DPAUC
    [DPM_MECH_ID_DPAUC] = &dpm_mech_ops_dpauc,
#endif
#if DPM_MECH_FEDAUC
    [DPM_MECH_ID_FEDAUC_RR] = &dpm_mech_ops_fedauc,
    [DPM_MECH_ID_FEDAUC_LAP] = &dpm_mech_ops_fedauc,
#endif
#if DPM_MECH_USTAT
    [DPM_MECH_ID_USTAT_BINS] = &dpm_mech_ops_ustat,
    [DPM_MECH_ID_USTAT_TREE] = &dpm_mech_ops_ustat,
#endif
#if DPM_MECH_TUPLE
    [DPM_MECH_ID_TUPLE_MR] = &dpm_mech_ops_tuple,
    [DPM_MECH_ID_TUPLE_ML] = &dpm_mech_ops_tuple,
#endif
};

const dpm_mech_ops_t *dpm_mech_ops_find(dpm_mech_id_t id)
{
    return (uint32_t)id <= LAST_ID ? kOps[id] : NULL;
}

const char *dpm_mech_absent_reason(dpm_mech_id_t id)
{
    return (uint32_t)id <= LAST_ID ? kNames[id].absent : NULL;
}

const char *dpm_mech_name(dpm_mech_id_t id)
{
    return (uint32_t)id <= LAST_ID && kNames[id].name != NULL ? kNames[id].name : NULL;
}

dpm_mech_id_t dpm_mech_from_name(const char *name)
{
    for (uint32_t id = 1; name != NULL && id <= LAST_ID; id++) {
        if (kNames[id].name != NULL && strcmp(kNames[id].name, name) == 0) {
            return (dpm_mech_id_t)id;
        }
    }
    return DPM_MECH_NONE;
}
