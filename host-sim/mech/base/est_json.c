/* SPDX-License-Identifier: Apache-2.0 */
/* The pieces of an estimate's JSON (see est_json.h). */
#include "mech/base/est_json.h"

#include <string.h>

#include "estimate/ci_flags.h"

void coll_ci_json(jw_t *sb, const char *key, unsigned flags)
{
    jw_raw(sb, ", \"%s_coverage\": \"%s\", \"%s_flags\": [", key, dpm_ci_coverage(flags), key);
    for (unsigned i = 0, n = 0; i < DPM_CI_FLAG_COUNT; i++) {
        if (flags & (1u << i)) {
            jw_raw(sb, "%s\"%s\"", n++ ? ", " : "", dpm_ci_flag_name(i));
        }
    }
    jw_raw(sb, "], \"%s_reason\": ", key);
    if (flags != 0) {
        jw_str(sb, dpm_ci_reason(flags));
    } else {
        jw_raw(sb, "null");
    }
}

void coll_json_num(jw_t *sb, double x)
{
    jw_num(sb, x, COLL_JSON_DIGITS);
}

void coll_json_member(jw_t *sb, const char *key, double x)
{
    jw_raw(sb, ", \"%s\": ", key);
    jw_num(sb, x, COLL_JSON_DIGITS);
}

void coll_json_interval(jw_t *sb, double lo, double hi)
{
    jw_raw(sb, "[");
    coll_json_num(sb, lo);
    jw_raw(sb, ", ");
    coll_json_num(sb, hi);
    jw_raw(sb, "]");
}

void coll_json_array(jw_t *sb, const char *key, const double *v, uint32_t n)
{
    jw_raw(sb, ", ");
    jw_key(sb, key);
    jw_nums(sb, v, n, COLL_JSON_DIGITS);
}

double coll_clip(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Does the key of the value at offset i (`"key": value`) say the value may be null without a
 * reason of its own: an interval's "..._reason" (null: nothing to flag), an effective number
 * of events (null: infinite, no randomization event can matter) or an interpolation bound
 * (null: too few bins, which the interval's flags say)? */
static int null_is_expected(const jw_t *sb, size_t start, size_t i)
{
    static const char *const kOk[3] = {"_reason", "events", "_bound"};
    if (i < start + 4 || memcmp(sb->buf + i - 3, "\": ", 3) != 0) {
        return 0;
    }
    size_t end = i - 3, k = end; /* the key is buf[k + 1 .. end) */
    while (k > start && sb->buf[k - 1] != '"') {
        k--;
    }
    for (int j = 0; j < 3; j++) { /* a key that ends so */
        size_t n = strlen(kOk[j]);
        if (end - k >= n && memcmp(sb->buf + end - n, kOk[j], n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Was a null written since offset start (the estimate is written to a buffer)? */
static int null_since(const jw_t *sb, size_t start)
{
    for (size_t i = start; sb->buf != NULL && i + 4 <= sb->len; i++) {
        if (memcmp(sb->buf + i, "null", 4) == 0 && !null_is_expected(sb, start, i)) {
            return 1;
        }
    }
    return 0;
}

void coll_json_reason(jw_t *sb, const char *why, size_t start)
{
    jw_raw(sb, ", \"reason\": ");
    if (why == NULL && null_since(sb, start)) {
        why = "a value is not finite (too few reports for this noise)";
    }
    if (why != NULL) {
        jw_str(sb, why);
    } else {
        jw_raw(sb, "null");
    }
}

void host_no_metrics_json(jw_t *sb)
{
    jw_raw(sb, ", \"metrics\": []");
}
