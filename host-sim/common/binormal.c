/* SPDX-License-Identifier: Apache-2.0 */
/* The binormal score model (see binormal.h). */
#include "common/binormal.h"

#include <math.h>
#include <stddef.h>

#include "common/prob.h"

double binormal_mu(double auc)
{
    return sqrt(2.0) * prob_norm_quantile(auc);
}

void binormal_init(binormal_t *m, double auc, const double *threshold)
{
    m->mu = binormal_mu(auc);
    m->t = threshold != NULL ? *threshold : m->mu / 2.0;
    m->fpr = prob_norm_sf(m->t);
    m->tpr = prob_norm_sf(m->t - m->mu);
}
