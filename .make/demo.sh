#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: the whole path on one machine, over real TLS.
#   1. a throw-away CA and server certificate (openssl) under $BUILD_DIR/demo/
#   2. a campaigns file: a tuple_mr and a tuple_ml campaign, eps = 1, 4 groups, TPR
#   3. dpm-collector on 127.0.0.1 (TLS 1.3/1.2, SQLite store); the simulated device farm posts
#      with a relay token (it speaks for every simulated device) that may also read estimates.
#      DEMO_DB=postgresql://... and DEMO_COLLECTORS=N (make demo-pg: .make/demo-pg.sh): N
#      collectors share that database, the devices spread over all of them
#   4. DEMO_DEVICES (default 200000) simulated devices, each with a group and a true TPR from a
#      synthetic population (tests/e2e/tool_load.c, "population"), run the SDK and post one
#      report per campaign over TLS
#   5. the collector's estimates beside the ground truth, then the collector is stopped.
# Binaries from $OUT (default build/host). The collector is stopped even if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
DEVICES=${DEMO_DEVICES:-200000}
COLLECTORS=${DEMO_COLLECTORS:-1}
PY=/usr/bin/python3
demo="$BUILD_DIR/${DEMO_NAME:-demo}"
for b in "$OUT/dpm-collector" "$OUT/tests/e2e/tool_load"; do
  [ -x "$b" ] || { echo "demo: $b is missing: run make first" >&2; exit 1; }
done
rm -rf "$demo"
mkdir -p "$demo"

# 1. PKI: ECDSA P-256 CA and a "localhost" server certificate, valid for 2 days.
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$demo/ca.key"
ossl req -x509 -new -key "$demo/ca.key" -sha256 -days 2 -subj "/CN=dpmetrics demo CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -out "$demo/ca.crt"
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$demo/server.key"
ossl req -new -key "$demo/server.key" -subj "/CN=localhost" -out "$demo/server.csr"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$demo/server.ext"
ossl x509 -req -in "$demo/server.csr" -CA "$demo/ca.crt" -CAkey "$demo/ca.key" -sha256 -days 2 \
  -set_serial "0x$(openssl rand -hex 8)" -extfile "$demo/server.ext" -out "$demo/server.crt"

# The farm's bearer token; the collector keeps only its SHA-256.
openssl rand -hex 24 >"$demo/token"
printf 'demo-farm relay=100000000,operator %s\n' \
  "$(tr -d '\n' <"$demo/token" | sha256sum | cut -d' ' -f1)" >"$demo/credentials.txt"

# 2. Campaigns.
cat >"$demo/campaigns.txt" <<'EOF'
# make demo: the same question asked with both tuple mechanisms
[campaign]
id = 1
mechanism = tuple_mr      # group by GRR, TPR by randomized response
eps = 1
groups = 4
metrics = tpr

[campaign]
id = 2
mechanism = tuple_ml      # group by GRR, TPR by discrete Laplace
eps = 1
groups = 4
metrics = tpr
EOF

# 3. The collector(s) (ports chosen by the kernel, read back from the ready files). The farm is
# one client address posting for all devices: no per-address rate or connection limit here.
DB=${DEMO_DB:-$demo/collector.db}
pids=()
stop() {
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap stop EXIT
ports=()
for k in $(seq "$COLLECTORS"); do
  "$OUT/dpm-collector" --listen 127.0.0.1:0 --cert "$demo/server.crt" --key "$demo/server.key" \
    --campaigns "$demo/campaigns.txt" --db "$DB" --ready-file "$demo/port.$k" \
    --credentials "$demo/credentials.txt" --rate-limit 0 --max-conns-per-addr 0 \
    --instance "demo-$k" 2>"$demo/collector.$k.log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    [ -s "$demo/port.$k" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$demo/collector.$k.log" >&2; exit 1; }
    sleep 0.05
  done
  [ -s "$demo/port.$k" ] || { echo "demo: collector $k did not start" >&2; exit 1; }
  ports+=("$(cat "$demo/port.$k")")
  echo "demo: dpm-collector $k listening on https://127.0.0.1:${ports[-1]} (TLS, certificate for localhost; store: ${DB%%\?*})"
done
port=${ports[0]}
portlist=$(IFS=,; echo "${ports[*]}")

# 4. The simulated devices.
echo "demo: $DEVICES simulated devices run the SDK and post their reports over TLS ..."
"$OUT/tests/e2e/tool_load" population --ports "$portlist" --ca "$demo/ca.crt" --campaigns 1,2 \
  --devices "$DEVICES" --clients 64 --batch 100 --server-pid "${pids[0]}" --token "$demo/token" \
  >"$demo/devices.json"

# 5. Estimates from the collector's HTTPS API, next to the truth (from every collector: with a
# shared database they must agree byte for byte).
for c in 1 2; do
  for k in $(seq "$COLLECTORS"); do
    curl -sS --fail --max-time 30 --cacert "$demo/ca.crt" \
      -H "Authorization: Bearer $(cat "$demo/token")" \
      "https://localhost:${ports[$((k - 1))]}/v1/campaigns/$c/estimate" >"$demo/estimate-$c.$k.json"
  done
  cp "$demo/estimate-$c.1.json" "$demo/estimate-$c.json"
  for k in $(seq 2 "$COLLECTORS"); do
    cmp -s "$demo/estimate-$c.1.json" "$demo/estimate-$c.$k.json" ||
      { echo "demo: collectors 1 and $k disagree on campaign $c" >&2; exit 1; }
  done
done
[ "$COLLECTORS" -gt 1 ] && echo "demo: all $COLLECTORS collectors answer byte-identical estimates"
stop
trap - EXIT
"$PY" - "$demo" <<'EOF'
import json, sys
demo = sys.argv[1]
dev = json.load(open(f"{demo}/devices.json"))
lost = dev["reports_sent"] - dev["acked"]
print(f"\n{dev['devices']:,} simulated devices, 4 groups, eps = 1 per report; "
      f"{dev['acked']:,} reports over TLS in {dev['seconds']:.1f} s "
      f"({dev['per_s']:,.0f}/s), {lost} lost\n")
names = {"tuple_mr": "randomized response", "tuple_ml": "discrete Laplace"}
for k, cid in enumerate((1, 2)):
    est = json.load(open(f"{demo}/estimate-{cid}.json"))
    m = est["metrics"][0]
    truth = dev["truth"][k]["metrics"][0]["groups"]
    print(f"campaign {cid}: {est['mechanism']} (group by GRR, TPR by {names[est['mechanism']]}), "
          f"eps {est['eps']:g} (implemented {est['eps_implemented']:.5f}), "
          f"{est['reports']:,} reports stored")
    print(f"  {'group':>5} {'devices':>9} {'est. size':>10} {'true TPR':>9} {'estimate':>9} "
          f"{'95% CI':>18} {'error':>8}  in CI")
    for g, t in zip(m["groups"], truth):
        lo, hi = g["ci95"]
        inside = "yes" if lo <= t["mean"] <= hi else "no"
        print(f"  {g['group']:>5} {t['devices']:>9,} {g['size']:>10,.0f} {t['mean']:>9.4f} "
              f"{g['mean']:>9.4f} {'[%.4f, %.4f]' % (lo, hi):>18} {g['mean'] - t['mean']:>+8.4f}"
              f"  {inside}")
    tg = max(((a, b) for a in range(len(truth)) for b in range(a + 1, len(truth))),
             key=lambda p: abs(truth[p[0]]["mean"] - truth[p[1]]["mean"]))
    true_gap = truth[tg[0]]["mean"] - truth[tg[1]]["mean"]
    mx = m["max_disparity"]
    pair = next(p for p in m["disparities"] if (p["g"], p["h"]) == tg)
    print(f"  largest disparity, group {tg[0]} - group {tg[1]}: true {true_gap:+.4f}, estimated "
          f"{pair['diff']:+.4f}, 95% CI [{pair['ci95'][0]:+.4f}, {pair['ci95'][1]:+.4f}]")
    if (mx["g"], mx["h"]) != tg:
        print(f"  (the estimates' own largest gap is group {mx['g']} - group {mx['h']}: "
              f"{mx['diff']:+.4f})")
    print()
print("Sizes are the collector's estimates (it never sees a true group). A 95% interval misses the\n"
      "truth 1 time in 20, so among these 8 one \"no\" now and then is expected.")
print(f"files: {demo}/ (certificates, campaigns.txt, collector.*.log, *.json)")
EOF
