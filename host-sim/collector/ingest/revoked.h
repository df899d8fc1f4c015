/* SPDX-License-Identifier: Apache-2.0 */
/* Revoked credentials: a deny list of device certificates and identities, read again whenever
 * its file changes, so a stolen device is shut out without a restart.
 *
 * File (--revoked FILE): '#' comments, blank lines ignored, one entry a line:
 *   a certificate's SHA-256 fingerprint (of its DER encoding): 64 hex digits, with or without
 *       colons between the bytes, i.e. what `openssl x509 -noout -fingerprint -sha256 -in
 *       device.crt` prints after "=". That certificate is refused; another one issued to the
 *       same CN (a re-keyed device) is not.
 *   cert:CN or token:NAME: an identity (auth.h). Every credential of it is refused: any
 *       certificate with that CN, any token bound to it (cert=CN), the token NAME.
 *
 * A request whose certificate or credential is on the list is answered 403 "revoked", before
 * its body is read (request.h); public endpoints stay open to it. The file is checked for a
 * change (inode, size, modification time) at most every COLL_REVOKED_CHECK_MS when a
 * credential is looked up. A file that cannot be read or parsed at start-up stops the start
 * (exit 2, FILE:LINE); at a reload it changes nothing (the list in force stays, an error
 * "revoked_reload_failed" is logged once per change of the file): a damaged or missing deny
 * list never lets a revoked device back in. To clear the list, empty the file. */
#ifndef DPM_COLLECTOR_REVOKED_H
#define DPM_COLLECTOR_REVOKED_H

#include <stddef.h>
#include <stdint.h>

#define COLL_REVOKED_CHECK_MS 200u

typedef struct coll_revoked coll_revoked_t;

/* Load the list at path. 0, or -1 with "FILE:LINE: ..." (or why it cannot be read) in err. */
int coll_revoked_open(coll_revoked_t **out, const char *path, char *err, size_t cap);

/* Parse text[0, len) as a list that is never reloaded (tests). 0, or -1 with "line N: ...". */
int coll_revoked_parse(coll_revoked_t **out, const char *text, size_t len, char *err, size_t cap);

/* 1 if the certificate with SHA-256 fingerprint sha256 (NULL: none) or the identity (NULL or
 * "": none) is revoked, else 0. Reloads the file first if it changed (thread-safe). */
int coll_revoked_is(coll_revoked_t *r, const uint8_t *sha256, const char *identity);

/* Entries in force (fingerprints + identities), and reloads done since open. */
void coll_revoked_stats(coll_revoked_t *r, size_t *entries, uint64_t *reloads);

void coll_revoked_free(coll_revoked_t *r);

#endif /* DPM_COLLECTOR_REVOKED_H */
