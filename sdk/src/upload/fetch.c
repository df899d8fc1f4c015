/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign intake from the collector: GET /v1/campaigns/<id>, decode, check that the answer is
 * the campaign asked for, validate. */
#include "dpm_internal.h"

#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "upload/http_internal.h"

/* GET the campaign, decode it into *out and check it is the one asked for. */
static dpm_status_t get_checked(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                                uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                                size_t *len, dpm_campaign_t *out, const char **reason)
{
    const uint32_t asked = id;
    if (t == NULL || c == NULL || work == NULL || len == NULL || timeout_ms == 0 ||
        work_cap < DPM_CAMPAIGN_MAX_BYTES + 512u) {
        return DPM_ERR_PARAM;
    }
    char path[32] = "/v1/campaigns/";
    size_t n = strlen(path);
    char digits[10];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + id % 10u);
        id /= 10u;
    } while (id != 0);
    while (nd > 0) {
        path[n++] = digits[--nd];
    }
    path[n] = '\0';

    uint64_t deadline = c->monotonic_ms(c->ctx) + timeout_ms;
    size_t head_len = 0;
    dpm_status_t st = dpm_http_write_get(work, work_cap, host, path, &head_len);
    if (st == DPM_OK) {
        st = dpm_http_send_all(t, c, deadline, work, head_len);
    }
    dpm_http_response_t resp;
    if (st == DPM_OK) {
        st = dpm_http_response_init(&resp, work, work_cap);
    }
    if (st == DPM_OK) {
        st = dpm_http_read_response(t, c, deadline, &resp);
    }
    if (st != DPM_OK) {
        return st;
    }
    if (resp.status != 200) {
        const char *why = "collector refused the request";
        st = DPM_ERR_PROTOCOL;
        if (resp.status == 404) {
            why = "unknown campaign";
        } else if (resp.status == 401 || resp.status == 403) {
            why = "the collector refused the device's credential (HTTP 401/403)";
            st = DPM_ERR_AUTH;
        } else if (dpm_http_later_status(resp.status)) {
            why = "the collector cannot answer now (HTTP 408, 429 or 5xx): retry later (a kept "
                  "copy of the campaign may be used meanwhile)";
            st = DPM_ERR_TRANSPORT;
        }
        if (reason != NULL) {
            *reason = why;
        }
        return st;
    }
    /* The answer must be the campaign asked for: a collector that answers with another one
     * (a new id with its own budget) would otherwise make the device spend again. */
    st = dpm_campaign_decode(work, resp.body_len, out, reason);
    if (st == DPM_OK && out->id != asked) {
        if (reason != NULL) {
            *reason = "the collector answered with another campaign than the one requested";
        }
        st = DPM_ERR_PROTOCOL;
    }
    if (st == DPM_OK) {
        *len = resp.body_len;
    }
    return st;
}

dpm_status_t dpm_campaign_get(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                              uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                              size_t *len, const char **reason)
{
    dpm_campaign_t campaign;
    return get_checked(t, c, host, id, timeout_ms, work, work_cap, len, &campaign, reason);
}

dpm_status_t dpm_campaign_fetch(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                                uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                                dpm_mech_t *m, const char **reason)
{
    size_t len = 0;
    dpm_campaign_t campaign;
    dpm_status_t st = m == NULL ? DPM_ERR_PARAM
                                : get_checked(t, c, host, id, timeout_ms, work, work_cap, &len,
                                              &campaign, reason);
    return st == DPM_OK ? dpm_mech_init(m, &campaign, reason) : st;
}
