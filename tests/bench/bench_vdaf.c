/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 on this machine, as metrics JSON lines (make bench): for the two-aggregator campaigns'
 * shapes and the size of the Rust prio crate's SumVec benchmark (1,000 entries),
 *   vdaf.host.<shape>.shard.us    one dpm_prio3_shard (the device's part, here on the host)
 *   vdaf.host.<shape>.verify.us   one report's whole verification by both aggregators: two
 *                                 verify_init, the verifier message, two verify_next
 *   vdaf.<shape>.report_bytes     public share + leader input share + helper input share
 * Best of 5 runs of a loop lasting >= 0.2 s each (2 shared cores: the best is the least
 * disturbed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpm/expert/vdaf.h"
#include "vdaf_fixture.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void metric(const char *shape, const char *what, double value, const char *unit)
{
    printf("{\"name\": \"vdaf.%s%s.%s\", \"value\": %.3f, \"unit\": \"%s\", \"baseline\": null, "
           "\"ratio\": null}\n",
           strcmp(unit, "bytes") == 0 ? "" : "host.", shape, what, value, unit);
}

static const uint8_t KEY[32] = {7};
static const uint8_t CTX[] = "bench";

static void bench(const char *shape, const dpm_prio3_t *v, const uint64_t *m, size_t count)
{
    vdaf_report_t r;
    vdaf_result_t res;
    vdaf_report_alloc(v, &r);
    vdaf_result_init(v, &res);
    double best_shard = 1e9, best_verify = 1e9;
    for (int run = 0; run < 5; run++) {
        long n = 0;
        double t0 = now(), t = t0;
        while (t - t0 < 0.2) {
            if (vdaf_report_shard(v, CTX, sizeof(CTX) - 1u, m, count, (uint64_t)n, &r) != DPM_OK) {
                exit(1);
            }
            n++;
            t = now();
        }
        best_shard = (t - t0) / (double)n < best_shard ? (t - t0) / (double)n : best_shard;
        n = 0;
        t0 = now();
        t = t0;
        while (t - t0 < 0.2) {
            vdaf_verify(v, KEY, CTX, sizeof(CTX) - 1u, &r, -1, -1, &res);
            if (res.step != VDAF_STEP_DONE) {
                exit(1);
            }
            n++;
            t = now();
        }
        best_verify = (t - t0) / (double)n < best_verify ? (t - t0) / (double)n : best_verify;
    }
    metric(shape, "shard.us", best_shard * 1e6, "us");
    metric(shape, "verify.us", best_verify * 1e6, "us");
    metric(shape, "report_bytes",
           (double)(v->public_share_bytes + v->leader_share_bytes +
                    (size_t)(v->shares - 1u) * v->helper_share_bytes),
           "bytes");
    vdaf_result_free(&res);
    vdaf_report_free(&r);
}

int main(void)
{
    static uint64_t m[1000];
    for (unsigned i = 0; i < 1000u; i++) {
        m[i] = (i * 53u) % 256u;
    }
    dpm_prio3_t v;
    /* the campaigns' shapes (chunks with the shortest proofs) */
    if (dpm_prio3_sumvec_init(&v, 2, 48, 255, 26) == DPM_OK) {
        bench("prio3_sumvec48", &v, m, 48);
    }
    if (dpm_prio3_sumvec_init(&v, 2, 72, 255, 19) == DPM_OK) {
        bench("prio3_sumvec72", &v, m, 72);
    }
    uint64_t bucket = 5;
    if (dpm_prio3_histogram_init(&v, 2, 16, 3) == DPM_OK) {
        bench("prio3_histogram16", &v, &bucket, 1);
    }
    if (dpm_prio3_histogram_init(&v, 2, 32, 5) == DPM_OK) {
        bench("prio3_histogram32", &v, &bucket, 1);
    }
    /* the prio crate's benchmark size: 1,000 one-bit entries, chunk near sqrt(1000) */
    for (unsigned i = 0; i < 1000u; i++) {
        m[i] &= 1u;
    }
    if (dpm_prio3_sumvec_init(&v, 2, 1000, 1, 31) == DPM_OK) {
        bench("prio3_sumvec1000", &v, m, 1000);
    }
    return 0;
}
