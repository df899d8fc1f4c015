/* SPDX-License-Identifier: Apache-2.0 */
#include "dpm_internal.h"

const char *dpm_strerror(dpm_status_t status)
{
    switch (status) {
    case DPM_OK: return "ok";
    case DPM_ERR_PARAM: return "invalid parameter";
    case DPM_ERR_RANGE: return "value out of representable range";
    case DPM_ERR_UNDEFINED: return "statistic undefined (zero denominator)";
    case DPM_ERR_BUFFER: return "buffer too small";
    case DPM_ERR_RNG: return "random source failed";
    case DPM_ERR_STORAGE: return "storage failed";
    case DPM_ERR_TRANSPORT: return "transport failed";
    case DPM_ERR_BUDGET: return "privacy budget exhausted";
    case DPM_ERR_CORRUPT: return "data corrupted";
    case DPM_ERR_TLS: return "TLS failure";
    case DPM_ERR_PROTOCOL: return "protocol violation";
    case DPM_ERR_TIMEOUT: return "timed out";
    case DPM_ERR_UNSUPPORTED: return "not compiled in";
    case DPM_ERR_POLICY: return "refused by the app's privacy policy";
    case DPM_ERR_CONFIG: return "app and library built with different configurations";
    case DPM_ERR_VERIFY: return "report failed verification (invalid proof or joint randomness)";
    case DPM_ERR_LEDGER_FULL:
        return "privacy ledger full (a campaign period must end, or raise "
               "DPM_LEDGER_MAX_CAMPAIGNS)";
    case DPM_ERR_AUTH:
        return "the collector refused the device's credential: fix or renew the token or "
               "certificate (reports stay queued)";
    }
    return "unknown status";
}
