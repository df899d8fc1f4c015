/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port as one piece, for apps that post over TLS: what examples/posix-client wires up
 * by hand (CSPRNG, file storage and its anchors, clock, upload config, TCP + TLS, flush) in two
 * calls. No globals, no heap: the dpm_posix_app_t is the app's (static storage; it must not move
 * while a post runs, and must outlive the device, which points into it).
 *
 *   static dpm_posix_app_t app;
 *   static dpm_device_t dev;
 *   dpm_device_config_t cfg = {.policy = ...};                  // the app's privacy policy
 *   st = dpm_posix_app_open(&app, &(dpm_posix_app_config_t){.state_path = "state.bin",
 *                           .url = "https://collector:8443", .ca_path = "ca.pem"}, &cfg);
 *   st = dpm_device_init(&dev, &cfg);   ... accept a campaign, report ...
 *   st = dpm_posix_app_post(&app, &dev, &res);
 *   on failure: dpm_posix_app_why(&app, &dev), dpm_strerror(st)
 *
 * What it does not do (use the pieces, as examples/posix-client does): fetch campaigns, TLS
 * client certificates, a server name other than the URL's host, a state file of another size. */
#ifndef DPM_PORT_POSIX_APP_H
#define DPM_PORT_POSIX_APP_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/dpm.h"
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the state file (the SDK lays out its ledger and outbox in it). An existing file of
 * another size is refused (DPM_ERR_STORAGE), never reshaped. */
#define DPM_POSIX_APP_STATE_BYTES 65536u
/* Largest CA file (PEM), its terminating NUL included. */
#define DPM_POSIX_APP_CA_BYTES 16384u
/* Deadline of a connect, a TLS handshake and one upload exchange. */
#define DPM_POSIX_APP_TIMEOUT_MS 10000u
/* Flushes per post: each goes on after a batch the collector found too large or a reconnect. */
#define DPM_POSIX_APP_FLUSH_ROUNDS 8

typedef struct {
    /* The device's state file (ledger and outbox), created erased if missing; its anchors live
     * beside it in "<state_path>-anchor" (a wiped state file then fails closed or is counted as
     * lost reports instead of starting a new device: see dpm_device_config_t). Required. */
    const char *state_path;
    /* The collector: "https://host" or "https://host:port" (default 443). The host is also the
     * name its certificate must carry. Required. */
    const char *url;
    /* PEM file of the CA that signs the collector's certificate (pinned: no other CA is
     * trusted). Read by dpm_posix_app_open. Required. */
    const char *ca_path;
    /* Optional (NULL: none): the device's bearer token (dpm_upload_config_t.token). Not
     * copied: it must outlive the app. */
    const char *token;
} dpm_posix_app_config_t;

/* Caller-owned; read only through the functions below. */
typedef struct {
    dpm_posix_rng_t rng;
    dpm_posix_storage_t state, anchor;
    dpm_storage_t outbox_anchor; /* the device points to it */
    dpm_posix_tcp_t tcp;
    dpm_tls_t tls;
    uint16_t port;
    char host[256];
    uint8_t ca[DPM_POSIX_APP_CA_BYTES];
    size_t ca_len;
    uint8_t work[4096]; /* the flush's request buffer */
    char why[640];      /* the last failure of an app call, "" if it succeeded */
} dpm_posix_app_t;

/* Read the CA, open (or create) the state file and its anchors, seed the CSPRNG from the
 * kernel, and fill dev_cfg's rng, clock, storage, ledger_anchor, outbox_anchor and upload
 * (POST /v1/reports to the url's host); the rest of *dev_cfg (the policy) is the app's, left
 * as it is. Then dpm_device_init(&dev, dev_cfg). Returns DPM_OK; DPM_ERR_PARAM (a NULL
 * argument or field, a url that is not https://host[:port], a CA file that cannot be read or
 * is too large, a path too long); DPM_ERR_STORAGE (the state file or its anchor cannot be
 * opened or created, e.g. a missing directory, or has another size); DPM_ERR_RNG (the kernel
 * gave no entropy). dpm_posix_app_why says which. A process that exits needs no close; a
 * longer-lived one calls dpm_posix_app_close after its last device call. */
dpm_status_t dpm_posix_app_open(dpm_posix_app_t *app, const dpm_posix_app_config_t *cfg,
                                dpm_device_config_t *dev_cfg);

/* Post the device's outbox: connect (TCP, then TLS against the pinned CA for the url's host),
 * dpm_device_flush until the outbox is empty, a flush fails or the collector rejected reports
 * (reconnecting when the collector closed), then close. *res is the last flush's result (its
 * pending: the reports left; its rejects: those the collector refused for good, with the
 * reason). Returns DPM_OK (everything posted, or rejects in res); DPM_ERR_PARAM (NULL, an
 * unopened app); DPM_ERR_TRANSPORT / DPM_ERR_TIMEOUT (no connection: refused, unresolved, no
 * answer); DPM_ERR_TLS (certificate not trusted, wrong name, no common protocol); or a flush's
 * status (dpm_device_flush). On every failure the reports stay in the outbox for the next
 * post; dpm_posix_app_why says what failed and what to do. */
dpm_status_t dpm_posix_app_post(dpm_posix_app_t *app, dpm_device_t *dev, dpm_upload_result_t *res);

/* Why the last call failed, in words: the app's own last call (open, post) if it failed, else
 * the device's (dpm_device_why(dev); dev may be NULL). Never NULL; "" when nothing failed. */
const char *dpm_posix_app_why(const dpm_posix_app_t *app, const dpm_device_t *dev);

/* Release the CSPRNG (its state is wiped). The device must not be used afterwards. */
void dpm_posix_app_close(dpm_posix_app_t *app);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_POSIX_APP_H */
