#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim network mode for per-group roc_hist (roc_hist_groups) against a real dpm-collector
over TLS (issue 17 items 4 and 5), printing TAP. The collector runs the campaign `dpm-sim
campaigns` writes (groups, group_eps: the device's fingerprint); checks: the network run exits
0 (its own cross-check: the collector's every group's AUC and sd and every gap and sd equal
dpm-sim's on the reports it acknowledged, to 1e-8), its estimates equal the inprocess run's on
the same seed, the collector's estimate JSON equals dpm-sim's items, and (negative control) a
run of another seed into the same database fails the cross-check."""
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
name = netrocg
devices = 4000
runs = 1
seed = {seed}
[population]
examples = 8
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.3
scores = binormal(auc=0.70, base_rate=0.4)
[group c]
share = 0.2
scores = binormal(auc=0.60, base_rate=0.4)
[campaign rocg]
id = 41
mechanism = roc_hist_groups
eps = 4
group_eps = 1.5000153
bins = 6
"""


def estimates(path):
    with open(path) as f:
        res = json.load(f)
    return {(c["id"], it["name"], it["kind"]): it["runs"][0] for c in res["configs"]
            for it in c["items"]}


def collector_items(out):
    """{(name, kind): the collector's estimate} from the kept estimate JSON (names as dpm-sim's:
    the scenario's groups a, b, c in campaign order)."""
    with open(os.path.join(out, "collector-estimate-41.json")) as f:
        e = json.load(f)["roc_groups"]
    names = "abc"
    got = {(names[x["group"]], "auc_group"): x["auc"] for x in e["by_group"]}
    got.update({(f"{names[x['g']]}-{names[x['h']]}", "auc_gap"): x["gap"] for x in e["gaps"]})
    return got


def main():
    t = Tap()
    with tempfile.TemporaryDirectory(prefix="dpm-sim-netrocg.") as tmp:
        scn = os.path.join(tmp, "net.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO.format(seed=5))
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        t.ok(camp.returncode == 0 and "groups = 3" in camp.stdout,
             "dpm-sim campaigns writes the collector's per-group campaign", camp.stderr)
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
                 "per-group AUCs, gaps and sds equal ours", r.stdout + r.stderr)
            out_in = os.path.join(tmp, "in")
            ri = subprocess.run([SIM, "--scenario", scn, "--out", out_in, "--no-plot", "--quiet"],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
            net = estimates(os.path.join(out_net, "results.json")) if r.returncode == 0 else {}
            inp = estimates(os.path.join(out_in, "results.json")) if ri.returncode == 0 else {}
            t.ok(net and net == inp, "network estimates equal the inprocess run's on the same "
                 "seed", ri.stderr)
            got = collector_items(out_net) if r.returncode == 0 else {}
            diffs = {k: (v, net.get((41, k[0], k[1]), [None])[0]) for k, v in got.items()}
            same = len(got) == 6 and all(a is not None and b is not None and abs(a - b) <= 1e-8
                                         for a, b in diffs.values())
            t.ok(same, "the collector's 3 group AUCs and 3 gaps are dpm-sim's ("
                 + ", ".join(f"{k[0]} {v[0]:.4f}" for k, v in diffs.items() if v[0] is not None)
                 + ")", diffs)
            other = os.path.join(tmp, "other.scn")
            with open(other, "w") as f:
                f.write(SCENARIO.format(seed=6))
            r2 = network(other, os.path.join(tmp, "net2"))
            t.ok(r2.returncode != 0 and "collector" in (r2.stdout + r2.stderr),
                 "negative control: another seed's run into the same database fails the "
                 f"cross-check (exit {r2.returncode})", r2.stdout + r2.stderr)
            ok, out = h.consistent()
            t.ok(ok, f"dpm-collector verify: the stored per-group sums equal the reports' ({out})")
            t.ok(h.stop() == 0, "clean stop")
        finally:
            h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
