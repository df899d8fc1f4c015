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
# (The config's directory too: a profile may include another, as the lean one does.)
want=$(cat "$config" "$(dirname "$config")"/*.h "$0" "$TOP"/port/tls/patches/*.patch | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$out/library/libmbedcrypto.a" ]; then
  echo "deps: Mbed TLS ($name) up to date"
  exit 0
fi
echo "deps: building Mbed TLS ($name) with $(basename "$config")"
rm -rf "$out"; mkdir -p "$out"
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF \
  -DGEN_FILES=OFF -DMBEDTLS_FATAL_WARNINGS=OFF -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DMBEDTLS_CONFIG_FILE="$config" "$@" >"$out/cmake.log" 2>&1 || { cat "$out/cmake.log"; exit 1; }
cmake --build "$out" -j"$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
# A size-optimised (-Os) build keeps two hot loops at -O2: ChaCha20's block function (GCC -Os
# makes its quarter round a call: 54 against 26 Cortex-M4 instructions per byte) and GCM's
# GHASH (107 against 50 per byte). They seal every two-aggregator report and every TLS record;
# together 1,070 bytes more flash on a Cortex-M4. Each object is recompiled with the exact
# command CMake used plus -O2 (the last -O wins) and replaced in libmbedcrypto.a.
python3 - "$out" <<'PY' || { echo "deps: could not rebuild the -O2 objects of $out" >&2; exit 1; }
import json, os, shlex, subprocess, sys
out = sys.argv[1]
ar = "ar"
for line in open(os.path.join(out, "CMakeCache.txt")):
    if line.startswith("CMAKE_AR:"):
        ar = line.split("=", 1)[1].strip() or ar
for e in json.load(open(os.path.join(out, "compile_commands.json"))):
    if not e["file"].endswith(("/library/chacha20.c", "/library/gcm.c")):
        continue
    cmd = shlex.split(e["command"]) if "command" in e else e["arguments"]
    if "-Os" not in cmd:
        continue
    subprocess.run(cmd + ["-O2"], cwd=e["directory"], check=True)
    obj = os.path.join(e["directory"], cmd[cmd.index("-o") + 1])
    subprocess.run([ar, "rs", os.path.join(out, "library", "libmbedcrypto.a"), obj], check=True,
                   capture_output=True)
PY
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
