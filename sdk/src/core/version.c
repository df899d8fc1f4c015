/* SPDX-License-Identifier: Apache-2.0 */
/* The library's version, from dpm/version.h (the one place it is set). */
#include "dpm_internal.h"

#include "dpm/version.h"

typedef char version_fits[DPM_VERSION_MINOR < 256 && DPM_VERSION_PATCH < 256 ? 1 : -1];

const char *dpm_version(void)
{
    return DPM_VERSION_STRING;
}

uint32_t dpm_version_number(void)
{
    return (uint32_t)DPM_VERSION_NUMBER;
}
