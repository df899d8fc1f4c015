# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034 # sourced: the names are used by its callers
# The API that make size measures (sourced by .make/size.sh and tests/unit/test_size_budget.sh).
# DEVICE_API: what an app on the one-call device API calls (dpm/device.h: init, accept a
# campaign, one report call per kind, flush, the outbox and ledger accessors) plus the helpers
# around it (RAM storage, a campaign GET, posting the outbox itself, a ledger reset after
# corruption). Every dpm_device_* function of the library is rooted as well (DEVICE_PREFIX), so a
# new device call is counted without editing this list; the names listed must exist.
DEVICE_API="dpm_strerror dpm_eps_from_decimal dpm_eps_format dpm_confusion_add dpm_ram_storage
  dpm_device_init_abi dpm_device_accept_campaign dpm_device_accept_mech dpm_device_report_tuple
  dpm_device_flush dpm_device_outbox dpm_device_ledger dpm_campaign_get dpm_outbox_pending
  dpm_outbox_next dpm_outbox_read dpm_outbox_remove dpm_outbox_format dpm_ledger_spent
  dpm_ledger_reset dpm_upload_next_attempt_ms"
# DEVICE_API_MIN: the same app when it posts the outbox's records with its own HTTPS stack and
# gives campaigns as structs (DPM_UPLOAD 0: make size's tuple_min): no campaign GET, no upload
# schedule.
DEVICE_API_MIN=$(tr -s ' \n' '\n' <<<"$DEVICE_API" | grep -vxE 'dpm_campaign_get|dpm_upload_next_attempt_ms' | tr '\n' ' ')
DEVICE_PREFIX="dpm_device_"
# The tuple builds (make size's tuple_only and tuple_min; the painted-stack image's flags):
# only the tuple mechanisms; tuple_min without tuple_ml and without the SDK's upload.
TUPLE_ONLY="-DDPM_MECH_ROC_HIST=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_FEDAUC=0 -DDPM_MECH_USTAT=0 -DDPM_VDAF=0"
TUPLE_MIN="$TUPLE_ONLY -DDPM_MECH_TUPLE_ML=0 -DDPM_UPLOAD=0"
# The other report kinds of the default build, with the local statistics an app builds for them
# (roc_hist, dpauc, ustat) and FedAUC's two rounds (upload, the secret of fedauc_rr, report).
OTHER_API="dpm_device_report_roc_hist dpm_device_report_roc_hist_group dpm_score_hist_init
  dpm_score_hist_add dpm_mech_score_bins dpm_device_report_dpauc dpm_dpauc_counts_init
  dpm_dpauc_counts_add dpm_mech_dpauc dpm_device_report_ustat_bins dpm_device_report_ustat_tree
  dpm_device_fedauc_upload dpm_device_memo_open dpm_device_report_fedauc"
# The report calls whose own worst-case stack make size prints (one call each).
REPORT_CALLS="dpm_device_report_tuple dpm_device_report_roc_hist dpm_device_report_roc_hist_group
  dpm_device_report_dpauc dpm_device_report_ustat_bins dpm_device_report_ustat_tree
  dpm_device_fedauc_upload dpm_device_report_fedauc"
# The two-aggregator mode (dpm/expert/device_dap.h): a firmware that takes tasks and makes DAP reports
# (every Prio3 variant's call is rooted through DAP_PREFIX), picks an aggregator's HPKE
# configuration, and seals with port/tls's HPKE: the encapsulations prepared ahead when idle
# (dpm_dap_pool_fill into a pool, whose seal hook the report call uses) and inline when the
# pool has none. Only the default+tls+dap build roots these: the other builds stay the
# local-DP app they measured before the mode existed.
DAP_API="dpm_device_dap_accept_task dpm_device_dap_report_sumvec dpm_device_dap_report_histogram
  dpm_hpke_config_list_select dpm_hpke_sealer dpm_dap_report_bytes dpm_hpke_pool_init
  dpm_hpke_pool_clear dpm_hpke_pool_sealer dpm_dap_pool_fill"
DAP_PREFIX="dpm_device_dap_"
