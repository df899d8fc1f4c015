#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim's two-aggregator roc_hist in network mode (host-sim/sim/run/netmode_dap.h): the
simulated devices post their DAP reports to a real leader (`dpm-collector --role leader`, with
its helper, over TLS), and dpm-sim collects the batch from it with the collector's key.

- every device's report is kept, the collection counts them all, and the same devices give the
  same truths as inprocess mode (the same population, realized the same way);
- each group's AUC and each gap lands within 5.5 of its predicted sd of the truth (the
  aggregators' noise and the devices' sampling; one run, so per item at two-sided ~4e-8);
- the released sums are noised: the estimates differ from inprocess mode's (whose noise comes
  from the simulation's own streams);
- refused, saying what to do: the same interval again (a leader collects it once: --dap-time),
  a task whose ε is not the campaign's, the wrong collector key, the same devices again
  (--run), requests above the leader's --max-body (--batch), a leader that is not running, a
  campaign with local_eps against a task without label RR;
- the hybrid through real processes: a task with `local_eps` and `local_bins` (the label-RR
  extension in its TaskConfiguration), the SDK's devices flipping their labels, the estimates
  within 5.5 predicted sd (flips and noise) of the truth.
"""
import json
import os
import sys
import tempfile
import time

from e2e_util import Tap, read_json, run_sim
from test_collector import Harness
from test_collector_dap import Pair

GROUPS, BINS, M, EPS, DEVICES = 2, 4, 20, 2, 3000
POP = """[population]
examples = 20
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.2)
[group b]
share = 0.4
scores = binormal(auc=0.75, base_rate=0.25)
"""


def roc_pair(h):
    """A leader and a helper of one roc_hist_2agg task: a SumVec of groups x 2 x bins counts,
    each at most max_device_examples, noise of sensitivity 2 x max_device_examples."""
    return Pair(h, length=GROUPS * 2 * BINS, maxv=M, eps=EPS, extra=f"sensitivity = {2 * M}\n")


def scenario(d, name, mode, eps=EPS, local=""):
    path = os.path.join(d, name)
    edges = ", ".join(str((i + 1) / BINS) for i in range(BINS - 1))
    with open(path, "w") as f:
        f.write(f"[scenario]\nname = {name}\ndevices = {DEVICES}\nruns = 1\nmode = {mode}\n"
                f"seed = 11\n{POP}[campaign two]\nmechanism = roc_hist_2agg\neps = {eps}\n"
                f"edges = {edges}\nmax_device_examples = {M}\n{local}")
    return path


def main():
    t = Tap()
    h = Harness()
    try:
        pair = roc_pair(h)
        pair.start("helper")
        pair.start("leader")
        d = h.tmp
        hour = (int(time.time()) // 3600 - 5) * 3600  # a past hour no other run uses

        def net(scn, out, *extra, key="collector", port=None, campaigns=None):
            return run_sim("--scenario", scn, "--out", os.path.join(d, out), "--quiet",
                           "--collector", f"127.0.0.1:{port or pair.lport}", "--ca",
                           f"{d}/ca.crt", "--token", f"{d}/collector.token",
                           "--dap-campaigns", campaigns or pair.campaigns, "--dap-collector-key",
                           f"{d}/{key}.key", "--dap-wait", "60", *extra)

        r = net(scenario(d, "net.scn", "network"), "net", "--dap-time", str(hour + 60))
        if not t.ok(r.returncode == 0, "dpm-sim --mode network against a leader and helper",
                    r.stderr[-800:]):
            return t.done()
        got = read_json(os.path.join(d, "net"), "results.json")["configs"][0]
        r = run_sim("--scenario", scenario(d, "ip.scn", "inprocess"), "--out",
                    os.path.join(d, "ip"), "--quiet")
        ip = read_json(os.path.join(d, "ip"), "results.json")["configs"][0]
        t.ok(r.returncode == 0 and got["reports"] == DEVICES == ip["reports"],
             f"every device's report kept and collected ({got['reports']} of {DEVICES})",
             f"{r.stderr[-300:]} {got['reports']}")

        def key(i):
            return (i["kind"], i["name"])

        gi = {key(i): i for i in got["items"]}
        ii = {key(i): i for i in ip["items"]}
        t.ok(set(gi) == set(ii) and all(abs(gi[k]["truth"] - ii[k]["truth"]) < 1e-12
                                        for k in gi),
             "the same devices as inprocess mode: the same items and truths", sorted(gi))
        far = [(k, i["rmse"], i["mean_sd"]) for k, i in gi.items()
               if k[0] in ("auc_group", "auc_gap") and not i["rmse"] <= 5.5 * i["mean_sd"]]
        t.ok(not far and any(k[0] == "auc_gap" for k in gi),
             "each group's AUC and the gap within 5.5 predicted sd of the truth", far)
        t.ok(any(abs(gi[k]["rmse"] - ii[k]["rmse"]) > 1e-9 for k in gi if k[0] == "auc_group"),
             "the aggregators' own noise: the estimates are not inprocess mode's",
             json.dumps([(k, gi[k]["rmse"], ii[k]["rmse"]) for k in gi])[:300])

        # refusals, each naming its cause and what to do
        r = net(scenario(d, "net.scn", "network"), "again", "--dap-time", str(hour + 120))
        t.ok(r.returncode != 0 and "batch_collected" in r.stderr and "--dap-time" in r.stderr,
             "the same interval again: refused (a leader collects it once), naming --dap-time",
             r.stderr[-400:])
        r = net(scenario(d, "eps1.scn", "network", eps=1), "eps1", "--dap-time",
                str(hour - 3600))
        t.ok(r.returncode != 0 and "central eps 2.000000" in r.stderr
             and "not the campaign's" in r.stderr,
             "a task whose eps is not the campaign's: refused before any device posts",
             r.stderr[-400:])
        # the same task with discrete Gaussian noise: the estimates assume Laplace
        saved = (pair.eps, pair.extra)
        pair.eps, pair.extra = None, "noise = gaussian\nrho = 0.5\ndelta = 1e-9\n"
        pair.write_campaigns(f"{d}/gauss.txt", pair.keys["leader"])
        pair.eps, pair.extra = saved
        r = net(scenario(d, "net.scn", "network"), "gauss", "--dap-time", str(hour - 3600),
                campaigns=f"{d}/gauss.txt")
        t.ok(r.returncode != 0 and "discrete Gaussian" in r.stderr and "noise = laplace" in r.stderr,
             "a task with Gaussian noise: refused before any device posts, naming noise = laplace",
             r.stderr[-400:])
        r = net(scenario(d, "net.scn", "network"), "wrongkey", "--dap-time",
                str(hour - 7200), key="leader")
        t.ok(r.returncode != 0 and "not the task's collector_hpke_config" in r.stderr,
             "another key than the task's collector key: refused before any device posts",
             r.stderr[-400:])
        r = net(scenario(d, "net.scn", "network"), "replay", "--dap-time", str(hour - 7200))
        t.ok(r.returncode != 0 and "report_replayed" in r.stderr and "--run" in r.stderr,
             "the same devices again in another interval: report_replayed, naming --run",
             r.stderr[-400:])
        r = net(scenario(d, "net.scn", "network"), "run1", "--dap-time", str(hour - 7200),
                "--run", "1")
        got1 = read_json(os.path.join(d, "run1"), "results.json")["configs"][0] \
            if r.returncode == 0 else {}
        t.ok(r.returncode == 0 and got1.get("reports") == DEVICES,
             "--run 1: other report ids, the next collection", r.stderr[-400:])
        r = net(scenario(d, "net.scn", "network"), "big", "--dap-time", str(hour - 14400),
                "--run", "2", "--clients", "1", "--batch", "4096")
        t.ok(r.returncode != 0 and "lower --batch" in r.stderr,
             "UploadRequests above the leader's --max-body: refused, naming --batch",
             r.stderr[-400:])
        local = "local_eps = 4\n"
        r = net(scenario(d, "hyb.scn", "network", local=local), "hybmismatch", "--dap-time",
                str(hour - 18000))
        t.ok(r.returncode != 0 and "label RR is local_eps 0.000000" in r.stderr
             and "deploy the task with the campaign's local_eps" in r.stderr,
             "a hybrid campaign against a task without label RR: refused before any device "
             "posts", r.stderr[-400:])
        pair.stop("leader")
        r = net(scenario(d, "net.scn", "network"), "down", "--dap-time", str(hour - 10800))
        t.ok(r.returncode != 0 and "cannot connect" in r.stderr,
             "a leader that is not running: refused, naming the address", r.stderr[-400:])
        t.ok(pair.stop("helper") == 0, "the helper stops cleanly")

        # the hybrid: another task, with the label-RR extension, through both processes
        pair.task_id = "hYbRiDzMzxvA46_8ymhzycOB9krN-QIGYvg_RsByGec"
        pair.extra += f"local_eps = 4\nlocal_bins = {BINS}\n"
        pair.write_campaigns(pair.campaigns, pair.keys["leader"])
        pair.start("helper")
        pair.start("leader")
        r = net(scenario(d, "hyb.scn", "network", local=local), "hyb", "--dap-time",
                str(hour - 21600))
        hy = read_json(os.path.join(d, "hyb"), "results.json")["configs"][0] \
            if r.returncode == 0 else {"items": [], "reports": 0}
        hi = {key(i): i for i in hy["items"]}
        far = [(k, i["rmse"], i["mean_sd"]) for k, i in hi.items()
               if k[0] in ("auc_group", "auc_gap") and not i["rmse"] <= 5.5 * i["mean_sd"]]
        t.ok(r.returncode == 0 and hy["reports"] == DEVICES and hi and not far
             and hy.get("two_aggregators", {}).get("local", {}).get("local_eps") == 4
             and all(abs(hi[k]["truth"] - gi[k]["truth"]) < 1e-12 for k in hi),
             "the hybrid task (local_eps 4) through the leader and helper: every report "
             "collected, the same truths, each AUC and gap within 5.5 predicted sd",
             r.stderr[-600:] + str(far))
        t.ok(pair.stop("leader") == 0 and pair.stop("helper") == 0, "both stop cleanly")
    finally:
        h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
