/* SPDX-License-Identifier: Apache-2.0 */
/* The painted-stack check of make size's one-call stack figure (tests/cross/test_cm_stack.sh
 * builds this image with make size's tuple_min flags at -Os, runs it under QEMU and compares
 * what it prints with .make/size.py's static figure for the same image).
 *
 * Each dpm_device_report_tuple call runs on a stack painted with a pattern below the caller's
 * frame; afterwards the lowest overwritten word gives the bytes the call really used (its
 * high-water mark). The calls are the worst ones a tuple_mr report can make: 4 metrics over 16
 * groups, the first report of each campaign and of each period (the ledger's new entries),
 * outbox compactions (a small outbox compacting the whole bank in one call, a larger one
 * compacting in steps), and the port's production random source (port/cortex-m/ctr_drbg.c)
 * reseeding on every refill (prediction resistance on: entropy gathering and conditioning and
 * the DRBG's derivation function, each time). Output, one line each:
 *   stack control: <bytes> (a function with a 1,024-byte local array: the method's check)
 *   stack <outbox>: max <bytes> at report <i>, <n> reports, <r> with a reseed, <c> compactions
 *   stack max: <bytes>
 * Exit status 0 when every report was made, the reseeds and compactions happened. The TRNG
 * below is a stand-in for the board's (QEMU's mps2 has none): NOT FOR PRODUCTION. */
#include <stdio.h>
#include <string.h>

#include "dpm/dpm.h"
#include "dpm/port_cortex_m.h"
#include "dpm/port_cortex_m_drbg.h"
#include "dpm/expert/outbox.h"

#define PAINT 0xC5A5E1D3u
#define WINDOW 16384u /* bytes painted below the caller's frame: far more than any figure */
/* the layout record's area and the ledger: 3 ledger records (dpm/device.h), then the outbox */
#define LEDGER_BYTES (3u * DPM_LEDGER_RECORD_MAX)
#define ROUNDS 24u   /* periods; each campaign reports once per period */
#define CAMPAIGNS 3u /* <= DPM_LEDGER_MAX_CAMPAIGNS */

static unsigned trng_reads;

/* The board's TRNG (a test stand-in: SplitMix64 over a counter, predictable). */
dpm_status_t dpm_cm_trng_read(uint8_t *out, size_t len)
{
    static uint64_t s = 0x5eed;
    trng_reads++;
    while (len > 0) {
        uint64_t z = (s += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        for (int i = 0; i < 8 && len > 0; i++, len--) {
            *out++ = (uint8_t)(z >> (8 * i));
        }
    }
    return DPM_OK;
}

static uint32_t sp_now(void)
{
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Paint WINDOW bytes below this frame (which does not move: the call's stacked arguments sit
 * in it), make the call, and count the bytes below the frame it overwrote. Volatile stores:
 * a memset call would itself use the painted stack. */
static __attribute__((noinline)) dpm_status_t painted_report(dpm_device_t *d, const dpm_mech_t *m,
                                                             uint32_t period, uint32_t *used)
{
    static const dpm_confusion_t conf = {40, 5, 50, 5};
    uint32_t sp = sp_now();
    volatile uint32_t *lo = (volatile uint32_t *)(uintptr_t)(sp - WINDOW);
    volatile uint32_t *p;
    for (p = lo; p < (volatile uint32_t *)(uintptr_t)sp; p++) {
        *p = PAINT;
    }
    dpm_report_info_t info;
    dpm_status_t st = dpm_device_report_tuple(d, m, period, DPM_MAX_GROUPS - 1u, &conf, &info);
    for (p = lo; p < (volatile uint32_t *)(uintptr_t)sp && *p == PAINT; p++) {
    }
    *used = sp - (uint32_t)(uintptr_t)p;
    return st;
}

/* The method's own check: a frame with a 1,024-byte array it writes whole. */
static __attribute__((noinline, noclone)) uint32_t deep_control(uint32_t seed)
{
    volatile uint8_t a[1024];
    for (uint32_t i = 0; i < sizeof(a); i++) {
        a[i] = (uint8_t)(seed + i);
    }
    return a[seed % sizeof(a)];
}

static __attribute__((noinline)) uint32_t painted_control(void)
{
    uint32_t sp = sp_now();
    volatile uint32_t *lo = (volatile uint32_t *)(uintptr_t)(sp - WINDOW);
    volatile uint32_t *p;
    for (p = lo; p < (volatile uint32_t *)(uintptr_t)sp; p++) {
        *p = PAINT;
    }
    (void)deep_control(7u);
    for (p = lo; p < (volatile uint32_t *)(uintptr_t)sp && *p == PAINT; p++) {
    }
    return sp - (uint32_t)(uintptr_t)p;
}

static void campaign(dpm_campaign_t *c, uint32_t id)
{
    static const dpm_metric_t metrics[] = {DPM_METRIC_TPR, DPM_METRIC_FPR, DPM_METRIC_PRECISION,
                                           DPM_METRIC_ACCURACY};
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->mechanism = DPM_MECH_ID_TUPLE_MR;
    c->eps = DPM_EPS(1);
    c->budget = DPM_EPS(4);
    c->period_seconds = 86400u;
    c->groups = DPM_MAX_GROUPS;
    c->nmetrics = 4u;
    for (uint32_t i = 0; i < 4u; i++) {
        c->metrics[i] = metrics[i];
    }
    c->frac_bits = 16u;
}

/* Remove the oldest pending reports (as an app does once its POST got a 2xx) down to `keep`. */
static int deliver(dpm_device_t *dev, uint32_t keep)
{
    dpm_outbox_t *ob = dpm_device_outbox(dev);
    while (dpm_outbox_pending(ob) > keep) {
        uint32_t cursor = 0;
        int found = 0;
        dpm_outbox_entry_t e;
        if (dpm_outbox_next(ob, &cursor, &e, &found) != DPM_OK || !found ||
            dpm_outbox_remove(ob, &e) != DPM_OK) {
            return -1;
        }
    }
    return 0;
}

/* One device over an outbox of outbox_bytes: ROUNDS x CAMPAIGNS painted reports, each followed
 * by the removal of all but `keep` pending reports. */
static int run(const char *name, uint8_t *ram, uint32_t outbox_bytes, uint32_t keep,
               uint32_t *max_used)
{
    static dpm_ram_storage_t storage;
    static dpm_cm_drbg_t rng;
    static dpm_device_t dev;
    static dpm_mech_t mech[CAMPAIGNS];
    memset(ram, 0xFF, LEDGER_BYTES + outbox_bytes);
    if (dpm_cm_drbg_init(&rng, (const uint8_t *)name, strlen(name)) != DPM_OK) {
        printf("%s: the DRBG could not be seeded\n", name);
        return 1;
    }
    /* reseed at every request: the worst case of every refill */
    mbedtls_ctr_drbg_set_prediction_resistance(&rng.drbg, MBEDTLS_CTR_DRBG_PR_ON);
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = dpm_cm_drbg(&rng);
    cfg.storage = dpm_ram_storage(&storage, ram, LEDGER_BYTES + outbox_bytes);
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(4);
    cfg.policy.device.max_eps = DPM_EPS(1000); /* no clock: a lifetime cap */
    dpm_status_t st = dpm_device_init(&dev, &cfg);
    for (uint32_t k = 0; k < CAMPAIGNS && st == DPM_OK; k++) {
        dpm_campaign_t c;
        campaign(&c, 100u + k);
        st = dpm_device_accept_mech(&dev, &c, &mech[k], NULL);
    }
    if (st != DPM_OK) {
        printf("%s: %s (%s)\n", name, dpm_device_why(&dev), dpm_strerror(st));
        return 1;
    }
    uint32_t n = 0, worst = 0, worst_at = 0, reseeded = 0, compactions = 0;
    uint32_t seq = dpm_device_outbox(&dev)->seq;
    for (uint32_t period = 0; period < ROUNDS; period++) {
        for (uint32_t k = 0; k < CAMPAIGNS; k++, n++) {
            uint32_t used = 0, reads = trng_reads;
            st = painted_report(&dev, &mech[k], period, &used);
            if (st != DPM_OK) {
                printf("%s: report %u: %s (%s)\n", name, (unsigned)n, dpm_device_why(&dev),
                       dpm_strerror(st));
                return 1;
            }
            reseeded += trng_reads != reads;
            compactions += dpm_device_outbox(&dev)->seq != seq;
            seq = dpm_device_outbox(&dev)->seq;
            if (used > worst) {
                worst = used;
                worst_at = n;
            }
            if (deliver(&dev, keep) != 0) {
                printf("%s: delivering failed\n", name);
                return 1;
            }
        }
    }
    dpm_cm_drbg_free(&rng);
    printf("stack %s: max %u at report %u, %u reports, %u with a reseed, %u compactions\n", name,
           (unsigned)worst, (unsigned)worst_at, (unsigned)n, (unsigned)reseeded,
           (unsigned)compactions);
    if (worst > *max_used) {
        *max_used = worst;
    }
    /* every refill reseeded (prediction resistance), and the outbox compacted */
    return reseeded == 0 || compactions == 0;
}

int main(void)
{
    static uint8_t ram[LEDGER_BYTES + 8192u];
    uint32_t max_used = 0;
    printf("stack control: %u\n", (unsigned)painted_control());
    /* the smallest outbox compacts the whole bank in one call; the larger one in steps */
    int failed = run("outbox-min", ram, DPM_OUTBOX_MIN_REGION, 0u, &max_used);
    failed |= run("outbox-4k", ram, 4096u, 2u, &max_used);
    printf("stack max: %u\n", (unsigned)max_used);
    return failed;
}
