#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim network mode for FedAUC against a real dpm-collector over TLS, printing TAP.

The collector runs the campaigns file `dpm-sim campaigns` writes for the scenario (fedauc_rr
over every device, fedauc_lap adaptive over group b's), as written: upload_count = the devices
of the campaign's groups (400 and 200), upload_seconds = 43200, and no start (the collector's
first start opens period 0, which is run 0's). dpm-sim --mode network: every device's round 1 goes up
(POST /v1/fedauc/uploads over 4 TLS clients), the phase closes at the count, every device
fetches its rank reply (GET /v1/fedauc/ID/ranks/TOKEN) and validates it, then the reports are
posted. Checked: the run exits 0 (its own check: the collector's estimate of the period, from
its stored sums, equals ours on the acknowledged reports to 1e-8, every upload reported); its
estimates equal the inprocess run's bit for bit (same devices, same seed: the collector's rank
replies are the in-process server's); the collector's estimate is kept and says 0 dropouts.
Negative controls: a second network run with another seed against the same (closed) phase fails
(its uploads are refused: exit 2); the same file without its upload_count lines leaves the phase
open after all 400 uploads (the run then waits for ranks, and is stopped)."""
import json
import os
import re
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
groups = b
"""
UPLOADS = {31: DEVICES, 32: DEVICES // 2}  # the devices of each campaign's groups


def estimates(path):
    with open(path) as f:
        res = json.load(f)
    return [(c["campaign"], it["kind"], it["runs"][0]) for c in res["configs"]
            for it in c["items"]]


def no_count(t, tmp, scn, text):
    """Negative control: without upload_count the phase stays open after every upload (until
    its 12 h deadline), so the run waits for ranks; it is stopped once the collector has all
    400 uploads of campaign 31."""
    from test_collector import Harness
    h = Harness(campaigns=text)
    est = {}
    try:
        h.start(extra=["--rate-limit", "0"])
        sim = subprocess.Popen([SIM, "--scenario", scn, "--mode", "network", "--collector",
                                f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4", "--batch",
                                "50", "--out", os.path.join(tmp, "nocount"), "--no-plot",
                                "--token", h.creds.files["harness"]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.time() + 120
        while time.time() < deadline and sim.poll() is None:
            st, _, body = h.request("GET", "/v1/campaigns/31/estimate?period=0")
            est = json.loads(body.decode()).get("fedauc", {}) if st == 200 else {}
            if est.get("uploads") == DEVICES:
                time.sleep(1.0)  # the run now asks for ranks: they stay refused
                st, _, body = h.request("GET", "/v1/campaigns/31/estimate?period=0")
                est = json.loads(body.decode()).get("fedauc", {}) if st == 200 else {}
                break
            time.sleep(0.3)
        running = sim.poll() is None
        sim.kill()
        sim.wait()
    finally:
        h.stop()
        h.cleanup()
    t.ok(running and est.get("uploads") == DEVICES and est.get("phase") == "uploading",
         f"negative control: without upload_count the phase is still {est.get('phase')!r} after "
         f"{est.get('uploads')} uploads and the run waits", est)


def main():
    t = Tap()
    from test_collector import Harness
    with tempfile.TemporaryDirectory(prefix="dpm-sim-fanet.") as tmp:
        scn = os.path.join(tmp, "net.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        counts = [int(x) for x in re.findall(r"^upload_count = (\d+)$", camp.stdout, re.M)]
        t.ok(camp.returncode == 0 and "variant = adaptive" in camp.stdout
             and counts == [UPLOADS[31], UPLOADS[32]]
             and camp.stdout.count("\nupload_seconds = 43200\n") == 2,
             f"dpm-sim campaigns writes the FedAUC campaigns' keys, upload_count {counts} (the "
             "devices of their groups) and upload_seconds", camp.stdout + camp.stderr)
        text = camp.stdout  # as written
        no_count(t, tmp, scn, re.sub(r"^upload_count = \d+\n", "", text, flags=re.M))
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
                t.ok(fa.get("valid") is True and fa.get("uploads") == UPLOADS[cid]
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
