/* SPDX-License-Identifier: Apache-2.0 */
/* Campaigns on the wire: dpm.v1.Campaign encode and decode (validation: mech/mech.c). */
#include "dpm_internal.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/expert/report.h"

/* The wire array holds at least as many edges as a campaign (dpm.options bounds it to 64). */
typedef char
    edges_fit[DPM_ARRAY_LEN(((dpm_v1_Campaign *)0)->bin_edges) >= DPM_CAMPAIGN_MAX_EDGES ? 1 : -1];
typedef char thresholds_fit
    [DPM_ARRAY_LEN(((dpm_v1_Campaign *)0)->thresholds) >= DPM_CAMPAIGN_MAX_THRESHOLDS ? 1 : -1];
typedef char metrics_fit[DPM_ARRAY_LEN(((dpm_v1_Campaign *)0)->metrics) == DPM_CAMPAIGN_MAX_METRICS
                             ? 1
                             : -1];

static dpm_status_t fail(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

dpm_status_t dpm_campaign_decode(const uint8_t *buf, size_t len, dpm_campaign_t *out,
                                 const char **reason)
{
    if (buf == NULL || out == NULL) {
        return fail(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_v1_Campaign msg = dpm_v1_Campaign_init_zero;
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (!pb_decode(&in, dpm_v1_Campaign_fields, &msg) || in.bytes_left != 0) {
        return fail(reason, "not a campaign message (or more metrics than supported)",
                    DPM_ERR_PROTOCOL);
    }
    if (msg.bin_edges_count > DPM_CAMPAIGN_MAX_EDGES) {
        return fail(reason,
                    DPM_MECH_ROC_HIST ? "too many bins"
                                      : "histogram campaigns are not in this build",
                    DPM_ERR_PROTOCOL);
    }
    /* the bound dpm_campaign_encode puts on these enums, so a decoded campaign re-encodes
     * (found by fuzz_campaign: a ustat_kernel of 675 decoded, then could not be encoded) */
    if ((uint32_t)msg.calibration > 127u || (uint32_t)msg.ustat_kernel > 127u) {
        return fail(reason, "unknown dpauc calibration or ustat kernel", DPM_ERR_PROTOCOL);
    }
    if (msg.thresholds_count > DPM_CAMPAIGN_MAX_THRESHOLDS) {
        return fail(reason,
                    DPM_MECH_DPAUC ? "more dpauc thresholds than this build holds"
                                   : "dpauc campaigns are not in this build",
                    DPM_ERR_PROTOCOL);
    }
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = msg.id;
    c.mechanism = (dpm_mech_id_t)msg.mechanism;
    c.eps.q16 = msg.eps_q16;
    c.budget.q16 = msg.budget_q16;
    c.period_seconds = msg.period_seconds;
    c.groups = msg.groups;
    c.nmetrics = msg.metrics_count;
    for (uint32_t i = 0; i < c.nmetrics; i++) {
        c.metrics[i] = (dpm_metric_t)msg.metrics[i];
    }
    c.nbins = msg.bin_edges_count;
    memcpy(c.bin_edges, msg.bin_edges, c.nbins * sizeof(c.bin_edges[0]));
    c.frac_bits = msg.frac_bits;
    c.nthresholds = msg.thresholds_count;
    memcpy(c.thresholds, msg.thresholds, c.nthresholds * sizeof(c.thresholds[0]));
    c.calibration = (uint32_t)msg.calibration;
    c.ustat_k = msg.ustat_k;
    c.ustat_kernel = (uint32_t)msg.ustat_kernel;
    c.tree_depth = msg.tree_depth;
    c.tree_grr_levels = msg.tree_grr_levels;
    c.group_eps.q16 = msg.group_eps_q16;
    c.fedauc_variant = (uint32_t)msg.fedauc_variant;
    c.fedauc_p_share_q16 = msg.fedauc_p_share_q16;
    c.fedauc_score_bits = msg.fedauc_score_bits;
    *out = c;
    return DPM_OK;
}

dpm_status_t dpm_campaign_encode(const dpm_campaign_t *c, uint8_t *buf, size_t cap, size_t *len)
{
    /* enums beyond their values would encode as 10-byte negative varints: refused, so
     * DPM_CAMPAIGN_MAX_BYTES holds */
    if (c == NULL || buf == NULL || len == NULL || c->nmetrics > DPM_CAMPAIGN_MAX_METRICS ||
        c->nbins > DPM_CAMPAIGN_MAX_EDGES || c->nthresholds > DPM_CAMPAIGN_MAX_THRESHOLDS ||
        c->calibration > 127u || c->ustat_kernel > 127u) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_Campaign msg = dpm_v1_Campaign_init_zero;
    msg.id = c->id;
    msg.mechanism = (dpm_v1_Mechanism)c->mechanism;
    msg.eps_q16 = c->eps.q16;
    msg.budget_q16 = c->budget.q16;
    msg.period_seconds = c->period_seconds;
    msg.groups = c->groups;
    msg.metrics_count = (pb_size_t)c->nmetrics;
    for (uint32_t i = 0; i < c->nmetrics; i++) {
        msg.metrics[i] = (dpm_v1_Metric)c->metrics[i];
    }
    msg.bin_edges_count = (pb_size_t)c->nbins;
    memcpy(msg.bin_edges, c->bin_edges, c->nbins * sizeof(c->bin_edges[0]));
    msg.frac_bits = c->frac_bits;
    msg.thresholds_count = (pb_size_t)c->nthresholds;
    memcpy(msg.thresholds, c->thresholds, c->nthresholds * sizeof(c->thresholds[0]));
    msg.calibration = (dpm_v1_DpaucCalibration)c->calibration;
    msg.ustat_k = c->ustat_k;
    msg.ustat_kernel = (dpm_v1_UstatKernel)c->ustat_kernel;
    msg.tree_depth = c->tree_depth;
    msg.tree_grr_levels = c->tree_grr_levels;
    msg.group_eps_q16 = c->group_eps.q16;
    msg.fedauc_variant = (dpm_v1_FedaucVariant)c->fedauc_variant;
    msg.fedauc_p_share_q16 = c->fedauc_p_share_q16;
    msg.fedauc_score_bits = c->fedauc_score_bits;
    pb_ostream_t out = pb_ostream_from_buffer(buf, cap);
    if (!pb_encode(&out, dpm_v1_Campaign_fields, &msg)) {
        return DPM_ERR_BUFFER;
    }
    *len = out.bytes_written;
    return DPM_OK;
}
