/* SPDX-License-Identifier: Apache-2.0 */
/* How a DAP leader reaches its helper (dap_service.h's dap_peer_post_fn): HTTPS (net/
 * https_client.h) with the helper's certificate checked against --dap-helper-ca and the host
 * name of the task's helper URL, and the aggregators' bearer token from --dap-helper-token (the
 * helper lists its SHA-256 with the aggregator role in its --credentials). */
#ifndef DPM_COLLECTOR_DAP_PEER_H
#define DPM_COLLECTOR_DAP_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "collector/net/https_client.h"

typedef struct {
    coll_https_t https;
    char token[256];
    uint32_t timeout_ms;
} coll_dap_peer_t;

/* Load the token (the file's first line, 1 to 255 visible characters) and the CA. 0, or -1 with
 * err (which never holds the token). */
int coll_dap_peer_init(coll_dap_peer_t *p, const char *token_path, const char *ca_path,
                       uint32_t timeout_ms, char *err, size_t cap);
void coll_dap_peer_free(coll_dap_peer_t *p);

/* dap_peer_post_fn over p (ctx). */
int coll_dap_peer_post(void *ctx, const char *url, const char *content_type,
                       const char *task_digest, const uint8_t *body, size_t len, uint8_t *out,
                       size_t cap, size_t *out_len, int *status, char *why, size_t whycap);

#endif /* DPM_COLLECTOR_DAP_PEER_H */
