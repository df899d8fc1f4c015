/* SPDX-License-Identifier: Apache-2.0 */
/* Shared command-line helpers (see cli.h). */
#include "sim/run/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/text_list.h"
#include "sim/devices/mech.h"

int sim_cli_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == '\0' && errno == 0) {
        *out = v;
        return 0;
    }
    /* else an exponent form of an integer (1e6), read as a decimal: never hexadecimal */
    double d;
    if (sim_cli_double(s, &d) != 0 || d < 0.0 || d > 9007199254740992.0 || d != floor(d)) {
        return -1;
    }
    *out = (uint64_t)d;
    return 0;
}

int sim_cli_double(const char *s, double *out)
{
    char *end = NULL;
    if (s == NULL || !text_is_decimal(s)) {
        return -1; /* not "0x10", "0x1p3", "inf", " 1" */
    }
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !isfinite(v)) {
        return -1;
    }
    *out = v;
    return 0;
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
