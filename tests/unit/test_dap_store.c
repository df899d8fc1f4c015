/* SPDX-License-Identifier: Apache-2.0 */
/* One DAP aggregator's durable state (host-sim/collector/dap/dap_store.h), on SQLite, or on the
 * database $DPM_TEST_DB names (tests/e2e/test_collector_pg.py runs this program on a
 * PostgreSQL cluster, with $DPM_TEST_DB_EMPTY an empty database for the earlier layout). Each test
 * uses its own random task id, so they share one database. Output shares here are vectors of 64-bit
 * counters (the store only stores and adds them). Checked:
 *   - upload: a report id once (a second upload is a replay and changes nothing); none into a
 *     collected batch;
 *   - the leader's collection waits (DAP_STORE_PENDING, nothing marked) while a report of the
 *     batch is uploaded but not claimed, or in a job not yet committed;
 *   - jobs: claimed oldest first, never one report twice (also by two processes at once, whose
 *     commits into the same buckets both count); a
 *     stale job taken over with its id and reports; committed once: a retry with the same
 *     request gets the first commit's errors and adds nothing, another request under the
 *     same id is refused; an id aggregated in an earlier job is report_replayed; a report
 *     into a collected batch is batch_collected; rejected reports counted by reason, never
 *     summed;
 *   - collection: the exact sums, count and checksum (XOR of SHA-256 of the ids); below the
 *     minimum batch size nothing is collected or marked; a batch overlapping a collected one
 *     is refused; the release (its noise) is drawn once: the same request again gets the kept
 *     bytes; a release that refuses marks and keeps nothing;
 *   - kill -9 of a leader in the middle of its commits: every acknowledged job is in the sums
 *     exactly once, at most the one whose acknowledgement was cut off too; a leader killed
 *     between its claim and its commit adds nothing; the stale jobs are taken over and the
 *     final collection counts every report once;
 *   - a store of the earlier layout (each report's bytes in dap_reports.report): opened,
 *     the bytes move to dap_report_bodies, claimed reports keep their job, free ones are
 *     claimed oldest first with their bytes, and the column is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "aggregator/dap_msg.h"
#include "collector/dap/dap_store.h"
#include "collector/store/sqldb.h"
#include "mbedtls/sha256.h"
#include "test_rng.h"

#define L 4u           /* counters per output share */
#define SHARE (L * 8u) /* bytes of one */

static char g_path[256]; /* the SQLite file when $DPM_TEST_DB is not set (set once in main) */

static const char *db_url(void)
{
    const char *e = getenv("DPM_TEST_DB");
    return e != NULL && *e ? e : g_path;
}

static dap_store_t *open_store(void)
{
    dap_store_t *s = NULL;
    char err[256];
    int rc = dap_store_open(&s, db_url(), err, sizeof(err));
    if (rc != 0) {
        fail_msg("dap_store_open(%s): %s", db_url(), err);
    }
    return s;
}

/* A call's result, with the store's message when it failed. */
#define EXPECT(s, call, want)                                                                      \
    do {                                                                                           \
        int64_t got_ = (call);                                                                     \
        if (got_ != (int64_t)(want)) {                                                             \
            fail_msg("%s: %lld, want %lld (%s)", #call, (long long)got_, (long long)(want),        \
                     dap_store_error(s));                                                          \
        }                                                                                          \
    } while (0)

static test_rng_t g_rng;

static void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)test_rng_next(&g_rng);
    }
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

static int add_u64(void *ctx, uint8_t *acc, const uint8_t *add, size_t bytes)
{
    (void)ctx;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        put_u64(acc + i, get_u64(acc + i) + get_u64(add + i));
    }
    return 0;
}

/* A release that "draws noise" from a counter, so that a second draw would show: the first
 * counter of the sum gets 1000 * (the number of releases made so far). */
typedef struct {
    int calls;
    int refuse;
} release_t;

static int release(void *ctx, uint8_t *agg, const dap_store_batch_t *batch, uint8_t *out,
                   size_t cap, size_t *len)
{
    release_t *r = ctx;
    (void)batch;
    if (r->refuse || cap < SHARE) {
        return -1;
    }
    r->calls++;
    put_u64(agg, get_u64(agg) + 1000u * (uint64_t)r->calls);
    memcpy(out, agg, SHARE);
    *len = SHARE;
    return 0;
}

static release_t g_release;    /* each process's own (forked children get a copy) */
static int g_wait_for_pending; /* collect() as the leader does */

/* Collect [start, end) under request `req` (its first byte) into agg (the release's bytes). */
static int collect(dap_store_t *s, const uint8_t *task, uint8_t req, uint64_t start, uint64_t end,
                   uint64_t min_batch, uint8_t *agg, dap_store_batch_t *batch)
{
    dap_store_collect_t c = {.req = {req},
                             .start = start,
                             .end = end,
                             .min_batch = min_batch,
                             .share_bytes = SHARE,
                             .merge = add_u64,
                             .release = release,
                             .release_ctx = &g_release,
                             .wait_for_pending = g_wait_for_pending};
    size_t len = 0;
    uint8_t out[SHARE + 8];
    int rc = dap_store_collect(s, task, &c, out, sizeof(out), &len, batch);
    if (rc == DAP_STORE_OK || rc == DAP_STORE_ALREADY) {
        assert_int_equal(len, SHARE);
        memcpy(agg, out, SHARE);
    }
    return rc;
}

/* Report k's id: its number in the first bytes, random after. */
static void report_id(uint8_t id[DPM_DAP_REPORT_ID_BYTES], uint32_t k, const uint8_t salt[8])
{
    put_u64(id, k);
    memcpy(id + 8, salt, 8);
}

/* Report k's output share: counter j holds k + j + 1. */
static void share_of(uint8_t *out, uint32_t k)
{
    for (uint32_t j = 0; j < L; j++) {
        put_u64(out + 8 * j, (uint64_t)k + j + 1);
    }
}

typedef struct {
    uint32_t n;
    uint8_t id[64][DPM_DAP_REPORT_ID_BYTES];
    uint64_t bucket[64];
} claimed_t;

static void on_report(void *ctx, const uint8_t id[DPM_DAP_REPORT_ID_BYTES], uint64_t bucket,
                      const uint8_t *report, size_t len)
{
    claimed_t *c = ctx;
    assert_true(c->n < 64);
    assert_int_equal(len, 5); /* what put stored: "r" + the report's number */
    assert_int_equal(report[0], 'r');
    memcpy(c->id[c->n], id, DPM_DAP_REPORT_ID_BYTES);
    c->bucket[c->n] = bucket;
    c->n++;
}

/* Uploads reports [first, first + n) into bucket first / per (per reports a bucket). */
static void upload(dap_store_t *s, const uint8_t *task, const uint8_t salt[8], uint32_t first,
                   uint32_t n, uint32_t per)
{
    for (uint32_t k = first; k < first + n; k++) {
        uint8_t id[DPM_DAP_REPORT_ID_BYTES], rep[5] = {'r'};
        report_id(id, k, salt);
        memcpy(rep + 1, &k, 4);
        EXPECT(s, dap_store_put_report(s, task, id, 1000 + k, k / per, rep, sizeof(rep)),
               DAP_STORE_OK);
    }
}

/* The outcomes of a claimed job: every report aggregated, but those whose number is in bad
 * (vdaf_verify_error). */
static void outcomes(const claimed_t *c, dap_store_outcome_t *o, uint8_t shares[][SHARE],
                     uint32_t bad)
{
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t k = (uint32_t)get_u64(c->id[i]);
        share_of(shares[i], k);
        o[i].id = c->id[i];
        o[i].bucket = c->bucket[i];
        o[i].out_share = shares[i];
        o[i].error = k == bad ? DAP_REPORT_ERROR_VDAF_VERIFY_ERROR : 0;
    }
}

static void test_upload_once(void **state)
{
    (void)state;
    dap_store_t *s = open_store();
    uint8_t task[32], salt[8], id[16], rep[5] = {'r'};
    random_bytes(task, 32);
    random_bytes(salt, 8);
    upload(s, task, salt, 0, 3, 10);
    report_id(id, 1, salt);
    EXPECT(s, dap_store_put_report(s, task, id, 1001, 0, rep, 5), DAP_STORE_REPLAY);
    claimed_t c = {0};
    uint8_t job[16];
    random_bytes(job, 16);
    EXPECT(s, dap_store_claim(s, task, job, 10, 50, on_report, &c), 3);
    assert_int_equal(c.n, 3); /* the replay added no row */
    /* another task's same id is another report */
    uint8_t other[32];
    random_bytes(other, 32);
    EXPECT(s, dap_store_put_report(s, other, id, 1001, 0, rep, 5), DAP_STORE_OK);
    dap_store_close(s);
}

static void test_jobs_claim_and_commit_once(void **state)
{
    (void)state;
    dap_store_t *s = open_store();
    uint8_t task[32], salt[8], job1[16], job2[16], job3[16], digest[32], other[32];
    random_bytes(task, 32);
    random_bytes(salt, 8);
    random_bytes(job1, 16);
    random_bytes(job2, 16);
    random_bytes(job3, 16);
    random_bytes(digest, 32);
    random_bytes(other, 32);
    upload(s, task, salt, 0, 10, 5); /* buckets 0 and 1 */
    claimed_t a = {0}, b = {0}, none = {0};
    EXPECT(s, dap_store_claim(s, task, job1, 6, 100, on_report, &a), 6);
    EXPECT(s, dap_store_claim(s, task, job2, 6, 100, on_report, &b), 4);
    EXPECT(s, dap_store_claim(s, task, job3, 6, 100, on_report, &none), 0);
    for (uint32_t i = 0; i < 6; i++) {
        assert_int_equal(get_u64(a.id[i]), i); /* oldest first */
    }
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(get_u64(b.id[i]), 6 + i);
    }
    uint8_t stale[16];
    EXPECT(s, dap_store_stale_job(s, task, 100, 200, stale), 0); /* claimed at 100: not older */

    /* job1: report 2 fails verification */
    dap_store_outcome_t o[8];
    uint8_t shares[8][SHARE], errors[8], again[8];
    outcomes(&a, o, shares, 2);
    EXPECT(s, dap_store_commit(s, task, job1, digest, o, a.n, SHARE, add_u64, NULL, errors),
           DAP_STORE_OK);
    for (uint32_t i = 0; i < 6; i++) {
        assert_int_equal(errors[i], i == 2 ? DAP_REPORT_ERROR_VDAF_VERIFY_ERROR : 0);
    }
    /* the same request again: the first commit's answer, nothing added */
    memset(again, 0xee, sizeof(again));
    EXPECT(s, dap_store_commit(s, task, job1, digest, o, a.n, SHARE, add_u64, NULL, again),
           DAP_STORE_ALREADY);
    assert_memory_equal(again, errors, a.n);
    /* another request under the same job id: refused, nothing added */
    EXPECT(s, dap_store_commit(s, task, job1, other, o, a.n, SHARE, add_u64, NULL, again),
           DAP_STORE_CONFLICT);
    /* job2 also carries report 0 again (a leader that sent it twice): report_replayed there */
    claimed_t b2 = b;
    memcpy(b2.id[b2.n], a.id[0], 16);
    b2.bucket[b2.n++] = a.bucket[0];
    outcomes(&b2, o, shares, UINT32_MAX);
    EXPECT(s, dap_store_commit(s, task, job2, digest, o, b2.n, SHARE, add_u64, NULL, errors),
           DAP_STORE_OK);
    for (uint32_t i = 0; i < b2.n; i++) {
        assert_int_equal(errors[i], i == 4 ? DAP_REPORT_ERROR_REPORT_REPLAYED : 0);
    }
    assert_int_equal(dap_store_rejected(s, task, DAP_REPORT_ERROR_VDAF_VERIFY_ERROR), 1);
    assert_int_equal(dap_store_rejected(s, task, DAP_REPORT_ERROR_REPORT_REPLAYED), 1);
    assert_int_equal(dap_store_rejected(s, task, DAP_REPORT_ERROR_BATCH_COLLECTED), 0);

    /* collection: below the minimum nothing happens; then the exact sums of reports 0..9 but 2,
     * with the release's one noise draw (1000 on the first counter) */
    uint8_t agg[SHARE], want_sum[32] = {0};
    dap_store_batch_t batch;
    g_release = (release_t){0, 0};
    EXPECT(s, collect(s, task, 1, 0, 2, 10, agg, &batch), DAP_STORE_TOO_SMALL);
    assert_int_equal(batch.reports, 9);
    EXPECT(s, collect(s, task, 1, 0, 2, 9, agg, &batch), DAP_STORE_OK);
    assert_int_equal(batch.reports, 9);
    assert_int_equal(batch.buckets, 2);
    for (uint32_t j = 0; j < L; j++) {
        uint64_t want = 0;
        for (uint32_t k = 0; k < 10; k++) {
            want += k == 2 ? 0 : (uint64_t)k + j + 1;
        }
        assert_int_equal(get_u64(agg + 8 * j), want + (j == 0 ? 1000u : 0u));
    }
    assert_int_equal(g_release.calls, 1);
    /* the same request again: the kept release, no second draw */
    uint8_t again_agg[SHARE];
    dap_store_batch_t again_batch;
    EXPECT(s, collect(s, task, 1, 0, 2, 9, again_agg, &again_batch), DAP_STORE_ALREADY);
    assert_memory_equal(again_agg, agg, SHARE);
    assert_int_equal(again_batch.reports, 9);
    assert_int_equal(g_release.calls, 1);
    for (uint32_t k = 0; k < 10; k++) {
        uint8_t id[16], h[32];
        report_id(id, k, salt);
        assert_int_equal(mbedtls_sha256(id, 16, h, 0), 0);
        for (int i = 0; k != 2 && i < 32; i++) {
            want_sum[i] ^= h[i];
        }
    }
    assert_memory_equal(batch.checksum, want_sum, 32);
    /* collected: no second collection of an overlapping batch, no more reports in it */
    EXPECT(s, collect(s, task, 2, 1, 3, 1, agg, &batch), DAP_STORE_COLLECTED);
    uint8_t id[16], rep[5] = {'r'};
    report_id(id, 99, salt);
    EXPECT(s, dap_store_put_report(s, task, id, 1099, 1, rep, 5), DAP_STORE_COLLECTED);
    EXPECT(s, dap_store_put_report(s, task, id, 1099, 2, rep, 5), DAP_STORE_OK);
    /* a helper's job with a report of a collected bucket: batch_collected, not summed */
    uint8_t job4[16], late[16];
    random_bytes(job4, 16);
    report_id(late, 77, salt);
    uint8_t sh[SHARE];
    share_of(sh, 77);
    dap_store_outcome_t lo = {late, 1, sh, 0};
    EXPECT(s, dap_store_commit(s, task, job4, digest, &lo, 1, SHARE, add_u64, NULL, errors),
           DAP_STORE_OK);
    assert_int_equal(errors[0], DAP_REPORT_ERROR_BATCH_COLLECTED);
    assert_int_equal(dap_store_rejected(s, task, DAP_REPORT_ERROR_BATCH_COLLECTED), 1);
    dap_store_close(s);
}

static void test_stale_job_taken_over(void **state)
{
    (void)state;
    dap_store_t *s = open_store();
    uint8_t task[32], salt[8], job[16], stale[16];
    random_bytes(task, 32);
    random_bytes(salt, 8);
    random_bytes(job, 16);
    upload(s, task, salt, 0, 5, 5);
    claimed_t a = {0}, again = {0};
    EXPECT(s, dap_store_claim(s, task, job, 5, 100, on_report, &a), 5);
    /* the leader does not collect while reports of the batch await their job's commit */
    uint8_t agg[SHARE];
    dap_store_batch_t batch;
    g_wait_for_pending = 1;
    EXPECT(s, collect(s, task, 3, 0, 1, 1, agg, &batch), DAP_STORE_PENDING);
    EXPECT(s, dap_store_stale_job(s, task, 200, 300, stale), 1);
    assert_memory_equal(stale, job, 16);
    EXPECT(s, dap_store_stale_job(s, task, 250, 310, stale), 0); /* taken over at 300 */
    EXPECT(s, dap_store_job_reports(s, task, stale, on_report, &again), 5);
    assert_memory_equal(again.id, a.id, sizeof(a.id[0]) * 5);
    /* committed: never stale again */
    dap_store_outcome_t o[5];
    uint8_t shares[5][SHARE], errors[5], digest[32] = {0};
    outcomes(&a, o, shares, UINT32_MAX);
    EXPECT(s, dap_store_commit(s, task, job, digest, o, 5, SHARE, add_u64, NULL, errors),
           DAP_STORE_OK);
    EXPECT(s, dap_store_stale_job(s, task, 10000, 10001, stale), 0);
    EXPECT(s, collect(s, task, 3, 0, 1, 1, agg, &batch), DAP_STORE_OK); /* committed: ready */
    assert_int_equal(batch.reports, 5);
    /* a report uploaded and not yet claimed also waits, in another batch */
    uint8_t id[16], rep[5] = {'r'};
    report_id(id, 50, salt);
    EXPECT(s, dap_store_put_report(s, task, id, 1050, 7, rep, 5), DAP_STORE_OK);
    EXPECT(s, collect(s, task, 4, 7, 8, 1, agg, &batch), DAP_STORE_PENDING);
    g_wait_for_pending = 0;
    dap_store_close(s);
}

/* Two processes claim and commit jobs of 3 from 600 reports at once, into the same buckets:
 * each report in exactly one job, and the sums lose neither's commits. */
static void test_two_leaders_claim_apart(void **state)
{
    (void)state;
    enum { N = 600 };
    dap_store_t *s = open_store();
    uint8_t task[32], salt[8];
    random_bytes(task, 32);
    random_bytes(salt, 8);
    upload(s, task, salt, 0, N, 10);
    dap_store_close(s);
    int fds[2][2];
    pid_t pid[2];
    for (int p = 0; p < 2; p++) {
        assert_int_equal(pipe(fds[p]), 0);
        pid[p] = fork();
        assert_true(pid[p] >= 0);
        if (pid[p] == 0) {
            close(fds[p][0]);
            test_rng_seed(&g_rng, (uint64_t)getpid() * 7919u + (uint64_t)p); /* its own job ids */
            dap_store_t *c = open_store();
            for (;;) {
                uint8_t job[16];
                claimed_t got = {0};
                random_bytes(job, 16);
                job[0] = (uint8_t)p;
                int64_t n = dap_store_claim(c, task, job, 3, 100, on_report, &got);
                if (n <= 0) {
                    _exit(n == 0 ? 0 : 1);
                }
                dap_store_outcome_t o[3];
                uint8_t shares[3][SHARE], errors[3], digest[32] = {0};
                outcomes(&got, o, shares, UINT32_MAX);
                if (dap_store_commit(c, task, job, digest, o, got.n, SHARE, add_u64, NULL,
                                     errors) != DAP_STORE_OK) {
                    _exit(3); /* both add into the same buckets: none may lose the other's */
                }
                for (uint32_t i = 0; i < got.n; i++) {
                    uint32_t k = (uint32_t)get_u64(got.id[i]);
                    if (write(fds[p][1], &k, 4) != 4) {
                        _exit(2);
                    }
                }
            }
        }
        close(fds[p][1]);
    }
    int seen[N] = {0}, total = 0;
    for (int p = 0; p < 2; p++) {
        uint32_t k;
        while (read(fds[p][0], &k, 4) == 4) {
            assert_true(k < N);
            seen[k]++;
            total++;
        }
        close(fds[p][0]);
        int st = 0;
        assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_int_equal(total, N);
    for (int k = 0; k < N; k++) {
        assert_int_equal(seen[k], 1);
    }
    s = open_store();
    uint8_t agg[SHARE];
    dap_store_batch_t batch;
    g_release = (release_t){0, 0};
    EXPECT(s, collect(s, task, 1, 0, N / 10, N, agg, &batch), DAP_STORE_OK);
    assert_int_equal(batch.reports, N);
    for (uint32_t j = 0; j < L; j++) {
        assert_int_equal(get_u64(agg + 8 * j),
                         (uint64_t)N * (N - 1) / 2 + (uint64_t)N * (j + 1) + (j == 0 ? 1000u : 0u));
    }
    dap_store_close(s);
}

/* A leader killed with SIGKILL while it claims and commits jobs of 4: afterwards the sums hold
 * every acknowledged job once and nothing of a job it did not finish; a second leader takes
 * the stale job over, and the final collection counts all 400 reports once. */
static void test_kill_9_loses_and_doubles_nothing(void **state)
{
    (void)state;
    enum { N = 400, JOB = 4 };
    dap_store_t *s = open_store();
    uint8_t task[32], salt[8], digest[32] = {0};
    random_bytes(task, 32);
    random_bytes(salt, 8);
    upload(s, task, salt, 0, N, 50);
    dap_store_close(s);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        test_rng_seed(&g_rng, (uint64_t)getpid() * 7919u); /* job ids apart from the parent's */
        dap_store_t *c = open_store();
        for (;;) {
            uint8_t job[16];
            claimed_t got = {0};
            random_bytes(job, 16);
            if (dap_store_claim(c, task, job, JOB, 100, on_report, &got) <= 0) {
                pause(); /* done: wait for the kill */
            }
            dap_store_outcome_t o[JOB];
            uint8_t shares[JOB][SHARE], errors[JOB];
            outcomes(&got, o, shares, UINT32_MAX);
            if (dap_store_commit(c, task, job, digest, o, got.n, SHARE, add_u64, NULL, errors) !=
                DAP_STORE_OK) {
                _exit(1);
            }
            uint32_t n = got.n; /* acknowledged: durable */
            if (write(fd[1], &n, 4) != 4) {
                _exit(2);
            }
        }
    }
    close(fd[1]);
    uint32_t acked = 0, n;
    while (acked < N / 3 && read(fd[0], &n, 4) == 4) {
        acked += n;
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    while (read(fd[0], &n, 4) == 4) { /* acknowledged before the kill landed */
        acked += n;
    }
    close(fd[0]);
    /* the sums hold every acknowledged job, and at most the one job whose acknowledgement the
     * kill cut off (a collection below its minimum only reads) */
    s = open_store();
    uint8_t agg[SHARE];
    dap_store_batch_t batch;
    EXPECT(s, collect(s, task, 1, 0, N / 50, UINT64_MAX, agg, &batch), DAP_STORE_TOO_SMALL);
    assert_true(batch.reports >= acked && batch.reports <= acked + JOB);
    uint64_t before = batch.reports;
    /* a leader that dies between its claim and its commit, for certain: its job is stale */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        test_rng_seed(&g_rng, (uint64_t)getpid() * 104729u);
        dap_store_t *c = open_store();
        uint8_t job[16];
        claimed_t got = {0};
        random_bytes(job, 16);
        if (dap_store_claim(c, task, job, JOB, 100, on_report, &got) == JOB) {
            raise(SIGKILL);
        }
        _exit(1);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    EXPECT(s, collect(s, task, 1, 0, N / 50, UINT64_MAX, agg, &batch), DAP_STORE_TOO_SMALL);
    assert_int_equal(batch.reports, before); /* its claim added nothing */
    uint8_t stale[16];
    uint32_t taken = 0;
    while (dap_store_stale_job(s, task, 1000, 2000, stale) == 1) {
        claimed_t got = {0};
        assert_true(dap_store_job_reports(s, task, stale, on_report, &got) > 0);
        dap_store_outcome_t o[JOB];
        uint8_t shares[JOB][SHARE], errors[JOB];
        outcomes(&got, o, shares, UINT32_MAX);
        EXPECT(s, dap_store_commit(s, task, stale, digest, o, got.n, SHARE, add_u64, NULL, errors),
               DAP_STORE_OK);
        for (uint32_t i = 0; i < got.n; i++) {
            assert_int_equal(errors[i], 0); /* none of it was in the sums */
        }
        taken++;
    }
    assert_true(taken >= 1 && taken <= 2); /* the second child's, and maybe the first's */
    for (;;) {                             /* the rest, by the second leader */
        uint8_t job[16];
        claimed_t got = {0};
        random_bytes(job, 16);
        int64_t k = dap_store_claim(s, task, job, JOB, 3000, on_report, &got);
        assert_true(k >= 0);
        if (k == 0) {
            break;
        }
        dap_store_outcome_t o[JOB];
        uint8_t shares[JOB][SHARE], errors[JOB];
        outcomes(&got, o, shares, UINT32_MAX);
        EXPECT(s, dap_store_commit(s, task, job, digest, o, got.n, SHARE, add_u64, NULL, errors),
               DAP_STORE_OK);
    }
    g_release = (release_t){0, 0};
    EXPECT(s, collect(s, task, 1, 0, N / 50, N, agg, &batch), DAP_STORE_OK);
    assert_int_equal(batch.reports, N);
    for (uint32_t j = 0; j < L; j++) {
        assert_int_equal(get_u64(agg + 8 * j),
                         (uint64_t)N * (N - 1) / 2 + (uint64_t)N * (j + 1) + (j == 0 ? 1000u : 0u));
    }
    assert_int_equal(dap_store_rejected(s, task, DAP_REPORT_ERROR_REPORT_REPLAYED), 0);
    print_message("# kill -9 after %u acknowledged reports; %u stale job taken over\n", acked,
                  taken);
    dap_store_close(s);
}

static void test_bad_arguments_change_nothing(void **state)
{
    (void)state;
    dap_store_t *s = open_store();
    uint8_t task[32], job[16], digest[32] = {0}, agg[SHARE], errors[1];
    random_bytes(task, 32);
    random_bytes(job, 16);
    dap_store_batch_t batch;
    EXPECT(s, collect(s, task, 1, 5, 5, 1, agg, &batch), DAP_STORE_FAIL);
    assert_non_null(strstr(dap_store_error(s), "empty interval"));
    /* a release that refuses (batchMismatch): nothing marked, nothing kept, the batch still
     * collectable */
    uint8_t salt[8];
    random_bytes(salt, 8);
    upload(s, task, salt, 0, 2, 10);
    claimed_t got = {0};
    uint8_t cjob[16];
    random_bytes(cjob, 16);
    EXPECT(s, dap_store_claim(s, task, cjob, 2, 10, on_report, &got), 2);
    dap_store_outcome_t two[2];
    uint8_t shares[2][SHARE], errs[2];
    outcomes(&got, two, shares, UINT32_MAX);
    EXPECT(s, dap_store_commit(s, task, cjob, digest, two, 2, SHARE, add_u64, NULL, errs),
           DAP_STORE_OK);
    g_release = (release_t){0, 1};
    EXPECT(s, collect(s, task, 7, 0, 1, 1, agg, &batch), DAP_STORE_REFUSED);
    g_release.refuse = 0;
    EXPECT(s, collect(s, task, 7, 0, 1, 1, agg, &batch), DAP_STORE_OK);
    assert_int_equal(batch.reports, 2);
    assert_int_equal(g_release.calls, 1);
    EXPECT(s, dap_store_commit(s, task, job, digest, NULL, 0, SHARE, add_u64, NULL, errors),
           DAP_STORE_FAIL);
    /* the job id was not used up by the refusal */
    dap_store_outcome_t o = {digest, 0, agg, DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR};
    EXPECT(s, dap_store_commit(s, task, job, digest, &o, 1, SHARE, add_u64, NULL, errors),
           DAP_STORE_OK);
    assert_int_equal(errors[0], DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR);
    /* a database that cannot be opened: a message naming it */
    dap_store_t *none = NULL;
    char err[256];
    assert_int_equal(dap_store_open(&none, "sqlite:/nonexistent-dir/x.db", err, sizeof(err)), -1);
    assert_null(none);
    assert_non_null(strstr(err, "/nonexistent-dir/x.db"));
    dap_store_close(s);
}

/* A database made before dap_report_bodies: dap_reports with the report's bytes in it. */
static void test_earlier_layout_moved(void **state)
{
    (void)state;
    /* a database of its own: $DPM_TEST_DB_EMPTY (an empty PostgreSQL database) beside
     * $DPM_TEST_DB, or a SQLite file */
    const char *pg = getenv("DPM_TEST_DB");
    const char *empty = getenv("DPM_TEST_DB_EMPTY");
    if (pg != NULL && (empty == NULL || *empty == '\0')) {
        skip(); /* a skip, never a pass */
    }
    char path[300], err[256];
    snprintf(path, sizeof(path), "%s-old", g_path);
    unlink(path);
    const char *url = pg != NULL ? empty : path;
    sqldb_t *d = NULL;
    assert_int_equal(sqldb_open(&d, url, err, sizeof(err)), 0);
    assert_true(sqldb_exec(d,
                           sqldb_is_pg(d)
                               ? "CREATE TABLE dap_reports (task BYTEA NOT NULL, id BYTEA NOT "
                                 "NULL, time BIGINT NOT NULL, bucket BIGINT NOT NULL, report BYTEA "
                                 "NOT NULL, job BYTEA, PRIMARY KEY (task, id))"
                               : "CREATE TABLE dap_reports (task BLOB NOT NULL, id BLOB NOT NULL, "
                                 "time INTEGER NOT NULL, bucket INTEGER NOT NULL, report BLOB NOT "
                                 "NULL, job BLOB, PRIMARY KEY (task, id))",
                           NULL, 0, NULL, NULL) >= 0);
    assert_true(sqldb_exec(d,
                           "CREATE INDEX dap_reports_free ON dap_reports (task, time) WHERE job "
                           "IS NULL",
                           NULL, 0, NULL, NULL) >= 0);
    uint8_t task[DPM_DAP_TASK_ID_BYTES], salt[8], old_job[DAP_STORE_JOB_ID_BYTES],
        job[DAP_STORE_JOB_ID_BYTES];
    random_bytes(task, sizeof(task));
    random_bytes(salt, sizeof(salt));
    random_bytes(old_job, sizeof(old_job));
    random_bytes(job, sizeof(job));
    for (uint32_t k = 0; k < 4; k++) { /* reports 0..2 free, newest first; 3 in old_job */
        uint8_t id[DPM_DAP_REPORT_ID_BYTES], rep[5] = {'r'};
        report_id(id, k, salt);
        memcpy(rep + 1, &k, 4);
        sqldb_val_t in[] = {sqldb_blob(task, sizeof(task)),
                            sqldb_blob(id, sizeof(id)),
                            sqldb_int(1000 - (int64_t)k),
                            sqldb_int(k),
                            sqldb_blob(rep, 5),
                            k == 3 ? sqldb_blob(old_job, sizeof(old_job)) : sqldb_int(0)};
        in[5].null = k != 3;
        assert_int_equal(sqldb_exec(d,
                                    k == 3 ? "INSERT INTO dap_reports VALUES ($1, $2, $3, $4, $5, "
                                             "$6)"
                                           : "INSERT INTO dap_reports VALUES ($1, $2, $3, $4, $5, "
                                             "NULL)",
                                    in, k == 3 ? 6 : 5, NULL, NULL),
                         1);
    }
    sqldb_close(d);
    dap_store_t *s = NULL;
    if (dap_store_open(&s, url, err, sizeof(err)) != 0) {
        fail_msg("dap_store_open of the earlier layout: %s", err);
    }
    claimed_t c = {0};
    EXPECT(s, dap_store_claim(s, task, job, 64, 2000, on_report, &c), 3);
    assert_int_equal(c.n, 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(get_u64(c.id[i]), 2 - i); /* oldest first */
    }
    c.n = 0;
    EXPECT(s, dap_store_job_reports(s, task, old_job, on_report, &c), 1);
    assert_int_equal(get_u64(c.id[0]), 3);
    dap_store_close(s);
    assert_int_equal(sqldb_open(&d, url, err, sizeof(err)), 0);
    assert_int_equal(sqldb_exec(d, "SELECT report FROM dap_reports", NULL, 0, NULL, NULL), -1);
    assert_int_equal(sqldb_exec(d, "SELECT report FROM dap_report_bodies", NULL, 0, NULL, NULL), 4);
    sqldb_close(d);
    assert_int_equal(dap_store_open(&s, url, err, sizeof(err)), 0); /* again: nothing to move */
    dap_store_close(s);
    char side[320];
    unlink(path);
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

int main(void)
{
    test_rng_seed(&g_rng, (uint64_t)getpid() * 0x9e3779b97f4a7c15u + 31);
    const char *dir = getenv("TMPDIR");
    snprintf(g_path, sizeof(g_path), "%s/test_dap_store_%d.db", dir != NULL && *dir ? dir : "/tmp",
             (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_once),
        cmocka_unit_test(test_jobs_claim_and_commit_once),
        cmocka_unit_test(test_stale_job_taken_over),
        cmocka_unit_test(test_two_leaders_claim_apart),
        cmocka_unit_test(test_kill_9_loses_and_doubles_nothing),
        cmocka_unit_test(test_bad_arguments_change_nothing),
        cmocka_unit_test(test_earlier_layout_moved),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (getenv("DPM_TEST_DB") == NULL) {
        char side[300];
        unlink(g_path);
        snprintf(side, sizeof(side), "%s-wal", g_path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-shm", g_path);
        unlink(side);
    }
    return rc;
}
