#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh: build the collector's request-path fuzzer (tests/fuzz/fuzz_request.c) with clang
# -fsanitize=fuzzer,address,undefined and run it for FUZZ_SECONDS (default 60), then print a
# summary. Exit status 0 only if no crash, leak, sanitizer report or timeout was found.
#   BUILD_DIR=build FUZZ_SECONDS=60 bash .make/fuzz.sh
# Needs: clang (Debian clang-14) and its libFuzzer runtime, which Debian bookworm ships in
# libclang-rt-14-dev (libclang_rt.fuzzer-x86_64.a; pulled in by the clang package), and the
# nanopb runtime source that `make deps` fetches into $BUILD_DIR/src/nanopb.
# Findings (crash-*, leak-*, timeout-*) land in $BUILD_DIR/fuzz/artifacts/; the growing corpus
# in $BUILD_DIR/fuzz/corpus/ (the seeds in tests/fuzz/corpus/ are never modified).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
out="$BUILD_DIR/fuzz"
nanopb="$BUILD_DIR/src/nanopb"

command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG not found (apt-get install clang)" >&2; exit 1; }
if ! "$CLANG" -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
  echo "fuzz: no libFuzzer runtime for $CLANG (Debian: apt-get install libclang-rt-14-dev)" >&2
  exit 1
fi
[ -f "$nanopb/pb_decode.c" ] || { echo "fuzz: $nanopb missing: run make deps" >&2; exit 1; }

# The request path and the SDK layers it uses (not the network, TLS or SQLite parts; the
# credential look-up hashes with Mbed TLS's SHA-256 from the host build of make deps).
mbedtls_lib="$BUILD_DIR/mbedtls/host/library/libmbedcrypto.a"
[ -f "$mbedtls_lib" ] || { echo "fuzz: $mbedtls_lib missing: run make" >&2; exit 1; }
srcs=(tests/fuzz/fuzz_request.c
      host-sim/collector/{http,conn,request,batch,campaigns,aggregate,estimate_json}.c
      host-sim/collector/{bounds,auth,limits,metrics,counters,log,estimate_query}.c
      host-sim/estimate/{disparity,roc}.c host-sim/common/{prob,json_write,edges,text_list}.c
      sdk/src/{core,noise,mech,report,stats}/*.c sdk/proto/dpm.pb.c
      "$nanopb"/pb_{common,encode,decode}.c)
flags=(-std=c99 -g -O1 -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -Wall -Wextra -Wno-unused-parameter
       -Isdk/include -Iport/include -Isdk/proto -Isdk/src/internal -Isdk/src -Ihost-sim
       -I"$nanopb" -isystem "$BUILD_DIR/src/mbedtls/include" -Iport/tls/config
       -DMBEDTLS_CONFIG_FILE='"dpm_mbedtls_host.h"')
mkdir -p "$out/corpus" "$out/artifacts"
echo "fuzz: building $out/fuzz_request with $("$CLANG" --version | head -n1)"
"$CLANG" "${flags[@]}" "${srcs[@]}" "$mbedtls_lib" -lm -lpthread -o "$out/fuzz_request"

echo "fuzz: running for ${FUZZ_SECONDS}s (seeds: tests/fuzz/corpus, dictionary: tests/fuzz/request.dict)"
log="$out/fuzz.log"
set +e
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$out/fuzz_request" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
  -max_len=70000 -dict=tests/fuzz/request.dict -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" tests/fuzz/corpus >"$log" 2>&1
rc=$?
set -e
runs=$(awk '/stat::number_of_executed_units/ {print $NF}' "$log")
cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n1 | awk '{print $2}')
ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n1 | awk '{print $2}')
rss=$(awk '/stat::peak_rss_mb/ {print $NF}' "$log")
files=$(find "$out/corpus" -type f | wc -l)
found=$(find "$out/artifacts" -type f -newer "$out/fuzz_request" | wc -l)
echo "fuzz: fuzz_request: ${runs:-?} inputs in ${FUZZ_SECONDS}s, coverage ${cov:-?} edges /" \
     "${ft:-?} features, corpus ${files} files, peak RSS ${rss:-?} MB, findings ${found}"
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
  grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -n 20 | sed 's/^/fuzz:   /'
  echo "fuzz: FAILED (exit $rc); full log: $log"
  exit 1
fi
echo "fuzz: passed, no crash, leak, sanitizer report or timeout"
