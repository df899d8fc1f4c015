#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# First steps that used to end in a raw tool error now stop at once with the next step, printing
# TAP: a cross build whose compiler is not installed names `make cross-deps` (not a CMake or
# "gcc: not found" error deep in the build), and the goals that install or only print still
# run. (sdk/sources.mk without the nanopb runtime: tests/unit/test_install.sh.)
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
submake() { env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# a triplet no machine has: its gcc is missing whatever is installed here
X=dpm-no-such-target-linux-gnu-
submake CROSS_COMPILE=$X BUILD_DIR="$work/b" lib >"$work/lib.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "${X}gcc not found: run \`make cross-deps\`" "$work/lib.log" &&
  [ -z "$(find "$work/b" -name "*.o" 2>/dev/null)" ]
tap $? "make CROSS_COMPILE=<missing>- lib: exit 2 before building anything, naming make cross-deps (rc $rc: $(head -c 160 "$work/lib.log"))"

submake CROSS_COMPILE=$X help >"$work/help.log" 2>&1
tap $? "make CROSS_COMPILE=<missing>- help still prints the help"

# negative control: the host compiler exists, so the same goal passes the check
submake CROSS_COMPILE= -n lib >"$work/host.log" 2>&1 && ! grep -q "cross-deps" "$work/host.log"
tap $? "negative control: a host build (compiler present) is not stopped by the check"

echo "1..$n"
exit $failed
