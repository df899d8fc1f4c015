#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dist.sh OUTDIR  The release source tarball OUTDIR/dpmetrics-X.Y.Z.tar.gz of the commit checked
# out (HEAD), X.Y.Z read from HEAD's sdk/include/dpm/version.h. Reproducible: `git archive` sets
# every entry's time to the commit's, owner root, modes 644/755 (tar.umask 022), the prefix
# dpmetrics-X.Y.Z/; `gzip -n` stores no name or time. So one commit gives the same bytes on
# every run (with the same git and gzip). Only tracked files go in: no build outputs, no fetched
# sources. Uncommitted changes are not in it (a warning says so). Needs a git checkout.
set -euo pipefail
out=${1:?usage: dist.sh OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd -P)
if ! toplevel=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) ||
   [ "$(cd "$toplevel" && pwd -P)" != "$top" ]; then
  echo "make dist: needs a git checkout of dpmetrics ($top is not one: an unpacked release" \
       "tarball cannot make another)" >&2
  exit 1
fi
version=$(git -C "$top" show HEAD:sdk/include/dpm/version.h | sh "$top/.make/version.sh" -)
name=dpmetrics-$version
commit=$(git -C "$top" rev-parse HEAD)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
  echo "dist: warning: uncommitted changes are not in the tarball (it holds commit ${commit:0:12})" >&2
fi
mkdir -p "$out"
tmp=$(mktemp "$out/.$name.XXXXXX")
trap 'rm -f "$tmp"' EXIT
git -C "$top" -c tar.umask=0022 -c core.attributesFile=/dev/null \
  archive --format=tar --prefix="$name/" "$commit" | gzip -n -9 >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out/$name.tar.gz"
trap - EXIT
echo "dist: $out/$name.tar.gz  commit ${commit:0:12}  sha256 $(sha256sum "$out/$name.tar.gz" | cut -d' ' -f1)"
