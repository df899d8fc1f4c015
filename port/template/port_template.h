/* SPDX-License-Identifier: Apache-2.0 */
/* A port skeleton: copy port/template/ to port/<your-board>/, rename template_ to your
 * board's prefix and fill in every function of port_template.c (README.md beside this file
 * gives the steps). Until then each hook answers DPM_ERR_UNSUPPORTED, and the conformance
 * suite (tests/support/port_conformance.h) names each one that is still missing. */
#ifndef DPM_PORT_TEMPLATE_H
#define DPM_PORT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size of the persistent region the SDK gets (ledger + outbox; see dpm/device.h for the
 * minimum of each). On flash: a whole number of erase sectors. */
#ifndef TEMPLATE_STORAGE_SIZE
#define TEMPLATE_STORAGE_SIZE 16384u
#endif

/* Everything the port keeps between calls (no globals: one per device instance). Put your
 * driver handles here: the flash controller, the TRNG, the socket. */
typedef struct {
    int placeholder; /* replace with your state */
} template_port_t;

/* 0, or < 0 when the hardware did not come up. */
int template_port_init(template_port_t *p);
dpm_rng_t template_rng(template_port_t *p);
dpm_clock_t template_clock(template_port_t *p);
dpm_storage_t template_storage(template_port_t *p);
/* A connected byte stream to the collector (raw TCP here; port/tls layers TLS on top). */
dpm_transport_t template_transport(template_port_t *p);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_TEMPLATE_H */
