/* SPDX-License-Identifier: Apache-2.0 */
/* The two-aggregator report calls (see dpm/expert/device_dap.h): validate -> charge -> shard ->
 * seal
 * -> queue, one DAP report built in the caller's buffer. */
#include "dpm_internal.h"

#include "device_internal.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/vdaf.h"
#include "vdaf/vdaf_internal.h"

/* Return st; on a refusal name its cause in *reason (if not NULL) and in dpm_device_why(d)
 * (d may be NULL or unopened: `why` is its first member). */
static dpm_status_t why(dpm_device_t *d, const char **reason, const char *text, dpm_status_t st)
{
    const char *said = st == DPM_OK ? NULL : text != NULL ? text : dpm_strerror(st);
    if (reason != NULL && st != DPM_OK) {
        *reason = said;
    }
    if (d != NULL) {
        d->why = said;
    }
    return st;
}

#if DPM_VDAF
static int opened(const dpm_device_t *d)
{
    return d != NULL && d->opened == DPM_DEVICE_OPENED;
}
#endif

dpm_status_t dpm_device_dap_accept_task(dpm_device_t *d, const uint8_t id[DPM_DAP_TASK_ID_BYTES],
                                        const uint8_t *config, size_t config_len,
                                        const dpm_hpke_config_t *leader_hpke,
                                        const dpm_hpke_config_t *helper_hpke, dpm_dap_task_t *t,
                                        const char **reason)
{
#if DPM_VDAF
    if (!opened(d) || t == NULL) {
        return why(d, reason, "null argument or device not opened", DPM_ERR_PARAM);
    }
    dpm_dap_task_t next;
    const char *r = NULL;
    dpm_status_t st =
        dpm_dap_task_decode(id, config, config_len, leader_hpke, helper_hpke, &next, &r);
    if (st == DPM_OK) {
        st = dpm_dap_policy_check(d->policy.dap, &next, &r);
    }
    if (st == DPM_OK) {
        *t = next;
    }
    return why(d, reason, r, st);
#else
    (void)d, (void)id, (void)config, (void)config_len, (void)leader_hpke, (void)helper_hpke;
    (void)t;
    return why(d, reason, "the SDK was built without the two-aggregator mode (DPM_VDAF)",
               DPM_ERR_UNSUPPORTED);
#endif
}

#if DPM_VDAF
/* Zero n bytes through a volatile pointer: a plain memset of a buffer that is not read again
 * may be optimised away, and these hold shares and seeds. Not inlined: two callers. */
static DPM_NOINLINE void wipe(void *p, size_t n)
{
    volatile uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        b[i] = 0;
    }
}

/* Random bytes a report draws: its id, then the VDAF's rand (two shares, joint randomness). */
#define RAND_MAX_BYTES (4u * DPM_PRIO3_SEED_BYTES)

/* The ledger's view of one participation of task t in `period`: its central ε against a budget
 * of that same ε (one report per task and period), the entry finished one time precision after
 * its last charge. */
static void ledger_charge_of(const dpm_dap_task_t *t, uint32_t period, dpm_ledger_charge_t *c)
{
    c->campaign_id = dpm_dap_ledger_id(t);
    c->period = period;
    c->period_seconds = t->time_precision < 0xFFFFFFFFu ? (uint32_t)t->time_precision : 0xFFFFFFFFu;
    c->eps = t->central_eps;
    c->budget = t->central_eps;
}

/* 1 if a < b, without a branch (counts and labels must not steer the code). */
static inline uint64_t ct_lt(uint64_t a, uint64_t b)
{
    return ((~a & b) | (~(a ^ b) & (a - b))) >> 63;
}

/* Words of io->work a report of t needs: the shard's, and for a label-RR task the randomized
 * copy of the measurement in front of them (dpm_dap_work_words). */
static inline size_t work_words_of(const dpm_dap_task_t *t)
{
    return t->vdaf.shard_work_words + (t->local_eps != 0 ? t->vdaf.length : 0u);
}

/* A label-RR task's checks before the charge (nothing to check without the extension): the
 * task's shape as dpm_dap_task_decode left it, and every bin's pos + neg within the SumVec's
 * range (RR moves labels between pos and neg, so the report's entries reach that total). The
 * totals are compared without a branch on them: only the verdict is public. */
static dpm_status_t label_rr_validate(const dpm_dap_task_t *t, const uint64_t *meas,
                                      const char **text)
{
    if (!DPM_DAP_LABEL_RR || t->local_eps == 0) { /* without it: refused by validate */
        return DPM_OK;
    }
    const uint32_t bins = t->local_bins;
    if (t->vdaf.kind != DPM_PRIO3_SUMVEC || bins == 0 ||
        t->vdaf.length % (2u * bins) != 0) { /* decode takes none of these */
        *text = "task not accepted (dpm_device_dap_accept_task)";
        return DPM_ERR_PARAM;
    }
    const uint64_t max = t->vdaf.max_measurement;
    uint64_t bad = 0;
    for (uint32_t at = 0; at < t->vdaf.length; at += 2u * bins) {
        for (uint32_t j = 0; j < bins; j++) {
            /* each entry <= max (dpm_dap_measurement_check, before): max - pos cannot wrap */
            const uint64_t room = max - meas[at + j], neg = meas[at + bins + j];
            bad |= ct_lt(room, neg);
        }
    }
    DPM_CT_DECLASSIFY(bad); /* the verdict is public: it is the status */
    if (bad) {
        *text = "a bin's positives + negatives above the task's max_measurement (label RR keeps "
                "each bin's total, which must fit one entry)";
        return DPM_ERR_PARAM;
    }
    return DPM_OK;
}

/* Everything before the charge. On DPM_OK *time is the report's time (task precision units)
 * and *c the charge, checked against the ledger. */
static dpm_status_t validate(dpm_device_t *d, const dpm_dap_io_t *io, const dpm_dap_task_t *t,
                             uint32_t period, uint8_t kind, const uint64_t *meas, size_t count,
                             const dpm_dap_layout_t *l, uint64_t *time, dpm_ledger_charge_t *c,
                             const char **reason)
{
    if (t->vdaf.kind != kind) {
        return why(d, reason, "the task's VDAF is another Prio3 variant", DPM_ERR_PARAM);
    }
    if (t->config == NULL || t->vdaf.shares != 2 || t->vdaf.rand_bytes > RAND_MAX_BYTES ||
        (!DPM_DAP_LABEL_RR && t->local_eps != 0)) { /* such a task decodes only with it */
        return why(d, reason, "task not accepted (dpm_device_dap_accept_task)", DPM_ERR_PARAM);
    }
    const char *r = NULL;
    dpm_status_t st = dpm_dap_policy_check(d->policy.dap, t, &r);
    if (st != DPM_OK) {
        return why(d, reason, r, st);
    }
    if (dpm_dap_measurement_check(&t->vdaf, meas, count) != DPM_OK) {
        return why(d, reason, "measurement out of range or not the task's length", DPM_ERR_PARAM);
    }
    st = label_rr_validate(t, meas, &r);
    if (st != DPM_OK) {
        return why(d, reason, r, st);
    }
    if (io->sealer.seal == NULL || io->outbox.room == NULL || io->outbox.put == NULL) {
        return why(d, reason, "no seal hook or outbox", DPM_ERR_PARAM);
    }
    if (io->report == NULL || io->report_cap < l->bytes || io->work == NULL ||
        io->work_words < t->vdaf.shard_work_words) {
        return why(d, reason, "report or work buffer too small for the task", DPM_ERR_BUFFER);
    }
#if DPM_DAP_LABEL_RR
    if (io->work_words < work_words_of(t)) {
        return why(d, reason,
                   "work buffer too small for the task's label RR: it needs "
                   "vdaf.shard_work_words + vdaf.length words (dpm_dap_work_words)",
                   DPM_ERR_BUFFER);
    }
    if (t->local_eps != 0 && d->rand.error != DPM_OK) {
        /* the RR draws from it after the charge: a source that already failed would fail then */
        return why(d, reason, "the random source failed earlier", d->rand.error);
    }
#endif
    int64_t now = 0;
    if (d->clock.wall_time_s == NULL || d->clock.wall_time_s(d->clock.ctx, &now) != 0 || now < 0) {
        return why(d, reason, "no wall clock: a DAP report carries its time", DPM_ERR_PARAM);
    }
    *time = (uint64_t)now / t->time_precision;
    if (t->has_interval &&
        (*time < t->interval_start || *time - t->interval_start >= t->interval_duration)) {
        return why(d, reason, "outside the task's interval", DPM_ERR_PARAM);
    }
    if (!io->outbox.room(io->outbox.ctx, l->bytes)) {
        return why(d, reason, "the outbox is full: upload first", DPM_ERR_BUFFER);
    }
    ledger_charge_of(t, period, c);
    st = dpm_device_ledger_check(d, c, &r);
    return why(d, reason, r, st);
}

/* Seal input share i (0 leader, 1 helper) of the report in place. */
static dpm_status_t seal_share(dpm_device_t *d, const dpm_dap_io_t *io, const dpm_dap_task_t *t,
                               const dpm_dap_layout_t *l, int i)
{
    uint8_t info[DPM_DAP_INFO_BYTES];
    dpm_dap_input_share_info(i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER, info);
    /* InputShareAad = task_id || TaskConfiguration || ReportMetadata || public_share<..>; the
     * last two are the report's first bytes */
    const dpm_span_t aad[3] = {
        {t->id, DPM_DAP_TASK_ID_BYTES}, {t->config, t->config_len}, {io->report, l->aad_len}};
    return io->sealer.seal(io->sealer.ctx, i == 0 ? &t->leader_hpke : &t->helper_hpke, &d->rng,
                           info, sizeof(info), aad, 3, io->report + l->share[i], l->share_len[i],
                           io->report + l->enc[i], io->report + l->tag[i]);
}

#if DPM_DAP_LABEL_RR
/* The label-RR copy of meas into out (t->vdaf.length entries): in bin j of group block `at`,
 * the first pos_j examples are positive, the rest of its n_j negative; each reports its label
 * through binary RR at t->local_eps (keep / 2^32 its own label, other / 2^32 the other one),
 * so out's pos'_j = kept positives + flipped negatives and neg'_j = n_j - pos'_j.
 * Timing: n_j draws of 32 bits per bin, whatever the labels (the label is a mask, the RR
 * branch-free: dpm_grr_perturb), so the run time tells the bin totals, which ε0 does not
 * protect anyway (dpm/expert/dap.h), and the sum of the examples, never a label. A fixed
 * count of draws (2 x max_measurement per bin) would hide the totals from someone timing the
 * device, at a cost that grows with max_measurement (a 2 x 24 SumVec of max 255: 12,240 draws
 * against the few dozen examples a device holds); the aggregators see none of it: the report
 * waits in the outbox, its upload is not timed to the call. */
static dpm_status_t label_rr(dpm_device_t *d, const dpm_dap_task_t *t, const uint64_t *meas,
                             uint64_t *out)
{
    dpm_grr_t g;
    dpm_status_t st = dpm_rr_init(&g, t->local_eps); /* accepted by dpm_dap_task_decode */
    const uint32_t bins = t->local_bins;
    for (uint32_t at = 0; st == DPM_OK && at < t->vdaf.length; at += 2u * bins) {
        for (uint32_t j = 0; st == DPM_OK && j < bins; j++) {
            const uint64_t pos = meas[at + j], n = pos + meas[at + bins + j]; /* <= max */
            uint64_t pos_out = 0;
            for (uint64_t i = 0; st == DPM_OK && i < n; i++) {
                int y = 0;
                st = dpm_rr_perturb(&g, &d->rand, (int)ct_lt(i, pos), &y);
                pos_out += (uint64_t)y;
            }
            out[at + j] = pos_out;
            out[at + bins + j] = n - pos_out;
        }
    }
    return st;
}
#endif

static dpm_status_t dap_report(dpm_device_t *d, const dpm_dap_io_t *io, const dpm_dap_task_t *t,
                               uint32_t period, uint8_t kind, const uint64_t *meas, size_t count,
                               dpm_report_info_t *info, const char **reason)
{
    if (!opened(d) || io == NULL || t == NULL || meas == NULL) {
        return why(d, reason, "null argument or device not opened", DPM_ERR_PARAM);
    }
    dpm_dap_layout_t l;
    dpm_dap_report_layout(&t->vdaf, &l);
    uint64_t time = 0;
    dpm_ledger_charge_t c; /* one participation of this task in this period */
    dpm_status_t st = validate(d, io, t, period, kind, meas, count, &l, &time, &c, reason);
    if (st != DPM_OK) {
        return st;
    }
    /* charge it, under the device cap */
    const char *r = NULL;
    dpm_ledger_totals_t totals;
    st = dpm_device_ledger_spend(d, &c, &r, &totals);
    if (st != DPM_OK) {
        return why(d, reason, r, st);
    }
    /* label RR (the hybrid), after the charge like all randomness: the randomized copy in
     * front of the shard's work area, which then starts after it */
    uint64_t *work = io->work;
    size_t work_words = io->work_words;
#if DPM_DAP_LABEL_RR
    const size_t copy = t->local_eps != 0 ? t->vdaf.length : 0u;
    if (copy != 0) {
        st = label_rr(d, t, meas, io->work);
        if (st != DPM_OK) {
            wipe(io->work, copy * sizeof(uint64_t));
            return why(d, reason, "the random source failed (charged, nothing queued)",
                       DPM_ERR_RNG);
        }
        meas = io->work;
        work += copy;
        work_words -= copy;
    }
#endif
    /* shard: the report id is the VDAF's nonce */
    uint8_t rand[DPM_DAP_REPORT_ID_BYTES + RAND_MAX_BYTES];
    const size_t nrand = DPM_DAP_REPORT_ID_BYTES + t->vdaf.rand_bytes;
    if (d->rng.fill(d->rng.ctx, rand, nrand) != 0) {
        st = DPM_ERR_RNG;
    }
    if (st != DPM_OK) {
#if DPM_DAP_LABEL_RR
        wipe(io->work, copy * sizeof(uint64_t));
#endif
        return why(d, reason, "the random source failed (charged, nothing queued)", DPM_ERR_RNG);
    }
    dpm_dap_report_frame(t, &l, rand, time, io->report);
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    dpm_dap_vdaf_ctx(t, ctx);
    const dpm_prio3_shard_out_t out = {io->report + l.public_share,   l.public_share_len,
                                       io->report + l.input_share[0], l.input_share_len[0],
                                       io->report + l.input_share[1], l.input_share_len[1]};
    st = dpm_prio3_shard(&t->vdaf, ctx, sizeof(ctx), meas, count, io->report, rand + 16,
                         t->vdaf.rand_bytes, &out, work, work_words);
    wipe(rand, sizeof(rand)); /* the helper's seeds and the blinds: nobody needs them now */
#if DPM_DAP_LABEL_RR
    wipe(io->work, copy * sizeof(uint64_t)); /* the randomized measurement: in the shares now */
#endif
    /* seal each input share to its aggregator, then queue */
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        st = seal_share(d, io, t, &l, i);
    }
    if (st == DPM_OK) {
        st = io->outbox.put(io->outbox.ctx, t->id, io->report, l.bytes);
    }
    if (st != DPM_OK) {
        wipe(io->report, l.bytes); /* it may hold plaintext shares */
        return why(d, reason, "failed after the charge (epsilon spent, nothing queued)", st);
    }
    if (info != NULL) {
        memcpy(info->report_id, io->report, DPM_DAP_REPORT_ID_BYTES);
        info->bytes = (uint32_t)l.bytes;
        info->eps_spent = t->central_eps;
        info->spent_in_period = totals.campaign_spent;
        info->device_spent = totals.device_spent;
    }
    return why(d, reason, NULL, DPM_OK);
}
#endif

#if DPM_VDAF
/* A variant compiled out has no task: its call says so without linking the report path (the
 * same words as a task of it, dpm_dap_task_decode). */
#define DAP_CALL(kind, meas, count)                                                                \
    (dpm_prio3_variant_built(kind) ? dap_report(d, io, t, period, kind, meas, count, info, reason) \
                                   : why(d, reason, DPM_PRIO3_NOT_BUILT, DPM_ERR_UNSUPPORTED))
#else
#define DAP_CALL(kind, meas, count)                                                                \
    ((void)d, (void)io, (void)t, (void)period, (void)(meas), (void)(count), (void)info,            \
     why(d, reason, "the SDK was built without the two-aggregator mode (DPM_VDAF)",                \
         DPM_ERR_UNSUPPORTED))
#endif

dpm_status_t dpm_device_dap_report_count(dpm_device_t *d, const dpm_dap_io_t *io,
                                         const dpm_dap_task_t *t, uint32_t period, uint32_t bit,
                                         dpm_report_info_t *info, const char **reason)
{
    const uint64_t m = bit;
    return DAP_CALL(DPM_PRIO3_COUNT, &m, 1);
}

dpm_status_t dpm_device_dap_report_sum(dpm_device_t *d, const dpm_dap_io_t *io,
                                       const dpm_dap_task_t *t, uint32_t period, uint64_t value,
                                       dpm_report_info_t *info, const char **reason)
{
    return DAP_CALL(DPM_PRIO3_SUM, &value, 1);
}

dpm_status_t dpm_device_dap_report_sumvec(dpm_device_t *d, const dpm_dap_io_t *io,
                                          const dpm_dap_task_t *t, uint32_t period,
                                          const uint64_t *values, size_t n, dpm_report_info_t *info,
                                          const char **reason)
{
    return DAP_CALL(DPM_PRIO3_SUMVEC, values, n);
}

dpm_status_t dpm_device_dap_report_histogram(dpm_device_t *d, const dpm_dap_io_t *io,
                                             const dpm_dap_task_t *t, uint32_t period,
                                             uint32_t bucket, dpm_report_info_t *info,
                                             const char **reason)
{
    const uint64_t m = bucket;
    return DAP_CALL(DPM_PRIO3_HISTOGRAM, &m, 1);
}

dpm_status_t dpm_device_dap_report_multihot(dpm_device_t *d, const dpm_dap_io_t *io,
                                            const dpm_dap_task_t *t, uint32_t period,
                                            const uint64_t *bits, size_t n, dpm_report_info_t *info,
                                            const char **reason)
{
    return DAP_CALL(DPM_PRIO3_MULTIHOT, bits, n);
}
