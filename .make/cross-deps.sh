#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make cross-deps: what `make cross` and `make size` need beyond `make deps`:
#   - cross compilers for the Linux targets and their C libraries, qemu-user;
#   - Debian multiarch cmocka for those targets (dpkg --add-architecture);
#   - the bare-metal toolchain (gcc-arm-none-eabi + newlib) and qemu-system-arm;
#   - cmocka's Debian source package under $BUILD_DIR/src (built for arm-none-eabi: there is
#     no bare-metal binary package), the same version as the host's libcmocka-dev.
# Idempotent; tolerates a partly failing `apt-get update` (a mirror that is syncing).
set -euo pipefail
BUILD_DIR=${BUILD_DIR:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
log() { printf 'cross-deps: %s\n' "$*"; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo

# Debian architecture of each Linux target (triplets: .make/cross.sh).
ARCHES=(armhf arm64 s390x)
PACKAGES=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
          gcc-aarch64-linux-gnu libc6-dev-arm64-cross
          gcc-s390x-linux-gnu libc6-dev-s390x-cross
          qemu-user qemu-system-arm gcc-arm-none-eabi libnewlib-arm-none-eabi
          libcmocka-dev)
for a in "${ARCHES[@]}"; do PACKAGES+=("libcmocka-dev:$a"); done

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

new_arch=0
foreign=" $(dpkg --print-foreign-architectures | tr '\n' ' ') "
for a in "${ARCHES[@]}"; do
  if [[ $foreign != *" $a "* ]]; then
    log "dpkg --add-architecture $a"
    $SUDO dpkg --add-architecture "$a"
    new_arch=1
  fi
done

missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ] || [ $new_arch = 1 ]; then
  log "installing: ${missing[*]:-(none; new architectures only)}"
  $SUDO apt-get update -q || log "apt-get update partly failed; continuing with the lists we have"
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
else
  log "Debian packages: all ${#PACKAGES[@]} present"
fi

# cmocka's source, for the Cortex-M test images.
. "$TOP/.make/apt-source.sh"
CMOCKA_VERSION=$(dpkg-query -W -f='${Version}\n' libcmocka-dev | head -n1)
cmocka_dir="$BUILD_DIR/src/cmocka-${CMOCKA_VERSION%%-*}"
if [ ! -f "$cmocka_dir/src/cmocka.c" ]; then
  log "fetching the cmocka $CMOCKA_VERSION source"
  . /etc/os-release
  fetch_source "cmocka=$CMOCKA_VERSION" "$VERSION_CODENAME" "$BUILD_DIR/dl"
  mkdir -p "$BUILD_DIR/src"
  tar -C "$BUILD_DIR/src" -xf "$(ls "$BUILD_DIR"/dl/cmocka_"${CMOCKA_VERSION%%-*}".orig.tar.* | head -n1)"
else
  log "cmocka source: $(basename "$cmocka_dir") present"
fi
ln -sfn "$cmocka_dir" "$BUILD_DIR/src/cmocka"
log "done"
