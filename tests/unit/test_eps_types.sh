#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ε that cannot be mistaken for a number (issue 28, item 5), at compile time: a campaign's or a
# policy's ε is a dpm_eps_param_t (dpm/types.h), so
#   - assigning a plain integer or float to it (`c.eps = 1;`, `c.eps = 0.5;`) does not compile,
#     with any flags, in C (GCC and Clang) and in C++;
#   - writing one in a brace initializer (`{.eps = 1}`, which C lets fill the struct's one
#     member) is a -Wmissing-braces diagnostic under -Wall, so an error under -Wall -Werror,
#     and a float there is also diagnosed by -Wconversion (GCC) or by default (Clang);
#   - DPM_EPS(x) compiles cleanly under the strictest flags the project uses, also as a static
#     initializer and in C++.
# The run-time half (an ε below 2^-8 refused with its reason) is in tests/unit/test_device.c.
# Negative control: the same probes against headers where the ε of a campaign is the plain
# integer of 0.1.0 (dpm_eps_param_t made an alias of uint32_t) compile silently: the old code
# fails this test.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
STRICT="-std=c99 -Wall -Wextra -Wconversion -Wshadow -Wstrict-prototypes -Wundef -Werror"

probe() { # NAME BODY: a translation unit with BODY inside a function
  cat >"$work/$1.c" <<P
#include "dpm/dpm.h"
dpm_campaign_t probe_campaign(void);
dpm_campaign_t probe_campaign(void)
{
    dpm_device_config_t cfg;
    (void)cfg;
    $2
}
P
}
compiles() { # CC INCLUDE FLAGS... FILE: 0 if it compiles
  local cc=$1 inc=$2 file=${*: -1}; shift 2
  set -- "${@:1:$#-1}"
  "$cc" -I"$inc" -Isdk/proto "$@" -c "$file" -o "$work/out.o" >"$work/diag" 2>&1
}

probe assign_int 'dpm_campaign_t c = {0}; c.eps = 1; return c;'
probe assign_float 'dpm_campaign_t c = {0}; c.budget = 0.5; return c;'
probe policy_int 'cfg.policy.defaults.max_eps = 1; return (dpm_campaign_t){0};'
probe init_int 'dpm_campaign_t c = {.id = 1, .eps = 1, .budget = 1}; return c;'
probe init_float 'dpm_campaign_t c = {.id = 1, .eps = 0.5, .budget = 1}; return c;'
probe limit_positional 'dpm_policy_limit_t l = {0, 1, 4}; (void)l; return (dpm_campaign_t){0};'
probe good 'static const dpm_campaign_t s = {.id = 1, .eps = DPM_EPS(1), .budget = DPM_EPS(4)};
    dpm_campaign_t c = s;
    c.group_eps = DPM_EPS(0.25);
    cfg.policy.defaults = (dpm_policy_limit_t){0, DPM_EPS(1), DPM_EPS_Q16(4u << 16)};
    cfg.policy.device.max_eps = DPM_EPS(2.5);
    return c;'

for cc in gcc clang; do
  if ! command -v "$cc" >/dev/null; then
    tap 1 "$cc missing (Debian package $cc; make deps)"; continue
  fi
  for p in assign_int assign_float policy_int; do
    compiles "$cc" sdk/include -std=c99 "$work/$p.c"
    st=$?
    tap "$([ $st != 0 ] && grep -qiE 'incompatible|assigning to' "$work/diag"; echo $?)" \
      "$cc: $p does not compile, whatever the warning flags"
  done
  for p in init_int init_float limit_positional; do
    compiles "$cc" sdk/include -std=c99 -Wall -Werror "$work/$p.c"
    st=$?
    tap "$([ $st != 0 ] && grep -q 'missing-braces' "$work/diag"; echo $?)" \
      "$cc: $p is a -Wmissing-braces error under -Wall -Werror"
  done
  compiles "$cc" sdk/include -std=c99 -Wall -Wextra -Wconversion "$work/init_float.c"
  tap "$(grep -qE 'float-conversion|literal-conversion' "$work/diag"; echo $?)" \
    "$cc: a float in an ε initializer is also a conversion warning"
  compiles "$cc" sdk/include $STRICT "$work/good.c"
  tap $? "$cc: DPM_EPS / DPM_EPS_Q16 compile cleanly ($STRICT), static initializer included"
  sed 's/^/# /' "$work/diag" | head -5
done
# C++: DPM_EPS as a functional cast; a plain number does not convert
if command -v g++ >/dev/null; then
  printf '#include "dpm/dpm.h"\nint f(void);\nint f(void) { dpm_campaign_t c = {}; c.eps = DPM_EPS(1); return (int)c.eps.q16; }\n' >"$work/good.cc"
  printf '#include "dpm/dpm.h"\nint f(void);\nint f(void) { dpm_campaign_t c = {}; c.eps = 1; return 0; }\n' >"$work/bad.cc"
  g++ -std=c++11 -Wall -Wextra -Werror -Isdk/include -Isdk/proto -c "$work/good.cc" -o "$work/o.o" 2>"$work/diag"
  tap $? "g++: DPM_EPS compiles in C++"
  g++ -std=c++11 -Isdk/include -Isdk/proto -c "$work/bad.cc" -o "$work/o.o" 2>"$work/diag"
  tap "$([ $? != 0 ]; echo $?)" "g++: a plain number does not compile in C++"
else
  tap 1 "g++ missing (Debian package g++)"
fi

# Negative control: headers where a campaign's ε is a plain integer again (0.1.0)
mkdir -p "$work/old"
cp -r sdk/include/dpm "$work/old/"
python3 - "$work/old/dpm/types.h" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "typedef struct {\n    dpm_eps_t q16;\n} dpm_eps_param_t;"
assert old in s
open(p, "w").write(s.replace(old, "typedef dpm_eps_t dpm_eps_param_t; /* 0.1.0 */"))
PY
ok=0
for p in assign_int assign_float policy_int init_int; do
  compiles gcc "$work/old" -std=c99 -Wall -Wextra -Werror "$work/$p.c" || ok=1
done
tap "$([ $ok = 0 ]; echo $?)" \
  "negative control: with a plain-integer ε (0.1.0) every mistake compiles under -Wall -Wextra -Werror"
echo "1..$n"
exit $failed
