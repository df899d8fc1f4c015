/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a DAP task's TaskConfiguration as a device receives it (with a campaign, or
 * from a task provisioning channel), decoded with two fixed HPKE configurations. Checked beyond
 * the sanitizers: an accepted task re-encodes to exactly its input (its fields say everything
 * the bytes say: the input share's associated data is these bytes, so nothing may hide in them),
 * and its VDAF instance reports sizes its own init would give. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t id[DPM_DAP_TASK_ID_BYTES] = {1, 2, 3};
    dpm_hpke_config_t leader = {
        1, DPM_HPKE_KEM_X25519_SHA256, DPM_HPKE_KDF_HKDF_SHA256, DPM_HPKE_AEAD_AES_128_GCM, {9}};
    dpm_hpke_config_t helper = leader;
    helper.id = 2;
    helper.public_key[0] = 10;
    dpm_dap_task_t t;
    if (dpm_dap_task_decode(id, data, size, &leader, &helper, &t, NULL) != DPM_OK) {
        return 0;
    }
    uint8_t *again = malloc(DPM_DAP_TASK_CONFIG_MAX + 1);
    size_t len = 0;
    if (again == NULL || t.config != data || t.config_len != size ||
        dpm_dap_task_config_encode(&t, again, DPM_DAP_TASK_CONFIG_MAX + 1, &len) != DPM_OK ||
        len != size || memcmp(again, data, size) != 0 || dpm_dap_report_bytes(&t.vdaf) == 0 ||
        t.vdaf.shares != 2) {
        abort();
    }
    free(again);
    return 0;
}
