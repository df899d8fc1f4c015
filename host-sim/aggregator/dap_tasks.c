/* SPDX-License-Identifier: Apache-2.0 */
/* The [dap_task] blocks of the campaigns file and the aggregators' key files (dap_tasks.h). */
#include "aggregator/dap_tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/kv.h"
#include "dpm/expert/noise.h"
#include "mbedtls/sha256.h"

#define LINE_MAX_CHARS 1024

static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void dap_b64url_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        size_t k = n - i < 3 ? n - i : 3;
        if (k > 1) {
            v |= (uint32_t)in[i + 1] << 8;
        }
        if (k > 2) {
            v |= in[i + 2];
        }
        for (size_t j = 0; j <= k; j++) {
            out[o++] = kB64[(v >> (18 - 6 * j)) & 63u];
        }
    }
    out[o] = '\0';
}

int dap_b64url_decode(const char *s, size_t len, uint8_t *out, size_t want)
{
    if (len != (want * 4 + 2) / 3) {
        return -1;
    }
    uint32_t acc = 0;
    unsigned bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        const char *p = s[i] != '\0' ? strchr(kB64, s[i]) : NULL;
        if (p == NULL) {
            return -1;
        }
        acc = (acc << 6) | (uint32_t)(p - kB64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    /* the unused low bits of the last character must be zero (one spelling per id) */
    return (acc & ((1u << bits) - 1u)) == 0 ? 0 : -1;
}

/* Exactly n bytes of hex from s. 0 or -1. */
static int hex_decode(const char *s, uint8_t *out, size_t n)
{
    if (strlen(s) != 2 * n) {
        return -1;
    }
    for (size_t i = 0; i < 2 * n; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0) {
            return -1;
        }
        out[i / 2] = (uint8_t)(i % 2 == 0 ? v << 4 : out[i / 2] | v);
    }
    return 0;
}

static void hex_encode(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(out + 2 * i, 3, "%02x", in[i]);
    }
}

static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (*v < '0' || *v > '9' || (v[0] == '0' && v[1] != '\0')) {
        return -1;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < lo || x > hi) {
        return -1;
    }
    *out = x;
    return 0;
}

/* A file's first line of 64 hex digits (32 bytes), e.g. the verification key. */
static int read_hex_file(const char *path, uint8_t *out, size_t n, char *err, size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    if (kv_load_file(path, 4096, "4 KiB", &text, &len, err, cap) != 0) {
        return -1;
    }
    char buf[130];
    size_t k = strcspn(text, "\r\n");
    int rc = -1;
    if (k < sizeof(buf)) {
        memcpy(buf, text, k);
        buf[k] = '\0';
        rc = hex_decode(buf, out, n);
    }
    memset(text, 0, len);
    free(text);
    if (rc != 0) {
        host_fail(err, cap,
                  "%s: want %zu hex digits on its first line (e.g. `openssl rand -hex %zu`)", path,
                  2 * n, n);
    }
    return rc;
}

typedef struct {
    dap_task_spec_t *s;
    int line;
    char vdaf[16];
    uint64_t length, max, chunk, min_batch, precision, start, duration, sensitivity, local_bins;
    int have_eps, have_start, have_duration, gauss, have_rho, have_delta, have_l2sq;
    double rho, delta;
    uint64_t l2sq;
    dpm_dap_task_t t; /* the fields being filled (encoded at the end) */
    dpm_hpke_config_t hpke[2];
    int have_hpke[3], have_verify;
    char why[160];
} block_t;

static const char *const kKeys[] = {"id",
                                    "vdaf",
                                    "length",
                                    "max",
                                    "chunk",
                                    "noise",
                                    "eps",
                                    "sensitivity",
                                    "rho",
                                    "delta",
                                    "l2_sensitivity_sq",
                                    "min_batch_size",
                                    "time_precision",
                                    "start",
                                    "duration",
                                    "leader",
                                    "helper",
                                    "leader_hpke_config",
                                    "helper_hpke_config",
                                    "collector_hpke_config",
                                    "verify_key",
                                    "task_info",
                                    "local_eps",
                                    "local_bins"};
#define NKEYS (sizeof(kKeys) / sizeof(kKeys[0]))

/* An HpkeConfig in hex; -1 with buf saying what is wanted and what is wrong. */
static int hpke_value(const char *v, dpm_hpke_config_t *cfg, char *buf, size_t cap)
{
    uint8_t raw[256];
    size_t n = strlen(v) / 2;
    const char *reason = "not hex digits";
    if (n > 0 && n <= sizeof(raw) && hex_decode(v, raw, n) == 0) {
        reason = NULL;
        if (dpm_hpke_config_decode(raw, n, cfg, &reason) == DPM_OK) {
            return 0;
        }
    }
    snprintf(buf, cap, "the hex of an HpkeConfig, as dpm-collector dap-keygen prints it: %s",
             reason != NULL ? reason : "the SDK refuses it");
    return -1;
}

static int set_key(block_t *b, const char *dir, const char *key, const char *v, int line, char *err,
                   size_t cap)
{
    dap_task_spec_t *s = b->s;
    const char *why = NULL;
    int bad = 0;
    /* The keys that take one integer in a range: one row each, one parse for all. */
    const struct {
        const char *key;
        uint64_t *dst, lo, hi;
        int *have; /* set when the key is given (NULL: no flag) */
        const char *why;
    } ints[] = {
        {"length", &b->length, 1, 1u << 20, NULL, "an integer 1 .. 1048576"},
        {"max", &b->max, 1, UINT32_MAX, NULL, "an integer 1 .. 4294967295"},
        {"chunk", &b->chunk, 1, 1u << 20, NULL, "an integer 1 .. 1048576"},
        {"l2_sensitivity_sq", &b->l2sq, 1, UINT64_MAX, &b->have_l2sq,
         "an integer >= 1 (at most the VDAF's bound)"},
        {"sensitivity", &b->sensitivity, 1, UINT32_MAX, NULL,
         "an integer >= 1 (at most the VDAF's bound)"},
        {"min_batch_size", &b->min_batch, 1, UINT32_MAX, NULL, "an integer >= 1"},
        {"time_precision", &b->precision, 1, 1u << 30, NULL, "seconds, an integer >= 1"},
        {"start", &b->start, 0, (uint64_t)INT64_MAX, &b->have_start, "Unix seconds"},
        {"duration", &b->duration, 1, (uint64_t)INT64_MAX, &b->have_duration,
         "seconds, an integer >= 1"},
        {"local_bins", &b->local_bins, 1, 65535, NULL,
         "an integer 1 .. 65535: the score bins of the sumvec's groups x 2 x bins"},
    };
    size_t ni = 0;
    while (ni < sizeof(ints) / sizeof(ints[0]) && strcmp(key, ints[ni].key) != 0) {
        ni++;
    }
    if (strcmp(key, "id") == 0) {
        bad = strlen(v) != DAP_TASK_ID_B64 ||
              dap_b64url_decode(v, DAP_TASK_ID_B64, s->t.id, DPM_DAP_TASK_ID_BYTES) != 0;
        why = "32 bytes in unpadded base64url (43 characters)";
        if (!bad) {
            memcpy(s->id_b64, v, DAP_TASK_ID_B64 + 1);
        }
    } else if (strcmp(key, "vdaf") == 0) {
        bad = strcmp(v, "count") != 0 && strcmp(v, "sum") != 0 && strcmp(v, "sumvec") != 0 &&
              strcmp(v, "histogram") != 0;
        why = "count, sum, sumvec or histogram";
        snprintf(b->vdaf, sizeof(b->vdaf), "%s", v);
    } else if (strcmp(key, "eps") == 0) {
        bad = dpm_eps_from_decimal(v, &b->t.central_eps) != DPM_OK ||
              b->t.central_eps < DPM_EPS_FLOOR_Q16;
        why = "a plain decimal in [0.0039, DPM_EPS_MAX], e.g. 1 or 0.5";
        b->have_eps = 1;
    } else if (strcmp(key, "local_eps") == 0) {
        bad = dpm_eps_from_decimal(v, &b->t.local_eps) != DPM_OK || b->t.local_eps == 0;
        why = "a plain decimal in (0, DPM_EPS_MAX], e.g. 2: each example's label RR on the device";
    } else if (strcmp(key, "noise") == 0) {
        bad = strcmp(v, "laplace") != 0 && strcmp(v, "gaussian") != 0;
        why = "laplace or gaussian";
        b->gauss = strcmp(v, "gaussian") == 0;
    } else if (strcmp(key, "rho") == 0 || strcmp(key, "delta") == 0) {
        const int rho = key[0] == 'r';
        char *end = NULL;
        errno = 0;
        double x = strtod(v, &end);
        bad = errno != 0 || end == v || *end != '\0' || !isfinite(x) ||
              (rho ? !(x >= 1e-6 && x <= 64.0) : !(x > 0.0 && x <= 1e-5));
        why = rho ? "a decimal in [1e-6, 64], e.g. 0.5"
                  : "a decimal in (0, 1e-5], e.g. 1e-9: far below one over the devices";
        *(rho ? &b->rho : &b->delta) = x;
        *(rho ? &b->have_rho : &b->have_delta) = 1;
    } else if (ni < sizeof(ints) / sizeof(ints[0])) {
        bad = parse_u64(v, ints[ni].lo, ints[ni].hi, ints[ni].dst);
        why = ints[ni].why;
        if (ints[ni].have != NULL) {
            *ints[ni].have = 1;
        }
    } else if (strcmp(key, "leader") == 0 || strcmp(key, "helper") == 0) {
        char *dst = key[0] == 'l' ? s->leader_url : s->helper_url;
        bad = strncmp(v, "https://", 8) != 0 || strlen(v) > DPM_DAP_MAX_URL || v[8] == '\0';
        why = "an https:// URL of at most 255 characters";
        if (!bad) {
            snprintf(dst, DPM_DAP_MAX_URL + 1, "%s", v);
        }
    } else if (strcmp(key, "leader_hpke_config") == 0 || strcmp(key, "helper_hpke_config") == 0 ||
               strcmp(key, "collector_hpke_config") == 0) {
        int i = key[0] == 'l' ? 0 : key[0] == 'h' ? 1 : 2;
        bad = hpke_value(v, i < 2 ? &b->hpke[i] : &s->collector, b->why, sizeof(b->why));
        why = b->why;
        b->have_hpke[i] = 1;
    } else if (strcmp(key, "verify_key") == 0) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s%s%s", v[0] == '/' ? "" : dir, v[0] == '/' ? "" : "/", v);
        char ferr[PATH_MAX + 128];
        if (read_hex_file(path, s->verify_key, sizeof(s->verify_key), ferr, sizeof(ferr)) != 0) {
            return host_fail(err, cap, "line %d: verify_key: %s", line, ferr);
        }
        b->have_verify = 1;
    } else if (strcmp(key, "task_info") == 0) {
        bad = v[0] == '\0' || strlen(v) > DPM_DAP_MAX_TASK_INFO;
        why = "1 to 255 characters";
        snprintf(s->info, sizeof(s->info), "%s", v);
    } else {
        char hint[64];
        return host_fail(err, cap, "line %d: unknown key '%s' in [dap_task]%s", line, key,
                         kv_suggest(key, kKeys, (int)NKEYS, hint, sizeof(hint)));
    }
    if (bad) {
        return host_fail(err, cap, "line %d: bad %s '%s' (want %s)%s", line, key, v, why,
                         kv_trailing_comma(v));
    }
    return 0;
}

/* bits of the largest SumVec entry (what the proof checks each entry against) */
static uint32_t bits_of(uint64_t max)
{
    uint32_t b = 0;
    while (b < 64 && (max >> b) != 0) {
        b++;
    }
    return b;
}

/* What both aggregators must agree on (dap_tasks.h, DPM-Task-Digest). */
static int task_digest(dap_task_spec_t *s)
{
    static const char label[] = "dpm-task-digest-v1";
    uint8_t vk[32], d[32], enc[3][64], sens[8];
    size_t n[3] = {0, 0, 0};
    const dpm_hpke_config_t *cfg[3] = {&s->t.leader_hpke, &s->t.helper_hpke, &s->collector};
    for (int i = 0; i < 3; i++) {
        if (dpm_hpke_config_encode(cfg[i], enc[i], sizeof(enc[i]), &n[i]) != DPM_OK) {
            return -1;
        }
    }
    for (int i = 0; i < 8; i++) {
        sens[i] = (uint8_t)(s->sensitivity >> (56 - 8 * i));
    }
    mbedtls_sha256_context c;
    mbedtls_sha256_init(&c);
    int rc = mbedtls_sha256(s->verify_key, sizeof(s->verify_key), vk, 0) != 0 ||
             mbedtls_sha256_starts(&c, 0) != 0 ||
             mbedtls_sha256_update(&c, (const uint8_t *)label, sizeof(label) - 1) != 0 ||
             mbedtls_sha256_update(&c, s->config, s->config_len) != 0 ||
             mbedtls_sha256_update(&c, enc[0], n[0]) != 0 ||
             mbedtls_sha256_update(&c, enc[1], n[1]) != 0 ||
             mbedtls_sha256_update(&c, enc[2], n[2]) != 0 ||
             mbedtls_sha256_update(&c, sens, sizeof(sens)) != 0 ||
             mbedtls_sha256_update(&c, vk, sizeof(vk)) != 0 || mbedtls_sha256_finish(&c, d) != 0;
    mbedtls_sha256_free(&c);
    memset(vk, 0, sizeof(vk));
    hex_encode(d, sizeof(d), s->digest);
    return rc ? -1 : 0;
}

double dap_task_rho(const dap_task_spec_t *t)
{
    return t->t.dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN
               ? (double)t->sensitivity / (2.0 * (double)t->t.central_sigma2)
               : 0.0;
}

double dap_zcdp_rho_for(double eps, double delta)
{
    const double l = log(1.0 / delta), r = sqrt(eps + l) - sqrt(l);
    return r * r;
}

int dap_gauss_sigma2(double rho, uint64_t l2sq, uint64_t *sigma2)
{
    const double kd = floor(rho * 4294967296.0);
    if (!(kd >= 1.0 && kd < 18446744073709551616.0)) {
        return -1;
    }
    const uint64_t k = (uint64_t)kd;
    const unsigned __int128 num = (unsigned __int128)l2sq << 32, den = (unsigned __int128)2u * k;
    const unsigned __int128 s = (num + den - 1u) / den;
    if (s == 0 || s > DPM_DGAUSS_MAX_SIGMA2) {
        return -1;
    }
    *sigma2 = (uint64_t)s;
    return 0;
}

double dap_zcdp_eps(double rho, double delta)
{
    return rho + 2.0 * sqrt(rho * log(1.0 / delta));
}

double dap_gauss_charge_q16(uint64_t l2sq, uint64_t sigma2, double delta, double *eps)
{
    *eps = dap_zcdp_eps((double)l2sq / (2.0 * (double)sigma2), delta);
    return ceil(*eps * 65536.0 * (1.0 + 1e-12));
}

int dap_gauss_for_eps(uint32_t eps_q16, double delta, uint64_t l2sq, uint64_t *sigma2,
                      uint32_t *charged, const char **why)
{
    const double rho = dap_zcdp_rho_for((double)eps_q16 / 65536.0, delta) * (1.0 - 1e-9);
    if (dap_gauss_sigma2(rho, l2sq, sigma2) != 0) {
        *why = "noise = gaussian: this eps needs sigma2 above 2^30 (the SDK's largest): raise eps "
               "or delta";
        return -1;
    }
    double eps = 0.0;
    const double q = dap_gauss_charge_q16(l2sq, *sigma2, delta, &eps);
    if (!(q >= 1.0 && q <= (double)eps_q16)) {
        *why = "noise = gaussian: the eps the noise gives does not round to at most the eps asked";
        return -1;
    }
    *charged = (uint32_t)q;
    return 0;
}

/* The central noise's parameters into b->t (and the spec's sensitivity for gaussian): laplace
 * as given; gaussian from rho, delta and the squared L2 sensitivity, every rounding toward
 * more noise or a larger charged ε. -1 with err for a key of the other mechanism or
 * parameters the sampler cannot serve. */
static int central_noise(block_t *b, int vec, int sum, int hist, char *err, size_t cap)
{
    dap_task_spec_t *s = b->s;
    dpm_dap_task_t *t = &b->t;
    if (!b->gauss) {
        if (b->have_rho || b->have_delta || b->have_l2sq) {
            return host_fail(err, cap,
                             "[dap_task] at line %d: rho, delta and l2_sensitivity_sq are for "
                             "noise = gaussian (this task's noise is laplace: give eps)",
                             b->line);
        }
        t->dp_mechanism = DPM_DAP_DP_DISCRETE_LAPLACE;
        t->central_sigma2 = 0;
        return 0;
    }
    if (b->have_eps || b->sensitivity != 0 || !b->have_rho || !b->have_delta) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: noise = gaussian takes rho and delta (and "
                         "optionally l2_sensitivity_sq), not eps or sensitivity: the ε devices "
                         "charge is computed from rho and delta",
                         b->line);
    }
    const unsigned __int128 m = b->max;
    const unsigned __int128 bound = vec    ? (unsigned __int128)b->length * m * m
                                    : sum  ? m * m
                                    : hist ? 2u
                                           : 1u;
    if (b->have_l2sq && (unsigned __int128)b->l2sq > bound) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: l2_sensitivity_sq %llu is above the VDAF's bound "
                         "(count 1, sum max^2, sumvec length x max^2, histogram 2)",
                         b->line, (unsigned long long)b->l2sq);
    }
    const unsigned __int128 l2sq = b->have_l2sq ? (unsigned __int128)b->l2sq : bound;
    uint64_t sigma2 = 0; /* rho >= 1e-6: k >= 4294 */
    if (l2sq > UINT64_MAX || dap_gauss_sigma2(b->rho, (uint64_t)l2sq, &sigma2) != 0) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: sigma2 = l2_sensitivity_sq / (2 rho) is above "
                         "2^30, the largest the SDK's sampler draws: raise rho or give a smaller "
                         "l2_sensitivity_sq (a mechanism that bounds its devices further)",
                         b->line);
    }
    t->dp_mechanism = DPM_DAP_DP_DISCRETE_GAUSSIAN;
    t->central_sigma2 = sigma2;
    s->sensitivity = (uint64_t)l2sq;
    s->rho = b->rho;
    s->delta = b->delta;
    /* the rho the noise really gives, then its ε at delta, rounded up (a larger charge) */
    double eps = 0.0;
    const double q = dap_gauss_charge_q16((uint64_t)l2sq, sigma2, b->delta, &eps);
    if (q < (double)DPM_EPS_FLOOR_Q16) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: rho %g at delta %g is eps %.6f, below the "
                         "smallest a device charges (2^-8): raise rho (the noise is more than "
                         "any campaign needs)",
                         b->line, b->rho, b->delta, eps);
    }
    if (!(q <= (double)DPM_EPS_MAX_Q16)) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: rho %g at delta %g is eps %.3f, above the "
                         "largest a device charges (DPM_EPS_MAX): lower rho or raise delta",
                         b->line, b->rho, b->delta, eps);
    }
    t->central_eps = (dpm_eps_t)q;
    return 0;
}

static int finish(block_t *b, dap_tasks_t *out, char *err, size_t cap)
{
    dap_task_spec_t *s = b->s;
    static const char *const required[] = {"id",
                                           "vdaf",
                                           "eps",
                                           "min_batch_size",
                                           "leader",
                                           "helper",
                                           "leader_hpke_config",
                                           "helper_hpke_config",
                                           "collector_hpke_config",
                                           "verify_key"};
    if (!b->gauss && !b->have_eps && (b->have_rho || b->have_delta || b->have_l2sq)) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: rho, delta and l2_sensitivity_sq need noise = "
                         "gaussian (or give eps for the default, laplace)",
                         b->line);
    }
    int have[] = {s->id_b64[0] != '\0', b->vdaf[0] != '\0',       b->have_eps || b->gauss,
                  b->min_batch != 0,    s->leader_url[0] != '\0', s->helper_url[0] != '\0',
                  b->have_hpke[0],      b->have_hpke[1],          b->have_hpke[2],
                  b->have_verify};
    for (size_t i = 0; i < sizeof(have) / sizeof(have[0]); i++) {
        if (!have[i]) {
            return host_fail(err, cap, "[dap_task] at line %d: %s is required", b->line,
                             required[i]);
        }
    }
    for (size_t i = 0; i < out->n; i++) {
        if (memcmp(out->t[i].t.id, s->t.id, DPM_DAP_TASK_ID_BYTES) == 0) {
            return host_fail(err, cap, "[dap_task] at line %d: id %s is also the task at line %d",
                             b->line, s->id_b64, out->t[i].line);
        }
    }
    dpm_dap_task_t *t = &b->t;
    memcpy(t->id, s->t.id, sizeof(t->id));
    const int vec = strcmp(b->vdaf, "sumvec") == 0, hist = strcmp(b->vdaf, "histogram") == 0;
    const int sum = strcmp(b->vdaf, "sum") == 0;
    if ((vec || hist) && b->length == 0) {
        return host_fail(err, cap, "[dap_task] at line %d: vdaf = %s needs length", b->line,
                         b->vdaf);
    }
    if ((vec || sum) && b->max == 0) {
        return host_fail(err, cap, "[dap_task] at line %d: vdaf = %s needs max", b->line, b->vdaf);
    }
    uint64_t chunk = b->chunk;
    if (chunk == 0 && (vec || hist)) { /* the draft's advice: about sqrt(length x bits) */
        chunk = (uint64_t)llround(sqrt((double)b->length * (vec ? bits_of(b->max) : 1u)));
        chunk = chunk == 0 ? 1 : chunk;
    }
    dpm_status_t st =
        vec    ? dpm_prio3_sumvec_init(&t->vdaf, 2, (uint32_t)b->length, b->max, (uint32_t)chunk)
        : hist ? dpm_prio3_histogram_init(&t->vdaf, 2, (uint32_t)b->length, (uint32_t)chunk)
        : sum  ? dpm_prio3_sum_init(&t->vdaf, 2, b->max)
               : dpm_prio3_count_init(&t->vdaf, 2);
    if (st != DPM_OK) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: the SDK refuses this %s (length, max, chunk: "
                         "length x bits of max must fit the proof)",
                         b->line, b->vdaf);
    }
    /* The largest L1 change of the sums when one device's report is replaced by any other the
     * proof accepts (the replace-one unit of the local-DP mechanisms and of roc_hist_2agg): a
     * count or sum moves by at most max, a vector by length x max, a histogram's one-hot entry
     * by 2 (out of one bucket, into another). A smaller sensitivity may be given (a mechanism
     * that bounds its devices further, e.g. examples per device), never a larger one: that
     * would only add noise, and is a sign of a mistake. */
    uint64_t bound = vec ? b->length * b->max : sum ? b->max : hist ? 2u : 1u;
    if (b->sensitivity > bound) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: sensitivity %llu is above the VDAF's bound %llu "
                         "(one device changes the sums by at most that)",
                         b->line, (unsigned long long)b->sensitivity, (unsigned long long)bound);
    }
    s->sensitivity = b->sensitivity != 0 ? b->sensitivity : bound;
    if (central_noise(b, vec, sum, hist, err, cap) != 0) {
        return -1;
    }
    snprintf(s->vdaf, sizeof(s->vdaf), "%s", b->vdaf);
    if (s->info[0] == '\0') {
        snprintf(s->info, sizeof(s->info), "dpm task");
    }
    t->task_info.p = (const uint8_t *)s->info;
    t->task_info.len = strlen(s->info);
    t->leader_url.p = (const uint8_t *)s->leader_url;
    t->leader_url.len = strlen(s->leader_url);
    t->helper_url.p = (const uint8_t *)s->helper_url;
    t->helper_url.len = strlen(s->helper_url);
    t->time_precision = b->precision != 0 ? b->precision : 3600u;
    t->min_batch_size = b->min_batch;
    t->batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    if (b->have_start != b->have_duration) {
        return host_fail(err, cap, "[dap_task] at line %d: give start and duration together",
                         b->line);
    }
    if (b->have_start) {
        if (b->start % t->time_precision != 0 || b->duration % t->time_precision != 0) {
            return host_fail(err, cap,
                             "[dap_task] at line %d: start and duration must be multiples of "
                             "time_precision (%llu s)",
                             b->line, (unsigned long long)t->time_precision);
        }
        t->has_interval = 1;
        t->interval_start = b->start / t->time_precision;
        t->interval_duration = b->duration / t->time_precision;
    }
    if ((t->local_eps != 0) != (b->local_bins != 0) ||
        (t->local_eps != 0 && (!vec || b->length % (2u * b->local_bins) != 0))) {
        return host_fail(err, cap,
                         "[dap_task] at line %d: local_eps and local_bins go together, on a "
                         "sumvec whose length is groups x 2 x local_bins (the devices' label "
                         "randomized response over roc_hist's per-bin counts)",
                         b->line);
    }
    t->local_bins = (uint32_t)b->local_bins;
    if (dpm_dap_task_config_encode(t, s->config, sizeof(s->config), &s->config_len) != DPM_OK) {
        return host_fail(err, cap, "[dap_task] at line %d: the SDK cannot encode this task",
                         b->line);
    }
    const char *reason = NULL;
    if (dpm_dap_task_decode(t->id, s->config, s->config_len, &b->hpke[0], &b->hpke[1], &s->t,
                            &reason) != DPM_OK) {
        return host_fail(err, cap, "[dap_task] at line %d: the SDK refuses this task: %s", b->line,
                         reason != NULL ? reason : "(no reason given)");
    }
    if (dpm_hpke_config_check(&s->collector, &reason) != DPM_OK) {
        return host_fail(err, cap, "[dap_task] at line %d: collector_hpke_config: %s", b->line,
                         reason != NULL ? reason : "refused");
    }
    if (task_digest(s) != 0) {
        return host_fail(err, cap, "[dap_task] at line %d: SHA-256 failed", b->line);
    }
    out->n++;
    return 0;
}

int dap_tasks_parse(const char *text, size_t len, const char *dir, dap_tasks_t *out, char *err,
                    size_t cap)
{
    memset(out, 0, sizeof(*out));
    block_t b;
    int in_block = 0;
    kv_t kv;
    kv_item_t it;
    char buf[LINE_MAX_CHARS + 1];
    kv_init(&kv, text, len, buf, sizeof(buf));
    int got;
    while ((got = kv_next(&kv, &it)) != KV_END) {
        if (got == KV_SECTION) {
            if (in_block && finish(&b, out, err, cap) != 0) {
                return -1;
            }
            in_block = strcmp(it.kind, "dap_task") == 0;
            if (in_block) {
                if (out->n == DAP_MAX_TASKS) {
                    return host_fail(err, cap, "line %d: more than %u [dap_task] blocks", it.line,
                                     DAP_MAX_TASKS);
                }
                if (it.name[0] != '\0') {
                    return host_fail(err, cap, "line %d: [dap_task] takes no name", it.line);
                }
                memset(&b, 0, sizeof(b));
                b.s = &out->t[out->n];
                memset(b.s, 0, sizeof(*b.s));
                b.line = b.s->line = it.line;
            }
        } else if (got == KV_PAIR && in_block) {
            if (set_key(&b, dir, it.key, it.value, it.line, err, cap) != 0) {
                return -1;
            }
        } /* the campaigns parser reports every other line's mistakes */
    }
    if (in_block && finish(&b, out, err, cap) != 0) {
        return -1;
    }
    return 0;
}

int dap_tasks_load(const char *path, dap_tasks_t *out, char *err, size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    if (kv_load_file(path, 1u << 20, "1 MiB", &text, &len, err, cap) != 0) {
        return -1;
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash != NULL ? (int)(slash - path) : 1,
             slash != NULL ? path : ".");
    if (slash == path) {
        snprintf(dir, sizeof(dir), "/");
    }
    int rc = dap_tasks_parse(text, len, dir, out, err, cap);
    free(text);
    return rc;
}

void dap_task_url(const dap_task_spec_t *t, const char *base, const char *what, char *out,
                  size_t cap)
{
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') {
        n--;
    }
    snprintf(out, cap, "%.*s/tasks/%s/%s", (int)n, base, t->id_b64, what);
}

const dap_task_spec_t *dap_tasks_find(const dap_tasks_t *ts, const char *b64, size_t n)
{
    for (size_t i = 0; ts != NULL && i < ts->n; i++) {
        if (n == DAP_TASK_ID_B64 && memcmp(ts->t[i].id_b64, b64, n) == 0) {
            return &ts->t[i];
        }
    }
    return NULL;
}

/* A key's AEAD by name: AES-128-GCM, the suite DAP makes mandatory (a key file without an
 * `aead` line, as dap-keygen wrote before it had --aead), or ChaCha20-Poly1305 for fleets of
 * devices without AES instructions (a Cortex-M4 seals a 2x24 SumVec report in about a quarter
 * fewer instructions: sdk/docs/prio3-dap.md). Returns 0 and the id, -1 for another name. */
static int aead_by_name(const char *name, uint16_t *aead_id)
{
    if (strcmp(name, "aes128gcm") == 0) {
        *aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    } else if (strcmp(name, "chacha20poly1305") == 0) {
        *aead_id = DPM_HPKE_AEAD_CHACHA20_POLY1305;
    } else {
        return -1;
    }
    return 0;
}

int dap_key_load(const char *path, dpm_dap_hpke_key_t *key, dpm_hpke_config_t *cfg, char *err,
                 size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    if (kv_load_file(path, 4096, "4 KiB", &text, &len, err, cap) != 0) {
        return -1;
    }
    kv_t kv;
    kv_item_t it;
    char buf[256];
    kv_init(&kv, text, len, buf, sizeof(buf));
    uint64_t id = 0;
    uint16_t aead = DPM_HPKE_AEAD_AES_128_GCM;
    uint8_t secret[32];
    int have_id = 0, have_secret = 0, rc = -1, got;
    while ((got = kv_next(&kv, &it)) == KV_PAIR) {
        if (strcmp(it.key, "config_id") == 0 && parse_u64(it.value, 0, 255, &id) == 0) {
            have_id = 1;
        } else if (strcmp(it.key, "secret") == 0 && hex_decode(it.value, secret, 32) == 0) {
            have_secret = 1;
        } else if (strcmp(it.key, "aead") != 0 || aead_by_name(it.value, &aead) != 0) {
            break;
        }
    }
    if (got != KV_END || !have_id || !have_secret) {
        host_fail(err, cap,
                  "%s: want the lines 'config_id = 0..255', 'secret = 64 hex digits' and "
                  "optionally 'aead = aes128gcm' or 'aead = chacha20poly1305' "
                  "(make one with dpm-collector dap-keygen)",
                  path);
    } else if (dpm_dap_hpke_key_derive(secret, sizeof(secret), (uint8_t)id, aead, key, cfg) !=
               DPM_OK) {
        host_fail(err, cap, "%s: the SDK refuses this secret", path);
    } else {
        rc = 0;
    }
    memset(secret, 0, sizeof(secret));
    memset(buf, 0, sizeof(buf));
    memset(text, 0, len);
    free(text);
    return rc;
}

int dap_hpke_config_same(const dpm_hpke_config_t *a, const dpm_hpke_config_t *b)
{
    return a->id == b->id && a->kem_id == b->kem_id && a->kdf_id == b->kdf_id &&
           a->aead_id == b->aead_id && memcmp(a->public_key, b->public_key, DPM_HPKE_NPK) == 0;
}

int dap_keygen_main(int argc, char **argv)
{
    const char *out = NULL;
    const char *aead_name = "aes128gcm";
    uint16_t aead = DPM_HPKE_AEAD_AES_128_GCM;
    uint64_t id = 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--config-id") == 0 && i + 1 < argc &&
                   parse_u64(argv[i + 1], 0, 255, &id) == 0) {
            i++;
        } else if (strcmp(argv[i], "--aead") == 0 && i + 1 < argc &&
                   aead_by_name(argv[i + 1], &aead) == 0) {
            aead_name = argv[++i];
        } else {
            out = NULL;
            break;
        }
    }
    if (out == NULL) {
        fprintf(stderr,
                "usage: dpm-collector dap-keygen --out FILE [--config-id 0..255]\n"
                "                                [--aead aes128gcm|chacha20poly1305]\n"
                "  writes a new HPKE key (mode 0600, never over an existing file) and\n"
                "  prints its HpkeConfig in hex: the task's leader_hpke_config or\n"
                "  helper_hpke_config (or the collector's). The AEAD: aes128gcm (default, the\n"
                "  suite DAP makes mandatory) or chacha20poly1305 (faster on devices without\n"
                "  AES instructions, such as Cortex-M4)\n");
        return 2;
    }
    uint8_t secret[32];
    if (getentropy(secret, sizeof(secret)) != 0) {
        fprintf(stderr, "dpm-collector dap-keygen: the system's random source failed\n");
        return 1;
    }
    dpm_dap_hpke_key_t key;
    dpm_hpke_config_t cfg;
    uint8_t enc[64];
    size_t n = 0;
    char hex[129], shex[65];
    if (dpm_dap_hpke_key_derive(secret, sizeof(secret), (uint8_t)id, aead, &key, &cfg) != DPM_OK ||
        dpm_hpke_config_encode(&cfg, enc, sizeof(enc), &n) != DPM_OK) {
        fprintf(stderr, "dpm-collector dap-keygen: the SDK refuses the key\n");
        return 1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        fprintf(stderr, "dpm-collector dap-keygen: cannot create %s: %s%s\n", out, strerror(errno),
                errno == EEXIST ? " (a key is never overwritten: remove it first)" : "");
        return 1;
    }
    hex_encode(secret, sizeof(secret), shex);
    FILE *f = fdopen(fd, "w");
    int bad = f == NULL || fprintf(f, "config_id = %u\naead = %s\nsecret = %s\n", (unsigned)id,
                                   aead_name, shex) < 0;
    bad |= f != NULL && fclose(f) != 0;
    memset(secret, 0, sizeof(secret));
    memset(shex, 0, sizeof(shex));
    memset(&key, 0, sizeof(key));
    if (bad) {
        fprintf(stderr, "dpm-collector dap-keygen: cannot write %s\n", out);
        unlink(out);
        return 1;
    }
    hex_encode(enc, n, hex);
    printf("%s\n", hex);
    return 0;
}
