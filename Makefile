# SPDX-License-Identifier: Apache-2.0
# dpmetrics: the one entry point. `make help` lists the targets.
#   make CROSS_COMPILE=arm-linux-gnueabihf-   cross build (outputs under build/<triplet>/)
#   make BUILD_DIR=/tmp/dpm                    build somewhere else
SHELL := /bin/bash
.DEFAULT_GOAL := all

BUILD_DIR ?= build
CROSS_COMPILE ?=
CC := $(CROSS_COMPILE)gcc
AR := $(CROSS_COMPILE)ar
NM := $(CROSS_COMPILE)nm
TARGET := $(if $(CROSS_COMPILE),$(patsubst %-,%,$(CROSS_COMPILE)),host)
VARIANT ?=
OUT := $(BUILD_DIR)/$(TARGET)$(if $(VARIANT),-$(VARIANT))
PYTHON := /usr/bin/python3
# `make V=1` prints every command; by default one short line per step.
ifeq ($(V),1)
Q :=
else
Q := @
endif

MBEDTLS_DIR := $(BUILD_DIR)/mbedtls/$(TARGET)
MBEDTLS_SRC := $(BUILD_DIR)/src/mbedtls
MBEDTLS_LIBS := $(MBEDTLS_DIR)/library/libmbedtls.a $(MBEDTLS_DIR)/library/libmbedx509.a \
                $(MBEDTLS_DIR)/library/libmbedcrypto.a
# The nanopb runtime: what `make deps` fetches, or a directory of yours (DPM_NANOPB_DIR=...).
NANOPB_DIR := $(or $(DPM_NANOPB_DIR),$(BUILD_DIR)/src/nanopb)
# Its files, which the SDK objects wait for (rule below: fetched by make deps, except by `make lib`).
NANOPB_RUNTIME := $(addprefix $(NANOPB_DIR)/,pb.h pb_common.c pb_encode.c pb_decode.c)
NANOPB_FETCH := $(if $(filter-out lib,$(or $(MAKECMDGOALS),all)),$(if $(filter command line environment,$(origin DPM_NANOPB_DIR)),,1))
# Hosted Linux targets (the host, cross builds for ARM Linux, s390x...) use the host config;
# anything else (bare metal) the minimal device config, or its lean TLS 1.3-only profile when
# the Kconfig .config chooses one (DPM_TLS_LEAN, DPM_TLS_LEAN_AES; or MBEDTLS_CONFIG=device_lean
# or device_lean_aes by hand).
TLS_PROFILE_CHOSEN := $(shell sed -n 's/^CONFIG_DPM_TLS_\(LEAN\|LEAN_AES\)=y$$/\1/p' $(or $(KCONFIG_CONFIG),.config) 2>/dev/null)
MBEDTLS_CONFIG ?= $(if $(filter host,$(TARGET))$(findstring -linux-,$(TARGET)),host,$(if $(TLS_PROFILE_CHOSEN),device_$(if $(filter LEAN_AES,$(TLS_PROFILE_CHOSEN)),lean_aes,lean),device))
# (3rdparty/everest/include: the configs' Everest X25519, which mbedtls/ecdh.h includes.)
MBEDTLS_CFLAGS := -isystem $(MBEDTLS_SRC)/include -isystem $(MBEDTLS_SRC)/3rdparty/everest/include \
                  -Iport/tls/config \
                  -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_$(MBEDTLS_CONFIG).h"'

WARNINGS := -Wall -Wextra -Wconversion -Wshadow -Wstrict-prototypes -Wundef -Werror
OPT ?= -O2 -g
# nanopb stays private to libdpm: its functions are renamed dpm_pb_* (sdk/proto/dpm_nanopb_rename.h).
NANOPB_PRIVATE := -DPB_SYSTEM_HEADER='"dpm_nanopb_rename.h"'
# Host objects are position-independent so that libdpmsim.so (PYLIB, below) links the same
# objects as dpm-sim; without interposition they cost executables nothing measurable.
HOST_PIC := $(if $(CROSS_COMPILE),,-fPIC -fno-semantic-interposition)
CFLAGS_COMMON := -std=c99 $(OPT) $(HOST_PIC) $(WARNINGS) -MMD -MP -Isdk/include -Iport/include \
                 -Isdk/proto -isystem $(NANOPB_DIR) $(NANOPB_PRIVATE) \
                 $(MBEDTLS_CFLAGS) $(EXTRA_CFLAGS)
# Kconfig (optional): with a .config present, its values reach the build as CONFIG_DPM_* through
# a generated autoconf header; without one, plain `make` uses the header defaults. This comes
# before every flag set derived from CFLAGS_COMMON, so the SDK, port, tests and tools all see it.
KCONFIG_CONFIG ?= .config
ifneq ($(wildcard $(KCONFIG_CONFIG)),)
AUTOCONF := $(OUT)/include/dpm_autoconf.h
CFLAGS_COMMON += -include $(AUTOCONF)
endif

SDK_CFLAGS := $(CFLAGS_COMMON) -Isdk/src/internal -Isdk/src -ffunction-sections -fdata-sections
PORT_CFLAGS := $(CFLAGS_COMMON) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# Tests and host-sim see the simulator-only entry points (dpm_receipt_unmetered, dpm/expert/report.h);
# `make install`'s headers are compiled by apps without -DDPM_SIMULATOR_API.
SIM_API := -DDPM_SIMULATOR_API
TEST_CFLAGS := $(CFLAGS_COMMON) $(SIM_API) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Itests/support -Ihost-sim \
               -Isdk/src/internal -Isdk/src -Wno-conversion
LDLIBS := -lcmocka -lpthread -lm

# Objects rebuild when the compiler or flags change (e.g. a .config appears or goes).
FLAGS_STAMP := $(OUT)/.cflags
FLAGS_NOW := $(CC) $(CFLAGS_COMMON)
# (not for the print-* goals scripts call: they build nothing, so they leave the stamp alone)
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
ifneq ($(filter-out print-%,$(or $(MAKECMDGOALS),all)),)
$(shell mkdir -p $(OUT))
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif
endif

# nanopb: the runtime comes from Debian's source package (make deps), the generated
# sdk/proto/dpm.pb.[ch] ship in the repository (tests/unit/test_proto_regen.sh keeps them current).
NANOPB_CFLAGS := -std=c99 $(OPT) $(HOST_PIC) -Wall -Werror -I$(NANOPB_DIR) -Isdk/proto $(NANOPB_PRIVATE) \
                 -ffunction-sections -fdata-sections

# ---- sources ---------------------------------------------------------------------------------
# The SDK and posix port lists are sdk/sources.mk's (the one list every build reads); its own
# nanopb check is the user's, the rules below say what to do here.
DPM_ROOT := $(CURDIR)
DPM_SOURCES_LISTS_ONLY := 1
include sdk/sources.mk
SDK_SRCS := $(patsubst $(DPM_ROOT)/%,%,$(DPM_SDK_SRCS))
PORT_SRCS := $(patsubst $(DPM_ROOT)/%,%,$(DPM_POSIX_SRCS))
TEST_SUPPORT_SRCS := $(sort $(wildcard tests/support/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c tests/stat/test_*.c tests/vectors/test_*.c))
TOOL_SRCS := $(sort $(wildcard tests/e2e/tool_*.c))
# host-sim: the server side and the simulator (host only; floating point allowed here).
# Rooms are one or two folders deep (host-sim/README.md): sim/main_dpm-sim.c, collector/ops/...
HOST_MAINS := $(sort $(wildcard host-sim/*/main_*.c host-sim/*/*/main_*.c))
HOST_SRCS := $(sort $(filter-out $(HOST_MAINS),$(wildcard host-sim/*/*.c host-sim/*/*/*.c)))
# An #include of a host-sim header: its rooms, and of mech/ only host-sim's own (mech/base/ and
# the modules' headers: the SDK's private sdk/src/mech/ headers, which SDK tests may include,
# share the prefix).
empty :=
space := $(empty) $(empty)
HOST_INCLUDE_RE := ^\#include "(estimate/|aggregator/|sim/|collector/|mech/(base/|$(subst $(space),|,$(notdir \
                   $(wildcard host-sim/mech/*.h)))))
BENCH_SRCS := $(sort $(wildcard tests/bench/bench_*.c))
TEST_SCRIPTS := $(sort $(wildcard tests/unit/test_*.sh tests/unit/test_*.py \
                  tests/e2e/test_*.sh tests/e2e/test_*.py))

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))
SDK_OBJS := $(call obj,$(SDK_SRCS)) \
            $(addprefix $(OUT)/obj/nanopb/,pb_common.o pb_encode.o pb_decode.o)
PORT_OBJS := $(call obj,$(PORT_SRCS))
TEST_SUPPORT_OBJS := $(call obj,$(TEST_SUPPORT_SRCS))
TEST_BINS := $(patsubst tests/%.c,$(OUT)/tests/%,$(TEST_SRCS))
TOOL_BINS := $(patsubst tests/%.c,$(OUT)/tests/%,$(TOOL_SRCS))
BENCH_BINS := $(patsubst tests/%.c,$(OUT)/%,$(BENCH_SRCS))
HOST_OBJS := $(call obj,$(HOST_SRCS))
HOST_BINS := $(foreach m,$(HOST_MAINS),$(OUT)/$(patsubst main_%.c,%,$(notdir $(m))))
# examples/<name>/main.c -> build/<target>/<name> (what a user copies into an app)
EXAMPLE_MAINS := $(sort $(wildcard examples/*/main.c))
EXAMPLE_BINS := $(foreach m,$(EXAMPLE_MAINS),$(OUT)/$(notdir $(patsubst %/,%,$(dir $(m))))) \
                $(OUT)/hello-post

# The console's files (host-sim/console/), compiled into the collector (console.h).
CONSOLE_FILES := $(sort $(wildcard host-sim/console/*.html host-sim/console/*.css \
                   host-sim/console/*.js))
CONSOLE_ASSETS_C := $(OUT)/gen/console_assets.c
CONSOLE_ASSETS_O := $(OUT)/obj/gen/console_assets.o

LIBDPM := $(OUT)/libdpm.a
LIBPORT := $(OUT)/libdpm_posix.a
LIBHOST := $(OUT)/libdpm_host.a
# dpm-sim's core as a shared library for the Python package (host-sim/sim/lib, host-sim/python):
# host builds only; its exports are dpmsim_* alone (the map), everything else stays inside.
PYLIB := $(if $(CROSS_COMPILE),,$(OUT)/lib/libdpmsim.so)
# libpq (the collector's PostgreSQL store): its headers live in a directory of their own.
PQ_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
# host-sim sees the SDK through its public headers only (no -Isdk/src: tests/unit/test_host_deps.py)
HOST_CFLAGS := $(CFLAGS_COMMON) $(SIM_API) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ihost-sim \
               -Wno-conversion $(PQ_CFLAGS)
DB_LIBS := -lsqlite3 -lpq

# ---- build -------------------------------------------------------------------------------------
.PHONY: all lib tests host
# A cross build (CROSS_COMPILE=...) makes what runs on the target: see the cross block below.
all: lib $(LIBPORT) $(if $(CROSS_COMPILE),cross-tests,host tests)
# libdpm.a alone: a C compiler and the nanopb runtime, no Mbed TLS, no fetch (test_make_lib.sh).
lib: $(LIBDPM)
host: $(HOST_BINS) $(EXAMPLE_BINS) $(PYLIB)
.PHONY: pylib
pylib: $(PYLIB)
tests: $(TEST_BINS) $(TOOL_BINS)

$(LIBDPM): $(SDK_OBJS)
	@rm -f $@
	@printf '  %-3s %s\n' AR $@
	$(Q)$(AR) rcs $@ $^

$(LIBPORT): $(PORT_OBJS)
	@rm -f $@
	@printf '  %-3s %s\n' AR $@
	$(Q)$(AR) rcs $@ $^

$(OUT)/bench/%: $(OUT)/obj/tests/bench/%.o $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM) $(MBEDTLS_LIBS) $(LDLIBS) $(DB_LIBS)

$(LIBHOST): $(HOST_OBJS) $(CONSOLE_ASSETS_O)
	@rm -f $@
	@printf '  %-3s %s\n' AR $@
	$(Q)$(AR) rcs $@ $^

$(OUT)/obj/host-sim/%.o: host-sim/%.c $(AUTOCONF) $(FLAGS_STAMP) | $(MBEDTLS_DIR)/library/libmbedcrypto.a
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(HOST_CFLAGS) -c $< -o $@

$(CONSOLE_ASSETS_C): $(CONSOLE_FILES) .make/embed-console.py
	@printf '  %-3s %s\n' GEN $@
	$(Q)$(PYTHON) .make/embed-console.py $@ $(CONSOLE_FILES)

$(CONSOLE_ASSETS_O): $(CONSOLE_ASSETS_C) $(FLAGS_STAMP) | $(MBEDTLS_DIR)/library/libmbedcrypto.a
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(HOST_CFLAGS) -c $< -o $@

define host_bin
$(OUT)/$(patsubst main_%.c,%,$(notdir $(1))): $(call obj,$(1)) $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@printf '  %-3s %s\n' LD $$@
	$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(MBEDTLS_LIBS) $$(DB_LIBS) -lpthread -lm
endef
$(foreach m,$(HOST_MAINS),$(eval $(call host_bin,$(m))))

$(OUT)/lib/libdpmsim.so: $(call obj,host-sim/sim/lib/dpmsim.c) host-sim/sim/lib/dpmsim.map $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -shared -o $@ $< -Wl,--version-script=host-sim/sim/lib/dpmsim.map \
	  -Wl,-soname,libdpmsim.so $(LIBHOST) $(LIBPORT) $(LIBDPM) $(MBEDTLS_LIBS) $(DB_LIBS) -lpthread -lm

$(OUT)/obj/examples/%.o: examples/%.c $(AUTOCONF) $(FLAGS_STAMP) | $(MBEDTLS_DIR)/library/libmbedcrypto.a
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(PORT_CFLAGS) -c $< -o $@

define example_bin
$(OUT)/$(notdir $(patsubst %/,%,$(dir $(1)))): $(call obj,$(1)) $(LIBPORT) $(LIBDPM)
	@printf '  %-3s %s\n' LD $$@
	$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(MBEDTLS_LIBS) -lpthread
endef
$(foreach m,$(EXAMPLE_MAINS),$(eval $(call example_bin,$(m))))
# examples/hello/post.c: hello that posts over TLS with the posix port (tests/e2e/test_hello_post.py)
$(OUT)/hello-post: $(call obj,examples/hello/post.c) $(LIBPORT) $(LIBDPM)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(MBEDTLS_LIBS) -lpthread

# The SDK's sources, one a line, for scripts (size.sh, coverage.py, the tests): `make -s print-sdk-srcs`.
.PHONY: print-sdk-srcs print-posix-srcs
print-sdk-srcs:
	@printf '%s\n' $(SDK_SRCS)
print-posix-srcs:
	@printf '%s\n' $(PORT_SRCS)

$(AUTOCONF): $(KCONFIG_CONFIG) Kconfig
	$(PYTHON) .make/kconfig.py header $< $@

$(OUT)/obj/sdk/%.o: sdk/%.c $(AUTOCONF) $(FLAGS_STAMP) | $(NANOPB_RUNTIME)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(SDK_CFLAGS) -c $< -o $@

$(OUT)/obj/nanopb/%.o: $(NANOPB_DIR)/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(NANOPB_CFLAGS) -MMD -MP -c $< -o $@

# A missing runtime is fetched by one `make deps` (a grouped target: `make -j` runs it once,
# and the Mbed TLS check waits for it, so two deps runs never race for the apt lock). Not by
# `make lib`, nor into a DPM_NANOPB_DIR of yours: those stop and say what to do. If the files
# are still missing after make deps, stop too: a nested make must not try again, or a broken
# build/src recurses without end.
$(NANOPB_RUNTIME) &:
	@if [ -z "$(NANOPB_FETCH)" ]; then echo "make: nanopb runtime missing: no $@ (run make deps or set DPM_NANOPB_DIR to a nanopb 0.4.x source directory)" >&2; exit 1; fi
	@if [ -n "$(DPM_FETCHING_DEPS)" ]; then echo "make: $@ still missing after make deps" >&2; exit 1; fi
	@$(MAKE) --no-print-directory deps-build DPM_FETCHING_DEPS=1

$(OUT)/obj/port/%.o: port/%.c $(AUTOCONF) $(FLAGS_STAMP) | $(MBEDTLS_DIR)/library/libmbedcrypto.a
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(PORT_CFLAGS) -c $< -o $@

$(OUT)/obj/tests/%.o: tests/%.c $(AUTOCONF) $(FLAGS_STAMP) | $(MBEDTLS_DIR)/library/libmbedcrypto.a
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' CC $<
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUT)/tests/%: $(OUT)/obj/tests/%.o $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_EXTRA_OBJS) $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM) $(MBEDTLS_LIBS) $(LDLIBS) $(DB_LIBS)

# Tests link by subject. A test that includes no host-sim header (SDK_TEST_BINS) links its
# support code and host-sim from archives, so only what it uses comes along (the special
# functions and JSON reader of host-sim/common), and neither sqlite nor libpq: a collector
# object pulled in would fail the link (tests/unit/test_link_subjects.sh checks the binaries).
# The others link as above. Cross builds have their own rule (below).
ifeq ($(CROSS_COMPILE),)
empty :=
space := $(empty) $(empty)
HOST_SUBJECTS := $(patsubst host-sim/%/,%,$(wildcard host-sim/*/))
HOST_INCLUDE_RE := ^\#include "($(subst $(space),|,$(strip $(HOST_SUBJECTS))))/
HOST_TEST_SRCS := $(shell grep -lE '$(HOST_INCLUDE_RE)' $(TEST_SRCS) /dev/null)
SDK_TEST_BINS := $(patsubst tests/%.c,$(OUT)/tests/%,$(filter-out $(HOST_TEST_SRCS),$(TEST_SRCS)))
TEST_SUPPORT_LIB := $(OUT)/libdpm_testsupport.a
$(TEST_SUPPORT_LIB): $(TEST_SUPPORT_OBJS)
	@rm -f $@
	@printf '  %-3s %s\n' AR $@
	$(Q)$(AR) rcs $@ $^
$(SDK_TEST_BINS): $(OUT)/tests/%: $(OUT)/obj/tests/%.o $(TEST_SUPPORT_LIB) $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_EXTRA_OBJS) $(TEST_SUPPORT_LIB) $(LIBHOST) $(LIBPORT) $(LIBDPM) $(MBEDTLS_LIBS) $(LDLIBS)
.PHONY: print-sdk-tests
print-sdk-tests: # (relative to the build directory: tests/unit/test_x)
	@printf '%s\n' $(patsubst $(OUT)/%,%,$(SDK_TEST_BINS))
endif

# port/cortex-m's portable C (the test generator, the TRNG hook's fail-closed default) also runs
# on the host and the Linux targets, in test_cm_portable; the rest is Arm code (make cross).
CM_PORTABLE_OBJS := $(call obj,port/cortex-m/test_drbg.c port/cortex-m/trng.c)
$(CM_PORTABLE_OBJS): PORT_CFLAGS += -DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
$(OUT)/tests/unit/test_cm_portable: $(CM_PORTABLE_OBJS)
$(OUT)/tests/unit/test_cm_portable: TEST_EXTRA_OBJS := $(CM_PORTABLE_OBJS)

# port/template (the skeleton a new port starts from) is compiled as port code and run through
# the conformance suite by test_port_template (host, Linux targets; .make/cortex-m.mk: Cortex-M).
PORT_TEMPLATE_OBJ := $(call obj,port/template/port_template.c)
$(OUT)/tests/unit/test_port_template: $(PORT_TEMPLATE_OBJ)
$(OUT)/tests/unit/test_port_template: TEST_EXTRA_OBJS := $(PORT_TEMPLATE_OBJ)

# Mbed TLS is built by `make deps`; building anything first checks it is there and current
# with the project's config headers.
$(MBEDTLS_DIR)/library/libmbedcrypto.a: $(wildcard port/tls/config/dpm_mbedtls_$(MBEDTLS_CONFIG).h) \
                                        $(wildcard port/tls/patches/*.patch) | $(NANOPB_RUNTIME)
	@$(MAKE) --no-print-directory deps-build DPM_FETCHING_DEPS=1
	$(MBEDTLS_CROSS_BUILD)

# Everything that links Mbed TLS relinks when it is rebuilt (new config header or patch).
$(HOST_BINS) $(EXAMPLE_BINS) $(TEST_BINS) $(TOOL_BINS) $(BENCH_BINS): $(MBEDTLS_DIR)/library/libmbedcrypto.a

.SECONDARY:

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)

# ---- the two commands and the quality gates ------------------------------------------------
.PHONY: deps test lint help clean menuconfig defconfig bench repro demo demo-pg results
deps:
	@BUILD_DIR=$(BUILD_DIR) bash .make/deps.sh
# What a build alone needs (compiler, nanopb, Mbed TLS source, SQLite, libpq): the first `make`
# or `make demo` on a fresh machine installs only these (.make/deps.sh names the sets).
.PHONY: deps-build deps-repro
deps-build deps-repro:
	@DEPS_FOR=$(patsubst deps-%,%,$@) BUILD_DIR=$(BUILD_DIR) bash .make/deps.sh

# TEST_LEAVE_OUT: patterns of test programs not run (CI's sanitize step leaves out the
# Monte-Carlo coverage programs, which make test runs in full; make sanitize runs them too).
TEST_LEAVE_OUT ?=
# TEST_POOL: scripts that either lane may run (.make/run-tests.sh): each builds only into a
# folder of its own ($(BUILD_DIR)/host-<variant>, host-fuzz, mktemp) and opens no socket, so
# it may run beside any other script. The long ones: they let the lanes end together.
TEST_POOL ?= tests/unit/test_fuzz_targets.sh tests/unit/test_mech_variants.sh \
             tests/unit/test_constant_time.sh tests/unit/test_kconfig_lib.sh \
             tests/unit/test_fedauc_optional.sh
# TEST_IDLE: scripts that mostly wait (timeouts, clock periods, PostgreSQL, a browser: under a
# third of their wall time on CPU) and open their servers on port 0 in their own temporary
# folders; they run in a lane of their own beside the other two (.make/run-tests.sh).
TEST_IDLE ?= tests/e2e/test_collector_pg.py tests/e2e/test_collector_fedauc_trust.py \
             tests/e2e/test_collector_fedauc_ops.py tests/e2e/test_console.py \
             tests/e2e/test_collector_dap.py tests/e2e/test_collector_attacks.py \
             tests/e2e/test_collector_fedauc.py tests/e2e/test_collector_http.py
# TEST_LANES: the scripts' lane and the programs' (.make/run-tests.sh: why not more here)
TEST_LANES ?= 2
test: deps
	@$(MAKE) --no-print-directory all
	@OUT=$(OUT) NM=$(NM) CC=$(CC) PYTHON=$(PYTHON) BUILD_DIR=$(BUILD_DIR) TEST_LANES=$(TEST_LANES) \
	  TEST_POOL="$(TEST_POOL)" TEST_IDLE="$(TEST_IDLE)" \
	  bash .make/run-tests.sh $(filter-out $(TEST_LEAVE_OUT),$(TEST_BINS)) $(TEST_SCRIPTS)

LINT_SRCS = $(shell find sdk port -name '*.[ch]' -not -path '*/config/*' -not -name '*.pb.[ch]' \
              -not -path 'port/cortex-m/*' -not -name 'port_cortex_m*.h')
lint: deps
	@bash .make/lint.sh $(LINT_SRCS) -- $(CFLAGS_COMMON) -Isdk/src/internal -Isdk/src \
	  -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE

# host-sim/collector, the network-facing server, with the flags it is built with (its folders
# found, not named: new rooms are linted too).
LINT_HOST_DIRS := host-sim/collector host-sim/mech host-sim/aggregator
LINT_HOST_SRCS = $(shell find $(LINT_HOST_DIRS) -name '*.[ch]')
.PHONY: lint-collector
lint: lint-collector
lint-collector: deps
	@bash .make/lint.sh $(LINT_HOST_SRCS) -- $(HOST_CFLAGS)

menuconfig:
	@KCONFIG_CONFIG=$(KCONFIG_CONFIG) $(PYTHON) -m menuconfig Kconfig
defconfig:
	@$(PYTHON) .make/kconfig.py defconfig $(KCONFIG_CONFIG)

# (the collector benchmarks drive it with tests/e2e/tool_load: one of TOOL_BINS)
bench: deps cross-deps
	@$(MAKE) --no-print-directory $(BENCH_BINS) $(TOOL_BINS) host
	@$(PYTHON) .make/bench.py $(OUT) $(BUILD_DIR)/bench.json

# Paper reproductions: the references of host-sim/scenarios/paper-*.ref beside ours (analytic
# tables, simulations, plots) under build/repro/ (README.md sums them up).
repro: deps-repro
	@$(MAKE) --no-print-directory host
	@$(OUT)/dpm-sim repro --out $(BUILD_DIR)/repro

# The figures the documents quote: each source's producer run (RESULTS="bench size repro" by
# default, and demo, hello, tests; repro-<paper> for one paper), its output recorded with the command and commit in
# tests/results/<source>.json, and every marked table regenerated from the records
# (.make/results.py; tests/unit/test_results_figures.py holds the documents to them).
RESULTS ?= bench size repro demo hello tests
results: deps
	@BUILD_DIR=$(BUILD_DIR) OUT=$(OUT) $(PYTHON) .make/results.py run $(RESULTS)

# The main job: a TLS collector on 127.0.0.1 and simulated devices posting real reports.
demo: deps-build
	@$(MAKE) --no-print-directory host
	@OUT=$(OUT) BUILD_DIR=$(BUILD_DIR) bash .make/demo.sh

# The README's console screenshots (host-sim/console/screenshots/*.jpg, committed): taken by the
# browser test, with the commit they show in COMMIT ("-dirty": uncommitted changes too).
.PHONY: console-screenshots
console-screenshots: deps
	@$(MAKE) --no-print-directory all
	@DPM_CONSOLE_SHOTS=host-sim/console/screenshots OUT=$(OUT) $(PYTHON) tests/e2e/test_console.py
	@{ git rev-parse --short HEAD; git diff --quiet HEAD -- . ':!host-sim/console/screenshots' || echo dirty; } | paste -sd- \
	  >host-sim/console/screenshots/COMMIT
	@echo "console-screenshots: host-sim/console/screenshots/ at $$(cat host-sim/console/screenshots/COMMIT)"

# The same on PostgreSQL (a throw-away cluster under build/pg/), two collectors sharing it.
demo-pg: deps
	@$(MAKE) --no-print-directory all
	@OUT=$(OUT) BUILD_DIR=$(BUILD_DIR) bash .make/demo-pg.sh

# ==== quality gates (sanitize, valgrind, coverage, fuzz) ======================================
# Each target builds a variant of the ordinary build (its own build/host-<variant>/ from the
# same source lists, so no list can drift) and hands the checking to a script in .make/.
.PHONY: sanitize valgrind coverage fuzz fuzz-build fuzz-bins
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The whole test suite under AddressSanitizer + UBSan.
sanitize: deps
	@$(MAKE) --no-print-directory VARIANT=sanitize OPT="-O1 -g $(SANITIZE_FLAGS)" \
	  LDFLAGS="$(SANITIZE_FLAGS)" test

# Every C test program under valgrind memcheck (an error fails the test).
valgrind: deps
	@$(MAKE) --no-print-directory all
	@OUT=$(OUT) BUILD_DIR=$(BUILD_DIR) bash .make/valgrind.sh $(TEST_BINS)

# Line and branch coverage of sdk/ and port/ over the whole test suite; port/cortex-m's Arm
# code (startup, semihosting) counted from its test images run under QEMU.
coverage: deps cross-deps
	@find $(OUT)-coverage -name '*.gcda' -delete 2>/dev/null || true
	@$(MAKE) --no-print-directory VARIANT=coverage OPT="-O0 -g --coverage" LDFLAGS=--coverage test
	@BUILD_DIR=$(BUILD_DIR) MAKE="$(MAKE)" bash .make/coverage-cm.sh
	@$(PYTHON) .make/coverage.py $(OUT)-coverage $(BUILD_DIR)/cortex-m/coverage

# libFuzzer targets: tests/fuzz/fuzz_<target>.c, linked against the variant's own libraries
# (built with clang, -fsanitize=fuzzer-no-link + ASan + UBSan).
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/%.c,$(OUT)/%,$(FUZZ_SRCS))
FUZZ_CC ?= clang
FUZZ_OUT := $(BUILD_DIR)/$(TARGET)-fuzz
FUZZ_SECONDS ?= 60
fuzz-bins: $(FUZZ_BINS)
$(OUT)/fuzz/%: $(OUT)/obj/tests/fuzz/%.o $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(LIBHOST) $(LIBPORT) $(LIBDPM) $(MBEDTLS_LIBS) -lpthread -lm $(DB_LIBS)
fuzz-build: deps
	@CLANG=$(FUZZ_CC) bash .make/fuzz.sh --check-toolchain
	@$(MAKE) --no-print-directory VARIANT=fuzz CC=$(FUZZ_CC) \
	  OPT="-O1 -g -fsanitize=fuzzer-no-link -fsanitize-coverage-ignorelist=tests/fuzz/sancov_ignorelist.txt $(SANITIZE_FLAGS)" \
	  LDFLAGS="-fsanitize=fuzzer $(SANITIZE_FLAGS)" fuzz-bins
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) bash .make/fuzz.sh $(patsubst $(OUT)/%,$(FUZZ_OUT)/%,$(FUZZ_BINS))
# ==== end of quality gates =====================================================================

# ---- install / packaging ---------------------------------------------------------------------
# make install PREFIX=/usr/local [DESTDIR=/staging] [LIBDIR=...] [INCLUDEDIR=...]: headers,
# libdpm.a, the posix port with its private Mbed TLS, dpmetrics.pc + dpmetrics-posix.pc and a
# CMake package (.make/install.sh lists the layout). Other builds: sdk/sources.mk,
# sdk/CMakeLists.txt + port/CMakeLists.txt, port/zephyr, port/esp-idf.
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
# The DPM_* options as this build resolves them (Kconfig, DPM_CONFIG_FILE, -D, defaults): each
# option's value, macro-expanded by the compiler with the SDK's own flags.
DPM_OPTIONS := $(shell sed -n 's/^config \(DPM_[A-Z0-9_]*\)$$/\1/p' Kconfig)
BUILD_CONFIG := $(OUT)/include/dpm/build_config.h
$(BUILD_CONFIG): sdk/include/dpm/config.h Kconfig $(AUTOCONF) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(Q){ echo '/* SPDX-License-Identifier: Apache-2.0 */'; \
	  echo '/* Generated by make install: the DPM_* options of the libdpm.a installed with it. */'; \
	  echo '#ifndef DPM_BUILD_CONFIG_H'; echo '#define DPM_BUILD_CONFIG_H'; \
	  { echo '#include "dpm/config.h"'; for o in $(DPM_OPTIONS); do echo "dpm_option \"$$o\" $$o"; done; } | \
	    $(CC) $(filter-out -MMD -MP,$(SDK_CFLAGS)) -E -P -x c - | \
	    awk '$$1 == "dpm_option" { gsub(/"/, "", $$2); print "#define " $$2 " " $$3; n++ } \
	         END { if (n != $(words $(DPM_OPTIONS))) exit 1 }'; \
	  echo '#endif'; } >$@.tmp && mv $@.tmp $@

.PHONY: install
install: lib $(LIBPORT) $(BUILD_CONFIG) $(if $(CROSS_COMPILE),,host)
	@OUT=$(OUT) CC="$(CC)" MBEDTLS_LIBDIR=$(MBEDTLS_DIR)/library MBEDTLS_SRC=$(MBEDTLS_SRC) \
	  NANOPB_DIR=$(NANOPB_DIR) BUILD_CONFIG=$(BUILD_CONFIG) PREFIX="$(PREFIX)" LIBDIR="$(LIBDIR)" \
	  INCLUDEDIR="$(INCLUDEDIR)" DESTDIR="$(DESTDIR)" bash .make/install.sh
# ---- end install / packaging -----------------------------------------------------------------

# ---- version and release tarball ----------------------------------------------------------
# The version is set in sdk/include/dpm/version.h only; .make/version.sh reads it (use
# $(DPM_VERSION) in recipes). `make dist`: the reproducible source tarball of HEAD,
# build/dist/dpmetrics-X.Y.Z.tar.gz; `make distcheck`: unpack it, build it, run its unit tests.
DPM_VERSION = $(shell sh .make/version.sh)
.PHONY: version dist distcheck
version:
	@echo $(DPM_VERSION)
dist:
	@bash .make/dist.sh $(BUILD_DIR)/dist
distcheck: deps
	@OUT=$(OUT) BUILD_DIR=$(BUILD_DIR) PYTHON=$(PYTHON) \
	  bash .make/run-tests.sh tests/e2e/distcheck.sh
# ---- end of version and release tarball -----------------------------------------------------

# ---- cross / size ------------------------------------------------------------------------------
# make cross: ARM Linux + big-endian under qemu-user, Cortex-M under qemu-system-arm
# (.make/cross.sh); make size: Cortex-M4 flash/RAM/stack budgets (.make/size.sh). Bare-metal
# builds live in .make/cortex-m.mk; the rules here only serve CROSS_COMPILE=<linux triplet>-.
.PHONY: cross cross-deps cross-tests size
cross-deps:
	@BUILD_DIR=$(BUILD_DIR) bash .make/cross-deps.sh
cross: deps cross-deps
	@BUILD_DIR=$(BUILD_DIR) MAKE="$(MAKE)" bash .make/cross.sh
size: deps cross-deps
	@BUILD_DIR=$(BUILD_DIR) MAKE="$(MAKE)" PYTHON=$(PYTHON) bash .make/size.sh

# port/cortex-m is Arm code (inline assembly, newlib): `make lint` checks it for its target.
.PHONY: lint-cortex-m
lint: lint-cortex-m
lint-cortex-m: deps cross-deps
	@bash .make/lint.sh $(wildcard port/cortex-m/*.c) $(wildcard port/include/dpm/port_cortex_m*.h) -- \
	  -std=c99 --target=thumbv7em-none-eabi -mcpu=cortex-m4 -mfloat-abi=soft -Isdk/include \
	  -Iport/include -isystem /usr/lib/arm-none-eabi/include -DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION \
	  -isystem $(BUILD_DIR)/src/mbedtls/include -Iport/tls/config \
	  -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_device.h"'

ifneq ($(CROSS_COMPILE),)
# A cross build without its compiler would end in a raw CMake or "gcc: not found" error: say what
# installs it (goals that install or only print go on).
ifeq ($(shell command -v $(CC) 2>/dev/null),)
ifeq ($(filter-out cross-deps deps deps-build deps-repro help clean version,$(or $(MAKECMDGOALS),all)),)
else
$(error $(CC) not found: run `make cross-deps` (the cross compilers, qemu and the targets' \
  cmocka), then `make CROSS_COMPILE=$(CROSS_COMPILE)` again. Targets .make/cross.sh builds: \
  arm-linux-gnueabihf-, aarch64-linux-gnu-, s390x-linux-gnu-)
endif
endif
# Mbed TLS for the target, with the config chosen above (cmake knows the cross compiler).
MBEDTLS_CROSS_BUILD = @MBEDTLS_SRC=$(MBEDTLS_SRC) bash .make/build-mbedtls.sh $(TARGET) $(MBEDTLS_DIR) \
  $(CURDIR)/port/tls/config/dpm_mbedtls_$(MBEDTLS_CONFIG).h -DCMAKE_SYSTEM_NAME=Linux \
  -DCMAKE_SYSTEM_PROCESSOR=$(firstword $(subst -, ,$(TARGET))) -DCMAKE_C_COMPILER=$(CC)
# The host-independent tests: not those of host-sim (they include its estimate/, sim/,
# collector/ or mech/ headers). test_tuple_gof is an SDK test that only borrows the simulator's tuple
# sampler as a second implementation, so it stays, linked with just that part of host-sim.
CROSS_HOST_ONLY_TESTS := $(filter-out tests/stat/test_tuple_gof.c, \
  $(shell grep -lE '$(HOST_INCLUDE_RE)' $(TEST_SRCS)))
CROSS_TEST_SRCS := $(filter-out $(CROSS_HOST_ONLY_TESTS),$(TEST_SRCS))
CROSS_TEST_BINS := $(patsubst tests/%.c,$(OUT)/tests/%,$(CROSS_TEST_SRCS))
CROSS_SIM_OBJS := $(call obj,host-sim/sim/devices/tuple_paper.c host-sim/estimate/disparity.c \
                                host-sim/estimate/pairwise.c host-sim/estimate/ci_flags.c \
                                host-sim/common/stream.c \
                                host-sim/common/json_read.c host-sim/common/edges.c \
                                host-sim/common/text_list.c host-sim/common/kv.c \
                                host-sim/common/prob.c)
# Support code that includes host-sim headers serves only host-only tests (FedAUC's fixture uses
# the estimator's __int128, which 32-bit targets lack).
CROSS_SUPPORT_SRCS := $(filter-out $(shell for f in $(TEST_SUPPORT_SRCS); do \
  grep -qsE '$(HOST_INCLUDE_RE)' $$f $${f%.c}.h && echo $$f; done), \
  $(TEST_SUPPORT_SRCS))
CROSS_SUPPORT_LIB := $(OUT)/libdpm_testsupport.a
$(CROSS_SUPPORT_LIB): $(call obj,$(CROSS_SUPPORT_SRCS))
	@rm -f $@
	$(Q)$(AR) rcs $@ $^
# A static pattern rule: for these binaries it replaces the host link rule (no sqlite, no
# collector); support code comes from an archive, so only what a test uses is linked.
$(CROSS_TEST_BINS): $(OUT)/tests/%: $(OUT)/obj/tests/%.o $(CROSS_SUPPORT_LIB) $(CROSS_SIM_OBJS) \
                    $(LIBPORT) $(LIBDPM)
	@mkdir -p $(dir $@)
	@printf '  %-3s %s\n' LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_EXTRA_OBJS) $(CROSS_SIM_OBJS) $(CROSS_SUPPORT_LIB) $(LIBPORT) $(LIBDPM) \
	  $(MBEDTLS_LIBS) $(LDLIBS)
cross-tests: lib $(LIBPORT) $(CROSS_TEST_BINS) $(EXAMPLE_BINS)
	@printf '%s\n' $(CROSS_TEST_BINS) >$(OUT)/cross-tests.list
endif

clean:
	rm -rf $(OUT)

help:
	@echo "make deps | all | test | demo | repro | cross | size | bench | results | fuzz | sanitize | valgrind | lint | coverage"
	@echo "make results [RESULTS=\"bench size repro repro-<paper> tests\"]    (tests/results/, the docs' tables)"
	@echo "make install PREFIX=<dir> [DESTDIR=<dir>]"
	@echo "make pylib    (build/host/lib/libdpmsim.so, dpm-sim's core for the Python package host-sim/python)"
	@echo "make menuconfig | defconfig    (Kconfig via kconfiglib)"
	@echo "variables: CROSS_COMPILE=<triplet>-  BUILD_DIR=<dir>  OPT=<flags>  EXTRA_CFLAGS=<flags>"
