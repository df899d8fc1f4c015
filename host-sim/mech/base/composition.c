/* SPDX-License-Identifier: Apache-2.0 */
#include "mech/base/composition.h"

#include <string.h>

#include "dpm/device.h"

host_comp_item_t host_comp_item_of_mech(const dpm_mech_t *m, uint32_t factor)
{
    host_comp_item_t it = {m->eps_implemented, m->campaign.budget.q16, m->campaign.period_seconds,
                           factor, 0};
    return it;
}

int host_composition(const host_comp_item_t *item, size_t n, uint32_t window, host_comp_row_t *rows,
                     host_comp_total_t *total)
{
    if ((n > 0 && (item == NULL || rows == NULL)) || total == NULL) {
        return -1;
    }
    uint32_t w = window != 0 ? window : DPM_DEVICE_PERIOD_SECONDS;
    for (size_t i = 0; i < n; i++) {
        if (item[i].eps_q16 == 0 || item[i].period_seconds == 0 ||
            item[i].budget_q16 < item[i].eps_q16) {
            return -1;
        }
    }
    host_comp_total_t t;
    memset(&t, 0, sizeof(t));
    t.window_seconds = w;
    t.device_bounded = 1;
    for (size_t i = 0; i < n; i++) {
        const host_comp_item_t *it = &item[i];
        host_comp_row_t r;
        memset(&r, 0, sizeof(r));
        r.reports = (uint32_t)(it->budget_q16 / it->eps_q16);
        r.per_period_q16 = (uint64_t)r.reports * it->eps_q16;
        r.period_seconds = it->period_seconds;
        r.periods_aligned =
            (uint32_t)(((uint64_t)w + it->period_seconds - 1u) / it->period_seconds);
        r.periods_any = r.periods_aligned + 1u;
        r.factor = it->factor;
        const host_comp_sum_t s = {r.per_period_q16 * r.periods_aligned,
                                   r.per_period_q16 * r.periods_any,
                                   (uint64_t)r.factor * r.per_period_q16 * r.periods_any};
        t.aligned_q16 += s.aligned_q16;
        t.any_q16 += s.any_q16;
        t.device_any_q16 += s.device_any_q16;
        if (it->central) {
            t.central.aligned_q16 += s.aligned_q16;
            t.central.any_q16 += s.any_q16;
            t.central.device_any_q16 += s.device_any_q16;
        }
        t.device_bounded &= r.factor != 0;
        rows[i] = r;
    }
    *total = t;
    return 0;
}
