/* SPDX-License-Identifier: Apache-2.0 */
/* A dpm_storage_t over a caller's RAM buffer: for examples, tests, simulators and devices with
 * battery-backed RAM. Nothing survives a power loss of ordinary RAM, and with it goes the
 * ledger: a device whose storage forgets lets its budget start again, so real devices keep the
 * ledger in flash or files (a port's storage). Erase sets bytes to 0xFF, writes copy (no NOR
 * bit-clearing), nothing tears. */
#ifndef DPM_RAM_STORAGE_H
#define DPM_RAM_STORAGE_H

#include <stdint.h>

#include "dpm/port.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint8_t *mem;
    uint32_t size;
} dpm_ram_storage_t;

/* Bind r to mem[0 .. size) (not owned; it must outlive the storage), erase it to 0xFF and return
 * the storage. A NULL r or mem gives a storage of size 0 whose every call fails. */
dpm_storage_t dpm_ram_storage(dpm_ram_storage_t *r, uint8_t *mem, uint32_t size);

#ifdef __cplusplus
}
#endif

#endif /* DPM_RAM_STORAGE_H */
