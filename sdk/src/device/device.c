/* SPDX-License-Identifier: Apache-2.0 */
/* The device context: policy, campaign intake and one call per report (see dpm/device.h). */
#include "dpm_internal.h"

#include "core/persist.h"

#include "dpm/device.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "dpm/expert/uploader.h"
#include "device_internal.h"
#include "mech/mech_ops.h"
#include "report/report_internal.h"
#include "upload/outbox_internal.h"

/* ---- config and policy ------------------------------------------------------------------- */

dpm_status_t dpm_config_check_abi(uint32_t app_fingerprint)
{
    return app_fingerprint == dpm_abi_fingerprint() ? DPM_OK : DPM_ERR_CONFIG;
}

/* Record why the call on d refused (nothing when it did not) and return st. d may be any
 * non-NULL device, opened or not: `why` is its first member. */
static dpm_status_t say(dpm_device_t *d, dpm_status_t st, const char *why)
{
    if (d != NULL) {
        d->why = st == DPM_OK ? NULL : why != NULL ? why : dpm_strerror(st);
    }
    return st;
}

/* The same for the calls that also return the reason through an argument. */
static dpm_status_t say2(dpm_device_t *d, const char **reason, dpm_status_t st, const char *why)
{
    st = say(d, st, why);
    if (reason != NULL && st != DPM_OK) {
        *reason = d != NULL ? d->why : why;
    }
    return st;
}

const char *dpm_device_why(const dpm_device_t *d)
{
    return d == NULL ? "no device" : d->why != NULL ? d->why : "";
}

#define FLOOR_TEXT "below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))"

/* Why the limit l is invalid, or NULL. */
static const char *limit_problem(const dpm_policy_limit_t *l, int rule)
{
    if (l->max_eps.q16 < DPM_EPS_FLOOR_Q16) {
        return rule ? "policy: a rule's max_eps is " FLOOR_TEXT
                    : "policy: defaults.max_eps is " FLOOR_TEXT;
    }
    if (l->max_budget.q16 < l->max_eps.q16) {
        return rule ? "policy: a rule's max_budget is below its max_eps"
                    : "policy: defaults.max_budget is below defaults.max_eps";
    }
    return NULL;
}

/* The cap of all campaigns together: policy.device.max_eps, or by default the largest
 * max_budget (one campaign's worth per device period). */
static dpm_eps_t cap_of(const dpm_policy_t *p)
{
    if (p->device.max_eps.q16 != 0) {
        return p->device.max_eps.q16;
    }
    dpm_eps_t cap = p->defaults.max_budget.q16;
    for (uint32_t i = 0; i < p->nrules && i < DPM_POLICY_MAX_RULES; i++) {
        cap = p->rules[i].max_budget.q16 > cap ? p->rules[i].max_budget.q16 : cap;
    }
    return cap;
}

/* Why the policy is invalid, or NULL. */
static const char *policy_problem(const dpm_policy_t *p)
{
    const char *why = limit_problem(&p->defaults, 0);
    if (why == NULL && p->nrules > DPM_POLICY_MAX_RULES) {
        why = "policy: more rules than DPM_POLICY_MAX_RULES";
    }
    dpm_eps_t largest = p->defaults.max_eps.q16;
    for (uint32_t i = 0; why == NULL && i < p->nrules; i++) {
        why = limit_problem(&p->rules[i], 1);
        for (uint32_t j = 0; why == NULL && j < i; j++) {
            if (p->rules[j].campaign_id == p->rules[i].campaign_id) {
                why = "policy: two rules name the same campaign id";
            }
        }
        largest = p->rules[i].max_eps.q16 > largest ? p->rules[i].max_eps.q16 : largest;
    }
    if (why == NULL && p->device.max_eps.q16 != 0 && p->device.max_eps.q16 < DPM_EPS_FLOOR_Q16) {
        why = "policy: device.max_eps is " FLOOR_TEXT;
    }
    if (why == NULL && cap_of(p) < largest) {
        why = "policy: device.max_eps below a max_eps (no such report could pass)";
    }
    return why;
}

/* The limits that apply to campaign `id`: its rule, or the defaults. */
static const dpm_policy_limit_t *limit_for(const dpm_policy_t *p, uint32_t id)
{
    for (uint32_t i = 0; i < p->nrules; i++) {
        if (p->rules[i].campaign_id == id) {
            return &p->rules[i];
        }
    }
    return &p->defaults;
}

static dpm_status_t refuse(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

dpm_status_t dpm_policy_check(const dpm_policy_t *p, const dpm_campaign_t *c, const char **reason)
{
    if (p == NULL || c == NULL) {
        return refuse(reason, "no policy or no campaign (NULL)", DPM_ERR_PARAM);
    }
    const char *why = policy_problem(p);
    if (why != NULL) {
        return refuse(reason, why, DPM_ERR_PARAM);
    }
    /* An ε that small is an integer meant as whole ε (1 read as 1/65536), never a choice. */
    if (c->eps.q16 < DPM_EPS_FLOOR_Q16) {
        return refuse(reason, "campaign epsilon " FLOOR_TEXT, DPM_ERR_PARAM);
    }
    if (c->group_eps.q16 != 0 && c->group_eps.q16 < DPM_EPS_FLOOR_Q16) {
        return refuse(reason, "campaign group_eps " FLOOR_TEXT, DPM_ERR_PARAM);
    }
    const dpm_policy_limit_t *l = limit_for(p, c->id);
    if (c->eps.q16 > l->max_eps.q16) {
        return refuse(reason, "campaign epsilon above the app's policy", DPM_ERR_POLICY);
    }
    if (c->budget.q16 > l->max_budget.q16) {
        return refuse(reason, "campaign budget above the app's policy", DPM_ERR_POLICY);
    }
    return DPM_OK;
}

/* ---- the context ------------------------------------------------------------------------- */

static int region_ok(const dpm_storage_t *s, uint32_t offset, uint32_t size)
{
    return (uint64_t)offset + size <= s->size;
}

/* [a0, a0 + alen) and [b0, b0 + blen) overlap. */
static int overlaps(uint64_t a0, uint64_t alen, uint64_t b0, uint64_t blen)
{
    return a0 < b0 + blen && b0 < a0 + alen;
}

static int same_storage(const dpm_storage_t *a, const dpm_storage_t *b)
{
    return a->ctx == b->ctx && a->read == b->read;
}

/* The region cfg gives the SDK (region_size 0: up to storage.size), its sector unit and the
 * layout the SDK makes of it. */
typedef struct {
    uint32_t base, size, unit;
    dpm_storage_layout_t lay;
    int explicit_regions; /* 0.1.0's ledger_* and outbox_*: no layout record */
} region_t;

/* Why the anchor a at offset off (of `len` bytes, named `name`) cannot work, or NULL. An
 * anchor must survive what erases the region, so it may not share its bytes. */
static const char *anchor_problem(const dpm_device_config_t *cfg, const region_t *rg,
                                  const dpm_storage_t *a, uint32_t off, uint32_t len, int ledger)
{
    if (a == NULL || a->read == NULL) {
        return NULL; /* none */
    }
    if (a->write == NULL || a->erase == NULL) {
        return ledger ? "ledger_anchor: storage without write or erase"
                      : "outbox_anchor: storage without write or erase";
    }
    if (!region_ok(a, off, len)) {
        return ledger ? "ledger_anchor: offset outside its storage"
                      : "outbox_anchor: offset outside its storage";
    }
    int in = rg->explicit_regions ? overlaps(off, len, cfg->ledger_offset, cfg->ledger_size) ||
                                        overlaps(off, len, cfg->outbox_offset, cfg->outbox_size)
                                  : overlaps(off, len, rg->base, rg->size);
    if (same_storage(a, &cfg->storage) && in) {
        return ledger ? "ledger_anchor: inside the device's storage region"
                      : "outbox_anchor: inside the device's storage region";
    }
    return NULL;
}

/* 0.1.0's explicit regions (kept so that a device it set up keeps its ledger and outbox): why
 * they cannot work, or NULL with *rg filled (no record, base 0). */
static const char *explicit_problem(const dpm_device_config_t *cfg, region_t *rg)
{
    const dpm_storage_t *s = &cfg->storage;
    if (cfg->region_offset != 0 || cfg->region_size != 0 || cfg->sector_size != 0) {
        return "give region_offset/region_size/sector_size or 0.1.0's explicit ledger_* and "
               "outbox_* regions, not both";
    }
    if (cfg->ledger_size < DPM_LEDGER_MIN_REGION) {
        return "ledger_size below DPM_LEDGER_MIN_REGION";
    }
    if (cfg->outbox_size < DPM_OUTBOX_MIN_REGION) {
        return "outbox_size below DPM_OUTBOX_MIN_REGION";
    }
    if (!region_ok(s, cfg->ledger_offset, cfg->ledger_size)) {
        return "ledger region beyond storage.size";
    }
    if (!region_ok(s, cfg->outbox_offset, cfg->outbox_size)) {
        return "outbox region beyond storage.size";
    }
    /* The regions must not overlap: one store's erase would destroy the other. */
    if (overlaps(cfg->ledger_offset, cfg->ledger_size, cfg->outbox_offset, cfg->outbox_size)) {
        return "ledger and outbox regions overlap";
    }
    rg->explicit_regions = 1;
    rg->base = 0;
    rg->lay.record_size = 0;
    rg->lay.ledger_offset = cfg->ledger_offset;
    rg->lay.ledger_size = cfg->ledger_size;
    rg->lay.outbox_offset = cfg->outbox_offset;
    rg->lay.outbox_size = cfg->outbox_size;
    return NULL;
}

/* Why the region of cfg cannot be laid out, or NULL with *rg filled. */
static const char *region_problem(const dpm_device_config_t *cfg, region_t *rg)
{
    const dpm_storage_t *s = &cfg->storage;
    memset(rg, 0, sizeof(*rg));
    if (cfg->ledger_offset != 0 || cfg->ledger_size != 0 || cfg->outbox_offset != 0 ||
        cfg->outbox_size != 0) {
        return explicit_problem(cfg, rg);
    }
    if (cfg->region_offset > s->size) {
        return "region_offset beyond storage.size";
    }
    rg->base = cfg->region_offset;
    rg->size = cfg->region_size != 0 ? cfg->region_size : s->size - cfg->region_offset;
    rg->unit = DPM_LAYOUT_UNIT(cfg->sector_size);
    if (!region_ok(s, rg->base, rg->size)) {
        return "region beyond storage.size (region_offset + region_size)";
    }
    if (rg->base % rg->unit != 0) {
        return "region_offset not on a sector boundary (a multiple of sector_size)";
    }
    const char *why = NULL;
    return dpm_storage_layout(rg->size, cfg->sector_size, &rg->lay, &why) == DPM_OK ? NULL : why;
}

/* Why dpm_device_init cannot use cfg, or NULL (with *rg, its region, filled). */
static const char *config_problem(const dpm_device_config_t *cfg, region_t *rg)
{
    const dpm_storage_t *s = &cfg->storage;
    const char *why = policy_problem(&cfg->policy);
    if (why != NULL) {
        return why;
    }
    if (cfg->rng.fill == NULL) {
        return "rng.fill is NULL (a CSPRNG is required)";
    }
    if (s->read == NULL || s->write == NULL || s->erase == NULL) {
        return "storage lacks read, write or erase";
    }
    if (!dpm_crc32_ok()) {
        return "dpm_port_crc32 is not zlib's CRC-32 (DPM_CRC32_TABLE=0): fix the port, dpm/port.h";
    }
    why = region_problem(cfg, rg);
    if (why != NULL) {
        return why;
    }
    why = anchor_problem(cfg, rg, &cfg->ledger_anchor, cfg->ledger_anchor_offset,
                         DPM_LEDGER_ANCHOR_BYTES, 1);
    if (why == NULL && cfg->outbox_anchor != NULL && cfg->outbox_anchor->read == NULL) {
        why = "outbox_anchor: storage without read";
    }
    if (why == NULL) {
        why = anchor_problem(cfg, rg, cfg->outbox_anchor, cfg->outbox_anchor_offset,
                             DPM_OUTBOX_ANCHOR_BYTES, 0);
    }
    if (why == NULL && cfg->ledger_anchor.read != NULL && cfg->outbox_anchor != NULL &&
        same_storage(&cfg->ledger_anchor, cfg->outbox_anchor) &&
        overlaps(cfg->ledger_anchor_offset, DPM_LEDGER_ANCHOR_BYTES, cfg->outbox_anchor_offset,
                 DPM_OUTBOX_ANCHOR_BYTES)) {
        why = "ledger_anchor and outbox_anchor overlap";
    }
    if (why == NULL && cfg->upload.host != NULL) {
        dpm_upload_t probe;
        if (cfg->clock.monotonic_ms == NULL) {
            why = "upload needs clock.monotonic_ms";
        } else if (dpm_upload_init(&probe, &cfg->upload) != DPM_OK) {
            why = "upload config invalid (see dpm_upload_config_t)";
        }
    }
    return why;
}

dpm_status_t dpm_device_init_abi(dpm_device_t *d, const dpm_device_config_t *cfg,
                                 uint32_t app_fingerprint)
{
    if (dpm_config_check_abi(app_fingerprint) != DPM_OK) {
        /* Only the first member: the rest of *d may be laid out otherwise in the app. */
        return say(d, DPM_ERR_CONFIG, "app built with other DPM_* options or headers than libdpm");
    }
    if (d == NULL || cfg == NULL) {
        return say(d, DPM_ERR_PARAM, "no device or no config (NULL)");
    }
    region_t rg;
    const char *why = config_problem(cfg, &rg);
    if (why != NULL) {
        return say(d, DPM_ERR_PARAM, why);
    }
    /* The layout record, before *d is touched: a region laid out for another size, or holding
     * data without a record, is refused with storage and *d as they were. */
    dpm_status_t st = rg.explicit_regions ? DPM_OK
                                          : dpm_layout_open(&cfg->storage, rg.base, rg.size,
                                                            rg.unit, &rg.lay, &why);
    if (st != DPM_OK) {
        return say(d, st, why);
    }
    /* The ledger, outbox and random source point into *d, so they are bound in place. */
    memset(d, 0, sizeof(*d));
    d->rng = cfg->rng;
    d->clock = cfg->clock;
    d->storage = cfg->storage;
    d->policy = cfg->policy;
    if (d->clock.monotonic_ms != NULL) { /* time before now is not counted */
        d->clock_s = (uint32_t)(d->clock.monotonic_ms(d->clock.ctx) / 1000u);
    }
    st = dpm_rand_init(&d->rand, &d->rng);
    if (st == DPM_OK && cfg->upload.host != NULL) {
        st = dpm_upload_init(&d->upload, &cfg->upload);
    }
    if (st != DPM_OK) {
        return say(d, st, "the random source failed");
    }
    /* A corrupt ledger is bound failed-closed (every charge refuses) and a damaged outbox is
     * left for the app to resolve: the device opens either way, so the app can reach both
     * through dpm_device_ledger / dpm_device_outbox, and reports. */
    d->ledger_anchor = cfg->ledger_anchor;
    uint32_t ledger_at = rg.base + rg.lay.ledger_offset;
    dpm_status_t ledger_st =
        cfg->ledger_anchor.read != NULL
            ? dpm_ledger_open_anchored(&d->ledger, &d->storage, ledger_at, rg.lay.ledger_size,
                                       &d->ledger_anchor, cfg->ledger_anchor_offset)
            : dpm_ledger_open(&d->ledger, &d->storage, ledger_at, rg.lay.ledger_size);
    dpm_status_t outbox_st =
        dpm_outbox_open_anchored(&d->outbox, &d->storage, rg.base + rg.lay.outbox_offset,
                                 rg.lay.outbox_size, cfg->outbox_anchor, cfg->outbox_anchor_offset);
    if (ledger_st != DPM_OK && ledger_st != DPM_ERR_CORRUPT) {
        return say(d, ledger_st, "the ledger's storage failed");
    }
    d->opened = DPM_DEVICE_OPENED;
    if (ledger_st != DPM_OK) {
        return say(d, ledger_st, "ledger corrupt or erased: no reports (see dpm_ledger_reset)");
    }
    return say(d, outbox_st,
               outbox_st == DPM_ERR_CORRUPT
                   ? "outbox region damaged: its reports are lost (dpm_outbox_format)"
                   : "the outbox's storage failed");
}

static int opened(const dpm_device_t *d)
{
    return d != NULL && d->opened == DPM_DEVICE_OPENED;
}

#define NOT_OPENED "device NULL or not opened"

dpm_status_t dpm_device_accept_mech(dpm_device_t *d, const dpm_campaign_t *c, dpm_mech_t *m,
                                    const char **reason)
{
    if (!opened(d) || c == NULL || m == NULL) {
        return say2(d, reason, DPM_ERR_PARAM,
                    !opened(d) ? NOT_OPENED : "no campaign or no mechanism (NULL)");
    }
    const char *why = NULL;
    dpm_status_t st = dpm_policy_check(&d->policy, c, &why);
    if (st == DPM_OK) {
        st = dpm_mech_init(m, c, &why);
    }
    return say2(d, reason, st, why);
}

dpm_status_t dpm_device_accept_campaign(dpm_device_t *d, const uint8_t *bytes, size_t len,
                                        dpm_mech_t *m, const char **reason)
{
    if (!DPM_UPLOAD) { /* refused first; a plain if: the decoder is not linked */
        return say2(d, reason, DPM_ERR_UNSUPPORTED,
                    "campaign bytes are not decoded in this build (DPM_UPLOAD=0): fill a "
                    "dpm_campaign_t and call dpm_device_accept_mech");
    }
    if (!opened(d) || bytes == NULL || m == NULL) {
        return say2(d, reason, DPM_ERR_PARAM,
                    !opened(d) ? NOT_OPENED : "no campaign bytes or no mechanism (NULL)");
    }
    dpm_campaign_t c;
    const char *why = NULL;
    dpm_status_t st = dpm_campaign_decode(bytes, len, &c, &why);
    return st == DPM_OK ? dpm_device_accept_mech(d, &c, m, reason) : say2(d, reason, st, why);
}

/* ---- one call per report ------------------------------------------------------------------ */

/* The ledger's view of a charge for a report of m in `period`, and the device cap with the
 * clock readings that place it in a device period. */
static void ledger_charge_of(const dpm_mech_t *m, uint32_t period, dpm_ledger_charge_t *c)
{
    c->campaign_id = m->campaign.id;
    c->period = period;
    c->period_seconds = m->campaign.period_seconds;
    c->eps = m->eps_implemented;
    c->budget = m->campaign.budget.q16;
}

static void device_cap(dpm_device_t *d, dpm_ledger_cap_t *cap)
{
    cap->max_eps = cap_of(&d->policy);
    cap->period_seconds = d->policy.device.period_seconds != 0 ? d->policy.device.period_seconds
                                                               : DPM_DEVICE_PERIOD_SECONDS;
    cap->wall_s = 0;
    cap->elapsed_s = 0;
    int64_t wall = 0;
    if (d->clock.wall_time_s != NULL && d->clock.wall_time_s(d->clock.ctx, &wall) == 0 &&
        wall > 0) {
        cap->wall_s = wall < (int64_t)0xFFFFFFFF ? (uint32_t)wall : 0xFFFFFFFFu;
    }
    if (d->clock.monotonic_ms != NULL) { /* seconds, mod 2^32: 136 years */
        cap->elapsed_s = (uint32_t)(d->clock.monotonic_ms(d->clock.ctx) / 1000u) - d->clock_s;
    }
}

/* The ledger's refusals as the report calls document them: a closed period spends nothing
 * more, like a spent budget. */
static dpm_status_t ledger_status(dpm_status_t st)
{
    return st == DPM_ERR_PARAM ? DPM_ERR_BUDGET : st;
}

dpm_status_t dpm_device_ledger_check(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why)
{
    dpm_ledger_cap_t cap;
    device_cap(d, &cap);
    return ledger_status(dpm_ledger_check(&d->ledger, c, &cap, why));
}

dpm_status_t dpm_device_ledger_spend(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why, dpm_ledger_totals_t *totals)
{
    dpm_ledger_cap_t cap;
    device_cap(d, &cap);
    dpm_status_t st = dpm_ledger_spend_totals(&d->ledger, c, &cap, why, totals);
    if (st == DPM_OK) {
        d->clock_s += cap.elapsed_s; /* the ledger clock has counted them */
    }
    return ledger_status(st);
}

/* Everything but the ledger that must hold before a report of m, whose encoding takes at most
 * max_bytes, is charged: checked in this order, nothing spent when one fails. The ledger's
 * refusals (budget, device cap, closed period, full ledger) come from the charge itself
 * (admit), which loads the ledger once and writes nothing when it refuses. */
static dpm_status_t precheck(dpm_device_t *d, const dpm_mech_t *m, size_t max_bytes)
{
    const char *why = NULL;
    dpm_status_t st = dpm_policy_check(&d->policy, &m->campaign, &why);
    if (st != DPM_OK) {
        return say(d, st, why);
    }
    if (d->rand.error != DPM_OK) {
        /* a random source that already failed would fail after the charge */
        return say(d, d->rand.error, "the random source failed earlier");
    }
    if (!dpm_outbox_is_open(&d->outbox)) {
        return say(d, DPM_ERR_CORRUPT, "outbox damaged at init (dpm_outbox_format)");
    }
    if (!dpm_outbox_room(&d->outbox, max_bytes)) {
        return say(d, DPM_ERR_BUFFER, "outbox full: post it first");
    }
    return DPM_OK;
}

/* A charge made: the issuer of the receipt the mechanism needs (the receipt is iss.issued), and
 * the totals it left for the report's info (so no second ledger read). The issuer lives on the
 * report call's stack: the receipt of a charge is good for that call only, and a device holds no
 * receipt state between calls (no held RAM). */
typedef struct {
    dpm_receipt_issuer_t iss;
    dpm_ledger_totals_t totals;
} charged_t;

/* Check everything, then charge the ledger (one ledger read and one write per report); on
 * DPM_OK ch->iss.issued is the receipt for one report. */

static dpm_status_t admit(dpm_device_t *d, const dpm_mech_t *m, uint32_t period, size_t max_bytes,
                          charged_t *ch)
{
    dpm_status_t st = precheck(d, m, max_bytes);
    if (st != DPM_OK) {
        return st;
    }
    dpm_ledger_charge_t c;
    ledger_charge_of(m, period, &c);
    const char *why = NULL;
    st = dpm_device_ledger_spend(d, &c, &why, &ch->totals);
    if (st == DPM_OK) { /* issued only once the charge is durable */
        memset(&ch->iss, 0, sizeof(ch->iss));
        dpm_receipt_issue(&ch->iss, m, period, NULL);
    }
    return say(d, st, why);
}

/* After the charge: why a report could not be made (its ε is spent). */
static dpm_status_t after_charge(dpm_device_t *d, dpm_status_t st)
{
    return say(d, st,
               st == DPM_ERR_RNG ? "RNG failed after the charge (epsilon spent, no report)"
               : st == DPM_ERR_STORAGE
                   ? "outbox write failed after the charge (epsilon spent, no report)"
                   : "no report after the charge (epsilon spent)");
}

/* Queue a made report, encoded in buf[0, len) by its kind's dpm_report_encode_*; fill *info. */
static dpm_status_t queue(dpm_device_t *d, const dpm_mech_t *m, const charged_t *ch,
                          const dpm_report_t *rep, const uint8_t *buf, size_t len,
                          dpm_report_info_t *info)
{
    dpm_status_t st = dpm_outbox_put_encoded(&d->outbox, buf, len); /* bytes we just encoded */
    if (st == DPM_OK && info != NULL) {
        memcpy(info->report_id, rep->report_id, DPM_REPORT_ID_BYTES);
        info->bytes = (uint32_t)len;
        info->eps_spent = m->eps_implemented;
        info->spent_in_period = ch->totals.campaign_spent;
        info->device_spent = ch->totals.device_spent;
    }
    return st == DPM_OK ? say(d, st, NULL) : after_charge(d, st);
}

/* The refusal of a report call before anything is checked against the ledger: nothing spent. */
static dpm_status_t bad_arg(dpm_device_t *d, const char *why)
{
    return say(d, DPM_ERR_PARAM, opened(d) ? why : NOT_OPENED);
}

/* After the perturbation and encoding (st) of a charged report rep in buf[0, len): queue it. */
static dpm_status_t finish(dpm_device_t *d, const dpm_mech_t *m, dpm_status_t st,
                           const charged_t *ch, const dpm_report_t *rep, const uint8_t *buf,
                           size_t len, dpm_report_info_t *info)
{
    return st == DPM_OK ? queue(d, m, ch, rep, buf, len, info) : after_charge(d, st);
}

/* A report call of a mechanism this build leaves out: refused, naming it and its switch, before
 * anything is checked or charged. */
static dpm_status_t absent(dpm_device_t *d, dpm_mech_id_t id)
{
    return say(d, DPM_ERR_UNSUPPORTED, dpm_mech_absent_reason(id));
}

dpm_status_t dpm_device_report_tuple(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     uint32_t group, const dpm_confusion_t *conf,
                                     dpm_report_info_t *info)
{
    if (!DPM_MECH_TUPLE) {
        return absent(d, DPM_MECH_ID_TUPLE_MR);
    }
    if (!opened(d) || m == NULL || conf == NULL) {
        return bad_arg(d, "no mechanism or no confusion counts (NULL)");
    }
    if (m->campaign.mechanism != DPM_MECH_ID_TUPLE_MR &&
        m->campaign.mechanism != DPM_MECH_ID_TUPLE_ML) {
        return bad_arg(d, "not a tuple campaign: use its kind's report call");
    }
    dpm_ratio_t values[DPM_TUPLE_MAX_METRICS];
    dpm_status_t st = DPM_OK;
    const char *why = dpm_tuple_input_problem(m, group, conf, values, &st);
    if (why != NULL) { /* DPM_ERR_UNDEFINED: no report, nothing spent */
        return say(d, st, why);
    }
    charged_t ch;
    st = admit(d, m, period, DPM_REPORT_TUPLE_MAX, &ch);
    if (st != DPM_OK) {
        return st;
    }
    dpm_report_t rep;
    uint8_t buf[DPM_REPORT_TUPLE_MAX];
    st = dpm_mech_report_tuple(m, &d->rand, &ch.iss, &ch.iss.issued, group, values, &rep);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_tuple(&rep, buf, sizeof(buf), &len);
    }
    return finish(d, m, st, &ch, &rep, buf, len, info);
}

/* roc_hist with or without a group (group_given 0: none). */
static dpm_status_t report_roc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                               int group_given, uint32_t group, const dpm_score_hist_t *h,
                               dpm_report_info_t *info)
{
    if (!DPM_MECH_ROC_HIST) {
        return absent(d, DPM_MECH_ID_ROC_HIST);
    }
    if (!opened(d) || m == NULL || h == NULL) {
        return bad_arg(d, "no mechanism or no histogram (NULL)");
    }
    if (m->campaign.mechanism != DPM_MECH_ID_ROC_HIST) {
        return bad_arg(d, "not a roc_hist campaign: use its kind's report call");
    }
    const char *why = dpm_roc_hist_input_problem(m, group_given, group, h);
    if (why != NULL) {
        return bad_arg(d, why);
    }
    charged_t ch;
    dpm_status_t st = admit(d, m, period, DPM_REPORT_ROC_MAX, &ch);
    if (st != DPM_OK) {
        return st;
    }
    dpm_report_t rep;
    uint8_t buf[DPM_REPORT_ROC_MAX];
    st = group_given
             ? dpm_mech_report_roc_hist_group(m, &d->rand, &ch.iss, &ch.iss.issued, group, h, &rep)
             : dpm_mech_report_roc_hist(m, &d->rand, &ch.iss, &ch.iss.issued, h, &rep);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_roc_hist(&rep, buf, sizeof(buf), &len);
    }
    return finish(d, m, st, &ch, &rep, buf, len, info);
}

dpm_status_t dpm_device_report_roc_hist(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                        const dpm_score_hist_t *h, dpm_report_info_t *info)
{
    return report_roc(d, m, period, 0, 0, h, info);
}

dpm_status_t dpm_device_report_roc_hist_group(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                              uint32_t group, const dpm_score_hist_t *h,
                                              dpm_report_info_t *info)
{
    return report_roc(d, m, period, 1, group, h, info);
}

dpm_status_t dpm_device_report_dpauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     const dpm_dpauc_counts_t *c, dpm_report_info_t *info)
{
    if (!DPM_MECH_DPAUC) {
        return absent(d, DPM_MECH_ID_DPAUC);
    }
    if (!opened(d) || m == NULL || c == NULL) {
        return bad_arg(d, "no mechanism or no counts (NULL)");
    }
    if (m->campaign.mechanism != DPM_MECH_ID_DPAUC) {
        return bad_arg(d, "not a dpauc campaign: use its kind's report call");
    }
    const char *why = dpm_dpauc_input_problem(m, c);
    if (why != NULL) {
        return bad_arg(d, why);
    }
    charged_t ch;
    dpm_status_t st = admit(d, m, period, DPM_REPORT_DPAUC_MAX, &ch);
    if (st != DPM_OK) {
        return st;
    }
    dpm_report_t rep;
    uint8_t buf[DPM_REPORT_DPAUC_MAX];
    st = dpm_mech_report_dpauc(m, &d->rand, &ch.iss, &ch.iss.issued, c, &rep);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_dpauc(&rep, buf, sizeof(buf), &len);
    }
    return finish(d, m, st, &ch, &rep, buf, len, info);
}

/* ---- FedAUC: round 1 (no ε) and the round 2 report ------------------------------------- */

static int is_fedauc(const dpm_mech_t *m)
{
    return m != NULL && (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR ||
                         m->campaign.mechanism == DPM_MECH_ID_FEDAUC_LAP);
}

#define NOT_FEDAUC "not a FedAUC campaign"

dpm_status_t dpm_device_fedauc_upload(dpm_device_t *d, const dpm_mech_t *m,
                                      const dpm_score_t *scores, uint32_t n,
                                      const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s,
                                      uint8_t *out, size_t cap, size_t *len)
{
    if (!DPM_MECH_FEDAUC) {
        return absent(d, DPM_MECH_ID_FEDAUC_LAP);
    }
    if (!opened(d) || m == NULL || s == NULL || out == NULL || len == NULL) {
        return bad_arg(d, "no mechanism, session, output or length (NULL)");
    }
    if (!is_fedauc(m)) {
        return bad_arg(d, NOT_FEDAUC);
    }
    const char *why = NULL;
    dpm_status_t st = dpm_policy_check(&d->policy, &m->campaign, &why);
    if (st != DPM_OK) {
        return say(d, st, why);
    }
    /* Room for the upload before the buffers are touched (they may hold another session). */
    if (n != 0 && cap < dpm_fedauc_upload_room(m, n)) {
        return say(d, DPM_ERR_BUFFER, "out below DPM_FEDAUC_UPLOAD_MAX_BYTES(n, bits)");
    }
    dpm_fedauc_session_t next;
    st = dpm_fedauc_prepare(m, &d->rand, scores, n, b, &next);
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_encode(&next, out, cap, len);
    }
    if (st == DPM_OK) {
        *s = next;
    }
    return say(d, st,
               st == DPM_ERR_UNDEFINED ? "no scores (n == 0)"
               : st == DPM_ERR_BUFFER  ? "n is beyond the buffers (or DPM_FEDAUC_MAX_EXAMPLES)"
               : st == DPM_ERR_PARAM   ? "scores or buffers missing, or a score above 1"
                                       : NULL);
}

dpm_status_t dpm_device_report_fedauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                      dpm_fedauc_session_t *s, const uint8_t *reply,
                                      size_t reply_len, const uint8_t *labels, const uint64_t *ids,
                                      const dpm_memo_t *memo, dpm_report_info_t *info)
{
    if (!DPM_MECH_FEDAUC) {
        return absent(d, DPM_MECH_ID_FEDAUC_LAP);
    }
    if (!opened(d) || m == NULL || s == NULL || reply == NULL || labels == NULL) {
        return bad_arg(d, "no mechanism, session, reply or labels (NULL)");
    }
    if (!is_fedauc(m)) {
        return bad_arg(d, NOT_FEDAUC);
    }
    if (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR &&
        (memo == NULL || memo->opened != DPM_MEMO_OPENED)) {
        return bad_arg(d, "fedauc_rr needs the device secret (dpm_device_memo_open)");
    }
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    dpm_status_t st = dpm_fedauc_accept(s, m, reply, reply_len, ids, &rk, &why);
    dpm_fedauc_stats_t stats;
    if (st == DPM_OK) {
        st = dpm_fedauc_stats(s, &rk, labels, &stats); /* checks the labels */
        why = "a label is not 0 or 1";
    }
    if (st != DPM_OK) {
        return say(d, st, why);
    }
    charged_t ch;
    st = admit(d, m, period, DPM_REPORT_FEDAUC_MAX, &ch);
    if (st != DPM_OK) {
        return st;
    }
    dpm_report_t rep;
    uint8_t buf[DPM_REPORT_FEDAUC_MAX];
    st = dpm_mech_report_fedauc(m, &d->rand, &ch.iss, &ch.iss.issued, s, &rk, labels, ids, memo,
                                &rep);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_fedauc(&rep, buf, sizeof(buf), &len);
    }
    st = finish(d, m, st, &ch, &rep, buf, len, info);
    if (st == DPM_OK) {
        s->state = DPM_FEDAUC_REPORTED;
    }
    return st;
}

/* ustat_bins (tree 0) or ustat_tree (tree 1): one example. */
static dpm_status_t report_ustat(dpm_device_t *d, const dpm_mech_t *m, uint32_t period, int tree,
                                 const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
    dpm_mech_id_t want = tree ? DPM_MECH_ID_USTAT_TREE : DPM_MECH_ID_USTAT_BINS;
    if (!DPM_MECH_USTAT) {
        return absent(d, want);
    }
    if (!opened(d) || m == NULL || ex == NULL) {
        return bad_arg(d, "no mechanism or no example (NULL)");
    }
    if (m->campaign.mechanism != want) {
        return bad_arg(d, tree ? "not a ustat_tree campaign: use its kind's report call"
                               : "not a ustat_bins campaign: use its kind's report call");
    }
    const char *why = dpm_ustat_input_problem(m, ex);
    if (why != NULL) {
        return bad_arg(d, why);
    }
    charged_t ch;
    dpm_status_t st = admit(
        d, m, period, DPM_REPORT_MAX2(DPM_REPORT_USTAT_TREE_MAX, DPM_REPORT_USTAT_BINS_MAX), &ch);
    if (st != DPM_OK) {
        return st;
    }
    dpm_report_t rep;
    uint8_t buf[DPM_REPORT_MAX2(DPM_REPORT_USTAT_TREE_MAX, DPM_REPORT_USTAT_BINS_MAX)];
    st = tree ? dpm_mech_report_ustat_tree(m, &d->rand, &ch.iss, &ch.iss.issued, ex, &rep)
              : dpm_mech_report_ustat_bins(m, &d->rand, &ch.iss, &ch.iss.issued, ex, &rep);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_ustat(&rep, buf, sizeof(buf), &len);
    }
    return finish(d, m, st, &ch, &rep, buf, len, info);
}

dpm_status_t dpm_device_report_ustat_bins(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
    return report_ustat(d, m, period, 0, ex, info);
}

dpm_status_t dpm_device_report_ustat_tree(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
    return report_ustat(d, m, period, 1, ex, info);
}

dpm_status_t dpm_device_memo_open(dpm_device_t *d, uint32_t offset, uint32_t size, dpm_memo_t *memo)
{
    if (!DPM_MECH_FEDAUC) { /* only fedauc_rr uses the memo: without it, nothing is linked */
        return absent(d, DPM_MECH_ID_FEDAUC_RR);
    }
    if (!opened(d) || memo == NULL) {
        return bad_arg(d, "no memo (NULL)");
    }
    /* The layout: the record's area (one ledger slot) just before the ledger's two slots (with
     * 0.1.0's explicit regions, an area no memo of 0.1.0 used: the memo came later). */
    uint32_t record =
        d->ledger.offset < d->ledger.slot_size ? d->ledger.offset : d->ledger.slot_size;
    if (overlaps(offset, size, d->ledger.offset - record,
                 record + 2u * (uint64_t)d->ledger.slot_size) ||
        overlaps(offset, size, d->outbox.offset, 2u * (uint64_t)d->outbox.bank_size) ||
        (same_storage(&d->ledger_anchor, &d->storage) &&
         overlaps(offset, size, d->ledger.anchor_offset, DPM_LEDGER_ANCHOR_BYTES)) ||
        (d->outbox.anchor != NULL && same_storage(d->outbox.anchor, &d->storage) &&
         overlaps(offset, size, d->outbox.anchor_offset, DPM_OUTBOX_ANCHOR_BYTES))) {
        return bad_arg(d, "memo region overlaps the device's storage layout or an anchor");
    }
    dpm_status_t st = dpm_memo_open(memo, &d->storage, offset, size, &d->rand);
    return say(d, st, NULL);
}

dpm_status_t dpm_device_flush(dpm_device_t *d, const dpm_transport_t *t, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res)
{
    if (!DPM_UPLOAD) { /* refused first; a plain if: the uploader is not linked */
        return say(d, DPM_ERR_UNSUPPORTED,
                   "the SDK's upload is not in this build (DPM_UPLOAD=0): post the records of "
                   "dpm_device_outbox with your own HTTPS client");
    }
    if (!opened(d) || d->upload.opened != DPM_UPLOAD_OPENED) {
        return bad_arg(d, "no upload config (dpm_device_config_t.upload)");
    }
    dpm_status_t st =
        dpm_upload_flush(&d->upload, &d->outbox, t, &d->clock, &d->rand, work, work_cap, res);
    return say(d, st, NULL);
}

dpm_outbox_t *dpm_device_outbox(dpm_device_t *d)
{
    return opened(d) ? &d->outbox : NULL;
}

dpm_ledger_t *dpm_device_ledger(dpm_device_t *d)
{
    return opened(d) ? &d->ledger : NULL;
}
