/* SPDX-License-Identifier: Apache-2.0 */
/* Linked into every Cortex-M test image: a bare-metal program has no environment, so this
 * gives it the one variable the host test runner sets, CMOCKA_MESSAGE_OUTPUT=TAP, before
 * main() runs (the reset handler runs constructors first). The tests themselves are the
 * unchanged cmocka programs of tests/unit and tests/vectors. */
#include <stdlib.h>

extern char **environ;

static char tap[] = "CMOCKA_MESSAGE_OUTPUT=TAP";
static char *cm_environ[] = {tap, NULL};

__attribute__((constructor)) static void cm_tap_output(void)
{
    environ = cm_environ;
}
