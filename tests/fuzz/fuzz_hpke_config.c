/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: an aggregator's HPKE configuration as a device fetches it (GET
 * {aggregator}/hpke_config: an HpkeConfigList) or receives one alone. Checked beyond the
 * sanitizers: whatever is accepted is of the supported suite with a usable key
 * (dpm_hpke_config_check), a single config re-encodes to exactly its input, and the selected
 * config of a list is one of its entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/hpke.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpm_hpke_config_t c;
    if (dpm_hpke_config_decode(data, size, &c, NULL) == DPM_OK) {
        uint8_t again[DPM_HPKE_CONFIG_BYTES];
        size_t len = 0;
        if (dpm_hpke_config_check(&c, NULL) != DPM_OK ||
            dpm_hpke_config_encode(&c, again, sizeof(again), &len) != DPM_OK || len != size ||
            memcmp(again, data, size) != 0) {
            abort();
        }
    }
    if (dpm_hpke_config_list_select(data, size, DPM_HPKE_AEAD_CHACHA20_POLY1305, &c, NULL) ==
        DPM_OK) {
        uint8_t enc[DPM_HPKE_CONFIG_BYTES];
        size_t len = 0;
        if (dpm_hpke_config_check(&c, NULL) != DPM_OK ||
            dpm_hpke_config_encode(&c, enc, sizeof(enc), &len) != DPM_OK) {
            abort();
        }
        int found = 0; /* the encoding of the pick occurs in the list */
        for (size_t i = 2; !found && i + len <= size; i++) {
            found = memcmp(data + i, enc, len) == 0;
        }
        if (!found) {
            abort();
        }
    }
    return 0;
}
