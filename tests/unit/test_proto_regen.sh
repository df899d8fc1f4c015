#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated nanopb code ships in sdk/proto so users need no generator; regenerating it from
# dpm.proto + dpm.options with the installed nanopb (sdk/proto/generate.sh) must give identical
# files.
set -uo pipefail
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash sdk/proto/generate.sh "$work" 2>"$work/err"
tap $? "sdk/proto/generate.sh runs nanopb_generator on sdk/proto/dpm.proto"
for f in dpm.pb.h dpm.pb.c; do
  diff -u "sdk/proto/$f" "$work/$f" | head -20 | sed 's/^/# /'
  tap "$(cmp -s "sdk/proto/$f" "$work/$f"; echo $?)" "sdk/proto/$f equals a fresh regeneration"
done
echo "1..$n"
exit $failed
