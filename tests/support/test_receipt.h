/* SPDX-License-Identifier: Apache-2.0 */
/* Tests and tools make reports without a ledger: TEST_RECEIPT(m, period) is the two arguments
 * `issuer, receipt` of a perturbing call (dpm/expert/report.h), a receipt for one report of mechanism m
 * in `period` just issued by dpm_receipt_unmetered from one issuer kept for this purpose (one per
 * translation unit: single-threaded use only; a threaded tool keeps its own issuer per thread).
 * The receipt is good for the next perturbing call that takes it, once. */
#ifndef TEST_RECEIPT_H
#define TEST_RECEIPT_H

#ifndef DPM_SIMULATOR_API
#error "tests and simulators build with -DDPM_SIMULATOR_API (dpm_receipt_unmetered)"
#endif

#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"

typedef struct {
    dpm_receipt_issuer_t iss;
    dpm_receipt_t rc;
} test_receipt_pair_t;

static inline test_receipt_pair_t *test_receipt_pair(void)
{
    static test_receipt_pair_t pair;
    return &pair;
}

static inline dpm_receipt_issuer_t *test_receipt_issue(const dpm_mech_t *m, uint32_t period)
{
    test_receipt_pair_t *p = test_receipt_pair();
    (void)dpm_receipt_unmetered(&p->iss, m, period, &p->rc);
    return &p->iss;
}

/* Arguments are all evaluated before the call, so the receipt is issued before the call reads
 * it, in whichever order they are evaluated. */
#define TEST_RECEIPT(m, period) test_receipt_issue((m), (period)), &test_receipt_pair()->rc

#endif /* TEST_RECEIPT_H */
