/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC campaign-file keys (fedauc_phase.h), the same names and defaults as dpm-sim's
 * scenario files (host-sim/sim/devices/mech_fedauc.c): the collector then builds the campaign with
 * dpm_mech_init like every other, so its fingerprint is the devices'. */
#include "mech/base/fedauc_phase.h"

#include <string.h>

#define DEFAULT_SCORE_BITS 16u
#define DEFAULT_P_SHARE 32768u /* 0.5 in Q0.16: the paper's α */

int coll_fedauc_is(uint32_t mechanism)
{
    return mechanism == DPM_MECH_ID_FEDAUC_RR || mechanism == DPM_MECH_ID_FEDAUC_LAP;
}

static int parse_uint(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t x = 0;
    size_t n = strlen(v);
    if (n == 0 || n > 10) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            return -1;
        }
        x = x * 10u + (uint64_t)(v[i] - '0');
    }
    if (x < lo || x > hi) {
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

int coll_fedauc_key(const char *key, const char *v, dpm_campaign_t *c, coll_fedauc_opts_t *o,
                    int *bad, const char **expect)
{
    static const char *const variants[] = {"local", "global", "orthogonal", "adaptive"};
    *bad = 0;
    if (strcmp(key, "variant") == 0) {
        *expect = "local, global, orthogonal or adaptive (fedauc_lap)";
        *bad = 1;
        for (uint32_t i = 0; i < 4u; i++) {
            if (strcmp(v, variants[i]) == 0) {
                c->fedauc_variant = i + 1u; /* DPM_FEDAUC_LOCAL .. DPM_FEDAUC_ADAPTIVE */
                *bad = 0;
            }
        }
    } else if (strcmp(key, "p_share") == 0) {
        dpm_eps_t q = 0;
        *expect = "a decimal in (0, 1): the share of eps on localP (fedauc_lap)";
        *bad = dpm_eps_from_decimal(v, &q) != DPM_OK || q == 0 || q >= 65536u;
        c->fedauc_p_share_q16 = q;
    } else if (strcmp(key, "score_bits") == 0) {
        *expect = "an integer 1 .. 31";
        *bad = parse_uint(v, 1, 31, &c->fedauc_score_bits);
    } else if (strcmp(key, "upload_seconds") == 0) {
        *expect = "an integer >= 1 (at most period_seconds)";
        *bad = parse_uint(v, 1, UINT32_MAX, &o->upload_seconds);
    } else if (strcmp(key, "upload_count") == 0) {
        *expect = "an integer >= 1";
        *bad = parse_uint(v, 1, UINT32_MAX, &o->upload_count);
    } else if (strcmp(key, "min_uploaders") == 0) {
        *expect = "an integer >= 1 (1: ranks for any pool, also one device's own)";
        *bad = parse_uint(v, 1, UINT32_MAX, &o->min_uploaders);
    } else {
        return 0;
    }
    return strcmp(key, "variant") == 0          ? 1
           : strcmp(key, "p_share") == 0        ? 2
           : strcmp(key, "score_bits") == 0     ? 3
           : strcmp(key, "upload_seconds") == 0 ? COLL_FEDAUC_KEY_UPLOAD_SECONDS
           : strcmp(key, "upload_count") == 0   ? 5
                                                : COLL_FEDAUC_KEY_MIN_UPLOADERS;
}

const char *coll_fedauc_finish(dpm_campaign_t *c, coll_fedauc_opts_t *o, const int *have)
{
    int fa = coll_fedauc_is((uint32_t)c->mechanism);
    int lap = c->mechanism == DPM_MECH_ID_FEDAUC_LAP;
    int have_upload_seconds = have[COLL_FEDAUC_KEY_UPLOAD_SECONDS];
    if (!fa) {
        return c->fedauc_variant || c->fedauc_p_share_q16 || c->fedauc_score_bits ||
                       o->upload_count || have_upload_seconds || have[COLL_FEDAUC_KEY_MIN_UPLOADERS]
                   ? "variant, p_share, score_bits, upload_seconds, upload_count and "
                     "min_uploaders are for fedauc_rr / fedauc_lap"
                   : NULL;
    }
    if (!have[COLL_FEDAUC_KEY_MIN_UPLOADERS]) {
        /* a phase closing at fewer uploads than the default (campaign files made before
         * min_uploaders) releases ranks at its count */
        o->min_uploaders = o->upload_count != 0 && o->upload_count < COLL_FEDAUC_MIN_UPLOADERS
                               ? o->upload_count
                               : COLL_FEDAUC_MIN_UPLOADERS;
    }
    if (o->upload_count != 0 && o->upload_count < o->min_uploaders) {
        return "upload_count is below min_uploaders: the phase would close with too few "
               "uploaders to release ranks (lower min_uploaders, or raise upload_count)";
    }
    if (c->groups != 0 || c->nmetrics != 0) {
        return "fedauc takes no groups or metrics";
    }
    if (!lap && (c->fedauc_variant != 0 || c->fedauc_p_share_q16 != 0)) {
        return "fedauc_rr takes no variant or p_share";
    }
    if (lap && c->fedauc_variant == 0) {
        c->fedauc_variant = DPM_FEDAUC_LOCAL;
    }
    if (lap && c->fedauc_variant == DPM_FEDAUC_ADAPTIVE && c->fedauc_p_share_q16 != 0) {
        return "variant adaptive takes no p_share (each device splits eps)";
    }
    if (lap && c->fedauc_variant != DPM_FEDAUC_ADAPTIVE && c->fedauc_p_share_q16 == 0) {
        c->fedauc_p_share_q16 = DEFAULT_P_SHARE;
    }
    if (c->fedauc_score_bits == 0) {
        c->fedauc_score_bits = DEFAULT_SCORE_BITS;
    }
    if (!have_upload_seconds) {
        o->upload_seconds = c->period_seconds / 2u > 0 ? c->period_seconds / 2u : 1u;
    }
    if (o->upload_seconds > c->period_seconds) {
        return "upload_seconds is longer than the period";
    }
    return NULL;
}
