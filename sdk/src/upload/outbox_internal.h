/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside sdk/src: the outbox's entry for bytes the SDK has just encoded itself. */
#ifndef DPM_OUTBOX_INTERNAL_H
#define DPM_OUTBOX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/uploader.h"

/* dpm_outbox_put for the output of dpm_report_encode on a report the SDK has just made (the
 * device's one-call path): no decoding (it decodes by construction) and NO look-up of its id
 * among the pending records, so its cost does not grow with the outbox. Its id is 16 fresh
 * bytes from the device's CSPRNG, drawn for this report alone: it cannot already be pending
 * unless the generator repeats itself (probability about n^2 / 2^129 for n reports), and the
 * collector de-duplicates by id anyway. Hence no idempotence: the same bytes put twice are
 * stored twice. Everything else (size, id field, room, durability) as dpm_outbox_put. */
dpm_status_t dpm_outbox_put_encoded(dpm_outbox_t *ob, const uint8_t *report, size_t len);

/* 1 if *ob was bound by dpm_outbox_open* or dpm_outbox_format (an all-zero outbox was not). */
int dpm_outbox_is_open(const dpm_outbox_t *ob);

#endif /* DPM_OUTBOX_INTERNAL_H */
