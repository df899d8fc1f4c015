/* SPDX-License-Identifier: Apache-2.0 */
/* Batch decoding, validation and the BatchResponse (see batch.h). The body is untrusted:
 * every length is checked against what remains before it is used. */
#include "collector/ingest/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "mech/host_mech.h"

/* The report_id of a report that did not decode, if its field 1 is readable. */
static void salvage_id(const uint8_t *buf, size_t len, coll_reject_t *rj)
{
    size_t pos = 0;
    dpm_wire_field_t f;
    while (pos < len && dpm_wire_next_field(buf, len, &pos, &f, NULL) == DPM_OK) {
        if (f.field == 1 && f.type == DPM_WIRE_LEN && f.len <= DPM_REPORT_ID_BYTES) {
            memcpy(rj->id, f.bytes, f.len);
            rj->id_len = (uint8_t)f.len;
            return;
        }
    }
}

void coll_batch_count(coll_batch_t *b, uint32_t campaign_id, const char *reason, uint64_t n)
{
    for (size_t i = 0; i < b->ncounts; i++) {
        if (b->counts[i].campaign_id == campaign_id && strcmp(b->counts[i].reason, reason) == 0) {
            b->counts[i].count += n;
            return;
        }
    }
    if (b->ncounts == COLL_BATCH_MAX_COUNTS) {
        b->counts[COLL_BATCH_MAX_COUNTS - 1].campaign_id = 0;
        b->counts[COLL_BATCH_MAX_COUNTS - 1].reason = "other";
        b->counts[COLL_BATCH_MAX_COUNTS - 1].count += n;
        return;
    }
    b->counts[b->ncounts].campaign_id = campaign_id;
    b->counts[b->ncounts].reason = reason;
    b->counts[b->ncounts].count = n;
    b->ncounts++;
}

/* Record a rejected report; -1 if memory ran out. */
static int add_reject(coll_batch_t *b, const uint8_t *id, size_t id_len, uint32_t campaign_id,
                      const char *reason)
{
    b->rejects_total++;
    coll_batch_count(b, campaign_id, reason, 1);
    if (b->nrejects >= COLL_REJECTS_LISTED) {
        return 0;
    }
    if (HOST_GROW(b->rejects, b->nrejects, b->rejects_cap, 16) != 0) {
        return -1;
    }
    coll_reject_t *rj = &b->rejects[b->nrejects++];
    memset(rj, 0, sizeof(*rj));
    if (id != NULL) {
        memcpy(rj->id, id, id_len);
        rj->id_len = (uint8_t)id_len;
    }
    rj->reason = reason;
    return 0;
}

static int add_report(coll_batch_t *b, const dpm_report_t *rep, const uint8_t *raw, size_t len,
                      int ci, const coll_campaign_t *c)
{
    /* grows only if the first pass undercounted: never */
    if (HOST_GROW(b->reports, b->nreports, b->reports_cap, 16) != 0) {
        return -1;
    }
    coll_report_t *cr = &b->reports[b->nreports++];
    memset(cr, 0, sizeof(*cr));
    cr->raw = raw;
    cr->raw_len = (uint32_t)len;
    cr->campaign_index = ci;
    memcpy(cr->report_id, rep->report_id, DPM_REPORT_ID_BYTES);
    cr->campaign_id = rep->campaign_id;
    cr->period = rep->period;
    cr->mechanism = (uint8_t)rep->mechanism;
    const host_mech_t *hm = host_mech_of(&c->mech.campaign);
    cr->group = hm->stored_group != NULL ? hm->stored_group(c, rep) : 0; /* how it is summed */
    if (hm->flags & HOST_MECH_TUPLE_VALUES) {
        cr->nvalues = (uint8_t)rep->body.tuple.nmetrics;
        memcpy(cr->value, rep->body.tuple.value, cr->nvalues * sizeof(cr->value[0]));
    }
    return 0;
}

int coll_batch_reject_report(coll_batch_t *b, size_t i, const char *reason)
{
    const coll_report_t *r = &b->reports[i];
    return add_reject(b, r->report_id, DPM_REPORT_ID_BYTES, r->campaign_id, reason);
}

static int id_is_zero(const uint8_t *id)
{
    uint8_t acc = 0;
    for (int i = 0; i < DPM_REPORT_ID_BYTES; i++) {
        acc |= id[i];
    }
    return acc == 0;
}

static int check_one(const coll_campaigns_t *cs, const uint8_t *raw, size_t len, int64_t now,
                     coll_batch_t *b)
{
    dpm_report_t rep;
    if (dpm_report_decode(raw, len, &rep) != DPM_OK) {
        coll_reject_t tmp;
        memset(&tmp, 0, sizeof(tmp));
        salvage_id(raw, len, &tmp);
        return add_reject(b, tmp.id, tmp.id_len, 0, "malformed report");
    }
    int ci = coll_campaigns_index(cs, rep.campaign_id);
    if (ci < 0) {
        b->unknown_campaign = 1;
        return add_reject(b, rep.report_id, DPM_REPORT_ID_BYTES, 0, "unknown campaign");
    }
    if (id_is_zero(rep.report_id)) {
        return add_reject(b, rep.report_id, DPM_REPORT_ID_BYTES, rep.campaign_id,
                          "missing report id");
    }
    const char *why = "invalid report";
    const coll_campaign_t *c = &cs->c[ci];
    if (dpm_mech_check_report(&c->mech, &rep, &why) != DPM_OK ||
        coll_bounds_check(&c->bounds, &rep, &why) != 0) {
        return add_reject(b, rep.report_id, DPM_REPORT_ID_BYTES, rep.campaign_id, why);
    }
    int window = coll_campaign_period_check(c, rep.period, now);
    if (window != 0) {
        return add_reject(b, rep.report_id, DPM_REPORT_ID_BYTES, rep.campaign_id,
                          window < 0 ? "period not open yet" : "period closed");
    }
    return add_report(b, &rep, raw, len, ci, c);
}

/* The number of reports, for sizing the report array (stops at a framing error). */
static size_t count_reports(const uint8_t *body, size_t len)
{
    size_t pos = 0, n = 0;
    dpm_batch_item_t it;
    while (dpm_batch_next(body, len, &pos, &it, NULL) == DPM_OK && it.field != 0) {
        n += it.field == DPM_BATCH_FIELD_REPORT;
    }
    return n;
}

int coll_batch_decode(const coll_campaigns_t *cs, const uint8_t *body, size_t len, int64_t now,
                      coll_batch_t *b)
{
    size_t n = count_reports(body, len);
    if (n > 0) {
        b->reports = malloc(n * sizeof(*b->reports));
        if (b->reports == NULL) {
            return -1;
        }
        b->reports_cap = n;
    }
    size_t pos = 0;
    for (;;) {
        dpm_batch_item_t it;
        if (dpm_batch_next(body, len, &pos, &it, NULL) != DPM_OK) {
            b->malformed = 1;
            break;
        }
        if (it.field == 0) {
            break;
        }
        if (it.field == DPM_BATCH_FIELD_LOST) {
            b->lost_reports = it.lost > UINT32_MAX ? UINT32_MAX : (uint32_t)it.lost;
        }
        if (it.field == DPM_BATCH_FIELD_REPORT &&
            check_one(cs, it.report, it.report_len, now, b) != 0) {
            return -1;
        }
    }
    if (b->malformed) {
        /* Nothing of a broken batch is trusted: forget the per-report verdicts. */
        b->nreports = 0;
        b->nrejects = 0;
        b->rejects_total = 0;
        b->ncounts = 0;
        b->unknown_campaign = 0;
        b->lost_reports = 0;
        return add_reject(b, NULL, 0, 0, "malformed batch");
    }
    return 0;
}

void coll_batch_free(coll_batch_t *b)
{
    free(b->reports);
    free(b->rejects);
    memset(b, 0, sizeof(*b));
}

int coll_batch_status(const coll_batch_t *b)
{
    if (b->malformed) {
        return 400;
    }
    if (b->unknown_campaign) {
        return 404;
    }
    return b->rejects_total > 0 ? 400 : 200;
}

/* The response into buf (NULL: only its length, in *len). */
static dpm_status_t write_response(const coll_batch_t *b, const char *more, uint8_t *buf,
                                   size_t cap, size_t *len)
{
    *len = 0;
    dpm_status_t st = dpm_batch_response_put_counts(buf, cap, len, b->accepted, b->duplicates);
    for (size_t i = 0; i < b->nrejects && st == DPM_OK; i++) {
        const coll_reject_t *r = &b->rejects[i];
        st = dpm_batch_response_put_reject(buf, cap, len, r->id, r->id_len, r->reason,
                                           strlen(r->reason));
    }
    if (st == DPM_OK && more[0] != '\0') {
        st = dpm_batch_response_put_reject(buf, cap, len, NULL, 0, more, strlen(more));
    }
    return st;
}

int coll_batch_response(const coll_batch_t *b, uint8_t **out, size_t *len)
{
    char more[48] = ""; /* a Reject.reason fits 47 bytes (dpm.options) */
    size_t unlisted = b->rejects_total - b->nrejects;
    if (unlisted > 0) {
        snprintf(more, sizeof(more), "%zu more rejects not listed", unlisted);
    }
    size_t cap = 0;
    if (write_response(b, more, NULL, 0, &cap) != DPM_OK) {
        return -1;
    }
    uint8_t *p = malloc(cap > 0 ? cap : 1);
    if (p == NULL || write_response(b, more, p, cap, len) != DPM_OK) {
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}
