/* SPDX-License-Identifier: Apache-2.0 */
/* ε in Q16.16: parsing and formatting without floating point. */
#include "dpm_internal.h"

#include "dpm/types.h"

static dpm_status_t eps_check(uint64_t q16, dpm_eps_t *out)
{
    if (q16 == 0 || q16 > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    *out = (dpm_eps_t)q16;
    return DPM_OK;
}

dpm_status_t dpm_eps_from_decimal(const char *text, dpm_eps_t *out)
{
    if (text == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    uint64_t whole = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10u + (uint64_t)(*p - '0');
        if (whole > DPM_EPS_MAX) {
            return DPM_ERR_PARAM;
        }
    }
    int int_digits = (int)(p - text);
    /* Fraction: keep up to 18 digits as num / 10^k. Ignoring later digits can only round
     * further down, toward less privacy loss. */
    uint64_t frac_num = 0;
    uint64_t frac_den = 1;
    int frac_digits = 0;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, frac_digits++) {
            if (frac_digits < 18) {
                frac_num = frac_num * 10u + (uint64_t)(*p - '0');
                frac_den *= 10u;
            }
        }
        if (frac_digits == 0) {
            return DPM_ERR_PARAM;
        }
    }
    if (*p != '\0' || int_digits + frac_digits == 0) {
        return DPM_ERR_PARAM;
    }
    /* floor(frac * 2^16): frac_num < 10^18 < 2^60, so split to stay within 64 bits. */
    uint64_t r = frac_num; /* frac_num < frac_den */
    uint64_t frac_q16 = 0;
    for (int bit = 0; bit < DPM_EPS_FRAC_BITS; bit++) {
        r <<= 1; /* r < frac_den <= 10^18 < 2^63: no overflow */
        frac_q16 <<= 1;
        if (r >= frac_den) {
            r -= frac_den;
            frac_q16 |= 1u;
        }
    }
    return eps_check((whole << DPM_EPS_FRAC_BITS) + frac_q16, out);
}

dpm_status_t dpm_eps_from_ratio(uint32_t num, uint32_t den, dpm_eps_t *out)
{
    if (out == NULL || den == 0) {
        return DPM_ERR_PARAM;
    }
    return eps_check(((uint64_t)num << DPM_EPS_FRAC_BITS) / den, out);
}

dpm_status_t dpm_eps_format(dpm_eps_t eps, char *buf, uint32_t cap)
{
    if (buf == NULL) {
        return DPM_ERR_PARAM;
    }
    /* micro-units, rounded up so the text never understates what was spent */
    uint64_t micro = ((uint64_t)eps * 1000000u + (DPM_EPS_ONE - 1u)) >> DPM_EPS_FRAC_BITS;
    char tmp[24];
    int n = 0;
    uint64_t whole = micro / 1000000u;
    uint32_t frac = (uint32_t)(micro % 1000000u);
    for (int i = 0; i < 6; i++, frac /= 10u) {
        tmp[n++] = (char)('0' + frac % 10u);
    }
    tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + whole % 10u);
        whole /= 10u;
    } while (whole != 0);
    if ((uint32_t)n + 1u > cap) {
        return DPM_ERR_BUFFER;
    }
    for (int i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    buf[n] = '\0';
    return DPM_OK;
}
