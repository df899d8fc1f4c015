/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP leader's HTTPS client to its helper (dap_peer.h). */
#include "collector/ops/dap_peer.h"

#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_tasks.h"
#include "common/err.h"
#include "common/kv.h"

int coll_dap_peer_init(coll_dap_peer_t *p, const char *token_path, const char *ca_path,
                       uint32_t timeout_ms, char *err, size_t cap)
{
    memset(p, 0, sizeof(*p));
    char *text = NULL;
    size_t len = 0;
    if (kv_load_file(token_path, 4096, "4 KiB", &text, &len, err, cap) != 0) {
        return -1;
    }
    size_t n = strcspn(text, "\r\n");
    int ok = n >= 1 && n < sizeof(p->token);
    for (size_t i = 0; ok && i < n; i++) {
        ok = text[i] > ' ' && text[i] < 127;
    }
    if (ok) {
        memcpy(p->token, text, n);
    }
    memset(text, 0, len);
    free(text);
    if (!ok) {
        return host_fail(err, cap,
                         "%s: want the helper's bearer token on its first line (1 to 255 visible "
                         "ASCII characters, no spaces)",
                         token_path);
    }
    if (coll_https_init(&p->https, ca_path, err, cap) != 0) {
        memset(p->token, 0, sizeof(p->token));
        return -1;
    }
    p->timeout_ms = timeout_ms;
    return 0;
}

void coll_dap_peer_free(coll_dap_peer_t *p)
{
    if (p != NULL && p->token[0] != '\0') {
        coll_https_free(&p->https);
        memset(p, 0, sizeof(*p));
    }
}

int coll_dap_peer_post(void *ctx, const char *url, const char *content_type,
                       const char *task_digest, const uint8_t *body, size_t len, uint8_t *out,
                       size_t cap, size_t *out_len, int *status, char *why, size_t whycap)
{
    coll_dap_peer_t *p = ctx;
    char extra[128];
    snprintf(extra, sizeof(extra), DAP_TASK_DIGEST_HEADER ": %s\r\n", task_digest);
    coll_https_req_t r = {"POST", url, p->token, content_type, body, len, p->timeout_ms, extra};
    coll_https_resp_t resp;
    *out_len = 0;
    if (coll_https_request(&p->https, &r, out, cap, &resp, why, whycap) != 0) {
        return -1;
    }
    *status = resp.status;
    *out_len = resp.len;
    return 0;
}
