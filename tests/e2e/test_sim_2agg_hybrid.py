#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The two-aggregator hybrid in dpm-sim (roc_hist_2agg with `local_eps`): every device also flips
each example's label by randomized response at eps0 before sharding, and the estimator
debiases (host-sim/estimate/roc_central.h).

- results.json's "two_aggregators" gains "local": trust model, privacy unit, local_eps and the
  flip probability (the SDK's RR, q within 1e-6 of 1 / (1 + e^eps0));
- exact mode (the flips drawn exactly per cell): every AUC, gap, TPR, FPR and count interval
  covers at its level and every error is the size predicted, at eps0 1 and 4 (200 runs);
- the flips cost accuracy: each gap's RMSE above the same campaign's without them;
- inprocess mode: the SDK's device flips the labels (told by the task's label-RR extension);
  the errors are the size the estimator predicts (a device that did not flip would fail it:
  at eps0 1 the debias of unflipped counts with 20 % positives drives the positives below 0);
- the planner (`dpm-sim plan --local-eps`) states both eps, plans more devices than without
  the flips, and its check simulates the hybrid campaign; what it refuses;
- network mode refuses a deployed task whose label RR differs from the campaign's
  (tests/e2e/test_sim_2agg_network.py runs the matching one).
"""
import json
import math
import os
import sys
import tempfile

from e2e_util import Tap, read_json, run_sim
from test_sim_2agg import POP  # the same three groups as the plain mode's test
CAMPAIGN = ("[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nbins = 8\n"
            "max_device_examples = 20\n")


def scenario(d, name, body, devices=50000, runs=200, mode="exact"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(f"[scenario]\nname = {name}\ndevices = {devices}\nruns = {runs}\nmode = {mode}\n"
                f"seed = 11\n{POP}{body}")
    return path


def run(d, name, body, **kw):
    p = scenario(d, name, body, **kw)
    out = os.path.join(d, name + ".out")
    r = run_sim("--scenario", p, "--out", out, "--quiet")
    cfg = read_json(out, "results.json")["configs"][0] if r.returncode == 0 else None
    return r, cfg


def in_band(items, runs):
    """Items whose interval covers too rarely, or whose RMSE is outside the chi-square band of
    the predicted sd (two-sided, p 1e-6 each: 200 runs [0.765, 1.252], 10 runs [0.171, 2.203]).
    The unbinned items (_unb) are checked for coverage only: their error against the model's
    AUC includes the interpolation bias their intervals bound but their sd does not hold."""
    lo, hi, least = (0.765, 1.252, 173) if runs == 200 else (0.17, 2.21, 0)
    return [(i["metric"], i["kind"], i["name"], i["coverage"], i["rmse"], i["mean_sd"])
            for i in items if i.get("mean_sd") is not None
            and (i["coverage"] * runs < least
                 or (not i["kind"].endswith("_unb")
                     and not lo * i["mean_sd"] <= i["rmse"] <= hi * i["mean_sd"]))]


def main():
    t = Tap()
    with tempfile.TemporaryDirectory() as d:
        body = CAMPAIGN + "metrics = tpr, fpr\n"
        r, plain = run(d, "plain.scn", body)
        for e0 in (1, 4):
            r, h = run(d, f"hybrid{e0}.scn", body + f"local_eps = {e0}\n")
            if not t.ok(r.returncode == 0, f"local_eps = {e0}: the hybrid runs in exact mode",
                        r.stderr[-400:]):
                return t.done()
            loc = h.get("two_aggregators", {}).get("local", {})
            q = 1.0 / (1.0 + math.exp(e0))
            t.ok(loc.get("local_eps") is not None and 0 < loc["local_eps"] <= e0
                 and abs(loc.get("label_flip", 0) - q) < 1e-6
                 and "both aggregators collude" in loc.get("trust_model", "")
                 and "label" in loc.get("privacy_unit", "")
                 and f"local_eps={e0}" in h["label"]
                 and h["eps_implemented"] == 1,
                 f"results.json: the local guarantee (eps0 {e0}, flip {q:.6f}), the central eps "
                 "still the one charged", loc)
            bad = in_band(h["items"], 200)
            n = sum(1 for i in h["items"] if i.get("mean_sd") is not None)
            t.ok(n >= 30 and not bad,
                 f"local_eps = {e0}: all {n} AUC, gap, TPR, FPR and count intervals "
                 "cover at their level, their errors the size predicted (50,000 devices, 200 "
                 "runs)", bad)
            if e0 == 1:
                pi = {(i["kind"], i["name"]): i for i in plain["items"]}
                worse = [(k, i["rmse"], pi[k]["rmse"]) for i in h["items"]
                         for k in [(i["kind"], i["name"])]
                         if i["kind"] == "auc_gap" and not i["rmse"] > pi[k]["rmse"]]
                t.ok(not worse, "the flips cost accuracy: every gap's RMSE above the campaign's "
                     "without them", worse)

        # inprocess: the SDK flips the labels (the simulated task carries the extension); eps 8
        # and eps0 2 so that 1,500 devices' smallest group is not all noise
        r, ip = run(d, "ip.scn", CAMPAIGN.replace("eps = 1", "eps = 8") + "local_eps = 2\n",
                    devices=1500, runs=10, mode="inprocess")
        t.ok(r.returncode == 0 and ip["reports"] == 15000
             and not in_band([i for i in ip["items"] if i["kind"] in ("auc_group", "auc_gap")],
                             10),
             "inprocess: every device reports through the SDK's flips, every AUC and gap error "
             "the size the estimator predicts", r.stderr[-400:] + str(ip and in_band(ip["items"],
                                                                                    10)))

        # the planner: both eps, the flips' cost, its check on the hybrid campaign
        q = ["plan", "--mechanism", "roc_hist_groups", "--shares", "0.5,0.35,0.15",
             "--auc", "0.85,0.8,0.72", "--base-rate", "0.2,0.15,0.25", "--examples", "20",
             "--bins", "8", "--error", "0.05", "--confidence", "0.9", "--eps", "1",
             "--trust", "two_aggregators"]

        def plan_json(*args):
            r = run_sim(*args, "--json", "-")
            try:
                return r, json.loads(r.stdout[r.stdout.find("{"):])
            except ValueError:
                return r, {}
        r, without = plan_json(*q, "--no-check")
        r, hyb = plan_json(*q, "--no-check", "--local-eps", "1")
        a, a0 = hyb.get("answer", {}), without.get("answer", {})
        t.ok(r.returncode == 0 and hyb.get("question", {}).get("local_eps") == 1
             and 0 < a.get("local_eps_implemented", 0) <= 1
             and abs(a.get("label_flip", 0) - 1 / (1 + math.e)) < 1e-6
             and a.get("eps_charged") == 1 and a.get("devices", 0) > a0.get("devices", 1e18),
             f"plan --local-eps 1 --json: eps0 as implemented, the flip probability, the charged "
             f"central eps, and more devices ({a.get('devices')}) than without the flips "
             f"({a0.get('devices')})", str(a)[:600] + r.stderr)
        r = run_sim(*q, "--no-check", "--local-eps", "1")
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("  hybrid: ")]
        t.ok(r.returncode == 0 and len(line) == 1
             and f"local eps0 = {a.get('local_eps_implemented', 0):.6g}" in line[0]
             and "even if both collude" in line[0],
             "plan --local-eps: the text states both guarantees", r.stdout[:1500])
        r = run_sim(*q, "--local-eps", "1", "--devices", str(int(a.get("devices", 1000) * 1.3)),
                    "--runs", "200")
        t.ok(r.returncode == 0 and "shown to reach the target" in r.stdout
             and "BELOW" not in r.stdout,
             "plan --local-eps 1, checked at 1.3 x the planned K: every item shown to reach "
             "its target on the simulated hybrid campaign", r.stdout[-1500:] + r.stderr)
        r = run_sim(*q, "--no-check", "--local-eps", "1", "--trust", "both")
        side = [ln for ln in r.stdout.splitlines() if ln.startswith("side by side")]
        t.ok(r.returncode == 0 and r.stdout.count("  hybrid: ") == 1 and len(side) == 1,
             "plan --trust both --local-eps: local DP as ever, the hybrid beside it",
             r.stdout[-1200:] + r.stderr)
        usage = [
            (["--local-eps", "0"], "--local-eps: a plain decimal in (0, DPM_EPS_MAX], e.g. 2"),
            (["--local-eps", "1", "--trust", "local"],
             "--local-eps is the two aggregators' hybrid (local DP's roc_hist has its own "
             "eps): add --trust two_aggregators or both, or drop it"),
        ]
        for extra, msg in usage:
            r = run_sim(*q, "--no-check", *extra)
            first = r.stderr.splitlines()[0] if r.stderr else ""
            t.ok(r.returncode == 2 and first == "dpm-sim plan: " + msg,
                 f"plan {' '.join(extra)}: refused with the usage", r.stderr[:400])
        r, _ = run(d, "bad.scn", CAMPAIGN + "local_eps = 0\n", runs=2)
        t.ok(r.returncode != 0 and "local_eps must be" in r.stderr,
             "a scenario's local_eps = 0: refused, naming the key", r.stderr)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
