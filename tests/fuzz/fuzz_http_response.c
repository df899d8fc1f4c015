/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the device's HTTP/1.1 response parser (dpm_http_response_feed), on bytes
 * a collector, or anyone on the path before TLS ends, can send.
 * Byte 0 of the input picks the body capacity; the rest is the response stream, fed once whole
 * and once in input-dependent chunks. Checked beyond the sanitizers:
 *   - the parser never claims more bytes than it was given, and consumes everything it is
 *     given until the response is complete;
 *   - a complete response is consistent: status in 100..599 (never 1xx), body_len ==
 *     content_length <= body_cap, and the body bytes are the ones after the head;
 *   - chunking does not change anything: same outcome, status, body and bytes used;
 *   - a failed parser stays failed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"

typedef struct {
    dpm_status_t st; /* last status */
    int done;
    size_t used; /* bytes consumed in total */
    dpm_http_response_t r;
} outcome_t;

static uint8_t body_whole[4096];
static uint8_t body_chunked[4096];

static void run(const uint8_t *data, size_t size, size_t cap, uint8_t *body, int chunked,
                outcome_t *o)
{
    memset(o, 0, sizeof(*o));
    if (dpm_http_response_init(&o->r, body, cap) != DPM_OK) {
        abort();
    }
    size_t pos = 0;
    uint32_t h = 2166136261u;
    o->st = DPM_OK;
    while (pos < size && o->st == DPM_OK && !dpm_http_response_done(&o->r)) {
        size_t n = size - pos;
        if (chunked) {
            h = (h ^ data[pos]) * 16777619u; /* chunk sizes 1..67 chosen by the input */
            n = n < 1 + h % 67 ? n : 1 + h % 67;
        }
        size_t used = (size_t)-1;
        o->st = dpm_http_response_feed(&o->r, data + pos, n, &used);
        if (o->st != DPM_OK) {
            break;
        }
        if (used > n || (used < n && !dpm_http_response_done(&o->r))) {
            abort(); /* claimed too much, or stopped early without finishing */
        }
        pos += used;
    }
    o->used = pos;
    o->done = dpm_http_response_done(&o->r);
    if (o->st != DPM_OK) {
        if (o->st != DPM_ERR_PROTOCOL || o->done) {
            abort();
        }
        size_t used = 0;
        if (dpm_http_response_feed(&o->r, (const uint8_t *)"\r\n", 2, &used) != DPM_ERR_PROTOCOL) {
            abort(); /* an error must be sticky */
        }
    }
    if (o->done) {
        const dpm_http_response_t *r = &o->r;
        if (r->status < 200 || r->status > 599 || r->body_len != r->content_length ||
            r->body_len > cap || (r->body_len > 0 && memcmp(r->body, data + o->used - r->body_len,
                                                             r->body_len) != 0)) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    static const size_t caps[4] = {0, 16, 600, sizeof(body_whole)};
    size_t cap = caps[data[0] & 3u];
    outcome_t a, b;
    run(data + 1, size - 1, cap, cap ? body_whole : NULL, 0, &a);
    run(data + 1, size - 1, cap, cap ? body_chunked : NULL, 1, &b);
    if (a.st != b.st || a.done != b.done) {
        abort();
    }
    if (a.done && (a.used != b.used || a.r.status != b.r.status || a.r.close != b.r.close ||
                   a.r.body_len != b.r.body_len ||
                   memcmp(body_whole, body_chunked, a.r.body_len) != 0)) {
        abort();
    }
    return 0;
}
