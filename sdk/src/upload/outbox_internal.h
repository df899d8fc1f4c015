/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside sdk/src: the outbox's entry for bytes the SDK has just encoded itself. */
#ifndef DPM_OUTBOX_INTERNAL_H
#define DPM_OUTBOX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/upload.h"

/* dpm_outbox_put without decoding the bytes again: for the output of dpm_report_encode on a
 * report the SDK made (the device's one-call path), which decodes by construction. Everything
 * else (size, id field, idempotence, room, durability) as dpm_outbox_put. */
dpm_status_t dpm_outbox_put_encoded(dpm_outbox_t *ob, const uint8_t *report, size_t len);

#endif /* DPM_OUTBOX_INTERNAL_H */
