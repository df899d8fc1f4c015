/* SPDX-License-Identifier: Apache-2.0 */
/* Maintenance commands (see admin.h). */
#include "collector/ops/admin.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/ingest/campaigns.h"
#include "collector/store/store.h"

static const char *const COMMANDS[] = {"backup", "restore", "retention", "verify", "migrate"};

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
            "       dpm-collector migrate   --db URL\n",
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

int coll_admin_main(int argc, char **argv)
{
    const char *cmd = argv[1];
    admin_opts_t o;
    memset(&o, 0, sizeof(o));
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = strcmp(k, "--db") == 0             ? &o.db
                            : strcmp(k, "--to") == 0           ? &o.to
                            : strcmp(k, "--from") == 0         ? &o.from
                            : strcmp(k, "--campaigns") == 0    ? &o.campaigns
                            : strcmp(k, "--keep-periods") == 0 ? &o.keep
                            : strcmp(k, "--now") == 0          ? &o.now
                                                               : NULL;
        if (slot == NULL) {
            return usage(cmd, "unknown option");
        }
        if (v == NULL) {
            return usage(cmd, "an option lacks its value");
        }
        *slot = v;
    }
    if (o.db == NULL) {
        return usage(cmd, "--db is required");
    }
    char err[512] = "";
    int rc = 0;
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
