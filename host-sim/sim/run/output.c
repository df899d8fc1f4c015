/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim output files (format in output.h). */
#include "sim/run/output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/json_write.h"
#include "estimate/ci_flags.h"

#define DIGITS 10 /* significant digits of every number written */

int sim_mkdir_p(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char saved = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return -1;
            }
            buf[i] = saved;
        }
    }
    return 0;
}

static void csv_number(FILE *f, double x)
{
    if (isfinite(x)) {
        fprintf(f, "%.*g", DIGITS, x);
    }
}

/* The columns every CSV row starts with. */
static void csv_config(char *buf, size_t cap, const sim_result_t *r)
{
    const sim_cfg_t *c = &r->cfg;
    int n =
        snprintf(buf, cap, "%" PRIu64 ",%s,%u,%s,%s,%s,", r->devices, c->spec->name, c->spec->id,
                 c->m->name, c->paper ? "paper" : "sdk", c->spec->eps_text[c->eps_index]);
    if (n > 0 && (size_t)n < cap && isfinite(c->eps_implemented)) {
        snprintf(buf + n, cap - (size_t)n, "%.*g", DIGITS, c->eps_implemented);
    }
}

static const char kConfigColumns[] = "devices,campaign,id,mechanism,split,eps,eps_implemented";

static void item_columns(FILE *f, const sim_item_t *it)
{
    fprintf(f, "%s,%s,%d,%d,%s,", it->metric, it->kind, it->g, it->h, it->name);
}

static void write_runs(FILE *f, const sim_session_t *s)
{
    fprintf(f, "%s,run,metric,kind,g,h,name,truth,estimate,error,ci_lo,ci_hi,covered,sd,ci_flags\n",
            kConfigColumns);
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        char prefix[256];
        csv_config(prefix, sizeof(prefix), r);
        for (uint32_t run = 0; run < r->runs; run++) {
            for (uint32_t i = 0; i < r->cfg.nitems; i++) {
                const sim_item_t *item = &r->cfg.items[i];
                const sim_item_run_t *it = sim_result_at(r, run, i);
                double t = item->truth;
                fprintf(f, "%s,%u,", prefix, run);
                item_columns(f, item);
                const double v[5] = {t, it->est, it->est - t, it->lo, it->hi};
                for (int x = 0; x < 5; x++) {
                    csv_number(f, v[x]);
                    fputc(',', f);
                }
                fprintf(f, "%s,", isnan(it->est) ? "" : (it->lo <= t && t <= it->hi) ? "1" : "0");
                csv_number(f, it->sd);
                fputc(',', f);
                for (unsigned b = 0, n = 0; b < DPM_CI_FLAG_COUNT; b++) { /* names, '|' */
                    if (it->flags & (1u << b)) {
                        fprintf(f, "%s%s", n++ ? "|" : "", dpm_ci_flag_name(b));
                    }
                }
                fputc('\n', f);
            }
        }
    }
}

static void write_summary(FILE *f, const sim_session_t *s)
{
    fprintf(f,
            "%s,metric,kind,g,h,name,truth,runs,mean_error,rmse,mean_abs_error,"
            "paper_abs_error,coverage,mean_sd,seconds,flagged,no_claim\n",
            kConfigColumns);
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        char prefix[256];
        csv_config(prefix, sizeof(prefix), r);
        for (uint32_t i = 0; i < r->cfg.nitems; i++) {
            sim_item_summary_t sm;
            sim_result_summary(r, i, &sm);
            fprintf(f, "%s,", prefix);
            item_columns(f, &r->cfg.items[i]);
            const double v[11] = {sm.truth,          (double)sm.runs,    sm.mean_error, sm.rmse,
                                  sm.mean_abs_error, sm.paper_abs_error, sm.coverage,   sm.mean_sd,
                                  r->seconds,        sm.flagged,         sm.no_claim};
            for (int x = 0; x < 11; x++) {
                csv_number(f, v[x]);
                fputc(x < 10 ? ',' : '\n', f);
            }
        }
    }
}

static void json_item(jw_t *w, const sim_result_t *r, uint32_t i)
{
    const sim_item_t *item = &r->cfg.items[i];
    sim_item_summary_t sm;
    sim_result_summary(r, i, &sm);
    jw_raw(w, "{\"metric\": ");
    jw_str(w, item->metric);
    jw_raw(w, ", \"kind\": ");
    jw_str(w, item->kind);
    jw_raw(w, ", \"g\": %d, \"h\": %d, \"name\": ", item->g, item->h);
    jw_str(w, item->name);
    const char *keys[9] = {"truth",    "rmse",    "mean_error", "mean_abs_error", "paper_abs_error",
                           "coverage", "mean_sd", "flagged",    "no_claim"};
    const double vals[9] = {sm.truth,           sm.rmse,     sm.mean_error, sm.mean_abs_error,
                            sm.paper_abs_error, sm.coverage, sm.mean_sd,    sm.flagged,
                            sm.no_claim};
    for (int x = 0; x < 9; x++) {
        jw_raw(w, ", ");
        jw_key(w, keys[x]);
        jw_num(w, vals[x], DIGITS);
    }
    jw_raw(w, ", \"runs\": [");
    for (uint32_t run = 0; run < r->runs; run++) {
        const sim_item_run_t *it = sim_result_at(r, run, i);
        const double triple[3] = {it->est, it->lo, it->hi};
        jw_raw(w, "%s", run ? ", " : "");
        jw_nums(w, triple, 3, DIGITS);
    }
    jw_raw(w, "]}");
}

static void json_config(jw_t *w, const sim_result_t *r)
{
    const sim_cfg_t *c = &r->cfg;
    jw_raw(w, "{\"devices\": %" PRIu64 ", \"campaign\": ", r->devices);
    jw_str(w, c->spec->name);
    jw_raw(w, ", \"id\": %u, \"mechanism\": ", c->spec->id);
    jw_str(w, c->m->name);
    jw_raw(w, ", \"split\": \"%s\", \"eps\": ", c->paper ? "paper" : "sdk");
    jw_num(w, strtod(c->spec->eps_text[c->eps_index], NULL), DIGITS);
    jw_raw(w, ", \"eps_implemented\": ");
    jw_num(w, c->eps_implemented, DIGITS);
    jw_raw(w, ", \"label\": ");
    jw_str(w, c->label);
    jw_raw(w, ", \"seconds\": ");
    jw_num(w, r->seconds, DIGITS);
    jw_raw(w, ", \"prepare_seconds\": ");
    jw_num(w, r->prepare_seconds, DIGITS);
    jw_raw(w, ", \"reports\": %" PRIu64 ",\n   \"items\": [", r->reports);
    for (uint32_t i = 0; i < c->nitems; i++) {
        jw_raw(w, "%s", i ? ",\n    " : "\n    ");
        json_item(w, r, i);
    }
    jw_raw(w, "]");
    if (c->m->ext_json != NULL && r->ext != NULL) {
        c->m->ext_json(c, r->ext, w);
    }
    jw_raw(w, "}");
}

static const char *mode_name(sim_mode_t m)
{
    return m == SIM_MODE_EXACT ? "exact" : m == SIM_MODE_NETWORK ? "network" : "inprocess";
}

static void write_json(FILE *f, const sim_scenario_t *sc, const sim_run_opts_t *o,
                       const sim_session_t *s)
{
    jw_t w;
    jw_file(&w, f);
    jw_raw(&w, "{\"tool\": \"dpm-sim\", \"scenario\": ");
    jw_str(&w, sc->name);
    jw_raw(&w, ", \"description\": ");
    jw_str(&w, sc->description);
    jw_raw(&w,
           ", \"mode\": \"%s\", \"seed\": %" PRIu64 ", \"population_seed\": %" PRIu64
           ", \"runs\": %u, \"confidence\": ",
           mode_name(o->mode), sc->seed, sc->population_seed, sc->runs);
    jw_num(&w, sc->confidence, DIGITS);
    jw_raw(&w, ", \"sizes\": \"%s\", \"nu2\": \"%s\", \"threads\": %u, \"seconds\": ",
           sc->sizes_estimated ? "estimated" : "known", sc->nu2_worst ? "worst" : "true",
           o->threads);
    jw_num(&w, s->seconds, DIGITS);
    if (sc->data.set) { /* population = csv(...): which devices, and how a fleet is made of them */
        jw_raw(&w, ",\n \"population\": {\"source\": \"csv\", \"path\": ");
        jw_str(&w, sc->data.path);
        jw_raw(&w, ", \"file_devices\": %" PRIu64 ", \"threshold\": ", sc->data.devices);
        jw_num(&w, sc->data.threshold, DIGITS);
        jw_raw(&w, ", \"as_is\": \"devices = file_devices: each of the file's devices once, with "
                   "its own rows\", \"resampled\": \"any other devices: stratified by group "
                   "(group g gets the largest-remainder share devices x file's g devices / "
                   "file_devices), its devices drawn with replacement, uniformly, from the file's "
                   "devices of g by one multinomial on the population seed's stream; a drawn "
                   "device keeps its own rows\"}");
    }
    jw_raw(&w, ",\n \"configs\": [");
    for (size_t k = 0; k < s->n; k++) {
        jw_raw(&w, "%s", k ? ",\n  " : "\n  ");
        json_config(&w, &s->res[k]);
    }
    jw_raw(&w, "]}\n");
}

/* A mechanism's own CSV (its ext_csv_name): the rows of every configuration that has it. */
static int write_ext_csv(const char *dir, const sim_session_t *s, const sim_mech_t *m, char *err,
                         size_t errcap)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, m->ext_csv_name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errcap, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "%s,%s\n", kConfigColumns, m->ext_csv_header);
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        if (r->cfg.m == m && r->ext != NULL) {
            char prefix[256];
            csv_config(prefix, sizeof(prefix), r);
            m->ext_csv(&r->cfg, r->ext, f, prefix);
        }
    }
    if (fclose(f) != 0) {
        snprintf(err, errcap, "writing %s failed", path);
        return -1;
    }
    return 0;
}

int sim_output_write(const char *dir, const sim_scenario_t *sc, const sim_run_opts_t *o,
                     const sim_session_t *s, char *err, size_t errcap)
{
    static const char *const names[3] = {"results.json", "runs.csv", "summary.csv"};
    if (sim_mkdir_p(dir) != 0) {
        snprintf(err, errcap, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            snprintf(err, errcap, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
        if (i == 0) {
            write_json(f, sc, o, s);
        } else if (i == 1) {
            write_runs(f, s);
        } else {
            write_summary(f, s);
        }
        if (ferror(f) | (fclose(f) != 0)) {
            snprintf(err, errcap, "writing %s failed", path);
            return -1;
        }
    }
    /* each mechanism's own file, once */
    for (size_t k = 0; k < s->n; k++) {
        const sim_mech_t *m = s->res[k].cfg.m;
        int first = 1;
        for (size_t j = 0; j < k; j++) {
            first &= s->res[j].cfg.m != m;
        }
        if (first && m->ext_csv != NULL && write_ext_csv(dir, s, m, err, errcap) != 0) {
            return -1;
        }
    }
    return 0;
}
