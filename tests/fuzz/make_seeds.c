/* SPDX-License-Identifier: Apache-2.0 */
/* Writes the seed corpora of the SDK fuzz targets from real encodings: make_seeds DIR writes
 * DIR/<target>/<seed> for http_response, upload, campaign, report, ledger, outbox, fedauc,
 * memo and dap_helper (the request target's seeds, and the golden wire vectors of every other
 * mechanism as campaign and report seeds, come from tests/fuzz/make_corpus.py). Storage images are
 * made by the real ledger, outbox and memo code on a RAM storage, reports and campaigns by the real
 * encoders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/persist.h"
#include "device/device_internal.h"
#include "dpm/expert/budget.h"
#include "dpm/dpm.h"
#include "dpm/port_hpke.h"
#include "dpm/expert/report.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/batch.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/outbox.h"
#include "fake_storage.h"
#include "fuzz_fixtures.h"
#include "collector/dap/dap_helper.h"
#include "collector/dap/dap_leader.h"
#include "fuzz_dap_roles.h"
#include "test_rng.h"

static const char *root;

static void put_file(const char *target, const char *name, const void *a, size_t alen,
                     const void *b, size_t blen)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void must(dpm_status_t st, const char *what)
{
    if (st != DPM_OK) {
        fprintf(stderr, "make_seeds: %s: %s\n", what, dpm_strerror(st));
        exit(1);
    }
}

/* ---- HTTP responses -------------------------------------------------------------------- */

/* A BatchResponse rejecting reports whose ids are n bytes equal to ids[i] (upload's ids). */
static size_t batch_response(uint8_t *buf, size_t cap, const uint8_t *ids, size_t n)
{
    size_t len = 0;
    dpm_status_t st = dpm_batch_response_put_counts(buf, cap, &len, 1, 0);
    for (size_t i = 0; i < n && st == DPM_OK; i++) {
        uint8_t id[DPM_REPORT_ID_BYTES];
        memset(id, ids[i], DPM_REPORT_ID_BYTES);
        st = dpm_batch_response_put_reject(buf, cap, &len, id, DPM_REPORT_ID_BYTES,
                                           "unknown campaign", strlen("unknown campaign"));
    }
    must(st, "BatchResponse");
    return len;
}

static size_t response(char *buf, size_t cap, const char *status, const char *headers,
                       const uint8_t *body, size_t body_len)
{
    int n = snprintf(buf, cap, "HTTP/1.1 %s\r\n%sContent-Length: %zu\r\n\r\n", status, headers,
                     body_len);
    memcpy(buf + n, body, body_len);
    return (size_t)n + body_len;
}

static void http_seeds(void)
{
    static const struct {
        const char *name;
        uint8_t cap;
        const char *text;
    } raw[] = {
        {"ok_empty", 2, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
        {"ok_body", 2,
         "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
         "Content-Length: 4\r\n\r\n\x08\x01\x10\x00"},
        {"no_content", 0, "HTTP/1.1 204 No Content\r\n\r\n"},
        {"continue_then_ok", 2,
         "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
         "Content-Length: 2\r\n\r\nhi"},
        {"http10_close", 2, "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"},
        {"connection_close", 2,
         "HTTP/1.1 503 Busy\r\nConnection: keep-alive, close\r\n"
         "Content-Length: 0\r\n\r\n"},
        {"chunked", 2, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
        {"folded", 2, "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"},
        {"too_big", 1, "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n01234567890123456"},
        {"bare_lf", 2, "HTTP/1.1 200 OK\nContent-Length: 0\n\n"},
        {"switching", 2, "HTTP/1.1 101 Switching\r\n\r\n"},
        {"trailing", 2, "HTTP/1.1 200 OK\r\ncontent-length:  3 \r\n\r\nabcHTTP/1.1 200"},
    };
    for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
        put_file("http_response", raw[i].name, &raw[i].cap, 1, raw[i].text, strlen(raw[i].text));
    }
    uint8_t body[256];
    char buf[1024];
    static const uint8_t ids[3] = {1, 2, 3};
    size_t n = batch_response(body, sizeof(body), ids, 3);
    size_t len = response(buf, sizeof(buf), "400 Bad Request",
                          "Content-Type: application/x-protobuf\r\n", body, n);
    uint8_t cap = 2;
    put_file("http_response", "batch_response_400", &cap, 1, buf, len);
}

/* ---- upload: the collector's answers, one per request, "@@@@" between them ------------- */

static void upload_seed(const char *name, uint8_t cfg, uint8_t recv_max, const char *const *ans,
                        const size_t *lens, size_t n)
{
    uint8_t buf[4096];
    size_t len = 0;
    buf[len++] = cfg;
    buf[len++] = recv_max;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            memcpy(buf + len, "@@@@", 4);
            len += 4;
        }
        memcpy(buf + len, ans[i], lens[i]);
        len += lens[i];
    }
    put_file("upload", name, buf, len, NULL, 0);
}

static void upload_seeds(void)
{
    char ok[128], busy[128], rej[512], rej404[512], rej_none[512];
    uint8_t body[256];
    size_t ok_len = response(ok, sizeof(ok), "200 OK", "", NULL, 0);
    size_t busy_len = response(busy, sizeof(busy), "503 Service Unavailable", "", NULL, 0);
    static const uint8_t two[2] = {1, 3};
    size_t n = batch_response(body, sizeof(body), two, 2);
    size_t rej_len = response(rej, sizeof(rej), "400 Bad Request", "", body, n);
    size_t rej404_len = response(rej404, sizeof(rej404), "404 Not Found", "", body, n);
    static const uint8_t foreign[1] = {0x77};
    n = batch_response(body, sizeof(body), foreign, 1);
    size_t rej_none_len = response(rej_none, sizeof(rej_none), "400 Bad Request", "", body, n);
    const char *a1[] = {ok};
    const size_t l1[] = {ok_len};
    upload_seed("one_ok", 0x00, 255, a1, l1, 1);
    const char *a2[] = {ok, ok, ok, ok};
    const size_t l2[] = {ok_len, ok_len, ok_len, ok_len};
    upload_seed("batches_of_two_ok", 0x0B, 7, a2, l2, 4); /* 4 reports, 2 per batch */
    const char *a3[] = {rej, ok};
    const size_t l3[] = {rej_len, ok_len};
    upload_seed("reject_then_ok", 0x3B, 64, a3, l3, 2);
    const char *a4[] = {busy, ok};
    const size_t l4[] = {busy_len, ok_len};
    upload_seed("busy_then_ok", 0x07, 16, a4, l4, 2);
    const char *a5[] = {rej404, rej_none};
    const size_t l5[] = {rej404_len, rej_none_len};
    upload_seed("404_then_foreign_reject", 0x3F, 3, a5, l5, 2);
    const char *a6[] = {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"};
    const size_t l6[] = {strlen(a6[0])};
    upload_seed("ok_close", 0x47, 200, a6, l6, 1);
}

/* ---- campaigns and reports ------------------------------------------------------------- */

static void campaign_and_report_seeds(void)
{
    static const char *names[FUZZ_NCAMPAIGNS] = {"tuple_mr", "tuple_ml", "roc_hist"};
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t r;
    must(test_rand_init(&r, &tr, &rng, 5), "rand");
    for (int i = 0; i < FUZZ_NCAMPAIGNS; i++) {
        dpm_campaign_t c;
        fuzz_campaign(i, &c);
        uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
        size_t len = 0;
        must(dpm_campaign_encode(&c, buf, sizeof(buf), &len), "campaign encode");
        put_file("campaign", names[i], buf, len, NULL, 0);
        static dpm_mech_t m;
        must(dpm_mech_init(&m, &c, NULL), "mech init");
        for (uint32_t period = 0; period < 2; period++) {
            dpm_report_t rep;
            must(fuzz_make_report(&m, &r, period, &rep), "report");
            uint8_t wire[DPM_REPORT_MAX_BYTES];
            must(dpm_report_encode(&rep, wire, sizeof(wire), &len), "report encode");
            char name[64];
            snprintf(name, sizeof(name), "%s_p%u", names[i], period);
            put_file("report", name, wire, len, NULL, 0);
        }
    }
    /* campaigns that must not run: unsorted edges, ε 0, a budget below ε, an unknown id */
    static const char *bad[4] = {"bad_edges", "bad_eps", "bad_budget", "bad_mechanism"};
    for (int i = 0; i < 4; i++) {
        dpm_campaign_t c;
        fuzz_campaign(i == 0 ? 2 : i % 2, &c);
        if (i == 0) {
            c.bin_edges[3] = c.bin_edges[2];
        } else if (i == 1) {
            c.eps = DPM_EPS_Q16(0);
        } else if (i == 2) {
            c.budget = DPM_EPS_Q16(c.eps.q16 - 1u);
        } else {
            c.mechanism = DPM_MECH_ID_DPAUC;
        }
        uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
        size_t len = 0;
        must(dpm_campaign_encode(&c, buf, sizeof(buf), &len), "campaign encode");
        put_file("campaign", bad[i], buf, len, NULL, 0);
    }
}

/* ---- storage images: 10 bytes of flags and operations, then the region ----------------- */

static void ledger_seeds(void)
{
    static uint8_t mem[DPM_LEDGER_MIN_REGION];
    /* flags 0 (RAM, small region, no fault), byte 1 unused, ops: charge c1 p1, query, charge
     * c2 p2, query c1 p1, reopen, charge c1 p2 (a later period), query, charge past budget */
    static const uint8_t ops[10] = {0x00, 0x00, 0x10, 0x12, 0x24, 0x12, 0x03, 0x20, 0x22, 0xD0};
    static const uint8_t fault[10] = {0x0C, 0x03, 0x10, 0x12, 0x24, 0x12, 0x03, 0x20, 0x22, 0xD0};
    for (int img = 0; img < 4; img++) {
        fake_storage_t fs;
        fake_storage_init(&fs, mem, sizeof(mem), 1);
        dpm_storage_t st = fake_storage_port(&fs);
        dpm_ledger_t l;
        char name[32];
        if (img > 0) {
            must(dpm_ledger_open(&l, &st, 0, sizeof(mem)), "ledger open");
            for (int k = 0; k < img * 2; k++) {
                must(dpm_ledger_charge(&l, 1u + (uint32_t)k % 4u, 1u + (uint32_t)k / 4u, 16384,
                                       65536),
                     "ledger charge");
            }
        }
        if (img == 3) {
            mem[sizeof(mem) / 2 + 9] ^= 0x40; /* the newer slot damaged: CRC fails */
        }
        snprintf(name, sizeof(name), "image%d", img);
        put_file("ledger", name, ops, sizeof(ops), mem, sizeof(mem));
        snprintf(name, sizeof(name), "image%d_fault", img);
        put_file("ledger", name, fault, sizeof(fault), mem, sizeof(mem));
    }
    /* Anchored (flag bit 6: 8 anchor bytes after the operations): an erased region under the
     * written anchor (must fail closed), a ledger under its anchor, and a new device (both
     * erased: the ledger starts and writes the anchor). */
    static const uint8_t mark[DPM_LEDGER_ANCHOR_BYTES] = {'D', 'P', 'L', 'G', '-', 'A', 'N', 'C'};
    uint8_t head[10 + DPM_LEDGER_ANCHOR_BYTES];
    memcpy(head, ops, 10);
    head[0] = 0x41; /* anchored, NOR flash */
    memcpy(head + 10, mark, sizeof(mark));
    memset(mem, 0xFF, sizeof(mem));
    put_file("ledger", "anchored_erased", head, sizeof(head), mem, sizeof(mem));
    fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_ledger_t l;
    must(dpm_ledger_open(&l, &st, 0, sizeof(mem)), "ledger open");
    must(dpm_ledger_charge(&l, 1, 1, 16384, 65536), "ledger charge");
    put_file("ledger", "anchored_image", head, sizeof(head), mem, sizeof(mem));
    memset(head + 10, 0xFF, sizeof(mark));
    put_file("ledger", "anchored_new", head, sizeof(head), NULL, 0);

    /* Capped (flag bit 7; byte 1's high nibble: 600 s per operation): the device cap over a
     * ledger with campaigns charged under a cap and a clock, and the same over a version 1
     * record (SDK 0.1.0's layout, written here byte by byte: the SDK writes only version 2). */
    uint8_t capped_ops[10];
    memcpy(capped_ops, ops, sizeof(capped_ops));
    capped_ops[0] = 0x81;
    capped_ops[1] = 0x20;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    must(dpm_ledger_open(&l, &st, 0, sizeof(mem)), "ledger open");
    for (uint32_t k = 0; k < 3; k++) {
        dpm_ledger_charge_t c = {1u + k, 1u, 700u * (1u + k), 16384u, 65536u};
        dpm_ledger_cap_t cap = {98304u, 1000u, 1000u + 400u * k, 0};
        must(dpm_ledger_spend(&l, &c, &cap, NULL), "ledger spend");
    }
    put_file("ledger", "capped_image", capped_ops, sizeof(capped_ops), mem, sizeof(mem));
    memset(mem, 0xFF, sizeof(mem));
    static const uint8_t v1[16 + 2 * 12] = {
        0x44, 0x50, 0x4C, 0x47, 1, 2, 0, 0, 7, 0,    0, 0,  /* magic, version 1, n 2, seq 7 */
        1,    0,    0,    0,    1, 0, 0, 0, 0, 0x80, 0, 0,  /* campaign 1, period 1, 0.5 */
        2,    0,    0,    0,    2, 0, 0, 0, 0, 0x40, 0, 0}; /* campaign 2, period 2, 0.25 */
    uint8_t rec[sizeof(v1) + 4];
    memcpy(rec, v1, sizeof(v1));
    uint32_t crc = dpm_crc32(0, v1, sizeof(v1));
    for (int i = 0; i < 4; i++) {
        rec[sizeof(v1) + (size_t)i] = (uint8_t)(crc >> (8 * i));
    }
    memcpy(mem, rec, sizeof(rec));
    memcpy(mem + sizeof(mem) / 2, rec, sizeof(rec));
    put_file("ledger", "version1", capped_ops, sizeof(capped_ops), mem, sizeof(mem));
}

static void outbox_seeds(void)
{
    static uint8_t mem[DPM_OUTBOX_MIN_REGION];
    /* ops: iterate, put r1, put r2, remove first, iterate, reopen, put r1 again, short read */
    static const uint8_t ops[10] = {0x00, 0x00, 0x00, 0x09, 0x12, 0x03, 0x00, 0x04, 0x0D, 0x06};
    static const uint8_t fault[10] = {0x0D, 0x05, 0x00, 0x09, 0x12, 0x03, 0x00, 0x04, 0x0D, 0x06};
    for (int img = 0; img < 4; img++) {
        fake_storage_t fs;
        fake_storage_init(&fs, mem, sizeof(mem), 1);
        dpm_storage_t st = fake_storage_port(&fs);
        dpm_outbox_t ob;
        char name[32];
        if (img > 0) {
            must(dpm_outbox_open(&ob, &st, 0, sizeof(mem)), "outbox open");
            for (int k = 0; k < img; k++) {
                dpm_report_t rep;
                memset(&rep, 0, sizeof(rep));
                memset(rep.report_id, 0xC0 + k, DPM_REPORT_ID_BYTES);
                rep.campaign_id = 171;
                rep.mechanism = DPM_MECH_ID_TUPLE_MR;
                rep.eps = 65536;
                rep.body.tuple.nmetrics = 1;
                rep.body.tuple.value[0] = 1;
                uint8_t wire[DPM_REPORT_MAX_BYTES];
                size_t len = 0;
                must(dpm_report_encode(&rep, wire, sizeof(wire), &len), "report encode");
                must(dpm_outbox_put(&ob, wire, len), "outbox put");
            }
            if (img >= 2) {
                uint32_t cursor = 0;
                dpm_outbox_entry_t e;
                int found = 0;
                must(dpm_outbox_next(&ob, &cursor, &e, &found), "outbox next");
                must(dpm_outbox_remove(&ob, &e), "outbox remove");
            }
        }
        snprintf(name, sizeof(name), "image%d", img);
        put_file("outbox", name, ops, sizeof(ops), mem, sizeof(mem));
        snprintf(name, sizeof(name), "image%d_fault", img);
        put_file("outbox", name, fault, sizeof(fault), mem, sizeof(mem));
    }
    /* Anchored (flag bit 6: 8 anchor bytes after the operations): the region erased under a
     * written anchor (its loss must be counted), the last image under its anchor, and a new
     * device (both erased: the outbox starts and writes the anchor). */
    static const uint8_t mark[DPM_OUTBOX_ANCHOR_BYTES] = {'D', 'P', 'O', 'B', '-', 'A', 'N', 'C'};
    uint8_t head[10 + DPM_OUTBOX_ANCHOR_BYTES];
    memcpy(head, ops, 10);
    head[0] = 0x41; /* anchored, NOR flash */
    memcpy(head + 10, mark, sizeof(mark));
    put_file("outbox", "anchored_image", head, sizeof(head), mem, sizeof(mem));
    memset(mem, 0xFF, sizeof(mem));
    put_file("outbox", "anchored_erased", head, sizeof(head), mem, sizeof(mem));
    memset(head + 10, 0xFF, sizeof(mark));
    put_file("outbox", "anchored_new", head, sizeof(head), NULL, 0);
}

/* ---- FedAUC ------------------------------------------------------------------------------ */

/* For each fixed session of fuzz_fedauc: the honest rank reply (the server's doubled
 * mid-ranks of the uploaded scores among themselves), one with a wrong token, one ranking
 * one score too few, and the session's upload (first byte | 0x80: the collector's side). */
static void fedauc_seeds(void)
{
    static fuzz_fedauc_t fx[FUZZ_FEDAUC_NMECH];
    dpm_memo_t memo;
    fuzz_fedauc_setup(fx, &memo);
    for (int i = 0; i < FUZZ_FEDAUC_NMECH; i++) {
        const dpm_fedauc_session_t *s = &fx[i].s;
        uint32_t ranks2[FUZZ_FEDAUC_N];
        for (uint32_t j = 0; j < s->n; j++) {
            uint32_t below = 0, equal = 0;
            for (uint32_t k = 0; k < s->n; k++) {
                below += s->buf.scores[k] < s->buf.scores[j];
                equal += s->buf.scores[k] == s->buf.scores[j];
            }
            ranks2[j] = 2u * below + equal + 1u;
        }
        dpm_fedauc_header_t h;
        memset(&h, 0, sizeof(h));
        h.campaign_id = s->campaign_id;
        h.mechanism = s->mechanism;
        h.params_hash = s->params_hash;
        memcpy(h.token, s->token, sizeof(h.token));
        h.total = s->n;
        h.n = s->n;
        uint8_t sel = (uint8_t)i, buf[DPM_FEDAUC_REPLY_MAX_BYTES(FUZZ_FEDAUC_CAP)];
        size_t len = 0;
        char name[64];
        for (int v = 0; v < 3; v++) {
            dpm_fedauc_header_t hv = h;
            hv.token[0] ^= (uint8_t)(v == 1);
            hv.n -= (uint32_t)(v == 2);
            if (dpm_fedauc_reply_encode(&hv, ranks2, buf, sizeof(buf), &len) != DPM_OK) {
                exit(1);
            }
            static const char *what[3] = {"reply", "reply_wrong_token", "reply_short"};
            snprintf(name, sizeof(name), "%s_%d", what[v], i);
            put_file("fedauc", name, &sel, 1, buf, len);
        }
        uint8_t up[DPM_FEDAUC_UPLOAD_MAX_BYTES(FUZZ_FEDAUC_CAP, 31u)];
        if (dpm_fedauc_upload_encode(s, up, sizeof(up), &len) != DPM_OK) {
            exit(1);
        }
        sel = (uint8_t)(0x80u | (uint8_t)i);
        snprintf(name, sizeof(name), "upload_%d", i);
        put_file("fedauc", name, &sel, 1, up, len);
    }
}

/* ---- memo ---------------------------------------------------------------------------------- */

/* The memo region erased, holding a valid record (written by dpm_memo_open), and that record
 * with one bit flipped. */
static void memo_seeds(void)
{
    static uint8_t mem[64];
    fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    dpm_storage_t st = fake_storage_port(&fs);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    dpm_memo_t m;
    put_file("memo", "erased", mem, sizeof(mem), NULL, 0);
    if (test_rand_init(&r, &t, &rng, 3) != DPM_OK || dpm_memo_open(&m, &st, 0, 64, &r) != DPM_OK) {
        exit(1);
    }
    put_file("memo", "valid", mem, sizeof(mem), NULL, 0);
    mem[10] ^= 0x10;
    put_file("memo", "bit_flip", mem, sizeof(mem), NULL, 0);
}

/* The two-aggregator targets: reports made by the device call for fuzz_dap_tasks (one per
 * task, an UploadRequest of three, a report cut short), HPKE configurations and lists, and
 * task configurations. */
static void dap_seeds(void)
{
    static dap_task_fixture_t tasks[FUZZ_NDAP_TASKS];
    static const char *names[FUZZ_NDAP_TASKS] = {"histogram16", "sumvec48", "count"};
    fuzz_dap_tasks(tasks);
    static uint8_t upload[3 * 8192], outbox_mem[4 * 8192];
    size_t upload_len = 0;
    for (int k = 0; k < FUZZ_NDAP_TASKS; k++) {
        dap_task_fixture_t *tf = &tasks[k];
        static uint8_t mem[4096], report[8192];
        static uint64_t work[1024];
        fake_storage_t fs;
        fake_storage_init(&fs, mem, sizeof(mem), 1);
        test_rng_t t;
        test_rng_seed(&t, 40u + (uint64_t)k);
        dpm_device_config_t cfg;
        memset(&cfg, 0, sizeof(cfg));
        static int64_t now = 1700000000;
        cfg.rng = test_rng_port(&t);
        cfg.clock.wall_time_s = dap_fixed_wall_clock;
        cfg.clock.ctx = &now;
        cfg.storage = fake_storage_port(&fs);
        cfg.policy.defaults.max_eps = DPM_EPS(1);
        cfg.policy.defaults.max_budget = DPM_EPS(3); /* three histogram reports at ε 1 each:
                                                         the device cap counts central ε too */
        static dpm_dap_policy_t dap;
        dap_task_policy(tf, 65536, 100, &dap);
        cfg.policy.dap = &dap;
        static dpm_device_t dev;
        must(dpm_device_init(&dev, &cfg), "dap device");
        dap_ram_outbox_t ob;
        dap_ram_outbox_init(&ob, outbox_mem, sizeof(outbox_mem));
        dpm_dap_io_t io = {
            dpm_hpke_sealer(), dap_ram_outbox(&ob), report, sizeof(report), work, 1024};
        uint64_t m[48];
        for (int i = 0; i < 48; i++) {
            m[i] = (uint64_t)(i * 5);
        }
        dpm_report_info_t info;
        for (int rep = 0; rep < (k == 0 ? 3 : 1); rep++) {
            dpm_status_t st =
                k == 0   ? dpm_device_dap_report_histogram(&dev, &io, &tf->task, (uint32_t)rep,
                                                           (uint32_t)(5 + rep), &info, NULL)
                : k == 1 ? dpm_device_dap_report_sumvec(&dev, &io, &tf->task, 0, m, 48, &info, NULL)
                         : dpm_device_dap_report_count(&dev, &io, &tf->task, 0, 1, &info, NULL);
            must(st, "dap report");
            if (k == 0) { /* the UploadRequest: three histogram reports back to back */
                memcpy(upload + upload_len, report, info.bytes);
                upload_len += info.bytes;
            }
        }
        char name[64];
        snprintf(name, sizeof(name), "%s_report", names[k]);
        put_file("dap_report", name, report, info.bytes, NULL, 0);
        if (k == 0) {
            put_file("dap_report", "histogram16_cut", report, info.bytes / 2, NULL, 0);
        }
        snprintf(name, sizeof(name), "%s_task", names[k]);
        put_file("dap_task", name, tf->config, tf->config_len, NULL, 0);
    }
    put_file("dap_report", "upload_request_3", upload, upload_len, NULL, 0);
    /* a task with an interval */
    dpm_dap_task_t t = tasks[1].task;
    t.has_interval = 1;
    t.interval_start = 472000;
    t.interval_duration = 24 * 30;
    uint8_t cfg[DPM_DAP_TASK_CONFIG_MAX];
    size_t len = 0;
    must(dpm_dap_task_config_encode(&t, cfg, sizeof(cfg), &len), "task encode");
    put_file("dap_task", "sumvec48_interval_task", cfg, len, NULL, 0);
    /* a task with discrete Gaussian central noise (its sigma2 in the extension) */
    t = tasks[1].task;
    t.dp_mechanism = DPM_DAP_DP_DISCRETE_GAUSSIAN;
    t.central_sigma2 = 1800;
    must(dpm_dap_task_config_encode(&t, cfg, sizeof(cfg), &len), "task encode");
    put_file("dap_task", "sumvec48_gaussian_task", cfg, len, NULL, 0);
    /* HPKE configurations: one alone, and a list of a P-256 one then ours */
    uint8_t one[DPM_HPKE_CONFIG_BYTES], list[2 + 74 + DPM_HPKE_CONFIG_BYTES];
    must(dpm_hpke_config_encode(&tasks[0].leader_cfg, one, sizeof(one), &len), "hpke config");
    put_file("hpke_config", "x25519_config", one, len, NULL, 0);
    static const uint8_t p256_head[9] = {9, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 65};
    list[0] = 0;
    list[1] = (uint8_t)(74 + len);
    memcpy(list + 2, p256_head, sizeof(p256_head));
    memset(list + 11, 4, 65);
    memcpy(list + 76, one, len);
    put_file("hpke_config", "list_p256_then_x25519", list, 2 + 74 + len, NULL, 0);
}

/* ---- the device's storage layout --------------------------------------------------------- */

/* A region erased, laid out by dpm_layout_open (its record), and that record with a bit flipped. */
static void layout_seeds(void)
{
    static uint8_t mem[DPM_DEVICE_MIN_REGION(0)];
    fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_storage_layout_t lay;
    put_file("layout", "erased", mem, sizeof(mem), NULL, 0);
    if (dpm_storage_layout(sizeof(mem), 0, &lay, NULL) != DPM_OK ||
        dpm_layout_open(&st, 0, sizeof(mem), 1, &lay, NULL) != DPM_OK) {
        fprintf(stderr, "make_seeds: layout failed\n");
        exit(1);
    }
    put_file("layout", "valid", mem, sizeof(mem), NULL, 0);
    mem[6] ^= 0x10;
    put_file("layout", "bit_flip", mem, sizeof(mem), NULL, 0);
}

/* dap_helper: the leader's AggregationJobInitReq for three reports (selector 0), the
 * AggregateShareReq that collects them (selector 1: right count and checksum), one with the
 * wrong count, and a job that carries report 0 again. */
static void dap_helper_seeds(void)
{
    agg_task_t k;
    dpm_dap_task_t t;
    static uint8_t buf[1 + 16384];
    uint8_t checksum[32] = {0};
    uint64_t bucket = 0;
    if (fuzz_roles_task(&k, &t) != 0) {
        fprintf(stderr, "make_seeds: the helper's fuzz task\n");
        exit(1);
    }
    size_t len =
        fuzz_roles_job(&k, &t, 0, FUZZ_ROLES_REPORTS, buf + 1, sizeof(buf) - 1, checksum, &bucket);
    if (len == 0) {
        fprintf(stderr, "make_seeds: the helper's fuzz job\n");
        exit(1);
    }
    buf[0] = 0;
    put_file("dap_helper", "job_3", buf, 1 + len, NULL, 0);
    len = fuzz_roles_job(&k, &t, 0, 1, buf + 1, sizeof(buf) - 1, NULL, NULL);
    put_file("dap_helper", "job_replay", buf, 1 + len, NULL, 0);
    buf[0] = 1;
    len = fuzz_roles_share_req(bucket, FUZZ_ROLES_REPORTS, checksum, buf + 1, sizeof(buf) - 1);
    put_file("dap_helper", "share_3", buf, 1 + len, NULL, 0);
    len = fuzz_roles_share_req(bucket, FUZZ_ROLES_REPORTS + 1, checksum, buf + 1, sizeof(buf) - 1);
    put_file("dap_helper", "share_mismatch", buf, 1 + len, NULL, 0);
    /* dap_leader: an upload of three (selector 0), a collection (1), a helper's answer (2):
     * what the helper answers to the leader's job of the same three */
    buf[0] = 0;
    len = fuzz_roles_upload(&k, &t, 0, FUZZ_ROLES_REPORTS, buf + 1, sizeof(buf) - 1);
    put_file("dap_leader", "upload_3", buf, 1 + len, NULL, 0);
    dap_collection_job_req_t q;
    memset(&q, 0, sizeof(q));
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = bucket;
    q.query.interval.duration = 1;
    buf[0] = 1;
    must(dap_msg_collection_job_req_encode(&q, buf + 1, sizeof(buf) - 1, &len), "collection");
    put_file("dap_leader", "collection", buf, 1 + len, NULL, 0);
    buf[0] = 2;
    put_file("dap_leader", "answer_empty", buf, 1, NULL, 0);
    /* the helper's real answer to the leader's first job (fuzz_dap_leader's setup: the same
     * three reports, so the same request) */
    char err[256], why[200];
    dap_store_t *ls = NULL, *hs = NULL;
    dap_leader_t leader;
    dap_helper_t helper;
    test_rng_t lr, hr;
    dpm_rng_t lp, hp;
    dpm_rand_t lrand, hrand;
    dpm_hpke_config_t collector;
    if (fuzz_roles_collector(&collector) != 0) {
        fprintf(stderr, "make_seeds: the collector's key\n");
        exit(1);
    }
    must(test_rand_init(&lrand, &lr, &lp, 98), "rand");
    must(test_rand_init(&hrand, &hr, &hp, 99), "rand");
    if (dap_store_open(&ls, "sqlite::memory:", err, sizeof(err)) != 0 ||
        dap_store_open(&hs, "sqlite::memory:", err, sizeof(err)) != 0 ||
        dap_leader_init(&leader, &t, &k.key[0], k.verify_key, ls, &collector,
                        FUZZ_ROLES_SENSITIVITY, &lrand) != 0 ||
        dap_helper_init(&helper, &t, &k.key[1], k.verify_key, hs, &collector,
                        FUZZ_ROLES_SENSITIVITY, &hrand) != 0) {
        fprintf(stderr, "make_seeds: the DAP roles\n");
        exit(1);
    }
    uint64_t now = (bucket + 1u) * t.time_precision;
    static uint8_t resp[16384];
    size_t n = 0, rlen = 0;
    dap_answer_t a;
    len = fuzz_roles_upload(&k, &t, 0, FUZZ_ROLES_REPORTS, buf, sizeof(buf));
    dap_leader_upload(&leader, buf, len, now, resp, sizeof(resp), &n, &a);
    dap_leader_job_t j;
    if (a.status != 200 ||
        dap_leader_job_start(&leader, 3, now + 2, 1, &j, why, sizeof(why)) != 1) {
        fprintf(stderr, "make_seeds: the leader's job\n");
        exit(1);
    }
    dap_helper_aggregation_job(&helper, j.req, j.req_len, now, resp + 1, sizeof(resp) - 1, &rlen,
                               &a);
    resp[0] = 2;
    put_file("dap_leader", "answer_real", resp, 1 + rlen, NULL, 0);
    dap_leader_job_free(&j);
    dap_leader_free(&leader);
    dap_helper_free(&helper);
    dap_store_close(ls);
    dap_store_close(hs);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    root = argv[1];
    http_seeds();
    upload_seeds();
    campaign_and_report_seeds();
    ledger_seeds();
    outbox_seeds();
    fedauc_seeds();
    memo_seeds();
    layout_seeds();
    dap_seeds();
    dap_helper_seeds();
    return 0;
}
