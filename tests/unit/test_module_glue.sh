#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Zephyr module (port/zephyr) and the ESP-IDF component (port/esp-idf) cannot be built on
# Debian (neither SDK is packaged), so this checks what can be checked without them:
#   - their Kconfig bridges parse with kconfiglib and offer the project's DPM_* options;
#   - their CMakeLists.txt, run by cmake -P against stand-ins for the Zephyr / ESP-IDF
#     functions, name every SDK source the Makefile builds, files that all exist, and keep
#     nanopb private (PB_SYSTEM_HEADER);
#   - the manifests name what the build files expect.
# A negative control shows the source check fails on a missing file. Env: BUILD_DIR, PYTHON.
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
TOP=$(pwd)
NANOPB=$TOP/$BUILD_DIR/src/nanopb
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for k in port/zephyr/Kconfig port/esp-idf/Kconfig; do
  "$PYTHON" - "$k" <<'EOF' >"$work/kconfig.txt" 2>&1
import sys, kconfiglib
kc = kconfiglib.Kconfig(sys.argv[1], warn_to_stderr=False)
if "DPMETRICS" in kc.syms:
    kc.syms["DPMETRICS"].set_value("y")
print(kc.syms["DPM_MAX_BINS"].str_value, kc.syms["DPM_MECH_TUPLE"].str_value)
EOF
  [ "$(cat "$work/kconfig.txt")" = "64 y" ]
  tap $? "$k parses and offers the DPM_* options ($(head -c 60 "$work/kconfig.txt"))"
done

# Stand-ins: each records the files and definitions it is given, failing on a missing path.
cat >"$work/stubs.cmake" <<'EOF'
function(_dpm_files kind)
  foreach(f ${ARGN})
    if(NOT EXISTS "${f}")
      message(SEND_ERROR "missing ${kind}: ${f}")
    endif()
    get_filename_component(f "${f}" REALPATH)
    message(STATUS "${kind} ${f}")
  endforeach()
endfunction()
function(zephyr_library_named name)
  message(STATUS "library ${name}")
endfunction()
function(zephyr_library_sources)
  _dpm_files(src ${ARGN})
endfunction()
function(zephyr_include_directories)
  _dpm_files(inc ${ARGN})
endfunction()
function(zephyr_library_include_directories)
  _dpm_files(inc ${ARGN})
endfunction()
function(zephyr_library_compile_definitions)
  message(STATUS "def ${ARGN}")
endfunction()
function(idf_component_register)
  cmake_parse_arguments(A "" "" "SRCS;INCLUDE_DIRS;PRIV_INCLUDE_DIRS" ${ARGN})
  _dpm_files(src ${A_SRCS})
  _dpm_files(inc ${A_INCLUDE_DIRS} ${A_PRIV_INCLUDE_DIRS})
  set(COMPONENT_LIB stub_lib PARENT_SCOPE)
endfunction()
function(target_compile_definitions)
  message(STATUS "def ${ARGN}")
endfunction()
include("${GLUE}")
EOF
glue() { # NAME CMAKELISTS [VAR=VALUE...]: run it against the stand-ins
  local name=$1 file=$2; shift 2
  local defs=(); for d in "$@"; do defs+=("-D$d"); done
  cmake "${defs[@]}" -DGLUE="$TOP/$file" -P "$work/stubs.cmake" >"$work/$name.log" 2>&1
}
# The sources the Makefile compiles into libdpm.a (sdk/sources.mk's list), as the glue must name them.
{ make -s --no-print-directory print-sdk-srcs; ls "$NANOPB"/pb_{common,encode,decode}.c; } |
  xargs -n1 realpath | sort >"$work/want.txt"
check_glue() { # NAME: its sources equal the Makefile's, and nanopb is renamed
  awk '/-- src / {print $3}' "$work/$1.log" | sort >"$work/$1.src"
  diff "$work/want.txt" "$work/$1.src" | sed 's/^/# /' | head -5
  cmp -s "$work/want.txt" "$work/$1.src" && grep -q 'PB_SYSTEM_HEADER="dpm_nanopb_rename.h"' "$work/$1.log"
}

glue zephyr port/zephyr/CMakeLists.txt CONFIG_DPMETRICS=y ZEPHYR_NANOPB_MODULE_DIR="$NANOPB"
rc=$?
sed 's/^/# /' "$work/zephyr.log" | grep -i 'error' | head -3
[ $rc = 0 ] && check_glue zephyr && grep -q 'library dpmetrics' "$work/zephyr.log"
tap $? "port/zephyr/CMakeLists.txt names every SDK source ($(wc -l <"$work/want.txt") files), all present"

glue esp-idf port/esp-idf/CMakeLists.txt DPM_NANOPB_DIR="$NANOPB"
rc=$?
sed 's/^/# /' "$work/esp-idf.log" | grep -i 'error' | head -3
[ $rc = 0 ] && check_glue esp-idf && grep -q 'DPM_CONFIG_FILE="sdkconfig.h"' "$work/esp-idf.log"
tap $? "port/esp-idf/CMakeLists.txt names every SDK source and hands sdkconfig.h to the SDK"

glue off port/zephyr/CMakeLists.txt ZEPHYR_NANOPB_MODULE_DIR="$NANOPB"
[ $? = 0 ] && ! grep -q -- '-- src ' "$work/off.log"
tap $? "without CONFIG_DPMETRICS the Zephyr module builds nothing"

# Negative control: a nanopb directory without the runtime is reported missing.
! glue missing port/esp-idf/CMakeLists.txt DPM_NANOPB_DIR="$work/none" &&
  grep -q 'missing src' "$work/missing.log"
tap $? "negative control: a missing source fails the check"

grep -q '^  cmake: \.$' port/zephyr/zephyr/module.yml && grep -q '^  kconfig: Kconfig$' port/zephyr/zephyr/module.yml &&
  grep -q '^name: dpmetrics$' port/zephyr/zephyr/module.yml
tap $? "zephyr/module.yml points at the module's CMakeLists.txt and Kconfig"
grep -q '^license: "Apache-2.0"$' port/esp-idf/idf_component.yml && grep -q '^  idf: ' port/esp-idf/idf_component.yml
tap $? "idf_component.yml names the licence and the ESP-IDF version"

echo "1..$n"
exit $failed
