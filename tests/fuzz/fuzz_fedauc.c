/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: FedAUC's two messages. The first byte picks the mechanism (fedauc_rr or
 * fedauc_lap with the local, global, orthogonal or adaptive split) and the side; the rest is
 * a rank reply as the device receives it, or an upload as the collector receives it.
 * Checked beyond the sanitizers:
 *   - a reply that decodes re-encodes and decodes back to the same header and ranks, and has
 *     at most cap ranks; an upload that decodes has at most cap scores;
 *   - a reply is also retargeted (the session's campaign, hash and token put in, re-encoded)
 *     so dpm_fedauc_accept's checks see fuzzed ranks, not just a wrong token;
 *   - dpm_fedauc_accept refuses with DPM_ERR_PROTOCOL and a reason, or DPM_ERR_RANGE, or
 *     accepts; then the ranks' summary is consistent (n, M >= n, min <= max, the sum between
 *     n min and n max), and the report the device makes from it passes the collector's
 *     dpm_mech_check_report and survives encode/decode: no reply makes the device send a
 *     report its collector would reject. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/fedauc.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/report.h"
#include "fuzz_fixtures.h"
#include "test_receipt.h"
#include "test_rng.h"

#define N FUZZ_FEDAUC_N
#define CAP FUZZ_FEDAUC_CAP
#define NMECH FUZZ_FEDAUC_NMECH

static fuzz_fedauc_t fx[NMECH];
static dpm_memo_t memo;
static const uint64_t ids[N] = {11, 12, 13, 14, 15, 16, 17, 18};
static const uint8_t labels[N] = {1, 0, 0, 1, 1, 0, 1, 0};
static int ready;

static void accept_and_report(fuzz_fedauc_t *f, const uint8_t *reply, size_t len, uint32_t seed)
{
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    const uint64_t *id = f->m.campaign.mechanism == DPM_MECH_ID_FEDAUC_RR ? ids : NULL;
    dpm_status_t st = dpm_fedauc_accept(&f->s, &f->m, reply, len, id, &rk, &why);
    if (st == DPM_ERR_PROTOCOL && why != NULL) {
        return;
    }
    if (st == DPM_ERR_RANGE) {
        return;
    }
    if (st != DPM_OK || rk.n != N || rk.total < rk.n || rk.min_rank2 > rk.max_rank2 ||
        rk.sum_rank2 < (uint64_t)rk.n * rk.min_rank2 ||
        rk.sum_rank2 > (uint64_t)rk.n * rk.max_rank2) {
        abort();
    }
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    dpm_report_t rep, back;
    memset(&back, 0, sizeof(back));
    uint8_t wire[DPM_REPORT_MAX_BYTES];
    size_t wlen = 0;
    if (test_rand_init(&r, &t, &rng, seed) != DPM_OK ||
        dpm_mech_report_fedauc(&f->m, &r, TEST_RECEIPT(&f->m, 0), &f->s, &rk, labels, ids, &memo,
                               &rep) != DPM_OK ||
        dpm_mech_check_report(&f->m, &rep, NULL) != DPM_OK ||
        dpm_report_encode(&rep, wire, sizeof(wire), &wlen) != DPM_OK ||
        dpm_report_decode(wire, wlen, &back) != DPM_OK ||
        dpm_mech_check_report(&f->m, &back, NULL) != DPM_OK) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        fuzz_fedauc_setup(fx, &memo);
        ready = 1;
    }
    if (size < 1) {
        return 0;
    }
    fuzz_fedauc_t *f = &fx[(data[0] & 0x7Fu) % NMECH];
    int upload = data[0] >> 7;
    data++;
    size--;
    static uint32_t vals[CAP], again[CAP];
    dpm_fedauc_header_t h, h2;
    if (upload) {
        if (dpm_fedauc_upload_decode(data, size, &h, vals, CAP) == DPM_OK && h.n > CAP) {
            abort();
        }
        return 0;
    }
    accept_and_report(f, data, size, 1);
    if (dpm_fedauc_reply_decode(data, size, &h, vals, CAP) != DPM_OK) {
        return 0;
    }
    static uint8_t buf[DPM_FEDAUC_REPLY_MAX_BYTES(CAP)];
    size_t len = 0;
    if (h.n > CAP || dpm_fedauc_reply_encode(&h, vals, buf, sizeof(buf), &len) != DPM_OK ||
        dpm_fedauc_reply_decode(buf, len, &h2, again, CAP) != DPM_OK ||
        memcmp(&h, &h2, sizeof(h)) != 0 || memcmp(vals, again, h.n * sizeof(vals[0])) != 0) {
        abort();
    }
    h.campaign_id = f->s.campaign_id;
    h.mechanism = f->s.mechanism;
    h.params_hash = f->s.params_hash;
    memcpy(h.token, f->s.token, sizeof(h.token));
    if (dpm_fedauc_reply_encode(&h, vals, buf, sizeof(buf), &len) != DPM_OK) {
        abort();
    }
    accept_and_report(f, buf, len, 2);
    return 0;
}
