/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the device's layout record (dpm/device.h, "the storage layout") read from
 * arbitrary storage bytes: dpm_layout_open over a region of DPM_DEVICE_MIN_REGION(0) bytes on a
 * flash-like RAM storage holding the input. Checked beyond the sanitizers:
 *   - it returns DPM_OK, DPM_ERR_PARAM or DPM_ERR_CORRUPT on a working storage, never another;
 *   - a refusal leaves every byte as it was;
 *   - DPM_OK leaves the region's record as it computes it, and a second open (a reboot) is
 *     DPM_OK again and writes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_internal.h"
#include "fake_storage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { N = DPM_DEVICE_MIN_REGION(0) };
    static uint8_t mem[N], before[N];
    fake_storage_t fs;
    fake_storage_init(&fs, mem, N, 1); /* erases mem: the input goes in after */
    memcpy(mem, data, size < N ? size : N);
    memcpy(before, mem, N);
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_storage_layout_t lay;
    const char *why = NULL;
    if (dpm_storage_layout(N, 0, &lay, NULL) != DPM_OK) {
        abort();
    }
    dpm_status_t s = dpm_layout_open(&st, 0, N, 1, &lay, &why);
    if (s != DPM_OK) {
        if ((s != DPM_ERR_PARAM && s != DPM_ERR_CORRUPT) || why == NULL ||
            memcmp(mem, before, N) != 0) {
            abort();
        }
        return 0;
    }
    memcpy(before, mem, N);
    fake_storage_reboot(&fs);
    if (dpm_layout_open(&st, 0, N, 1, &lay, &why) != DPM_OK || memcmp(mem, before, N) != 0) {
        abort();
    }
    return 0;
}
