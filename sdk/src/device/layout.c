/* SPDX-License-Identifier: Apache-2.0 */
/* The device's storage layout (dpm/device.h, "the storage layout"): one region, laid out by the
 * SDK from the build's constants, the region's size and the sector size, and a write-once
 * record at its start that every init checks, so a reboot with another size or sector size is
 * refused instead of moving the ledger or the outbox. */
#include "dpm_internal.h"

#include "core/persist.h"

#include "device_internal.h"
#include "dpm/device.h"

/* The record fits in the area before the ledger, whatever the sector size. */
typedef char dpm_layout_record_fits[DPM_LEDGER_RECORD_MAX >= DPM_LAYOUT_RECORD_BYTES ? 1 : -1];

#define LAYOUT_MAGIC 0x314C5044u /* "DPL1" */

/* The byte-erasable minimum written into the reason, digit by digit at compile time: the
 * number's digits, then NULs (a reason is a static string). */
#define MIN0 DPM_DEVICE_MIN_REGION(0u)
#define NDIGITS(n)                                                                                 \
    ((n) >= 1000000u  ? 7                                                                          \
     : (n) >= 100000u ? 6                                                                          \
     : (n) >= 10000u  ? 5                                                                          \
     : (n) >= 1000u   ? 4                                                                          \
     : (n) >= 100u    ? 3                                                                          \
     : (n) >= 10u     ? 2                                                                          \
                      : 1)
#define POW10(e)                                                                                   \
    ((e) <= 0   ? 1u                                                                               \
     : (e) == 1 ? 10u                                                                              \
     : (e) == 2 ? 100u                                                                             \
     : (e) == 3 ? 1000u                                                                            \
     : (e) == 4 ? 10000u                                                                           \
     : (e) == 5 ? 100000u                                                                          \
                : 1000000u)
#define DIGIT(n, k)                                                                                \
    (char)((k) < NDIGITS(n) ? '0' + (int)((n) / POW10(NDIGITS(n) - 1 - (k)) % 10u) : 0)
#define DIGITS(n)                                                                                  \
    {                                                                                              \
        DIGIT(n, 0), DIGIT(n, 1), DIGIT(n, 2), DIGIT(n, 3), DIGIT(n, 4), DIGIT(n, 5), DIGIT(n, 6), \
            0                                                                                      \
    }

/* The reason for a region too small: the text, then the figure's digits, read as one string
 * through `all`. */
#define TOO_SMALL                                                                                  \
    "region_size below DPM_DEVICE_MIN_REGION(sector_size) (each part in whole sectors): with "     \
    "sector_size 0, this build's minimum is "
static const union {
    struct {
        /* cppcheck-suppress unusedStructMember ; written by the initializer, read through all */
        char text[sizeof(TOO_SMALL) - 1];
        /* cppcheck-suppress unusedStructMember */
        char digits[8];
        /* cppcheck-suppress unusedStructMember */
    } parts;
    char all[sizeof(TOO_SMALL) - 1 + 8];
} too_small = {{TOO_SMALL, DIGITS(MIN0)}};

static dpm_status_t fail(const char **why, const char *text, dpm_status_t st)
{
    if (why != NULL) {
        *why = text;
    }
    return st;
}

dpm_status_t dpm_storage_layout(uint32_t region_size, uint32_t sector_size,
                                dpm_storage_layout_t *out, const char **reason)
{
    uint32_t u = DPM_LAYOUT_UNIT(sector_size);
    if (out == NULL) {
        return fail(reason, "no layout (NULL)", DPM_ERR_PARAM);
    }
    /* In 64 bits: a sector size near 2^32 must not wrap the rounding. */
    uint64_t slot = ((uint64_t)DPM_LEDGER_RECORD_MAX + u - 1u) / u * u;
    uint64_t bank_min = ((uint64_t)DPM_OUTBOX_MIN_REGION / 2u + u - 1u) / u * u;
    if ((uint64_t)region_size < 3u * slot + 2u * bank_min) {
        return fail(reason, too_small.all, DPM_ERR_PARAM);
    }
    uint32_t bank = (uint32_t)((region_size - 3u * slot) / 2u / u * u);
    out->record_size = (uint32_t)slot;
    out->ledger_offset = (uint32_t)slot;
    out->ledger_size = (uint32_t)(2u * slot);
    out->outbox_offset = (uint32_t)(3u * slot);
    out->outbox_size = 2u * bank;
    return DPM_OK;
}

static void record_of(uint32_t size, uint32_t unit, const dpm_storage_layout_t *lay, uint8_t *b)
{
    const uint32_t w[7] = {
        LAYOUT_MAGIC,    size, unit, lay->ledger_offset, lay->ledger_size, lay->outbox_offset,
        lay->outbox_size};
    for (int i = 0; i < 7; i++) {
        dpm_put_le32(b + 4u * (size_t)i, w[i]);
    }
    dpm_put_le32(b + 28, dpm_crc32(0, b, 28));
}

dpm_status_t dpm_layout_open(const dpm_storage_t *s, uint32_t base, uint32_t size, uint32_t unit,
                             const dpm_storage_layout_t *lay, const char **why)
{
    uint8_t want[DPM_LAYOUT_RECORD_BYTES], got[DPM_LAYOUT_RECORD_BYTES];
    record_of(size, unit, lay, want);
    if (dpm_persist_read(s, base, got, sizeof(got)) != DPM_OK) {
        return fail(why, "the storage failed reading the layout record", DPM_ERR_STORAGE);
    }
    if (memcmp(got, want, sizeof(got)) == 0) {
        return DPM_OK; /* laid out for this region: the usual boot */
    }
    if (dpm_get_le32(got) == LAYOUT_MAGIC && dpm_get_le32(got + 28) == dpm_crc32(0, got, 28)) {
        return fail(why,
                    "region_size or sector_size differs from the layout stored in the region "
                    "(it would move the ledger and the outbox): give the values of its first "
                    "use, or erase the region to start over (its reports and spent epsilon "
                    "are lost)",
                    DPM_ERR_PARAM);
    }
    /* No valid record: a new region, or a first init torn while writing the record. Anything
     * else (data in the ledger's or outbox's place) is kept as it is. */
    int blank = 0, record_blank = 0;
    uint32_t rest = lay->outbox_offset + lay->outbox_size - lay->ledger_offset;
    if (dpm_persist_is_erased(s, base + lay->ledger_offset, rest, &blank) != DPM_OK ||
        dpm_persist_is_erased(s, base, lay->record_size, &record_blank) != DPM_OK) {
        return fail(why, "the storage failed reading the region", DPM_ERR_STORAGE);
    }
    if (!blank) {
        return fail(why,
                    "region holds data but no valid layout record (damaged, or laid out by hand: "
                    "a device set up by 0.1.0 keeps its explicit ledger_* and outbox_* regions); "
                    "storage kept untouched: erase the region to start over (its reports and "
                    "spent epsilon are lost)",
                    DPM_ERR_CORRUPT);
    }
    if ((!record_blank && dpm_persist_erase(s, base, lay->record_size) != DPM_OK) ||
        dpm_persist_write(s, base, want, sizeof(want)) != DPM_OK) {
        return fail(why, "the storage failed writing the layout record", DPM_ERR_STORAGE);
    }
    return DPM_OK;
}
