/* SPDX-License-Identifier: Apache-2.0 */
/* Two-aggregator reports on a Cortex-M4 (make bench, through .make/bench.py): instructions and
 * stack of one DAP report, counted under `qemu-system-arm -M mps2-an386 -icount shift=0` as
 * tests/cross/bench_cm.c does (SysTick converted to instructions by a calibration loop; here
 * SysTick also interrupts on every wrap of its 24 bits, because some steps take longer than
 * 2^24 ticks can count).
 *
 * What "the report" is. A report's cryptography is (1) the HPKE encapsulation to each
 * aggregator (SetupBaseS: two X25519 each, 4 in all, ~4 M instructions apiece) and (2) the
 * report proper: shard and prove (Prio3), seal the two input shares (the AEAD only), queue.
 * (1) depends on nothing but the aggregators' keys, so the device runs it ahead, when idle
 * (dpm_dap_pool_fill into a dpm_hpke_pool_t), and the report call does (2)
 * (dpm_hpke_pool_sealer). Both are measured, with their stack:
 *
 *   device.cm4.prio3_<shape>.instructions        THE REPORT CALL: dpm_device_dap_report_*
 *                                                 (validate, charge the ledger in RAM storage,
 *                                                 shard, prove, seal, queue) with the contexts
 *                                                 prepared ahead, the worst of the two AEADs
 *   device.cm4.prio3_<shape>.stack_bytes          its stack, the worst of the two AEADs
 *   device.cm4.prio3_<shape>.<aead>.report_call.{instructions,stack_bytes}   per AEAD
 *                                                 (aes128gcm: DAP's mandatory suite;
 *                                                 chacha20poly1305: the device's preference)
 *   device.cm4.prio3_<shape>.<aead>.seal.instructions   the two AEAD seals alone (in it)
 *   device.cm4.prio3_<shape>.prepare.{instructions,stack_bytes}   IDLE TIME, per report:
 *                                                 dpm_dap_pool_fill (two SetupBaseS)
 *   device.cm4.prio3_<shape>.inline.{instructions,stack_bytes}   the report call without
 *                                                 prepared contexts (SealBase inline, AES-128-GCM):
 *                                                 report + preparation in one call
 *   device.cm4.prio3_<shape>.report_bytes          the DAP report
 *   (dpm_prio3_shard alone: device.cm4.prio3_<shape>.shard.* of tests/cross/bench_vdaf_cm.c)
 *   device.cm4.hpke_derive_keypair.instructions, device.cm4.hpke_decap.instructions   one
 *                                                 X25519 each (Everest) and its HKDF
 * Stack is measured by painting the stack below the caller (so calls through function
 * pointers, Mbed TLS's included, count). Every report made here is checked by the aggregators'
 * code (open both shares, verify the proof, unshard back to the measurement) before its
 * figures are printed. Randomness: the port's test generator (NOT FOR PRODUCTION). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_ticks.h"
#include "dap_fixture.h"
#include "dpm/dpm.h"
#include "dpm/port_cortex_m.h"
#include "dpm/port_hpke.h"
#include "dpm/port_tls.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"

#define SYST_ENABLE_INT_CPUCLK 7u /* ENABLE | TICKINT | CLKSOURCE: cm_ticks.h's, interrupting */
#define STACK_PAINT_WORDS 4096u   /* 16 KiB below the caller's frame */
#define PAINT 0xC5AC5AC5u

/* cm_ticks.h's counter stops at 2^24 ticks; a report takes longer, so here SysTick interrupts
 * on every wrap and the handler counts them. */
static volatile uint32_t wraps;

void SysTick_Handler(void);
void SysTick_Handler(void)
{
    wraps++;
}

static void long_ticks_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    wraps = 0;
    SYST_CSR = SYST_ENABLE_INT_CPUCLK;
}

static uint64_t long_ticks_stop(void)
{
    uint32_t v = SYST_CVR, w = wraps;
    if (SYST_CSR & SYST_COUNTFLAG) { /* wrapped after the handler last ran: count it */
        v = SYST_CVR;
        w++;
    }
    SYST_CSR = 0;
    return (uint64_t)w * 0x1000000u + (0xFFFFFFu - v);
}

static double per_tick;

static void metric(const char *shape, const char *what, double value, const char *unit)
{
    printf(
        "{\"name\": \"device.cm4.%s.%s\", \"value\": %.1f, \"unit\": \"%s\", \"baseline\": null, "
        "\"ratio\": null}\n",
        shape, what, value, unit);
}

/* ---- stack: paint below the caller's frame, run, find the deepest word changed ---------- */
typedef struct shape shape_t;
typedef dpm_status_t (*step_fn)(shape_t *s);

static __attribute__((noinline)) uint32_t stack_of(step_fn f, shape_t *s, dpm_status_t *st)
{
    uintptr_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    uint32_t *top = (uint32_t *)(sp & ~(uintptr_t)3);
    uint32_t *bottom = top - STACK_PAINT_WORDS;
    for (uint32_t *p = bottom; p < top - 16; p++) {
        *p = PAINT;
    }
    *st = f(s);
    uint32_t *p = bottom;
    while (p < top && *p == PAINT) {
        p++;
    }
    return (uint32_t)((uintptr_t)top - (uintptr_t)p);
}

/* ---- one shape ------------------------------------------------------------------------------ */
struct shape {
    const char *name;
    dpm_prio3_t v;
    dap_task_fixture_t tf;
    uint64_t meas[72];
    size_t n;
    uint8_t *report;
    uint64_t *work;
    dpm_dap_layout_t l;
    dpm_rng_t rng;
    dpm_device_t dev;
    dpm_dap_io_t io;
    dap_ram_outbox_t outbox;
    uint8_t *outbox_mem;
    uint32_t period;
    dpm_hpke_encap_t slots[2];
    dpm_hpke_pool_t pool;
};

#define NAEAD 2
static const uint16_t AEAD_ID[NAEAD] = {DPM_HPKE_AEAD_AES_128_GCM, DPM_HPKE_AEAD_CHACHA20_POLY1305};
static const char *const AEAD_NAME[NAEAD] = {"aes128gcm", "chacha20poly1305"};

static int64_t now_s = 1700000000;
static int wall(void *ctx, int64_t *out)
{
    (void)ctx;
    *out = now_s;
    return 0;
}

/* The report's cryptography in two steps, as the device call runs them: frame and shard... */
static dpm_status_t step_shard(shape_t *s)
{
    uint8_t rand[16 + 128];
    if (s->rng.fill(s->rng.ctx, rand, 16u + s->v.rand_bytes) != 0) {
        return DPM_ERR_RNG;
    }
    dpm_dap_report_frame(&s->tf.task, &s->l, rand, (uint64_t)now_s / 3600u, s->report);
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    dpm_dap_vdaf_ctx(&s->tf.task, ctx);
    const dpm_dap_layout_t *l = &s->l;
    const dpm_prio3_shard_out_t out = {s->report + l->public_share,   l->public_share_len,
                                       s->report + l->input_share[0], l->input_share_len[0],
                                       s->report + l->input_share[1], l->input_share_len[1]};
    return dpm_prio3_shard(&s->v, ctx, sizeof(ctx), s->meas, s->n, s->report, rand + 16,
                           s->v.rand_bytes, &out, s->work, s->v.shard_work_words);
}

/* ... then seal both input shares in place, with the contexts prepared ahead. */
static dpm_status_t step_seal(shape_t *s)
{
    dpm_hpke_sealer_t sealer = dpm_hpke_pool_sealer(&s->pool);
    const dpm_dap_layout_t *l = &s->l;
    dpm_status_t st = DPM_OK;
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        uint8_t info[DPM_DAP_INFO_BYTES];
        dpm_dap_input_share_info(i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER, info);
        const dpm_span_t aad[3] = {{s->tf.task.id, 32},
                                   {s->tf.task.config, s->tf.task.config_len},
                                   {s->report, l->aad_len}};
        st = sealer.seal(sealer.ctx, i == 0 ? &s->tf.leader_cfg : &s->tf.helper_cfg, &s->rng, info,
                         sizeof(info), aad, 3, s->report + l->share[i], l->share_len[i],
                         s->report + l->enc[i], s->report + l->tag[i]);
    }
    return st;
}

/* The whole device call (a new period each time: one participation per period). */
static dpm_status_t step_device(shape_t *s)
{
    const dpm_dap_task_t *t = &s->tf.task;
    if (s->v.kind == DPM_PRIO3_SUMVEC) {
        return dpm_device_dap_report_sumvec(&s->dev, &s->io, t, s->period++, s->meas, s->n, NULL,
                                            NULL);
    }
    return dpm_device_dap_report_histogram(&s->dev, &s->io, t, s->period++, (uint32_t)s->meas[0],
                                           NULL, NULL);
}

/* Encapsulation ahead: one HPKE context per aggregator of the task, into the pool. */
static dpm_status_t step_fill(shape_t *s)
{
    return dpm_dap_pool_fill(&s->pool, &s->tf.task, &s->rng);
}

static dpm_status_t step_clear(shape_t *s)
{
    dpm_hpke_pool_clear(&s->pool);
    return DPM_OK;
}

static dpm_status_t step_refill(shape_t *s)
{
    dpm_hpke_pool_clear(&s->pool);
    return step_fill(s);
}

/* What the seal alone needs before it: the shares, and its two contexts. */
static dpm_status_t step_shard_refill(shape_t *s)
{
    dpm_status_t st = step_shard(s);
    return st == DPM_OK ? step_refill(s) : st;
}

/* The aggregators accept the report and recover the measurement. */
static int verified(shape_t *s)
{
    uint64_t result[72];
    const char *where = "";
    dpm_status_t st = dap_aggregate_one(&s->tf, s->report, s->l.bytes, result, 72, &where);
    if (st != DPM_OK) {
        printf("bench: %s report rejected at %s: %s\n", s->name, where, dpm_strerror(st));
        return 0;
    }
    for (size_t i = 0; i < s->v.output_len; i++) {
        uint64_t want = s->v.kind == DPM_PRIO3_SUMVEC ? s->meas[i] : (uint64_t)(i == s->meas[0]);
        if (result[i] != want) {
            printf("bench: %s report aggregates to the wrong value\n", s->name);
            return 0;
        }
    }
    return 1;
}

/* Run step f once timed (instructions into *t) and once under the stack paint (*stack), each
 * time after `before` (if not NULL: the seal needs fresh shares to seal). */
static int measure(step_fn before, step_fn f, shape_t *s, uint64_t *t, uint32_t *stack)
{
    dpm_status_t st = before != NULL ? before(s) : DPM_OK;
    if (st == DPM_OK) {
        long_ticks_start();
        st = f(s);
        *t = long_ticks_stop();
    }
    dpm_status_t st2 = st == DPM_OK && before != NULL ? before(s) : DPM_OK;
    *stack = st == DPM_OK && st2 == DPM_OK ? stack_of(f, s, &st2) : 0;
    if (st != DPM_OK || st2 != DPM_OK) {
        printf("bench: %s: %s\n", s->name, dpm_strerror(st != DPM_OK ? st : st2));
        return 0;
    }
    return 1;
}

/* One shape with one AEAD for both aggregators: the report call prepared ahead, its seal
 * alone, and (AES-128-GCM only) the preparation and the inline call. */
typedef struct {
    uint64_t call, seal, prepare, inline_call;
    uint32_t k_call, k_prepare, k_inline;
} figures_t;

static int run_aead(shape_t *s, dpm_rng_t rng, int a, figures_t *fig)
{
    static uint8_t state[16384];
    static dpm_ram_storage_t ram;
    if (dap_task_fixture_aead(&s->tf, &s->v, DPM_EPS_ONE, 1000, 9, AEAD_ID[a], AEAD_ID[a]) != 0) {
        printf("bench: %s: task\n", s->name);
        return 0;
    }
    dpm_dap_report_layout(&s->v, &s->l);
    s->rng = rng;
    uint32_t k_unused;
    /* the two seals alone (AEAD only: their contexts prepared ahead) */
    if (dpm_hpke_pool_init(&s->pool, s->slots, 2) != DPM_OK ||
        !measure(step_shard_refill, step_seal, s, &fig->seal, &k_unused) || !verified(s)) {
        return 0;
    }

    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    memset(state, 0xFF, sizeof(state));
    cfg.rng = rng;
    cfg.clock.wall_time_s = wall;
    cfg.storage = dpm_ram_storage(&ram, state, sizeof(state));
    cfg.region_size = 3u * DPM_LEDGER_RECORD_MAX + 8192u; /* record, ledger, an 8 KB outbox */
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(1);
    /* one report per period, several periods at one fixed clock reading: the device-wide cap
     * (one campaign's worth per day by default) would refuse the second */
    cfg.policy.device.max_eps = DPM_EPS(64);
    static dpm_dap_policy_t dap;
    dap_task_policy(&s->tf, DPM_EPS_ONE, 100, &dap);
    cfg.policy.dap = &dap;
    dap_ram_outbox_init(&s->outbox, s->outbox_mem, 4u * (s->l.bytes + 4u));
    s->io.outbox = dap_ram_outbox(&s->outbox);
    s->io.report = s->report;
    s->io.report_cap = s->l.bytes;
    s->io.work = s->work;
    s->io.work_words = s->v.shard_work_words;
    s->period = 0;
    if (dpm_device_init(&s->dev, &cfg) != DPM_OK) {
        return 0;
    }
    if (a == 0) { /* without prepared contexts: the whole SealBase inline */
        s->io.sealer = dpm_hpke_sealer();
        if (!measure(NULL, step_device, s, &fig->inline_call, &fig->k_inline) || !verified(s)) {
            return 0;
        }
    }
    /* the report call with both HPKE contexts prepared ahead (dpm_hpke_pool_sealer) */
    s->io.sealer = dpm_hpke_pool_sealer(&s->pool);
    uint64_t t_fill;
    uint32_t k_fill;
    if (dpm_hpke_pool_init(&s->pool, s->slots, 2) != DPM_OK ||
        !measure(step_clear, step_fill, s, &t_fill, &k_fill) ||
        !measure(step_refill, step_device, s, &fig->call, &fig->k_call) || !verified(s) ||
        s->pool.used != 4 || s->pool.missed != 0) {
        printf("bench: %s: pooled report (used %u, missed %u)\n", s->name, (unsigned)s->pool.used,
               (unsigned)s->pool.missed);
        return 0;
    }
    if (a == 0) {
        fig->prepare = t_fill;
        fig->k_prepare = k_fill;
    }
    return 1;
}

static int run_shape(shape_t *s, dpm_rng_t rng)
{
    dpm_dap_report_layout(&s->v, &s->l); /* the layout does not depend on the AEAD */
    const size_t bytes = s->l.bytes;
    s->report = malloc(bytes);
    s->work = malloc(8u * s->v.shard_work_words);
    s->outbox_mem = malloc(4u * (bytes + 4u));
    if (s->report == NULL || s->work == NULL || s->outbox_mem == NULL) {
        return 0;
    }
    for (size_t i = 0; i < 72; i++) {
        s->meas[i] = (uint64_t)((i * 89u + 7u) % 256u);
    }
    s->meas[0] %= s->v.length;
    s->n = s->v.kind == DPM_PRIO3_SUMVEC ? s->v.length : 1u;
    figures_t fig[NAEAD];
    memset(fig, 0, sizeof(fig));
    for (int a = 0; a < NAEAD; a++) {
        if (!run_aead(s, rng, a, &fig[a])) {
            return 0;
        }
    }
    uint64_t worst = 0;
    uint32_t k_worst = 0;
    for (int a = 0; a < NAEAD; a++) {
        char what[64];
        snprintf(what, sizeof(what), "%s.report_call.instructions", AEAD_NAME[a]);
        metric(s->name, what, (double)fig[a].call * per_tick, "instructions");
        snprintf(what, sizeof(what), "%s.report_call.stack_bytes", AEAD_NAME[a]);
        metric(s->name, what, (double)fig[a].k_call, "bytes");
        snprintf(what, sizeof(what), "%s.seal.instructions", AEAD_NAME[a]);
        metric(s->name, what, (double)fig[a].seal * per_tick, "instructions");
        worst = fig[a].call > worst ? fig[a].call : worst;
        k_worst = fig[a].k_call > k_worst ? fig[a].k_call : k_worst;
    }
    metric(s->name, "instructions", (double)worst * per_tick, "instructions");
    metric(s->name, "stack_bytes", (double)k_worst, "bytes");
    metric(s->name, "prepare.instructions", (double)fig[0].prepare * per_tick, "instructions");
    metric(s->name, "prepare.stack_bytes", (double)fig[0].k_prepare, "bytes");
    metric(s->name, "inline.instructions", (double)fig[0].inline_call * per_tick, "instructions");
    metric(s->name, "inline.stack_bytes", (double)fig[0].k_inline, "bytes");
    metric(s->name, "report_bytes", (double)bytes, "bytes");
    free(s->report);
    free(s->work);
    free(s->outbox_mem);
    return 1;
}

static int x25519_cost(void)
{
    dpm_hpke_keypair_t kp;
    uint8_t ikm[32] = {1};
    /* DeriveKeyPair = a few HKDF-SHA256 blocks + one X25519: the HKDF part measured apart */
    long_ticks_start();
    int ok = dpm_hpke_derive_keypair(ikm, sizeof(ikm), &kp) == DPM_OK;
    uint64_t t_derive = long_ticks_stop();
    uint8_t enc[32], ss[32];
    long_ticks_start();
    ok &= dpm_hpke_decap(kp.pk, &kp, ss) == DPM_OK; /* one X25519 + ExtractAndExpand */
    uint64_t t_decap = long_ticks_stop();
    (void)enc;
    metric("hpke_derive_keypair", "instructions", (double)t_derive * per_tick, "instructions");
    metric("hpke_decap", "instructions", (double)t_decap * per_tick, "instructions");
    return ok;
}

int main(void)
{
    static uint8_t arena[24576];
    long_ticks_start();
    spin(CM_TICKS_SPIN);
    uint64_t cal = long_ticks_stop();
    per_tick = 2.0 * CM_TICKS_SPIN / (double)cal;
    printf("# calibration: %u-instruction loop = %lu SysTick ticks (%.3f instructions per tick)\n",
           2u * CM_TICKS_SPIN, (unsigned long)cal, per_tick);
    if (dpm_tls_use_arena(arena, sizeof(arena)) != DPM_OK) {
        printf("bench: arena\n");
        return 1;
    }
    dpm_cm_test_drbg_t drbg; /* NOT FOR PRODUCTION: a benchmark */
    dpm_cm_test_drbg_seed(&drbg, 7u);
    dpm_rng_t rng = dpm_cm_test_drbg(&drbg);
    static shape_t shapes[4];
    shapes[0].name = "prio3_histogram16";
    shapes[1].name = "prio3_histogram32";
    shapes[2].name = "prio3_sumvec48";
    shapes[3].name = "prio3_sumvec72";
    int ok = dpm_prio3_histogram_init(&shapes[0].v, 2, 16, 3) == DPM_OK &&
             dpm_prio3_histogram_init(&shapes[1].v, 2, 32, 5) == DPM_OK &&
             dpm_prio3_sumvec_init(&shapes[2].v, 2, 48, 255, 26) == DPM_OK &&
             dpm_prio3_sumvec_init(&shapes[3].v, 2, 72, 255, 19) == DPM_OK;
    for (int i = 0; i < 4 && ok; i++) {
        ok = run_shape(&shapes[i], rng);
    }
    ok = ok && x25519_cost();
    if (!ok) {
        printf("bench: a call failed\n");
    }
    return ok ? 0 : 1;
}
