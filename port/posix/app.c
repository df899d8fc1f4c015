/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port as one piece (dpm/port_posix_app.h): the wiring examples/posix-client does by
 * hand, for apps that only report and post. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/uploader.h"
#include "dpm/port_posix_app.h"

#define ANCHOR_SUFFIX "-anchor"

static dpm_status_t fail(dpm_posix_app_t *a, dpm_status_t st, const char *fmt, const char *x,
                         const char *y)
{
    (void)snprintf(a->why, sizeof(a->why), fmt, x, y);
    return st;
}

/* https://host[:port] -> host, port. 0 or -1. */
static int parse_url(dpm_posix_app_t *a, const char *url)
{
    if (strncmp(url, "https://", 8) != 0) {
        return -1;
    }
    const char *h = url + 8;
    size_t n = strcspn(h, ":/");
    if (n == 0 || n >= sizeof(a->host)) {
        return -1;
    }
    unsigned long port = 443;
    const char *rest = h + n;
    if (*rest == ':') {
        char *end = NULL;
        port = strtoul(rest + 1, &end, 10);
        if (end == rest + 1 || port == 0 || port > 65535) {
            return -1;
        }
        rest = end;
    }
    if (*rest != '\0' && strcmp(rest, "/") != 0) {
        return -1; /* a path: the reports go to /v1/reports of the host */
    }
    memcpy(a->host, h, n);
    a->host[n] = '\0';
    a->port = (uint16_t)port;
    return 0;
}

/* The CA file with its terminating NUL counted (Mbed TLS requires it for PEM). */
static int read_ca(dpm_posix_app_t *a, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(a->ca, 1, sizeof(a->ca) - 1, f);
    int too_long = n == sizeof(a->ca) - 1 && fgetc(f) != EOF;
    int err = ferror(f);
    (void)fclose(f); /* a read-only stream: what it read is already checked above */
    if (too_long || err || n == 0) {
        return -1;
    }
    a->ca[n] = '\0';
    a->ca_len = n + 1;
    return 0;
}

dpm_status_t dpm_posix_app_open(dpm_posix_app_t *a, const dpm_posix_app_config_t *cfg,
                                dpm_device_config_t *dev_cfg)
{
    if (a == NULL) {
        return DPM_ERR_PARAM;
    }
    memset(a, 0, sizeof(*a));
    a->tcp.fd = -1;
    if (cfg == NULL || dev_cfg == NULL || cfg->state_path == NULL || cfg->url == NULL ||
        cfg->ca_path == NULL) {
        return fail(a, DPM_ERR_PARAM, "%s%s", "state_path, url and ca_path are required", "");
    }
    if (parse_url(a, cfg->url) != 0) {
        return fail(a, DPM_ERR_PARAM, "url %s%s is not https://host[:port]", cfg->url, "");
    }
    if (read_ca(a, cfg->ca_path) != 0) {
        return fail(a, DPM_ERR_PARAM, "cannot read the CA certificate %s (or it is empty or %s)",
                    cfg->ca_path, "larger than DPM_POSIX_APP_CA_BYTES");
    }
    errno = 0;
    dpm_status_t st = dpm_posix_storage_open(&a->state, cfg->state_path, DPM_POSIX_APP_STATE_BYTES);
    if (st != DPM_OK) {
        return fail(a, st, "cannot open the state file %s: %s", cfg->state_path,
                    st == DPM_ERR_PARAM ? "path too long"
                    : errno != 0        ? strerror(errno)
                                        : "it has another size than DPM_POSIX_APP_STATE_BYTES");
    }
    char anchor[DPM_POSIX_PATH_MAX];
    if (snprintf(anchor, sizeof(anchor), "%s%s", cfg->state_path, ANCHOR_SUFFIX) >=
        (int)sizeof(anchor)) {
        return fail(a, DPM_ERR_PARAM, "state_path %s%s is too long for its anchor's name",
                    cfg->state_path, "");
    }
    errno = 0;
    st = dpm_posix_storage_open(&a->anchor, anchor,
                                DPM_LEDGER_ANCHOR_BYTES + DPM_OUTBOX_ANCHOR_BYTES);
    if (st != DPM_OK) {
        return fail(a, st, "cannot open the anchor file %s: %s", anchor,
                    st == DPM_ERR_PARAM ? "path too long"
                    : errno != 0        ? strerror(errno)
                                        : "it has another size");
    }
    st = dpm_posix_rng_init(&a->rng, (const uint8_t *)cfg->state_path, strlen(cfg->state_path));
    if (st != DPM_OK) {
        return fail(a, st, "cannot seed the CSPRNG from the kernel%s%s", "", "");
    }
    dev_cfg->rng = dpm_posix_rng(&a->rng);
    dev_cfg->clock = dpm_posix_clock();
    dev_cfg->storage = dpm_posix_storage(&a->state); /* the whole file: the SDK lays it out */
    dev_cfg->ledger_anchor = dpm_posix_storage(&a->anchor);
    dev_cfg->ledger_anchor_offset = 0;
    a->outbox_anchor = dpm_posix_storage(&a->anchor);
    dev_cfg->outbox_anchor = &a->outbox_anchor;
    dev_cfg->outbox_anchor_offset = DPM_LEDGER_ANCHOR_BYTES;
    dev_cfg->upload = (dpm_upload_config_t){.host = a->host,
                                            .path = "/v1/reports",
                                            .max_reports = DPM_UPLOAD_MAX_BATCH,
                                            .max_bytes = 2048,
                                            .timeout_ms = DPM_POSIX_APP_TIMEOUT_MS,
                                            .backoff_base_ms = 1000,
                                            .backoff_cap_ms = 600000,
                                            .token = cfg->token};
    return DPM_OK;
}

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

static dpm_status_t connect_collector(dpm_posix_app_t *a)
{
    char where[264];
    (void)snprintf(where, sizeof(where), "%s:%u", a->host, (unsigned)a->port);
    dpm_status_t st = dpm_posix_tcp_connect(&a->tcp, a->host, a->port, DPM_POSIX_APP_TIMEOUT_MS);
    if (st != DPM_OK) {
        return fail(a, st, "cannot connect to the collector at %s (%s); the reports stay queued",
                    where,
                    st == DPM_ERR_TIMEOUT ? "no answer" : "refused, unreachable or unknown host");
    }
    a->tcp.timeout_ms = 1000; /* per send/recv wait, well below the deadlines */
    dpm_tls_config_t tc;
    memset(&tc, 0, sizeof(tc));
    tc.ca = a->ca;
    tc.ca_len = a->ca_len;
    tc.hostname = a->host;
    tc.raw = dpm_posix_tcp(&a->tcp);
    tc.raw_close = close_tcp;
    tc.rng = dpm_posix_rng(&a->rng);
    tc.clock = dpm_posix_clock();
    tc.handshake_timeout_ms = DPM_POSIX_APP_TIMEOUT_MS;
    st = dpm_tls_connect(&a->tls, &tc);
    if (st != DPM_OK) {
        return fail(a, st, "TLS to %s failed: %s; the reports stay queued", where,
                    dpm_tls_reason(&a->tls));
    }
    return DPM_OK;
}

dpm_status_t dpm_posix_app_post(dpm_posix_app_t *a, dpm_device_t *dev, dpm_upload_result_t *res)
{
    if (a == NULL) {
        return DPM_ERR_PARAM;
    }
    a->why[0] = '\0';
    if (dev == NULL || res == NULL || a->host[0] == '\0') {
        return fail(a, DPM_ERR_PARAM, "%s%s", "post needs an opened app, a device and a result",
                    "");
    }
    memset(res, 0, sizeof(*res));
    dpm_status_t st = connect_collector(a);
    for (int round = 0; st == DPM_OK && round < DPM_POSIX_APP_FLUSH_ROUNDS; round++) {
        if (round > 0 && res->reconnect) {
            (void)dpm_tls_close(&a->tls);
            st = connect_collector(a);
            if (st != DPM_OK) {
                return st;
            }
        }
        dpm_transport_t t = dpm_tls_transport(&a->tls);
        st = dpm_device_flush(dev, &t, a->work, sizeof(a->work), res);
        if (st != DPM_OK) {
            (void)fail(a, st, "upload failed: %s%s", dpm_upload_advice(st, res), "");
        }
        if (st != DPM_OK || !res->more || res->rejected > 0) {
            break; /* rejects go back to the app before anything else is sent */
        }
    }
    if (a->tls.state != DPM_TLS_STATE_IDLE) {
        (void)dpm_tls_close(&a->tls);
    }
    return st;
}

const char *dpm_posix_app_why(const dpm_posix_app_t *a, const dpm_device_t *dev)
{
    if (a != NULL && a->why[0] != '\0') {
        return a->why;
    }
    return dev != NULL ? dpm_device_why(dev) : "";
}

void dpm_posix_app_close(dpm_posix_app_t *a)
{
    if (a != NULL) {
        dpm_posix_rng_free(&a->rng);
    }
}
