/* SPDX-License-Identifier: Apache-2.0 */
/* The uploader: posts the outbox's reports to the collector in batches (POST /v1/reports)
 * with retry, backoff and idempotent report ids, and fetches campaigns (GET
 * /v1/campaigns/<id>), over a connected port transport. dpm_device_flush is the device's
 * one-call form of dpm_upload_flush. Its state and configuration types are in
 * dpm/bits/upload.h (the device embeds them). */
#ifndef DPM_EXPERT_UPLOADER_H
#define DPM_EXPERT_UPLOADER_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/bits/upload.h"
#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GET /v1/campaigns/<id> from the collector over the connected transport t within timeout_ms:
 * on DPM_OK the campaign's bytes (a dpm.v1.Campaign that decodes and whose id is `id`, not yet
 * checked against the policy) are work[0 .. *len), for an app that keeps a copy so it can
 * report while the collector is unreachable (check them with dpm_device_accept_campaign).
 * work needs DPM_CAMPAIGN_MAX_BYTES + 512 bytes. A non-200 answer, with *reason:
 * DPM_ERR_TRANSPORT for 408, 429 and 5xx (try later: the kept copy serves meanwhile),
 * DPM_ERR_AUTH for 401/403, DPM_ERR_PROTOCOL for the others (404: "unknown campaign");
 * DPM_ERR_PROTOCOL also for bytes that are not a campaign, or a campaign with ANOTHER id than
 * the one requested (a collector answering with other campaigns could otherwise make the
 * device spend again under new ids; the device cap, dpm_policy_cap_t, bounds that too).
 * Transport errors as
 * dpm_http_read_response, DPM_ERR_PARAM for NULL or a small work. */
dpm_status_t dpm_campaign_get(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                              uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                              size_t *len, const char **reason);

/* Fetch campaign `id` from the collector (GET /v1/campaigns/<id>) over the connected
 * transport t within timeout_ms, then decode and validate it into a ready mechanism *m
 * (dpm_campaign_decode + dpm_mech_init). work (>= DPM_CAMPAIGN_MAX_BYTES + 512 bytes) holds the
 * request and the response body. The statuses of dpm_campaign_get for a non-200 answer,
 * DPM_ERR_PROTOCOL for bytes that are not a campaign or a campaign with another id than `id`,
 * the dpm_mech_init errors for a campaign that must not run (with *reason), transport errors
 * as dpm_http_read_response. *m is untouched on any error. */
dpm_status_t dpm_campaign_fetch(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                                uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                                dpm_mech_t *m, const char **reason);

/* Check *cfg and reset the retry schedule. DPM_ERR_PARAM for NULL or any value outside the
 * ranges in dpm_upload_config_t (*up untouched). */
dpm_status_t dpm_upload_init(dpm_upload_t *up, const dpm_upload_config_t *cfg);

/* Post the outbox's pending reports in batches over the connected transport t, until the
 * outbox is empty or an attempt fails. Each batch is one POST (with the config's bearer
 * token, if any) whose body is a dpm.v1.Batch made of the stored bytes (field 1, tag 0x0A,
 * varint length, report), so retries resend byte-identical reports, and, when the outbox
 * counts lost reports (dpm_outbox_stats), Batch.lost_reports (field 2) with that count. The
 * body of every 2xx and rejecting 4xx answer is decoded as a dpm.v1.BatchResponse (nanopb,
 * within dpm.options' bounds). Per response, and what it returns (dpm_upload_advice says it
 * in words):
 *   2xx       if accepted + duplicates equals the number of reports sent and nothing is
 *             rejected, every report of the batch is removed and its loss count
 *             acknowledged (dpm_outbox_ack_lost). Any other 2xx, an empty or malformed body
 *             included (a misconfigured proxy), removes nothing and is a failure
 *             (DPM_ERR_PROTOCOL);
 *   400, 404  exactly the reports whose ids the BatchResponse rejects are removed (they can
 *   and other never be accepted) and returned in res->rejects with the collector's reason;
 *   4xx not   the others stay pending and are sent again (the collector stores nothing of a
 *   below     batch with rejects, losses included). Without any matching reject, or with a
 *             body that is not a BatchResponse (a wrong path, a 411/415/431 from a server that
 *             is not a collector of this version), it is a failure (DPM_ERR_PROTOCOL);
 *   401, 403  the collector refused the device's credential: DPM_ERR_AUTH, nothing removed;
 *   413       the batch is larger than the collector takes: nothing removed; the uploader
 *             lowers its byte budget (up->cfg.max_bytes, until dpm_upload_init) to half the
 *             refused body and goes on with smaller batches (res->more, res->reconnect if
 *             the collector closed).
 *             A 413 to a batch of ONE report is DPM_ERR_PROTOCOL: the collector's body limit
 *             is below one report (raise it: dpm-collector --max-body);
 *   408, 429, the collector asks to retry later: DPM_ERR_TRANSPORT, nothing removed; the
 *   5xx       backoff below lasts at least its Retry-After, up to backoff_cap_ms;
 *   other     (1xx/3xx, no or a malformed response, transport error, deadline) a failure:
 *             nothing is removed (DPM_ERR_PROTOCOL, DPM_ERR_TRANSPORT, DPM_ERR_TIMEOUT).
 * No answer ever removes a report it does not account for or name: nothing queued is lost.
 * Every reject is returned: when a batch had rejects and the next one might not fit in the
 * rest of res->rejects, flush stops with res->more set.
 * The loss count rides only on batches with reports: only an answer that accounts for
 * reports proves that a collector read the batch, so an outbox with losses but nothing
 * pending sends nothing (the app still sees the losses in dpm_outbox_stats).
 * A failure schedules the next attempt after an exponential backoff: nominal delay
 * min(cap, base * 2^(failures - 1)), times a uniform factor in [0.5, 1.5] drawn from rand
 * (no jitter if rand is NULL or fails), on c's monotonic clock; see
 * dpm_upload_next_attempt_ms. Any progress (a 2xx, or a 4xx that removed reports) resets the
 * schedule. Called before the scheduled time, flush does nothing and sets res->deferred.
 * work (work_cap >= DPM_UPLOAD_MIN_WORK bytes) holds one request and then its response
 * body; a batch is cut to fit it, and a response body larger than it is a failure.
 * Returns DPM_OK (no failure; res->pending may still be > 0: see res->more and
 * res->reconnect), DPM_ERR_AUTH, DPM_ERR_TRANSPORT (send/recv failed or closed, or the
 * collector answered 5xx, 408 or 429: try later), DPM_ERR_TIMEOUT, DPM_ERR_PROTOCOL (a
 * malformed response, an unexpected status, or an answer that does not account for the
 * batch), DPM_ERR_STORAGE / DPM_ERR_CORRUPT from the outbox, DPM_ERR_PARAM for NULL pointers,
 * an unopened up/ob, a token that is no longer valid or a small work buffer (nothing sent).
 * *res is always filled unless DPM_ERR_PARAM. After a failure without a complete response
 * the connection state is unknown: res->reconnect is set. */
dpm_status_t dpm_upload_flush(dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                              const dpm_clock_t *c, dpm_rand_t *rand, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res);

/* What the app should do after a flush that returned st with *res (res may be NULL: then
 * without the HTTP status): one English sentence (never NULL, static), e.g. for DPM_ERR_AUTH
 * with HTTP 401 "the collector does not know this device's credential (HTTP 401): give the
 * device a valid bearer token or client certificate; the reports stay queued". For statuses
 * a flush does not return, dpm_strerror(st). */
const char *dpm_upload_advice(dpm_status_t st, const dpm_upload_result_t *res);

/* Monotonic time (ms) from which the next flush will try again: 0 when no backoff is in
 * force (call whenever there is something to send). 0 for NULL. */
uint64_t dpm_upload_next_attempt_ms(const dpm_upload_t *up);

/* The retry delay after `failures` (>= 1) consecutive failures: nominal d = min(cap, base *
 * 2^(failures - 1)); *delay_ms = d / 2 + a uniform draw from [0, d] taken from rand, i.e.
 * within [d/2, 3d/2] (±50% jitter; it may exceed the cap by half). With rand NULL, or if it
 * fails, *delay_ms = d. DPM_ERR_PARAM for NULL cfg/delay_ms, failures == 0 or an invalid
 * cfg. */
dpm_status_t dpm_upload_backoff_ms(const dpm_upload_config_t *cfg, uint32_t failures,
                                   dpm_rand_t *rand, uint32_t *delay_ms);

#ifdef __cplusplus
}
#endif

#endif /* DPM_EXPERT_UPLOADER_H */
