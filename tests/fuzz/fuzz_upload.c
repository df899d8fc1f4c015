/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the upload path through its public API. dpm_upload_flush posts the
 * outbox's reports over a fake transport whose answers are the fuzz input, so the HTTP
 * response parser and the BatchResponse handling (which reports a 4xx rejects by id) see
 * arbitrary bytes.
 * Input: byte 0 picks the number of reports (1..8) and the batch size, byte 1 the most bytes
 * one recv() returns; the rest is the collector's answers, one per request, separated by
 * "@@@@" (after its answer a request's connection is closed: recv() < 0).
 * Report k (1-based) has the report id of 16 bytes equal to k, so seeds can name them.
 * Checked beyond the sanitizers, after every flush:
 *   - the status is one dpm_upload_flush documents, and res->pending is the outbox's count;
 *   - no report disappears unaccounted: pending before = pending after + delivered + rejected;
 *   - a report leaves the outbox only if the answers hold a 2xx status line or its id;
 *   - every rejected report is returned (res->rejects), once, with a printable reason;
 *   - every report still pending reads back with the bytes that were put. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/outbox.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "test_rng.h"

#define SEP "@@@@"
#define MAX_SEGS 16
#define NREP_MAX 8

typedef struct {
    const uint8_t *seg[MAX_SEGS];
    size_t seg_len[MAX_SEGS];
    size_t nsegs;
    size_t cur;      /* segment of the current request */
    size_t pos;      /* bytes of it already returned */
    size_t recv_max; /* bytes per recv() */
    int requests;
    int in_request; /* a request was sent and its answer not yet fully read */
} wire_t;

static int32_t wire_send(void *ctx, const uint8_t *buf, size_t len)
{
    wire_t *w = ctx;
    (void)buf;
    if (!w->in_request) {
        w->in_request = 1; /* the first bytes of a new request: the next answer starts */
        w->cur = (size_t)w->requests++;
        w->pos = 0;
    }
    return len > INT32_MAX ? INT32_MAX : (int32_t)len;
}

static int32_t wire_recv(void *ctx, uint8_t *buf, size_t len)
{
    wire_t *w = ctx;
    if (!w->in_request || w->cur >= w->nsegs || w->pos >= w->seg_len[w->cur]) {
        w->in_request = 0;
        return -1; /* answered (or nothing to say): the connection closes */
    }
    size_t n = w->seg_len[w->cur] - w->pos;
    n = n < len ? n : len;
    n = n < w->recv_max ? n : w->recv_max;
    memcpy(buf, w->seg[w->cur] + w->pos, n);
    w->pos += n;
    if (w->pos == w->seg_len[w->cur]) {
        w->in_request = 0; /* the next send() is a new request */
    }
    return (int32_t)n;
}

static void split(wire_t *w, const uint8_t *p, size_t n)
{
    w->nsegs = 0;
    size_t start = 0;
    for (size_t i = 0; w->nsegs + 1 < MAX_SEGS && i + 4 <= n; i++) {
        if (memcmp(p + i, SEP, 4) == 0) {
            w->seg[w->nsegs] = p + start;
            w->seg_len[w->nsegs++] = i - start;
            start = i + 4;
            i += 3;
        }
    }
    w->seg[w->nsegs] = p + start;
    w->seg_len[w->nsegs++] = n - start;
}

/* 1 if some answer the device could have read allows removing report id: a 2xx status line,
 * or the id's bytes (in a 4xx answer's BatchResponse). Anywhere in the answers: the bytes left
 * after one response in a segment are what the next request reads, as on a keep-alive
 * connection. */
static int removal_allowed(const uint8_t *p, size_t n, const uint8_t *id)
{
    for (size_t i = 0; i + 12 <= n; i++) {
        if (memcmp(p + i, "HTTP/1.", 7) == 0 && p[i + 8] == ' ' && p[i + 9] == '2') {
            return 1;
        }
    }
    for (size_t i = 0; i + DPM_REPORT_ID_BYTES <= n; i++) {
        if (memcmp(p + i, id, DPM_REPORT_ID_BYTES) == 0) {
            return 1;
        }
    }
    return 0;
}

static uint8_t mem[2 * DPM_OUTBOX_MIN_REGION];
static uint8_t reports[NREP_MAX][DPM_REPORT_MAX_BYTES];
static size_t report_len[NREP_MAX];

/* The pending reports: present[k] = 1 if report k + 1 is in the outbox (with its bytes). */
static void scan(dpm_outbox_t *ob, int *present)
{
    memset(present, 0, NREP_MAX * sizeof(int));
    uint32_t cursor = 0;
    for (;;) {
        dpm_outbox_entry_t e;
        int found = 0;
        if (dpm_outbox_next(ob, &cursor, &e, &found) != DPM_OK) {
            abort(); /* RAM storage without faults: iteration cannot fail */
        }
        if (!found) {
            return;
        }
        int k = e.report_id[0] - 1;
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        if (k < 0 || k >= NREP_MAX || present[k] || e.len != report_len[k] ||
            dpm_outbox_read(ob, &e, buf, sizeof(buf)) != DPM_OK ||
            memcmp(buf, reports[k], e.len) != 0) {
            abort();
        }
        present[k] = 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    uint32_t nrep = 1u + (data[0] & 7u);
    dpm_upload_config_t cfg = {"collector.example", "/v1/reports", 1u + ((data[0] >> 3) & 7u),
                               data[0] & 0x40u ? 200u : 4096u, 1000, 100, 10000, NULL};
    wire_t w;
    memset(&w, 0, sizeof(w));
    w.recv_max = 1u + data[1];
    split(&w, data + 2, size - 2);

    static uint8_t images[NREP_MAX][sizeof(mem)]; /* the outbox after 1..8 puts, made once */
    static int have_images;
    fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), 1); /* also sets the size the port reports */
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_outbox_t ob;
    if (!have_images) {
        if (dpm_outbox_open(&ob, &st, 0, sizeof(mem)) != DPM_OK) {
            abort();
        }
        for (uint32_t k = 0; k < NREP_MAX; k++) {
            dpm_report_t rep;
            memset(&rep, 0, sizeof(rep));
            memset(rep.report_id, (int)(k + 1u), DPM_REPORT_ID_BYTES);
            rep.campaign_id = 171;
            rep.mechanism = DPM_MECH_ID_TUPLE_MR;
            rep.eps = 65536;
            rep.body.tuple.group = k % 4u;
            rep.body.tuple.nmetrics = 1;
            rep.body.tuple.value[0] = k & 1u ? 1 : -1;
            if (dpm_report_encode(&rep, reports[k], sizeof(reports[k]), &report_len[k]) !=
                    DPM_OK ||
                dpm_outbox_put(&ob, reports[k], report_len[k]) != DPM_OK) {
                abort();
            }
            memcpy(images[k], mem, sizeof(mem));
        }
        have_images = 1;
    }
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    memcpy(mem, images[nrep - 1u], sizeof(mem)); /* the image after nrep puts */
    dpm_upload_t up;
    if (dpm_outbox_open(&ob, &st, 0, sizeof(mem)) != DPM_OK ||
        dpm_outbox_pending(&ob) != nrep || dpm_upload_init(&up, &cfg) != DPM_OK) {
        abort();
    }
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t rand;
    fake_clock_t fclk = {10000, 1, 0};
    dpm_clock_t clk = fake_clock_port(&fclk);
    dpm_transport_t t = {wire_send, wire_recv, &w};
    uint8_t work[DPM_UPLOAD_MIN_WORK + 256];
    if (test_rand_init(&rand, &tr, &rng, 1) != DPM_OK) {
        abort();
    }
    int before[NREP_MAX], after[NREP_MAX];
    scan(&ob, before);
    for (int round = 0; round < 4 && dpm_outbox_pending(&ob) > 0; round++) {
        uint32_t pending = dpm_outbox_pending(&ob);
        if (fclk.now < dpm_upload_next_attempt_ms(&up)) {
            fclk.now = dpm_upload_next_attempt_ms(&up); /* wait out the backoff */
        }
        dpm_upload_result_t res;
        dpm_status_t s = dpm_upload_flush(&up, &ob, &t, &clk, &rand, work, sizeof(work), &res);
        if (s != DPM_OK && s != DPM_ERR_TRANSPORT && s != DPM_ERR_TIMEOUT &&
            s != DPM_ERR_PROTOCOL && s != DPM_ERR_AUTH) {
            abort();
        }
        if (res.rejected > DPM_UPLOAD_MAX_REJECTS) {
            abort();
        }
        if (res.pending != dpm_outbox_pending(&ob) ||
            pending != res.pending + res.delivered + res.rejected || res.deferred) {
            abort();
        }
        scan(&ob, after);
        uint8_t named[NREP_MAX] = {0};
        for (uint32_t r = 0; r < res.rejected; r++) {
            const dpm_upload_reject_t *rj = &res.rejects[r];
            uint32_t k = rj->report_id[0] - 1u; /* report k + 1 has id bytes k + 1 */
            uint8_t id[DPM_REPORT_ID_BYTES];
            memset(id, (int)(k + 1u), sizeof(id));
            /* it was pending before this flush, is not now, and is named only once */
            if (k >= nrep || memcmp(id, rj->report_id, sizeof(id)) != 0 || !before[k] ||
                after[k] || named[k]++ || rj->campaign_id != 171 ||
                memchr(rj->reason, 0, sizeof(rj->reason)) == NULL) {
                abort();
            }
            for (const char *c = rj->reason; *c != '\0'; c++) {
                if (*c < 0x20 || *c > 0x7E) {
                    abort();
                }
            }
        }
        for (uint32_t k = 0; k < nrep; k++) {
            uint8_t id[DPM_REPORT_ID_BYTES];
            memset(id, (int)(k + 1u), sizeof(id));
            if (before[k] && !after[k] && !removal_allowed(data + 2, size - 2, id)) {
                abort();
            }
            before[k] = after[k];
        }
        w.in_request = 0; /* reconnect: the next request starts a new answer */
    }
    return 0;
}
