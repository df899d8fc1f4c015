/* SPDX-License-Identifier: Apache-2.0 */
/* Wire compatibility: golden reports and campaigns of every released version, and the rules for
 * unknown fields and unknown mechanisms (README "Versions and compatibility", dpm.proto header).
 *
 * tests/vectors/wire/MANIFEST lists, per release, one case per line: the campaign the release's
 * collector publishes for its campaigns file (RELEASE/campaigns.txt), as RELEASE/CASE.campaign.hex,
 * and one report a device of that release made for it, RELEASE/CASE.report.hex. Every later
 * version must decode the campaign (dpm_campaign_decode + dpm_mech_init), decode the report and
 * check it against that campaign's mechanism (dpm_report_decode + dpm_mech_check_report: same
 * fingerprint), and re-encode both to the same bytes.
 *
 *   test_wire            check (run from the repository root, or set WIRE_VECTORS to the dir)
 *   test_wire --write [RELEASE]
 *                        add RELEASE/ vectors from the case table below and fixed inputs, for
 *                        every case that has none in RELEASE yet (its campaign block appended to
 *                        RELEASE/campaigns.txt, a MANIFEST line). RELEASE is the version of
 *                        dpm/version.h (at a release, after the bump: every case) or a later one
 *                        (ahead of that release: only the cases no release has yet, i.e. new
 *                        mechanisms; the others follow at the release). Never rewrites a file;
 *                        refuses a RELEASE older than the library's version or than a release
 *                        MANIFEST already lists (released vectors are never added to or
 *                        rewritten). Review and commit the new files.
 *
 * A new mechanism is one line in `cases` (its campaign block and the call that makes its
 * report); the checker needs no change. A mechanism whose campaign-file keys the collector does
 * not parse yet also gives `fill`, the same campaign built in code: its bytes come from
 * dpm_campaign_encode, and tests/e2e/test_wire_collector.py holds its case as pending until
 * the collector parses the block. FedAUC cases also keep the round-1 messages of the report,
 * RELEASE/CASE.upload.hex and RELEASE/CASE.reply.hex, checked the same way. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "collector/ingest/campaigns.h"
#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "estimate/fedauc.h"
#include "test_receipt.h"
#include "test_rng.h"
#include "wire_vectors.h"

/* ---- the cases: fixed inputs, one line per case ------------------------------------------ */

typedef dpm_status_t (*make_report_fn)(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out);

static dpm_status_t report_tuple(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    const dpm_ratio_t values[4] = {{3, 4}, {1, 10}, {7, 9}, {1, 2}};
    return dpm_mech_report_tuple(m, r, TEST_RECEIPT(m, 5), 1, values, out);
}

static dpm_status_t report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    const dpm_score_bins_t *b = dpm_mech_score_bins(m);
    dpm_score_hist_t h;
    dpm_status_t st = dpm_score_hist_init(&h, b);
    for (uint32_t i = 0; i < 40 && st == DPM_OK; i++) { /* 40 examples spread over [0, 1] */
        uint32_t score = (uint32_t)(((uint64_t)i * 2654435761u) % ((1u << 31) + 1u));
        st = dpm_score_hist_add(&h, b, score, (int)(score > (1u << 30)) ^ (int)(i % 5 == 0));
    }
    return st == DPM_OK ? dpm_mech_report_roc_hist(m, r, TEST_RECEIPT(m, 5), &h, out) : st;
}

/* Issue 17's mechanisms. Every report is made from fixed inputs, like the ones above. */
static dpm_status_t report_roc_groups(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    const dpm_score_bins_t *b = dpm_mech_score_bins(m);
    dpm_score_hist_t h;
    dpm_status_t st = dpm_score_hist_init(&h, b);
    for (uint32_t i = 0; i < 40 && st == DPM_OK; i++) {
        uint32_t score = (uint32_t)(((uint64_t)i * 2654435761u) % ((1u << 31) + 1u));
        st = dpm_score_hist_add(&h, b, score, (int)(score > (1u << 30)) ^ (int)(i % 5 == 0));
    }
    return st == DPM_OK ? dpm_mech_report_roc_hist_group(m, r, TEST_RECEIPT(m, 5), 2, &h, out) : st;
}

static dpm_status_t report_dpauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    const dpm_dpauc_t *d = dpm_mech_dpauc(m);
    dpm_dpauc_counts_t c;
    dpm_status_t st = dpm_dpauc_counts_init(&c, d);
    for (uint32_t i = 0; i < 40 && st == DPM_OK; i++) {
        uint32_t score = (uint32_t)(((uint64_t)i * 2654435761u) % ((1u << 31) + 1u));
        st = dpm_dpauc_counts_add(&c, d, score, (int)(score > (1u << 30)) ^ (int)(i % 5 == 0));
    }
    return st == DPM_OK ? dpm_mech_report_dpauc(m, r, TEST_RECEIPT(m, 5), &c, out) : st;
}

static dpm_status_t report_ustat_bins(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    int kendall = m->params.ustat_bins.kernel == DPM_USTAT_KENDALL;
    const dpm_ustat_example_t ex = {(1u << 31) / 3u, kendall ? 0 : 1, (1u << 31) / 5u};
    return dpm_mech_report_ustat_bins(m, r, TEST_RECEIPT(m, 5), &ex, out);
}

static dpm_status_t report_ustat_tree(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    const dpm_ustat_example_t ex = {(1u << 31) / 3u * 2u, 1, 0};
    return dpm_mech_report_ustat_tree(m, r, TEST_RECEIPT(m, 5), &ex, out);
}

/* FedAUC: round 1 of 12 examples, a server ranking them among 20 other scores, the reply
 * validated, then the report; the two round-1 messages are kept for the vector files. */
static struct {
    uint8_t upload[256], reply[256];
    size_t upload_len, reply_len;
} rounds;

static dpm_status_t report_fedauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_report_t *out)
{
    enum { N = 12, OTHERS = 20 };
    dpm_score_t scores[N];
    uint8_t labels[N];
    uint64_t ids[N];
    uint32_t q[N], perm[N], pool[N + OTHERS], rank2[N + OTHERS];
    uint64_t work[N];
    for (uint32_t i = 0; i < N; i++) { /* spread over [0, 1], two ties */
        scores[i] = (dpm_score_t)(((uint64_t)(i % 10) * 2654435761u) % ((1u << 31) + 1u));
        labels[i] = (uint8_t)((scores[i] > (1u << 30)) ^ (i % 4 == 0));
        ids[i] = 0x1000u + i;
    }
    dpm_fedauc_buffers_t b = {q, perm, work, N};
    dpm_fedauc_session_t s;
    dpm_status_t st = dpm_fedauc_prepare(m, r, scores, N, &b, &s);
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_encode(&s, rounds.upload, sizeof(rounds.upload), &rounds.upload_len);
    }
    dpm_fedauc_header_t h;
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_decode(rounds.upload, rounds.upload_len, &h, pool, N);
    }
    for (uint32_t i = 0; i < OTHERS; i++) {
        pool[N + i] =
            (uint32_t)(((uint64_t)i * 40503u) % ((1u << m->params.fedauc.score_bits) + 1u));
    }
    if (st == DPM_OK) {
        st = dpm_fa_rank2(pool, N + OTHERS, rank2, NULL);
    }
    h.total = N + OTHERS;
    if (st == DPM_OK) {
        st = dpm_fedauc_reply_encode(&h, rank2, rounds.reply, sizeof(rounds.reply),
                                     &rounds.reply_len);
    }
    dpm_fedauc_ranks_t rk;
    if (st == DPM_OK) {
        st = dpm_fedauc_accept(&s, m, rounds.reply, rounds.reply_len, ids, &rk, NULL);
    }
    dpm_memo_t memo;
    memset(&memo, 0, sizeof(memo));
    for (uint32_t i = 0; i < DPM_MEMO_KEY_BYTES && st == DPM_OK; i++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 8, &w);
        memo.key[i] = (uint8_t)w;
    }
    memo.opened = DPM_MEMO_OPENED;
    return st == DPM_OK
               ? dpm_mech_report_fedauc(m, r, TEST_RECEIPT(m, 5), &s, &rk, labels, ids, &memo, out)
               : st;
}

/* The same campaigns as their blocks below, in code (the collector parses these keys later). */
typedef void (*fill_campaign_fn)(dpm_campaign_t *c);

static void base_campaign(dpm_campaign_t *c, uint32_t id, dpm_mech_id_t mech, const char *eps,
                          const char *budget)
{
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->mechanism = mech;
    assert_int_equal(dpm_eps_from_decimal(eps, &c->eps.q16), DPM_OK);
    assert_int_equal(dpm_eps_from_decimal(budget, &c->budget.q16), DPM_OK);
    c->period_seconds = 86400;
}

static void fill_roc_groups(dpm_campaign_t *c) /* bins = 8, groups = 4 (group_eps: eps / 2) */
{
    base_campaign(c, 1701, DPM_MECH_ID_ROC_HIST, "1", "1");
    c->nbins = 7;
    for (uint32_t i = 0; i < 7; i++) {
        c->bin_edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / 8u);
    }
    c->groups = 4;
}

static void fill_dpauc(dpm_campaign_t *c) /* thresholds = 25: i / 24, Q1.31 rounded down */
{
    base_campaign(c, 1702, DPM_MECH_ID_DPAUC, "1", "1");
    c->nthresholds = 25;
    for (uint32_t i = 0; i < 25; i++) {
        c->thresholds[i] = (uint32_t)(((uint64_t)i << 31) / 24u);
    }
}

static void fill_dpauc_tight(dpm_campaign_t *c) /* thresholds = 0.1, 0.5, 0.9; tight */
{
    base_campaign(c, 1703, DPM_MECH_ID_DPAUC, "8", "16");
    c->nthresholds = 3;
    c->thresholds[0] = 214748365u; /* llround(0.1 * 2^31), as roc_hist's edges */
    c->thresholds[1] = 1u << 30;
    c->thresholds[2] = 1932735283u;
    c->calibration = DPM_DPAUC_TIGHT;
}

static void fill_ustat_bins(dpm_campaign_t *c)
{
    base_campaign(c, 1704, DPM_MECH_ID_USTAT_BINS, "1", "1");
    c->ustat_k = 16;
}

static void fill_ustat_bins_private(dpm_campaign_t *c)
{
    base_campaign(c, 1705, DPM_MECH_ID_USTAT_BINS, "2", "2");
    c->ustat_k = 8;
    c->ustat_kernel = DPM_USTAT_AUC_PRIVATE_LABEL;
}

static void fill_ustat_bins_kendall(dpm_campaign_t *c)
{
    base_campaign(c, 1706, DPM_MECH_ID_USTAT_BINS, "0.5", "1");
    c->ustat_k = 6;
    c->ustat_kernel = DPM_USTAT_KENDALL;
}

static void fill_ustat_tree(dpm_campaign_t *c)
{
    base_campaign(c, 1707, DPM_MECH_ID_USTAT_TREE, "1", "1");
    c->tree_depth = 8;
}

static void fill_ustat_tree_grr(dpm_campaign_t *c)
{
    base_campaign(c, 1708, DPM_MECH_ID_USTAT_TREE, "2", "2");
    c->tree_depth = 4;
    c->tree_grr_levels = 4;
}

/* A FedAUC campaign in code (the collector does not parse FedAUC blocks yet). */
static void fill_fedauc(dpm_campaign_t *c, uint32_t id, dpm_mech_id_t mech, uint32_t variant,
                        uint32_t share_q16, const char *eps, const char *budget)
{
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->mechanism = mech;
    (void)dpm_eps_from_decimal(eps, &c->eps.q16);
    (void)dpm_eps_from_decimal(budget, &c->budget.q16);
    c->period_seconds = 86400;
    c->fedauc_variant = variant;
    c->fedauc_p_share_q16 = share_q16;
    c->fedauc_score_bits = 16;
}

static void fill_rr(dpm_campaign_t *c)
{
    fill_fedauc(c, 6, DPM_MECH_ID_FEDAUC_RR, 0, 0, "1", "1");
}
static void fill_local(dpm_campaign_t *c)
{
    fill_fedauc(c, 7, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, "1", "1");
}
static void fill_global(dpm_campaign_t *c)
{
    fill_fedauc(c, 8, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768, "1", "1");
}
static void fill_orthogonal(dpm_campaign_t *c)
{
    fill_fedauc(c, 9, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ORTHOGONAL, 19660, "1", "1");
}
static void fill_adaptive(dpm_campaign_t *c)
{
    fill_fedauc(c, 10, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0, "2", "4");
}

typedef struct {
    const char *mechanism; /* the name in campaign files */
    dpm_mech_id_t id;
    const char *variant;  /* case name: mechanism, or mechanism.variant */
    const char *campaign; /* the campaign-file block (after "[campaign]"); ids unique */
    make_report_fn make;
    fill_campaign_fn fill; /* NULL: the collector parses `campaign`; else it in code */
} wire_case_t;

static const wire_case_t cases[] = {
    {"tuple_mr", DPM_MECH_ID_TUPLE_MR, "",
     "id = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\nmetrics = tpr\n", report_tuple, NULL},
    {"tuple_mr", DPM_MECH_ID_TUPLE_MR, "4metrics",
     "id = 2\nmechanism = tuple_mr\neps = 0.5\nbudget = 2\nperiod_seconds = 3600\ngroups = "
     "8\nmetrics = tpr, fpr, accuracy, precision\n",
     report_tuple, NULL},
    {"tuple_ml", DPM_MECH_ID_TUPLE_ML, "",
     "id = 3\nmechanism = tuple_ml\neps = 2\nbudget = 4\ngroups = 5\nmetrics = tpr, fpr\n",
     report_tuple, NULL},
    {"roc_hist", DPM_MECH_ID_ROC_HIST, "", "id = 4\nmechanism = roc_hist\neps = 1\nbins = 8\n",
     report_roc_hist, NULL},
    {"roc_hist", DPM_MECH_ID_ROC_HIST, "edges",
     "id = 5\nmechanism = roc_hist\neps = 0.25\nbudget = 1\nedges = 0.1, 0.5, 0.9\n",
     report_roc_hist, NULL},
    /* issue 17 (ids 17xx, so other work's cases of the same release keep theirs) */
    {"roc_hist", DPM_MECH_ID_ROC_HIST, "groups",
     "id = 1701\nmechanism = roc_hist\neps = 1\nbins = 8\ngroups = 4\n", report_roc_groups,
     fill_roc_groups},
    {"dpauc", DPM_MECH_ID_DPAUC, "", "id = 1702\nmechanism = dpauc\neps = 1\nthresholds = 25\n",
     report_dpauc, fill_dpauc},
    {"dpauc", DPM_MECH_ID_DPAUC, "tight",
     "id = 1703\nmechanism = dpauc\neps = 8\nbudget = 16\nthresholds = 0.1, 0.5, 0.9\ncalibration "
     "= tight\n",
     report_dpauc, fill_dpauc_tight},
    {"ustat_bins", DPM_MECH_ID_USTAT_BINS, "",
     "id = 1704\nmechanism = ustat_bins\neps = 1\nk = 16\nkernel = auc\n", report_ustat_bins,
     fill_ustat_bins},
    {"ustat_bins", DPM_MECH_ID_USTAT_BINS, "private_label",
     "id = 1705\nmechanism = ustat_bins\neps = 2\nk = 8\nkernel = auc_private_label\n",
     report_ustat_bins, fill_ustat_bins_private},
    {"ustat_bins", DPM_MECH_ID_USTAT_BINS, "kendall",
     "id = 1706\nmechanism = ustat_bins\neps = 0.5\nbudget = 1\nk = 6\nkernel = kendall\n",
     report_ustat_bins, fill_ustat_bins_kendall},
    {"ustat_tree", DPM_MECH_ID_USTAT_TREE, "",
     "id = 1707\nmechanism = ustat_tree\neps = 1\ndepth = 8\n", report_ustat_tree, fill_ustat_tree},
    {"ustat_tree", DPM_MECH_ID_USTAT_TREE, "grr",
     "id = 1708\nmechanism = ustat_tree\neps = 2\ndepth = 4\ngrr_levels = 4\n", report_ustat_tree,
     fill_ustat_tree_grr},
    {"fedauc_rr", DPM_MECH_ID_FEDAUC_RR, "",
     "id = 6\nmechanism = fedauc_rr\neps = 1\nscore_bits = 16\n", report_fedauc, fill_rr},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, "local",
     "id = 7\nmechanism = fedauc_lap\neps = 1\nvariant = local\np_share = 0.5\nscore_bits = 16\n",
     report_fedauc, fill_local},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, "global",
     "id = 8\nmechanism = fedauc_lap\neps = 1\nvariant = global\np_share = 0.5\nscore_bits = 16\n",
     report_fedauc, fill_global},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, "orthogonal",
     "id = 9\nmechanism = fedauc_lap\neps = 1\nvariant = orthogonal\np_share = 0.3\nscore_bits = "
     "16\n",
     report_fedauc, fill_orthogonal},
    {"fedauc_lap", DPM_MECH_ID_FEDAUC_LAP, "adaptive",
     "id = 10\nmechanism = fedauc_lap\neps = 2\nbudget = 4\nvariant = adaptive\nscore_bits = 16\n",
     report_fedauc, fill_adaptive},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void case_name(const wire_case_t *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", c->mechanism, c->variant[0] ? "." : "", c->variant);
}

/* The id of a mechanism name in the case table, DPM_MECH_NONE if none. */
static dpm_mech_id_t mechanism_id(const char *name)
{
    for (size_t i = 0; i < NCASES; i++) {
        if (strcmp(cases[i].mechanism, name) == 0) {
            return cases[i].id;
        }
    }
    return DPM_MECH_NONE;
}

/* ---- files ------------------------------------------------------------------------------- */

typedef struct {
    char release[32], name[64], mechanism[32];
} manifest_line_t;

#define MAX_LINES 256

/* The manifest's case lines; their number, or -1 if it cannot be read or a line is malformed. */
static int read_manifest(manifest_line_t *out, int cap)
{
    char path[512], line[256];
    snprintf(path, sizeof(path), "%s/MANIFEST", wire_vector_dir());
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    int n = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        if (n >= cap ||
            sscanf(line, "%31s %63s %31s", out[n].release, out[n].name, out[n].mechanism) != 3) {
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    return n;
}

/* The Report.body field of a mechanism's reports; 0 for a mechanism without a body here. */
static uint32_t body_field(uint32_t mechanism)
{
    switch (mechanism) {
    case DPM_MECH_ID_TUPLE_MR:
    case DPM_MECH_ID_TUPLE_ML: return 10;
    case DPM_MECH_ID_ROC_HIST: return 11;
    case DPM_MECH_ID_DPAUC: return 12;
    case DPM_MECH_ID_USTAT_BINS: return 13;
    case DPM_MECH_ID_USTAT_TREE: return 14;
    case DPM_MECH_ID_FEDAUC_RR:
    case DPM_MECH_ID_FEDAUC_LAP: return 15;
    default: return 0;
    }
}

/* ---- protobuf surgery for the unknown-field tests ---------------------------------------- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static int get_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *i < n; shift += 7) {
        uint8_t b = p[(*i)++];
        *v |= (uint64_t)(b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
            return 1;
        }
    }
    return 0;
}

/* SET_VARINT: a varint field's new value; RENUMBER: the field under another number; EXTEND:
 * bytes appended inside a length-delimited field; FLIP: one bit of the value changed. */
typedef enum { EDIT_SET_VARINT, EDIT_RENUMBER, EDIT_EXTEND, EDIT_FLIP } edit_op_t;

typedef struct {
    uint32_t field;
    edit_op_t op;
    uint64_t value;       /* SET_VARINT: the new value; RENUMBER: the new field number */
    const uint8_t *extra; /* EXTEND: bytes appended inside the length-delimited field */
    size_t extra_len;
} edit_t;

/* Copy the message in[0, n) to out with one edit applied to every occurrence of e->field;
 * the new length, 0 if in is not a flat sequence of valid fields. */
static size_t rebuild(const uint8_t *in, size_t n, const edit_t *e, uint8_t *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint64_t key = 0, v = 0;
        if (!get_varint(in, n, &i, &key)) {
            return 0;
        }
        uint32_t field = (uint32_t)(key >> 3), wt = (uint32_t)(key & 7);
        size_t vstart = i, vlen = 0;
        if (wt == 0 && !get_varint(in, n, &i, &v)) {
            return 0;
        }
        if (wt == 2 && !get_varint(in, n, &i, &v)) {
            return 0;
        }
        vlen = wt == 0 ? i - vstart : wt == 1 ? 8 : wt == 5 ? 4 : (size_t)v;
        if (wt == 2) {
            vstart = i;
        } else if (wt != 0 && wt != 1 && wt != 5) {
            return 0;
        }
        if (vstart + vlen > n) {
            return 0;
        }
        i = vstart + vlen;
        if (field != e->field || e->op == EDIT_FLIP) {
            o += put_varint(out + o, key);
            if (wt == 2) {
                o += put_varint(out + o, vlen);
            }
            memcpy(out + o, in + vstart, vlen);
            if (field == e->field) {
                out[o] ^= 0x01; /* EDIT_FLIP: the lowest bit of the value's first byte */
            }
            o += vlen;
        } else if (e->op == EDIT_SET_VARINT) {
            o += put_varint(out + o, key);
            o += put_varint(out + o, e->value);
        } else if (e->op == EDIT_RENUMBER) {
            o += put_varint(out + o, (e->value << 3) | wt);
            if (wt == 2) {
                o += put_varint(out + o, vlen);
            }
            memcpy(out + o, in + vstart, vlen);
            o += vlen;
        } else {
            o += put_varint(out + o, key);
            o += put_varint(out + o, vlen + e->extra_len);
            memcpy(out + o, in + vstart, vlen);
            memcpy(out + o + vlen, e->extra, e->extra_len);
            o += vlen + e->extra_len;
        }
    }
    return o;
}

/* Fields of a future version: numbers no message uses, one of each proto3 wire type. */
static size_t future_fields(uint8_t *p)
{
    size_t n = 0;
    n += put_varint(p + n, (1000u << 3) | 0); /* varint */
    n += put_varint(p + n, 123456789);
    n += put_varint(p + n, (1001u << 3) | 2); /* length-delimited: a string or a message */
    n += put_varint(p + n, 6);
    memcpy(p + n, "future", 6);
    n += 6;
    n += put_varint(p + n, (1002u << 3) | 1); /* fixed64 */
    memset(p + n, 0xA5, 8);
    n += 8;
    n += put_varint(p + n, (1003u << 3) | 5); /* fixed32 */
    memset(p + n, 0x5A, 4);
    return n + 4;
}

/* ---- the golden cases -------------------------------------------------------------------- */

typedef struct {
    manifest_line_t line;
    uint8_t campaign[DPM_CAMPAIGN_MAX_BYTES];
    size_t campaign_len;
    uint8_t report[DPM_REPORT_MAX_BYTES];
    size_t report_len;
    uint8_t upload[256], reply[256]; /* FedAUC cases: the round-1 messages */
    size_t upload_len, reply_len;
} golden_t;

static int is_fedauc_name(const char *mechanism)
{
    return strncmp(mechanism, "fedauc", 6) == 0;
}

static golden_t golden[MAX_LINES];
static int ngolden;

static int load_golden(void **state)
{
    (void)state;
    manifest_line_t lines[MAX_LINES];
    ngolden = read_manifest(lines, MAX_LINES);
    if (ngolden <= 0) {
        fprintf(stderr, "cannot read %s/MANIFEST (run from the repository root)\n", wire_vector_dir());
        return -1;
    }
    for (int i = 0; i < ngolden; i++) {
        golden_t *g = &golden[i];
        char rel[160];
        g->line = lines[i];
        snprintf(rel, sizeof(rel), "%.31s/%.63s.campaign.hex", lines[i].release, lines[i].name);
        g->campaign_len = wire_read_hex(rel, g->campaign, sizeof(g->campaign));
        snprintf(rel, sizeof(rel), "%.31s/%.63s.report.hex", lines[i].release, lines[i].name);
        g->report_len = wire_read_hex(rel, g->report, sizeof(g->report));
        if (is_fedauc_name(lines[i].mechanism)) {
            snprintf(rel, sizeof(rel), "%.31s/%.63s.upload.hex", lines[i].release, lines[i].name);
            g->upload_len = wire_read_hex(rel, g->upload, sizeof(g->upload));
            snprintf(rel, sizeof(rel), "%.31s/%.63s.reply.hex", lines[i].release, lines[i].name);
            g->reply_len = wire_read_hex(rel, g->reply, sizeof(g->reply));
        }
    }
    return 0;
}

/* The golden check of one campaign and report: 0 if all holds, else a message in why. */
static int check_golden(const golden_t *g, const uint8_t *campaign, size_t clen,
                        const uint8_t *report, size_t rlen, char *why, size_t cap)
{
    dpm_mech_id_t id = mechanism_id(g->line.mechanism);
    dpm_campaign_t c;
    dpm_mech_t m;
    dpm_report_t r;
    const char *reason = "";
    uint8_t again[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    if (id == DPM_MECH_NONE) {
        snprintf(why, cap, "mechanism %s is not in the case table", g->line.mechanism);
    } else if (clen == 0 || rlen == 0) {
        snprintf(why, cap, "vector files missing or not hex");
    } else if (dpm_campaign_decode(campaign, clen, &c, &reason) != DPM_OK) {
        snprintf(why, cap, "campaign does not decode: %s", reason);
    } else if (c.mechanism != id) {
        snprintf(why, cap, "campaign names mechanism %d, %s is %d", c.mechanism, g->line.mechanism,
                 id);
    } else if (dpm_mech_init(&m, &c, &reason) != DPM_OK) {
        snprintf(why, cap, "campaign refused: %s", reason);
    } else if (dpm_campaign_encode(&c, again, sizeof(again), &len) != DPM_OK || len != clen ||
               memcmp(again, campaign, clen) != 0) {
        snprintf(why, cap, "campaign re-encodes to other bytes");
    } else if (dpm_report_decode(report, rlen, &r) != DPM_OK) {
        snprintf(why, cap, "report does not decode");
    } else if (r.mechanism != id || r.campaign_id != c.id) {
        snprintf(why, cap, "report names mechanism %d, campaign %u", r.mechanism, r.campaign_id);
    } else if (dpm_mech_check_report(&m, &r, &reason) != DPM_OK) {
        snprintf(why, cap, "report check: %s", reason);
    } else if (dpm_report_encode(&r, again, sizeof(again), &len) != DPM_OK || len != rlen ||
               memcmp(again, report, rlen) != 0) {
        snprintf(why, cap, "report re-encodes to other bytes");
    } else {
        return 0;
    }
    return -1;
}

static void test_golden_vectors_decode_and_check(void **state)
{
    (void)state;
    int failed = 0;
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        char why[160];
        int bad = check_golden(g, g->campaign, g->campaign_len, g->report, g->report_len, why,
                               sizeof(why));
        print_message("# %s %-20s campaign %3zu bytes, report %3zu bytes: %s\n", g->line.release,
                      g->line.name, g->campaign_len, g->report_len, bad ? why : "ok");
        failed |= bad;
    }
    assert_int_equal(failed, 0);
}

/* Every golden campaign and report cut short: encoding into each cap below its size fails with
 * DPM_ERR_BUFFER and writes nothing past cap; decoding each strict prefix either fails and
 * leaves *out untouched, or (a prefix that ends between fields) yields a message that encodes
 * back to exactly that prefix. */
static void test_golden_cut_short(void **state)
{
    (void)state;
    static uint8_t buf[DPM_CAMPAIGN_MAX_BYTES + DPM_REPORT_MAX_BYTES + 16];
    int refused = 0;
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        dpm_report_t r, r2, keep_r;
        dpm_campaign_t c, c2, keep_c;
        size_t len = 0;
        assert_int_equal(dpm_report_decode(g->report, g->report_len, &r), DPM_OK);
        assert_int_equal(dpm_campaign_decode(g->campaign, g->campaign_len, &c, NULL), DPM_OK);
        for (size_t cap = 0; cap < g->report_len; cap++) {
            memset(buf, 0xEE, sizeof(buf));
            assert_int_equal(dpm_report_encode(&r, buf, cap, &len), DPM_ERR_BUFFER);
            assert_int_equal(buf[cap], 0xEE);
            memset(&r2, 0x5C, sizeof(r2));
            keep_r = r2;
            if (dpm_report_decode(g->report, cap, &r2) != DPM_OK) {
                assert_memory_equal(&r2, &keep_r, sizeof(r2));
                refused++;
            } else {
                assert_int_equal(dpm_report_encode(&r2, buf, sizeof(buf), &len), DPM_OK);
                assert_true(len == cap && memcmp(buf, g->report, cap) == 0);
            }
        }
        for (size_t cap = 0; cap < g->campaign_len; cap++) {
            memset(buf, 0xEE, sizeof(buf));
            assert_int_equal(dpm_campaign_encode(&c, buf, cap, &len), DPM_ERR_BUFFER);
            assert_int_equal(buf[cap], 0xEE);
            memset(&c2, 0x5C, sizeof(c2));
            keep_c = c2;
            if (dpm_campaign_decode(g->campaign, cap, &c2, NULL) != DPM_OK) {
                assert_memory_equal(&c2, &keep_c, sizeof(c2));
                refused++;
            } else if (dpm_campaign_encode(&c2, buf, sizeof(buf), &len) == DPM_OK) {
                assert_true(len == cap && memcmp(buf, g->campaign, cap) == 0);
            }
        }
    }
    print_message("# %d golden cases cut at every byte; %d prefixes refused\n", ngolden, refused);
    assert_true(refused > 0);
}

/* Negative controls: the same check refuses a report whose fingerprint, ε or value was changed
 * and a campaign whose ε was changed. */
static void test_golden_check_can_fail(void **state)
{
    (void)state;
    char why[160];
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        uint8_t bad[DPM_REPORT_MAX_BYTES + 16];
        edit_t hash = {6, EDIT_FLIP, 0, NULL, 0}; /* Report.params_hash */
        size_t n = rebuild(g->report, g->report_len, &hash, bad);
        assert_int_equal(n, g->report_len);
        assert_int_not_equal(
            check_golden(g, g->campaign, g->campaign_len, bad, n, why, sizeof(why)), 0);
        assert_string_equal(why, "report check: parameter fingerprint mismatch");
        edit_t eps = {5, EDIT_SET_VARINT, 3 * 65536, NULL, 0}; /* Report.eps_q16 */
        n = rebuild(g->report, g->report_len, &eps, bad);
        assert_int_not_equal(n, 0);
        assert_int_not_equal(
            check_golden(g, g->campaign, g->campaign_len, bad, n, why, sizeof(why)), 0);
        assert_string_equal(why, "report check: epsilon mismatch");
        edit_t ceps = {3, EDIT_SET_VARINT, 3 * 65536 + 1, NULL, 0}; /* Campaign.eps_q16 */
        n = rebuild(g->campaign, g->campaign_len, &ceps, bad);
        assert_int_not_equal(n, 0);
        assert_int_not_equal(check_golden(g, bad, n, g->report, g->report_len, why, sizeof(why)),
                             0);
    }
}

/* Every release has vectors: the current one (dpm/version.h) too. */
static void test_current_release_has_vectors(void **state)
{
    (void)state;
    int mine = 0;
    for (int i = 0; i < ngolden; i++) {
        mine += strcmp(golden[i].line.release, DPM_VERSION_STRING) == 0;
    }
    if (mine == 0) {
        print_message("# no vectors for %s: a release adds them with test_wire --write\n",
                      DPM_VERSION_STRING);
    }
    assert_true(mine > 0);
    /* cases in the table that no release has yet (added since the last release) */
    for (size_t k = 0; k < NCASES; k++) {
        char name[64];
        int seen = 0;
        case_name(&cases[k], name, sizeof(name));
        for (int i = 0; i < ngolden; i++) {
            seen |= strcmp(golden[i].line.name, name) == 0;
        }
        if (!seen) {
            print_message("# %s: not in a release yet (next release's --write adds it)\n", name);
        }
    }
}

/* 1 if this build implements mechanism id: dpm_mech_init neither calls it unknown nor "not in
 * this build" for a campaign naming it (its other parameters may well be wrong for it). */
static int implemented(uint32_t id)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = (dpm_mech_id_t)id;
    c.eps = c.budget = DPM_EPS(1);
    c.groups = 2;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    c.nbins = 1;
    c.bin_edges[0] = 1u << 30;
    c.frac_bits = DPM_FRAC_BITS;
    dpm_mech_t m;
    const char *why = "";
    dpm_status_t st = dpm_mech_init(&m, &c, &why);
    return st != DPM_ERR_UNSUPPORTED && strcmp(why, "unknown mechanism") != 0;
}

/* A mechanism of the catalogue (dpm.v1.Mechanism 1 .. 8) that this build lacks, or DPM_MECH_NONE
 * when it has them all (then there is nothing catalogue-only left to refuse). */
static uint32_t catalogue_only(void)
{
    for (uint32_t id = 1; id <= DPM_MECH_ID_TUPLE_ML; id++) {
        if (!implemented(id)) {
            return id;
        }
    }
    return DPM_MECH_NONE;
}

/* Every mechanism this build implements is in the case table (so a release writes its
 * vectors), and every one in the table is implemented. */
static void test_every_mechanism_has_a_case(void **state)
{
    (void)state;
    int n = 0;
    for (uint32_t id = 0; id < 256; id++) {
        if (implemented(id)) {
            int found = 0;
            for (size_t k = 0; k < NCASES; k++) {
                found |= cases[k].id == (dpm_mech_id_t)id;
            }
            if (!found) {
                print_message("# mechanism id %u is implemented but has no case\n", id);
            }
            assert_true(found);
            n++;
        }
    }
    for (size_t k = 0; k < NCASES; k++) {
        assert_true(implemented((uint32_t)cases[k].id));
    }
    /* negative control: the probe tells unknown and catalogue-only ids apart */
    assert_false(implemented(99));
    assert_false(implemented(DPM_MECH_NONE));
    if (catalogue_only() != DPM_MECH_NONE) {
        assert_false(implemented(catalogue_only()));
    } else {
        assert_int_equal(n, DPM_MECH_ID_TUPLE_ML); /* the whole catalogue, every one a case */
    }
    print_message("# %d mechanisms implemented, all with a case\n", n);
}

/* Unknown fields (a future version's optional additions) are skipped, at the top level and
 * inside a body, before and after the known fields; the result is what the golden bytes give. */
static void test_unknown_fields_are_skipped(void **state)
{
    (void)state;
    uint8_t extra[64];
    size_t nextra = future_fields(extra);
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        dpm_report_t want, got;
        assert_int_equal(dpm_report_decode(g->report, g->report_len, &want), DPM_OK);
        uint8_t buf[DPM_REPORT_MAX_BYTES + 256];
        /* after and before the known fields */
        memcpy(buf, g->report, g->report_len);
        memcpy(buf + g->report_len, extra, nextra);
        memset(&got, 0x33, sizeof(got));
        assert_int_equal(dpm_report_decode(buf, g->report_len + nextra, &got), DPM_OK);
        assert_memory_equal(&got, &want, sizeof(want));
        memcpy(buf, extra, nextra);
        memcpy(buf + nextra, g->report, g->report_len);
        assert_int_equal(dpm_report_decode(buf, g->report_len + nextra, &got), DPM_OK);
        assert_memory_equal(&got, &want, sizeof(want));
        /* inside the body (TupleBody is field 10, RocHistBody 11, ...) */
        uint32_t body = body_field(want.mechanism);
        edit_t e = {body, EDIT_EXTEND, 0, extra, nextra};
        size_t n = rebuild(g->report, g->report_len, &e, buf);
        assert_int_equal(n, g->report_len + nextra);
        assert_int_equal(dpm_report_decode(buf, n, &got), DPM_OK);
        assert_memory_equal(&got, &want, sizeof(want));

        /* a campaign with future fields: same campaign, same fingerprint */
        dpm_campaign_t cw, cg;
        dpm_mech_t mw, mg;
        assert_int_equal(dpm_campaign_decode(g->campaign, g->campaign_len, &cw, NULL), DPM_OK);
        memcpy(buf, g->campaign, g->campaign_len);
        memcpy(buf + g->campaign_len, extra, nextra);
        assert_int_equal(dpm_campaign_decode(buf, g->campaign_len + nextra, &cg, NULL), DPM_OK);
        assert_memory_equal(&cg, &cw, sizeof(cw));
        assert_int_equal(dpm_mech_init(&mw, &cw, NULL), DPM_OK);
        assert_int_equal(dpm_mech_init(&mg, &cg, NULL), DPM_OK);
        assert_int_equal(mg.params_hash, mw.params_hash);
        assert_int_equal(dpm_mech_check_report(&mg, &want, NULL), DPM_OK);
    }
}

/* A mechanism or body this build does not know, or a body of another kind than the report's
 * mechanism, is refused, never misread: a report naming an unknown mechanism, a catalogue
 * mechanism not built or one whose body is another kind, or carrying a future body kind or
 * another mechanism's; a campaign naming an unknown mechanism ("unknown mechanism") or one not
 * built. Outputs stay untouched. */
static void test_unknown_mechanisms_are_refused(void **state)
{
    (void)state;
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        uint8_t buf[DPM_REPORT_MAX_BYTES + 64];
        dpm_report_t r, keep;
        memset(&r, 0x44, sizeof(r));
        keep = r;
        dpm_report_t want;
        assert_int_equal(dpm_report_decode(g->report, g->report_len, &want), DPM_OK);
        uint32_t own = body_field(want.mechanism);
        const uint32_t ids[] = {99, 1000, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
            if (body_field(ids[k]) == own) {
                continue; /* the same body kind (tuple_mr / tuple_ml): a valid report */
            }
            edit_t e = {4, EDIT_SET_VARINT, ids[k], NULL, 0}; /* Report.mechanism */
            size_t n = rebuild(g->report, g->report_len, &e, buf);
            assert_int_not_equal(n, 0);
            assert_int_equal(dpm_report_decode(buf, n, &r), DPM_ERR_PROTOCOL);
            assert_memory_equal(&r, &keep, sizeof(r));
        }
        const uint32_t bodies[] = {10, 11, 12, 13, 14, 15, 16, 99}; /* other and future kinds */
        for (size_t k = 0; k < sizeof(bodies) / sizeof(bodies[0]); k++) {
            if (bodies[k] == own) {
                continue;
            }
            edit_t e = {own, EDIT_RENUMBER, bodies[k], NULL, 0};
            size_t n = rebuild(g->report, g->report_len, &e, buf);
            assert_int_not_equal(n, 0);
            assert_int_equal(dpm_report_decode(buf, n, &r), DPM_ERR_PROTOCOL);
            assert_memory_equal(&r, &keep, sizeof(r));
        }
        /* control: the same edits with the report's own mechanism and body field decode */
        edit_t same_mech = {4, EDIT_SET_VARINT, want.mechanism, NULL, 0};
        size_t len = rebuild(g->report, g->report_len, &same_mech, buf);
        assert_int_equal(dpm_report_decode(buf, len, &r), DPM_OK);
        edit_t same_body = {own, EDIT_RENUMBER, own, NULL, 0};
        len = rebuild(g->report, g->report_len, &same_body, buf);
        assert_int_equal(dpm_report_decode(buf, len, &r), DPM_OK);
        assert_memory_equal(&r, &want, sizeof(r));

        const struct {
            uint32_t id;
            dpm_status_t st;
            const char *why;
        } campaigns[] = {
            {99, DPM_ERR_PARAM, "unknown mechanism"},
            {100000, DPM_ERR_PARAM, "unknown mechanism"},
            {DPM_MECH_NONE, DPM_ERR_PARAM, "unknown mechanism"},
            /* named: "<name> not in this build (DPM_MECH_<X>=0)" */
            {catalogue_only(), DPM_ERR_UNSUPPORTED, " not in this build (DPM_MECH_"},
        };
        for (size_t k = 0; k < sizeof(campaigns) / sizeof(campaigns[0]); k++) {
            if (campaigns[k].id == DPM_MECH_NONE && k == 3) {
                continue; /* the whole catalogue is built: no catalogue-only id to refuse */
            }
            edit_t e = {2, EDIT_SET_VARINT, campaigns[k].id, NULL, 0}; /* Campaign.mechanism */
            size_t n = rebuild(g->campaign, g->campaign_len, &e, buf);
            assert_int_not_equal(n, 0);
            dpm_campaign_t c;
            assert_int_equal(dpm_campaign_decode(buf, n, &c, NULL), DPM_OK);
            assert_int_equal(c.mechanism, campaigns[k].id);
            dpm_mech_t m, mkeep;
            memset(&m, 0x55, sizeof(m));
            mkeep = m;
            const char *why = NULL;
            assert_int_equal(dpm_mech_init(&m, &c, &why), campaigns[k].st);
            if (campaigns[k].st == DPM_ERR_UNSUPPORTED) {
                size_t n_name = strlen(dpm_mech_name((dpm_mech_id_t)campaigns[k].id));
                assert_memory_equal(why, dpm_mech_name((dpm_mech_id_t)campaigns[k].id), n_name);
                assert_non_null(strstr(why + n_name, campaigns[k].why));
            } else {
                assert_string_equal(why, campaigns[k].why);
            }
            assert_memory_equal(&m, &mkeep, sizeof(m));
        }
    }
}

/* The round-1 messages of the FedAUC cases: 0, or -1 with the reason in why. The upload and
 * the reply decode, re-encode to the same bytes, name the campaign's fingerprint and one token,
 * which the report's body names too, with the upload's n and the reply's M. */
static int check_rounds(const golden_t *g, const uint8_t *reply, size_t reply_len, char *why,
                        size_t cap)
{
    dpm_campaign_t c;
    dpm_mech_t m;
    dpm_report_t r;
    dpm_fedauc_header_t hu, hr;
    uint32_t scores[64], ranks[64];
    uint8_t again[256];
    size_t len = 0;
    if (g->upload_len == 0 || reply_len == 0) {
        snprintf(why, cap, "upload or reply vector missing");
    } else if (dpm_campaign_decode(g->campaign, g->campaign_len, &c, NULL) != DPM_OK ||
               dpm_mech_init(&m, &c, NULL) != DPM_OK ||
               dpm_report_decode(g->report, g->report_len, &r) != DPM_OK) {
        snprintf(why, cap, "campaign or report does not decode");
    } else if (dpm_fedauc_upload_decode(g->upload, g->upload_len, &hu, scores, 64) != DPM_OK ||
               dpm_fedauc_reply_decode(reply, reply_len, &hr, ranks, 64) != DPM_OK) {
        snprintf(why, cap, "upload or reply does not decode");
    } else if (hu.campaign_id != c.id || hu.mechanism != (uint32_t)c.mechanism ||
               hu.params_hash != m.params_hash || hr.campaign_id != c.id ||
               hr.mechanism != (uint32_t)c.mechanism || hr.params_hash != m.params_hash) {
        snprintf(why, cap, "upload or reply names another fingerprint");
    } else if (memcmp(hu.token, hr.token, DPM_FEDAUC_TOKEN_BYTES) != 0 ||
               memcmp(hu.token, r.body.fedauc.upload_token, DPM_FEDAUC_TOKEN_BYTES) != 0) {
        snprintf(why, cap, "tokens differ");
    } else if (hr.n != hu.n || r.body.fedauc.n != hu.n || r.body.fedauc.total != hr.total) {
        snprintf(why, cap, "counts differ");
    } else {
        dpm_fedauc_session_t s;
        memset(&s, 0, sizeof(s));
        s.state = DPM_FEDAUC_UPLOADED;
        s.campaign_id = hu.campaign_id;
        s.params_hash = hu.params_hash;
        s.mechanism = hu.mechanism;
        s.n = hu.n;
        memcpy(s.token, hu.token, DPM_FEDAUC_TOKEN_BYTES);
        s.buf.scores = scores;
        if (dpm_fedauc_upload_encode(&s, again, sizeof(again), &len) != DPM_OK ||
            len != g->upload_len || memcmp(again, g->upload, len) != 0) {
            snprintf(why, cap, "upload re-encodes to other bytes");
        } else if (dpm_fedauc_reply_encode(&hr, ranks, again, sizeof(again), &len) != DPM_OK ||
                   len != reply_len || memcmp(again, reply, len) != 0) {
            snprintf(why, cap, "reply re-encodes to other bytes");
        } else {
            return 0;
        }
    }
    return -1;
}

static void test_golden_fedauc_rounds(void **state)
{
    (void)state;
    int n = 0, failed = 0;
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        if (!is_fedauc_name(g->line.mechanism)) {
            continue;
        }
        char why[160];
        int bad = check_rounds(g, g->reply, g->reply_len, why, sizeof(why));
        print_message("# %s %-20s upload %3zu bytes, reply %3zu bytes: %s\n", g->line.release,
                      g->line.name, g->upload_len, g->reply_len, bad ? why : "ok");
        failed |= bad;
        n++;
        /* negative control: a reply whose token is not the upload's is seen */
        uint8_t other[256];
        edit_t token = {4, EDIT_FLIP, 0, NULL, 0}; /* FedaucRankReply.upload_token */
        size_t len = rebuild(g->reply, g->reply_len, &token, other);
        assert_int_equal(len, g->reply_len);
        assert_int_not_equal(check_rounds(g, other, len, why, sizeof(why)), 0);
        assert_string_equal(why, "tokens differ");
    }
    assert_int_equal(failed, 0);
    print_message("# %d FedAUC cases with their round-1 messages\n", n);
}

/* Bytes that are not a valid field (not skippable) are refused: garbage after the report, a
 * truncation, a field of the deprecated group wire types. */
static void test_malformed_data_is_refused(void **state)
{
    (void)state;
    for (int i = 0; i < ngolden; i++) {
        const golden_t *g = &golden[i];
        uint8_t buf[DPM_REPORT_MAX_BYTES + 16];
        dpm_report_t r;
        memcpy(buf, g->report, g->report_len);
        buf[g->report_len] = 0xFF; /* a key whose varint never ends */
        assert_int_equal(dpm_report_decode(buf, g->report_len + 1, &r), DPM_ERR_PROTOCOL);
        buf[g->report_len] = (uint8_t)((20u << 3) | 3); /* field 20, start group */
        buf[g->report_len + 1] = (uint8_t)((20u << 3) | 4);
        assert_int_equal(dpm_report_decode(buf, g->report_len + 2, &r), DPM_ERR_PROTOCOL);
        buf[g->report_len] = (uint8_t)((20u << 3) | 2); /* a length beyond the end */
        buf[g->report_len + 1] = 5;
        assert_int_equal(dpm_report_decode(buf, g->report_len + 2, &r), DPM_ERR_PROTOCOL);
        assert_int_equal(dpm_report_decode(g->report, g->report_len - 1, &r), DPM_ERR_PROTOCOL);
    }
}

/* ---- --write ------------------------------------------------------------------------------ */

static int write_text(const char *path, const char *mode, const char *text)
{
    FILE *f = fopen(path, mode);
    if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "test_wire: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static int write_hex(const char *dir, const char *name, const char *kind, const uint8_t *b,
                     size_t n)
{
    char path[512], text[4096];
    snprintf(path, sizeof(path), "%s/%s.%s.hex", dir, name, kind);
    FILE *probe = fopen(path, "r");
    if (probe != NULL) { /* never rewritten */
        fclose(probe);
        fprintf(stderr, "test_wire --write: %s exists\n", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(text + 2 * i, 3, "%02x", b[i]);
    }
    snprintf(text + 2 * n, 2, "\n");
    return write_text(path, "w", text);
}

/* Compare versions "X.Y.Z": <0, 0, >0. */
static int version_cmp(const char *a, const char *b)
{
    unsigned x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
    sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]);
    sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]);
    for (int i = 0; i < 3; i++) {
        if (x[i] != y[i]) {
            return x[i] < y[i] ? -1 : 1;
        }
    }
    return 0;
}

/* The campaign bytes of case k: the collector's parse of its block, or its fill in code. */
static int case_campaign(size_t k, uint8_t *pb, size_t cap, size_t *len)
{
    char err[256], text[1024];
    if (cases[k].fill != NULL) {
        dpm_campaign_t c;
        cases[k].fill(&c);
        return dpm_campaign_encode(&c, pb, cap, len) == DPM_OK ? 0 : -1;
    }
    static coll_campaigns_t cs;
    int t = snprintf(text, sizeof(text), "[campaign]\n%s", cases[k].campaign);
    if (coll_campaigns_parse(text, (size_t)t, &cs, err, sizeof(err)) != 0 || cs.n != 1 ||
        cs.c[0].pb_len > cap) {
        fprintf(stderr, "test_wire --write: campaigns: %s\n", err);
        return -1;
    }
    memcpy(pb, cs.c[0].pb, cs.c[0].pb_len);
    *len = cs.c[0].pb_len;
    return 0;
}

static int write_release(const char *release)
{
    manifest_line_t lines[MAX_LINES];
    int nlines = read_manifest(lines, MAX_LINES);
    if (version_cmp(release, DPM_VERSION_STRING) < 0) {
        fprintf(stderr, "test_wire --write: %s is older than this library (%s)\n", release,
                DPM_VERSION_STRING);
        return 1;
    }
    for (int i = 0; i < nlines; i++) {
        if (version_cmp(lines[i].release, release) > 0) {
            fprintf(stderr, "test_wire --write: MANIFEST already lists %s, newer than %s\n",
                    lines[i].release, release);
            return 1;
        }
    }
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/%s", wire_vector_dir(), release);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "test_wire --write: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof(path), "%s/campaigns.txt", dir);
    FILE *exists = fopen(path, "r");
    if (exists != NULL) {
        fclose(exists);
    } else {
        char head[512];
        snprintf(head, sizeof(head),
                 "# Golden campaigns of dpmetrics %s (tests/vectors/test_wire.c --write).\n"
                 "# Every later collector must accept this file and publish exactly "
                 "CASE.campaign.hex for it.\n",
                 release);
        if (write_text(path, "w", head) != 0) {
            return 1;
        }
    }
    char mpath[600];
    snprintf(mpath, sizeof(mpath), "%s/MANIFEST", wire_vector_dir());
    if (nlines < 0 &&
        write_text(mpath, "a",
                   "# Golden wire vectors (tests/vectors/test_wire.c): every later version must "
                   "decode\n# and check them. Per line: release, case, mechanism; the files are\n"
                   "# RELEASE/CASE.campaign.hex and RELEASE/CASE.report.hex, the campaigns file\n"
                   "# RELEASE/campaigns.txt. Lines are only ever added.\n") != 0) {
        return 1;
    }
    for (size_t k = 0; k < NCASES; k++) {
        char name[64], block[1100], line[160];
        case_name(&cases[k], name, sizeof(name));
        /* at a release (the library's version): every case RELEASE lacks; ahead of one: only
         * the cases no release has (new mechanisms), the rest is written at the release */
        int ahead = version_cmp(release, DPM_VERSION_STRING) > 0, have = 0;
        for (int i = 0; i < nlines; i++) {
            have |= (ahead || strcmp(lines[i].release, release) == 0) &&
                    strcmp(lines[i].name, name) == 0;
        }
        if (have) {
            continue;
        }
        /* the device's side: the published bytes, decoded and built as a device does */
        uint8_t pb[DPM_CAMPAIGN_MAX_BYTES];
        size_t pb_len = 0;
        dpm_campaign_t c;
        dpm_mech_t m;
        dpm_report_t r;
        test_rng_t trng;
        dpm_rng_t rng;
        dpm_rand_t rand;
        uint8_t rep[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        snprintf(block, sizeof(block), "\n[campaign]  # %s\n%s", name, cases[k].campaign);
        snprintf(line, sizeof(line), "%-8s %-20s %s\n", release, name, cases[k].mechanism);
        rounds.upload_len = rounds.reply_len = 0;
        if (case_campaign(k, pb, sizeof(pb), &pb_len) != 0 ||
            dpm_campaign_decode(pb, pb_len, &c, NULL) != DPM_OK ||
            dpm_mech_init(&m, &c, NULL) != DPM_OK ||
            test_rand_init(&rand, &trng, &rng, 1000 + k) != DPM_OK ||
            cases[k].make(&m, &rand, &r) != DPM_OK ||
            dpm_report_encode(&r, rep, sizeof(rep), &len) != DPM_OK ||
            write_hex(dir, name, "campaign", pb, pb_len) != 0 ||
            write_hex(dir, name, "report", rep, len) != 0 ||
            (rounds.upload_len != 0 &&
             (write_hex(dir, name, "upload", rounds.upload, rounds.upload_len) != 0 ||
              write_hex(dir, name, "reply", rounds.reply, rounds.reply_len) != 0)) ||
            write_text(path, "a", block) != 0 || write_text(mpath, "a", line) != 0) {
            fprintf(stderr, "test_wire --write: case %s failed\n", name);
            return 1;
        }
        printf("wrote %s/%s.{campaign,report}.hex (%zu, %zu bytes)\n", dir, name, pb_len, len);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "--write") == 0) {
        return write_release(argc == 3 ? argv[2] : DPM_VERSION_STRING);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_vectors_decode_and_check),
        cmocka_unit_test(test_golden_check_can_fail),
        cmocka_unit_test(test_golden_cut_short),
        cmocka_unit_test(test_current_release_has_vectors),
        cmocka_unit_test(test_every_mechanism_has_a_case),
        cmocka_unit_test(test_unknown_fields_are_skipped),
        cmocka_unit_test(test_unknown_mechanisms_are_refused),
        cmocka_unit_test(test_malformed_data_is_refused),
        cmocka_unit_test(test_golden_fedauc_rounds),
    };
    return cmocka_run_group_tests(tests, load_golden, NULL);
}
