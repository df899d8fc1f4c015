/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the messages aggregators exchange after verify_init, as arbitrary bytes.
 * Input: a variant byte (the instances of fuzz_vdaf_report.c), an operation byte, then
 * length-prefixed (2 bytes, little-endian) messages:
 *   op 0  the concatenated verifier shares -> dpm_prio3_verifier_shares_to_message
 *   op 1  an aggregator's state, a verifier message -> dpm_prio3_verify_next
 *   op 2  an aggregate share, an output share (or another aggregate share) -> dpm_prio3_aggregate
 *   op 3  the concatenated aggregate shares -> dpm_prio3_unshard, and the same bytes again ->
 *         dpm_prio3_unshard_signed (the collector of noised shares), which accepts exactly what
 *         dpm_prio3_unshard accepts up to the range of its sums, and dpm_prio3_add_noise with
 *         noise taken from the second message (an aggregator's own share before release)
 * Checked beyond the sanitizers: only documented statuses; a message of the wrong length is
 * DPM_ERR_PROTOCOL (a state of the wrong length DPM_ERR_PARAM); a refused call leaves its
 * output as it was; an accepted verifier message is a pure function of its input (run twice);
 * verify_next accepts exactly the message equal to the state's seed; aggregating the zero
 * share changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/vdaf.h"
#include "fuzz_vdaf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t work[16384];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpm_prio3_t v;
    if (size < 2 || !fuzz_vdaf_instance(data[0], &v)) {
        return 0;
    }
    const uint8_t *p = data + 2;
    size_t left = size - 2, la = 0, lb = 0;
    const uint8_t *a = fuzz_vdaf_take(&p, &left, &la), *b = fuzz_vdaf_take(&p, &left, &lb);
    switch (data[1] % 4u) {
    case 0: {
        uint8_t m1[32], m2[32];
        memset(m1, 0xA5, sizeof(m1));
        dpm_status_t s1 = dpm_prio3_verifier_shares_to_message(
            &v, FUZZ_VDAF_CTX, sizeof(FUZZ_VDAF_CTX) - 1u, a, la, m1, sizeof(m1), work, 16384);
        dpm_status_t s2 = dpm_prio3_verifier_shares_to_message(
            &v, FUZZ_VDAF_CTX, sizeof(FUZZ_VDAF_CTX) - 1u, a, la, m2, sizeof(m2), work, 16384);
        if ((la != (size_t)v.shares * v.verifier_share_bytes && s1 != DPM_ERR_PROTOCOL) ||
            (s1 != DPM_OK && s1 != DPM_ERR_PROTOCOL && s1 != DPM_ERR_VERIFY) || s1 != s2) {
            abort();
        }
        for (size_t i = 0; i < sizeof(m1); i++) {
            if ((s1 != DPM_OK || i >= v.verifier_message_bytes) ? m1[i] != 0xA5 : m1[i] != m2[i]) {
                abort();
            }
        }
        break;
    }
    case 1: {
        uint8_t out[2048];
        memset(out, 0xA5, sizeof(out));
        dpm_status_t st = dpm_prio3_verify_next(&v, a, la, b, lb, out, sizeof(out));
        int shapes = la == v.state_bytes && lb == v.verifier_message_bytes;
        int match = shapes && memcmp(b, a + v.out_share_bytes, lb) == 0;
        if ((la != v.state_bytes && st != DPM_ERR_PARAM) ||
            (la == v.state_bytes && lb != v.verifier_message_bytes && st != DPM_ERR_PROTOCOL) ||
            (shapes && (st == DPM_OK) != match) || (shapes && !match && st != DPM_ERR_VERIFY)) {
            abort();
        }
        for (size_t i = 0; i < sizeof(out); i++) {
            if (st == DPM_OK && i < v.out_share_bytes ? out[i] != a[i] : out[i] != 0xA5) {
                abort();
            }
        }
        break;
    }
    case 2: {
        static uint8_t acc[2048], before[2048], zero[2048];
        size_t n = la < sizeof(acc) ? la : sizeof(acc);
        memcpy(acc, a, n);
        memcpy(before, a, n);
        dpm_status_t st = dpm_prio3_aggregate(&v, acc, n, b, lb);
        if ((n != v.out_share_bytes && st != DPM_ERR_PARAM) ||
            (n == v.out_share_bytes && lb != v.out_share_bytes && st != DPM_ERR_PROTOCOL) ||
            (st != DPM_OK && st != DPM_ERR_PARAM && st != DPM_ERR_PROTOCOL) ||
            (st != DPM_OK && memcmp(acc, before, n) != 0)) {
            abort();
        }
        if (st == DPM_OK) { /* adding the zero share changes nothing */
            memcpy(before, acc, n);
            if (dpm_prio3_aggregate(&v, acc, n, zero, n) != DPM_OK || memcmp(acc, before, n) != 0) {
                abort();
            }
        }
        break;
    }
    default: {
        uint64_t r[128];
        memset(r, 0xA5, sizeof(r));
        dpm_status_t st = dpm_prio3_unshard(&v, a, la, 1, r, 128);
        if ((la != (size_t)v.shares * v.out_share_bytes && st != DPM_ERR_PROTOCOL) ||
            (st != DPM_OK && st != DPM_ERR_PROTOCOL && st != DPM_ERR_RANGE)) {
            abort();
        }
        for (size_t i = 0; i < 128; i++) {
            if ((st != DPM_OK || i >= v.output_len) && r[i] != UINT64_C(0xA5A5A5A5A5A5A5A5)) {
                abort();
            }
        }
        int64_t sr[128];
        memset(sr, 0xA5, sizeof(sr));
        dpm_status_t ss = dpm_prio3_unshard_signed(&v, a, la, 1, sr, 128);
        if ((ss == DPM_ERR_PROTOCOL) != (st == DPM_ERR_PROTOCOL) ||
            (ss != DPM_OK && ss != DPM_ERR_PROTOCOL && ss != DPM_ERR_RANGE)) {
            abort(); /* the same bytes are a field vector for both, or for neither */
        }
        for (size_t i = 0; ss == DPM_OK && i < v.output_len; i++) {
            if (st == DPM_OK && sr[i] >= 0 && (uint64_t)sr[i] != r[i]) {
                abort(); /* a sum both read is the same number */
            }
        }
        if (la >= v.out_share_bytes && v.output_len <= 128) { /* noise on the first share */
            int64_t noise[128];
            memset(noise, 0, sizeof(noise));
            if (b != NULL && lb > 0) {
                memcpy(noise, b, lb < sizeof(noise) ? lb : sizeof(noise));
            }
            uint8_t *share = malloc(v.out_share_bytes + 1u);
            if (share == NULL) {
                break;
            }
            memcpy(share, a, v.out_share_bytes);
            dpm_status_t sn =
                dpm_prio3_add_noise(&v, share, v.out_share_bytes, noise, v.output_len);
            if (sn != DPM_OK && (sn != DPM_ERR_PROTOCOL || memcmp(share, a, v.out_share_bytes))) {
                abort(); /* refused only for a non-field value, and then unchanged */
            }
            free(share);
        }
        break;
    }
    }
    return 0;
}
