/* SPDX-License-Identifier: Apache-2.0 */
/* Shared command-line helpers (see cli.h). */
#include "sim/run/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/text_list.h"
#include "sim/devices/mech.h"

int sim_cli_u64(const char *s, uint64_t *out)
{
    /* an option's number starts with a digit: "+5" and ".5e1" are refused here */
    return s != NULL && *s >= '0' && *s <= '9' ? text_u64(s, out) : -1;
}

int sim_cli_double(const char *s, double *out)
{
    return s != NULL ? text_double(s, out) : -1; /* not "0x10", "0x1p3", "inf", " 1" */
}

unsigned sim_cli_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (n > (long)SIM_MAX_THREADS ? SIM_MAX_THREADS : (unsigned)n);
}

int sim_cli_plot(const char *script, const char *dir)
{
    if (access(script, R_OK) != 0 || access(SIM_PYTHON, X_OK) != 0) {
        printf("plots: skipped (%s or %s not found; run from the repository root or pass "
               "--plot-script)\n",
               script, SIM_PYTHON);
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl(SIM_PYTHON, SIM_PYTHON, script, dir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "dpm-sim: %s %s %s failed\n", SIM_PYTHON, script, dir);
        return -1;
    }
    return 1;
}

int sim_cli_progress(int quiet)
{
    return !quiet && isatty(STDERR_FILENO);
}
