/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal JSON reader for test vectors: objects, arrays, integers and strings (no floats,
 * no escapes beyond \" and \\). It walks a buffer in place; nothing is allocated. */
#ifndef JSON_MIN_H
#define JSON_MIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *p;
    const char *end;
    int error;
} json_t;

void json_init(json_t *j, const char *text, size_t len);
/* Expect and consume a character (after whitespace); sets error if it is not there. */
int json_expect(json_t *j, char c);
/* If the next character is c, consume it and return 1. */
int json_accept(json_t *j, char c);
/* Read a string into buf (NUL-terminated); returns 0 or -1. */
int json_string(json_t *j, char *buf, size_t cap);
/* Read an integer (decimal, optional '-'). */
int json_int(json_t *j, int64_t *out);
/* Skip any value. */
int json_skip(json_t *j);
/* Read a whole file into buf; returns its length or -1. */
long json_read_file(const char *path, char *buf, size_t cap);

#endif
