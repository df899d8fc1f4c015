#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A first command installs only what it runs (issue 33 item 7): .make/deps.sh's package sets,
# run against stand-ins for dpkg-query (every package missing) and apt-get (records what it is
# asked to install, then fails so nothing is fetched), and the Makefile's targets that pick them.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

mkdir -p "$work/bin"
cat >"$work/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$work/bin/apt-get" <<'EOF'
#!/bin/sh
[ "$1" = update ] && exit 0
shift 4 # install -y -q --no-install-recommends
echo "$@" >"$APT_LOG"
exit 100
EOF
cat >"$work/bin/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
chmod +x "$work/bin/"*

# asked_for SET: the packages deps.sh asks apt-get for, one per line ("" if it never asks)
asked_for() {
  rm -f "$work/apt.log"
  PATH="$work/bin:$PATH" APT_LOG="$work/apt.log" DEPS_FOR="$1" BUILD_DIR="$work/build" \
    bash "$TOP/.make/deps.sh" >"$work/deps-$1.out" 2>&1
  echo $? >"$work/rc-$1"
  tr ' ' '\n' <"$work/apt.log" 2>/dev/null | sort
}
has() { grep -qx "$2" <<<"$1"; }

build=$(asked_for build)
all=$(asked_for all)
repro=$(asked_for repro)
tap "$([ -n "$build" ] && [ "$(cat "$work/rc-build")" != 0 ]; echo $?)" \
  "DEPS_FOR=build asks apt-get for packages (and stops when it fails)"
ok=0
for p in build-essential cmake nanopb protobuf-compiler libsqlite3-dev libpq-dev openssl dpkg-dev; do
  has "$build" "$p" || { echo "# build set lacks $p"; ok=1; }
done
tap $ok "the build set holds the compiler, cmake, nanopb, SQLite, libpq, openssl, dpkg-dev"
ok=0
for p in chromium postgresql-15 clang-tidy clang-format cppcheck valgrind clang gcc-arm-none-eabi \
  libcmocka-dev python3-matplotlib; do
  has "$build" "$p" && { echo "# build set installs $p, which a build does not run"; ok=1; }
done
tap $ok "the build set leaves out the browser, PostgreSQL, the gates' tools, the Arm compiler, cmocka"
# Control: the same checks see those packages in the set make test uses.
ok=0
for p in chromium postgresql-15 clang-tidy valgrind gcc-arm-none-eabi libcmocka-dev git cmake nanopb; do
  has "$all" "$p" || { echo "# all set lacks $p"; ok=1; }
done
tap $ok "control: DEPS_FOR=all (make test, a bare make deps) asks for all of them"
tap "$(has "$repro" python3-matplotlib && has "$repro" cmake && ! has "$repro" chromium; echo $?)" \
  "the repro set is the build set and the plotting libraries"
PATH="$work/bin:$PATH" APT_LOG="$work/apt.log" DEPS_FOR=bogus BUILD_DIR="$work/build" \
  bash "$TOP/.make/deps.sh" >"$work/bogus.out" 2>&1
rc=$?
tap "$([ $rc = 2 ] && grep -q "DEPS_FOR=bogus is not one of build, repro, all" "$work/bogus.out"; echo $?)" \
  "an unknown set is refused, naming the ones there are"

# The Makefile: demo and the implicit source fetches use the build set, make test the whole one.
rules=$(make -C "$TOP" -pn deps 2>/dev/null)
dep_of() { awk -v t="$1:" '$1 == t { $1 = ""; print; exit }' <<<"$rules"; }
tap "$(grep -qw deps-build <<<"$(dep_of demo)"; echo $?)" "make demo installs the build set"
tap "$(grep -qw deps-repro <<<"$(dep_of repro)"; echo $?)" "make repro installs the repro set"
tap "$(grep -qw deps <<<"$(dep_of test)"; echo $?)" "make test installs everything it runs"
tap "$(grep -c 'deps-build DPM_FETCHING_DEPS=1' "$TOP/Makefile" | grep -qx 2; echo $?)" \
  "a build that finds nanopb's runtime or Mbed TLS missing fetches them with the build set"

echo "1..$n"
exit $failed
