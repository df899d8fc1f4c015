/* SPDX-License-Identifier: Apache-2.0 */
/* dpmetrics: the one header an app includes. It declares what an app uses and nothing else:
 *   dpm/device.h    the device: open it, accept campaigns, one call per report, post the
 *                   outbox (dpm_device_flush), why a call refused;
 *   dpm/campaign.h  a campaign and the mechanism built from it;
 *   dpm/stats.h     the app's local examples: confusion counts, score histograms, dpauc counts;
 *   dpm/port.h      what a platform provides (random source, clock, storage, transport), and
 *   dpm/ram_storage.h  a storage in RAM;
 *   dpm/types.h     ε (DPM_EPS), scores;  dpm/status.h  statuses;  dpm/version.h  versions.
 * The layouts of the structs an app allocates are in dpm/bits/ (not an API). Everything else
 * (the samplers, the ledger, the outbox, the uploader, mechanism parameters and report
 * bodies, Prio3, HPKE, DAP) is expert API under dpm/expert/: include those headers by name.
 *
 * The code's layers (sdk/src/<layer>), each calling only layers listed after it, except the
 * crossing named below:
 *   device  the front door: campaigns, report calls, the device-wide ε cap, layout;
 *   upload  outbox, uploader, HTTP client, campaign fetch;
 *   report  the wire format (nanopb for decoding; reports are written directly), DAP reports;
 *   mech    mechanisms: statistic + noise + parameters -> report body, one ops table;
 *   vdaf    Prio3 sharding (two-aggregator mode);  budget  the privacy ledger, the memo;
 *   stats   local statistics;  noise  exact samplers;  core  storage, status, ε, version.
 * Crossing: mech and report use each other (a mechanism's ops, mech/mech_ops.h, fill and check
 * report's body types and take its receipts; report's codec calls the ops). */
#ifndef DPM_DPM_H
#define DPM_DPM_H

#include "dpm/campaign.h"
#include "dpm/device.h"
#include "dpm/port.h"
#include "dpm/ram_storage.h"
#include "dpm/stats.h"
#include "dpm/status.h"
#include "dpm/types.h"
#include "dpm/version.h"

#endif /* DPM_DPM_H */
