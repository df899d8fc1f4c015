#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The VDAF draft's vectors in tests/vectors/vdaf are the draft's files, unchanged and complete:
# MANIFEST.sha256 holds every JSON file there (no more, no fewer) and their checksums match;
# SOURCE and SOURCE_COMMIT name where they come from; tests/vectors/test_vdaf_vectors.c runs every
# Prio3 file of the manifest. Negative control: a copy with one byte changed fails the check.
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=tests/vectors/vdaf
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$dir" && sha256sum --quiet -c MANIFEST.sha256) >"$work/check.log" 2>&1
rc=$?
sed 's/^/# /' "$work/check.log" | head -5
tap $rc "every file of $dir/MANIFEST.sha256 has its checksum"
listed=$(awk '{print $2}' "$dir/MANIFEST.sha256" | sort)
present=$(cd "$dir" && ls -1 ./*.json | sed 's|^\./||' | sort)
tap "$([ "$listed" = "$present" ] && [ "$(echo "$listed" | wc -l)" -ge 27 ]; echo $?)" \
    "the manifest lists exactly the $(echo "$present" | wc -l) JSON files present"
grep -qE '^[0-9a-f]{40}$' "$dir/SOURCE_COMMIT" && grep -q 'draft-irtf-cfrg-vdaf' "$dir/SOURCE"
tap $? "SOURCE and SOURCE_COMMIT name the draft and its commit"
missing=""
for f in $(echo "$listed" | grep '^Prio3'); do
  grep -q "\"$f\"" tests/vectors/test_vdaf_vectors.c || missing="$missing $f"
done
tap "$([ -z "$missing" ]; echo $?)" "test_vdaf_vectors runs every Prio3 file${missing:+ (not:$missing)}"
cp -r "$dir" "$work/copy" && chmod -R u+w "$work/copy"
f=$(echo "$listed" | head -n 1)
printf '0' | dd of="$work/copy/$f" bs=1 seek=10 conv=notrunc status=none
(cd "$work/copy" && sha256sum --quiet -c MANIFEST.sha256) >/dev/null 2>&1
tap "$([ $? -ne 0 ]; echo $?)" "negative control: a changed byte in $f fails the check"
echo "1..$n"
exit $failed
