#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-mbedtls.sh NAME OUTDIR CONFIG_HEADER [CMAKE ARGS...]
# Builds the Mbed TLS libraries out of tree with a project-owned config header.
# Skips the build when OUTDIR already holds libraries made from the same header and patches
# (port/tls/patches, applied to the source tree by deps.sh).
set -euo pipefail
name=$1 out=$2 config=$3; shift 3
TOP=$(cd "$(dirname "$0")/.." && pwd)
src=${MBEDTLS_SRC:?set MBEDTLS_SRC to the Mbed TLS source tree}
src=$(cd "$src" && pwd)
stamp="$out/.config.sha256"
want=$(cat "$config" "$0" "$TOP"/port/tls/patches/*.patch | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$out/library/libmbedcrypto.a" ]; then
  echo "deps: Mbed TLS ($name) up to date"
  exit 0
fi
echo "deps: building Mbed TLS ($name) with $(basename "$config")"
rm -rf "$out"; mkdir -p "$out"
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF \
  -DGEN_FILES=OFF -DMBEDTLS_FATAL_WARNINGS=OFF -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DMBEDTLS_CONFIG_FILE="$config" "$@" >"$out/cmake.log" 2>&1 || { cat "$out/cmake.log"; exit 1; }
cmake --build "$out" -j"$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "$want" >"$stamp"
