/* SPDX-License-Identifier: Apache-2.0 */
/* Linked into the Cortex-M images of `make coverage` only (.make/cortex-m.mk COVERAGE=1 builds
 * port/cortex-m with --coverage and links with --wrap=_exit --wrap=dpm_cm_exit): writes the
 * gcov counters to the host before the image stops.
 *
 * The toolchain's libgcov is built without a C library (no file output, no __gcov_exit); it
 * does provide __gcov_info_to_gcda, which turns one object's counters into .gcda bytes through
 * callbacks. So this file keeps the objects' gcov_info pointers (each instrumented object's
 * constructor calls __gcov_init), and on the way out writes every one with newlib's stdio,
 * which librdimon turns into semihosting calls: QEMU writes the file on the host, next to the
 * object. Both ways out dump: exit() ends in _exit, a fault in dpm_cm_exit. Each image writes
 * fresh files (no merge); .make/coverage-cm.sh keeps each image's files apart and
 * .make/coverage.py takes the union.
 * What this cannot count, so the report shows it as missed: the reset handler's first lines
 * (its entry and the .data copy run before its own loop zeroes .bss, counters included, and
 * gcov derives the next block from the lost entry count), and the exit itself (_exit,
 * dpm_cm_exit: the counters are written just before). */
#include <stdio.h>
#include <stdlib.h>

struct gcov_info;
void __gcov_info_to_gcda(const struct gcov_info *info, void (*filename_fn)(const char *, void *),
                         void (*dump_fn)(const void *, unsigned, void *),
                         void *(*allocate_fn)(unsigned, void *), void *arg);
void __gcov_init(struct gcov_info *info);
void __gcov_exit(void);
void __real__exit(int status) __attribute__((noreturn));
void __real_dpm_cm_exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));
void __wrap_dpm_cm_exit(int status) __attribute__((noreturn));

#define MAX_OBJECTS 16 /* port/cortex-m has 4 sources */
static struct gcov_info *objects[MAX_OBJECTS];
static unsigned n_objects;

void __gcov_init(struct gcov_info *info)
{
    if (n_objects < MAX_OBJECTS) {
        objects[n_objects++] = info;
    } else {
        printf("cm_coverage: more than %u instrumented objects, raise MAX_OBJECTS\n", MAX_OBJECTS);
    }
}

/* Each object's destructor calls this; the startup code runs no destructors. */
void __gcov_exit(void)
{
}

static void open_file(const char *name, void *arg)
{
    FILE **f = arg;
    *f = fopen(name, "wb");
    if (*f == NULL) {
        printf("cm_coverage: cannot write %s\n", name);
    }
}

static void write_bytes(const void *data, unsigned len, void *arg)
{
    FILE **f = arg;
    if (*f != NULL) {
        (void)fwrite(data, 1, len, *f);
    }
}

/* Only value profiling asks for memory; --coverage (arcs) does not. */
static void *allocate(unsigned len, void *arg)
{
    (void)arg;
    return malloc(len);
}

static void dump(void)
{
    for (unsigned i = 0; i < n_objects; i++) {
        FILE *f = NULL;
        __gcov_info_to_gcda(objects[i], open_file, write_bytes, allocate, &f);
        if (f != NULL) {
            (void)fclose(f);
        }
    }
    n_objects = 0; /* once: _exit may follow dpm_cm_exit's caller */
}

void __wrap__exit(int status)
{
    dump();
    __real__exit(status);
}

void __wrap_dpm_cm_exit(int status)
{
    dump();
    __real_dpm_cm_exit(status);
}
