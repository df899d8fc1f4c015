/* SPDX-License-Identifier: Apache-2.0 */
/* The one JSON reader of host-sim and the tests (RFC 8259 values into a heap tree): the
 * collector's estimate JSON dpm-sim reads back in network mode, the golden vectors of
 * tests/vectors. Strings keep \uXXXX escapes of the BMP as UTF-8; integer literals are kept
 * exactly (jr_int64) beside their double; depth is limited to 64. */
#ifndef DPM_SIM_JSON_READ_H
#define DPM_SIM_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

typedef enum { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_kind_t;

typedef struct jr_value {
    jr_kind_t kind;
    double number;   /* JR_NUMBER; JR_BOOL: 0 or 1 */
    int64_t integer; /* JR_NUMBER written as an integer (is_integer): its exact value */
    int is_integer;
    char *string; /* JR_STRING */
    size_t n;     /* JR_ARRAY / JR_OBJECT: number of items */
    struct jr_value *items;
    char **keys; /* JR_OBJECT: keys[i] names items[i] */
} jr_value_t;

/* Parse text[0, len) into *out. 0, or -1 (malformed, too deep, out of memory). */
int jr_parse(const char *text, size_t len, jr_value_t *out);
/* Read and parse a file. 0, or -1. */
int jr_parse_file(const char *path, jr_value_t *out);
void jr_free(jr_value_t *v);

/* The member `key` of an object (NULL if absent or v is not an object). */
const jr_value_t *jr_get(const jr_value_t *v, const char *key);
/* Item i of an array (NULL if out of range). */
const jr_value_t *jr_at(const jr_value_t *v, size_t i);
/* A number member, or `fallback` if absent, null or not a number. */
double jr_number(const jr_value_t *v, const char *key, double fallback);
/* v's exact value when it is an integer literal within int64: 0, else -1. */
int jr_int64(const jr_value_t *v, int64_t *out);
/* A string member, or NULL. */
const char *jr_string(const jr_value_t *v, const char *key);

/* Are a and b the same value (numbers: the same integer literal, else the same double; objects:
 * the same members in any order)? 1 or 0; two NULLs are equal. */
int jr_equal(const jr_value_t *a, const jr_value_t *b);

/* Do a and b hold the same values at `path`: member names separated by '.', '*' for every item
 * of an array ("metrics.*.groups.*.reports")? 1 yes; 0 no, with the first place that differs
 * in where ("metrics.0.groups.2.reports"; a place missing on both sides is equal). */
int jr_path_equal(const jr_value_t *a, const jr_value_t *b, const char *path, char *where,
                  size_t cap);

#endif /* DPM_SIM_JSON_READ_H */
