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
# Mbed TLS's own Makefile build puts its 3rdparty code (Everest's X25519, which the project's
# configs enable) into libmbedcrypto.a; its CMake build makes a separate libeverest.a. Fold it
# in, so every consumer links the same three archives whichever way Mbed TLS was built.
everest="$(cd "$out" && pwd)/3rdparty/everest/libeverest.a"
if [ -f "$everest" ]; then
  x="$out/everest-objects"; rm -rf "$x"; mkdir -p "$x"
  ar=$(awk -F= '/^CMAKE_AR:/ {print $2}' "$out/CMakeCache.txt")
  (cd "$x" && "${ar:-ar}" x "$everest") && "${ar:-ar}" rs "$out/library/libmbedcrypto.a" "$x"/* ||
    { echo "deps: could not fold $everest into libmbedcrypto.a" >&2; exit 1; }
  rm -rf "$x"
fi
echo "$want" >"$stamp"
