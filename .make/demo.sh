#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: the whole path on one machine, over real TLS, for every mechanism of the demo
# scenario (host-sim/scenarios/demo.scn: TPR disparities under tuple_mr and tuple_ml, the ROC and
# AUC under roc_hist).
#   1. a throw-away CA and server certificate (openssl)
#   2. the collector's campaigns file, written by `dpm-sim campaigns` from the scenario
#   3. dpm-collector on 127.0.0.1 (TLS 1.3/1.2, SQLite store): start_collector below, the one
#      place the demo invokes it; the farm posts with a relay token that may also read estimates
#   4. DEMO_DEVICES (default 200000) simulated devices run the SDK and post one report per
#      campaign over TLS (`dpm-sim --mode network`: 32 TLS clients, the scenario's population, the
#      population's truth kept in results.json); dpm-sim fetches the collector's estimates
#   5. two trust models on the same devices (host-sim/scenarios/demo_trust.scn, DEMO_TRUST_DEVICES,
#      default 20000): its local-DP campaign through the collector, its two-aggregator campaign
#      through a DAP leader and helper (dpm-collector --role leader|helper) started here, the
#      batch collected from the leader with the collector's key
#   6. the collector's estimates (with their CIs) beside the truth (.make/demo_report.py: each
#      interval once, beside the truth it is meant to cover)
#   7. the console's address; the collector keeps serving at a terminal, else it is stopped.
# Every run has its own directory, $BUILD_DIR/demo/run-<pid>/ ($BUILD_DIR/demo/latest points to
# it): a running demo's collector keeps its files. Older runs are removed, except any whose
# collector is still running (its pid file names a live process) and the last three.
# DEMO_DB=postgresql://... and DEMO_COLLECTORS=N (make demo-pg, .make/demo-pg.sh): N collectors
# share that database (instances demo-1 .. demo-N); the devices post through the first, and every
# collector must then answer byte-identical estimates.
# Binaries from $OUT (default build/host). The collectors are stopped even if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
DEVICES=${DEMO_DEVICES:-200000}
COLLECTORS=${DEMO_COLLECTORS:-1}
SCENARIO=host-sim/scenarios/demo.scn
TRUST=host-sim/scenarios/demo_trust.scn
TRUST_DEVICES=${DEMO_TRUST_DEVICES:-20000}
PY=/usr/bin/python3
start_s=$(date +%s.%N)
for b in "$OUT/dpm-collector" "$OUT/dpm-sim"; do
  [ -x "$b" ] || { echo "demo: $b is missing: run make first" >&2; exit 1; }
done
base="$BUILD_DIR/${DEMO_NAME:-demo}"
run="$base/run-$$"
mkdir -p "$run"
ln -sfn "run-$$" "$base/latest"

# Older runs: keep the last three and any whose collector is alive.
# shellcheck disable=SC2012
for d in $(ls -1dt "$base"/run-* 2>/dev/null | tail -n +4); do
  [ "$d" = "$run" ] && continue
  if [ -s "$d/collector.pid" ] && kill -0 "$(cat "$d/collector.pid")" 2>/dev/null; then
    continue # a collector still uses it
  fi
  rm -rf "$d"
done

# 1. PKI: ECDSA P-256 CA and a "localhost" server certificate, valid for 2 days.
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$run/ca.key"
ossl req -x509 -new -key "$run/ca.key" -sha256 -days 2 -subj "/CN=dpmetrics demo CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -out "$run/ca.crt"
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$run/server.key"
ossl req -new -key "$run/server.key" -subj "/CN=localhost" -out "$run/server.csr"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$run/server.ext"
ossl x509 -req -in "$run/server.csr" -CA "$run/ca.crt" -CAkey "$run/ca.key" -sha256 -days 2 \
  -set_serial "0x$(openssl rand -hex 8)" -extfile "$run/server.ext" -out "$run/server.crt"

# 2. The collector's campaigns, from the scenarios (one eps each): demo.scn's, and the local-DP
# campaign of demo_trust.scn (its two-aggregator campaign is a task of the leader and helper of
# step 5, printed here only as a commented template).
"$OUT/dpm-sim" campaigns --scenario "$SCENARIO" >"$run/campaigns.txt"
"$OUT/dpm-sim" campaigns --scenario "$TRUST" >>"$run/campaigns.txt"

# 3. The collector (port chosen by the kernel, read back from the ready file). The one place the
# demo starts it: adapt its options here (credentials, limits).
# The farm posts for every simulated device with one relay token (the collector keeps only its
# SHA-256), which may also read the estimates; it is one client address, so no per-address rate
# or connection limit here.
start_collector() {
  openssl rand -hex 24 >"$run/token"
  printf 'demo-farm relay=100000000,operator %s\n' \
    "$(tr -d '\n' <"$run/token" | sha256sum | cut -d' ' -f1)" >"$run/credentials.txt"
  for k in $(seq "$COLLECTORS"); do
    "$OUT/dpm-collector" --listen 127.0.0.1:0 --cert "$run/server.crt" --key "$run/server.key" \
      --campaigns "$run/campaigns.txt" --db "${DEMO_DB:-$run/collector.db}" \
      --ready-file "$run/port.$k" --instance "demo-$k" \
      --credentials "$run/credentials.txt" --rate-limit 0 --max-conns-per-addr 0 \
      2>"$run/collector.$k.log" &
    pids+=("$!")
  done
  echo "${pids[0]}" >"$run/collector.pid"
}
stop() {
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  rm -f "$run/collector.pid"
}
# Wait for a server's ready file (its port): READY PID LOG WHAT; its log and exit if it died.
wait_ready() {
  for _ in $(seq 100); do
    [ -s "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; exit 1; }
    sleep 0.05
  done
  echo "demo: $4 did not start" >&2
  exit 1
}
pids=()
start_collector
trap stop EXIT
ports=()
for k in $(seq "$COLLECTORS"); do
  wait_ready "$run/port.$k" "${pids[$((k - 1))]}" "$run/collector.$k.log" "collector $k"
  ports+=("$(cat "$run/port.$k")")
  store=SQLite
  [ -n "${DEMO_DB:-}" ] && store=PostgreSQL
  echo "demo: dpm-collector $k listening on https://127.0.0.1:${ports[-1]} (TLS, certificate for" \
    "localhost; store: $store)"
done
port=${ports[0]}
ln -sfn collector.1.log "$run/collector.log"

# 4. The simulated devices, through the collector.
echo "demo: $DEVICES simulated devices run the SDK and post one report per campaign over TLS ..."
"$OUT/dpm-sim" --scenario "$SCENARIO" --mode network --devices "$DEVICES" --runs 1 \
  --collector "127.0.0.1:$port" --ca "$run/ca.crt" --clients 32 --batch 250 \
  --token "$run/token" --out "$run/sim" --no-plot --quiet
# Several collectors on one database: every one answers what the first one answered.
for k in $(seq 2 "$COLLECTORS"); do
  for f in "$run"/sim/collector-estimate-*.json; do
    cid=${f##*-}
    cid=${cid%.json}
    a=$(curl -sS --fail --max-time 30 --cacert "$run/ca.crt" -H "Authorization: Bearer $(cat "$run/token")" \
      "https://localhost:$port/v1/campaigns/$cid/estimate")
    b=$(curl -sS --fail --max-time 30 --cacert "$run/ca.crt" -H "Authorization: Bearer $(cat "$run/token")" \
      "https://localhost:${ports[$((k - 1))]}/v1/campaigns/$cid/estimate")
    [ "$a" = "$b" ] || { echo "demo: collectors 1 and $k disagree on campaign $cid" >&2; exit 1; }
  done
  echo "demo: collector $k (same database) answers byte-identical estimates for every campaign"
done

# 5. Two trust models, the same devices (demo_trust.scn): its local-DP campaign through the
# collector above; its two-aggregator campaign through a DAP leader and helper, each a
# dpm-collector with its own SQLite store, HPKE key and credentials, one task (a [dap_task]
# with the campaign's eps and sensitivity, `dpm-sim campaigns` prints its template). dpm-sim
# collects the batch from the leader with the collector's key, as dpm-collector dap-collect does
# (waiting while the leader's one job driver aggregates: a few hundred of these 72-entry reports a
# second on 2 cores, so DEMO_TRUST_DEVICES stays at 20,000 by default).
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_aggregators() {
  lport=$(free_port)
  hport=$(free_port)
  k=0
  for who in leader helper collector; do
    k=$((k + 1))
    "$OUT/dpm-collector" dap-keygen --out "$run/$who.hpke-key" --config-id "$k" >"$run/$who.hpke"
  done
  openssl rand -hex 32 >"$run/verify.key"
  openssl rand -hex 24 >"$run/leader.token"
  hash() { tr -d '\n' <"$1" | sha256sum | cut -d' ' -f1; }
  printf 'demo-leader aggregator %s\n' "$(hash "$run/leader.token")" >"$run/helper.creds"
  printf 'demo-operator collector %s\n' "$(hash "$run/token")" >"$run/leader.creds"
  cat >"$run/dap.txt" <<TASK
# the two-aggregator task of demo_trust.scn's auc_2agg (dpm-sim campaigns prints its template)
[dap_task]
id = $(openssl rand 32 | base64 | tr '+/' '-_' | tr -d '=\n')
vdaf = sumvec
length = 72
max = 30
eps = 1
sensitivity = 60
min_batch_size = 100
time_precision = 3600
leader = https://localhost:$lport/dap
helper = https://localhost:$hport/dap
leader_hpke_config = $(cat "$run/leader.hpke")
helper_hpke_config = $(cat "$run/helper.hpke")
collector_hpke_config = $(cat "$run/collector.hpke")
verify_key = verify.key
TASK
  for who in helper leader; do
    p=$hport extra=()
    [ "$who" = leader ] && p=$lport extra=(--dap-helper-token "$run/leader.token" --dap-helper-ca "$run/ca.crt")
    "$OUT/dpm-collector" --listen "127.0.0.1:$p" --cert "$run/server.crt" --key "$run/server.key" \
      --campaigns "$run/dap.txt" --db "$run/$who.db" --role "$who" \
      --dap-hpke-key "$run/$who.hpke-key" --credentials "$run/$who.creds" --rate-limit 0 \
      --max-conns-per-addr 0 --ready-file "$run/$who.ready" "${extra[@]}" 2>"$run/$who.log" &
    pids+=("$!")
    wait_ready "$run/$who.ready" "${pids[-1]}" "$run/$who.log" "the DAP $who"
  done
  echo "demo: a DAP leader on https://127.0.0.1:$lport/dap and its helper on" \
    "https://127.0.0.1:$hport/dap (dpm-collector --role leader|helper, SQLite stores)"
}
start_aggregators
echo "demo: $TRUST_DEVICES other simulated devices (demo_trust.scn), once under local DP through" \
  "the collector, once as Prio3 shares through the leader and the helper ..."
"$OUT/dpm-sim" --scenario "$TRUST" --campaign auc_ldp --mode network --devices "$TRUST_DEVICES" \
  --runs 1 --collector "127.0.0.1:$port" --ca "$run/ca.crt" --clients 32 --batch 250 \
  --token "$run/token" --out "$run/trust-ldp" --no-plot --quiet
"$OUT/dpm-sim" --scenario "$TRUST" --campaign auc_2agg --mode network --devices "$TRUST_DEVICES" \
  --runs 1 --collector "127.0.0.1:$lport" --ca "$run/ca.crt" --clients 8 --batch 100 \
  --token "$run/token" --dap-campaigns "$run/dap.txt" --dap-collector-key "$run/collector.hpke-key" \
  --dap-wait 600 --out "$run/trust-2agg" --no-plot --quiet
elapsed=$(echo "$(date +%s.%N) - $start_s" | bc)

# 6. The collector's estimates (collector-estimate-ID.json, fetched by dpm-sim over HTTPS),
# next to the truth of the simulated population (results.json): .make/demo_report.py.
"$PY" .make/demo_report.py "$run" "$elapsed"

# 7. The console (host-sim/collector/README.md, "The console"): its address and the credential, and the collector keeps
# serving until Ctrl-C when someone is at a terminal. Without one (make test, CI, a pipe) or
# with DEMO_WAIT=0 the demo stops the collector and ends here.
cat <<EOF

The web console of this collector:
  https://localhost:$port/console/
  sign in with any user name (e.g. operator) and the password
  $(cat "$run/token")
  The certificate is the demo's own CA's ($run/ca.crt): the browser warns about it; accept it
  for this address, or import that CA. The same token reads the JSON (curl --cacert $run/ca.crt
  -H "Authorization: Bearer \$(cat $run/token)" https://localhost:$port/v1/campaigns).
EOF
if [ -t 0 ] && [ -t 1 ] && [ "${DEMO_WAIT:-1}" != 0 ] && [ -z "${CI:-}" ]; then
  echo "demo: the collector keeps running for the console: press Ctrl-C to stop it"
  trap 'echo; echo "demo: stopping the collector"; stop; trap - EXIT; exit 0' INT TERM
  while kill -0 "${pids[0]}" 2>/dev/null; do sleep 1; done
  echo "demo: the collector stopped" >&2
  exit 1
fi
echo "demo: no terminal (or DEMO_WAIT=0): the collector is stopped now; run make demo at a" \
  "terminal to keep it running for the console"
stop
trap - EXIT
