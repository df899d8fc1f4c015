/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 on a Cortex-M4 (make bench, through .make/bench.py, like bench_cm.c): instructions of
 * one dpm_prio3_shard (encode, split, prove, split the proof: the device's whole VDAF part of a
 * report, without HPKE) for the shapes the two-aggregator campaigns use, counted under
 * `qemu-system-arm -M mps2-an386 -icount shift=0` (virtual time = instructions; SysTick ticks
 * converted by a calibration loop), and the stack the call used (the stack below the caller
 * painted with a pattern, then the deepest word overwritten). The work and output buffers are
 * static (the caller's, as on a device). Prints one bench.json metric per line. */
#include <stdio.h>
#include <string.h>

#include "cm_ticks.h"
#include "dpm/expert/vdaf.h"

#define REPS 4u
#define PAINT_WORDS 2048u /* 8 KB of stack painted below the caller */
#define PAINT 0xC5A3F00Du

static void metric(const char *name, double value, const char *unit)
{
    printf("{\"name\": \"%s\", \"value\": %.1f, \"unit\": \"%s\", \"baseline\": null, "
           "\"ratio\": null}\n",
           name, value, unit);
}

static uint32_t stack_pointer(void)
{
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Paint [top - PAINT_WORDS words, top - 256 bytes) (the 256 bytes below `top` hold this
 * function's own frame), so that the deepest word a later call from `top` writes shows. */
static __attribute__((noinline)) void paint(uint32_t top)
{
    volatile uint32_t *p = (volatile uint32_t *)(top - 4u * PAINT_WORDS);
    for (uint32_t i = 0; i < PAINT_WORDS - 64u; i++) {
        p[i] = PAINT;
    }
}

static uint32_t painted_depth(uint32_t top) /* bytes of stack used below top */
{
    volatile uint32_t *p = (volatile uint32_t *)(top - 4u * PAINT_WORDS);
    uint32_t i = 0;
    while (i < PAINT_WORDS - 64u && p[i] == PAINT) {
        i++;
    }
    return 4u * (PAINT_WORDS - i);
}

/* The largest of the shapes below: SumVec 2 x 12 x 3 of 8 bits, chunk 19. */
#define MAX_WORK DPM_PRIO3_SHARD_WORK_WORDS(DPM_PRIO3_SUMVEC_SHAPE(2, 72, 8, 19))
#define MAX_LEADER DPM_PRIO3_LEADER_SHARE_BYTES(DPM_PRIO3_SUMVEC_SHAPE(2, 72, 8, 19))
static uint64_t work[MAX_WORK + 64u];
static uint8_t leader[MAX_LEADER + 64u], helper[64], pub[64];

static int shard_bench(const char *name, const dpm_prio3_t *v, const uint64_t *meas, size_t count,
                       double per_tick)
{
    static const uint8_t ctx[] = "dpmetrics bench";
    uint8_t nonce[DPM_PRIO3_NONCE_BYTES], rand[128];
    for (unsigned i = 0; i < sizeof(rand); i++) {
        rand[i] = (uint8_t)(i * 37u + 11u);
    }
    memset(nonce, 7, sizeof(nonce));
    const dpm_prio3_shard_out_t out = {pub,    sizeof(pub),   leader, sizeof(leader),
                                       helper, sizeof(helper)};
    if (v->shard_work_words > MAX_WORK || v->leader_share_bytes > sizeof(leader)) {
        printf("bench: %s does not fit the static buffers\n", name);
        return 0;
    }
    int ok = 1;
    long total = 0;
    for (uint32_t r = 0; r < REPS && ok; r++) {
        nonce[0] = (uint8_t)r;
        ticks_start();
        ok &= dpm_prio3_shard(v, ctx, sizeof(ctx) - 1u, meas, count, nonce, rand, v->rand_bytes,
                              &out, work, MAX_WORK) == DPM_OK;
        long t = ticks_stop();
        ok &= t > 0;
        total += t;
    }
    uint32_t top = stack_pointer();
    paint(top);
    ok &= dpm_prio3_shard(v, ctx, sizeof(ctx) - 1u, meas, count, nonce, rand, v->rand_bytes, &out,
                          work, MAX_WORK) == DPM_OK;
    uint32_t stack = painted_depth(top);
    if (!ok) {
        printf("bench: %s failed\n", name);
        return 0;
    }
    char full[96];
    snprintf(full, sizeof(full), "device.cm4.%s.shard.instructions", name);
    metric(full, (double)total * per_tick / REPS, "instructions");
    snprintf(full, sizeof(full), "device.cm4.%s.shard.stack", name);
    metric(full, (double)stack, "bytes");
    return 1;
}

int main(void)
{
    ticks_start();
    spin(CM_TICKS_SPIN);
    long cal = ticks_stop();
    if (cal <= 0) {
        printf("bench: SysTick does not count (%ld)\n", cal);
        return 1;
    }
    double per_tick = 2.0 * CM_TICKS_SPIN / (double)cal;
    printf("# calibration: %u-instruction loop = %ld SysTick ticks (%.3f instructions per tick)\n",
           2u * CM_TICKS_SPIN, cal, per_tick);
    static uint64_t meas[72];
    for (unsigned i = 0; i < 72u; i++) {
        meas[i] = (i * 53u) % 256u;
    }
    dpm_prio3_t v;
    int ok = 1;
    /* Chunk lengths that give the shortest proofs (calls + 1 just fitting a power of two):
     * 2 x 24 entries of 8-bit counts: chunk 26, 15 calls (p = 16), proof 83 elements */
    ok &= dpm_prio3_sumvec_init(&v, 2, 48, 255, 26) == DPM_OK &&
          shard_bench("prio3_sumvec48", &v, meas, 48, per_tick);
    ok &= dpm_prio3_sumvec_init(&v, 2, 72, 255, 19) == DPM_OK && /* 2 x 12 x 3: 31 calls */
          shard_bench("prio3_sumvec72", &v, meas, 72, per_tick);
    uint64_t bucket = 5;
    ok &= dpm_prio3_histogram_init(&v, 2, 16, 3) == DPM_OK &&
          shard_bench("prio3_histogram16", &v, &bucket, 1, per_tick);
    ok &= dpm_prio3_histogram_init(&v, 2, 32, 5) == DPM_OK &&
          shard_bench("prio3_histogram32", &v, &bucket, 1, per_tick);
    uint64_t one = 1;
    ok &=
        dpm_prio3_count_init(&v, 2) == DPM_OK && shard_bench("prio3_count", &v, &one, 1, per_tick);
    return ok ? 0 : 1;
}
