/* SPDX-License-Identifier: Apache-2.0 */
#include "dap_fixture.h"

#include <stdlib.h>
#include <string.h>

static int key(dpm_dap_hpke_key_t *k, dpm_hpke_config_t *c, uint8_t id, uint8_t seed,
               uint16_t aead_id)
{
    uint8_t ikm[32];
    for (int i = 0; i < 32; i++) {
        ikm[i] = (uint8_t)(seed * 31 + id * 7 + i);
    }
    return dpm_dap_hpke_key_derive(ikm, sizeof(ikm), id, aead_id, k, c) == DPM_OK ? 0 : -1;
}

int dap_task_fixture(dap_task_fixture_t *f, const dpm_prio3_t *v, dpm_eps_t eps,
                     uint64_t min_batch_size, uint8_t seed)
{
    return dap_task_fixture_aead(f, v, eps, min_batch_size, seed, DPM_HPKE_AEAD_AES_128_GCM,
                                 DPM_HPKE_AEAD_AES_128_GCM);
}

int dap_task_fixture_aead(dap_task_fixture_t *f, const dpm_prio3_t *v, dpm_eps_t eps,
                          uint64_t min_batch_size, uint8_t seed, uint16_t leader_aead,
                          uint16_t helper_aead)
{
    static const char info[] = "dpmetrics test task";
    static const char leader[] = "https://" DAP_LEADER_HOST "/dap/";
    static const char helper[] = "https://" DAP_HELPER_HOST "/dap/";
    memset(f, 0, sizeof(*f));
    for (unsigned i = 0; i < DPM_DAP_TASK_ID_BYTES; i++) {
        f->id[i] = (uint8_t)(seed + 3 * i);
    }
    dpm_dap_task_t t;
    memset(&t, 0, sizeof(t));
    t.task_info.p = (const uint8_t *)info;
    t.task_info.len = sizeof(info) - 1;
    t.leader_url.p = (const uint8_t *)leader;
    t.leader_url.len = sizeof(leader) - 1;
    t.helper_url.p = (const uint8_t *)helper;
    t.helper_url.len = sizeof(helper) - 1;
    t.time_precision = 3600;
    t.min_batch_size = min_batch_size;
    t.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    t.vdaf = *v;
    t.dp_mechanism = DPM_DAP_DP_DISCRETE_LAPLACE;
    t.central_eps = eps;
    if (key(&f->leader_key, &f->leader_cfg, 1, seed, leader_aead) != 0 ||
        key(&f->helper_key, &f->helper_cfg, 2, seed, helper_aead) != 0 ||
        dpm_dap_task_config_encode(&t, f->config, sizeof(f->config), &f->config_len) != DPM_OK) {
        return -1;
    }
    return dpm_dap_task_decode(f->id, f->config, f->config_len, &f->leader_cfg, &f->helper_cfg,
                               &f->task, NULL) == DPM_OK
               ? 0
               : -1;
}

void dap_task_policy(const dap_task_fixture_t *f, dpm_eps_t max_eps, uint64_t min_batch,
                     dpm_dap_policy_t *p)
{
    memset(p, 0, sizeof(*p));
    p->naggregators = 2;
    p->aggregators[0].host = DAP_LEADER_HOST;
    p->aggregators[0].hpke = f->leader_cfg;
    p->aggregators[1].host = DAP_HELPER_HOST;
    p->aggregators[1].hpke = f->helper_cfg;
    p->max_central_eps = DPM_EPS_Q16(max_eps);
    p->min_batch_size = min_batch;
}

int dap_fixed_wall_clock(void *ctx, int64_t *out)
{
    *out = *(const int64_t *)ctx;
    return 0;
}

static int ram_room(void *ctx, size_t len)
{
    dap_ram_outbox_t *o = ctx;
    return o->used + 4 + len <= o->cap;
}

static dpm_status_t ram_put(void *ctx, const uint8_t *task_id, const uint8_t *report, size_t len)
{
    dap_ram_outbox_t *o = ctx;
    (void)task_id;
    if (o->put_status != DPM_OK) {
        return o->put_status;
    }
    if (!ram_room(o, len)) {
        return DPM_ERR_BUFFER;
    }
    uint8_t *p = o->mem + o->used;
    p[0] = (uint8_t)(len >> 24);
    p[1] = (uint8_t)(len >> 16);
    p[2] = (uint8_t)(len >> 8);
    p[3] = (uint8_t)len;
    memcpy(p + 4, report, len);
    o->used += 4 + len;
    o->count++;
    return DPM_OK;
}

void dap_ram_outbox_init(dap_ram_outbox_t *o, uint8_t *mem, size_t cap)
{
    memset(o, 0, sizeof(*o));
    o->mem = mem;
    o->cap = cap;
}

dpm_dap_outbox_t dap_ram_outbox(dap_ram_outbox_t *o)
{
    dpm_dap_outbox_t b = {ram_room, ram_put, o};
    return b;
}

dpm_status_t dap_aggregate_one(const dap_task_fixture_t *f, const uint8_t *report, size_t len,
                               uint64_t *result, size_t result_len, const char **where)
{
    const dpm_prio3_t *v = &f->task.vdaf;
    const char *w = "decode";
    dpm_dap_report_view_t r;
    dpm_status_t st = dpm_dap_report_decode(report, len, &r, NULL);
    size_t cap = len, words = v->verify_work_words;
    uint8_t *plain[2] = {malloc(cap + 1), malloc(cap + 1)};
    uint8_t *state[2] = {malloc(v->state_bytes + 1), malloc(v->state_bytes + 1)};
    uint8_t *vshares = malloc(2u * v->verifier_share_bytes + 1);
    uint8_t *msg = malloc(v->verifier_message_bytes + 1);
    uint8_t *out = malloc(v->out_share_bytes + 1);
    uint8_t *agg = calloc(2, v->out_share_bytes + 1);
    uint64_t *work = malloc(words * 8 + 8);
    dpm_span_t ext[2], share[2];
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    dpm_dap_vdaf_ctx(&f->task, ctx);
    const dpm_dap_hpke_key_t *keys[2] = {&f->leader_key, &f->helper_key};
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        w = i == 0 ? "leader open" : "helper open";
        st = dpm_dap_open_input_share(&f->task, i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER,
                                      keys[i], 1, &r, plain[i], cap, &ext[i], &share[i], NULL);
        if (st == DPM_OK && ext[i].len != 0) {
            st = DPM_ERR_PROTOCOL; /* this code knows no private extension */
        }
        if (st == DPM_OK) {
            w = i == 0 ? "leader verify_init" : "helper verify_init";
            static const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES] = {42};
            st = dpm_prio3_verify_init(v, verify_key, ctx, sizeof(ctx), (uint32_t)i, r.report_id,
                                       r.public_share.p, r.public_share.len, share[i].p,
                                       share[i].len, state[i], v->state_bytes,
                                       vshares + (size_t)i * v->verifier_share_bytes,
                                       v->verifier_share_bytes, work, words);
        }
    }
    if (st == DPM_OK && r.public_extensions.len != 0) {
        w = "public extensions";
        st = DPM_ERR_PROTOCOL;
    }
    if (st == DPM_OK) {
        w = "verifier message";
        st = dpm_prio3_verifier_shares_to_message(v, ctx, sizeof(ctx), vshares,
                                                  2u * v->verifier_share_bytes, msg,
                                                  v->verifier_message_bytes, work, words);
    }
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        w = "verify_next";
        st = dpm_prio3_verify_next(v, state[i], v->state_bytes, msg, v->verifier_message_bytes, out,
                                   v->out_share_bytes);
        if (st == DPM_OK) {
            w = "aggregate";
            st = dpm_prio3_aggregate(v, agg + (size_t)i * v->out_share_bytes, v->out_share_bytes,
                                     out, v->out_share_bytes);
        }
    }
    if (st == DPM_OK) {
        w = "unshard";
        st = dpm_prio3_unshard(v, agg, 2u * v->out_share_bytes, 1, result, result_len);
    }
    if (where != NULL) {
        *where = w;
    }
    free(plain[0]), free(plain[1]), free(state[0]), free(state[1]);
    free(vshares), free(msg), free(out), free(agg), free(work);
    return st;
}
