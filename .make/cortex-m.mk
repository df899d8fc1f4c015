# SPDX-License-Identifier: Apache-2.0
# Bare-metal Cortex-M builds (used by .make/cross.sh, .make/size.sh and .make/bench.py):
#   make -f .make/cortex-m.mk CM=cortex-m4 [OPT=-Os] [OUT=dir] [EXTRA_CFLAGS=...] images|lib|tls|example|bench
# CM: cortex-m3 (QEMU mps2-an385), cortex-m4 (mps2-an386, soft float), cortex-m4-fpu (the same
# with the FPU on: hard-float ABI; the SDK uses no floating point, the tests and libc do).
# Outputs under OUT (default build/cortex-m/<CM>):
#   libdpm.a           the SDK + nanopb runtime for the target
#   libdpm_cm.a        port/cortex-m (with the test generator: these images are tests)
#   tests/<name>.elf   one image per test program: the unchanged cmocka tests, linked with
#                      cmocka built from its Debian source (cross-deps) and newlib/rdimon
#   tests.list         the images, for run-tests.sh
#   cortex-m-example.elf   examples/cortex-m;   bench_cm.elf   tests/cross/bench_cm.c
#   libdpm_tls.a       port/tls (device Mbed TLS config), for make size
SHELL := /bin/bash
CM ?= cortex-m4
# V=1 prints every command; by default one short line per step.
Q := $(if $(filter 1,$(V)),,@)
BUILD_DIR ?= build
OUT ?= $(BUILD_DIR)/cortex-m/$(CM)
OPT ?= -O2 -g
CROSS := arm-none-eabi-
CC := $(CROSS)gcc
AR := $(CROSS)ar

CPU_cortex-m3 := -mcpu=cortex-m3 -mthumb -mfloat-abi=soft
CPU_cortex-m4 := -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
CPU_cortex-m4-fpu := -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
CPU := $(CPU_$(CM))
ifeq ($(CPU),)
$(error CM=$(CM): expected cortex-m3, cortex-m4 or cortex-m4-fpu)
endif

NANOPB_DIR := $(BUILD_DIR)/src/nanopb
CMOCKA_DIR := $(BUILD_DIR)/src/cmocka
WARNINGS := -Wall -Wextra -Wconversion -Wshadow -Wstrict-prototypes -Wundef -Werror
BASE_CFLAGS := -std=c99 $(OPT) $(CPU) -ffunction-sections -fdata-sections -MMD -MP \
               -Isdk/include -Iport/include -Isdk/proto -isystem $(NANOPB_DIR) $(EXTRA_CFLAGS) \
               -DPB_SYSTEM_HEADER='"dpm_nanopb_rename.h"'
# ^ as on the host (Makefile's NANOPB_PRIVATE): nanopb renamed dpm_pb_* and PB_BUFFER_ONLY, the
#   runtime and every file that includes its headers agreeing on both
SDK_CFLAGS := $(BASE_CFLAGS) $(WARNINGS) -Isdk/src/internal -Isdk/src
PORT_CFLAGS := $(BASE_CFLAGS) $(WARNINGS) -DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
NANOPB_CFLAGS := $(BASE_CFLAGS) -Wall -Werror
# Test code as on the host (tests/ is not held to -Wconversion there either), and without
# -Wformat: newlib's uint32_t is unsigned long, which the tests print with %u (the same width
# on every 32-bit ARM target, so the output is right).
TEST_CFLAGS := $(BASE_CFLAGS) $(WARNINGS) -DDPM_SIMULATOR_API -Wno-conversion -Wno-format -Itests/support -Ihost-sim -Isdk/src/internal \
               -Isdk/src -isystem $(CMOCKA_DIR)/include -DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
# cmocka's own source, without its config.h: newlib has signal() (never raised here) but no
# clock_gettime, so cmocka skips its timings.
CMOCKA_CFLAGS := -std=gnu99 $(OPT) $(CPU) -ffunction-sections -fdata-sections \
                 -isystem $(CMOCKA_DIR)/include -DHAVE_SIGNAL_H -DHAVE_MALLOC_H -DHAVE_INTTYPES_H -w
LDFLAGS := $(CPU) --specs=rdimon.specs -nostartfiles -Tport/cortex-m/mps2.ld -Wl,--gc-sections \
           -Wl,--no-warn-rwx-segments
# COVERAGE=1 (make coverage): port/cortex-m with gcov counters, written through semihosting when
# an image exits or faults (tests/cross/cm_coverage.c); the SDK is measured on the host.
COVERAGE_OBJS :=
ifeq ($(COVERAGE),1)
PORT_CFLAGS += -O0 --coverage
LDFLAGS += --coverage -Wl,--wrap=_exit -Wl,--wrap=dpm_cm_exit
COVERAGE_OBJS := $(OUT)/obj/tests/cross/cm_coverage.o
endif

# Objects rebuild when the compiler or flags change (as the host Makefile's FLAGS_STAMP does):
# without it a flag change (OPT, EXTRA_CFLAGS, COVERAGE, a new -D) left stale objects behind.
FLAGS_STAMP := $(OUT)/.cflags
# (MBEDTLS_CONFIG: the Mbed TLS profile port/tls compiles against, below.)
MBEDTLS_CONFIG ?= device
FLAGS_NOW := $(CC) $(SDK_CFLAGS) | $(PORT_CFLAGS) | $(TEST_CFLAGS) | $(NANOPB_CFLAGS) | $(CMOCKA_CFLAGS) | $(LDFLAGS) | $(MBEDTLS_CONFIG)
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
$(shell mkdir -p $(OUT))
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))
# The SDK's sources: sdk/sources.mk's list (the one every build reads).
DPM_ROOT := $(CURDIR)
DPM_SOURCES_LISTS_ONLY := 1
include sdk/sources.mk
SDK_SRCS := $(patsubst $(DPM_ROOT)/%,%,$(DPM_SDK_SRCS))
NANOPB_OBJS := $(addprefix $(OUT)/obj/nanopb/,pb_common.o pb_encode.o pb_decode.o)
# (ctr_drbg.c, the production random source, needs Mbed TLS: linked only where Mbed TLS is.)
PORT_SRCS := $(filter-out port/cortex-m/ctr_drbg.c,$(sort $(wildcard port/cortex-m/*.c)))
# Test programs and support code that need nothing but the C library: not the host-sim ones,
# not those of the posix or TLS port, and not those using POSIX headers (sockets, files,
# threads, clocks), nor host-sim's campaign text (common/edges: the collector's and dpm-sim's,
# tested with POSIX fmemopen; edges.c is not linked into the images). New SDK tests are picked up
# without a list to maintain.
# (mech/: host-sim's own mech/ headers only; the SDK's private sdk/src/mech/ ones share the prefix.)
HOST_MECH_HDRS := $(shell cd host-sim/mech 2>/dev/null && ls *.h | paste -sd'|')
HOSTED := '^\#include ["<](sim/|estimate/|aggregator/|collector/|mech/(base/|$(HOST_MECH_HDRS))|common/edges|dpm/port_posix|dpm/port_tls|sys/|unistd|pthread|poll|netinet|arpa)'
# (A source counts as hosted if it or its own header includes one of them.)
bare_metal = $(shell for f in $(1); do cat $$f $${f%.c}.h 2>/dev/null | grep -qE $(HOSTED) || echo $$f; done)
CM_TEST_SRCS := $(call bare_metal,$(sort $(wildcard tests/unit/test_*.c tests/vectors/test_*.c \
                  tests/cross/test_*.c)))
# (host-sim/common: the test helpers use its special functions and JSON reader, which reads
# files with text_list.c; plain C.)
CM_SUPPORT_SRCS := $(call bare_metal,$(sort $(wildcard tests/support/*.c))) host-sim/common/prob.c \
                   host-sim/common/json_read.c host-sim/common/text_list.c
LIBDPM := $(OUT)/libdpm.a
LIBCM := $(OUT)/libdpm_cm.a
LIBSUPPORT := $(OUT)/libsupport.a
LIBCMOCKA := $(OUT)/libcmocka.a
IMAGES := $(patsubst %.c,$(OUT)/tests/%.elf,$(notdir $(CM_TEST_SRCS)))

# port/tls against Mbed TLS's device config (make size: the default+tls build), or the lean
# one with MBEDTLS_CONFIG=device_lean (make size: default+lean_tls; needs DPM_VDAF=0).
MBEDTLS_SRC := $(BUILD_DIR)/src/mbedtls
TLS_CFLAGS := $(BASE_CFLAGS) $(WARNINGS) -isystem $(MBEDTLS_SRC)/include \
              -isystem $(MBEDTLS_SRC)/3rdparty/everest/include -Iport/tls/config \
              -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_$(MBEDTLS_CONFIG).h"'

# Mbed TLS for the target under the device config, at this CPU and optimisation level: the
# two-aggregator images (bench_dap_cm, the HPKE and DAP tests) seal and open with it.
empty :=
space := $(empty) $(empty)
# MBED_ANALYSIS=1: with -fstack-usage -fcallgraph-info=su, for the stack image below (own dir).
MBED_ANALYSIS_FLAGS := $(if $(filter 1,$(MBED_ANALYSIS)),-fstack-usage -fcallgraph-info=su)
MBED_CM := $(BUILD_DIR)/mbedtls/$(CM)$(subst $(space),,$(OPT))$(if $(filter-out device,$(MBEDTLS_CONFIG)),-$(MBEDTLS_CONFIG))$(if $(MBED_ANALYSIS_FLAGS),-su)
MBED_CM_LIBS := $(MBED_CM)/library/libmbedtls.a $(MBED_CM)/library/libmbedx509.a \
                $(MBED_CM)/library/libmbedcrypto.a
$(MBED_CM_LIBS) &: $(wildcard port/tls/config/dpm_mbedtls_device*.h) .make/build-mbedtls.sh
	@MBEDTLS_SRC=$(MBEDTLS_SRC) bash .make/build-mbedtls.sh $(CM) $(MBED_CM) \
	  $(CURDIR)/port/tls/config/dpm_mbedtls_$(MBEDTLS_CONFIG).h -DCMAKE_SYSTEM_NAME=Generic \
	  -DCMAKE_SYSTEM_PROCESSOR=arm -DCMAKE_C_COMPILER=$(CC) -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY \
	  -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DCMAKE_BUILD_TYPE= \
	  "-DCMAKE_C_FLAGS=$(CPU) $(OPT) -ffunction-sections -fdata-sections $(MBED_ANALYSIS_FLAGS)"
# port/tls's HPKE, DAP opening and arena (its objects, for images that link Mbed TLS)
CM_TLS_OBJS := $(OUT)/obj/port/tls/hpke.o $(OUT)/obj/port/tls/dap_open.o $(OUT)/obj/port/tls/tls_client.o

.PHONY: images lib example bench tls state stack drbg
images: $(IMAGES) $(OUT)/exit_control.elf $(OUT)/fault_control.elf example
	@printf '%s\n' $(IMAGES) >$(OUT)/tests.list
lib: $(LIBDPM)
tls: $(OUT)/libdpm_tls.a $(OUT)/size_state_tls.o
state: $(OUT)/size_state.o
example: $(OUT)/cortex-m-example.elf
bench: $(OUT)/bench_cm.elf $(OUT)/bench_vdaf_cm.elf $(OUT)/bench_dap_cm.elf
# the production random source's object (make size links it into the tuple images' stack build)
drbg: $(OUT)/obj/port/cortex-m/ctr_drbg.o
# tests/cross/stack_cm.c: the painted-stack check (tests/cross/test_cm_stack.sh builds it with
# make size's tuple_min flags and MBED_ANALYSIS=1, and compares with the static figure)
stack: $(OUT)/stack_cm.elf

$(LIBDPM): $(call obj,$(SDK_SRCS)) $(NANOPB_OBJS)
$(LIBCM): $(call obj,$(PORT_SRCS))
$(LIBSUPPORT): $(call obj,$(CM_SUPPORT_SRCS))
$(LIBCMOCKA): $(OUT)/obj/cmocka/cmocka.o
$(OUT)/libdpm_tls.a: $(OUT)/obj/port/tls/tls_client.o $(OUT)/obj/port/tls/hpke.o \
                     $(OUT)/obj/port/tls/dap_open.o
$(LIBDPM) $(LIBCM) $(LIBSUPPORT) $(LIBCMOCKA) $(OUT)/libdpm_tls.a:
	@rm -f $@
	@printf '  %-3s %s\n' AR $@
	$(Q)$(AR) rcs $@ $^

$(OUT)/obj/sdk/%.o: sdk/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(SDK_CFLAGS) -c $< -o $@
$(OUT)/obj/port/%.o: port/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(PORT_CFLAGS) -c $< -o $@
$(OUT)/obj/port/tls/%.o: port/tls/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TLS_CFLAGS) -c $< -o $@
$(OUT)/obj/port/cortex-m/ctr_drbg.o: port/cortex-m/ctr_drbg.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TLS_CFLAGS) -c $< -o $@
$(OUT)/obj/tests/cross/stack_cm.o: tests/cross/stack_cm.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TEST_CFLAGS) -isystem $(MBEDTLS_SRC)/include -Iport/tls/config \
	  -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_$(MBEDTLS_CONFIG).h"' -c $< -o $@
$(OUT)/obj/tests/%.o: tests/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@
$(OUT)/obj/host-sim/%.o: host-sim/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@
$(OUT)/obj/examples/%.o: examples/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(PORT_CFLAGS) -c $< -o $@
$(OUT)/obj/nanopb/%.o: $(NANOPB_DIR)/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(NANOPB_CFLAGS) -c $< -o $@
$(OUT)/obj/cmocka/cmocka.o: $(CMOCKA_DIR)/src/cmocka.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(CMOCKA_CFLAGS) -c $< -o $@

# One image per test program (tests/unit, tests/vectors or tests/cross): the test, the TAP
# switch, then the libraries (support code is pulled from an archive only as far as used).
define image_rule
$(OUT)/tests/%.elf: $(OUT)/obj/tests/$(1)/%.o $(OUT)/obj/tests/cross/cm_tap.o $(COVERAGE_OBJS) $(LIBSUPPORT) \
                    $(LIBCMOCKA) $(LIBCM) $(LIBDPM)
	@mkdir -p $$(dir $$@)
	@printf '  %-3s %s\n' LD $$@
	$(Q)$$(CC) $$(LDFLAGS) -Wl,-Map=$$@.map -o $$@ $$^ $$(TLS_LINK) -lm
endef
# Tests of port/tls's HPKE and DAP opening (they include dpm/port_hpke.h or dpm/port_dap.h) run
# here too: their images also link those objects, Mbed TLS for the target and an arena for it
# (tests/cross/cm_arena.c); the group resolves the objects' calls back into libdpm.
CM_TLS_TEST_SRCS := $(foreach f,$(CM_TEST_SRCS),$(if $(shell grep -lE '^\#include "dpm/port_(hpke|dap)\.h"' \
                      $(f) 2>/dev/null),$(f)))
CM_TLS_TESTS := $(foreach f,$(CM_TLS_TEST_SRCS),$(OUT)/tests/$(notdir $(f:.c=.elf)))
# Their objects see Mbed TLS's headers under the same config (test_x25519 and test_gcm_x86
# compare port/tls's code with Mbed TLS's own).
CM_TLS_TEST_OBJS := $(foreach f,$(CM_TLS_TEST_SRCS),$(OUT)/obj/$(f:.c=.o))
$(CM_TLS_TEST_OBJS): TEST_CFLAGS += -isystem $(MBEDTLS_SRC)/include \
                                    -isystem $(MBEDTLS_SRC)/3rdparty/everest/include -Iport/tls/config \
                                    -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_$(MBEDTLS_CONFIG).h"'
$(CM_TLS_TESTS): TLS_LINK = $(CM_TLS_OBJS) $(OUT)/obj/tests/cross/cm_arena.o -Wl,--start-group \
                            $(LIBSUPPORT) $(LIBDPM) $(MBED_CM_LIBS) -Wl,--end-group
$(CM_TLS_TESTS): | $(CM_TLS_OBJS) $(OUT)/obj/tests/cross/cm_arena.o $(MBED_CM_LIBS)
$(foreach d,unit vectors cross,$(eval $(call image_rule,$(d))))

# port/template, compiled as port code, in its conformance test's image (as on the host).
$(OUT)/tests/test_port_template.elf: $(OUT)/obj/port/template/port_template.o

$(OUT)/cortex-m-example.elf: $(OUT)/obj/examples/cortex-m/firmware.o $(COVERAGE_OBJS) $(LIBCM) $(LIBDPM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,-Map=$@.map -o $@ $^
$(OUT)/bench_cm.elf: $(OUT)/obj/tests/cross/bench_cm.o $(LIBCM) $(LIBDPM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,-Map=$@.map -o $@ $^
$(OUT)/bench_dap_cm.elf: $(OUT)/obj/tests/cross/bench_dap_cm.o $(CM_TLS_OBJS) $(LIBSUPPORT) $(LIBCM) \
                         $(LIBDPM) $(MBED_CM_LIBS)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,-Map=$@.map -o $@ $^ -lm
$(OUT)/bench_vdaf_cm.elf: $(OUT)/obj/tests/cross/bench_vdaf_cm.o $(LIBCM) $(LIBDPM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,-Map=$@.map -o $@ $^

$(OUT)/stack_cm.elf: $(OUT)/obj/tests/cross/stack_cm.o $(OUT)/obj/port/cortex-m/ctr_drbg.o $(LIBCM) \
                    $(LIBDPM) $(MBED_CM_LIBS)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,--emit-relocs -Wl,-Map=$@.map -o $@ $(filter %.o,$^) -Wl,--start-group \
	  $(filter %.a,$^) -Wl,--end-group
	@echo $(MBED_CM) >$(OUT)/mbed-dir

# make size: the caller-owned state of this configuration (tests/cross/size_state.c).
$(OUT)/size_state.o: tests/cross/size_state.c $(FLAGS_STAMP)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@
$(OUT)/size_state_tls.o: tests/cross/size_state.c $(FLAGS_STAMP)
	$(Q)$(CC) $(TLS_CFLAGS) -DDPM_SIZE_TLS -c $< -o $@

# The harness's negative controls (tests/cross/test_cm_checks.sh).
$(OUT)/exit_control.elf: tests/cross/cm_control.c $(COVERAGE_OBJS) $(LIBCM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $^
$(OUT)/fault_control.elf: tests/cross/cm_control.c $(COVERAGE_OBJS) $(LIBCM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(TEST_CFLAGS) -DCM_CONTROL_FAULT $(LDFLAGS) -o $@ $^

.SECONDARY:
-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
