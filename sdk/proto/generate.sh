#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerate dpm.pb.[ch] from dpm.proto + dpm.options with the installed nanopb (Debian's
# `nanopb` package), into OUTDIR (default: this folder). The generated files ship in the
# repository so users need no generator; tests/unit/test_proto_regen.sh checks that they equal
# a fresh run of this script. The only step beyond nanopb's output is the license line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nanopb_generator.py -q -I "$here" -D "$tmp" "$here/dpm.proto" >/dev/null
for f in dpm.pb.h dpm.pb.c; do
  { echo "/* SPDX-License-Identifier: Apache-2.0 */"; cat "$tmp/$f"; } >"$out/$f"
done
