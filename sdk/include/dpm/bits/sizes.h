/* SPDX-License-Identifier: Apache-2.0 */
/* Byte bounds of the wire: a report id, the largest encoded report and campaign in this
 * build (the outbox and the upload work buffers are sized from them; dpm/expert/report.h
 * encodes and decodes). */
#ifndef DPM_BITS_SIZES_H
#define DPM_BITS_SIZES_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/campaign.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a report id (dpm_report_info_t.report_id). */
#define DPM_REPORT_ID_BYTES 16

/* Largest encoded report, and of a Campaign message. The report bound is exact for what
 * dpm_report_encode writes (proto3, packed repeated fields): a header of at most 43 bytes
 * (report_id 18, campaign_id 6, period 6, mechanism 2, eps_q16 6, params_hash 5) plus the
 * largest body. roc_hist with B = DPM_MAX_BINS bins: 2 packed fields of 1 tag + the length
 * varint + B * 5 bytes (sint32 of magnitude up to 2^31 - 1), plus the group field (1 tag + the
 * varint of DPM_MAX_GROUPS - 1), in 1 tag + a length varint; B = 64, 16 groups: 43 + 1 + 2 +
 * 2 * (1 + 2 + 320) + 2 = 694. Without roc_hist the tuple body bounds it (80). dpauc with N =
 * DPM_DPAUC_MAX_THRESHOLDS: 4 packed fields of N sint32; N = 25 (the default): 43 + 1 + 2 +
 * 4 * (1 + 1 + 125) = 554; N = 100: 43 + 1 + 2 + 4 * (1 + 2 + 500) = 2058. ustat_bins: value (1 tag
 * + varint of DPM_MAX_GRR_K - 1) and label (2): 43 + 2 + 5 = 50 at k 256. ustat_tree: label 2,
 * level 2, row and value (1 tag + the varint of 2^depth - 1 each): 43 + 2 + 2 + 2 + 2 * 4 = 57 at
 * depth 16. DPM_REPORT_MAX_BYTES is the largest over the mechanisms compiled in (694 by default:
 * roc_hist). Outbox regions and upload work buffers are sized from it, so a build with more dpauc
 * thresholds needs more, one with fewer bins less. nanopb's dpm_v1_Report_size is larger because it
 * allows the unpacked encoding, which dpm_report_decode also accepts. */
#define DPM_REPORT_VARINT_LEN(x)                                                                   \
    ((x) < 128u ? 1u : (x) < 16384u ? 2u : (x) < 2097152u ? 3u : (x) < 268435456u ? 4u : 5u)
#define DPM_REPORT_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define DPM_REPORT_ROC_FIELD_MAX (1u + DPM_REPORT_VARINT_LEN(5u * DPM_MAX_BINS) + 5u * DPM_MAX_BINS)
#define DPM_REPORT_ROC_BODY_MAX                                                                    \
    (2u * DPM_REPORT_ROC_FIELD_MAX + 1u + DPM_REPORT_VARINT_LEN(DPM_MAX_GROUPS - 1u))
#define DPM_REPORT_ROC_MAX                                                                         \
    (43u + 1u + DPM_REPORT_VARINT_LEN(DPM_REPORT_ROC_BODY_MAX) + DPM_REPORT_ROC_BODY_MAX)
#define DPM_REPORT_TUPLE_MAX 80u
#define DPM_REPORT_DPAUC_FIELD_MAX                                                                 \
    (1u + DPM_REPORT_VARINT_LEN(5u * DPM_DPAUC_MAX_THRESHOLDS) + 5u * DPM_DPAUC_MAX_THRESHOLDS)
#define DPM_REPORT_DPAUC_MAX                                                                       \
    (43u + 1u + DPM_REPORT_VARINT_LEN(4u * DPM_REPORT_DPAUC_FIELD_MAX) +                           \
     4u * DPM_REPORT_DPAUC_FIELD_MAX)
#define DPM_REPORT_USTAT_BINS_MAX (43u + 2u + 1u + DPM_REPORT_VARINT_LEN(DPM_MAX_GRR_K - 1u) + 2u)
#define DPM_REPORT_USTAT_TREE_BODY_MAX                                                             \
    (2u + 1u + DPM_REPORT_VARINT_LEN(DPM_USTAT_MAX_DEPTH) +                                        \
     2u * (1u + DPM_REPORT_VARINT_LEN((UINT32_C(1) << DPM_USTAT_MAX_DEPTH) - 1u)))
#define DPM_REPORT_USTAT_TREE_MAX (43u + 2u + DPM_REPORT_USTAT_TREE_BODY_MAX)
/* FedaucBody at its largest: token 18, n 6, total 6, five 64-bit varints of 11 and eps_p 6 (91),
 * in 1 tag + 1 length byte, after the 43-byte header. */
#define DPM_REPORT_FEDAUC_MAX 136u
#define DPM_REPORT_MAX_BYTES                                                                       \
    DPM_REPORT_MAX2(                                                                               \
        DPM_REPORT_MAX2(DPM_REPORT_MAX2(DPM_MECH_ROC_HIST ? DPM_REPORT_ROC_MAX : 0u,               \
                                        DPM_MECH_TUPLE ? DPM_REPORT_TUPLE_MAX : 0u),               \
                        DPM_REPORT_MAX2(DPM_MECH_DPAUC ? DPM_REPORT_DPAUC_MAX : 0u,                \
                                        DPM_MECH_USTAT                                             \
                                            ? DPM_REPORT_MAX2(DPM_REPORT_USTAT_TREE_MAX,           \
                                                              DPM_REPORT_USTAT_BINS_MAX)           \
                                            : 0u)),                                                \
        DPM_MECH_FEDAUC ? DPM_REPORT_FEDAUC_MAX : 0u)
/* The Campaign bound: 420 bytes for the fields of 0.1.0 (with 64 bin edges), then the fields of
 * issue 17: the thresholds (1 tag + the length varint + 5 bytes each), calibration and kernel
 * (2 each: dpm_campaign_encode refuses unknown values), ustat_k, tree_depth, tree_grr_levels and
 * group_eps (6 each); then FedAUC's fields 20-22 (2-byte tags: 7 each). */
#define DPM_CAMPAIGN_THRESHOLDS_FIELD_MAX                                                          \
    (1u + DPM_REPORT_VARINT_LEN(5u * DPM_CAMPAIGN_MAX_THRESHOLDS) +                                \
     5u * DPM_CAMPAIGN_MAX_THRESHOLDS)
#define DPM_CAMPAIGN_MAX_BYTES                                                                     \
    (420u + DPM_CAMPAIGN_THRESHOLDS_FIELD_MAX + 2u * 2u + 4u * 6u + 3u * 7u)

#ifdef __cplusplus
}
#endif

#endif /* DPM_BITS_SIZES_H */
