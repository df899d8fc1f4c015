/* SPDX-License-Identifier: Apache-2.0 */
/* dpmetrics: the one header an app includes. The code's layers (sdk/src/<layer>), each calling
 * only layers listed after it:
 *   device  the app's entry point: campaigns, report calls, the device-wide ε cap;
 *   upload  outbox, HTTP, campaign fetch;      report  wire format (nanopb), DAP reports;
 *   mech    mechanisms: statistic + noise + parameters -> report body (uses noise);
 *   vdaf    Prio3 sharding (two-aggregator mode);  budget  the privacy ledger;
 *   stats   local statistics;  noise  exact samplers;  core  storage, status, version.
 * Known crossing: report and mech include each other's headers (mech fills report's body
 * types; report calls mech's FedAUC internals), to be folded into per-mechanism ops.
 * port.h is what a platform provides. */
#ifndef DPM_DPM_H
#define DPM_DPM_H

#include "dpm/batch.h"
#include "dpm/budget.h"
#include "dpm/config.h"
#include "dpm/dap.h"
#include "dpm/device.h"
#include "dpm/device_dap.h"
#include "dpm/dpauc.h"
#include "dpm/fedauc.h"
#include "dpm/hpke.h"
#include "dpm/mech.h"
#include "dpm/memo.h"
#include "dpm/noise.h"
#include "dpm/port.h"
#include "dpm/ram_storage.h"
#include "dpm/report.h"
#include "dpm/roc_hist.h"
#include "dpm/stats.h"
#include "dpm/status.h"
#include "dpm/tuple.h"
#include "dpm/types.h"
#include "dpm/upload.h"
#include "dpm/ustat.h"
#include "dpm/vdaf.h"
#include "dpm/version.h"

#endif /* DPM_DPM_H */
