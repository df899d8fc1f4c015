/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC internals shared by mech/fedauc.c and mech/fedauc_wire.c (only inside mech/: the rest
 * of the SDK reaches FedAUC through its ops, mech/mech_ops.h). */
#ifndef DPM_MECH_FEDAUC_INTERNAL_H
#define DPM_MECH_FEDAUC_INTERNAL_H

#include <stdint.h>

#include "dpm.pb.h"
#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"

/* 1 if id is fedauc_rr or fedauc_lap. */
static inline int dpm_fedauc_is(uint32_t id)
{
    return id == DPM_MECH_ID_FEDAUC_RR || id == DPM_MECH_ID_FEDAUC_LAP;
}

/* dpm_mech_report_fedauc's body (the receipt is checked by the caller). */
dpm_status_t dpm_fedauc_perturb(const dpm_mech_t *m, dpm_rand_t *r, const dpm_fedauc_session_t *s,
                                const dpm_fedauc_ranks_t *rk, const uint8_t *labels,
                                const uint64_t *ids, const dpm_memo_t *memo,
                                dpm_fedauc_report_t *out);

/* dpm_mech_check_report's part for a FedaucBody of report ε eps under mechanism m. */
dpm_status_t dpm_fedauc_check_body(const dpm_mech_t *m, dpm_eps_t eps, const dpm_fedauc_report_t *b,
                                   const char **reason);

/* The rank reply's header into *h and its ranks into work[i] = (R_i << 32 | i), at most cap of
 * them (h->n = how many). DPM_ERR_PROTOCOL for malformed bytes or more than cap ranks. */
dpm_status_t dpm_fedauc_reply_decode_work(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                          uint64_t *work, uint32_t cap);

/* Report body <-> wire. */
void dpm_fedauc_body_to_wire(const dpm_fedauc_report_t *b, dpm_v1_FedaucBody *w);
void dpm_fedauc_body_from_wire(const dpm_v1_FedaucBody *w, dpm_fedauc_report_t *b);

#endif /* DPM_MECH_FEDAUC_INTERNAL_H */
