/* SPDX-License-Identifier: Apache-2.0 */
/* The estimate endpoint's query string (see estimate_json.h): strict, so a typo is a 400 with
 * its reason instead of an estimate of something else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/api/estimate_json.h"

static int bad(char *why, size_t cap, const char *fmt, const char *a)
{
    snprintf(why, cap, fmt, a);
    return -1;
}

/* A period number: 1 to 10 decimal digits, no sign, at most 2^32 - 1. */
static int parse_period(const char *v, size_t n, uint32_t *out)
{
    if (n == 0 || n > 10) {
        return -1;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            return -1;
        }
        x = x * 10u + (uint64_t)(v[i] - '0');
    }
    if (x > UINT32_MAX) {
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

/* A confidence: "0.95", ".9", "0.999": digits and one point, strictly between 0 and 1. */
static int parse_confidence(const char *v, size_t n, double *out)
{
    char buf[32];
    int dot = 0, digits = 0;
    if (n == 0 || n >= sizeof(buf)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '.') {
            dot++;
        } else if (v[i] >= '0' && v[i] <= '9') {
            digits++;
        } else {
            return -1;
        }
    }
    if (dot != 1 || digits == 0) {
        return -1;
    }
    memcpy(buf, v, n);
    buf[n] = '\0';
    double c = strtod(buf, NULL);
    if (!(c > 0.0 && c < 1.0)) {
        return -1;
    }
    *out = c;
    return 0;
}

int coll_estimate_parse_query(const char *query, coll_estimate_query_t *q, char *why, size_t cap)
{
    q->all = 1;
    q->from = 0;
    q->to = UINT32_MAX;
    q->confidence = COLL_DEFAULT_CONFIDENCE;
    if (query == NULL || query[0] == '\0') {
        return 0;
    }
    int seen_period = 0, seen_from = 0, seen_to = 0, seen_conf = 0;
    const char *p = query;
    while (*p != '\0') {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        char key[32];
        size_t klen = eq != NULL ? (size_t)(eq - p) : n;
        if (klen >= sizeof(key)) {
            klen = sizeof(key) - 1;
        }
        memcpy(key, p, klen);
        key[klen] = '\0';
        if (eq == NULL) {
            return bad(why, cap, "query parameter '%s' has no value", key);
        }
        const char *v = eq + 1;
        size_t vlen = n - (size_t)(v - p);
        int *seen = strcmp(key, "period") == 0       ? &seen_period
                    : strcmp(key, "from") == 0       ? &seen_from
                    : strcmp(key, "to") == 0         ? &seen_to
                    : strcmp(key, "confidence") == 0 ? &seen_conf
                                                     : NULL;
        if (seen == NULL) {
            return bad(why, cap,
                       "unknown query parameter '%s' (known: period, from, to, confidence)", key);
        }
        if ((*seen)++) {
            return bad(why, cap, "query parameter '%s' given twice", key);
        }
        if (seen == &seen_conf) {
            if (parse_confidence(v, vlen, &q->confidence) != 0) {
                return bad(why, cap, "%s",
                           "confidence must be a decimal strictly between 0 and 1, "
                           "e.g. 0.95");
            }
        } else {
            uint32_t x = 0;
            if (parse_period(v, vlen, &x) != 0) {
                return bad(why, cap, "%s must be a period number (0 .. 4294967295)", key);
            }
            if (seen == &seen_period) {
                q->from = q->to = x;
            } else if (seen == &seen_from) {
                q->from = x;
            } else {
                q->to = x;
            }
            q->all = 0;
        }
        p += n;
        if (*p == '&') {
            p++;
            if (*p == '\0') {
                return bad(why, cap, "%s", "the query ends with '&'");
            }
        }
    }
    if (seen_period && (seen_from || seen_to)) {
        return bad(why, cap, "%s", "give period, or from and to, not both");
    }
    if (q->from > q->to) {
        return bad(why, cap, "%s", "from is after to");
    }
    return 0;
}
