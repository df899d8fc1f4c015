/* SPDX-License-Identifier: Apache-2.0 */
/* The deny list of certificates and identities (see revoked.h). */
#include "collector/ingest/revoked.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collector/ingest/auth.h"
#include "collector/ingest/log.h"
#include "common/err.h"
#include "common/text_list.h"

#define FILE_MAX_BYTES (64u << 20)
#define LINE_MAX_CHARS 512

/* One version of the list: sorted fingerprints and sorted identities. */
typedef struct {
    uint8_t (*fp)[32];
    size_t nfp;
    char **ids;
    size_t nids;
} deny_list_t;

struct coll_revoked {
    pthread_mutex_t mu;
    char *path; /* NULL: parsed from text, never reloaded */
    deny_list_t list;
    struct stat seen;    /* the file as last looked at (loaded, or refused) */
    uint64_t checked_ms; /* when it was last looked at */
    uint64_t reloads;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void list_free(deny_list_t *l)
{
    for (size_t i = 0; i < l->nids; i++) {
        free(l->ids[i]);
    }
    free(l->ids);
    free(l->fp);
    memset(l, 0, sizeof(*l));
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* 64 hex digits, optionally with one colon between each pair: 0 and out, or -1. */
static int parse_fingerprint(const char *s, uint8_t out[32])
{
    size_t n = strlen(s);
    int colons = n == 95;
    if (n != 64 && !colons) {
        return -1;
    }
    for (int i = 0; i < 32; i++) {
        const char *p = s + (colons ? 3 * i : 2 * i);
        int hi = hexval(p[0]), lo = hexval(p[1]);
        if (hi < 0 || lo < 0 || (colons && i < 31 && p[2] != ':')) {
            return -1;
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static int cmp_fp(const void *a, const void *b)
{
    return memcmp(a, b, 32);
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line's entry into l (grown as needed). 0, or -1 with the reason in err. */
static int add_entry(deny_list_t *l, const char *s, size_t *capfp, size_t *capid, char *err,
                     size_t cap)
{
    if (strncmp(s, "cert:", 5) == 0 || strncmp(s, "token:", 6) == 0) {
        size_t n = strlen(s), prefix = s[0] == 'c' ? 5 : 6;
        if (n == prefix || n >= COLL_IDENTITY_MAX) {
            return host_fail(err, cap,
                             "an identity is cert:CN or token:NAME, at most %d characters",
                             COLL_IDENTITY_MAX - 1);
        }
        if (l->nids == *capid) {
            size_t nc = *capid ? 2 * *capid : 16;
            char **p = realloc(l->ids, nc * sizeof(*p));
            if (p == NULL) {
                return host_fail(err, cap, "out of memory");
            }
            l->ids = p;
            *capid = nc;
        }
        if ((l->ids[l->nids] = strdup(s)) == NULL) {
            return host_fail(err, cap, "out of memory");
        }
        l->nids++;
        return 0;
    }
    uint8_t fp[32];
    if (parse_fingerprint(s, fp) != 0) {
        return host_fail(err, cap,
                         "want a certificate's SHA-256 fingerprint (64 hex digits, colons allowed) "
                         "or an identity cert:CN / token:NAME, got '%.80s'",
                         s);
    }
    if (l->nfp == *capfp) {
        size_t nc = *capfp ? 2 * *capfp : 16;
        uint8_t(*p)[32] = realloc(l->fp, nc * sizeof(*p));
        if (p == NULL) {
            return host_fail(err, cap, "out of memory");
        }
        l->fp = p;
        *capfp = nc;
    }
    memcpy(l->fp[l->nfp++], fp, 32);
    return 0;
}

static int parse_list(const char *text, size_t len, deny_list_t *out, char *err, size_t cap)
{
    deny_list_t l;
    memset(&l, 0, sizeof(l));
    size_t capfp = 0, capid = 0;
    text_lines_t lines;
    text_lines_init(&lines, text, len);
    char buf[LINE_MAX_CHARS + 1], why[200], *s;
    int got;
    while ((got = text_lines_next(&lines, buf, sizeof(buf), &s)) != TEXT_LINE_END) {
        int line = lines.line;
        if (got != TEXT_LINE_OK) {
            list_free(&l);
            return host_fail(err, cap, "line %d: %s", line,
                             got == TEXT_LINE_TOO_LONG ? "too long" : "a NUL byte");
        }
        if (add_entry(&l, s, &capfp, &capid, why, sizeof(why)) != 0) {
            list_free(&l);
            return host_fail(err, cap, "line %d: %s", line, why);
        }
    }
    if (l.nfp > 0) {
        qsort(l.fp, l.nfp, sizeof(*l.fp), cmp_fp);
    }
    if (l.nids > 0) {
        qsort(l.ids, l.nids, sizeof(*l.ids), cmp_id);
    }
    *out = l;
    return 0;
}

/* Read and parse the file at path; st is its stat as read. 0, or -1 with "path: ..." in err. */
static int load_file(const char *path, deny_list_t *out, struct stat *st, char *err, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return host_fail(err, cap, "cannot open %s: %s", path, strerror(errno));
    }
    if (fstat(fileno(f), st) != 0 || !S_ISREG(st->st_mode) || st->st_size < 0 ||
        (unsigned long long)st->st_size > FILE_MAX_BYTES) {
        fclose(f);
        return host_fail(err, cap, "%s: not a regular file of at most 64 MiB", path);
    }
    size_t size = (size_t)st->st_size;
    char *text = malloc(size + 1);
    size_t n = text != NULL ? fread(text, 1, size, f) : 0;
    fclose(f);
    if (text == NULL || n != size) {
        free(text);
        return host_fail(err, cap, "%s: read error", path);
    }
    char msg[300];
    int rc = parse_list(text, n, out, msg, sizeof(msg));
    free(text);
    return rc == 0 ? 0 : host_fail(err, cap, "%s: %s", path, msg);
}

static coll_revoked_t *make(void)
{
    coll_revoked_t *r = calloc(1, sizeof(*r));
    if (r != NULL && pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        r = NULL;
    }
    return r;
}

int coll_revoked_open(coll_revoked_t **out, const char *path, char *err, size_t cap)
{
    coll_revoked_t *r = make();
    if (r == NULL || (r->path = strdup(path)) == NULL) {
        coll_revoked_free(r);
        return host_fail(err, cap, "out of memory");
    }
    if (load_file(path, &r->list, &r->seen, err, cap) != 0) {
        coll_revoked_free(r);
        return -1;
    }
    r->checked_ms = mono_ms();
    *out = r;
    return 0;
}

int coll_revoked_parse(coll_revoked_t **out, const char *text, size_t len, char *err, size_t cap)
{
    coll_revoked_t *r = make();
    if (r == NULL) {
        return host_fail(err, cap, "out of memory");
    }
    if (parse_list(text, len, &r->list, err, cap) != 0) {
        coll_revoked_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* With r->mu held: reload the file if it changed since it was last looked at. */
static void maybe_reload(coll_revoked_t *r)
{
    uint64_t now = mono_ms();
    if (r->path == NULL || now - r->checked_ms < COLL_REVOKED_CHECK_MS) {
        return;
    }
    r->checked_ms = now;
    struct stat st;
    char err[400];
    if (stat(r->path, &st) != 0) {
        memset(&st, 0, sizeof(st)); /* gone: report it once, until it comes back */
        if (!same_file(&st, &r->seen)) {
            r->seen = st;
            coll_log(COLL_LOG_ERROR, "revoked_reload_failed",
                     "\"file\": %s, \"error\": %s, \"note\": \"the list in force stays\"",
                     coll_log_str(r->path), coll_log_str(strerror(errno)));
        }
        return;
    }
    if (same_file(&st, &r->seen)) {
        return;
    }
    deny_list_t l;
    memset(&l, 0, sizeof(l));
    struct stat read_st;
    if (load_file(r->path, &l, &read_st, err, sizeof(err)) != 0) {
        r->seen = st;
        coll_log(COLL_LOG_ERROR, "revoked_reload_failed",
                 "\"error\": %s, \"note\": \"the list in force stays\"", coll_log_str(err));
        return;
    }
    list_free(&r->list);
    r->list = l;
    r->seen = read_st;
    r->reloads++;
    coll_log(COLL_LOG_INFO, "revoked_reloaded",
             "\"file\": %s, \"certificates\": %zu, "
             "\"identities\": %zu",
             coll_log_str(r->path), l.nfp, l.nids);
}

int coll_revoked_is(coll_revoked_t *r, const uint8_t *sha256, const char *identity)
{
    if (r == NULL) {
        return 0;
    }
    pthread_mutex_lock(&r->mu);
    maybe_reload(r);
    int hit = sha256 != NULL && r->list.nfp > 0 &&
              bsearch(sha256, r->list.fp, r->list.nfp, sizeof(*r->list.fp), cmp_fp) != NULL;
    if (!hit && identity != NULL && identity[0] != '\0' && r->list.nids > 0) {
        hit = bsearch(&identity, r->list.ids, r->list.nids, sizeof(*r->list.ids), cmp_id) != NULL;
    }
    pthread_mutex_unlock(&r->mu);
    return hit;
}

void coll_revoked_stats(coll_revoked_t *r, size_t *entries, uint64_t *reloads)
{
    pthread_mutex_lock(&r->mu);
    *entries = r->list.nfp + r->list.nids;
    *reloads = r->reloads;
    pthread_mutex_unlock(&r->mu);
}

void coll_revoked_free(coll_revoked_t *r)
{
    if (r == NULL) {
        return;
    }
    list_free(&r->list);
    free(r->path);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
