/* SPDX-License-Identifier: Apache-2.0 */
/* DAP's messages (see dpm/expert/dap.h), written from the draft's text: TaskConfiguration, Report,
 * PlaintextInputShare, and the app's policy for two-aggregator tasks. */
#include "dpm_internal.h"

#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/vdaf.h"
#include "report/dap_wire.h"
#include "vdaf/vdaf_internal.h"

static dpm_status_t why(const char **reason, const char *text, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = text;
    }
    return st;
}

/* ---- the TLS-presentation readers (report/dap_wire.h) ----------------------------------- */

/* n bytes from the cursor (NULL and `bad` if fewer are left). */
const uint8_t *dpm_rd_bytes(dpm_rd_t *r, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *at = r->p + r->pos;
    r->pos += n;
    return at;
}

/* An unsigned big-endian integer of n <= 8 bytes (0 if short). */
uint64_t dpm_rd_uint(dpm_rd_t *r, size_t n)
{
    const uint8_t *b = dpm_rd_bytes(r, n);
    uint64_t v = 0;
    for (size_t i = 0; b != NULL && i < n; i++) {
        v = (v << 8) | b[i];
    }
    return v;
}

/* A vector opaque x<lo..hi> with an n-byte length prefix: *len and its bytes (NULL if bad or
 * outside [lo, hi]). */
const uint8_t *dpm_rd_vec(dpm_rd_t *r, size_t n, uint64_t lo, uint64_t hi, size_t *len)
{
    uint64_t l = dpm_rd_uint(r, n);
    if (!r->bad && (l < lo || l > hi || l > r->len - r->pos)) {
        r->bad = 1;
    }
    *len = r->bad ? 0 : (size_t)l;
    return r->bad ? NULL : dpm_rd_bytes(r, (size_t)l);
}

/* 1 if the cursor read everything exactly, without failing. */
int dpm_rd_done(const dpm_rd_t *r)
{
    return !r->bad && r->pos == r->len;
}

/* ---- tasks --------------------------------------------------------------------------------- */

dpm_status_t dpm_dap_url_host(dpm_span_t url, dpm_span_t *host)
{
    static const char scheme[] = "https://";
    const size_t n = sizeof(scheme) - 1;
    if (host == NULL || url.p == NULL || url.len <= n || memcmp(url.p, scheme, n) != 0) {
        return DPM_ERR_PARAM;
    }
    size_t end = n;
    while (end < url.len && url.p[end] != '/' && url.p[end] != '?' && url.p[end] != '#') {
        end++;
    }
    if (end == n) {
        return DPM_ERR_PARAM;
    }
    host->p = url.p + n;
    host->len = end - n;
    return DPM_OK;
}

/* An aggregator URL a device accepts: https, a host, printable ASCII, at most DPM_DAP_MAX_URL. */
static int url_ok(dpm_span_t url)
{
    dpm_span_t host;
    if (url.len > DPM_DAP_MAX_URL || dpm_dap_url_host(url, &host) != DPM_OK) {
        return 0;
    }
    for (size_t i = 0; i < url.len; i++) {
        if (url.p[i] < 0x21 || url.p[i] > 0x7E) {
            return 0;
        }
    }
    return 1;
}

/* The VDAF instance for a vdaf_type and its DAP configuration encoding (two shares). */
static dpm_status_t vdaf_decode(uint32_t type, const uint8_t *cfg, size_t len, dpm_prio3_t *v,
                                const char **reason)
{
    if (!dpm_prio3_variant_built(type)) { /* the whole mode, or this variant, is compiled out */
        return why(reason,
                   DPM_VDAF ? DPM_PRIO3_NOT_BUILT : "the SDK was built without the VDAF (DPM_VDAF)",
                   DPM_ERR_UNSUPPORTED);
    }
    dpm_rd_t r = dpm_rd(cfg, len);
    dpm_status_t st;
    switch (type) { /* no case for a variant left out (refused above): no dead code */
#if DPM_VDAF_FIELD64
    case DPM_PRIO3_COUNT: st = dpm_prio3_count_init(v, 2); break;
    case DPM_PRIO3_SUM: {
        uint64_t max = dpm_rd_uint(&r, 8);
        st = dpm_prio3_sum_init(v, 2, max);
        break;
    }
#endif
    case DPM_PRIO3_SUMVEC: {
        uint32_t length = (uint32_t)dpm_rd_uint(&r, 4);
        uint64_t max = dpm_rd_uint(&r, 8);
        uint32_t chunk = (uint32_t)dpm_rd_uint(&r, 4);
        st = dpm_prio3_sumvec_init(v, 2, length, max, chunk);
        break;
    }
    case DPM_PRIO3_HISTOGRAM: {
        uint32_t length = (uint32_t)dpm_rd_uint(&r, 4);
        uint32_t chunk = (uint32_t)dpm_rd_uint(&r, 4);
        st = dpm_prio3_histogram_init(v, 2, length, chunk);
        break;
    }
#if DPM_VDAF_MULTIHOT
    case DPM_PRIO3_MULTIHOT: {
        uint32_t length = (uint32_t)dpm_rd_uint(&r, 4);
        uint32_t chunk = (uint32_t)dpm_rd_uint(&r, 4);
        uint64_t weight = dpm_rd_uint(&r, 8);
        st = weight > UINT32_MAX ? DPM_ERR_PARAM
                                 : dpm_prio3_multihot_init(v, 2, length, (uint32_t)weight, chunk);
        break;
    }
#endif
    default:
        return why(reason, "task VDAF is not a Prio3 variant this SDK runs", DPM_ERR_UNSUPPORTED);
    }
    if (!dpm_rd_done(&r)) {
        return why(reason, "task VDAF configuration has the wrong length", DPM_ERR_PROTOCOL);
    }
    return st == DPM_OK ? st : why(reason, "task VDAF parameters are invalid", DPM_ERR_PARAM);
}

/* The DAP configuration encoding of v (two shares, a variant DAP defines). */
static int vdaf_encode(dpm_wr_t *w, const dpm_prio3_t *v)
{
    if (v->shares != 2 || v->id != v->kind) {
        return 0;
    }
    size_t at = w->pos;
    dpm_wr_uint(w, 0, 2); /* vdaf_configuration<0..2^16-1>: its length below */
    switch (v->kind) {
    case DPM_PRIO3_COUNT: break;
    case DPM_PRIO3_SUM: dpm_wr_uint(w, v->max_measurement, 8); break;
    case DPM_PRIO3_SUMVEC:
        dpm_wr_uint(w, v->length, 4);
        dpm_wr_uint(w, v->max_measurement, 8);
        dpm_wr_uint(w, v->chunk_length, 4);
        break;
    case DPM_PRIO3_HISTOGRAM:
        dpm_wr_uint(w, v->length, 4);
        dpm_wr_uint(w, v->chunk_length, 4);
        break;
    case DPM_PRIO3_MULTIHOT:
        dpm_wr_uint(w, v->length, 4);
        dpm_wr_uint(w, v->chunk_length, 4);
        dpm_wr_uint(w, v->max_measurement, 8);
        break;
    default: return 0;
    }
    if (!w->bad) {
        size_t n = w->pos - at - 2;
        w->p[at] = (uint8_t)(n >> 8);
        w->p[at + 1] = (uint8_t)n;
    }
    return 1;
}

#if DPM_DAP_LABEL_RR
#define UNKNOWN_EXTENSION "task has an extension this SDK does not know"
#else /* one string for both, short: make size's dap_shapes had 15 bytes to spare */
#define UNKNOWN_EXTENSION "unknown task extension (DPM_DAP_LABEL_RR off?)"
#endif

/* The task's extensions: task_interval, the central-DP one and the label-RR one, strictly
 * increasing. */
static dpm_status_t extensions_decode(const uint8_t *ext, size_t len, dpm_dap_task_t *t,
                                      const char **reason)
{
    dpm_rd_t r = dpm_rd(ext, len);
    uint32_t last = 0;
    int seen = 0;
    while (!r.bad && r.pos < r.len) {
        uint32_t type = (uint32_t)dpm_rd_uint(&r, 2);
        size_t n = 0;
        const uint8_t *data = dpm_rd_vec(&r, 2, 0, 0xFFFF, &n);
        if (r.bad) {
            break;
        }
        if (seen && type <= last) {
            return why(reason, "task extensions not in strictly increasing order",
                       DPM_ERR_PROTOCOL);
        }
        seen = 1;
        last = type;
        dpm_rd_t d = dpm_rd(data, n);
        if (type == DPM_DAP_EXT_TASK_INTERVAL) {
            t->has_interval = 1;
            t->interval_start = dpm_rd_uint(&d, 8);
            t->interval_duration = dpm_rd_uint(&d, 8);
        } else if (type == DPM_DAP_EXT_CENTRAL_DP) {
            t->dp_mechanism = (uint8_t)dpm_rd_uint(&d, 1);
            if (t->dp_mechanism != DPM_DAP_DP_DISCRETE_LAPLACE &&
                t->dp_mechanism != DPM_DAP_DP_DISCRETE_GAUSSIAN) { /* whatever its length */
                return why(reason,
                           "task has no central noise this SDK knows (central-DP extension)",
                           DPM_ERR_UNSUPPORTED);
            }
            t->central_eps = (dpm_eps_t)dpm_rd_uint(&d, 4);
            t->central_sigma2 =
                t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN ? dpm_rd_uint(&d, 8) : 0u;
#if DPM_DAP_LABEL_RR
        } else if (type == DPM_DAP_EXT_LOCAL_LABEL_RR) {
            t->local_eps = (dpm_eps_t)dpm_rd_uint(&d, 4);
            t->local_bins = (uint32_t)dpm_rd_uint(&d, 2);
#endif
        } else { /* without DPM_DAP_LABEL_RR its extension is one of these: the reason names it */
            return why(reason, UNKNOWN_EXTENSION, DPM_ERR_UNSUPPORTED);
        }
        if (!dpm_rd_done(&d)) {
            return why(reason, "task extension has the wrong length", DPM_ERR_PROTOCOL);
        }
    }
    return dpm_rd_done(&r) ? DPM_OK : why(reason, "malformed task extensions", DPM_ERR_PROTOCOL);
}

/* The label-RR extension's values against the task's VDAF (decode and encode alike): SumVec,
 * length a multiple of 2 x bins, ε0 in (0, DPM_EPS_MAX_Q16] with 32-bit RR thresholds. */
static dpm_status_t label_rr_check(dpm_eps_t eps0, uint32_t bins, const dpm_prio3_t *v,
                                   const char **reason)
{
    if (eps0 == 0 && bins == 0) {
        return DPM_OK; /* no label RR */
    }
    if (v->kind != DPM_PRIO3_SUMVEC || v->id != DPM_PRIO3_SUMVEC) {
        return why(reason, "task's local label RR needs a Prio3SumVec task", DPM_ERR_UNSUPPORTED);
    }
    if (bins == 0 || bins > 0xFFFFu || v->length % (2u * bins) != 0) {
        return why(reason,
                   "task's local label RR: bins 0, or the SumVec length is not groups x 2 x bins",
                   DPM_ERR_PARAM);
    }
    dpm_grr_t g;
    if (eps0 == 0 || eps0 > DPM_EPS_MAX_Q16 || dpm_rr_init(&g, eps0) != DPM_OK) {
        return why(reason,
                   "task's local label RR epsilon is 0, above DPM_EPS_MAX or too large for "
                   "32-bit RR thresholds (about 22.18)",
                   DPM_ERR_PARAM);
    }
    return DPM_OK;
}

static int same_key(const dpm_hpke_config_t *a, const dpm_hpke_config_t *b)
{
    return memcmp(a->public_key, b->public_key, DPM_HPKE_NPK) == 0;
}

dpm_status_t dpm_dap_task_decode(const uint8_t id[DPM_DAP_TASK_ID_BYTES], const uint8_t *bytes,
                                 size_t len, const dpm_hpke_config_t *leader_hpke,
                                 const dpm_hpke_config_t *helper_hpke, dpm_dap_task_t *t,
                                 const char **reason)
{
    if (id == NULL || bytes == NULL || leader_hpke == NULL || helper_hpke == NULL || t == NULL) {
        return why(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_dap_task_t d;
    memset(&d, 0, sizeof(d));
    memcpy(d.id, id, DPM_DAP_TASK_ID_BYTES);
    d.config = bytes;
    d.config_len = len;
    dpm_rd_t r = dpm_rd(bytes, len);
    d.task_info.p = dpm_rd_vec(&r, 1, 1, 0xFF, &d.task_info.len);
    d.leader_url.p = dpm_rd_vec(&r, 2, 1, 0xFFFF, &d.leader_url.len);
    d.helper_url.p = dpm_rd_vec(&r, 2, 1, 0xFFFF, &d.helper_url.len);
    d.time_precision = dpm_rd_uint(&r, 8);
    d.min_batch_size = dpm_rd_uint(&r, 8);
    d.batch_mode = (uint8_t)dpm_rd_uint(&r, 1);
    size_t batch_config_len = 0, vdaf_len = 0, ext_len = 0;
    (void)dpm_rd_vec(&r, 2, 0, 0xFFFF, &batch_config_len);
    uint32_t vdaf_type = (uint32_t)dpm_rd_uint(&r, 4);
    const uint8_t *vdaf_cfg = dpm_rd_vec(&r, 2, 0, 0xFFFF, &vdaf_len);
    const uint8_t *ext = dpm_rd_vec(&r, 2, 0, 0xFFFF, &ext_len);
    if (!dpm_rd_done(&r)) {
        return why(reason, "malformed TaskConfiguration", DPM_ERR_PROTOCOL);
    }
    if (d.batch_mode != DPM_DAP_BATCH_TIME_INTERVAL &&
        d.batch_mode != DPM_DAP_BATCH_LEADER_SELECTED) {
        return why(reason, "task batch mode is not time-interval or leader-selected",
                   DPM_ERR_UNSUPPORTED);
    }
    if (batch_config_len != 0) {
        return why(reason, "task batch config must be empty for its batch mode", DPM_ERR_PROTOCOL);
    }
    dpm_status_t st = extensions_decode(ext, ext_len, &d, reason);
    if (st == DPM_OK) {
        st = vdaf_decode(vdaf_type, vdaf_cfg, vdaf_len, &d.vdaf, reason);
    }
    if (st == DPM_OK && DPM_DAP_LABEL_RR) { /* without it, the extension was refused above */
        st = label_rr_check(d.local_eps, d.local_bins, &d.vdaf, reason);
    }
    if (st != DPM_OK) {
        return st;
    }
    if (d.dp_mechanism != DPM_DAP_DP_DISCRETE_LAPLACE &&
        d.dp_mechanism != DPM_DAP_DP_DISCRETE_GAUSSIAN) {
        return why(reason, "task has no central noise this SDK knows (central-DP extension)",
                   DPM_ERR_UNSUPPORTED);
    }
    if (d.dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN && d.central_sigma2 == 0) {
        return why(reason, "task's discrete Gaussian noise has sigma2 0", DPM_ERR_PARAM);
    }
    if (!url_ok(d.leader_url) || !url_ok(d.helper_url)) {
        return why(reason, "task aggregator URL is not https://host... of at most 255 bytes",
                   DPM_ERR_PARAM);
    }
    if (d.task_info.len > DPM_DAP_MAX_TASK_INFO || d.time_precision == 0 || d.min_batch_size == 0 ||
        d.central_eps == 0 || (d.has_interval && d.interval_duration == 0)) {
        return why(reason, "task time precision, batch size, interval or epsilon is zero",
                   DPM_ERR_PARAM);
    }
    st = dpm_hpke_config_check(leader_hpke, reason);
    if (st == DPM_OK) {
        st = dpm_hpke_config_check(helper_hpke, reason);
    }
    if (st != DPM_OK) {
        return st;
    }
    if (same_key(leader_hpke, helper_hpke)) {
        return why(reason, "leader and helper have the same HPKE key", DPM_ERR_PARAM);
    }
    d.leader_hpke = *leader_hpke;
    d.helper_hpke = *helper_hpke;
    *t = d;
    return DPM_OK;
}

dpm_status_t dpm_dap_task_config_encode(const dpm_dap_task_t *t, uint8_t *out, size_t cap,
                                        size_t *len)
{
    if (t == NULL || out == NULL || len == NULL || t->task_info.p == NULL ||
        t->task_info.len == 0 || t->task_info.len > DPM_DAP_MAX_TASK_INFO ||
        !url_ok(t->leader_url) || !url_ok(t->helper_url) || t->time_precision == 0 ||
        t->min_batch_size == 0 || t->central_eps == 0 ||
        (t->dp_mechanism != DPM_DAP_DP_DISCRETE_LAPLACE &&
         t->dp_mechanism != DPM_DAP_DP_DISCRETE_GAUSSIAN) ||
        (t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN) != (t->central_sigma2 != 0) ||
        (t->batch_mode != DPM_DAP_BATCH_TIME_INTERVAL &&
         t->batch_mode != DPM_DAP_BATCH_LEADER_SELECTED) ||
        (t->has_interval && t->interval_duration == 0) ||
        label_rr_check(t->local_eps, t->local_bins, &t->vdaf, NULL) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    dpm_wr_t w = dpm_wr(out, cap);
    dpm_wr_vec(&w, 1, t->task_info.p, t->task_info.len);
    dpm_wr_vec(&w, 2, t->leader_url.p, t->leader_url.len);
    dpm_wr_vec(&w, 2, t->helper_url.p, t->helper_url.len);
    dpm_wr_uint(&w, t->time_precision, 8);
    dpm_wr_uint(&w, t->min_batch_size, 8);
    dpm_wr_uint(&w, t->batch_mode, 1);
    dpm_wr_uint(&w, 0, 2); /* batch_config: empty for both batch modes */
    dpm_wr_uint(&w, t->vdaf.id, 4);
    if (!vdaf_encode(&w, &t->vdaf)) {
        return DPM_ERR_PARAM;
    }
    const int gauss = t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN;
    size_t ext_len = (t->has_interval ? 4u + 16u : 0u) + 4u + (gauss ? 13u : 5u) +
                     (t->local_eps != 0 ? 4u + 6u : 0u);
    dpm_wr_uint(&w, ext_len, 2);
    if (t->has_interval) {
        dpm_wr_uint(&w, DPM_DAP_EXT_TASK_INTERVAL, 2);
        dpm_wr_uint(&w, 16, 2);
        dpm_wr_uint(&w, t->interval_start, 8);
        dpm_wr_uint(&w, t->interval_duration, 8);
    }
    dpm_wr_uint(&w, DPM_DAP_EXT_CENTRAL_DP, 2);
    dpm_wr_uint(&w, gauss ? 13u : 5u, 2);
    dpm_wr_uint(&w, t->dp_mechanism, 1);
    dpm_wr_uint(&w, t->central_eps, 4);
    if (gauss) {
        dpm_wr_uint(&w, t->central_sigma2, 8);
    }
    if (t->local_eps != 0) {
        dpm_wr_uint(&w, DPM_DAP_EXT_LOCAL_LABEL_RR, 2);
        dpm_wr_uint(&w, 6, 2);
        dpm_wr_uint(&w, t->local_eps, 4);
        dpm_wr_uint(&w, t->local_bins, 2);
    }
    if (w.bad) {
        return DPM_ERR_BUFFER;
    }
    *len = w.pos;
    return DPM_OK;
}

uint32_t dpm_dap_ledger_id(const dpm_dap_task_t *t)
{
    return 0x80000000u | ((uint32_t)(t->id[0] & 0x7Fu) << 24) | ((uint32_t)t->id[1] << 16) |
           ((uint32_t)t->id[2] << 8) | t->id[3];
}

void dpm_dap_vdaf_ctx(const dpm_dap_task_t *t, uint8_t ctx[DPM_DAP_CTX_BYTES])
{
    static const uint8_t dst[6] = {'d', 'a', 'p', '-', '1', '8'}; /* DPM_DAP_DST */
    memcpy(ctx, dst, sizeof(dst));
    memcpy(ctx + sizeof(dst), t->id, DPM_DAP_TASK_ID_BYTES);
}

void dpm_dap_input_share_info(uint8_t role, uint8_t info[DPM_DAP_INFO_BYTES])
{
    static const uint8_t label[18] = {'d', 'a', 'p', '-', '1', '8', ' ', 'i', 'n',
                                      'p', 'u', 't', ' ', 's', 'h', 'a', 'r', 'e'};
    memcpy(info, label, sizeof(label));
    info[18] = DPM_DAP_ROLE_CLIENT;
    info[19] = role;
}

/* ---- measurements ------------------------------------------------------------------------ */

dpm_status_t dpm_dap_measurement_check(const dpm_prio3_t *v, const uint64_t *measurement,
                                       size_t count)
{
    if (v == NULL || measurement == NULL) {
        return DPM_ERR_PARAM;
    }
    int vector = v->kind == DPM_PRIO3_SUMVEC || v->kind == DPM_PRIO3_MULTIHOT;
    if (count != (vector ? v->length : 1u) || v->length == 0 || v->kind < DPM_PRIO3_COUNT ||
        v->kind > DPM_PRIO3_MULTIHOT) {
        return DPM_ERR_PARAM; /* public: the variant's shape, or a variant DAP tasks do not use */
    }
#if DPM_VDAF
    /* the check dpm_prio3_shard makes on the same values: one definition of a valid one */
    uint64_t bad = dpm_prio3_measurement_bad(v, measurement);
#else
    uint64_t bad = 1;
#endif
    DPM_CT_DECLASSIFY(bad); /* the verdict is public: it is the status */
    return bad ? DPM_ERR_PARAM : DPM_OK;
}

/* ---- reports --------------------------------------------------------------------------------- */

void dpm_dap_report_layout(const dpm_prio3_t *v, dpm_dap_layout_t *l)
{
    memset(l, 0, sizeof(*l));
    l->public_share = DPM_DAP_METADATA_BYTES + 4u;
    l->public_share_len = v->public_share_bytes;
    l->aad_len = l->public_share + l->public_share_len;
    const size_t share_bytes[2] = {v->leader_share_bytes, v->helper_share_bytes};
    size_t at = l->aad_len;
    for (int i = 0; i < 2; i++) {
        l->enc[i] = at + 1u + 2u;                     /* config_id, enc length */
        l->share[i] = l->enc[i] + DPM_HPKE_NENC + 4u; /* payload length */
        l->input_share[i] = l->share[i] + 2u + 4u;    /* no private extensions, payload length */
        l->input_share_len[i] = share_bytes[i];
        l->share_len[i] = 2u + 4u + share_bytes[i];
        l->tag[i] = l->share[i] + l->share_len[i];
        at = l->tag[i] + DPM_HPKE_NT;
    }
    l->bytes = at;
}

size_t dpm_dap_report_bytes(const dpm_prio3_t *v)
{
    dpm_dap_layout_t l;
    dpm_dap_report_layout(v, &l);
    return l.bytes;
}

static void put_be(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = n; i-- > 0; v >>= 8) {
        p[i] = (uint8_t)v;
    }
}

void dpm_dap_report_frame(const dpm_dap_task_t *t, const dpm_dap_layout_t *l,
                          const uint8_t report_id[DPM_DAP_REPORT_ID_BYTES], uint64_t time,
                          uint8_t *out)
{
    memcpy(out, report_id, DPM_DAP_REPORT_ID_BYTES);
    put_be(out + DPM_DAP_REPORT_ID_BYTES, time, 8);
    put_be(out + DPM_DAP_REPORT_ID_BYTES + 8u, 0, 2); /* public_extensions: none */
    put_be(out + DPM_DAP_METADATA_BYTES, l->public_share_len, 4);
    const uint8_t ids[2] = {t->leader_hpke.id, t->helper_hpke.id};
    for (int i = 0; i < 2; i++) {
        uint8_t *c = out + l->enc[i] - 3u;
        c[0] = ids[i];
        put_be(c + 1, DPM_HPKE_NENC, 2);
        put_be(out + l->share[i] - 4u, l->share_len[i] + DPM_HPKE_NT, 4);
        put_be(out + l->share[i], 0, 2); /* private_extensions: none */
        put_be(out + l->share[i] + 2u, l->input_share_len[i], 4);
    }
}

static void read_ciphertext(dpm_rd_t *r, dpm_dap_report_view_t *v, int i, int *enc_ok)
{
    size_t enc_len = 0, payload_len = 0;
    v->share[i].config_id = (uint8_t)dpm_rd_uint(r, 1);
    v->share[i].enc = dpm_rd_vec(r, 2, 1, 0xFFFF, &enc_len);
    const uint8_t *payload = dpm_rd_vec(r, 4, 1, 0xFFFFFFFFu, &payload_len);
    *enc_ok &= enc_len == DPM_HPKE_NENC && payload_len >= DPM_HPKE_NT;
    if (payload != NULL && payload_len >= DPM_HPKE_NT) {
        v->share[i].ciphertext.p = payload;
        v->share[i].ciphertext.len = payload_len - DPM_HPKE_NT;
        v->share[i].tag = payload + payload_len - DPM_HPKE_NT;
    }
}

/* One report from r's cursor. */
static dpm_status_t report_read(dpm_rd_t *r, dpm_dap_report_view_t *out, const char **reason)
{
    dpm_dap_report_view_t v;
    memset(&v, 0, sizeof(v));
    size_t start = r->pos;
    v.report_id = dpm_rd_bytes(r, DPM_DAP_REPORT_ID_BYTES);
    v.time = dpm_rd_uint(r, 8);
    v.public_extensions.p = dpm_rd_vec(r, 2, 0, 0xFFFF, &v.public_extensions.len);
    v.public_share.p = dpm_rd_vec(r, 4, 0, 0xFFFFFFFFu, &v.public_share.len);
    v.aad_tail.p = r->p == NULL ? NULL : r->p + start;
    v.aad_tail.len = r->pos - start;
    int enc_ok = 1;
    read_ciphertext(r, &v, 0, &enc_ok);
    read_ciphertext(r, &v, 1, &enc_ok);
    if (r->bad) {
        return why(reason, "malformed DAP report", DPM_ERR_PROTOCOL);
    }
    if (!enc_ok) {
        return why(reason, "DAP report: enc is not 32 bytes or a payload is shorter than its tag",
                   DPM_ERR_PROTOCOL);
    }
    *out = v;
    return DPM_OK;
}

dpm_status_t dpm_dap_report_decode(const uint8_t *bytes, size_t len, dpm_dap_report_view_t *r,
                                   const char **reason)
{
    if (bytes == NULL || r == NULL) {
        return why(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_rd_t rd = dpm_rd(bytes, len);
    dpm_dap_report_view_t v;
    dpm_status_t st = report_read(&rd, &v, reason);
    if (st == DPM_OK && rd.pos != rd.len) {
        st = why(reason, "bytes after the DAP report", DPM_ERR_PROTOCOL);
    }
    if (st == DPM_OK) {
        *r = v;
    }
    return st;
}

dpm_status_t dpm_dap_report_next(const uint8_t *bytes, size_t len, size_t *pos,
                                 dpm_dap_report_view_t *r, const char **reason)
{
    if (bytes == NULL || pos == NULL || r == NULL || *pos > len) {
        return why(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_rd_t rd = dpm_rd(bytes, len);
    rd.pos = *pos;
    dpm_status_t st = report_read(&rd, r, reason);
    if (st == DPM_OK) {
        *pos = rd.pos;
    }
    return st;
}

dpm_status_t dpm_dap_plaintext_decode(const uint8_t *bytes, size_t len, dpm_span_t *private_ext,
                                      dpm_span_t *payload)
{
    if (bytes == NULL || private_ext == NULL || payload == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_rd_t r = dpm_rd(bytes, len);
    dpm_span_t e, p;
    e.p = dpm_rd_vec(&r, 2, 0, 0xFFFF, &e.len);
    p.p = dpm_rd_vec(&r, 4, 1, 0xFFFFFFFFu, &p.len);
    if (!dpm_rd_done(&r)) {
        return DPM_ERR_PROTOCOL;
    }
    *private_ext = e;
    *payload = p;
    return DPM_OK;
}

/* ---- policy -------------------------------------------------------------------------------- */

static int policy_valid(const dpm_dap_policy_t *p)
{
    /* without DPM_DAP_LABEL_RR no task meets a policy that requires label RR: say so early */
    if ((!DPM_DAP_LABEL_RR && p->max_local_eps.q16 != 0) ||
        p->naggregators > DPM_DAP_POLICY_MAX_AGGREGATORS ||
        (p->naggregators != 0 && p->min_batch_size == 0)) {
        return 0;
    }
    for (uint32_t i = 0; i < p->naggregators; i++) {
        const dpm_dap_aggregator_t *a = &p->aggregators[i];
        if (a->host == NULL || a->host[0] == '\0' ||
            dpm_hpke_config_check(&a->hpke, NULL) != DPM_OK) {
            return 0;
        }
    }
    return 1;
}

static int host_is(dpm_span_t host, const char *name)
{
    size_t n = strlen(name);
    return n == host.len && memcmp(host.p, name, n) == 0;
}

/* The index of the entry naming url's host with exactly config c, or -1. */
static int named(const dpm_dap_policy_t *p, dpm_span_t url, const dpm_hpke_config_t *c)
{
    dpm_span_t host;
    if (dpm_dap_url_host(url, &host) != DPM_OK) {
        return -1;
    }
    for (uint32_t i = 0; i < p->naggregators; i++) {
        const dpm_dap_aggregator_t *a = &p->aggregators[i];
        if (host_is(host, a->host) && a->hpke.id == c->id && a->hpke.kem_id == c->kem_id &&
            a->hpke.kdf_id == c->kdf_id && a->hpke.aead_id == c->aead_id &&
            memcmp(a->hpke.public_key, c->public_key, DPM_HPKE_NPK) == 0) {
            return (int)i;
        }
    }
    return -1;
}

dpm_status_t dpm_dap_policy_check(const dpm_dap_policy_t *p, const dpm_dap_task_t *t,
                                  const char **reason)
{
    if (p == NULL) {
        return why(reason, "the app's policy names no aggregator (policy.dap is NULL)",
                   DPM_ERR_POLICY);
    }
    if (t == NULL || !policy_valid(p)) {
        return why(reason, "invalid two-aggregator policy", DPM_ERR_PARAM);
    }
#if DPM_DAP_LABEL_RR
    if (p->max_local_eps.q16 != 0 && p->max_local_eps.q16 < DPM_EPS_FLOOR_Q16) {
        return why(reason,
                   "two-aggregator policy: max_local_eps below 2^-8 (write DPM_EPS(x), not a "
                   "plain integer; DPM_EPS_Q16(0) for no requirement)",
                   DPM_ERR_PARAM);
    }
#endif
    if (p->naggregators > 0 && p->max_central_eps.q16 < DPM_EPS_FLOOR_Q16) {
        return why(reason,
                   "two-aggregator policy: max_central_eps below 2^-8 (write DPM_EPS(x), not a "
                   "plain integer)",
                   DPM_ERR_PARAM);
    }
    int leader = named(p, t->leader_url, &t->leader_hpke);
    int helper = named(p, t->helper_url, &t->helper_hpke);
    if (leader < 0) {
        return why(reason, "task leader's host and HPKE key are not in the app's policy",
                   DPM_ERR_POLICY);
    }
    if (helper < 0) {
        return why(reason, "task helper's host and HPKE key are not in the app's policy",
                   DPM_ERR_POLICY);
    }
    dpm_span_t helper_host = {NULL, 0};
    (void)dpm_dap_url_host(t->helper_url, &helper_host);     /* parsed by named() above */
    if (host_is(helper_host, p->aggregators[leader].host)) { /* the helper's entry has this host */
        return why(reason, "task leader and helper are the same aggregator", DPM_ERR_POLICY);
    }
    if (t->central_eps == 0 || t->central_eps > p->max_central_eps.q16) {
        return why(reason, "task central epsilon above the app's policy", DPM_ERR_POLICY);
    }
    if (t->min_batch_size < p->min_batch_size) {
        return why(reason, "task minimum batch size below the app's policy", DPM_ERR_POLICY);
    }
    if (t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN && !p->accept_gaussian) {
        return why(reason,
                   "task's central noise is discrete Gaussian ((eps, delta)-DP) and the app's "
                   "policy takes Laplace tasks only (set accept_gaussian to take it)",
                   DPM_ERR_POLICY);
    }
#if DPM_DAP_LABEL_RR
    if (p->max_local_eps.q16 != 0 && (t->local_eps == 0 || t->local_eps > p->max_local_eps.q16)) {
        return why(reason,
                   t->local_eps == 0
                       ? "task has no local label RR and the app's policy requires it "
                         "(max_local_eps)"
                       : "task local label RR epsilon above the app's policy (max_local_eps)",
                   DPM_ERR_POLICY);
    }
#endif
    return DPM_OK;
}
