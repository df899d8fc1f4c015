/* SPDX-License-Identifier: Apache-2.0 */
/* Linked into the Cortex-M test images that use Mbed TLS (port/tls's HPKE: test_hpke_vectors,
 * test_dap): the device config gives Mbed TLS no allocator until an arena is installed, as on a
 * device, so this installs one before main() runs (the reset handler runs constructors first).
 * 64 KiB: a seal or an open needs a few hundred bytes; the tests' TLS-free code needs none. */
#include <stdint.h>

#include "dpm/port_tls.h"

__attribute__((constructor)) static void cm_arena(void)
{
    static uint8_t arena[65536];
    (void)dpm_tls_use_arena(arena, sizeof(arena));
}
