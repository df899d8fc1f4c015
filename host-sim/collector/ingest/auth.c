/* SPDX-License-Identifier: Apache-2.0 */
/* Credentials file and token look-up (see auth.h). */
#include "collector/ingest/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/kv.h"
#include "common/text_list.h"
#include "mbedtls/sha256.h"

#define FILE_MAX_BYTES (256u << 20)
#define LINE_MAX_CHARS 512

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= COLL_CRED_NAME_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

static int parse_roles(char *s, coll_credential_t *c)
{
    for (char *tok = strtok(s, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (strncmp(tok, "cert=", 5) == 0) {
            if (c->bound || !name_ok(tok + 5)) {
                return -1;
            }
            snprintf(c->identity, sizeof(c->identity), "cert:%s", tok + 5);
            c->bound = 1;
        } else if (strcmp(tok, "device") == 0) {
            c->roles |= COLL_ROLE_DEVICE;
        } else if (strcmp(tok, "operator") == 0) {
            c->roles |= COLL_ROLE_OPERATOR;
        } else if (strcmp(tok, "aggregator") == 0) {
            c->roles |= COLL_ROLE_AGGREGATOR;
        } else if (strcmp(tok, "collector") == 0) {
            c->roles |= COLL_ROLE_COLLECTOR;
        } else if (strncmp(tok, "relay=", 6) == 0) {
            char *end = NULL;
            unsigned long n = strtoul(tok + 6, &end, 10);
            if (end == tok + 6 || *end != '\0' || n == 0 || n > UINT32_MAX) {
                return -1;
            }
            c->roles |= COLL_ROLE_RELAY;
            c->relay_quota = (uint32_t)n;
        } else {
            return -1;
        }
    }
    if (c->bound && (c->roles & (COLL_ROLE_DEVICE | COLL_ROLE_RELAY)) == 0) {
        return -1; /* cert= says whose device the token is: only a token that posts has one */
    }
    return c->roles != 0 ? 0 : -1;
}

static int by_hash(const void *x, const void *y)
{
    return memcmp(((const coll_credential_t *)x)->hash, ((const coll_credential_t *)y)->hash, 32);
}

static int parse_line(char *buf, int line, coll_credential_t *c, char *err, size_t cap)
{
    char *name = strtok(buf, " \t");
    char *roles = strtok(NULL, " \t");
    char *hex = strtok(NULL, " \t");
    if (name == NULL || roles == NULL || hex == NULL || strtok(NULL, " \t") != NULL) {
        return host_fail(err, cap, "line %d: expected NAME ROLES SHA256", line);
    }
    memset(c, 0, sizeof(*c));
    if (!name_ok(name)) {
        return host_fail(err, cap, "line %d: bad name '%s' (1 to 63 of A-Z a-z 0-9 . _ -)", line,
                         name);
    }
    snprintf(c->identity, sizeof(c->identity), "token:%s", name);
    if (parse_roles(roles, c) != 0) {
        return host_fail(err, cap,
                         "line %d: bad roles (want device, relay=N, operator, aggregator, "
                         "collector, and at most one cert=CN with device or relay)",
                         line);
    }
    if (strlen(hex) != 64) {
        return host_fail(err, cap, "line %d: the hash must be 64 hex digits (SHA-256 of the token)",
                         line);
    }
    for (int i = 0; i < 32; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return host_fail(err, cap, "line %d: the hash must be 64 hex digits", line);
        }
        c->hash[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int coll_auth_parse(coll_auth_t *a, const char *text, size_t len, char *err, size_t errcap)
{
    memset(a, 0, sizeof(*a));
    size_t cap = 0;
    text_lines_t lines;
    text_lines_init(&lines, text, len);
    char buf[LINE_MAX_CHARS + 1], *s;
    int got;
    while ((got = text_lines_next(&lines, buf, sizeof(buf), &s)) != TEXT_LINE_END) {
        int line = lines.line;
        if (got != TEXT_LINE_OK) {
            coll_auth_free(a);
            return host_fail(err, errcap, "line %d: %s", line,
                             got == TEXT_LINE_NUL ? "a NUL byte" : "too long");
        }
        if (a->n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            coll_credential_t *c =
                ncap <= COLL_MAX_CREDENTIALS ? realloc(a->c, ncap * sizeof(*c)) : NULL;
            if (c == NULL) {
                coll_auth_free(a);
                return host_fail(err, errcap, "line %d: too many credentials", line);
            }
            a->c = c;
            cap = ncap;
        }
        if (parse_line(s, line, &a->c[a->n], err, errcap) != 0) {
            coll_auth_free(a);
            return -1;
        }
        a->n++;
    }
    qsort(a->c, a->n, sizeof(*a->c), by_hash);
    for (size_t i = 1; i < a->n; i++) {
        if (memcmp(a->c[i - 1].hash, a->c[i].hash, 32) == 0) {
            coll_auth_free(a);
            return host_fail(err, errcap, "two credentials have the same token");
        }
    }
    /* Names unique (quadratic: only in small files). Tokens bound to one certificate share
     * its identity: that is allowed (a new token and the old one, while devices switch). */
    for (size_t i = 0; i < a->n; i++) {
        for (size_t j = i + 1; j < a->n && a->n <= 4096 && !a->c[i].bound; j++) {
            if (strcmp(a->c[i].identity, a->c[j].identity) == 0) {
                char dup[COLL_IDENTITY_MAX];
                snprintf(dup, sizeof(dup), "%s", a->c[i].identity + 6);
                coll_auth_free(a);
                return host_fail(err, errcap, "name '%s' used twice", dup);
            }
        }
    }
    return 0;
}

int coll_auth_load(coll_auth_t *a, const char *path, char *err, size_t errcap)
{
    char *text = NULL;
    size_t n = 0;
    if (kv_load_file(path, FILE_MAX_BYTES, "256 MiB", &text, &n, err, errcap) != 0) {
        return -1;
    }
    char msg[256];
    int rc = coll_auth_parse(a, text, n, msg, sizeof(msg));
    free(text);
    return rc == 0 ? 0 : host_fail(err, errcap, "%s: %s", path, msg);
}

void coll_auth_free(coll_auth_t *a)
{
    free(a->c);
    memset(a, 0, sizeof(*a));
}

const coll_credential_t *coll_auth_find(const coll_auth_t *a, const char *token, size_t len)
{
    if (a == NULL || a->n == 0 || token == NULL) {
        return NULL;
    }
    coll_credential_t key;
    if (mbedtls_sha256((const unsigned char *)token, len, key.hash, 0) != 0) {
        return NULL;
    }
    return bsearch(&key, a->c, a->n, sizeof(*a->c), by_hash);
}
