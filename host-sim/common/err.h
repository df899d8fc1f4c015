/* SPDX-License-Identifier: Apache-2.0 */
/* The host side's one way to fail with a reason: format it into the caller's buffer and return
 * -1, so that a reader (campaigns, credentials, the deny list, the stores) can say
 * `return host_fail(err, cap, "line %d: ...", line);` in one statement. */
#ifndef DPM_HOST_ERR_H
#define DPM_HOST_ERR_H

#include <stddef.h>

#if defined(__GNUC__)
#define HOST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HOST_PRINTF(f, a)
#endif

/* err[0 .. cap) gets the message (truncated, always terminated when cap > 0); returns -1. */
int host_fail(char *err, size_t cap, const char *fmt, ...) HOST_PRINTF(3, 4);

#endif
