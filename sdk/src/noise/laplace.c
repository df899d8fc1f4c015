/* The fixed-point Laplace mechanism: exact discrete Laplace noise on the value's grid. */
#include "dpm_internal.h"

#include "dpm/noise.h"

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* t = sensitivity / (eps / 2^16) = (sensitivity * 2^16) / eps grid units. With sensitivity
 * <= 2^40 the numerator is <= 2^56 = DPM_DLAP_MAX_NUM, so every valid pair is accepted by
 * dpm_dlap_add. Reducing once here keeps the per-sample uniform draw as short as possible. */
dpm_status_t dpm_laplace_init(dpm_laplace_t *m, uint64_t sensitivity, dpm_eps_t eps)
{
    if (m == NULL || sensitivity == 0 || sensitivity > DPM_LAPLACE_MAX_SENSITIVITY || eps == 0 ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    uint64_t num = sensitivity << DPM_EPS_FRAC_BITS;
    uint64_t g = gcd_u64(num, eps);
    m->scale_num = num / g;
    m->scale_den = eps / g;
    m->sensitivity = sensitivity;
    m->eps = eps;
    return DPM_OK;
}

dpm_status_t dpm_laplace_add(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value, int64_t *out)
{
    if (m == NULL) {
        return DPM_ERR_PARAM;
    }
    return dpm_dlap_add(r, m->scale_num, m->scale_den, value, out);
}
