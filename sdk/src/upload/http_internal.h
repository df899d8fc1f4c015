/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside sdk/src/upload: the request writer's checks, and its POST with a token. */
#ifndef DPM_HTTP_INTERNAL_H
#define DPM_HTTP_INTERNAL_H

#include "dpm/expert/uploader.h"

/* 1 if host is acceptable to dpm_http_write_request (see dpm/expert/http.h), else 0. */
int dpm_http_host_ok(const char *host);

/* 1 if path is acceptable to dpm_http_write_request, else 0. */
int dpm_http_path_ok(const char *path);

/* 1 if token is a bearer token dpm_upload_config_t accepts (see dpm/bits/upload.h), else 0. */
int dpm_http_token_ok(const char *token);

/* 1 for the statuses that mean "try again later": the request timed out (408), too many
 * requests (429), or the server cannot answer now (5xx: storage failure, over its memory
 * budget). */
int dpm_http_later_status(uint32_t status);

/* dpm_http_write_request with "Authorization: Bearer <token>" after Host (token NULL: none).
 * DPM_ERR_PARAM also for an invalid token. */
dpm_status_t dpm_http_write_post(uint8_t *buf, size_t cap, const char *host, const char *path,
                                 const char *token, uint32_t content_length, size_t *len);

#endif /* DPM_HTTP_INTERNAL_H */
