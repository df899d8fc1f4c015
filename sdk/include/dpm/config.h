/* SPDX-License-Identifier: Apache-2.0 */
/* Compile-time configuration. The chain, first definition wins:
 *   1. the user's file, named by -DDPM_CONFIG_FILE="my_dpm_config.h";
 *   2. Kconfig (CONFIG_DPM_* from an autoconf header, e.g. Zephyr, ESP-IDF or kconfiglib);
 *   3. the defaults below;
 *   4. checks that stop the build on values the code cannot honour.
 * Kconfig (top-level file) declares the same options with the same defaults; a test keeps
 * them equal. */
#ifndef DPM_CONFIG_H
#define DPM_CONFIG_H

#if defined(DPM_CONFIG_FILE)
#include DPM_CONFIG_FILE
#endif

/* ---- 2. Kconfig bridge ------------------------------------------------------------------ */
#if defined(CONFIG_DPM)
#if !defined(DPM_MAX_BINS) && defined(CONFIG_DPM_MAX_BINS)
#define DPM_MAX_BINS CONFIG_DPM_MAX_BINS
#endif
#if !defined(DPM_MAX_GROUPS) && defined(CONFIG_DPM_MAX_GROUPS)
#define DPM_MAX_GROUPS CONFIG_DPM_MAX_GROUPS
#endif
#if !defined(DPM_MAX_GRR_K) && defined(CONFIG_DPM_MAX_GRR_K)
#define DPM_MAX_GRR_K CONFIG_DPM_MAX_GRR_K
#endif
#if !defined(DPM_FRAC_BITS) && defined(CONFIG_DPM_FRAC_BITS)
#define DPM_FRAC_BITS CONFIG_DPM_FRAC_BITS
#endif
#if !defined(DPM_EPS_MAX) && defined(CONFIG_DPM_EPS_MAX)
#define DPM_EPS_MAX CONFIG_DPM_EPS_MAX
#endif
#if !defined(DPM_RAND_BUF_BYTES) && defined(CONFIG_DPM_RAND_BUF_BYTES)
#define DPM_RAND_BUF_BYTES CONFIG_DPM_RAND_BUF_BYTES
#endif
#if !defined(DPM_CRC32_TABLE) && defined(CONFIG_DPM_CRC32_TABLE)
#define DPM_CRC32_TABLE CONFIG_DPM_CRC32_TABLE
#endif
#if !defined(DPM_OUTBOX_COPY_RATIO) && defined(CONFIG_DPM_OUTBOX_COPY_RATIO)
#define DPM_OUTBOX_COPY_RATIO CONFIG_DPM_OUTBOX_COPY_RATIO
#endif
#if !defined(DPM_LEDGER_MAX_CAMPAIGNS) && defined(CONFIG_DPM_LEDGER_MAX_CAMPAIGNS)
#define DPM_LEDGER_MAX_CAMPAIGNS CONFIG_DPM_LEDGER_MAX_CAMPAIGNS
#endif
#if !defined(DPM_POLICY_MAX_RULES) && defined(CONFIG_DPM_POLICY_MAX_RULES)
#define DPM_POLICY_MAX_RULES CONFIG_DPM_POLICY_MAX_RULES
#endif
/* dpauc and ustat_bins / ustat_tree (issue 17) */
#if !defined(DPM_DPAUC_MAX_THRESHOLDS) && defined(CONFIG_DPM_DPAUC_MAX_THRESHOLDS)
#define DPM_DPAUC_MAX_THRESHOLDS CONFIG_DPM_DPAUC_MAX_THRESHOLDS
#endif
#if !defined(DPM_USTAT_MAX_DEPTH) && defined(CONFIG_DPM_USTAT_MAX_DEPTH)
#define DPM_USTAT_MAX_DEPTH CONFIG_DPM_USTAT_MAX_DEPTH
#endif
#ifndef DPM_MECH_DPAUC
#if defined(CONFIG_DPM_MECH_DPAUC)
#define DPM_MECH_DPAUC 1
#else
#define DPM_MECH_DPAUC 0
#endif
#endif
#ifndef DPM_MECH_USTAT
#if defined(CONFIG_DPM_MECH_USTAT)
#define DPM_MECH_USTAT 1
#else
#define DPM_MECH_USTAT 0
#endif
#endif
/* Booleans: Kconfig leaves a disabled option undefined, so presence means 1, absence 0. */
#ifndef DPM_MECH_ROC_HIST
#if defined(CONFIG_DPM_MECH_ROC_HIST)
#define DPM_MECH_ROC_HIST 1
#else
#define DPM_MECH_ROC_HIST 0
#endif
#endif
#ifndef DPM_MECH_TUPLE
#if defined(CONFIG_DPM_MECH_TUPLE)
#define DPM_MECH_TUPLE 1
#else
#define DPM_MECH_TUPLE 0
#endif
#endif
#ifndef DPM_UPLOAD
#if defined(CONFIG_DPM_UPLOAD)
#define DPM_UPLOAD 1
#else
#define DPM_UPLOAD 0
#endif
#endif
#ifndef DPM_MECH_TUPLE_ML
#if defined(CONFIG_DPM_MECH_TUPLE_ML)
#define DPM_MECH_TUPLE_ML 1
#else
#define DPM_MECH_TUPLE_ML 0
#endif
#endif
/* FedAUC */
#ifndef DPM_MECH_FEDAUC
#if defined(CONFIG_DPM_MECH_FEDAUC)
#define DPM_MECH_FEDAUC 1
#else
#define DPM_MECH_FEDAUC 0
#endif
#endif
#if !defined(DPM_FEDAUC_MAX_EXAMPLES) && defined(CONFIG_DPM_FEDAUC_MAX_EXAMPLES)
#define DPM_FEDAUC_MAX_EXAMPLES CONFIG_DPM_FEDAUC_MAX_EXAMPLES
#endif
/* Two aggregators: Prio3 (issue 30) */
#ifndef DPM_VDAF
#if defined(CONFIG_DPM_VDAF)
#define DPM_VDAF 1
#else
#define DPM_VDAF 0
#endif
#endif
#ifndef DPM_VDAF_FIELD64
#if defined(CONFIG_DPM_VDAF_FIELD64)
#define DPM_VDAF_FIELD64 1
#else
#define DPM_VDAF_FIELD64 0
#endif
#endif
#ifndef DPM_VDAF_MULTIHOT
#if defined(CONFIG_DPM_VDAF_MULTIHOT)
#define DPM_VDAF_MULTIHOT 1
#else
#define DPM_VDAF_MULTIHOT 0
#endif
#endif
#ifndef DPM_DAP_LABEL_RR
#if defined(CONFIG_DPM_DAP_LABEL_RR)
#define DPM_DAP_LABEL_RR 1
#else
#define DPM_DAP_LABEL_RR 0
#endif
#endif
/* The Mbed TLS profile of port/tls (a Kconfig choice: exactly one is set) */
#ifndef DPM_TLS_LEAN
#if defined(CONFIG_DPM_TLS_LEAN)
#define DPM_TLS_LEAN 1
#else
#define DPM_TLS_LEAN 0
#endif
#endif
#ifndef DPM_TLS_LEAN_AES
#if defined(CONFIG_DPM_TLS_LEAN_AES)
#define DPM_TLS_LEAN_AES 1
#else
#define DPM_TLS_LEAN_AES 0
#endif
#endif
#ifndef DPM_TLS_DEVICE
#if defined(CONFIG_DPM_TLS_DEVICE)
#define DPM_TLS_DEVICE 1
#else
#define DPM_TLS_DEVICE 0
#endif
#endif
#endif /* CONFIG_DPM */

/* ---- 3. defaults --------------------------------------------------------------------- */
#ifndef DPM_MAX_BINS
#define DPM_MAX_BINS 64 /* score bins / thresholds per histogram report */
#endif
#ifndef DPM_MAX_GROUPS
#define DPM_MAX_GROUPS 16 /* demographic groups d of a tuple campaign */
#endif
#ifndef DPM_MAX_GRR_K
#define DPM_MAX_GRR_K 256 /* largest GRR domain k */
#endif
#ifndef DPM_FRAC_BITS
#define DPM_FRAC_BITS 16 /* F of the Q(F) value grid that Laplace noise lives on */
#endif
#ifndef DPM_EPS_MAX
#define DPM_EPS_MAX 64 /* largest ε (integer) a campaign may request */
#endif
#ifndef DPM_LEDGER_MAX_CAMPAIGNS
#define DPM_LEDGER_MAX_CAMPAIGNS 4 /* campaigns one privacy ledger tracks at once */
#endif
#ifndef DPM_POLICY_MAX_RULES
#define DPM_POLICY_MAX_RULES 4 /* per-campaign rules of the app's privacy policy */
#endif
#ifndef DPM_MECH_ROC_HIST
#define DPM_MECH_ROC_HIST 1
#endif
#ifndef DPM_MECH_TUPLE
#define DPM_MECH_TUPLE 1
#endif
/* The device's HTTP upload and campaign decoding (dpm_device_flush, dpm_device_accept_campaign). */
#ifndef DPM_UPLOAD
#define DPM_UPLOAD 1
#endif
/* tuple_ml (its Laplace sampler, ~10 KB on a Cortex-M4) with the tuples. */
#ifndef DPM_MECH_TUPLE_ML
#define DPM_MECH_TUPLE_ML DPM_MECH_TUPLE
#endif
#ifndef DPM_MECH_DPAUC
#define DPM_MECH_DPAUC 1
#endif
#ifndef DPM_MECH_USTAT
#define DPM_MECH_USTAT 1
#endif
#ifndef DPM_DPAUC_MAX_THRESHOLDS
#define DPM_DPAUC_MAX_THRESHOLDS 25 /* dpauc: decision thresholds N per report (4N counts) */
#endif
#ifndef DPM_USTAT_MAX_DEPTH
#define DPM_USTAT_MAX_DEPTH 16 /* ustat_tree: tree depth α (2^α score values) */
#endif
#ifndef DPM_MECH_FEDAUC
#define DPM_MECH_FEDAUC 1 /* fedauc_rr / fedauc_lap (rank contributions, two rounds) */
#endif
#ifndef DPM_FEDAUC_MAX_EXAMPLES
#define DPM_FEDAUC_MAX_EXAMPLES 65536 /* examples one device may upload (buffers: the app's) */
#endif
#ifndef DPM_VDAF
#define DPM_VDAF 1 /* two aggregators: Prio3 sharding and verification (dpm/expert/vdaf.h) */
#endif
#ifndef DPM_VDAF_FIELD64
#define DPM_VDAF_FIELD64 1 /* the Field64 variants (Count, Sum, SumVecMultiproof, HigherDegree) */
#endif
#ifndef DPM_VDAF_MULTIHOT
#define DPM_VDAF_MULTIHOT 1 /* Prio3MultihotCountVec */
#endif
#ifndef DPM_DAP_LABEL_RR
#define DPM_DAP_LABEL_RR DPM_VDAF /* tasks with local label RR (DPM_DAP_EXT_LOCAL_LABEL_RR) */
#endif
/* The Mbed TLS profile port/tls is built against (port/tls/config/dpm_mbedtls_<profile>.h; the
 * build picks the file: MBEDTLS_CONFIG=device, device_lean or device_lean_aes). No effect on
 * the SDK library. */
#ifndef DPM_TLS_LEAN
#define DPM_TLS_LEAN 0 /* TLS 1.3 only, P-256, ChaCha20-Poly1305, no RSA */
#endif
#ifndef DPM_TLS_LEAN_AES
#define DPM_TLS_LEAN_AES 0 /* the same with AES-128-GCM */
#endif
#ifndef DPM_TLS_DEVICE /* TLS 1.3 and 1.2, RSA, X25519 too; a plain 0 or 1 (build_config.h) */
#if DPM_TLS_LEAN || DPM_TLS_LEAN_AES
#define DPM_TLS_DEVICE 0
#else
#define DPM_TLS_DEVICE 1
#endif
#endif
/* Bytes fetched from the port RNG per refill. The buffer lives in the device between calls,
 * so it is sized to the build: the histogram and rank mechanisms draw many Laplace samples per
 * report and 256 bytes amortise the port call; a tuple report draws about one 64-byte refill
 * (4 metrics, 16 groups, report id included: tuple_mr 296 bits, tuple_ml 377-443 bits on
 * average), so a tuple-only build fetches 64 and its device holds 192 bytes less. */
#ifndef DPM_RAND_BUF_BYTES
#if DPM_MECH_ROC_HIST || DPM_MECH_DPAUC || DPM_MECH_USTAT || DPM_MECH_FEDAUC
#define DPM_RAND_BUF_BYTES 256
#else
#define DPM_RAND_BUF_BYTES 64
#endif
#endif
/* Entries of the CRC-32 table behind the ledger's and the outbox's records: 16 (64 bytes of
 * flash, two lookups a byte, taken four bytes a step) or 256 (1 KiB, one lookup a byte: on
 * Cortex-M4 no faster than 16 since the four-byte step, bench_cm.elf's device_path under QEMU,
 * port/README.md), or 0: no table, the port's CRC unit
 * (dpm_port_crc32, dpm/port.h; checked against known values at open). The values, and so the
 * storage format, are the same every way. */
#ifndef DPM_CRC32_TABLE
#define DPM_CRC32_TABLE 16
#endif
/* How fast the outbox's compaction in steps copies (dpm/bits/storage.h, "Compaction"): each
 * report appended copies at least this many times its own bytes of the log into the other bank, so
 * no report call copies the whole bank; a bank then holds pending reports up to (4m - 1) / (4m + 7)
 * of its log, m = R - 1, less two records of slack: 58 % for R = 4 (about 4 records copied per
 * report call, `make bench`, device_path.worst), 77 % for 8, 88 % for 16. 0: no steps, the call
 * that finds the bank full compacts all of it (the whole bank usable, about 0.8 KB less flash on
 * Cortex-M4). Same storage format whatever the value. */
#ifndef DPM_OUTBOX_COPY_RATIO
#define DPM_OUTBOX_COPY_RATIO 4
#endif

/* ---- 4. checks ----------------------------------------------------------------------- */
#if DPM_OUTBOX_COPY_RATIO != 0 && (DPM_OUTBOX_COPY_RATIO < 2 || DPM_OUTBOX_COPY_RATIO > 16)
#error "DPM_OUTBOX_COPY_RATIO must be 0 (compact in one call) or in [2, 16] (see dpm/config.h)"
#endif
#if DPM_CRC32_TABLE != 0 && DPM_CRC32_TABLE != 16 && DPM_CRC32_TABLE != 256
#error "DPM_CRC32_TABLE must be 16 (64-byte table), 256 (1 KiB) or 0 (dpm_port_crc32)"
#endif
#if DPM_MAX_BINS < 2 || DPM_MAX_BINS > 64
#error "DPM_MAX_BINS must be in [2, 64] (the wire format, sdk/proto/dpm.options, holds 64)"
#endif
#if DPM_MAX_GROUPS < 2 || DPM_MAX_GROUPS > 256
#error "DPM_MAX_GROUPS must be in [2, 256]"
#endif
#if DPM_MAX_GRR_K < 2 || DPM_MAX_GRR_K > 65536
#error "DPM_MAX_GRR_K must be in [2, 65536]"
#endif
#if DPM_FRAC_BITS < 4 || DPM_FRAC_BITS > 30
#error "DPM_FRAC_BITS must be in [4, 30]"
#endif
#if DPM_EPS_MAX < 1 || DPM_EPS_MAX > 1024
#error "DPM_EPS_MAX must be in [1, 1024]"
#endif
#if DPM_RAND_BUF_BYTES < 16 || DPM_RAND_BUF_BYTES > 4096 || (DPM_RAND_BUF_BYTES % 8) != 0
#error "DPM_RAND_BUF_BYTES must be a multiple of 8 in [16, 4096]"
#endif
#if DPM_LEDGER_MAX_CAMPAIGNS < 1 || DPM_LEDGER_MAX_CAMPAIGNS > 32
#error "DPM_LEDGER_MAX_CAMPAIGNS must be in [1, 32]"
#endif
#if DPM_POLICY_MAX_RULES < 1 || DPM_POLICY_MAX_RULES > 64
#error "DPM_POLICY_MAX_RULES must be in [1, 64]"
#endif
#if (DPM_MECH_ROC_HIST != 0 && DPM_MECH_ROC_HIST != 1) ||                                          \
    (DPM_MECH_TUPLE != 0 && DPM_MECH_TUPLE != 1)
#error "DPM_MECH_ROC_HIST and DPM_MECH_TUPLE must be 0 or 1"
#endif
#if DPM_UPLOAD != 0 && DPM_UPLOAD != 1
#error "DPM_UPLOAD must be 0 or 1"
#endif
#if DPM_MECH_TUPLE_ML != 0 && DPM_MECH_TUPLE_ML != 1
#error "DPM_MECH_TUPLE_ML must be 0 or 1"
#endif
#if DPM_MECH_TUPLE_ML && !DPM_MECH_TUPLE
#error "DPM_MECH_TUPLE_ML=1 needs DPM_MECH_TUPLE=1 (tuple_ml is one of the tuple mechanisms)"
#endif
#if (DPM_MECH_DPAUC != 0 && DPM_MECH_DPAUC != 1) || (DPM_MECH_USTAT != 0 && DPM_MECH_USTAT != 1)
#error "DPM_MECH_DPAUC and DPM_MECH_USTAT must be 0 or 1"
#endif
#if DPM_DPAUC_MAX_THRESHOLDS < 2 || DPM_DPAUC_MAX_THRESHOLDS > 128
#error                                                                                             \
    "DPM_DPAUC_MAX_THRESHOLDS must be in [2, 128] (the wire format, sdk/proto/dpm.options, holds 128)"
#endif
#if DPM_USTAT_MAX_DEPTH < 1 || DPM_USTAT_MAX_DEPTH > 20
#error "DPM_USTAT_MAX_DEPTH must be in [1, 20] (the server keeps 2^(depth + 1) sums per class)"
#endif
#if DPM_MECH_FEDAUC != 0 && DPM_MECH_FEDAUC != 1
#error "DPM_MECH_FEDAUC must be 0 or 1"
#endif
#if DPM_FEDAUC_MAX_EXAMPLES < 1 || DPM_FEDAUC_MAX_EXAMPLES > 4194304
#error "DPM_FEDAUC_MAX_EXAMPLES must be in [1, 4194304] (2^22: keeps every rank sum in 64 bits)"
#endif
#if (DPM_VDAF != 0 && DPM_VDAF != 1) || (DPM_VDAF_FIELD64 != 0 && DPM_VDAF_FIELD64 != 1)
#error "DPM_VDAF and DPM_VDAF_FIELD64 must be 0 or 1"
#endif
#if (DPM_DAP_LABEL_RR != 0 && DPM_DAP_LABEL_RR != 1) || (DPM_DAP_LABEL_RR && !DPM_VDAF)
#error "DPM_DAP_LABEL_RR must be 0 or 1, and 1 only with DPM_VDAF (it is a two-aggregator option)"
#endif
#if (DPM_TLS_LEAN != 0 && DPM_TLS_LEAN != 1) ||                                                    \
    (DPM_TLS_LEAN_AES != 0 && DPM_TLS_LEAN_AES != 1) ||                                            \
    DPM_TLS_DEVICE + DPM_TLS_LEAN + DPM_TLS_LEAN_AES != 1
#error                                                                                             \
    "exactly one of DPM_TLS_DEVICE, DPM_TLS_LEAN and DPM_TLS_LEAN_AES must be 1 (the Mbed TLS profile of port/tls)"
#endif
#if (DPM_TLS_LEAN || DPM_TLS_LEAN_AES) && DPM_VDAF
#error                                                                                             \
    "the lean TLS profiles (DPM_TLS_LEAN, DPM_TLS_LEAN_AES) have no X25519, which the two-aggregator mode's HPKE needs: set DPM_VDAF=0, or use the device profile (DPM_TLS_DEVICE)"
#endif
#if !DPM_MECH_ROC_HIST && !DPM_MECH_TUPLE && !DPM_MECH_DPAUC && !DPM_MECH_USTAT && !DPM_MECH_FEDAUC
#error                                                                                             \
    "at least one mechanism must be compiled in (DPM_MECH_ROC_HIST, _TUPLE, _DPAUC, _USTAT or _FEDAUC)"
#endif

#endif /* DPM_CONFIG_H */
