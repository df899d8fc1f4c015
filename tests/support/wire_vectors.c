/* SPDX-License-Identifier: Apache-2.0 */
#include "wire_vectors.h"

#include <stdio.h>
#include <stdlib.h>

const char *wire_vector_dir(void)
{
    const char *d = getenv("WIRE_VECTORS");
    return d != NULL ? d : "tests/vectors/wire";
}

size_t wire_read_hex(const char *rel, uint8_t *buf, size_t cap)
{
    char path[512];
    static char text[8192];
    snprintf(path, sizeof(path), "%s/%s", wire_vector_dir(), rel);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t len = 0;
    for (size_t i = 0; text[i] != '\0' && text[i] != '\n'; i += 2) {
        unsigned v;
        if (len >= cap || sscanf(&text[i], "%2x", &v) != 1) {
            return 0;
        }
        buf[len++] = (uint8_t)v;
    }
    return len;
}
