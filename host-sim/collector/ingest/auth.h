/* SPDX-License-Identifier: Apache-2.0 */
/* Who may do what: bearer tokens, stored hashed, each with a name and roles.
 *
 * Credentials file (--credentials): '#' comments, blank lines ignored, one credential a line:
 *
 *   NAME  ROLES  SHA256
 *   phone-0001  device            9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *   sim-farm    relay=100000,operator  ...
 *   alice       operator          ...
 *
 * NAME: 1 to 63 of [A-Za-z0-9._-], unique. SHA256: the token's SHA-256 in hex (64 digits), so
 * the file holds no secret: `printf %s "$TOKEN" | sha256sum` makes it. A request presents the
 * token itself as "Authorization: Bearer TOKEN" (over TLS). ROLES, comma-separated:
 *   device     may POST /v1/reports; at most the campaign's device_quota new reports per
 *              campaign and period (the device identity is "token:NAME")
 *   relay=N    may POST /v1/reports for up to N devices: N reports per campaign and period (a
 *              gateway or a simulator; for the forged-devices arithmetic it counts as N devices)
 *   operator   may read estimates and /metrics
 *   aggregator (--role helper) the DAP leader: may POST aggregation jobs and aggregate shares
 *   collector  (--role leader) the DAP collector: may POST collection jobs
 *   cert=CN    (with device or relay) the token belongs to the device whose certificate has
 *              this CN: its identity is "cert:CN", the certificate's, so the device is one
 *              identity (one quota, one lost-report cap) whichever of the two it presents.
 *              Several tokens may name one CN (a new token beside the old one).
 *
 * Devices may also authenticate with a TLS client certificate from the device CA
 * (--device-ca; identity "cert:CN", quota: the campaign's device_quota); see tls_server.h.
 * A request that presents both must present one identity: a certificate and a token bound to
 * another CN (or to none) are refused (403, request.c). An unbound token and a certificate
 * held by one device are two identities: the collector cannot know they are one device. */
#ifndef DPM_COLLECTOR_AUTH_H
#define DPM_COLLECTOR_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define COLL_ROLE_DEVICE 1u
#define COLL_ROLE_RELAY 2u
#define COLL_ROLE_OPERATOR 4u
#define COLL_ROLE_AGGREGATOR 8u /* DAP: the leader, at a helper's aggregation endpoints */
#define COLL_ROLE_COLLECTOR 16u /* DAP: the collector, at a leader's collection jobs */
#define COLL_CRED_NAME_MAX 64   /* NAME, NUL included */
#define COLL_IDENTITY_MAX 80    /* "token:NAME" or "cert:CN", NUL included */
#define COLL_MAX_CREDENTIALS 1000000

typedef struct {
    uint8_t hash[32];
    char identity[COLL_IDENTITY_MAX]; /* "token:NAME", or "cert:CN" when bound (cert=CN) */
    unsigned roles;
    int bound;            /* cert=CN given */
    uint32_t relay_quota; /* relay=N */
} coll_credential_t;

typedef struct {
    size_t n;
    coll_credential_t *c; /* sorted by hash */
} coll_auth_t;

/* Parse text[0, len) / load a file (at most 256 MiB). 0, or -1 with "line N: ..." in err. */
int coll_auth_parse(coll_auth_t *a, const char *text, size_t len, char *err, size_t errcap);
int coll_auth_load(coll_auth_t *a, const char *path, char *err, size_t errcap);
void coll_auth_free(coll_auth_t *a);

/* The credential whose hash is SHA-256(token[0, len)), or NULL. */
const coll_credential_t *coll_auth_find(const coll_auth_t *a, const char *token, size_t len);

#endif /* DPM_COLLECTOR_AUTH_H */
