#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every fuzz target builds (make fuzz-build: clang, libFuzzer, ASan + UBSan) and runs once over
# each of its seeds without a finding, so a harness that no longer compiles, links or passes
# its own seeds fails `make test` instead of going unnoticed until someone runs `make fuzz`.
# Negative controls: .make/fuzz.sh must report a harness that crashes on a seed, one that has
# no seeds, and one whose crash only fuzzing finds.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A fresh make: this script may run inside `make test` of another variant (sanitize,
# coverage), whose command-line variables must not reach the fuzz build.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" \
  fuzz-build >"$work/build.log" 2>&1
rc=$?
tail -n 20 "$work/build.log" | grep -E 'error|Error' | sed 's/^/# /'
tap "$rc" "make fuzz-build builds every target"

bins=()
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  bin="$BUILD_DIR/host-fuzz/fuzz/$name"
  bins+=("$bin")
  out=$(bash .make/fuzz.sh --seeds "$bin" 2>&1)
  st=$?
  echo "$out" | sed 's/^/# /'
  seeds=$(find "tests/fuzz/corpus/${name#fuzz_}" -type f 2>/dev/null | wc -l)
  tap "$([ "$st" = 0 ] && [ "$seeds" -gt 0 ] &&
        echo "$out" | grep -q "^fuzz ${name#fuzz_}: $seeds executions, 0 crashes"; echo $?)" \
      "${name#fuzz_}: every one of its $seeds seeds runs, no finding"
done
tap "$([ "${#bins[@]}" -ge 7 ]; echo $?)" "${#bins[@]} fuzz targets (at least 7: request and the six device parsers)"

# Negative controls, built with the same toolchain: a target that aborts on inputs starting
# with "boom".
mkdir -p "$work/bin" "$work/corpus/canary" "$work/corpus/empty"
cat >"$work/canary.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n >= 4 && memcmp(d, "boom", 4) == 0) {
        abort();
    }
    return 0;
}
C
clang -g -fsanitize=fuzzer,address "$work/canary.c" -o "$work/bin/fuzz_canary" 2>"$work/cc.log"
tap $? "the canary target builds"
cp "$work/bin/fuzz_canary" "$work/bin/fuzz_empty"
printf 'fine' >"$work/corpus/canary/a"
printf 'boom' >"$work/corpus/canary/b"
out=$(FUZZ_CORPUS="$work/corpus" bash .make/fuzz.sh --seeds "$work/bin/fuzz_canary" 2>&1)
st=$?
tap "$([ "$st" != 0 ] && echo "$out" | grep -q '^fuzz canary: .* 1 crashes'; echo $?)" \
    "negative control: a seed that crashes fails the run and is counted"
out=$(FUZZ_CORPUS="$work/corpus" bash .make/fuzz.sh --seeds "$work/bin/fuzz_empty" 2>&1)
tap "$([ $? != 0 ]; echo $?)" "negative control: a target without seeds fails the run"
rm "$work/corpus/canary/b"
out=$(FUZZ_CORPUS="$work/corpus" FUZZ_SECONDS=20 bash .make/fuzz.sh "$work/bin/fuzz_canary" 2>&1)
st=$?
echo "$out" | head -n 3 | sed 's/^/# /'
tap "$([ "$st" != 0 ] && echo "$out" | grep -qE '^fuzz canary: [1-9][0-9]* executions, 1 crashes'; echo $?)" \
    "negative control: fuzzing finds the crash no seed shows, and fails"
echo "1..$n"
exit $failed
