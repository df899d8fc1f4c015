/* SPDX-License-Identifier: Apache-2.0 */
/* The device: the app's entry point. One context holds the random source, the privacy ledger,
 * the outbox, the uploader and the app's privacy policy; one call per report does the
 * privacy-critical steps in the only safe order:
 *
 *   validate everything (policy, campaign, inputs, outbox room, budget)  -- nothing spent yet
 *   -> charge the ledger (durable before it returns) -> perturb -> encode -> queue in the outbox
 *
 * and spends nothing when anything before the charge fails. A report cannot exist without its
 * charge: the perturbing calls of dpm/expert/report.h take the receipt that only a charge returns.
 *
 * The app's policy caps what any campaign may ask for (the largest ε of one report and the
 * largest budget per campaign and period) AND what the device spends in all (policy.device:
 * the most ε per device period across every campaign, enforced by the ledger at every
 * charge). A campaign fetched from the network that asks for more than its limits is refused
 * with its reason; and since campaign ids, periods and period lengths are the collector's
 * word, the device cap is what holds whatever a collector announces: a compromised collector
 * (or its CA key) that answers with other campaigns, new ids or short periods can make the
 * device spend at most policy.device.max_eps per device period, so it cannot set the privacy
 * level. (It can still stop the device from reporting, as it can by not answering.)
 *
 * ε is written with DPM_EPS(x) (dpm/types.h): a plain number where a policy or a campaign
 * wants an ε does not compile (assignments) or warns (-Wmissing-braces, initializers), and
 * any ε below DPM_EPS_FLOOR_Q16 (2^-8) is refused at dpm_device_init and at campaign
 * acceptance with its reason.
 *
 * Why: every call that refuses says which argument and why in plain words: read
 * dpm_device_why(d) after any device call returned an error (the accept calls also return it
 * through their reason argument).
 *
 * Memory: everything lives in caller-owned structs (no heap). A dpm_device_t points into
 * itself (the ledger and outbox hold its storage, the random source its rng): never copy or
 * move one after dpm_device_init. Concurrency: calls on one device must not overlap. A call
 * that returns an error leaves *d as it was except d->why (the reason, see dpm_device_why).
 *
 * Config agreement: dpm_device_init is a macro that passes dpm_abi_fingerprint() as the app's
 * translation unit sees it (every DPM_* option and the sizes of the public structs); the
 * library compares it with its own and refuses with DPM_ERR_CONFIG when an app was compiled
 * with other DPM_* values than its libdpm.a, instead of corrupting memory. */
#ifndef DPM_DEVICE_H
#define DPM_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/bits/noise.h"
#include "dpm/bits/storage.h"
#include "dpm/bits/upload.h"
#include "dpm/campaign.h"
#include "dpm/port.h"
#include "dpm/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- policy -------------------------------------------------------------------------------- */

/* Limits for one campaign (a rule) or for every campaign without a rule (the defaults). */
typedef struct {
    uint32_t campaign_id;       /* rules only; ignored in dpm_policy_t.defaults */
    dpm_eps_param_t max_eps;    /* largest ε one report may spend: DPM_EPS(1) */
    dpm_eps_param_t max_budget; /* largest campaign budget per period, >= max_eps */
} dpm_policy_limit_t;

/* The device-wide cap: what the device spends in all, whatever the campaigns.
 *
 * WHAT IT BOUNDS: the ε that all charges together (every report of every campaign; later
 * also the participation a two-aggregator upload charges) spend while the device's clock is
 * in one device period, [kW, (k+1)W) with W = period_seconds, is at most max_eps. The clock
 * is the ledger's (dpm/expert/budget.h, "Time"): the port's wall clock when it has one, else the
 * time the device was powered on (measured with clock.monotonic_ms since dpm_device_init),
 * never going back; a device with neither stays in one period for ever (a lifetime cap).
 * While the clock is never set forward, any W seconds of real time meet at most two device
 * periods: at most 2 x max_eps in any W seconds, (m + 1) x max_eps in any m x W seconds.
 * The cap counts every charge: campaign ids, period numbers and period lengths (the
 * collector's word) cannot raise it. */
typedef struct {
    dpm_eps_param_t max_eps; /* most ε per device period; DPM_EPS_Q16(0): the largest
                                max_budget of the policy (one campaign's worth per period) */
    uint32_t period_seconds; /* W; 0: DPM_DEVICE_PERIOD_SECONDS (one day) */
} dpm_policy_cap_t;

#define DPM_DEVICE_PERIOD_SECONDS 86400u

/* The app's privacy policy. A campaign is allowed iff its ε <= max_eps and its budget <=
 * max_budget of the rule naming its id, or of the defaults when no rule names it. Rules can be
 * looser or tighter than the defaults; ids are unique. Every charge also counts against
 * `device`, the cap of all campaigns together. */
typedef struct {
    dpm_policy_limit_t defaults;
    uint32_t nrules; /* 0 .. DPM_POLICY_MAX_RULES */
    dpm_policy_limit_t rules[DPM_POLICY_MAX_RULES];
#if DPM_VDAF
    /* Two-aggregator tasks (dpm/expert/device_dap.h): the app's table (typically const, in flash),
     * not copied: it must outlive the device. NULL: no such task is allowed. */
    const struct dpm_dap_policy_s *dap; /* a dpm_dap_policy_t */
#endif
    dpm_policy_cap_t device; /* all zero: one campaign's worth per day */
} dpm_policy_t;

/* ---- the device context ---------------------------------------------------------------------- */

/* ---- the storage layout ---------------------------------------------------------------------
 *
 * The app gives the device ONE region of its storage, [region_offset, region_offset + size), and
 * the SDK lays it out itself, deterministically from the build's constants, the region's size
 * and the storage's sector size (S: DPM_LEDGER_RECORD_MAX rounded up to whole sectors; B: the
 * largest whole number of sectors in (size - 3 S) / 2):
 *
 *   [0, S)            the layout record: what the region was laid out for (its first
 *                     DPM_LAYOUT_RECORD_BYTES: magic, size, sector size, the offsets, CRC-32)
 *   [S, 3 S)          the privacy ledger (two slots of S)
 *   [3 S, 3 S + 2 B)  the outbox (two banks of B)
 *   the rest          unused (less than two sectors)
 *
 * so every part starts on a sector boundary and each of the ledger's and outbox's erases covers
 * whole sectors. The record is written once, on the first dpm_device_init of an erased region,
 * and read at every init, which goes on only if it describes this same layout. So a reboot
 * finds its ledger and outbox where it left them, and one with another size or sector size
 * (which would move them) is refused with DPM_ERR_PARAM and its reason, storage untouched,
 * instead of losing reports or the record of spent ε. A region that holds data but no valid
 * record (damage, or a region laid out by hand before this SDK did it) is DPM_ERR_CORRUPT,
 * storage untouched: nothing in it can tell where the ledger was, so it is never reformatted
 * silently; the app erases the region to start over (its reports and spent-ε record are lost).
 * A first init torn while writing the record (the rest of the region still erased) writes it
 * again. The smallest region is DPM_DEVICE_MIN_REGION(sector_size) bytes: a ledger and an
 * outbox that holds one largest report; the outbox takes every byte above it. */
#define DPM_LAYOUT_RECORD_BYTES 32u
#define DPM_LAYOUT_UNIT(sector) ((sector) > 1u ? (uint32_t)(sector) : 1u)
#define DPM_LAYOUT_ROUND(x, u) (((uint32_t)(x) + (u)-1u) / (u) * (u))
#define DPM_DEVICE_MIN_REGION(sector)                                                              \
    (3u * DPM_LAYOUT_ROUND(DPM_LEDGER_RECORD_MAX, DPM_LAYOUT_UNIT(sector)) +                       \
     2u * DPM_LAYOUT_ROUND(DPM_OUTBOX_MIN_REGION / 2u, DPM_LAYOUT_UNIT(sector)))

/* Where the layout puts each part, in bytes from the region's start. */
typedef struct {
    uint32_t record_size;                /* S: the layout record's area */
    uint32_t ledger_offset, ledger_size; /* S, 2 S */
    uint32_t outbox_offset, outbox_size; /* 3 S, 2 B */
} dpm_storage_layout_t;

/* The layout of a region of region_size bytes on storage erased in sectors of sector_size bytes
 * (0 or 1: any range, as files, RAM and FRAM), as dpm_device_init makes it. DPM_ERR_PARAM, with
 * *reason naming the build's minimum, for a region below DPM_DEVICE_MIN_REGION(sector_size) or
 * NULL out (*out untouched). */
dpm_status_t dpm_storage_layout(uint32_t region_size, uint32_t sector_size,
                                dpm_storage_layout_t *out, const char **reason);

/* What dpm_device_init needs. rng and storage are required (a CSPRNG on devices; the SDK keeps
 * the ledger and the outbox in one region of storage, laid out as above). clock is required for
 * uploads (backoff), and it is what moves the device cap's periods (policy.device): without one
 * the cap is a lifetime cap. upload.host == NULL means the app posts the outbox's bytes itself
 * (dpm_device_outbox). */
typedef struct {
    dpm_rng_t rng;
    dpm_clock_t clock;
    dpm_storage_t storage;
    /* The SDK's region of storage: [region_offset, region_offset + region_size), region_size 0
     * meaning up to storage.size. At least DPM_DEVICE_MIN_REGION(sector_size) bytes; keep both
     * (and sector_size) the same across reboots (see "the storage layout" above). */
    uint32_t region_offset, region_size;
    /* Flash: the erase sector in bytes (region_offset must be a multiple of it); 0 or 1 for
     * storage that erases any range (files, RAM, FRAM). */
    uint32_t sector_size;
    /* COMPATIBILITY ONLY (0.1.0's explicit regions; new apps leave all four 0): a device that
     * 0.1.0 set up keeps its ledger and outbox where they are, with no layout record and none
     * of its checks. Either these (ledger_size >= DPM_LEDGER_MIN_REGION, outbox_size >=
     * DPM_OUTBOX_MIN_REGION, disjoint, inside storage) or region_*, never both. */
    uint32_t ledger_offset, ledger_size;
    uint32_t outbox_offset, outbox_size;
    /* Optional (.read == NULL: none): where the ledger's write-once anchor lives, outside the
     * region (another sector, OTP, another file): with it a wholly erased ledger region fails
     * closed instead of starting a new ledger (see dpm_ledger_open_anchored). */
    dpm_storage_t ledger_anchor;
    uint32_t ledger_anchor_offset;
    dpm_policy_t policy;
    dpm_upload_config_t upload; /* optional: all zero for no uploads through the SDK */
    /* Optional (NULL: none): the outbox's write-once anchor, outside the region (it may be
     * the storage of the region or of the ledger's anchor, at another offset): with it a
     * wholly erased outbox region is counted and reported as a loss instead of reading as a
     * new device (see dpm_outbox_open_anchored). A pointer, unlike ledger_anchor: the
     * dpm_storage_t it points to must outlive the device (as every storage's ctx must), so the
     * device holds no copy of it. */
    const dpm_storage_t *outbox_anchor;
    uint32_t outbox_anchor_offset;
} dpm_device_config_t;

typedef struct {
    const char *why; /* FIRST member (offset 0 in every build configuration): the reason of
                        the last refusal, see dpm_device_why */
    dpm_rng_t rng;
    dpm_clock_t clock;
    dpm_storage_t storage;
    dpm_storage_t ledger_anchor;
    dpm_policy_t policy;
    uint32_t opened;  /* DPM_DEVICE_OPENED once initialised */
    uint32_t clock_s; /* monotonic seconds up to which the ledger clock has been advanced */
    dpm_rand_t rand;
    dpm_ledger_t ledger;
    dpm_outbox_t outbox;
    dpm_upload_t upload;
} dpm_device_t;

/* What a report call queued. */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    uint32_t bytes;            /* encoded size in the outbox */
    dpm_eps_t eps_spent;       /* charged to the ledger, Q16.16 */
    dpm_eps_t spent_in_period; /* the campaign's total in this period after the charge */
    dpm_eps_t device_spent;    /* all campaigns' total in the device period after the charge
                                  (the cap's count, see dpm_policy_cap_t) */
} dpm_report_info_t;

#define DPM_DEVICE_OPENED 0x44564544u

/* Switches in one word: bit 0 the tuples, 1 roc_hist, 2 tuples without tuple_ml, 3 no SDK
 * upload (bits 2 and 3 are clear in the default build, whose fingerprint they left unchanged). */
#define DPM_ABI_BUILD_BITS                                                                         \
    ((uint32_t)(8 * !DPM_UPLOAD + 4 * (DPM_MECH_TUPLE && !DPM_MECH_TUPLE_ML) +                     \
                2 * DPM_MECH_ROC_HIST + DPM_MECH_TUPLE))

/* The config fingerprint: every DPM_* option and the size of every struct an app allocates or
 * passes through this front door, as the calling translation unit sees them (static inline: it
 * is evaluated with the caller's headers and flags, not the library's). The expert API's
 * structs (dpm/expert/) are sized by the same options. */
static inline uint32_t dpm_abi_fingerprint(void)
{
    const uint32_t v[] = {DPM_MAX_BINS,
                          DPM_MAX_GROUPS,
                          DPM_MAX_GRR_K,
                          DPM_FRAC_BITS,
                          DPM_EPS_MAX,
                          DPM_RAND_BUF_BYTES,
                          DPM_LEDGER_MAX_CAMPAIGNS,
                          DPM_POLICY_MAX_RULES,
                          DPM_ABI_BUILD_BITS,
                          (uint32_t)((DPM_MECH_USTAT << 1) | DPM_MECH_DPAUC),
                          DPM_DPAUC_MAX_THRESHOLDS,
                          DPM_USTAT_MAX_DEPTH,
                          DPM_MECH_FEDAUC,
                          DPM_FEDAUC_MAX_EXAMPLES,
                          (uint32_t)sizeof(dpm_fedauc_session_t),
                          (uint32_t)sizeof(dpm_memo_t),
                          (uint32_t)sizeof(dpm_device_t),
                          (uint32_t)sizeof(dpm_device_config_t),
                          (uint32_t)sizeof(dpm_mech_t),
                          (uint32_t)sizeof(dpm_score_hist_t),
                          (uint32_t)((DPM_VDAF_FIELD64 << 1) | DPM_VDAF),
                          (uint32_t)sizeof(dpm_report_info_t),
                          (uint32_t)sizeof(dpm_upload_result_t)};
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        h = (h ^ v[i]) * 16777619u; /* FNV-1a over the words */
    }
    return h;
}

/* DPM_OK if the caller was compiled with the library's configuration (pass
 * dpm_abi_fingerprint()), DPM_ERR_CONFIG otherwise. Apps that use only the low-level calls
 * check with dpm_config_check(); dpm_device_init checks by itself. */
dpm_status_t dpm_config_check_abi(uint32_t app_fingerprint);
#define dpm_config_check() dpm_config_check_abi(dpm_abi_fingerprint())

/* Open the device: check the config fingerprint, the policy and the region, lay the region
 * out or find its layout (see "the storage layout"), bind the random source, open the ledger
 * and the outbox (recovering them after a power loss). Returns DPM_OK
 * (CHECK dpm_outbox_stats of dpm_device_outbox: an outbox found damaged or erased counts its
 * lost reports there); DPM_ERR_CONFIG (app and library built with different DPM_* options:
 * nothing touched but d->why, the first member in every configuration); DPM_ERR_PARAM for
 * NULL, a missing rng or storage, a policy with an ε below DPM_EPS_FLOOR_Q16 (max_eps,
 * max_budget, a non-zero device.max_eps), max_budget < max_eps, a device cap below a max_eps
 * (no report could pass it), more than DPM_POLICY_MAX_RULES rules or a repeated id, a region
 * beyond storage.size, below DPM_DEVICE_MIN_REGION(sector_size) (the reason names the
 * minimum) or off a sector boundary, an anchor inside the region or out of range, an invalid
 * upload config, or a region laid out for another size or sector size (*d untouched but d->why,
 * which names the argument); DPM_ERR_CORRUPT for a region with data but no valid layout record
 * (*d untouched but d->why; storage untouched); DPM_ERR_STORAGE if the layout record could
 * not be read or written; the ledger's and outbox's errors (DPM_ERR_STORAGE;
 * DPM_ERR_CORRUPT: the device is then opened but refuses to report until the app resolves it,
 * see dpm_ledger_reset / dpm_outbox_format). */
dpm_status_t dpm_device_init_abi(dpm_device_t *d, const dpm_device_config_t *cfg,
                                 uint32_t app_fingerprint);
#define dpm_device_init(d, cfg) dpm_device_init_abi((d), (cfg), dpm_abi_fingerprint())

/* Decode a campaign (bytes from the collector or compiled in), build its mechanism and check it
 * against the policy: the one way a campaign should enter an app. Returns DPM_OK (*m ready);
 * DPM_ERR_POLICY (the campaign asks for more ε or budget than the app allows); the errors of
 * dpm_campaign_decode and dpm_mech_init; DPM_ERR_PARAM for NULL or an unopened device;
 * DPM_ERR_UNSUPPORTED in a build without campaign decoding (DPM_UPLOAD=0). *m is
 * untouched on error and *reason (if not NULL) names the cause. */
dpm_status_t dpm_device_accept_campaign(dpm_device_t *d, const uint8_t *bytes, size_t len,
                                        dpm_mech_t *m, const char **reason);

/* The same for a campaign already decoded or filled in code. */
dpm_status_t dpm_device_accept_mech(dpm_device_t *d, const dpm_campaign_t *c, dpm_mech_t *m,
                                    const char **reason);

/* Why the last call on d refused, in plain words (which argument, which limit, what to do): a
 * static string, never NULL; "" when the last call succeeded. "no device" for d == NULL.
 * Defined after any device call on a non-NULL d returned, dpm_device_init included. */
const char *dpm_device_why(const dpm_device_t *d);

/* One tuple report (tuple_mr / tuple_ml campaign m, accepted by dpm_device_accept_*): the
 * device's group (< the campaign's groups) and its local confusion counts, from which the
 * campaign's metrics are computed as exact rationals. In order: checks (device, m, policy, group,
 * every metric defined, outbox room, budget left) -> charge -> perturb -> encode -> queue.
 * Returns DPM_OK (info, if not NULL, filled). Before the charge, with NOTHING spent or stored:
 * DPM_ERR_PARAM (NULL, unopened device, a mechanism that is not a tuple one, group out of range),
 * DPM_ERR_POLICY, DPM_ERR_UNDEFINED (a metric has a zero denominator on these counts),
 * DPM_ERR_BUFFER (the outbox is full: flush first), DPM_ERR_BUDGET (the campaign's budget for
 * the period is spent, the device cap for the device period is spent, or the period is closed
 * because the device already reported for a later one: its spending is no longer kept),
 * DPM_ERR_LEDGER_FULL (a new campaign while the ledger tracks DPM_LEDGER_MAX_CAMPAIGNS whose
 * periods are all still open), DPM_ERR_CORRUPT / DPM_ERR_STORAGE (ledger or outbox). After the
 * charge (ε spent, the safe direction, no report): DPM_ERR_RNG (the random source failed),
 * DPM_ERR_RANGE (probability < 2^-45), DPM_ERR_STORAGE (the outbox write failed). Every error
 * names its cause in dpm_device_why(d). */
dpm_status_t dpm_device_report_tuple(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     uint32_t group, const dpm_confusion_t *conf,
                                     dpm_report_info_t *info);

/* One roc_hist report of the histogram h (built with dpm_score_hist_init/add over
 * dpm_mech_score_bins(m)). Same order, statuses and guarantees as dpm_device_report_tuple;
 * DPM_ERR_PARAM also for h->bins != the campaign's bins, a count above
 * DPM_SCORE_HIST_MAX_COUNT, or a campaign with groups (dpm_device_report_roc_hist_group). */
dpm_status_t dpm_device_report_roc_hist(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                        const dpm_score_hist_t *h, dpm_report_info_t *info);

/* One per-group roc_hist report (a roc_hist campaign with groups >= 2): the device's true group
 * (< the campaign's groups; randomized by GRR inside, see dpm/expert/roc_hist.h) and its histogram
 * h. Same order, statuses and guarantees as dpm_device_report_roc_hist; DPM_ERR_PARAM also for a
 * group out of range or a campaign without groups (and dpm_device_report_roc_hist refuses a
 * campaign with groups: its report would carry no group). */
dpm_status_t dpm_device_report_roc_hist_group(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                              uint32_t group, const dpm_score_hist_t *h,
                                              dpm_report_info_t *info);

/* One dpauc report of the counts c (built with dpm_dpauc_counts_init/add over
 * dpm_mech_dpauc(m)). Same order, statuses and guarantees as dpm_device_report_tuple;
 * DPM_ERR_PARAM also for counts of another threshold count, or that no examples can give. */
dpm_status_t dpm_device_report_dpauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     const dpm_dpauc_counts_t *c, dpm_report_info_t *info);

/* One ustat_bins report of one example: score and label (AUC kernels), or score and score2
 * (KENDALL, label 0). Same order, statuses and guarantees as dpm_device_report_tuple;
 * DPM_ERR_PARAM also for a score above 2^31 or a label out of range (dpm/expert/ustat.h). */
dpm_status_t dpm_device_report_ustat_bins(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info);

/* One ustat_tree report of one example (score and label). As dpm_device_report_ustat_bins. */
dpm_status_t dpm_device_report_ustat_tree(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info);
/* ---- FedAUC (dpm/expert/fedauc.h): two rounds
 * ------------------------------------------------------ */

/* Round 1 of fedauc campaign m (accepted by dpm_device_accept_*): checks the policy still allows
 * the campaign, then dpm_fedauc_prepare (quantize, shuffle, token) into the caller's buffers b
 * and session *s, and encodes the FedaucUpload into out (cap bytes; DPM_FEDAUC_UPLOAD_MAX_BYTES
 * suffices) for the app to post. Spends no ε and queues nothing (round 1 carries no label).
 * Errors (*s untouched, nothing stored): those of dpm_fedauc_prepare (DPM_ERR_UNDEFINED for
 * n == 0, DPM_ERR_BUFFER for n beyond the buffers, ...), DPM_ERR_POLICY, DPM_ERR_BUFFER if out
 * is too small, DPM_ERR_PARAM for an unopened device or a mechanism that is not fedauc. */
dpm_status_t dpm_device_fedauc_upload(dpm_device_t *d, const dpm_mech_t *m,
                                      const dpm_score_t *scores, uint32_t n,
                                      const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s,
                                      uint8_t *out, size_t cap, size_t *len);

/* Round 2: one report from the rank reply (bytes from the collector) for session s, with the
 * app's labels (and, for fedauc_rr, its n stable example ids and the device secret memo, from
 * dpm_device_memo_open). In order: checks (device, m, session, the reply: dpm_fedauc_accept,
 * labels, policy, outbox room, budget left) -> charge (the campaign's implemented ε, as every
 * report) -> dpm_mech_report_fedauc -> encode -> queue; then *s is marked reported (a second
 * report for the same upload is refused: the collector takes one per upload). Before the
 * charge, with NOTHING spent or stored and *s unchanged: DPM_ERR_PROTOCOL (a reply for another
 * upload or campaign, a wrong count, ranks out of range, duplicated where the scores differ,
 * or inconsistent with the scores), DPM_ERR_PARAM (NULL, unopened device, a session already
 * reported or of another campaign, labels outside {0, 1}, repeated ids, no memo for
 * fedauc_rr), DPM_ERR_RANGE (D too large for ORTHOGONAL/ADAPTIVE), and the precheck errors of
 * dpm_device_report_tuple. After the charge: as dpm_device_report_tuple. */
dpm_status_t dpm_device_report_fedauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                      dpm_fedauc_session_t *s, const uint8_t *reply,
                                      size_t reply_len, const uint8_t *labels, const uint64_t *ids,
                                      const dpm_memo_t *memo, dpm_report_info_t *info);

/* Open (or create, on first use) the device secret of fedauc_rr's memoized flips in
 * [offset, offset + size) of the device's storage: dpm_memo_open with the device's storage and
 * random source, after checking that the region does not overlap the SDK's layout (record,
 * ledger, outbox) or a shared anchor (DPM_ERR_PARAM otherwise): put it outside the device's
 * region (on flash, on its own sectors). DPM_ERR_UNSUPPORTED, naming FedAUC's switch, in a
 * build without FedAUC (DPM_MECH_FEDAUC=0: the memo code is not linked). */
dpm_status_t dpm_device_memo_open(dpm_device_t *d, uint32_t offset, uint32_t size,
                                  dpm_memo_t *memo);

/* Post the outbox over the connected transport t (dpm_upload_flush with the device's outbox,
 * clock and random source). DPM_ERR_PARAM if the device has no upload config; DPM_ERR_UNSUPPORTED
 * in a build without the SDK's upload (DPM_UPLOAD=0: the app posts dpm_device_outbox's records). */
dpm_status_t dpm_device_flush(dpm_device_t *d, const dpm_transport_t *t, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res);

#ifdef __cplusplus
}
#endif

#endif /* DPM_DEVICE_H */
