#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim network mode against a real dpm-collector over TLS on loopback, printing TAP.

The collector runs with the campaigns `dpm-sim campaigns` writes for the scenario (throw-away
PKI and database from tests/e2e/test_collector.py's Harness). Checks: the network run exits 0
(its own check: the collector's per-group report counts equal the reports it sent), its
estimates equal the inprocess run's bit for bit (same devices, same seeds, same reports), the
collector's estimate JSON is kept, a second identical run is absorbed by the collector's
de-duplication (counts unchanged, still exit 0), and a wrong CA fails the handshake (exit 2).
A roc_hist campaign rides along: the collector's summed histogram must equal ours cell by cell
(dpm-sim's own check) and its AUC / ROC estimate must equal dpm-sim's, also after a collector
restart (aggregates rebuilt from the database). A second one with 64 bins makes reports of more
than 127 bytes, whose length takes two varint bytes inside a Batch.
Fails when dpm-sim or dpm-collector is not built (make test builds them first)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, os.environ.get("OUT", "build/host"))
SIM = os.path.join(OUT, "dpm-sim")
COLLECTOR = os.path.join(OUT, "dpm-collector")

SCENARIO = """\
[scenario]
name = net
devices = 3000
runs = 1
seed = 31
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4, examples=10)
[group b]
share = 0.3
tpr = constant(0.7)
fpr = constant(0.1)
[group c]
share = 0.2
tpr = beta(4, 2)
fpr = beta(1, 9)
[campaign mr]
id = 21
mechanism = tuple_mr
eps = 1
metrics = tpr
[campaign ml]
id = 22
mechanism = tuple_ml
eps = 2
metrics = tpr, fpr
[campaign roc]
id = 23
mechanism = roc_hist
eps = 1
edges = 0.1, 0.3, 0.5, 0.6, 0.9
groups = a
[campaign rocwide]
id = 24
mechanism = roc_hist
eps = 1
bins = 64
groups = a
"""


def tap(n, ok, what, diag=""):
    print(f"{'ok' if ok else 'not ok'} {n} - {what}", flush=True)
    if not ok:
        for line in str(diag).splitlines()[:20]:
            print(f"# {line}", flush=True)
    return ok


def estimates(path):
    with open(path) as f:
        res = json.load(f)
    return [(c["campaign"], it["metric"], it["kind"], it["name"], it["runs"][0])
            for c in res["configs"] for it in c["items"]] + \
        [(c["campaign"], "roc", c["roc"]["run0"]["tpr"]) for c in res["configs"] if "roc" in c]


def main():
    # make test builds both programs first, and the harness is in this directory: anything
    # missing is a failure, not a skip
    if not (os.access(SIM, os.X_OK) and os.access(COLLECTOR, os.X_OK)):
        print(f"not ok 1 - dpm-sim and dpm-collector are built ({SIM}, {COLLECTOR})")
        print("1..1")
        return 1
    try:
        from test_collector import Harness  # the collector's own test harness (PKI, process)
    except ImportError as e:
        print(f"not ok 1 - tests/e2e/test_collector.py harness imports: {e}")
        print("1..1")
        return 1
    failed = 0
    n = 0
    with tempfile.TemporaryDirectory(prefix="dpm-sim-net.") as tmp:
        scn = os.path.join(tmp, "net.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        h = Harness(campaigns=camp.stdout)
        try:
            h.start()
            out_net = os.path.join(tmp, "net")
            args = [SIM, "--scenario", scn, "--mode", "network", "--collector",
                    f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4", "--batch", "50",
                    "--out", out_net, "--no-plot", "--token", h.creds.files["harness"]]
            r = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
            n += 1
            failed += not tap(n, r.returncode == 0,
                              "network run: 4 TLS clients post every device's report; the "
                              "collector's counts equal ours", r.stdout + r.stderr)
            out_in = os.path.join(tmp, "in")
            ri = subprocess.run([SIM, "--scenario", scn, "--out", out_in, "--no-plot", "--quiet"],
                                capture_output=True, text=True, timeout=120, cwd=ROOT)
            same = r.returncode == 0 and ri.returncode == 0 and \
                estimates(os.path.join(out_net, "results.json")) == \
                estimates(os.path.join(out_in, "results.json"))
            n += 1
            failed += not tap(n, same, "network estimates equal the inprocess run's exactly",
                              ri.stderr)
            est = {}
            for cid in (21, 22, 23, 24):
                path = os.path.join(out_net, f"collector-estimate-{cid}.json")
                try:
                    with open(path) as f:
                        est[cid] = json.load(f)
                except (OSError, ValueError):
                    est[cid] = None
            with open(os.path.join(out_net, "results.json")) as f:
                reports = {c["id"]: c["reports"] for c in json.load(f)["configs"]}
            good = all(est[c] is not None and est[c]["reports"] == reports[c] > 2000
                       for c in (21, 22)) and len(est[22]["metrics"]) == 2
            n += 1
            failed += not tap(n, good, "the collector's estimate JSON is kept, with our report "
                              "counts", json.dumps(est)[:400])
            # roc_hist: the collector's estimate (same code, same summed reports) is ours
            with open(os.path.join(out_net, "results.json")) as f:
                rocs = {c["id"]: c["roc"] for c in json.load(f)["configs"] if "roc" in c}
            roc = rocs[23]
            croc = (est.get(23) or {}).get("roc") or {}
            good = est.get(23) is not None and est[23]["reports"] == reports[23] > 1000 and \
                croc.get("valid") is True and \
                abs(croc.get("auc", -1) - roc["run0"]["auc"]) < 1e-8 and \
                abs(croc.get("auc_unbinned", -1) - roc["run0"]["auc_unbinned"]) < 1e-8 and \
                croc["auc_unbinned"] != croc["auc"] and \
                all(abs(a - b) < 1e-8 for a, b in zip(croc.get("auc_unbinned_ci", []),
                                                      roc["run0"]["unbinned_ci"])) and \
                all(abs(a - b) < 1e-8 for a, b in zip(croc.get("tpr", []), roc["run0"]["tpr"]))
            n += 1
            failed += not tap(n, good, "roc_hist: the collector's AUC (binned and unbinned) and "
                              "ROC equal dpm-sim's for the same reports", json.dumps(croc)[:400])
            wide = (est.get(24) or {}).get("roc") or {}
            good = est.get(24) is not None and est[24]["reports"] == reports[24] > 1000 and \
                len(wide.get("tpr", [])) == 65 and \
                abs(wide.get("auc", -1) - rocs[24]["run0"]["auc"]) < 1e-8
            n += 1
            failed += not tap(n, good, "roc_hist with 64 bins (reports over 127 bytes): every "
                              "report stored, the collector's AUC equals dpm-sim's",
                              json.dumps(est.get(24))[:400])
            r2 = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
            n += 1
            failed += not tap(n, r2.returncode == 0,
                              "an identical second run is absorbed by de-duplication",
                              r2.stdout + r2.stderr)
            # restart: the aggregates (roc_hist histograms from the stored report bytes) are
            # rebuilt from the database; a third identical run checks them cell by cell
            h.stop()
            h.start(port=h.port)
            r3 = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
            n += 1
            failed += not tap(n, r3.returncode == 0,
                              "after a collector restart its rebuilt counts and roc_hist sums "
                              "still equal ours", r3.stdout + r3.stderr)
            # negative control: other devices (another seed) into the same database: the
            # collector now holds two runs' reports, and its answer is not ours
            r4 = subprocess.run(args + ["--seed", "32"], capture_output=True, text=True,
                                timeout=120, cwd=ROOT)
            n += 1
            failed += not tap(n, r4.returncode == 1 and "differs from ours at reports" in r4.stderr
                              and "was the database fresh?" in r4.stderr,
                              "control: a collector holding other reports too is caught (exit 1, "
                              "the member that differs named)", r4.stderr[-600:])
            bad = [a if a != h.ca else os.path.join(tmp, "wrong-ca.pem") for a in args]
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                            os.path.join(tmp, "k.pem"), "-out", os.path.join(tmp, "wrong-ca.pem"),
                            "-subj", "/CN=wrong", "-days", "1"], capture_output=True)
            r3 = subprocess.run(bad, capture_output=True, text=True, timeout=120, cwd=ROOT)
            n += 1
            failed += not tap(n, r3.returncode == 2 and "TLS" in r3.stderr,
                              "a wrong CA fails the handshake (exit 2)", r3.stderr)
        finally:
            h.stop()
            h.cleanup()
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
