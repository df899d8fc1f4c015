/* SPDX-License-Identifier: Apache-2.0 */
#include "mech/base/composition.h"

#include <string.h>

#include "dpm/device.h"

int host_composition(const dpm_mech_t *const *m, const uint32_t *factor, size_t n, uint32_t window,
                     host_comp_row_t *rows, host_comp_total_t *total)
{
    if ((n > 0 && (m == NULL || factor == NULL || rows == NULL)) || total == NULL) {
        return -1;
    }
    uint32_t w = window != 0 ? window : DPM_DEVICE_PERIOD_SECONDS;
    for (size_t i = 0; i < n; i++) {
        if (m[i] == NULL || m[i]->eps_implemented == 0 || m[i]->campaign.period_seconds == 0) {
            return -1;
        }
    }
    host_comp_total_t t = {w, 0, 0, 0, 1};
    for (size_t i = 0; i < n; i++) {
        const dpm_campaign_t *c = &m[i]->campaign;
        host_comp_row_t r;
        memset(&r, 0, sizeof(r));
        r.id = c->id;
        r.reports = c->budget.q16 / m[i]->eps_implemented;
        r.per_period_q16 = (uint64_t)r.reports * m[i]->eps_implemented;
        r.period_seconds = c->period_seconds;
        r.periods_aligned = (uint32_t)(((uint64_t)w + c->period_seconds - 1u) / c->period_seconds);
        r.periods_any = r.periods_aligned + 1u;
        r.factor = factor[i];
        t.aligned_q16 += r.per_period_q16 * r.periods_aligned;
        t.any_q16 += r.per_period_q16 * r.periods_any;
        t.device_any_q16 += (uint64_t)r.factor * r.per_period_q16 * r.periods_any;
        t.device_bounded &= r.factor != 0;
        rows[i] = r;
    }
    *total = t;
    return 0;
}
