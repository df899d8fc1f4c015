/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the device memo secret (fedauc_rr's memoized flips) loaded from arbitrary
 * storage bytes: dpm_memo_open on a flash-like RAM storage holding the input (up to 256 bytes;
 * a region of at least DPM_MEMO_MIN_REGION). Checked beyond the sanitizers:
 *   - open never fails on a working storage, whatever the region holds;
 *   - it says CREATED exactly when the record's bytes are erased (0xFF);
 *   - after it, the region holds the secret: a second open (a reboot) LOADs the same key, and
 *     the PRF gives the same output under both. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/memo.h"
#include "fake_storage.h"
#include "test_rng.h"

#define MAX_REGION 256u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t mem[MAX_REGION];
    uint32_t n = size < DPM_MEMO_MIN_REGION ? DPM_MEMO_MIN_REGION
                 : size > MAX_REGION        ? MAX_REGION
                                            : (uint32_t)size;
    fake_storage_t fs;
    fake_storage_init(&fs, mem, n, 1); /* erases mem: the input goes in after */
    memcpy(mem, data, size < n ? size : n);
    int erased = 1;
    for (uint32_t i = 0; i < DPM_MEMO_RECORD_BYTES; i++) {
        erased &= mem[i] == 0xFF;
    }
    dpm_storage_t st = fake_storage_port(&fs);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    dpm_memo_t a, b;
    if (test_rand_init(&r, &t, &rng, 5) != DPM_OK || dpm_memo_open(&a, &st, 0, n, &r) != DPM_OK ||
        (a.origin == DPM_MEMO_CREATED) != erased) {
        abort();
    }
    fake_storage_reboot(&fs);
    uint64_t x = 0, y = 1;
    static const uint8_t msg[4] = {1, 2, 3, 4};
    if (dpm_memo_open(&b, &st, 0, n, &r) != DPM_OK || b.origin != DPM_MEMO_LOADED ||
        memcmp(a.key, b.key, sizeof(a.key)) != 0 || dpm_memo_prf(&a, msg, 4, &x) != DPM_OK ||
        dpm_memo_prf(&b, msg, 4, &y) != DPM_OK || x != y) {
        abort();
    }
    return 0;
}
