/* The POSIX port (Linux, macOS): CSPRNG, clocks, file storage, TCP transport. */
#ifndef DPM_PORT_POSIX_H
#define DPM_PORT_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- clock ---- */
dpm_clock_t dpm_posix_clock(void);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_POSIX_H */
