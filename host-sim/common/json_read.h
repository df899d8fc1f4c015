/* SPDX-License-Identifier: Apache-2.0 */
/* A small JSON reader (RFC 8259 values into a heap tree) for the files dpm-sim reads back:
 * dpm-repro's disparity.json and the collector's estimate JSON. Strings keep \uXXXX escapes of
 * the BMP as UTF-8; depth is limited to 64. */
#ifndef DPM_SIM_JSON_READ_H
#define DPM_SIM_JSON_READ_H

#include <stddef.h>

typedef enum { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_kind_t;

typedef struct jr_value {
    jr_kind_t kind;
    double number; /* JR_NUMBER; JR_BOOL: 0 or 1 */
    char *string;  /* JR_STRING */
    size_t n;      /* JR_ARRAY / JR_OBJECT: number of items */
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
/* A string member, or NULL. */
const char *jr_string(const jr_value_t *v, const char *key);

#endif /* DPM_SIM_JSON_READ_H */
