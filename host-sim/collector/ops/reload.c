/* SPDX-License-Identifier: Apache-2.0 */
/* SIGHUP reloads (see reload.h). */
#include "collector/ops/reload.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/ingest/counters.h"
#include "collector/fedauc/fedauc_service.h"
#include "collector/ingest/log.h"
#include "collector/net/tls_server.h"

#define GRACE_S 60 /* a replaced version is freed at a reload this long after it was replaced */

/* A replaced campaigns or credentials version, kept while a request may still hold it. */
typedef struct retired {
    coll_campaigns_t *cs;
    coll_auth_t *auth;
    time_t when;
    struct retired *next;
} retired_t;

struct coll_reload {
    coll_reload_files_t files;
    coll_app_t *app;
    coll_server_t *srv;
    int wake[2]; /* the signal handler writes 'r', stop writes 'q' */
    pthread_t th;
    const coll_campaigns_t *first_cs; /* main's: never freed here */
    const coll_auth_t *first_auth;
    retired_t *retired;
};

/* What may change: labels, and campaigns appended after the ones in force. The campaigns in
 * force stay in the same order with the same mechanism, parameters and collector options (the
 * start the store set stays). NULL, or what differs; *added: how many campaigns are new. */
static const char *same_campaigns(const coll_campaigns_t *old, coll_campaigns_t *cs, size_t *added,
                                  char *why, size_t cap)
{
    *added = 0;
    if (cs->n < old->n) {
        snprintf(why, cap, "the file has %zu campaigns, the collector runs %zu (one removed)",
                 cs->n, old->n);
        return why;
    }
    for (size_t i = 0; i < old->n; i++) {
        const coll_campaign_t *a = &old->c[i];
        coll_campaign_t *b = &cs->c[i];
        const coll_campaign_opts_t *x = &a->opts, *y = &b->opts;
        /* a file without start: the store's (first seen) stays */
        int start_same = y->has_start ? x->has_start && x->start == y->start : 1;
        if (a->mech.campaign.id != b->mech.campaign.id || a->pb_len != b->pb_len ||
            memcmp(a->pb, b->pb, a->pb_len) != 0 || a->mech.params_hash != b->mech.params_hash ||
            !start_same || x->max_examples != y->max_examples ||
            x->device_quota != y->device_quota || x->slack_seconds != y->slack_seconds ||
            x->late_seconds != y->late_seconds ||
            memcmp(&x->fedauc, &y->fedauc, sizeof(x->fedauc)) != 0) {
            snprintf(why, cap,
                     "campaign %u (position %zu) was removed, moved or changed (new campaigns go "
                     "after the ones in force)",
                     b->mech.campaign.id, i + 1);
            return why;
        }
        b->opts.has_start = a->opts.has_start;
        b->opts.start = a->opts.start;
    }
    *added = cs->n - old->n;
    return NULL;
}

/* Free the versions replaced more than GRACE_S ago (main's first ones are never here). */
static void sweep(coll_reload_t *r, time_t now)
{
    for (retired_t **p = &r->retired; *p != NULL;) {
        retired_t *x = *p;
        if (now - x->when < GRACE_S) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        free(x->cs);
        if (x->auth != NULL) {
            coll_auth_free(x->auth);
            free(x->auth);
        }
        free(x);
    }
}

static void retire(coll_reload_t *r, const coll_campaigns_t *cs, const coll_auth_t *auth)
{
    retired_t *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        return; /* kept for good: a leak, never a use after free */
    }
    x->cs = cs != r->first_cs ? (coll_campaigns_t *)cs : NULL;
    x->auth = auth != r->first_auth ? (coll_auth_t *)auth : NULL;
    x->when = time(NULL);
    x->next = r->retired;
    r->retired = x;
}

static void reload(coll_reload_t *r)
{
    char err[512] = "", why[200];
    const coll_reload_files_t *f = &r->files;
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    coll_auth_t *auth = calloc(1, sizeof(*auth));
    coll_tls_t *tls = calloc(1, sizeof(*tls));
    int tls_made = 0;
    const coll_campaigns_t *old_cs = coll_app_campaigns(r->app);
    const char *diff = NULL;
    size_t added = 0;
    int rc = cs == NULL || auth == NULL || tls == NULL
                 ? (snprintf(err, sizeof(err), "out of memory"), -1)
             : coll_campaigns_load(f->campaigns, cs, err, sizeof(err)) != 0 ? -1
             : (diff = same_campaigns(old_cs, cs, &added, why, sizeof(why))) != NULL
                 ? (snprintf(err, sizeof(err),
                             "%s: %s; without a restart only names can change and new campaigns "
                             "be added (the stored reports were made with the ones in force)",
                             f->campaigns, diff),
                    -1)
             : f->credentials != NULL && coll_auth_load(auth, f->credentials, err, sizeof(err)) != 0
                 ? -1
                 : 0;
    if (rc == 0) {
        tls_made = 1; /* coll_tls_free is safe after a failed init */
        rc = coll_tls_init(tls, f->cert, f->key, f->device_ca, err, sizeof(err));
    }
    /* last, since nothing may fail once the database knows new campaigns: the store serves the
     * new table (the old one is retired below, so nothing may keep pointing at it) */
    if (rc == 0 && r->app->sink.set_campaigns == NULL && added > 0) {
        snprintf(err, sizeof(err), "%s: this collector cannot add campaigns", f->campaigns);
        rc = -1;
    } else if (rc == 0 && r->app->sink.set_campaigns != NULL) {
        char why2[400] = "";
        rc = r->app->sink.set_campaigns(r->app->sink.ctx, cs, added, why2, sizeof(why2));
        if (rc != 0) {
            snprintf(err, sizeof(err), "%s: %s", f->campaigns, why2);
        }
    }
    if (rc != 0) {
        if (tls_made) {
            coll_tls_free(tls);
        }
        free(tls);
        coll_auth_free(auth);
        free(auth);
        free(cs);
        coll_counters_reload(r->app->counters, 0);
        coll_log(COLL_LOG_ERROR, "reload_failed",
                 "\"error\": %s, \"note\": \"nothing was changed: the campaigns, credentials and "
                 "certificates in force stay\"",
                 coll_log_str(err));
        return;
    }
    time_t now = time(NULL);
    sweep(r, now);
    const coll_auth_t *old_auth = coll_app_auth(r->app);
    if (f->credentials == NULL) {
        free(auth);
        auth = NULL;
    } else {
        __atomic_store_n(&r->app->auth, auth, __ATOMIC_RELEASE);
    }
    if (r->app->fedauc != NULL) {
        coll_fedauc_set_campaigns(r->app->fedauc, cs);
    }
    __atomic_store_n(&r->app->campaigns, cs, __ATOMIC_RELEASE);
    retire(r, old_cs, auth != NULL ? old_auth : NULL);
    coll_server_set_tls(r->srv, tls);
    coll_counters_reload(r->app->counters, 1);
    coll_log(COLL_LOG_INFO, "reloaded",
             "\"campaigns\": %zu, \"added\": %zu, \"credentials\": %zu, \"certificate\": %s, "
             "\"note\": \"open connections keep going; new ones use the new certificate\"",
             cs->n, added, auth != NULL ? auth->n : (size_t)0, coll_log_str(f->cert));
}

static void *reload_main(void *arg)
{
    coll_reload_t *r = arg;
    for (;;) {
        struct pollfd p = {r->wake[0], POLLIN, 0};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) {
            return NULL;
        }
        char buf[64];
        ssize_t n = read(r->wake[0], buf, sizeof(buf));
        if (n > 0 && memchr(buf, 'q', (size_t)n) != NULL) {
            return NULL;
        }
        if (n > 0) {
            reload(r); /* several SIGHUPs at once: one reload */
        }
    }
}

int coll_reload_start(coll_reload_t **out, const coll_reload_files_t *files, coll_app_t *app,
                      coll_server_t *srv)
{
    coll_reload_t *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return -1;
    }
    r->files = *files;
    r->app = app;
    r->srv = srv;
    r->first_cs = app->campaigns;
    r->first_auth = app->auth;
    if (pipe(r->wake) != 0) {
        free(r);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(r->wake[i], F_SETFD, FD_CLOEXEC);
    }
    fcntl(r->wake[1], F_SETFL, fcntl(r->wake[1], F_GETFL) | O_NONBLOCK);
    if (pthread_create(&r->th, NULL, reload_main, r) != 0) {
        close(r->wake[0]);
        close(r->wake[1]);
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void coll_reload_request(coll_reload_t *r)
{
    char c = 'r';
    if (r != NULL) {
        ssize_t n = write(r->wake[1], &c, 1);
        (void)n;
    }
}

void coll_reload_stop(coll_reload_t *r)
{
    if (r == NULL) {
        return;
    }
    char c = 'q';
    while (write(r->wake[1], &c, 1) < 0 && errno == EINTR) {
    }
    pthread_join(r->th, NULL);
    close(r->wake[0]);
    close(r->wake[1]);
    retire(r, coll_app_campaigns(r->app), coll_app_auth(r->app)); /* main's own stay main's */
    r->app->campaigns = r->first_cs;
    r->app->auth = r->first_auth;
    for (retired_t *x = r->retired, *next; x != NULL; x = next) {
        next = x->next;
        free(x->cs);
        if (x->auth != NULL) {
            coll_auth_free(x->auth);
            free(x->auth);
        }
        free(x);
    }
    free(r);
}
