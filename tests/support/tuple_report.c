/* SPDX-License-Identifier: Apache-2.0 */
#include "tuple_report.h"

#include <string.h>

size_t tuple_report_make(dpm_rand_t *r, uint32_t campaign, uint32_t period, dpm_eps_t eps,
                         uint8_t *buf, uint8_t *id)
{
    dpm_report_t rep;
    memset(&rep, 0, sizeof(rep));
    for (int i = 0; i < DPM_REPORT_ID_BYTES; i++) {
        uint64_t b = 0;
        if (dpm_rand_bits(r, 8, &b) != DPM_OK) {
            return 0;
        }
        rep.report_id[i] = (uint8_t)b;
    }
    rep.campaign_id = campaign;
    rep.period = period;
    rep.mechanism = DPM_MECH_ID_TUPLE_MR;
    rep.eps = eps;
    rep.params_hash = 0x12345678u;
    rep.body.tuple.group = 1;
    rep.body.tuple.nmetrics = 1;
    rep.body.tuple.value[0] = -1;
    size_t len = 0;
    if (dpm_report_encode(&rep, buf, DPM_REPORT_MAX_BYTES, &len) != DPM_OK) {
        return 0;
    }
    memcpy(id, rep.report_id, DPM_REPORT_ID_BYTES);
    return len;
}
