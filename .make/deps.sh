#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make deps: install the Debian packages a target needs and fetch + build Mbed TLS 3.6 LTS.
# Idempotent: a second run checks, finds everything present and returns in seconds.
# No registry host name is written anywhere: the mirror is read from the machine's apt sources.
#
# DEPS_FOR says for what (the Makefile's targets set it), so a first command installs only what
# it runs:
#   build   building the SDK, the collector, dpm-sim and the examples; `make demo`
#   repro   build + the plotting libraries of `make repro`
#   all     everything `make test` runs: git (its file lists in a checkout, make dist), pandas,
#           pytest, venv, sklearn and Jupyter's nbconvert (the Python package's tests and notebooks,
#           tests/python), and
#           its suites drive the gates' tools too (clang-format,
#           clang-tidy and cppcheck in test_lint_gate.sh, valgrind, clang's fuzzer and
#           sanitizers), a PostgreSQL server, a headless browser and the Cortex-M compiler. The
#           default of a bare `make deps`.
# The cross compilers and QEMU are `make cross-deps`'s (.make/cross-deps.sh).
set -euo pipefail
BUILD_DIR=${BUILD_DIR:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
MBEDTLS_SUITE=trixie            # Mbed TLS 3.6 LTS lives in the next Debian release
MBEDTLS_VERSION_PREFIX=3.6.

DEPS_FOR=${DEPS_FOR:-all}
# build: the compiler, cmake (Mbed TLS), nanopb's generator and runtime source, the collector's
# SQLite and libpq, dpkg-dev for `apt-get source`, patch for Mbed TLS's patches, openssl for
# the demo's throw-away CA, bc for its timing.
BUILD_PACKAGES=(build-essential pkg-config pkgconf cmake nanopb protobuf-compiler python3-protobuf
                libsqlite3-dev sqlite3 libpq-dev python3-kconfiglib dpkg-dev curl openssl patch bc)
REPRO_PACKAGES=(python3-matplotlib python3-numpy)
TEST_PACKAGES=(libcmocka-dev git chromium python3-yaml python3-pandas python3-pytest python3-venv
               python3-sklearn python3-nbconvert python3-nbformat python3-nbclient python3-ipykernel
               clang-format clang-tidy cppcheck valgrind
               clang libclang-rt-14-dev postgresql-15 gcc-arm-none-eabi
               libnewlib-arm-none-eabi)
case $DEPS_FOR in
  build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  repro) PACKAGES=("${BUILD_PACKAGES[@]}" "${REPRO_PACKAGES[@]}") ;;
  all) PACKAGES=("${BUILD_PACKAGES[@]}" "${REPRO_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *) echo "deps: DEPS_FOR=$DEPS_FOR is not one of build, repro, all" >&2; exit 2 ;;
esac
PACKAGES+=(${DPM_EXTRA_PACKAGES:-})

log() { printf 'deps: %s\n' "$*"; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing for $DEPS_FOR: ${missing[*]}"
  # A mirror that is syncing can make part of the update fail; what it fetched is still usable.
  $SUDO apt-get update -q || log "apt-get update partly failed; continuing with the lists we have"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "Debian packages ($DEPS_FOR): all ${#PACKAGES[@]} present"
fi

. "$TOP/.make/apt-source.sh"

MBED_SRC_ROOT="$BUILD_DIR/src"
# extract_mbedtls: a pristine source tree from the Debian orig tarball (fetched if missing).
extract_mbedtls() {
  if ! ls "$BUILD_DIR"/dl/mbedtls_${MBEDTLS_VERSION_PREFIX}*.orig.tar.* >/dev/null 2>&1; then
    log "fetching the Mbed TLS 3.6 LTS source package from Debian $MBEDTLS_SUITE"
    fetch_source mbedtls "$MBEDTLS_SUITE" "$BUILD_DIR/dl"
  fi
  mkdir -p "$MBED_SRC_ROOT"
  tar -C "$MBED_SRC_ROOT" -xf "$(ls "$BUILD_DIR"/dl/mbedtls_${MBEDTLS_VERSION_PREFIX}*.orig.tar.* | head -n1)"
  mbed_dir=$(ls -d "$MBED_SRC_ROOT"/mbedtls-${MBEDTLS_VERSION_PREFIX}* | head -n1)
}
mbed_dir=$(ls -d "$MBED_SRC_ROOT"/mbedtls-${MBEDTLS_VERSION_PREFIX}* 2>/dev/null | head -n1 || true)
if [ -z "$mbed_dir" ]; then
  extract_mbedtls
else
  log "Mbed TLS source: $(basename "$mbed_dir") present"
fi
# The project's patches (port/tls/patches/*.patch, in name order) go onto a pristine tree; the
# tree records the set it carries, and a tree with another set is extracted afresh first.
patches=("$TOP"/port/tls/patches/*.patch)
want_patches=$(cat "${patches[@]}" | sha256sum | cut -d' ' -f1)
have_patches=$(cat "$mbed_dir/.dpm-patches" 2>/dev/null || true)
if [ "$have_patches" != "$want_patches" ]; then
  if [ -n "$have_patches" ]; then
    rm -rf "$mbed_dir"
    extract_mbedtls
  fi
  for p in "${patches[@]}"; do
    log "patching Mbed TLS: $(basename "$p")"
    patch -d "$mbed_dir" -p1 --forward --quiet <"$p" || { echo "deps: $p does not apply" >&2; exit 1; }
  done
  echo "$want_patches" >"$mbed_dir/.dpm-patches"
fi
ln -sfn "$mbed_dir" "$BUILD_DIR/src/mbedtls"

# The nanopb runtime (pb_encode.c, ...) is not in the binary package: fetch the source of the
# same version as the installed generator, from the machine's own release.
NANOPB_VERSION=$(dpkg-query -W -f='${Version}' nanopb)
nanopb_dir="$BUILD_DIR/src/nanopb-${NANOPB_VERSION%%-*}"
if [ ! -f "$nanopb_dir/pb_encode.c" ]; then
  log "fetching the nanopb $NANOPB_VERSION runtime source"
  . /etc/os-release
  fetch_source "nanopb=$NANOPB_VERSION" "$VERSION_CODENAME" "$BUILD_DIR/dl"
  tar -C "$BUILD_DIR/src" -xf "$(ls "$BUILD_DIR"/dl/nanopb_"${NANOPB_VERSION%%-*}".orig.tar.* | head -n1)"
else
  log "nanopb runtime source: $(basename "$nanopb_dir") present"
fi
ln -sfn "$(cd "$nanopb_dir" && pwd)" "$BUILD_DIR/src/nanopb"

# Build it for the host with the project's config header (rebuilt only when that header changes).
MBEDTLS_SRC="$BUILD_DIR/src/mbedtls" "$TOP/.make/build-mbedtls.sh" host "$BUILD_DIR/mbedtls/host" "$TOP/port/tls/config/dpm_mbedtls_host.h"
log "done: packages ok, Mbed TLS $(basename "$mbed_dir" | sed 's/mbedtls-//') built in $BUILD_DIR/mbedtls/host"
