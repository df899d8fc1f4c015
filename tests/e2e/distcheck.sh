#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make distcheck: the release tarball builds and passes the fast tests where it is unpacked, with
# no git inside. Makes it (.make/dist.sh), unpacks it in a temp dir, runs `make deps` and
# `make -j2 all` there, then, there, the unit tests (tests/unit: every cmocka program and
# script except three that build variants of the whole tree, which make test runs in the
# checkout from the same files: test_mbedtls_device_config.sh (Mbed TLS again),
# test_fuzz_targets.sh (the clang fuzz build, 111 s) and test_mech_variants.sh (six builds,
# 57 s)), the golden vectors (tests/vectors) and two fast end-to-end checks (test_version.py,
# test_wire_collector.py), in two lanes. Not run: tests/stat and the other e2e suites
# (minutes; `make test` in a checkout runs them). The fetched dependencies (Mbed TLS and nanopb
# sources, the built Mbed TLS) are copied from this checkout's build dir, so the check neither
# fetches nor rebuilds them; DIST_COLD=1 fetches them as a fresh machine would. Not a test_*
# file: too slow for `make test`; .ci/run calls `make distcheck`. TAP.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$ROOT" && mkdir -p "${BUILD_DIR:-build}" && cd "${BUILD_DIR:-build}" && pwd)
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
diag() { sed 's/^/# /' | tail -n "${2:-20}"; }
finish() { echo "1..$n"; exit $failed; }
# make runs in the unpacked tree as a user would type it, not as a sub-make of ours.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$tree" "$@"; }
start=$(date +%s)

work=$(mktemp -d /tmp/dpm-distcheck.XXXXXX)
trap 'rm -rf "$work"' EXIT
bash "$ROOT/.make/dist.sh" "$work/dist" >"$work/dist.log" 2>&1
tap $? "make dist: $(grep -o 'dpmetrics-[^ ]*\.tar\.gz.*' "$work/dist.log" | head -n1)"
tarball=$(ls "$work"/dist/dpmetrics-*.tar.gz 2>/dev/null | head -n1)
[ -n "$tarball" ] || finish
name=$(basename "$tarball" .tar.gz)
tree="$work/$name"
tar -C "$work" -xzf "$tarball"
[ -d "$tree" ] && [ ! -e "$tree/.git" ] && [ ! -e "$tree/build" ]
tap $? "unpacked into $name/ (no .git, no build/)"

if [ -z "${DIST_COLD:-}" ]; then
  mkdir -p "$tree/build/src" "$tree/build/mbedtls"
  cp -a "$BUILD"/src/mbedtls-3.6.* "$BUILD"/src/nanopb-[0-9]* "$tree/build/src/" &&
    cp -a "$BUILD/mbedtls/host" "$tree/build/mbedtls/"
  tap $? "fetched dependencies copied from $BUILD (DIST_COLD=1 fetches them instead)"
fi
mk deps >"$work/deps.log" 2>&1
rc=$?; [ $rc = 0 ] || diag <"$work/deps.log"
tap $rc "make deps in the unpacked tree"
t0=$(date +%s)
mk -j2 all >"$work/build.log" 2>&1
rc=$?; [ $rc = 0 ] || diag <"$work/build.log"
tap $rc "make all in the unpacked tree ($(($(date +%s) - t0)) s)"
[ $rc = 0 ] || finish

t0=$(date +%s)
# two lanes, as make test runs them (the programs in one, the scripts in the other)
(cd "$tree" && OUT=build/host PYTHON=/usr/bin/python3 BUILD_DIR=build TEST_LANES=2 \
  bash .make/run-tests.sh build/host/tests/unit/test_* build/host/tests/vectors/test_* \
    $(ls tests/unit/test_*.sh tests/unit/test_*.py |
      grep -vE 'test_(mbedtls_device_config|fuzz_targets|mech_variants)\.sh') \
    tests/e2e/test_version.py tests/e2e/test_wire_collector.py) >"$work/tests.log" 2>&1
rc=$?
last=$(tail -n 1 "$work/tests.log")
diag 60 <"$work/tests.log"
passed=${last%% passed*}
[ $rc = 0 ] && [[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed,\ 0\ skipped$ ]] && [ "$passed" -ge 150 ]
tap $? "unit tests in the unpacked tree: $last ($(($(date +%s) - t0)) s)"
grep -q '^ok .*source files carry the SPDX line' "$tree/build/host/test-logs/test_spdx.sh.log"
tap $? "test_spdx.sh checked the files without git (find)"

# Negative control: the same summary check sees a failing suite.
printf '#!/bin/sh\necho "ok 1 - fine"\necho "not ok 2 - broken"\n' >"$work/test_fails.sh"
ctl=$(cd "$tree" && OUT=build/host bash .make/run-tests.sh "$work/test_fails.sh" 2>&1 | tail -n 1)
[ "$ctl" = "1 passed, 1 failed, 0 skipped" ] &&
  ! [[ "$ctl" =~ ^[0-9]+\ passed,\ 0\ failed,\ 0\ skipped$ ]]
tap $? "negative control: a failing suite gives '$ctl'"
echo "# distcheck took $(($(date +%s) - start)) s"
finish
