/* Buffered random bits in front of the port RNG. */
#include "dpm_internal.h"

#include "dpm/noise.h"

dpm_status_t dpm_rand_init(dpm_rand_t *r, const dpm_rng_t *rng)
{
    if (r == NULL || rng == NULL || rng->fill == NULL) {
        return DPM_ERR_PARAM;
    }
    memset(r, 0, sizeof(*r));
    r->rng = rng;
    r->pos = DPM_RAND_BUF_BYTES; /* empty: the first draw refills */
    r->error = DPM_OK;
    return DPM_OK;
}

/* Next 64-bit word of the buffer (little-endian), refilling it from the port in bulk. */
static dpm_status_t next_word(dpm_rand_t *r, uint64_t *w)
{
    if (r->pos + 8u > DPM_RAND_BUF_BYTES) {
        r->rng_calls++;
        if (r->rng->fill(r->rng->ctx, r->buf, DPM_RAND_BUF_BYTES) != 0) {
            r->error = DPM_ERR_RNG;
            return DPM_ERR_RNG;
        }
        r->pos = 0;
    }
    const uint8_t *p = r->buf + r->pos;
    *w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
         (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    r->pos += 8u;
    return DPM_OK;
}

dpm_status_t dpm_rand_bits(dpm_rand_t *r, uint32_t n, uint64_t *out)
{
    if (r == NULL || out == NULL || n == 0 || n > 64) {
        return DPM_ERR_PARAM;
    }
    if (r->error != DPM_OK) {
        return r->error;
    }
    uint64_t value;
    if (r->nbits >= n) {
        value = n == 64 ? r->bits : r->bits & ((UINT64_C(1) << n) - 1u);
        r->bits = n == 64 ? 0 : r->bits >> n;
        r->nbits -= n;
    } else {
        /* take what the reservoir has, the rest from a fresh word */
        uint64_t w;
        dpm_status_t st = next_word(r, &w);
        if (st != DPM_OK) {
            return st;
        }
        uint32_t have = r->nbits;
        uint32_t need = n - have;
        uint64_t low = r->bits; /* have < n <= 64 bits, so have <= 63 */
        uint64_t high = need == 64 ? w : w & ((UINT64_C(1) << need) - 1u);
        value = low | (high << have);
        r->bits = need == 64 ? 0 : w >> need;
        r->nbits = 64u - need;
    }
    r->bits_used += n;
    *out = value;
    return DPM_OK;
}
