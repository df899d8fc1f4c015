/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP tasks of `dpm-collector --role leader|helper` and of dpm-sim's network mode:
 * `[dap_task]` blocks of the campaigns file (campaigns.c skips them; this reads only them),
 * and the aggregators' keys.
 *
 *   [dap_task]
 *   id = 8BY0RzZMzxvA46_8ymhzycOB9krN-QIGYvg_RsByGec   task id: 32 bytes, base64url unpadded
 *   vdaf = sumvec            count | sum | sumvec | histogram (Prio3, two shares)
 *   length = 24              sumvec, histogram: entries
 *   max = 1                  sum, sumvec: the largest value of one entry
 *   chunk = 4                sumvec, histogram: the proof's chunk length (default: the SDK's)
 *   noise = laplace          each aggregator's central noise: laplace (default) or gaussian
 *   eps = 1                  laplace: central ε per report: each aggregator's discrete Laplace
 *                            noise alone gives it (Q16.16, rounded down: less privacy loss)
 *   sensitivity = 24         laplace: L1 change of the sums when one device's report is
 *                            replaced (default and upper bound: the VDAF's bound: count 1, sum
 *                            max, sumvec length x max, histogram 2)
 *   rho = 0.5                gaussian: zCDP per report that each aggregator's noise alone gives
 *                            (rounded down to a multiple of 2^-32); sigma2 = ceil(l2_sensitivity_sq
 *                            / (2 rho)), at most 2^30 (dpm_dgauss)
 *   delta = 1e-9             gaussian, at most 1e-5: the δ at which rho is stated as the (ε, δ)-DP
 * that devices charge: ε = rho' + 2 sqrt(rho' ln(1/δ)) (Bun and Steinke 2016, Prop. 1.3), rho' =
 * l2_sensitivity_sq / (2 sigma2) <= rho, rounded up to Q16.16; no eps key then l2_sensitivity_sq =
 * 24   gaussian: the squared L2 change of the sums when one device's report is replaced (default
 * and upper bound: count 1, sum max^2, sumvec length x max^2, histogram 2) min_batch_size = 100 no
 * collection below it time_precision = 3600    seconds (default 3600) start = 1767225600 optional
 * task interval: Unix seconds, a multiple of the precision, duration = 2592000       and its length
 * (reports outside it are refused) leader = https://leader.example:8443/dap    the aggregators'
 * base URLs (dpm-collector helper = https://helper.example:8443/dap    serves DAP under /dap)
 *   leader_hpke_config = HEX    each aggregator's HpkeConfig (`dpm-collector dap-keygen`
 *   helper_hpke_config = HEX    prints it), and the collector's: whom the aggregate shares
 *   collector_hpke_config = HEX are sealed to
 *   verify_key = PATH        the aggregators' shared Prio3 verification key: 32 bytes as 64
 *                            hex digits (a secret: both aggregators, nobody else; relative to
 *                            the campaigns file)
 *   task_info = text         optional (default "dpm task")
 *   local_eps = 2            optional, the hybrid (sumvec of roc_hist's groups x 2 x bins
 *   local_bins = 10          counts, with local_bins = bins): each device also flips every
 *                            example's label by randomized response at local_eps before sharding
 *                            (the task's label-RR extension): label-DP per example even if both
 *                            aggregators collude. The sums then count the randomized labels:
 *                            dap-collect debiases them (estimate/roc_central.h)
 *
 * Both aggregators read the same blocks, so they agree on every parameter: the task's encoded
 * TaskConfiguration (what each input share is bound to) is built from them here. The draft
 * catches a disagreement only report by report (the input share's associated data: every
 * report hpke_decrypt_error, lost). So the leader also sends its view of the task, the
 * "DPM-Task-Digest" header: SHA-256 over the TaskConfiguration, the three HpkeConfigs, the
 * sensitivity and SHA-256 of the verification key, in hex. A helper whose digest differs
 * answers 400 and commits nothing; the leader keeps the reports, logs the helper's reason and
 * retries, so a misconfiguration is an error an operator fixes, not data lost. (A leader that
 * sends no digest, another implementation, is served as the draft says.)
 *
 * An aggregator's own HPKE key (`--dap-hpke-key FILE`): "config_id = N" and "secret = HEX" (32
 * bytes, the key pair's derivation input; mode 0600), made by `dpm-collector dap-keygen`. */
#ifndef DPM_HOST_AGGREGATOR_DAP_TASKS_H
#define DPM_HOST_AGGREGATOR_DAP_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"
#include "dpm/port_dap.h"

#define DAP_MAX_TASKS 16u
#define DAP_TASK_ID_B64 43u /* base64url of 32 bytes, unpadded */
#define DAP_TASK_DIGEST_HEADER "DPM-Task-Digest"

typedef struct {
    int line; /* of its [dap_task] */
    uint8_t config[DPM_DAP_TASK_CONFIG_MAX];
    size_t config_len;
    char info[DPM_DAP_MAX_TASK_INFO + 1];
    char leader_url[DPM_DAP_MAX_URL + 1], helper_url[DPM_DAP_MAX_URL + 1];
    char id_b64[DAP_TASK_ID_B64 + 1];
    dpm_hpke_config_t collector;
    uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES];
    uint64_t sensitivity; /* laplace: the L1 sensitivity; gaussian: the squared L2 one */
    double rho, delta;    /* gaussian: as given (rho before rounding); laplace: 0 */
    char vdaf[16];        /* count, sum, sumvec or histogram */
    char digest[65];      /* DAP_TASK_DIGEST_HEADER: what both aggregators must agree on, in hex */
    dpm_dap_task_t t;     /* decoded: points into this struct (keep it where it is) */
} dap_task_spec_t;

typedef struct {
    size_t n;
    dap_task_spec_t t[DAP_MAX_TASKS];
} dap_tasks_t;

/* The [dap_task] blocks of a campaigns file's text[0, len) (other blocks are skipped: the
 * campaigns parser reads those); dir: where relative paths start. 0 (n may be 0), or -1 with
 * "line N: ..." in err. *out must not move afterwards (t points into it). */
int dap_tasks_parse(const char *text, size_t len, const char *dir, dap_tasks_t *out, char *err,
                    size_t cap);
int dap_tasks_load(const char *path, dap_tasks_t *out, char *err, size_t cap);

/* A discrete Gaussian task's zCDP: the rho its sigma2 really gives, l2_sensitivity_sq / (2
 * sigma2), at most the rho asked (0 for a Laplace task). */
double dap_task_rho(const dap_task_spec_t *t);

/* The ε of the (ε, δ)-DP that rho-zCDP gives at delta: rho + 2 sqrt(rho ln(1/delta)) (Bun and
 * Steinke 2016, Prop. 1.3). */
double dap_zcdp_eps(double rho, double delta);

/* Its inverse: the rho whose zCDP gives eps at delta, (sqrt(eps + L) - sqrt(L))^2 with
 * L = ln(1/delta). */
double dap_zcdp_rho_for(double eps, double delta);

/* Each aggregator's discrete Gaussian variance for rho-zCDP at squared L2 sensitivity l2sq: rho
 * rounded down to k / 2^32, sigma2 = ceil(l2sq 2^32 / (2 k)), so the noise gives at most rho.
 * 0, or -1 when k or sigma2 is 0 or sigma2 is above DPM_DGAUSS_MAX_SIGMA2 (the SDK's sampler). */
int dap_gauss_sigma2(double rho, uint64_t l2sq, uint64_t *sigma2);

/* What a device is charged for a discrete Gaussian of variance sigma2 at squared L2 sensitivity
 * l2sq: *eps, the (ε, δ)-DP at delta of the rho the noise really gives (l2sq / (2 sigma2)), and
 * the return, that ε rounded up to Q16.16 (a larger charge; the caller checks its range). */
double dap_gauss_charge_q16(uint64_t l2sq, uint64_t sigma2, double delta, double *eps);

/* The discrete Gaussian of a task asked by its ε (eps_q16, Q16.16) at delta, for squared L2
 * sensitivity l2sq (dpm-sim's campaigns and its planner; a [dap_task] gives rho instead): rho a
 * hair below dap_zcdp_rho_for's, so that rounding never charges more than ε; *sigma2, each
 * aggregator's variance (dap_gauss_sigma2); *charged, the Q16.16 ε a device is charged
 * (dap_gauss_charge_q16, at most eps_q16). 0, or -1 with why (a static string). */
int dap_gauss_for_eps(uint32_t eps_q16, double delta, uint64_t l2sq, uint64_t *sigma2,
                      uint32_t *charged, const char **why);

/* "{base}/tasks/{id}/{what}" into out (base: an aggregator URL, a trailing '/' or not), the
 * draft's resource URL of task t. */
void dap_task_url(const dap_task_spec_t *t, const char *base, const char *what, char *out,
                  size_t cap);

/* The task whose id is the base64url b64[0, n), or NULL. */
const dap_task_spec_t *dap_tasks_find(const dap_tasks_t *ts, const char *b64, size_t n);

/* An aggregator's HPKE key file -> *key and its public HpkeConfig. 0, or -1 with err. */
int dap_key_load(const char *path, dpm_dap_hpke_key_t *key, dpm_hpke_config_t *cfg, char *err,
                 size_t cap);

/* 1 if two HpkeConfigs announce the same key the same way (id, KEM, KDF, AEAD, public key):
 * a task's config against the one of the key file this process holds. */
int dap_hpke_config_same(const dpm_hpke_config_t *a, const dpm_hpke_config_t *b);

/* `dpm-collector dap-keygen --config-id N --out FILE`: a new key (32 bytes of the system's
 * CSPRNG) written to FILE (created 0600, never overwritten), its HpkeConfig printed in hex. */
int dap_keygen_main(int argc, char **argv);

/* RFC 4648 base64url without padding: encode n bytes (out: 4n/3 + 2 bytes room, NUL added);
 * decode exactly want bytes from s[0, len) (0, or -1: another length, a non-alphabet
 * character, non-zero trailing bits). */
void dap_b64url_encode(const uint8_t *in, size_t n, char *out);
int dap_b64url_decode(const char *s, size_t len, uint8_t *out, size_t want);

#endif /* DPM_HOST_AGGREGATOR_DAP_TASKS_H */
