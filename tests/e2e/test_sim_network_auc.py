#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim network mode for dpauc, ustat_bins and ustat_tree against a real dpm-collector over
TLS (issue 17 item 5), printing TAP. The collector runs the campaigns `dpm-sim campaigns` writes;
checks: the network run exits 0 (its own cross-check: dpauc's summed counts equal ours exactly,
the ustat AUCs equal ours to 1e-8), its estimates equal the inprocess run's on the same seed,
the collector's estimate JSON equals dpm-sim's AUCs, and (negative control) a run of another
seed into the same database fails the cross-check (the collector then holds both runs)."""
import json
import os
import subprocess
import sys
import tempfile

from e2e_util import ROOT, Tap
from test_collector import OUT, Harness

SIM = os.path.join(OUT, "dpm-sim")

SCENARIO = """\
[scenario]
name = netauc
devices = 3000
runs = 1
seed = {seed}
[population]
examples = 1
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.4
scores = binormal(auc=0.70, base_rate=0.4)
[campaign dpauc]
id = 31
mechanism = dpauc
eps = 4
thresholds = 5
[campaign bins]
id = 32
mechanism = ustat_bins
eps = 2
k = 8
[campaign tree]
id = 33
mechanism = ustat_tree
eps = 4
depth = 3
grr_levels = 1
"""


def estimates(path):
    with open(path) as f:
        res = json.load(f)
    return {(c["id"], it["name"], it["kind"]): it["runs"][0] for c in res["configs"]
            for it in c["items"]}


def collector_aucs(out):
    """{(campaign id, item name): the collector's AUC} from the kept estimate JSON."""
    got = {}
    for cid in (31, 32, 33):
        with open(os.path.join(out, f"collector-estimate-{cid}.json")) as f:
            e = json.load(f)
        if cid == 31:
            got[(31, "server_A")] = e["dpauc"]["variants"]["A"]["auc"]
            got[(31, "server_B")] = e["dpauc"]["variants"]["B"]["auc"]
        else:
            got[(cid, "model")] = e["ustat_bins" if cid == 32 else "ustat_tree"]["auc"]
    return got


def main():
    t = Tap()
    with tempfile.TemporaryDirectory(prefix="dpm-sim-netauc.") as tmp:
        scn = os.path.join(tmp, "net.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO.format(seed=5))
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        t.ok(camp.returncode == 0, "dpm-sim campaigns writes the collector's campaigns",
             camp.stderr)
        h = Harness(campaigns=camp.stdout)
        try:
            h.start()

            def network(scenario, out):
                return subprocess.run(
                    [SIM, "--scenario", scenario, "--mode", "network", "--collector",
                     f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4", "--batch", "50",
                     "--out", out, "--no-plot", "--token", h.creds.files["harness"]],
                    capture_output=True, text=True, timeout=300, cwd=ROOT)

            out_net = os.path.join(tmp, "net")
            r = network(scn, out_net)
            t.ok(r.returncode == 0, "network run: every report posted over TLS; the collector's "
                 "sums (dpauc) and AUCs (ustat) equal ours", r.stdout + r.stderr)
            out_in = os.path.join(tmp, "in")
            ri = subprocess.run([SIM, "--scenario", scn, "--out", out_in, "--no-plot", "--quiet"],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
            net = estimates(os.path.join(out_net, "results.json")) if r.returncode == 0 else {}
            inp = estimates(os.path.join(out_in, "results.json")) if ri.returncode == 0 else {}
            t.ok(net and net == inp, "network estimates equal the inprocess run's on the same "
                 "seed", ri.stderr)
            got = collector_aucs(out_net) if r.returncode == 0 else {}
            diffs = {k: (v, net.get((k[0], k[1], "auc"), [None])[0]) for k, v in got.items()}
            same = bool(got) and all(a is not None and b is not None and abs(a - b) <= 1e-8
                                     for a, b in diffs.values())
            t.ok(same, f"the collector's AUCs are dpm-sim's ({diffs})")
            other = os.path.join(tmp, "other.scn")
            with open(other, "w") as f:
                f.write(SCENARIO.format(seed=6))
            r2 = network(other, os.path.join(tmp, "net2"))
            t.ok(r2.returncode != 0 and "collector" in (r2.stdout + r2.stderr),
                 "negative control: another seed's run into the same database fails the "
                 f"cross-check (exit {r2.returncode})", r2.stdout + r2.stderr)
            t.ok(h.stop() == 0, "clean stop")
        finally:
            h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
