/* SPDX-License-Identifier: Apache-2.0 */
/* Failing with a reason (see err.h). */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>

int host_fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err != NULL && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}
