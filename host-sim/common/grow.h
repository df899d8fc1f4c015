/* SPDX-License-Identifier: Apache-2.0 */
/* Growing arrays: the collector's lists (rejects, reports, quota counters, deltas, claims) append
 * one item at a time and double their capacity when full. */
#ifndef DPM_HOST_GROW_H
#define DPM_HOST_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for one more item in the array arr (a T *: n of cap items used): if it is full, arr is
 * reallocated to twice cap items (first when cap is 0) and cap updated. 0, or -1 when memory
 * runs out (or the size would overflow): arr and cap are then unchanged. */
#define HOST_GROW(arr, n, cap, first) host_grow(&(arr), (n), &(cap), sizeof(*(arr)), (first))

/* HOST_GROW's work; arr_ptr is the address of the array's pointer. */
static inline int host_grow(void *arr_ptr, size_t n, size_t *cap, size_t size, size_t first)
{
    if (n < *cap) {
        return 0;
    }
    size_t c = *cap > 0 ? 2 * *cap : first;
    if (c <= *cap || c > SIZE_MAX / size) {
        return -1;
    }
    void *items;
    memcpy(&items, arr_ptr, sizeof(items));
    void *p = realloc(items, c * size);
    if (p == NULL) {
        return -1;
    }
    memcpy(arr_ptr, &p, sizeof(p));
    *cap = c;
    // cppcheck-suppress memleak ; (p is the caller's array now: stored through arr_ptr)
    return 0;
}

#endif
