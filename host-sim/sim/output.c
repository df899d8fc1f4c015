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
    for (int x = 0; x < 7; x++) {
        fprintf(f, ", \"%s\": ", keys[x]);
        sim_json_number(f, vals[x]);
    }
    fprintf(f, ", \"runs\": [");
    for (uint32_t run = 0; run < r->runs; run++) {
        const sim_item_run_t *it = sim_result_at(r, run, j, i);
        fprintf(f, "%s[", run ? ", " : "");
        sim_json_number(f, it->est);
        fputs(", ", f);
        sim_json_number(f, it->lo);
        fputs(", ", f);
        sim_json_number(f, it->hi);
        fputc(']', f);
    }
    fprintf(f, "]}");
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
    fprintf(f, "]}");
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
        if (fclose(f) != 0) {
            snprintf(err, errcap, "writing %s failed", path);
            return -1;
        }
    }
    return 0;
}
