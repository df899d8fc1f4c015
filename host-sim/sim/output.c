/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim output files (format in output.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sim/output.h"

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

void sim_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7F) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

void sim_json_number(FILE *f, double x)
{
    if (isfinite(x)) {
        fprintf(f, "%.10g", x);
    } else {
        fputs("null", f);
    }
}

static void csv_number(FILE *f, double x)
{
    if (isfinite(x)) {
        fprintf(f, "%.10g", x);
    }
}

static const char *group_name(const sim_result_t *r, int g)
{
    return r->cfg.sc->group[r->cfg.pop_group[g]].name;
}

static void item_name(const sim_result_t *r, int g, int h, char *buf, size_t cap)
{
    if (h < 0) {
        snprintf(buf, cap, "%s", group_name(r, g));
    } else {
        snprintf(buf, cap, "%s-%s", group_name(r, g), group_name(r, h));
    }
}

/* The columns every CSV row starts with. */
static void csv_config(FILE *f, const sim_result_t *r)
{
    const sim_cfg_t *c = &r->cfg;
    fprintf(f, "%" PRIu64 ",%s,%u,%s,%s,%s,", r->devices, c->spec->name, c->spec->id,
            sim_mech_name(c->spec->mechanism), c->paper ? "paper" : "sdk",
            c->spec->eps_text[c->eps_index]);
    csv_number(f, c->eps_implemented);
}

static void write_runs(FILE *f, const sim_session_t *s)
{
    fprintf(f, "devices,campaign,id,mechanism,split,eps,eps_implemented,run,metric,kind,g,h,"
               "name,truth,estimate,error,ci_lo,ci_hi,covered,sd\n");
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        for (uint32_t run = 0; r->cfg.roc && run < r->runs; run++) {
            const sim_roc_auc_run_t *a = &r->roc_auc[run];
            double truth = r->truth.roc_auc;
            csv_config(f, r);
            fprintf(f, ",%u,auc,auc,-1,-1,auc,", run);
            const double v[5] = {truth, a->est, a->est - truth, a->lo, a->hi};
            for (int x = 0; x < 5; x++) {
                csv_number(f, v[x]);
                fputc(',', f);
            }
            fprintf(f, "%s,", isnan(a->est) ? "" : (a->lo <= truth && truth <= a->hi) ? "1" : "0");
            csv_number(f, a->sd);
            fputc('\n', f);
        }
        for (uint32_t run = 0; run < r->runs; run++) {
            for (uint32_t j = 0; j < r->cfg.nmetrics; j++) {
                for (uint32_t i = 0; i < r->nitems; i++) {
                    int g, h;
                    double truth;
                    char name[2 * SIM_NAME_MAX + 2];
                    sim_result_item(r, j, i, &g, &h, &truth);
                    item_name(r, g, h, name, sizeof(name));
                    const sim_item_run_t *it = sim_result_at(r, run, j, i);
                    csv_config(f, r);
                    fprintf(f, ",%u,%s,%s,%d,%d,%s,", run, sim_metric_name(r->cfg.metrics[j]),
                            h < 0 ? "group" : "gap", g, h, name);
                    csv_number(f, truth);
                    fputc(',', f);
                    csv_number(f, it->est);
                    fputc(',', f);
                    csv_number(f, it->est - truth);
                    fputc(',', f);
                    csv_number(f, it->lo);
                    fputc(',', f);
                    csv_number(f, it->hi);
                    fprintf(f, ",%s,",
                            isnan(it->est)                         ? ""
                            : (it->lo <= truth && truth <= it->hi) ? "1"
                                                                   : "0");
                    csv_number(f, it->sd);
                    fputc('\n', f);
                }
            }
        }
    }
}

static void write_summary(FILE *f, const sim_session_t *s)
{
    fprintf(f, "devices,campaign,id,mechanism,split,eps,eps_implemented,metric,kind,g,h,name,"
               "truth,runs,mean_error,rmse,mean_abs_error,paper_abs_error,coverage,mean_sd,"
               "seconds\n");
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        if (r->cfg.roc) {
            sim_roc_summary_t rs;
            sim_result_roc_summary(r, &rs);
            csv_config(f, r);
            fprintf(f, ",auc,auc,-1,-1,auc,");
            const double v[9] = {rs.auc.truth,    (double)rs.auc.runs,   rs.auc.mean_error,
                                 rs.auc.rmse,     rs.auc.mean_abs_error, NAN,
                                 rs.auc.coverage, rs.auc.mean_sd,        r->seconds};
            for (int x = 0; x < 9; x++) {
                csv_number(f, v[x]);
                fputc(x < 8 ? ',' : '\n', f);
            }
        }
        for (uint32_t j = 0; j < r->cfg.nmetrics; j++) {
            for (uint32_t i = 0; i < r->nitems; i++) {
                int g, h;
                double truth;
                char name[2 * SIM_NAME_MAX + 2];
                sim_item_summary_t sm;
                sim_result_item(r, j, i, &g, &h, &truth);
                item_name(r, g, h, name, sizeof(name));
                sim_result_summary(r, j, i, &sm);
                csv_config(f, r);
                fprintf(f, ",%s,%s,%d,%d,%s,", sim_metric_name(r->cfg.metrics[j]),
                        h < 0 ? "group" : "gap", g, h, name);
                const double v[7] = {sm.truth,          (double)sm.runs,    sm.mean_error, sm.rmse,
                                     sm.mean_abs_error, sm.paper_abs_error, sm.coverage};
                for (int x = 0; x < 7; x++) {
                    csv_number(f, v[x]);
                    fputc(',', f);
                }
                csv_number(f, sm.mean_sd);
                fputc(',', f);
                csv_number(f, r->seconds);
                fputc('\n', f);
            }
        }
    }
}

/* ", \"key\": value" for each of n keys. */
static void json_fields(FILE *f, const char *const *keys, const double *vals, int n)
{
    for (int x = 0; x < n; x++) {
        fprintf(f, ", \"%s\": ", keys[x]);
        sim_json_number(f, vals[x]);
    }
}

/* "[est, lo, hi]": one run's estimate and interval. */
static void json_triple(FILE *f, double est, double lo, double hi)
{
    fputc('[', f);
    sim_json_number(f, est);
    fputs(", ", f);
    sim_json_number(f, lo);
    fputs(", ", f);
    sim_json_number(f, hi);
    fputc(']', f);
}

static void json_item(FILE *f, const sim_result_t *r, uint32_t j, uint32_t i)
{
    int g, h;
    double truth;
    char name[2 * SIM_NAME_MAX + 2];
    sim_item_summary_t sm;
    sim_result_item(r, j, i, &g, &h, &truth);
    item_name(r, g, h, name, sizeof(name));
    sim_result_summary(r, j, i, &sm);
    fprintf(f, "{\"kind\": \"%s\", \"g\": %d, \"h\": %d, \"name\": ", h < 0 ? "group" : "gap", g,
            h);
    sim_json_string(f, name);
    const char *keys[7] = {"truth",           "rmse",     "mean_error", "mean_abs_error",
                           "paper_abs_error", "coverage", "mean_sd"};
    const double vals[7] = {sm.truth,           sm.rmse,     sm.mean_error, sm.mean_abs_error,
                            sm.paper_abs_error, sm.coverage, sm.mean_sd};
    json_fields(f, keys, vals, 7);
    fprintf(f, ", \"runs\": [");
    for (uint32_t run = 0; run < r->runs; run++) {
        const sim_item_run_t *it = sim_result_at(r, run, j, i);
        fputs(run ? ", " : "", f);
        json_triple(f, it->est, it->lo, it->hi);
    }
    fprintf(f, "]}");
}

static void json_array(FILE *f, const char *key, const double *v, uint32_t n)
{
    fprintf(f, ", \"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        sim_json_number(f, v[i]);
    }
    fputc(']', f);
}

/* "roc": bins, edges, truth, AUC summary with per-run [est, lo, hi], run 0's curve and bands,
 * the band's coverage across runs. */
static void json_roc(FILE *f, const sim_result_t *r)
{
    const sim_cfg_t *c = &r->cfg;
    const sim_truth_t *t = &r->truth;
    uint32_t B = t->roc_bins, n = B + 1;
    sim_roc_summary_t rs;
    sim_result_roc_summary(r, &rs);
    double edges[DPM_MAX_BINS], cover[DPM_MAX_BINS + 1], mean[DPM_MAX_BINS + 1],
        rmse[DPM_MAX_BINS + 1];
    for (uint32_t b = 0; b + 1 < B; b++) {
        edges[b] = c->spec->edges[b] / 2147483648.0;
    }
    for (uint32_t j = 0; j < n; j++) {
        double v = r->roc_valid;
        cover[j] = v > 0 ? r->roc_cover[j] / v : NAN;
        mean[j] = v > 0 ? r->roc_tpr_sum[j] / v : NAN;
        rmse[j] = v > 0 ? sqrt(r->roc_tpr_sq_err[j] / v) : NAN;
    }
    fprintf(f, ",\n   \"roc\": {\"bins\": %u", B);
    json_array(f, "edges", edges, B - 1);
    fprintf(f,
            ", \"band\": \"pointwise per threshold (simultaneous: Bonferroni over the %u "
            "interior thresholds)\"",
            B - 1);
    fprintf(f, ",\n    \"truth\": {\"auc\": ");
    sim_json_number(f, t->roc_auc);
    json_array(f, "fpr", t->roc_fpr, n);
    json_array(f, "tpr", t->roc_tpr, n);
    fprintf(f, "},\n    \"auc\": {\"truth\": ");
    sim_json_number(f, rs.auc.truth);
    const char *keys[7] = {"rmse",           "mean_error", "mean_abs_error", "coverage",
                           "coverage_total", "mean_sd",    "runs_valid"};
    const double vals[7] = {rs.auc.rmse,        rs.auc.mean_error, rs.auc.mean_abs_error,
                            rs.auc.coverage,    rs.coverage_total, rs.auc.mean_sd,
                            (double)rs.auc.runs};
    json_fields(f, keys, vals, 7);
    fprintf(f, ", \"runs\": [");
    for (uint32_t run = 0; run < r->runs; run++) {
        const sim_roc_auc_run_t *a = &r->roc_auc[run];
        fputs(run ? ", " : "", f);
        json_triple(f, a->est, a->lo, a->hi);
    }
    fprintf(f, "]},\n    \"coverage\": {\"band_pointwise\": ");
    sim_json_number(f, rs.band_pointwise);
    fprintf(f, ", \"band_all_pointwise\": ");
    sim_json_number(f, rs.band_all_pointwise);
    fprintf(f, ", \"band_simultaneous\": ");
    sim_json_number(f, rs.band_simultaneous);
    json_array(f, "pointwise", cover, n);
    json_array(f, "tpr_mean", mean, n);
    json_array(f, "tpr_rmse", rmse, n);
    fprintf(f, "}");
    const dpm_roc_estimate_t *e = r->roc_run0;
    if (e != NULL && e->valid) {
        fprintf(f, ",\n    \"run0\": {\"auc\": ");
        sim_json_number(f, e->auc);
        fprintf(f, ", \"ci\": [");
        sim_json_number(f, e->ci_lo);
        fputs(", ", f);
        sim_json_number(f, e->ci_hi);
        fprintf(f, "], \"ci_total\": [");
        sim_json_number(f, e->ci_total_lo);
        fputs(", ", f);
        sim_json_number(f, e->ci_total_hi);
        fprintf(f, "], \"projected\": %s", e->projected ? "true" : "false");
        json_array(f, "fpr", e->fpr, n);
        json_array(f, "tpr", e->tpr, n);
        json_array(f, "tpr_lo", e->tpr_lo, n);
        json_array(f, "tpr_hi", e->tpr_hi, n);
        json_array(f, "tpr_lo_sim", e->tpr_lo_sim, n);
        json_array(f, "tpr_hi_sim", e->tpr_hi_sim, n);
        fprintf(f, "}");
    }
    fprintf(f, "}");
}

/* roc.csv: one row per roc_hist configuration and threshold. */
static void write_roc(FILE *f, const sim_session_t *s)
{
    fprintf(f, "devices,campaign,id,mechanism,split,eps,eps_implemented,point,threshold,"
               "fpr_truth,tpr_truth,fpr,tpr,tpr_lo,tpr_hi,tpr_lo_sim,tpr_hi_sim,tpr_mean,"
               "tpr_rmse,coverage\n");
    for (size_t k = 0; k < s->n; k++) {
        const sim_result_t *r = &s->res[k];
        if (!r->cfg.roc) {
            continue;
        }
        const dpm_roc_estimate_t *e = r->roc_run0;
        uint32_t B = r->truth.roc_bins;
        double v = r->roc_valid;
        for (uint32_t j = 0; j <= B; j++) {
            double thr = j == 0 ? 0.0 : (j == B ? NAN : r->cfg.spec->edges[j - 1] / 2147483648.0);
            int ok = e != NULL && e->valid;
            const double vals[13] = {thr,
                                     r->truth.roc_fpr[j],
                                     r->truth.roc_tpr[j],
                                     ok ? e->fpr[j] : NAN,
                                     ok ? e->tpr[j] : NAN,
                                     ok ? e->tpr_lo[j] : NAN,
                                     ok ? e->tpr_hi[j] : NAN,
                                     ok ? e->tpr_lo_sim[j] : NAN,
                                     ok ? e->tpr_hi_sim[j] : NAN,
                                     v > 0 ? r->roc_tpr_sum[j] / v : NAN,
                                     v > 0 ? sqrt(r->roc_tpr_sq_err[j] / v) : NAN,
                                     v > 0 ? r->roc_cover[j] / v : NAN,
                                     0.0};
            csv_config(f, r);
            fprintf(f, ",%u,", j);
            for (int x = 0; x < 12; x++) {
                csv_number(f, vals[x]);
                fputc(x < 11 ? ',' : '\n', f);
            }
        }
    }
}

static void json_config(FILE *f, const sim_result_t *r)
{
    const sim_cfg_t *c = &r->cfg;
    fprintf(f, "{\"devices\": %" PRIu64 ", \"campaign\": ", r->devices);
    sim_json_string(f, c->spec->name);
    fprintf(f, ", \"id\": %u, \"mechanism\": \"%s\", \"split\": \"%s\", \"eps\": ", c->spec->id,
            sim_mech_name(c->spec->mechanism), c->paper ? "paper" : "sdk");
    sim_json_number(f, strtod(c->spec->eps_text[c->eps_index], NULL));
    fprintf(f, ", \"eps_implemented\": ");
    sim_json_number(f, c->eps_implemented);
    fprintf(f, ", \"label\": ");
    sim_json_string(f, c->label);
    fprintf(f, ", \"seconds\": ");
    sim_json_number(f, r->seconds);
    fprintf(f, ", \"reports\": %" PRIu64 ", \"metrics\": [", r->reports);
    for (uint32_t j = 0; j < c->nmetrics; j++) {
        fprintf(f, "%s\n   {\"metric\": \"%s\", \"items\": [", j ? "," : "",
                sim_metric_name(c->metrics[j]));
        for (uint32_t i = 0; i < r->nitems; i++) {
            fputs(i ? ",\n    " : "\n    ", f);
            json_item(f, r, j, i);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]");
    if (c->roc) {
        json_roc(f, r);
    }
    fprintf(f, "}");
}

static const char *mode_name(sim_mode_t m)
{
    return m == SIM_MODE_EXACT ? "exact" : m == SIM_MODE_NETWORK ? "network" : "inprocess";
}

static void write_json(FILE *f, const sim_scenario_t *sc, const sim_run_opts_t *o,
                       const sim_session_t *s)
{
    fprintf(f, "{\"tool\": \"dpm-sim\", \"scenario\": ");
    sim_json_string(f, sc->name);
    fprintf(f, ", \"description\": ");
    sim_json_string(f, sc->description);
    fprintf(f,
            ", \"mode\": \"%s\", \"seed\": %" PRIu64 ", \"population_seed\": %" PRIu64
            ", \"runs\": %u, \"confidence\": ",
            mode_name(o->mode), sc->seed, sc->population_seed, sc->runs);
    sim_json_number(f, sc->confidence);
    fprintf(f, ", \"sizes\": \"%s\", \"nu2\": \"%s\", \"threads\": %u, \"seconds\": ",
            sc->sizes_estimated ? "estimated" : "known", sc->nu2_worst ? "worst" : "true",
            o->threads);
    sim_json_number(f, s->seconds);
    fprintf(f, ",\n \"configs\": [");
    for (size_t k = 0; k < s->n; k++) {
        fputs(k ? ",\n  " : "\n  ", f);
        json_config(f, &s->res[k]);
    }
    fprintf(f, "]}\n");
}

int sim_output_write(const char *dir, const sim_scenario_t *sc, const sim_run_opts_t *o,
                     const sim_session_t *s, char *err, size_t errcap)
{
    static const char *const names[4] = {"results.json", "runs.csv", "summary.csv", "roc.csv"};
    int any_roc = 0;
    for (size_t k = 0; k < s->n; k++) {
        any_roc |= s->res[k].cfg.roc;
    }
    if (sim_mkdir_p(dir) != 0) {
        snprintf(err, errcap, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < 3 + any_roc; i++) {
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
        } else if (i == 2) {
            write_summary(f, s);
        } else {
            write_roc(f, s);
        }
        if (fclose(f) != 0) {
            snprintf(err, errcap, "writing %s failed", path);
            return -1;
        }
    }
    return 0;
}
