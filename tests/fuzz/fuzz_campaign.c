/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a campaign as the device receives it (dpm_campaign_decode, then
 * dpm_mech_init, which decides whether it may run). The collector, or anyone who can serve
 * GET /v1/campaigns/<id>, controls these bytes. Checked beyond the sanitizers:
 *   - every refusal names a reason and leaves the caller's struct untouched;
 *   - a decoded campaign encodes and decodes back to itself;
 *   - a campaign that may run produces a report that decodes and passes its own mechanism's
 *     check, and the same report with one header field changed is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "fuzz_fixtures.h"
#include "test_rng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpm_campaign_t c, c2, sentinel;
    memset(&sentinel, 0xA5, sizeof(sentinel));
    c = sentinel;
    const char *reason = NULL;
    dpm_status_t st = dpm_campaign_decode(data, size, &c, &reason);
    if (st != DPM_OK) {
        if (st != DPM_ERR_PROTOCOL || reason == NULL || memcmp(&c, &sentinel, sizeof(c)) != 0) {
            abort();
        }
        return 0;
    }
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    memset(&c2, 0, sizeof(c2));
    if (dpm_campaign_encode(&c, buf, sizeof(buf), &len) != DPM_OK ||
        dpm_campaign_decode(buf, len, &c2, NULL) != DPM_OK || memcmp(&c, &c2, sizeof(c)) != 0) {
        abort();
    }

    static dpm_mech_t m, m_sentinel; /* large: not on the stack */
    memset(&m_sentinel, 0x5A, sizeof(m_sentinel));
    m = m_sentinel;
    reason = NULL;
    st = dpm_mech_init(&m, &c, &reason);
    if (st != DPM_OK) {
        if (reason == NULL || memcmp(&m, &m_sentinel, sizeof(m)) != 0) {
            abort();
        }
        return 0;
    }
    if (m.eps_implemented == 0 || m.eps_implemented > c.eps.q16 ||
        m.eps_implemented > c.budget.q16) {
        abort();
    }
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t r;
    dpm_report_t rep, back;
    if (test_rand_init(&r, &tr, &rng, size) != DPM_OK) {
        abort();
    }
    st = fuzz_make_report(&m, &r, 3, &rep);
    if (st == DPM_ERR_RANGE || st == DPM_ERR_UNSUPPORTED) {
        return 0; /* noise left the value range (documented, vanishingly rare), or FedAUC */
    }
    uint8_t wire[DPM_REPORT_MAX_BYTES];
    if (st != DPM_OK || dpm_report_encode(&rep, wire, sizeof(wire), &len) != DPM_OK ||
        dpm_report_decode(wire, len, &back) != DPM_OK ||
        dpm_mech_check_report(&m, &back, &reason) != DPM_OK) {
        abort();
    }
    back.eps++;
    if (dpm_mech_check_report(&m, &back, &reason) != DPM_ERR_PROTOCOL) {
        abort();
    }
    return 0;
}
