/* SPDX-License-Identifier: Apache-2.0 */
/* Status codes: every fallible SDK function returns one. DPM_OK is zero, errors are negative.
 * A function that returns an error has left every output and caller-owned state unchanged. */
#ifndef DPM_STATUS_H
#define DPM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DPM_OK = 0,
    DPM_ERR_PARAM = -1,        /* an argument is NULL, out of range or malformed */
    DPM_ERR_RANGE = -2,        /* a result would not fit its fixed-point or integer type */
    DPM_ERR_UNDEFINED = -3,    /* a statistic is undefined (e.g. a zero denominator) */
    DPM_ERR_BUFFER = -4,       /* a caller buffer is too small */
    DPM_ERR_RNG = -5,          /* the random source failed */
    DPM_ERR_STORAGE = -6,      /* port storage failed */
    DPM_ERR_TRANSPORT = -7,    /* port transport failed or closed, or the collector asked to
                                  retry later (HTTP 408, 429, 5xx): retry after a backoff */
    DPM_ERR_BUDGET = -8,       /* the privacy budget does not allow this report */
    DPM_ERR_CORRUPT = -9,      /* stored or received data failed its integrity check */
    DPM_ERR_TLS = -10,         /* TLS handshake or certificate verification failed */
    DPM_ERR_PROTOCOL = -11,    /* a peer sent bytes that break the protocol */
    DPM_ERR_TIMEOUT = -12,     /* an operation did not finish in time */
    DPM_ERR_UNSUPPORTED = -13, /* the feature is not compiled in (see Kconfig) */
    DPM_ERR_POLICY = -14,      /* the app's privacy policy does not allow this campaign */
    DPM_ERR_CONFIG = -15,      /* app and library were built with different DPM_* options */
    DPM_ERR_VERIFY = -16,      /* a VDAF proof or joint-randomness check failed: drop the report */
    DPM_ERR_LEDGER_FULL = -17, /* the privacy ledger tracks as many campaigns as it can, all with
                                  periods still open: no new campaign until one ends */
    DPM_ERR_AUTH = -18         /* the collector refused this device's credential (HTTP 401:
                                  none or unknown; 403: not a device's, revoked, or token and
                                  certificate of two identities). The reports stay queued: fix
                                  or renew the credential (dpm_upload_config_t.token, or the
                                  TLS client certificate); unchanged, it gets the same answer */
} dpm_status_t;

/* The last (most negative) status code, for tables and tests that cover them all. */
#define DPM_ERR_LAST DPM_ERR_AUTH

/* A short English description of `status` (never NULL; unknown codes give "unknown status"). */
const char *dpm_strerror(dpm_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* DPM_STATUS_H */
