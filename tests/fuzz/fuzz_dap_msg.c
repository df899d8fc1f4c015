/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the DAP messages an aggregator or the collector receives
 * (host-sim/aggregator/dap_msg.h). The first byte picks the decoder (mod 15: the order of
 * DECODERS), the rest is the message. Checked beyond the sanitizers: a message a decoder accepts
 * re-encodes to exactly its bytes (the draft's encodings are canonical: a leader may keep what
 * it got as the AggregateShareAad's collection_job_req), each list's iterator walks exactly its
 * count of items and then answers DPM_ERR_RANGE, every view lies inside the input; and the
 * iterators fed the raw bytes as a list never claim an item past its end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define assert_int_equal(a, b)                                                                     \
    do {                                                                                           \
        if ((uint64_t)(a) != (uint64_t)(b)) {                                                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#define assert_memory_equal(a, b, n)                                                               \
    do {                                                                                           \
        if ((n) > 0 && memcmp((a), (b), (n)) != 0) {                                               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#include "dap_msg_roundtrip.h"

static const decode_fn DECODERS[] = {d_ext,   d_hpke_list, d_ct,   d_agg_share, d_md,
                                     d_rs,    d_init,      d_resp, d_cont,      d_upl,
                                     d_query, d_sel,       d_creq, d_sreq,      d_cresp};
#define NDEC (sizeof(DECODERS) / sizeof(DECODERS[0]))

#define WALK(fn, T)                                                                                \
    do {                                                                                           \
        size_t pos = 0, prev = 0;                                                                  \
        T item;                                                                                    \
        while (fn(&raw, &pos, &item) == DPM_OK) {                                                  \
            if (pos <= prev || pos > raw.bytes.len) {                                              \
                abort();                                                                           \
            }                                                                                      \
            prev = pos;                                                                            \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > DAP_RT_BIG) {
        return 0;
    }
    dap_rt_t s = {DECODERS[data[0] % NDEC], data + 1, size - 1};
    const char *why = NULL;
    dpm_status_t st = s.dec(s.b, s.n, &why);
    if (st == DPM_OK) {
        dap_roundtrip(&s);
    } else if (st != DPM_ERR_PROTOCOL || why == NULL) {
        abort();
    }
    dap_list_t raw = {{s.b, s.n}, 0};
    WALK(dap_msg_next_ext, dap_ext_t);
    WALK(dap_msg_next_hpke_config, dap_hpke_config_view_t);
    WALK(dap_msg_next_verify_init, dap_verify_init_t);
    WALK(dap_msg_next_verify_resp, dap_verify_resp_t);
    WALK(dap_msg_next_verify_continue, dap_verify_continue_t);
    WALK(dap_msg_next_upload_status, dap_upload_status_t);
    return 0;
}
