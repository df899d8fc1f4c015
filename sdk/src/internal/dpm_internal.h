/* Included first by every sdk/ source file. It forbids the heap at compile time (the nm test
 * in tests/unit checks the linked library as well) and holds small shared helpers. */
#ifndef DPM_INTERNAL_H
#define DPM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dpm/config.h"
#include "dpm/status.h"

#pragma GCC poison malloc calloc realloc free

#define DPM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif /* DPM_INTERNAL_H */
