#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file (C, headers, Python, shell, proto, nanopb options, scenarios, make and
# Kconfig files, CMake files, build templates, module manifests) carries
# "SPDX-License-Identifier: Apache-2.0" in its first three lines. Works in a git checkout and in
# an unpacked release tarball (no .git).
set -uo pipefail
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

# Source files under the directory $1 (relative names), data files (corpora, JSON, Markdown)
# excluded.
sources() {
  (cd "$1" && if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files; else
     find . -path ./build -prune -o -type f -print | sed 's|^\./||'; fi) |
    grep -vE '^tests/fuzz/corpus/' |
    grep -E '\.(c|h|py|sh|proto|options|scn|cmake|dict|mk|in|yml)$|(^|/)(Makefile|Kconfig|CMakeLists\.txt|run)$|\.make/'
}
# Files under $1 whose first three lines lack the tag.
untagged() {
  sources "$1" | while read -r f; do
    head -n 3 "$1/$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || echo "$f"
  done
}

missing=$(untagged .)
count=$(sources . | wc -l)
[ -n "$missing" ] && echo "$missing" | sed 's/^/# missing: /'
tap "$([ -z "$missing" ] && [ "$count" -gt 100 ]; echo $?)" "all $count source files carry the SPDX line"

# Negative control: a directory with one tagged and one untagged file must flag exactly one.
ctl=$(mktemp -d)
trap 'rm -rf "$ctl"' EXIT
printf '/* SPDX-License-Identifier: Apache-2.0 */\nint a;\n' >"$ctl/good.c"
printf '/* no license line */\nint b;\n' >"$ctl/bad.c"
tap "$([ "$(untagged "$ctl")" = "bad.c" ]; echo $?)" "negative control: an untagged file is flagged"

[ -f LICENSE ] && grep -q 'Apache License' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE
tap $? "LICENSE holds the Apache License 2.0"
echo "1..$n"
exit $failed
