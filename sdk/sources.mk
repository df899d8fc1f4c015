# SPDX-License-Identifier: Apache-2.0
# The dpmetrics SDK for Makefile projects (GNU make). Include this file, compile DPM_SRCS with
# DPM_CFLAGS added to your own C99 flags, link the objects; your own files include <dpm/dpm.h>
# with DPM_APP_CFLAGS. README "Using the SDK in your build" has a complete example.
#
# Set before including (all optional):
#   DPM_ROOT        the dpmetrics checkout (default: the directory above this file)
#   DPM_NANOPB_DIR  a nanopb 0.4.x runtime source directory (pb_encode.c, pb_decode.c,
#                   pb_common.c, pb.h ...; default $(DPM_ROOT)/build/src/nanopb, where
#                   `make deps` puts 0.4.7). The generated sdk/proto/dpm.pb.[ch] need 0.4.x.
#   DPM_CONFIG      compile-time options for the SDK AND your files, e.g.
#                   -DDPM_CONFIG_FILE='"my_dpm_config.h"' or -include autoconf.h (Kconfig)
#
# Defined here:
#   DPM_SDK_SRCS     the SDK: every sdk/src/*/*.c and the generated sdk/proto/dpm.pb.c
#   DPM_NANOPB_SRCS  the nanopb runtime (compiled private to the SDK: its functions are renamed
#                    dpm_pb_*, so your own nanopb, if any, never clashes with it)
#   DPM_SRCS         both
#   DPM_INCLUDE_DIR  the public include root (<dpm/dpm.h>)
#   DPM_CFLAGS       flags to compile DPM_SRCS with
#   DPM_APP_CFLAGS   flags your files need to include the SDK
#   DPM_POSIX_SRCS, DPM_PORT_INCLUDE_DIR
#                    the posix port and TLS client (port/posix, port/tls): Linux/macOS only, and
#                    they need Mbed TLS 3.6 headers (-I, and its -DMBEDTLS_CONFIG_FILE) and
#                    libraries of yours; the SDK itself needs neither.
#
# This is the one list of the SDK's sources: the Makefile, .make/cortex-m.mk, CMake
# (sdk/cmake/dpm_sources.cmake reads the `DPM_SDK_SRCS += ` and `DPM_POSIX_SRCS += ` lines, so
# keep one file per line in that form) and the scripts (`make -s print-sdk-srcs`) all use it.
# A new file in sdk/src needs its line here: tests/unit/test_sdk_sources.sh says which is missing.
DPM_ROOT ?= $(patsubst %/sdk/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
DPM_NANOPB_DIR ?= $(DPM_ROOT)/build/src/nanopb
DPM_CONFIG ?=
# Without the runtime every SDK file would fail later with "pb.h: No such file": say what to do.
# (The dpmetrics Makefile reads only the lists, DPM_SOURCES_LISTS_ONLY=1, and checks for itself.)
ifneq ($(DPM_SOURCES_LISTS_ONLY),1)
ifeq ($(wildcard $(DPM_NANOPB_DIR)/pb.h),)
$(error dpmetrics: no nanopb runtime in DPM_NANOPB_DIR=$(DPM_NANOPB_DIR) (pb.h is missing): \
  run `make deps` in $(DPM_ROOT), which puts nanopb 0.4.7 there, or set DPM_NANOPB_DIR to a \
  nanopb 0.4.x source directory before including sdk/sources.mk)
endif
endif

DPM_SDK_SRCS :=
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/budget/ledger.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/budget/memo.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/core/eps.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/core/persist.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/core/ram_storage.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/core/status.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/core/version.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/device/device.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/device/device_dap.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/device/layout.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/dpauc.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/fedauc.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/fedauc_wire.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/mech.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/roc_hist.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/registry.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/tuple.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/mech/ustat.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/grr.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/laplace.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/laplace_fixed.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/rand.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/sampler.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/noise/xexp.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/batch_text.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/batch_wire.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/campaign.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/dap.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/hpke_config.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/report/report.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/stats/confusion.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/stats/score_hist.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/upload/fetch.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/upload/http.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/upload/outbox.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/upload/upload.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/aes128.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/keccak.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/prio3.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/prio3_f128.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/prio3_f64.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/src/vdaf/xof.c
DPM_SDK_SRCS += $(DPM_ROOT)/sdk/proto/dpm.pb.c

# The posix port and TLS client.
DPM_POSIX_SRCS :=
DPM_POSIX_SRCS += $(DPM_ROOT)/port/posix/app.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/posix/clock.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/posix/rng.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/posix/storage.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/posix/tcp.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/tls/dap_open.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/tls/hpke.c
DPM_POSIX_SRCS += $(DPM_ROOT)/port/tls/tls_client.c

DPM_NANOPB_SRCS := $(addprefix $(DPM_NANOPB_DIR)/,pb_common.c pb_encode.c pb_decode.c)
DPM_SRCS := $(DPM_SDK_SRCS) $(DPM_NANOPB_SRCS)
DPM_INCLUDE_DIR := $(DPM_ROOT)/sdk/include
DPM_CFLAGS := -I$(DPM_INCLUDE_DIR) -I$(DPM_ROOT)/sdk/src/internal -I$(DPM_ROOT)/sdk/src \
              -I$(DPM_ROOT)/sdk/proto -I$(DPM_NANOPB_DIR) \
              -DPB_SYSTEM_HEADER='"dpm_nanopb_rename.h"' $(DPM_CONFIG)
DPM_APP_CFLAGS := -I$(DPM_INCLUDE_DIR) $(DPM_CONFIG)
DPM_PORT_INCLUDE_DIR := $(DPM_ROOT)/port/include
