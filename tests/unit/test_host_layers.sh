#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# host-sim's folders include one another downwards only, printing TAP:
#   common/    nothing of host-sim's other folders;
#   estimate/  common/ and estimate/ only (the collector and dpm-sim both call it);
#   mech/      no collector/ or sim/ header, apart from the back-arrows tests/unit/test_host_deps.py
#              allows by file:line (that test checks the full rank order of the rooms);
#   collector/ no sim/ header, and sim/ no collector/ header (the two programs share only
#              common/, estimate/ and mech/).
# A negative control plants an estimate/ file that includes a sim/ header (the back-arrow
# estimate/pairwise.c had to sim/stream.h) in a copy and shows the check fails on it.
set -uo pipefail
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

# violations ROOT: every include of ROOT/host-sim that points upwards or sideways, one per line
violations() {
  local root=$1
  (
    cd "$root/host-sim" || exit 2
    grep -rnE '^#include "(estimate|sim|collector|mech)/' common --include='*.[ch]'
    grep -rnE '^#include "(sim|collector|mech)/' estimate --include='*.[ch]'
    grep -rnE '^#include "sim/' mech --include='*.[ch]'
    grep -rnE '^#include "sim/' collector --include='*.[ch]'
    grep -rnE '^#include "collector/' sim --include='*.[ch]'
  )
}

out=$(violations .)
[ -z "$out" ]
tap $? "host-sim includes point downwards only (common < estimate < mech < collector, sim)${out:+: $(echo "$out" | head -3 | tr '\n' ' ')}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/host-sim"
cp -r host-sim/common host-sim/estimate host-sim/mech host-sim/collector host-sim/sim \
  "$work/host-sim/"
printf '#include "sim/pop/sim_rng.h"\n' >"$work/host-sim/estimate/planted.c"
out=$(violations "$work")
[ -n "$out" ] && echo "$out" | grep -q "estimate/planted.c"
tap $? "negative control: an estimate/ file including a sim/ header is found"

echo "1..$n"
exit $failed
