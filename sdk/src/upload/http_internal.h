/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside sdk/src/upload: host and path checks of the request writer. */
#ifndef DPM_HTTP_INTERNAL_H
#define DPM_HTTP_INTERNAL_H

/* 1 if host is acceptable to dpm_http_write_request (see dpm/upload.h), else 0. */
int dpm_http_host_ok(const char *host);

/* 1 if path is acceptable to dpm_http_write_request, else 0. */
int dpm_http_path_ok(const char *path);

#endif /* DPM_HTTP_INTERNAL_H */
