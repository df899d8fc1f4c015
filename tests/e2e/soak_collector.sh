#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# soak_collector.sh [SECONDS]: the collector's acceptance load test, kept out of `make test`
# because of its length: 64 concurrent TLS clients with keep-alive post batches of 100 SDK-made
# reports for SECONDS (default 30); passes when every report acknowledged with 200 is in the
# database exactly once (zero lost, zero duplicated). Prints TAP; the collector and the clients
# are always stopped at the end. Binaries from $OUT (default build/host).
#   OUT=build/host bash tests/e2e/soak_collector.sh 30
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
exec /usr/bin/python3 tests/e2e/test_collector.py --soak "${1:-30}"
