/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the collector's HTTPS client reading a response (coll_https_parse_response,
 * the reader of coll_https_request), on bytes a DAP helper, or a server in its place, can send
 * once TLS is up. Byte 0: bit 0 the stream ends in close_notify (else a bare TCP close), bit 1
 * the request was a HEAD, bits 2-3 the body capacity; the rest is the response stream, read
 * whole, one byte at a time and in input-dependent pieces. Checked beyond the sanitizers:
 *   - an answer is consistent: status 200..599, body no longer than the capacity, a reason
 *     exactly when refused, a refused answer zeroed;
 *   - reading in pieces changes nothing: same result, status, headers and body bytes;
 *   - an answer taken at a bare TCP close is final: the same stream with one more byte gives the
 *     same answer (so a body without a length, which only close_notify may end, is never taken
 *     there: its next byte would belong to it);
 *   - close_notify instead of the bare close changes no answer the bare close gave. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/net/https_client.h"

#define BODY_MAX 4096

typedef struct {
    int ret;
    coll_https_resp_t resp;
    char why[512];
    uint8_t body[BODY_MAX];
} outcome_t;

static void run(const uint8_t *data, size_t size, size_t step, int notify, const char *method,
                size_t cap, outcome_t *o)
{
    memset(o, 0, sizeof(*o));
    o->ret = coll_https_parse_response(data, size, step, notify, method, cap ? o->body : NULL, cap,
                                       &o->resp, o->why, sizeof(o->why));
    static const coll_https_resp_t zero;
    if (o->ret == 0) {
        if (o->resp.status < 200 || o->resp.status > 599 || o->resp.len > cap ||
            o->why[0] != '\0' ||
            memchr(o->resp.content_type, '\0', sizeof(o->resp.content_type)) == NULL ||
            memchr(o->resp.location, '\0', sizeof(o->resp.location)) == NULL) {
            abort();
        }
    } else if (o->ret != -1 || o->why[0] == '\0' || memcmp(&o->resp, &zero, sizeof(zero)) != 0) {
        abort();
    }
}

static int same(const outcome_t *a, const outcome_t *b)
{
    return a->ret == b->ret && memcmp(&a->resp, &b->resp, sizeof(a->resp)) == 0 &&
           memcmp(a->body, b->body, a->resp.len) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    static const size_t caps[4] = {0, 16, 600, BODY_MAX};
    int notify = data[0] & 1u;
    const char *method = (data[0] & 2u) ? "HEAD" : "GET";
    size_t cap = caps[(data[0] >> 2) & 3u];
    size_t step = 2 + (size_t)(data[0] >> 4) * 7u; /* 2 .. 107 */
    static outcome_t whole, bytes, pieces, notified, longer;
    run(data + 1, size - 1, 0, notify, method, cap, &whole);
    run(data + 1, size - 1, 1, notify, method, cap, &bytes);
    run(data + 1, size - 1, step, notify, method, cap, &pieces);
    if (!same(&whole, &bytes) || !same(&whole, &pieces)) {
        abort();
    }
    if (!notify) {
        uint8_t *more = malloc(size); /* the stream and one byte more (data[0] reused) */
        if (more == NULL) {
            return 0;
        }
        memcpy(more, data + 1, size - 1);
        more[size - 1] = data[0];
        run(more, size, 0, 0, method, cap, &longer);
        run(data + 1, size - 1, 0, 1, method, cap, &notified);
        free(more);
        if (whole.ret == 0 && (!same(&whole, &longer) || !same(&whole, &notified))) {
            abort();
        }
    }
    return 0;
}
