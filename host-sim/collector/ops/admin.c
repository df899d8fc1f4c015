/* SPDX-License-Identifier: Apache-2.0 */
/* Maintenance commands (see admin.h). */
#include "collector/ops/admin.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/api/estimate_json.h"
#include "collector/ingest/campaigns.h"
#include "collector/store/store.h"
#include "common/err.h"

static const char *const COMMANDS[] = {"backup", "restore", "retention",
                                       "verify", "migrate", "estimate"};

int coll_admin_is_command(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++) {
        if (strcmp(argv[1], COMMANDS[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    const char *db, *to, *from, *campaigns, *keep, *now;
    const char *campaign, *period, *pfrom, *pto, *confidence; /* estimate */
} admin_opts_t;

static int usage(const char *cmd, const char *why)
{
    fprintf(stderr,
            "dpm-collector %s: %s\n"
            "usage: dpm-collector backup    --db URL --to FILE\n"
            "       dpm-collector restore   --from FILE --db URL\n"
            "       dpm-collector retention --db URL --campaigns FILE --keep-periods N "
            "[--now UNIX]\n"
            "       dpm-collector verify    --db URL\n"
            "       dpm-collector migrate   --db URL\n"
            "       dpm-collector estimate  --db URL --campaigns FILE [--campaign ID]\n"
            "                               [--period P | --from A --to B] [--confidence C] "
            "[--now UNIX]\n",
            cmd, why);
    return 2;
}

/* dpm-collector retention: drop the periods before the newest keep of every campaign. */
static int retention(const char *cmd, const admin_opts_t *o, char *err, size_t errcap)
{
    char *end = NULL;
    unsigned long keep = o->keep != NULL ? strtoul(o->keep, &end, 10) : 0;
    if (o->campaigns == NULL || o->keep == NULL || *end != '\0' || keep < 1 ||
        keep > 1000000000ul) {
        return usage(cmd, "--campaigns and --keep-periods N (N >= 1) are required");
    }
    int64_t now = o->now != NULL ? (int64_t)strtoll(o->now, NULL, 10) : (int64_t)time(NULL);
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    if (cs == NULL || coll_campaigns_load(o->campaigns, cs, err, errcap) != 0) {
        fprintf(stderr, "dpm-collector retention: %s\n", cs ? err : "out of memory");
        free(cs);
        return cs ? 2 : 1;
    }
    uint64_t reports = 0, periods = 0, uploads = 0;
    int rc = coll_store_retention(o->db, cs, (uint32_t)keep, now, &reports, &periods, &uploads, err,
                                  errcap);
    free(cs);
    if (rc != 0) {
        fprintf(stderr, "dpm-collector retention: %s\n", err);
        return 1;
    }
    printf("dropped %llu period(s) with %llu report(s) and %llu FedAUC upload(s); kept the newest "
           "%lu period(s) of each campaign\n",
           (unsigned long long)periods, (unsigned long long)reports, (unsigned long long)uploads,
           keep);
    return 0;
}

/* The query string the estimate endpoint would get: its parser checks the values. */
static int estimate_query(const admin_opts_t *o, coll_estimate_query_t *q, char *err, size_t cap)
{
    char qs[256] = "";
    const char *keys[] = {"period", "from", "to", "confidence"};
    const char *vals[] = {o->period, o->pfrom, o->pto, o->confidence};
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        if (vals[i] != NULL) {
            int w = snprintf(qs + n, sizeof(qs) - n, "%s%s=%s", n ? "&" : "", keys[i], vals[i]);
            if (w < 0 || (size_t)w >= sizeof(qs) - n) {
                return host_fail(err, cap, "%s", "an option's value is too long");
            }
            n += (size_t)w;
        }
    }
    return coll_estimate_parse_query(qs, q, err, cap);
}

/* dpm-collector estimate: the estimates of a store, read-only, as the collectors' endpoint
 * gives them (the same code from the same sums: equal byte for byte at the same --now). */
static int estimate(const char *cmd, const admin_opts_t *o, char *err, size_t errcap)
{
    coll_estimate_query_t q;
    memset(&q, 0, sizeof(q));
    if (o->campaigns == NULL) {
        return usage(cmd, "--campaigns FILE is required: the campaigns file the collector served");
    }
    if (estimate_query(o, &q, err, errcap) != 0) {
        return usage(cmd, err);
    }
    char *end = NULL;
    int64_t now = o->now != NULL ? (int64_t)strtoll(o->now, &end, 10) : (int64_t)time(NULL);
    if (o->now != NULL && (*end != '\0' || end == o->now)) {
        return usage(cmd, "--now takes Unix seconds");
    }
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    coll_campaign_state_t *st = calloc(1, sizeof(*st));
    coll_totals_t *totals = calloc(1, sizeof(*totals));
    coll_store_t *store = NULL;
    char **jsons = NULL;
    size_t *lens = NULL, njson = 0;
    int rc = 1, one = -1;
    if (cs == NULL || st == NULL || totals == NULL) {
        snprintf(err, errcap, "out of memory");
        goto out;
    }
    if (coll_campaigns_load(o->campaigns, cs, err, errcap) != 0) {
        goto out;
    }
    if (o->campaign != NULL) {
        unsigned long id = strtoul(o->campaign, &end, 10);
        one = *end == '\0' && end != o->campaign && id <= UINT32_MAX
                  ? coll_campaigns_index(cs, (uint32_t)id)
                  : -1;
        if (one < 0) {
            snprintf(err, errcap, "campaign %s is not in %s: give one of its ids", o->campaign,
                     o->campaigns);
            rc = 2;
            goto out;
        }
    }
    if (coll_store_open_reader(&store, o->db, cs, err, errcap) != 0) {
        goto out;
    }
    /* every estimate first, printed only when all are there: an error prints nothing */
    size_t lo = one < 0 ? 0 : (size_t)one, hi = one < 0 ? cs->n : (size_t)one + 1;
    njson = hi;
    if ((jsons = calloc(hi, sizeof(*jsons))) == NULL ||
        (lens = calloc(hi, sizeof(*lens))) == NULL) {
        snprintf(err, errcap, "out of memory");
        goto out;
    }
    for (size_t ci = lo; ci < hi; ci++) {
        if (coll_store_read(store, (int)ci, q.from, q.to, st, totals, err, errcap) != 0) {
            goto out;
        }
        if (st->fa.on && !q.all && q.from == q.to) {
            /* one FedAUC period's estimate needs its phase, which only the collectors keep */
            snprintf(err, errcap,
                     "campaign %u is FedAUC: one period's estimate needs its phase, which the "
                     "collectors compute; ask their /v1/campaigns/%u/estimate?period=%u, or give "
                     "a range of periods or another --campaign",
                     cs->c[ci].mech.campaign.id, cs->c[ci].mech.campaign.id, q.from);
            goto out;
        }
        if (coll_estimate_json(cs, (int)ci, &q, st, totals, now, &jsons[ci], &lens[ci]) != 0) {
            snprintf(err, errcap, "out of memory");
            goto out;
        }
    }
    for (size_t ci = lo; ci < hi; ci++) { /* in an array, each object's \n comes from it */
        fputs(one >= 0 ? "" : ci == lo ? "[\n" : ",\n", stdout);
        fwrite(jsons[ci], 1, one < 0 && lens[ci] > 0 ? lens[ci] - 1 : lens[ci], stdout);
    }
    if (one < 0) {
        fputs(cs->n > 0 ? "\n]\n" : "[]\n", stdout);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
    if (rc != 0) {
        snprintf(err, errcap, "cannot write the estimates to standard output");
    }
out:
    for (size_t i = 0; jsons != NULL && i < njson; i++) {
        free(jsons[i]);
    }
    free(jsons);
    free(lens);
    coll_store_close(store);
    free(cs);
    free(st);
    free(totals);
    if (rc == 2) {
        return usage(cmd, err);
    }
    if (rc != 0) {
        fprintf(stderr, "dpm-collector %s: %s\n", cmd, err);
    }
    return rc;
}

/* Where an option's value goes; each command takes its own options only (estimate's --from and
 * --to are periods, restore's and backup's files). NULL for an option the command lacks. */
static const char **option_slot(admin_opts_t *o, const char *k, int estimate_cmd)
{
    enum { OTHERS, ESTIMATE, ALL };
    const struct {
        const char *name;
        const char **slot;
        int who;
    } table[] = {
        {"--db", &o->db, ALL},
        {"--campaigns", &o->campaigns, ALL},
        {"--now", &o->now, ALL},
        {"--to", &o->to, OTHERS},
        {"--from", &o->from, OTHERS},
        {"--keep-periods", &o->keep, OTHERS},
        {"--campaign", &o->campaign, ESTIMATE},
        {"--period", &o->period, ESTIMATE},
        {"--from", &o->pfrom, ESTIMATE},
        {"--to", &o->pto, ESTIMATE},
        {"--confidence", &o->confidence, ESTIMATE},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(k, table[i].name) == 0 &&
            (table[i].who == ALL || table[i].who == (estimate_cmd ? ESTIMATE : OTHERS))) {
            return table[i].slot;
        }
    }
    return NULL;
}

int coll_admin_main(int argc, char **argv)
{
    const char *cmd = argv[1];
    admin_opts_t o;
    memset(&o, 0, sizeof(o));
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = option_slot(&o, k, strcmp(cmd, "estimate") == 0);
        if (slot == NULL || v == NULL) {
            char why[160];
            snprintf(why, sizeof(why), slot == NULL ? "unknown option %s" : "%s lacks its value",
                     k);
            return usage(cmd, why);
        }
        *slot = v;
    }
    if (o.db == NULL) {
        return usage(cmd, "--db is required");
    }
    char err[512] = "";
    int rc = 0;
    if (strcmp(cmd, "estimate") == 0) {
        return estimate(cmd, &o, err, sizeof(err));
    }
    if (strcmp(cmd, "backup") == 0) {
        if (o.to == NULL) {
            return usage(cmd, "--to is required");
        }
        /* a backup holds every report: readable by its owner only, like the database (the
         * SQLite copy and pg_dump's file are both created under this mask) */
        umask(077);
        if ((rc = coll_store_backup(o.db, o.to, err, sizeof(err))) == 0) {
            printf("backup of %s written to %s\n", o.db, o.to);
        }
    } else if (strcmp(cmd, "restore") == 0) {
        if (o.from == NULL) {
            return usage(cmd, "--from is required");
        }
        if ((rc = coll_store_restore(o.from, o.db, err, sizeof(err))) == 0) {
            printf("%s restored into %s\n", o.from, o.db);
        }
    } else if (strcmp(cmd, "verify") == 0) {
        uint64_t n = 0;
        if ((rc = coll_store_verify(o.db, &n, err, sizeof(err))) == 0) {
            printf("ok: the stored sums equal the sums of the %llu stored reports\n",
                   (unsigned long long)n);
        }
    } else if (strcmp(cmd, "migrate") == 0) {
        int from = -1, to = 0;
        if ((rc = coll_store_migrate(o.db, &from, &to, err, sizeof(err))) == 0) {
            if (from < 0) {
                printf("created schema version %d\n", to);
            } else if (from == to) {
                printf("schema version %d: nothing to do\n", to);
            } else {
                printf("migrated schema version %d to %d\n", from, to);
            }
        }
    } else {
        return retention(cmd, &o, err, sizeof(err));
    }
    if (rc != 0) {
        fprintf(stderr, "dpm-collector %s: %s\n", cmd, err);
        return 1;
    }
    return 0;
}
