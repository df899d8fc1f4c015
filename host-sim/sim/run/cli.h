/* SPDX-License-Identifier: Apache-2.0 */
/* Shared pieces of the dpm-sim command line: option values, the subcommands implemented in
 * their own files, and running a plotting script. */
#ifndef DPM_SIM_CLI_H
#define DPM_SIM_CLI_H

#include <stdint.h>

#define SIM_PYTHON "/usr/bin/python3"
#define SIM_PLOT_SCRIPT "host-sim/plot/sim.py"

/* Exit statuses of every subcommand. */
#define SIM_EXIT_OK 0
#define SIM_EXIT_CHECK 1 /* ran, but a check failed (planner, repro, network counts) */
#define SIM_EXIT_USAGE 2 /* usage, scenario or runtime error */

/* Parse an unsigned integer (digits, or an exact integer in e-notation up to 2^53; never
 * hexadecimal). */
int sim_cli_u64(const char *s, uint64_t *out);
/* Parse a finite double written as a plain decimal (text_is_decimal: no hexadecimal, inf, nan). */
int sim_cli_double(const char *s, double *out);
/* Default thread count: online CPUs, at most 16. */
unsigned sim_cli_default_threads(void);
/* Run `python3 script dir`. 1 done, 0 skipped (script or python missing), -1 failed. */
int sim_cli_plot(const char *script, const char *dir);

/* 1 when the progress line should be drawn: stderr is a terminal and no --quiet. */
int sim_cli_progress(int quiet);

int sim_cmd_bench(int argc, char **argv);
int sim_cmd_repro(int argc, char **argv);

#endif /* DPM_SIM_CLI_H */
