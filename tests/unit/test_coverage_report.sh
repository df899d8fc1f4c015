#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# .make/coverage.py's report (make coverage takes ~50 min, so its report is checked here on
# made-up counters): the SDK and port table with the gates, and beside it the figure of
# host-sim/collector with its mechanism modules (host-sim/mech). A stand-in gcov answers for
# every source that has a .gcda: SDK and port files with half their lines and branches run,
# collector and mech files with all of them.
# Checks: the collector line says 100 %, the last line is the SDK's 50 % and the exit status
# is 1 (below the gates). Negative control: a collector file without counters is counted as
# missed, so the collector figure drops, while the SDK's does not move. Env: PYTHON.
set -uo pipefail
PYTHON=${PYTHON:-/usr/bin/python3}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bin"
cat >"$work/bin/gcov" <<EOF
#!$PYTHON
import json, sys
src = sys.argv[-1]
full = src.startswith(("host-sim/collector/", "host-sim/mech/"))
lines = [{"line_number": 1, "count": 3, "branches": [{"count": 1}, {"count": 1 if full else 0}]},
         {"line_number": 2, "count": 1 if full else 0, "branches": []}]
print(json.dumps({"files": [{"file": src, "lines": lines}]}))
EOF
chmod +x "$work/bin/gcov"
out=$work/out
srcs=$(make -s --no-print-directory print-sdk-srcs; ls port/*/*.c; find host-sim/collector host-sim/mech -name '*.c')
for s in $srcs; do
  mkdir -p "$out/obj/$(dirname "$s")"
  : >"$out/obj/$(dirname "$s")/$(basename "${s%.c}").gcda"
done

PATH="$work/bin:$PATH" "$PYTHON" .make/coverage.py "$out" >"$work/report" 2>&1
rc=$?
grep '^coverage:' "$work/report" | sed 's/^/# /'
files=$(find host-sim/collector host-sim/mech -name '*.c' | wc -l)
tap "$(grep -qx "coverage: host-sim/collector lines 100.0% branches 100.0% (reported, not gated; $files files)" \
  "$work/report"; echo $?)" "the report prints host-sim/collector's figure ($files files)"
tap "$(grep -q '^host-sim/collector/ total ' "$work/report"; echo $?)" "and its total row in its own table"
tap "$([ "$(tail -n 1 "$work/report")" = "coverage: lines 50.0% branches 50.0%" ] && [ $rc = 1 ]; echo $?)" \
  "the last line is still the SDK's figure, gated (exit $rc below 95 % / 85 %)"
tap "$(! grep -E '^host-sim/' "$work/report" | grep -q ' 50\.0%'; echo $?)" \
  "collector files are not mixed into the SDK figure"

# Negative control: a collector source without counters.
victim=$(find host-sim/collector -name '*.c' | sort | head -n 1)
rm "$out/obj/$(dirname "$victim")/$(basename "${victim%.c}").gcda"
PATH="$work/bin:$PATH" "$PYTHON" .make/coverage.py "$out" >"$work/report2" 2>&1
line=$(grep '^coverage: host-sim/collector ' "$work/report2")
tap "$(grep -q "^$victim .*no coverage data" "$work/report2" && [[ $line != *"lines 100.0%"* ]] &&
  [ "$(tail -n 1 "$work/report2")" = "coverage: lines 50.0% branches 50.0%" ]; echo $?)" \
  "negative control: $victim without counters lowers the collector figure only (${line#coverage: })"

echo "1..$n"
exit $failed
