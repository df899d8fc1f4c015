#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo-pg: `make demo` on PostgreSQL with two collectors sharing it. A throw-away cluster
# (tests/e2e/pg_cluster.py: initdb and pg_ctl as the postgres user, a Unix socket in
# $BUILD_DIR/pg/demo, no TCP port) is started, two dpm-collectors (instances demo-1, demo-2)
# use it, the simulated devices post through the first, both answer the estimates (they must
# agree byte for byte), and the cluster is stopped and removed at the end, even if a step fails.
# (Devices spread over several collectors, with one killed: tests/e2e/test_collector_pg.py.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PY=/usr/bin/python3
cluster="$BUILD_DIR/pg/demo"
stop_cluster() { "$PY" tests/e2e/pg_cluster.py stop "$cluster" >/dev/null 2>&1 || true; }
trap stop_cluster EXIT
stop_cluster
socket=$("$PY" tests/e2e/pg_cluster.py start "$cluster")
echo "demo-pg: PostgreSQL cluster started, socket in $socket (no TCP port)"
DEMO_DB="postgresql:///dpm?host=$socket&user=dpm" DEMO_COLLECTORS=2 DEMO_NAME=demo-pg \
  bash .make/demo.sh
