/* SPDX-License-Identifier: Apache-2.0 */
/* The device's half of the Batch / BatchResponse codec (dpm/expert/batch.h), without its reason
 * strings: the readers return a reason code (DPM_WHY_*, 0 = fine) that batch_text.c turns into
 * the public API's text. dpm_upload_flush needs no text (it never shows it), so a device image
 * links neither the strings nor the collector's half (batch_text.c: Batch reader, BatchResponse
 * writer); issue 32's flash budget. */
#ifndef DPM_BATCH_INTERNAL_H
#define DPM_BATCH_INTERNAL_H

#include "dpm/expert/batch.h"

enum {
    DPM_WHY_VARINT_TRUNCATED = 1,
    DPM_WHY_VARINT_LONG,
    DPM_WHY_TAG_LONG,
    DPM_WHY_FIELD_ZERO,
    DPM_WHY_WIRE_TYPE,
    DPM_WHY_FIXED_TRUNCATED,
    DPM_WHY_LEN_PAST_END,
    DPM_WHY_ACCEPTED_TYPE, /* then DUPLICATES_TYPE: + field - 1 */
    DPM_WHY_DUPLICATES_TYPE,
    DPM_WHY_REJECTS_TYPE,
    DPM_WHY_REJECT_ID_TYPE, /* then REJECT_REASON_TYPE */
    DPM_WHY_REJECT_REASON_TYPE,
    DPM_WHY_ACCEPTED_LARGE, /* then DUPLICATES_LARGE */
    DPM_WHY_DUPLICATES_LARGE,
    DPM_WHY_REFUSED, /* on_reject's own reason */
    DPM_WHY_COUNT
};

/* dpm_wire_next_field for valid arguments (*pos < len): 0 or a DPM_WHY_* code. */
int dpm_wire_field_read(const uint8_t *buf, size_t len, size_t *pos, dpm_wire_field_t *f);

/* dpm_batch_response_decode for valid arguments: 0 or a DPM_WHY_* code (DPM_WHY_REFUSED:
 * on_reject's reason in *refused). */
int dpm_batch_response_read(const uint8_t *buf, size_t len, uint32_t *accepted,
                            uint32_t *duplicates, dpm_batch_reject_fn on_reject, void *ctx,
                            const char **refused);

/* A field's key and then varint v (a length-delimited field's length, or a varint field's
 * value) at buf[*pos] (buf == NULL: sizing), *pos then past them; the room checked is the whole
 * field's, the v payload bytes of a length-delimited key included, which the caller then
 * writes. DPM_ERR_PARAM for pos == NULL, DPM_ERR_BUFFER (nothing written) without room. */
dpm_status_t dpm_wire_put_head(uint8_t *buf, size_t cap, size_t *pos, uint8_t key, size_t v);

#endif /* DPM_BATCH_INTERNAL_H */
