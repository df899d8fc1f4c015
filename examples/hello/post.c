/* SPDX-License-Identifier: Apache-2.0 */
/* hello-post: hello (main.c) that posts. The same local examples and campaign make one charged,
 * perturbed tuple_mr report, kept in a state file, then posted to a collector over TLS with the
 * posix port (dpm/port_posix_app.h: CSPRNG, file storage, clock, TLS). Eight dpm_* calls in all,
 * port glue included (tests/unit/test_examples.sh counts them).
 *
 *   hello-post https://localhost:8443 ca.pem state.bin
 *
 * Exit 0: reported and posted. Exit 1: a step failed; the message says which and why. A report
 * that could not be posted (no collector, TLS refused) stays in the state file, and the next
 * run, refused a second report in the same period, posts it (exit 3: no new report, the kept
 * ones posted). The collector must announce the same campaign (id 1: tuple_mr, epsilon 1,
 * 4 groups, TPR). */
#include <stdio.h>

#include "dpm/dpm.h"
#include "dpm/port_posix_app.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: hello-post https://HOST:PORT CA.pem STATE-FILE\n");
        return 2;
    }
    static dpm_posix_app_t app;
    static dpm_device_t dev;
    dpm_device_config_t cfg = {.policy.defaults = {0, DPM_EPS(1), DPM_EPS(1)}}; /* ε: DPM_EPS */
    dpm_campaign_t campaign = {.id = 1,
                               .mechanism = DPM_MECH_ID_TUPLE_MR,
                               .eps = DPM_EPS(1),
                               .budget = DPM_EPS(1),
                               .groups = 4,
                               .nmetrics = 1,
                               .metrics = {DPM_METRIC_TPR}};
    const int labels[6] = {1, 1, 0, 1, 0, 0}, predictions[6] = {1, 0, 0, 1, 1, 0};
    dpm_confusion_t conf = {0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        dpm_confusion_add(&conf, labels[i], predictions[i]);
    }
    dpm_mech_t mech;
    dpm_report_info_t info;
    static dpm_upload_result_t res;
    dpm_status_t st = dpm_posix_app_open(
        &app, &(dpm_posix_app_config_t){.url = argv[1], .ca_path = argv[2], .state_path = argv[3]},
        &cfg);
    if (st == DPM_OK) {
        st = dpm_device_init(&dev, &cfg);
    }
    if (st == DPM_OK) {
        st = dpm_device_accept_mech(&dev, &campaign, &mech, NULL);
    }
    if (st == DPM_OK) {
        st = dpm_device_report_tuple(&dev, &mech, 0, /* group */ 2, &conf, &info);
    }
    dpm_status_t made = st; /* DPM_ERR_BUDGET: an earlier run made this period's report */
    if (st == DPM_OK || st == DPM_ERR_BUDGET) {
        st = dpm_posix_app_post(&app, &dev, &res); /* this report and any an earlier run kept */
    }
    if (st != DPM_OK) { /* the port or the device says why: which step, which limit */
        fprintf(stderr, "hello-post: %s (%s)\n", dpm_posix_app_why(&app, &dev), dpm_strerror(st));
        return 1;
    }
    if (made != DPM_OK) {
        printf("hello-post: no new report (this period's budget is spent); posted what was kept: "
               "%u delivered, %u pending\n",
               res.delivered, res.pending);
        return 3;
    }
    printf("hello-post: one tuple_mr report of %u bytes posted: %u delivered, %u pending\n",
           info.bytes, res.delivered, res.pending);
    return 0;
}
