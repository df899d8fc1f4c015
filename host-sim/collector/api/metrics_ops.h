/* SPDX-License-Identifier: Apache-2.0 */
/* The operator's side of /metrics (metrics.h): the text buffer it is written into, the
 * dpm_collector_build_info and process_* families (CPU, memory, descriptors, threads, start
 * time: from /proc, as the Prometheus client libraries export them), and the "# HELP" line of
 * every family, added before its "# TYPE" line. */
#ifndef DPM_COLLECTOR_METRICS_OPS_H
#define DPM_COLLECTOR_METRICS_OPS_H

#include <stddef.h>

#include "common/json_write.h"

/* The text: a heap-buffer writer (jw_buffer; jw_raw appends, err when memory runs out). */
typedef jw_t coll_text_t;

/* Append build_info and the process_* metrics. */
void coll_metrics_process(coll_text_t *t);

/* The help text of a metric family (name[0, len)), or NULL when it has none. */
const char *coll_metrics_help(const char *family, size_t len);

/* in with "# HELP family text" before each "# TYPE family ..." line, into out (a new buffer). */
void coll_metrics_add_help(const coll_text_t *in, coll_text_t *out);

#endif /* DPM_COLLECTOR_METRICS_OPS_H */
