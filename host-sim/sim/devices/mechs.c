/* SPDX-License-Identifier: Apache-2.0 */
/* The registry (see mechs.h). */
#include "sim/devices/mechs.h"

#include <string.h>

/* One line per mechanism: X(name) registers `const sim_mech_t sim_mech_<name>`, defined by its
 * module sim/mech_<...>.c. */
#define SIM_MECHS(X)                                                                               \
    X(tuple_mr)                                                                                    \
    X(tuple_ml)                                                                                    \
    X(roc_hist)                                                                                    \
    X(roc_hist_groups)                                                                             \
    X(dpauc)                                                                                       \
    X(ustat_bins)                                                                                  \
    X(ustat_tree)                                                                                  \
    X(fedauc_rr)                                                                                   \
    X(fedauc_lap)

#define DECLARE(name) extern const sim_mech_t sim_mech_##name;
SIM_MECHS(DECLARE)
#undef DECLARE

#define ENTRY(name) &sim_mech_##name,
static const sim_mech_t *const kMechs[] = {SIM_MECHS(ENTRY)};
#undef ENTRY

#define NMECHS (sizeof(kMechs) / sizeof(kMechs[0]))

const sim_mech_t *sim_mech_find(const char *name)
{
    for (size_t i = 0; i < NMECHS; i++) {
        if (strcmp(kMechs[i]->name, name) == 0) {
            return kMechs[i];
        }
    }
    return NULL;
}

const sim_mech_t *sim_mech_by_id(dpm_mech_id_t id)
{
    for (size_t i = 0; i < NMECHS; i++) {
        if (kMechs[i]->id == id) {
            return kMechs[i];
        }
    }
    return NULL;
}

size_t sim_mech_count(void)
{
    return NMECHS;
}

const sim_mech_t *sim_mech_at(size_t i)
{
    return i < NMECHS ? kMechs[i] : NULL;
}
