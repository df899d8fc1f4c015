/* SPDX-License-Identifier: Apache-2.0 */
/* libdpmsim.so: dpm-sim's core as a shared library, the C API the Python package binds
 * (host-sim/python, ctypes). Every call runs the same code as the dpm-sim command, in the caller's
 * process, so its files and numbers equal dpm-sim's bit for bit (tests/python/test_simulate.py).
 *
 * Calls are independent (no state between them); a call never exits or aborts the process:
 * every failure is a status and a message. Statuses are dpm-sim's exit statuses. */
#ifndef DPM_SIM_LIB_DPMSIM_H
#define DPM_SIM_LIB_DPMSIM_H

#include <stddef.h>
#include <stdint.h>

/* Raised when a call's meaning changes; the binding refuses a library of another version. */
#define DPMSIM_API_VERSION 1

#define DPMSIM_OK 0    /* done */
#define DPMSIM_CHECK 1 /* ran, but a check failed (a planner found no verified K) */
#define DPMSIM_USAGE 2 /* bad arguments, a bad scenario or population file, a runtime error */

#define DPMSIM_MAX_DEVICES 16 /* entries in a devices sweep */

/* What `dpm-sim --scenario F` takes on its command line, beside the scenario. A zero field keeps
 * the scenario's value (mode, runs, devices) or the default (threads). */
typedef struct {
    int mode;         /* 0: the scenario's; 1 inprocess; 2 exact (network mode: the command) */
    uint32_t threads; /* 1 .. 16; 0: online CPUs, at most 16 */
    uint32_t runs;    /* 1 .. 10^7 */
    uint32_t seed_set;
    uint64_t seed;
    uint32_t ndevices; /* the devices sweep instead of the scenario's, each >= 2 */
    uint64_t devices[DPMSIM_MAX_DEVICES];
} dpmsim_run_opts_t;

int dpmsim_api_version(void);
/* The SDK's version string (dpm-sim --version). */
const char *dpmsim_version(void);

/* Run the scenario file at path as `dpm-sim --scenario PATH --out OUT_DIR --quiet --no-plot`
 * with o's overrides (o may be NULL), writing results.json, runs.csv, summary.csv (and the
 * mechanisms' own files) into out_dir. DPMSIM_OK, or DPMSIM_USAGE with the reason in err
 * (a scenario or population error names the file and line). */
int dpmsim_run(const char *scenario, const char *out_dir, const dpmsim_run_opts_t *o, char *err,
               size_t errcap);

/* `dpm-sim plan ARGS...`: argv[0 .. argc) are the arguments after "plan". Its answer goes where
 * `--json FILE` says; its messages to standard output and error (the binding captures them). */
int dpmsim_plan(int argc, const char *const *argv);

#endif /* DPM_SIM_LIB_DPMSIM_H */
