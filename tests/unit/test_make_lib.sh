#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make lib` builds libdpm.a with a plain C compiler and the nanopb runtime only: no Mbed TLS,
# no fetch, no Debian package tool. Runs it in a copy of the source tree (the checkout's files,
# without build/) under `env -i`, with a PATH holding only cc, as, ar, make, sed, sh, grep,
# find, mkdir and rm, and DPM_NANOPB_DIR pointing at the runtime `make deps` fetched.
# Checks: exit 0, libdpm.a holds every SDK source (sdk/sources.mk) and the runtime, it needs
# no Mbed TLS symbol, and the copy's build/ holds nothing but build/host (no build/mbedtls,
# build/src, build/dl or build/apt: nothing fetched or built besides the library).
# Negative control: without a nanopb runtime `make lib` exits non-zero, says what to do, and
# fetches nothing. Env: BUILD_DIR (where make deps put nanopb), NM.
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
NM=${NM:-nm}
NANOPB=$(cd "$BUILD_DIR/src/nanopb" 2>/dev/null && pwd)
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$NANOPB" ] || [ ! -f "$NANOPB/pb.h" ]; then
  echo "not ok 1 - no nanopb runtime in $BUILD_DIR/src/nanopb (run make deps)"; echo "1..1"; exit 1
fi

# The tree: the checkout's files (git's list when there is one, else everything but build/).
tree=$work/tree
mkdir -p "$tree"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -C "$tree" -xf -
else
  tar --exclude=./build --exclude=./.git --exclude=./.config -cf - . | tar -C "$tree" -xf -
fi
# The tools: only these (gcc's own cc1 and collect2 it finds itself; as it needs on PATH).
mkdir -p "$work/bin"
for tool in cc as ar make sed sh grep find mkdir rm; do
  path=$(command -v "$tool") || { echo "not ok 1 - $tool not found"; echo "1..1"; exit 1; }
  ln -s "$path" "$work/bin/$tool"
done
no_tools=$(for t in cmake apt-get curl python3 pkg-config git; do
  env -i PATH="$work/bin" /bin/sh -c "command -v $t" >/dev/null 2>&1 && echo "$t"; done)
tap "$([ -z "$no_tools" ]; echo $?)" "the clean PATH offers no cmake, apt-get, curl, python3, pkg-config or git${no_tools:+ (found: $no_tools)}"

run_lib() { # LOG [VAR=VALUE...]: make lib in the tree, in the clean environment
  local log=$1; shift
  (cd "$tree" && nice -n 10 env -i PATH="$work/bin" HOME="$work" make -j2 lib CC=cc "$@") >"$log" 2>&1
}

# Negative control first (the tree has no build/ yet): no runtime, no fetch, a message.
run_lib "$work/none.log"
rc=$?
sed 's/^/# /' "$work/none.log" | grep -v '^#   CC ' | head -5
tap "$([ $rc != 0 ] && grep -q 'nanopb runtime missing.*run make deps or set DPM_NANOPB_DIR' "$work/none.log"; echo $?)" \
  "negative control: without nanopb, make lib exits non-zero (status $rc) saying to run make deps or set DPM_NANOPB_DIR"
tap "$([ ! -e "$tree/build/src" ] && [ ! -e "$tree/build/host/libdpm.a" ]; echo $?)" \
  "negative control: nothing fetched, no libdpm.a"
rm -rf "$tree/build"

run_lib "$work/lib.log" DPM_NANOPB_DIR="$NANOPB"
rc=$?
[ $rc = 0 ] || tail -n 15 "$work/lib.log" | sed 's/^/# /'
tap "$rc" "make lib in a clean environment exits 0"
lib=$tree/build/host/libdpm.a
want=$(( $(cd "$tree" && sed -n 's/^DPM_SDK_SRCS += //p' sdk/sources.mk | wc -l) + 3 ))
have=$(ar t "$lib" 2>/dev/null | wc -l)
tap "$([ "$have" = "$want" ]; echo $?)" "libdpm.a holds the SDK's sources and the nanopb runtime ($have objects, want $want)"
mbed=$("$NM" -u "$lib" 2>/dev/null | awk '{print $NF}' | grep -ciE '^(mbedtls|psa)_')
tap "$([ -f "$lib" ] && [ "$mbed" = 0 ]; echo $?)" "libdpm.a needs no Mbed TLS or PSA symbol ($mbed)"
extra=$(cd "$tree/build" 2>/dev/null && ls -A | grep -vx host)
tap "$([ -d "$tree/build/host" ] && [ -z "$extra" ] && [ ! -e "$tree/build/host/libdpm_posix.a" ]; echo $?)" \
  "only build/host was written: no build/mbedtls, src, dl or apt, no libdpm_posix.a${extra:+ (found: $extra)}"

echo "1..$n"
exit $failed
