/* SPDX-License-Identifier: Apache-2.0 */
/* The golden wire vectors (tests/vectors/wire/RELEASE/NAME.hex: one line of hex each), shared by
 * test_wire and test_batch_codec. */
#ifndef WIRE_VECTORS_H
#define WIRE_VECTORS_H

#include <stddef.h>
#include <stdint.h>

/* $WIRE_VECTORS, or tests/vectors/wire (the tests run from the repository root). */
const char *wire_vector_dir(void);

/* wire_vector_dir()/rel as hex into buf: its length, or 0 on any error (missing file, bad hex,
 * more than cap bytes). */
size_t wire_read_hex(const char *rel, uint8_t *buf, size_t cap);

#endif /* WIRE_VECTORS_H */
