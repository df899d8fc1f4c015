/* SPDX-License-Identifier: Apache-2.0 */
/* Negative controls for the Cortex-M test harness (tests/cross/test_cm_checks.sh): built once
 * as is, it must make QEMU exit with status 3 (so a failing image fails its run), and once
 * with -DCM_CONTROL_FAULT, where it reads unmapped memory: the fault handler must report it
 * and exit with 128 + 3 (HardFault) instead of hanging. */
#include <stdint.h>
#include <stdio.h>

int main(void)
{
#ifdef CM_CONTROL_FAULT
    printf("control: reading unmapped memory\n");
    return (int)*(volatile uint32_t *)0xF0000000u;
#else
    printf("control: exit status 3\n");
    return 3;
#endif
}
