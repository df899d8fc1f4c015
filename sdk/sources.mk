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
#   DPM_SDK_SRCS     the SDK: sdk/src/*/*.c and the generated sdk/proto/dpm.pb.c
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
DPM_ROOT ?= $(patsubst %/sdk/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
DPM_NANOPB_DIR ?= $(DPM_ROOT)/build/src/nanopb
DPM_CONFIG ?=
# Without the runtime every SDK file would fail later with "pb.h: No such file": say what to do.
ifeq ($(wildcard $(DPM_NANOPB_DIR)/pb.h),)
$(error dpmetrics: no nanopb runtime in DPM_NANOPB_DIR=$(DPM_NANOPB_DIR) (pb.h is missing): \
  run `make deps` in $(DPM_ROOT), which puts nanopb 0.4.7 there, or set DPM_NANOPB_DIR to a \
  nanopb 0.4.x source directory before including sdk/sources.mk)
endif

DPM_SDK_SRCS := $(sort $(wildcard $(DPM_ROOT)/sdk/src/*/*.c)) $(DPM_ROOT)/sdk/proto/dpm.pb.c
DPM_NANOPB_SRCS := $(addprefix $(DPM_NANOPB_DIR)/,pb_common.c pb_encode.c pb_decode.c)
DPM_SRCS := $(DPM_SDK_SRCS) $(DPM_NANOPB_SRCS)
DPM_INCLUDE_DIR := $(DPM_ROOT)/sdk/include
DPM_CFLAGS := -I$(DPM_INCLUDE_DIR) -I$(DPM_ROOT)/sdk/src/internal -I$(DPM_ROOT)/sdk/src \
              -I$(DPM_ROOT)/sdk/proto -I$(DPM_NANOPB_DIR) \
              -DPB_SYSTEM_HEADER='"dpm_nanopb_rename.h"' $(DPM_CONFIG)
DPM_APP_CFLAGS := -I$(DPM_INCLUDE_DIR) $(DPM_CONFIG)

DPM_POSIX_SRCS := $(sort $(wildcard $(DPM_ROOT)/port/posix/*.c $(DPM_ROOT)/port/tls/*.c))
DPM_PORT_INCLUDE_DIR := $(DPM_ROOT)/port/include
