/* SPDX-License-Identifier: Apache-2.0 */
/* An interval's claim as JSON (see estimate_ci.h). */
#include "mech/estimate_ci.h"

#include "estimate/ci_flags.h"

void coll_ci_json(jw_t *sb, const char *key, unsigned flags)
{
    jw_raw(sb, ", \"%s_coverage\": \"%s\", \"%s_flags\": [", key, dpm_ci_coverage(flags), key);
    for (unsigned i = 0, n = 0; i < DPM_CI_FLAG_COUNT; i++) {
        if (flags & (1u << i)) {
            jw_raw(sb, "%s\"%s\"", n++ ? ", " : "", dpm_ci_flag_name(i));
        }
    }
    jw_raw(sb, "], \"%s_reason\": ", key);
    if (flags != 0) {
        jw_str(sb, dpm_ci_reason(flags));
    } else {
        jw_raw(sb, "null");
    }
}
