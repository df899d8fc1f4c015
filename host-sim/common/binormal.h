/* SPDX-License-Identifier: Apache-2.0 */
/* The binormal score model that the simulator's populations, its ROC model and the paper
 * reproductions share: a negative example's latent score is N(0, 1), a positive's N(mu, 1), so
 * AUC = Phi(mu / sqrt 2). A group with a feature shift (non-IID) gives each device its own mean
 * mu + sd z, z ~ N(0, 1); sums over that shift are trapezoid sums on z = -BINORMAL_MIX_HALF_WIDTH
 * .. +BINORMAL_MIX_HALF_WIDTH in steps of BINORMAL_MIX_STEP, so every sum sees the same z. */
#ifndef DPM_HOST_BINORMAL_H
#define DPM_HOST_BINORMAL_H

#define BINORMAL_MIX_STEP 0.1
#define BINORMAL_MIX_HALF_WIDTH 8.0

typedef struct {
    double mu;  /* the positives' mean, sqrt 2 Phi^-1(AUC) */
    double t;   /* the decision threshold on the latent score */
    double fpr; /* Pr[x > t] for a negative */
    double tpr; /* Pr[x > t] for a positive */
} binormal_t;

/* mu for an AUC in (0, 1) (NaN outside). */
double binormal_mu(double auc);

/* The model of an AUC in (0, 1) at the given threshold, or at mu / 2 (where the two error
 * rates are equal) when threshold is NULL. */
void binormal_init(binormal_t *m, double auc, const double *threshold);

#endif
