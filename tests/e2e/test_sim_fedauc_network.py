#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim network mode for FedAUC against a real dpm-collector over TLS, printing TAP.

The collector runs the campaigns `dpm-sim campaigns` writes for the scenario (fedauc_rr and
fedauc_lap adaptive), each with upload_count = the scenario's devices and started a minute ago
(so run 0 is the period open now). dpm-sim --mode network: every device's round 1 goes up
(POST /v1/fedauc/uploads over 4 TLS clients), the phase closes at the count, every device
fetches its rank reply (GET /v1/fedauc/ID/ranks/TOKEN) and validates it, then the reports are
posted. Checked: the run exits 0 (its own check: the collector's estimate of the period, from
its stored sums, equals ours on the acknowledged reports to 1e-8, every upload reported); its
estimates equal the inprocess run's bit for bit (same devices, same seed: the collector's rank
replies are the in-process server's); the collector's estimate is kept and says 0 dropouts.
Negative control: a second network run with another seed against the same (closed) phase fails
(its uploads are refused: exit 2)."""
import json
import os
import subprocess
import sys
import tempfile
import time

from e2e_util import OUT, ROOT, Tap

SIM = os.path.join(OUT, "dpm-sim")
DEVICES = 400

SCENARIO = f"""\
[scenario]
name = net-fedauc
devices = {DEVICES}
runs = 1
seed = 41
[population]
examples = 6
[group a]
share = 0.5
scores = binormal(auc=0.80, base_rate=0.3)
[group b]
share = 0.5
scores = binormal(auc=0.70, base_rate=0.3)
[campaign rr]
id = 31
mechanism = fedauc_rr
eps = 2
[campaign adaptive]
id = 32
mechanism = fedauc_lap
eps = 4
variant = adaptive
score_bits = 20
"""


def estimates(path):
    with open(path) as f:
        res = json.load(f)
    return [(c["campaign"], it["kind"], it["runs"][0]) for c in res["configs"]
            for it in c["items"]]


def main():
    t = Tap()
    from test_collector import Harness
    with tempfile.TemporaryDirectory(prefix="dpm-sim-fanet.") as tmp:
        scn = os.path.join(tmp, "net.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        t.ok(camp.returncode == 0 and "variant = adaptive" in camp.stdout,
             "dpm-sim campaigns writes the FedAUC campaigns' keys", camp.stdout + camp.stderr)
        extra = f"start = {int(time.time()) - 60}\nupload_count = {DEVICES}\n"
        blocks = camp.stdout.split("\n[campaign]")
        text = blocks[0] + "".join("\n[campaign]" + b.rstrip("\n") + "\n" + extra
                                   for b in blocks[1:])
        h = Harness(campaigns=text)
        try:
            h.start(extra=["--rate-limit", "0"])  # 4 requests per device: no rate limit
            out_net = os.path.join(tmp, "net")
            args = [SIM, "--scenario", scn, "--mode", "network", "--collector",
                    f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4", "--batch", "50",
                    "--out", out_net, "--no-plot", "--token", h.creds.files["harness"]]
            r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
            t.ok(r.returncode == 0,
                 f"network run: {DEVICES} devices upload, fetch their ranks and report over "
                 "4 TLS clients; the collector's estimates equal ours", r.stdout + r.stderr)
            out_in = os.path.join(tmp, "in")
            ri = subprocess.run([SIM, "--scenario", scn, "--out", out_in, "--no-plot", "--quiet"],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
            same = r.returncode == 0 and ri.returncode == 0 and \
                estimates(os.path.join(out_net, "results.json")) == \
                estimates(os.path.join(out_in, "results.json"))
            t.ok(same, "network estimates equal the inprocess run's exactly (same seed)",
                 ri.stderr)
            for cid in (31, 32):
                try:
                    with open(os.path.join(out_net, f"collector-estimate-{cid}.json")) as f:
                        fa = json.load(f)["fedauc"]
                except (OSError, ValueError, KeyError):
                    fa = {}
                t.ok(fa.get("valid") is True and fa.get("uploads") == DEVICES
                     and fa.get("dropouts") == 0,
                     f"campaign {cid}: the collector's estimate is kept: AUC {fa.get('auc')} "
                     f"sd {fa.get('sd')}, {fa.get('uploads')} uploads, 0 dropouts", fa)
            with open(scn + ".2", "w") as f:
                f.write(SCENARIO.replace("seed = 41", "seed = 42"))
            args2 = [a if a != scn else scn + ".2" for a in args]
            args2[args2.index(out_net)] = out_net + "2"
            r2 = subprocess.run(args2, capture_output=True, text=True, timeout=300, cwd=ROOT)
            t.ok(r2.returncode == 2 and "upload phase closed" in r2.stderr,
                 "negative control: other devices after the phase closed are refused (exit 2)",
                 r2.stdout + r2.stderr)
        finally:
            h.stop()
            h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
