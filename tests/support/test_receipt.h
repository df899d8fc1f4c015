/* SPDX-License-Identifier: Apache-2.0 */
/* Tests and tools make reports without a ledger: a receipt for one report of mechanism m in
 * `period`, as dpm_receipt_unmetered makes it, usable inline as an argument (a compound
 * literal lives until the end of the enclosing block). */
#ifndef TEST_RECEIPT_H
#define TEST_RECEIPT_H

#include "dpm/report.h"

#define TEST_RECEIPT(m, period)                                                                    \
    (&(dpm_receipt_t){(m)->campaign.id, (period), (m)->params_hash, (m)->eps_implemented,          \
                      DPM_RECEIPT_UNMETERED})

#endif /* TEST_RECEIPT_H */
