/* SPDX-License-Identifier: Apache-2.0 */
/* The dpmetrics version: the one place it is set.
 *
 * Semantic versioning (README "Versions and compatibility"): a patch release only fixes, a minor
 * release only adds, anything that breaks the API, the wire format or the other promises there
 * is a new major version. The three numbers below are the only ones to edit for a release;
 * everything else derives from them: DPM_VERSION_STRING and DPM_VERSION_NUMBER here,
 * dpm_version() in the library, the Makefile (DPM_VERSION, `make version`, `make dist`), the
 * tools' --version and the collector's /healthz. tests/e2e/test_version.py checks they agree. */
#ifndef DPM_VERSION_H
#define DPM_VERSION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_VERSION_MAJOR 0
#define DPM_VERSION_MINOR 1
#define DPM_VERSION_PATCH 0

/* The wire protocol: the N of the protobuf package dpm.vN and of the collector's /vN/ paths.
 * It changes only with a major version, and only for a wire change that breaks the rules in
 * sdk/proto/dpm.proto's header. */
#define DPM_WIRE_VERSION 1

/* "MAJOR.MINOR.PATCH", e.g. "0.1.0". */
#define DPM_VERSION_STR_(x) #x
#define DPM_VERSION_XSTR_(x) DPM_VERSION_STR_(x)
#define DPM_VERSION_STRING                                                                         \
    DPM_VERSION_XSTR_(DPM_VERSION_MAJOR)                                                           \
    "." DPM_VERSION_XSTR_(DPM_VERSION_MINOR) "." DPM_VERSION_XSTR_(DPM_VERSION_PATCH)

/* MAJOR * 65536 + MINOR * 256 + PATCH (0x000100 for 0.1.0), for compile-time checks:
 * #if DPM_VERSION_NUMBER >= 0x000200. Minor and patch stay below 256. */
#define DPM_VERSION_NUMBER                                                                         \
    ((DPM_VERSION_MAJOR * 65536) + (DPM_VERSION_MINOR * 256) + DPM_VERSION_PATCH)

/* The version of the library linked in, as DPM_VERSION_STRING (a static string, never NULL).
 * It can differ from the headers an application was compiled with if a prebuilt libdpm is
 * swapped: compare dpm_version_number() with DPM_VERSION_NUMBER to detect that. */
const char *dpm_version(void);

/* The linked library's DPM_VERSION_NUMBER. */
uint32_t dpm_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* DPM_VERSION_H */
