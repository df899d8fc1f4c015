/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what a DAP aggregator receives from devices (a leader: an UploadRequest of
 * reports; both: a report's input share to open). The bytes are decoded as one Report
 * (dpm_dap_report_decode), as an UploadRequest (dpm_dap_report_next until the end), and as a
 * PlaintextInputShare (dpm_dap_plaintext_decode); a decoded report goes through the aggregators'
 * whole path for each of three fixed tasks (fuzz_fixtures.h, tests/support/dap_fixture.c: open both
 * input shares with dpm_dap_open_input_share, verify the proof, aggregate, unshard). Checked beyond
 * the sanitizers:
 *   - every view a decoder returns lies inside the input, and report_next advances;
 *   - a report that the aggregators accept unshards to a measurement of its task's range (the
 *     seeds, made by the device, do; a mutated one must fail to open or to verify). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_fixtures.h"

static dap_task_fixture_t tasks[FUZZ_NDAP_TASKS];
static int ready;

static void inside(const uint8_t *data, size_t size, const uint8_t *p, size_t len)
{
    if (len != 0 && (p < data || len > size || (size_t)(p - data) > size - len)) {
        abort();
    }
}

static void check_view(const uint8_t *data, size_t size, const dpm_dap_report_view_t *r)
{
    inside(data, size, r->report_id, DPM_DAP_REPORT_ID_BYTES);
    inside(data, size, r->public_extensions.p, r->public_extensions.len);
    inside(data, size, r->public_share.p, r->public_share.len);
    inside(data, size, r->aad_tail.p, r->aad_tail.len);
    for (int i = 0; i < 2; i++) {
        inside(data, size, r->share[i].enc, DPM_HPKE_NENC);
        inside(data, size, r->share[i].ciphertext.p, r->share[i].ciphertext.len);
        inside(data, size, r->share[i].tag, DPM_HPKE_NT);
        if (r->share[i].tag != r->share[i].ciphertext.p + r->share[i].ciphertext.len) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        fuzz_dap_tasks(tasks);
        ready = 1;
    }
    dpm_dap_report_view_t r;
    if (dpm_dap_report_decode(data, size, &r, NULL) == DPM_OK) {
        check_view(data, size, &r);
        for (int t = 0; t < FUZZ_NDAP_TASKS; t++) {
            const dpm_prio3_t *v = &tasks[t].task.vdaf;
            uint8_t *plain = malloc(size + 1);
            dpm_span_t ext, share;
            dpm_status_t st =
                dpm_dap_open_input_share(&tasks[t].task, DPM_DAP_ROLE_LEADER, &tasks[t].leader_key,
                                         1, &r, plain, size, &ext, &share, NULL);
            if (st == DPM_OK) {
                inside(plain, size, ext.p, ext.len);
                inside(plain, size, share.p, share.len);
            }
            free(plain);
            uint64_t result[48];
            if (st != DPM_OK ||
                dap_aggregate_one(&tasks[t], data, size, result, 48, NULL) != DPM_OK) {
                continue;
            }
            uint64_t total = 0;
            for (size_t i = 0; i < v->output_len; i++) {
                if (result[i] > (v->kind == DPM_PRIO3_SUMVEC ? v->max_measurement : 1u)) {
                    abort(); /* accepted, yet outside its variant's range */
                }
                total += result[i];
            }
            if (v->kind == DPM_PRIO3_HISTOGRAM && total != 1) {
                abort();
            }
        }
    }
    size_t pos = 0;
    while (pos < size) {
        size_t before = pos;
        if (dpm_dap_report_next(data, size, &pos, &r, NULL) != DPM_OK) {
            break;
        }
        if (pos <= before || pos > size) {
            abort();
        }
        check_view(data, size, &r);
    }
    dpm_span_t ext, payload;
    if (dpm_dap_plaintext_decode(data, size, &ext, &payload) == DPM_OK) {
        inside(data, size, ext.p, ext.len);
        inside(data, size, payload.p, payload.len);
        if (payload.len == 0) {
            abort();
        }
    }
    return 0;
}
