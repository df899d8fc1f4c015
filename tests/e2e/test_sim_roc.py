#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim with roc_hist campaigns end to end, printing TAP: inprocess and exact runs of a small
scenario (results.json / runs.csv / summary.csv / roc.csv well-formed and consistent, the same
population truth in both modes, the ROC plots written by host-sim/plot), AUC coverage across
exact-mode runs near the nominal 95% (against the devices' binned AUC, with the noise-only
interval), the model's AUC as the headline item, replay of single devices equal to the bytes of
the run, scenario errors for roc_hist (exit 2 with the line), the planner for roc_hist (both
error kinds, the margin and the verified check, no answer when the binning alone exceeds the
target, the eps a campaign implements), host-sim/scenarios/roc.scn parsing, and 10^12 devices:
an exact-mode run and a planner check finish in seconds (the truth drawn from its law in
O(bins)); inprocess mode, which realizes every device, says how long its truth will take before
it starts."""
import re
import os
import subprocess
import sys
import tempfile
import time

from e2e_util import ROOT, SIM, Tap, read_csv, read_json, run_sim

SCENARIO = """\
[scenario]
name = e2e-roc
devices = 4000
runs = 3
seed = 5
[population]
examples = 12
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.3)
[group b]
share = 0.4
scores = binormal(auc=0.75, base_rate=0.4)
partition = noniid(concentration=3, auc_sd=0.4)
[campaign roc]
id = 31
mechanism = roc_hist
eps = 1, 2
bins = 8
[campaign roc_a]
id = 32
mechanism = roc_hist
eps = 1
edges = 0.3, 0.5, 0.7
groups = a, b
"""


def run(*args):
    return run_sim(*args, timeout=240)


def check_outputs(t, d, mode, runs):
    res = read_json(d, "results.json")
    cfgs = res["configs"]
    t.ok(res["mode"] == mode and len(cfgs) == 3 and all("roc" in c for c in cfgs),
         f"{mode}: results.json has 3 roc_hist configurations", [c.get("label") for c in cfgs])
    good = True
    for c in cfgs:
        roc = c["roc"]
        n = roc["bins"] + 1
        tr = roc["truth"]
        good &= len(tr["fpr"]) == n and len(tr["tpr"]) == n and tr["tpr"][0] == 1.0
        good &= tr["tpr"][-1] == 0.0 and 0.5 < tr["auc"] < 1.0 and 0.5 < tr["auc_model"] < 1.0
        items = {it["kind"]: it for it in c["items"]}
        good &= set(items) == {"auc", "auc_binned", "auc_unbinned", "ap_binned",
                               "ece_binned"} and c["items"][0]["kind"] == "auc"
        good &= all(len(it["runs"]) == runs for it in c["items"])
        good &= 0 < items["ap_binned"]["truth"] < 1 and 0 <= items["ece_binned"]["truth"] < 1
        good &= items["ap_binned"]["metric"] == "ap" and items["ece_binned"]["metric"] == "ece"
        good &= items["auc"]["truth"] == tr["auc_model"]
        good &= items["auc_binned"]["truth"] == tr["auc"]
        good &= items["auc_unbinned"]["truth"] == tr["auc_model"]
        r0 = roc.get("run0", {})
        good &= len(r0.get("tpr_lo", [])) == n
        good &= all(lo <= x <= hi for lo, x, hi in zip(r0["tpr_lo"], r0["tpr"], r0["tpr_hi"]))
        good &= all(a >= b for a, b in zip(r0["tpr"], r0["tpr"][1:]))  # monotone
    t.ok(good, f"{mode}: roc truth, run 0 curve and bands consistent")
    rows = read_csv(d, "roc.csv")
    t.ok(len(rows) == 2 * 9 + 5, f"{mode}: roc.csv has one row per configuration and threshold",
         len(rows))
    auc_runs = [r for r in read_csv(d, "runs.csv") if r["metric"] == "auc"]
    summ = [r for r in read_csv(d, "summary.csv") if r["metric"] == "auc"]
    t.ok(len(auc_runs) == 3 * 3 * runs and len(summ) == 3 * 3,
         f"{mode}: runs.csv and summary.csv have the AUC rows", (len(auc_runs), len(summ)))
    ok = all(abs(float(r["estimate"]) - float(r["truth"]) - float(r["error"])) < 1e-9 and
             float(r["ci_lo"]) <= float(r["estimate"]) <= float(r["ci_hi"]) for r in auc_runs)
    t.ok(ok, f"{mode}: AUC rows: error = estimate - truth, estimate inside its interval")
    return {(c["campaign"], c["eps"]): (c["roc"]["truth"]["auc"], c["roc"]["truth"]["auc_model"])
            for c in cfgs}


def huge(t):
    """10^12 devices: exact mode and the planner's check in seconds; inprocess states its time."""
    with tempfile.TemporaryDirectory() as tmp:
        scn = os.path.join(tmp, "huge.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO.replace("devices = 4000", "devices = 1e12")
                    .replace("runs = 3", "runs = 20\nmode = exact"))
        start = time.monotonic()
        r = run("--scenario", scn, "--out", os.path.join(tmp, "x"), "--no-plot")
        dt = time.monotonic() - start
        t.ok(r.returncode == 0 and "K=1000000000000" in r.stdout and dt < 60,
             f"exact mode, 10^12 devices, 3 configurations x 20 runs: {dt:.1f} s",
             r.stdout + r.stderr)
        start = time.monotonic()
        r = run("plan", "--mechanism", "roc_hist", "--error-kind", "noise", "--error", "0.00002",
                "--confidence", "0.9", "--devices", "1e12", "--runs", "100")
        dt = time.monotonic() - start
        t.ok(r.returncode in (0, 1) and "check by simulation (exact mode, 100 runs" in r.stdout
             and dt < 60, f"plan roc_hist --devices 1e12 with its check: {dt:.1f} s",
             r.stdout + r.stderr)
        p = subprocess.Popen([SIM, "--scenario", scn, "--mode", "inprocess", "--runs", "1",
                              "--out", os.path.join(tmp, "y"), "--no-plot"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line, start = "", time.monotonic()
        try:
            while time.monotonic() - start < 60:
                line = p.stderr.readline()
                if "realizing the examples" in line or not line:
                    break
        finally:
            p.kill()
            p.wait()
        t.ok(re.search(r"of 1000000000000 devices .* about \d+ days", line) is not None,
             "inprocess, 10^12 devices: says how long the truth will take before starting",
             line)


def main():
    t = Tap()
    if not os.path.exists(SIM):
        t.ok(False, f"{SIM} exists")
        return t.done()
    with tempfile.TemporaryDirectory() as tmp:
        scn = os.path.join(tmp, "roc.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        out_in = os.path.join(tmp, "in")
        dump = os.path.join(tmp, "dump.txt")
        r = run("--scenario", scn, "--out", out_in, "--threads", "2", "--dump-reports", dump)
        t.ok(r.returncode == 0, "inprocess run with plots exits 0", r.stderr + r.stdout)
        truth_in = check_outputs(t, out_in, "inprocess", 3) if r.returncode == 0 else {}
        pngs = ["roc_curve.png", "roc_auc_vs_eps.png"]
        t.ok(all(os.path.getsize(os.path.join(out_in, p)) > 5000 for p in pngs
                 if os.path.exists(os.path.join(out_in, p))) and
             all(os.path.exists(os.path.join(out_in, p)) for p in pngs),
             "host-sim/plot wrote roc_curve.png and roc_auc_vs_eps.png", os.listdir(out_in))
        # replay: single devices equal their bytes in the run
        with open(dump) as f:
            lines = {tuple(l.split()[:4]): l.split()[4] for l in f}
        t.ok(len(lines) == 3 * 3 * 4000, "dump has every report of the run", len(lines))
        same = True
        for camp, eps, runi, dev in (("roc", "1", "0", "0"), ("roc", "2", "2", "3999"),
                                     ("roc_a", "1", "1", "2500")):
            rr = run("replay", "--scenario", scn, "--campaign", camp, "--eps", eps, "--run", runi,
                     "--device", dev)
            got = [l.split()[2] for l in rr.stdout.splitlines() if l.startswith("bytes ")]
            want = lines.get((camp, eps, runi, dev))
            if rr.returncode != 0 or not got or got[0] != want:
                same = False
                print(f"# {camp} {eps} run {runi} device {dev}: {got} != {want}; {rr.stderr}")
        t.ok(same, "replay of single roc_hist devices equals the run's reports")
        # exact mode: same population truth; coverage across many runs
        out_ex = os.path.join(tmp, "ex")
        r = run("--scenario", scn, "--mode", "exact", "--runs", "400", "--out", out_ex,
                "--no-plot", "--quiet")
        t.ok(r.returncode == 0, "exact run exits 0", r.stderr)
        if r.returncode == 0:
            truth_ex = check_outputs(t, out_ex, "exact", 400)
            t.ok(truth_ex == truth_in, "inprocess and exact mode share the population truth",
                 (truth_in, truth_ex))
            res = read_json(out_ex, "results.json")
            cov = [it["coverage"] for c in res["configs"] for it in c["items"]
                   if it["kind"] == "auc_binned"]
            band = [c["roc"]["coverage"]["band_pointwise"] for c in res["configs"]]
            # 400 runs at 95%, Binomial(400, 0.95): Pr[X <= 351] = 1.0e-8 and Pr[X = 400] =
            # 1.2e-9, so [0.88, 0.9975] fails a correct interval with probability < 1e-6 over
            # all configurations. The band's pointwise coverage is a mean over correlated
            # thresholds (sd no larger than one threshold's): only its lower bound is checked
            # here; tests/stat/test_sim_exact_roc.c tests it strictly over 4000 runs.
            t.ok(all(0.88 <= c <= 0.9975 for c in cov) and all(0.88 <= b for b in band),
                 "AUC interval and TPR band cover the truth about 95% of the time", (cov, band))
        # scenario errors: SCENARIO with old replaced by new fails `check` with exit 2 and the
        # message (and, where given, the number of the bad line)
        for old, new, message, bad_line, what in (
                ("bins = 8", "bins = 8\nmetrics = tpr", "(roc_hist): takes no metrics",
                 "metrics = tpr", "roc_hist with metrics: exit 2 naming the line"),
                ("scores = binormal(auc=0.75, base_rate=0.4)", "tpr = constant(0.5)",
                 "has no scores = binormal", None, "roc_hist over a group without scores: exit 2"),
                ("edges = 0.3, 0.5, 0.7", "edges = 0.5, 0.3", "strictly increasing", None,
                 "decreasing edges: exit 2"),
                ("edges = 0.3, 0.5, 0.7", "edges = 1e-10, 0.5", "rounds to score 0", None,
                 "an edge below the Q1.31 grid: exit 2")):
            bad = SCENARIO.replace(old, new)
            with open(scn, "w") as f:
                f.write(bad)
            r = run("check", "--scenario", scn)
            at = f":{bad.splitlines().index(bad_line) + 1}:" if bad_line else ""
            t.ok(r.returncode == 2 and at in r.stderr and message in r.stderr, what, r.stderr)
    r = run("check", "--scenario", os.path.join(ROOT, "host-sim/scenarios/roc.scn"))
    t.ok(r.returncode == 0, "host-sim/scenarios/roc.scn parses", r.stderr)
    huge(t)
    # the planner's check: each coverage with its interval, "verified" exactly when the lower end
    # reaches c, PASS (exit 0) exactly when a check verified, never a coin flip at the plan's K
    def search_honest(r, c):
        steps = re.findall(r"K = (\d+): (\d+)/(\d+) = [\d.]+% \[([\d.]+), ([\d.]+)\]: "
                           r"(verified|shown BELOW|not shown)", r.stdout)
        ok = bool(steps) and all((float(lo) >= 100 * c) == (v == "verified")
                                 for _, _, _, lo, _, v in steps)
        found = steps and steps[-1][5] == "verified"
        return ok and r.returncode == (0 if found else 1) and ("-> PASS" in r.stdout) == found

    r = run("plan", "--mechanism", "roc_hist", "--error-kind", "noise", "--error", "0.005",
            "--confidence", "0.95", "--devices", "1e5", "--runs", "100")
    t.ok("minimum eps" in r.stdout and "devices' own binned AUC" in r.stdout and
         "margin:" in r.stdout and search_honest(r, 0.95),
         "plan roc_hist --error-kind noise --devices: an eps with a margin, a verified check",
         r.stdout + r.stderr)
    r = run("plan", "--mechanism", "roc_hist", "--error", "0.02", "--confidence", "0.9",
            "--eps", "1", "--auc", "0.7", "--bins", "20", "--examples", "10", "--bound",
            "chebyshev", "--runs", "60")
    t.ok(r.returncode == 0 and "minimum devices" in r.stdout and "the model's AUC" in r.stdout
         and "-> PASS" in r.stdout and "the check's truth: the model's AUC 0.7 " in r.stdout
         and search_honest(r, 0.9),
         "plan roc_hist (model error, the default): a device count, checked against the model's "
         "AUC", r.stdout + r.stderr)
    r = run("plan", "--mechanism", "roc_hist", "--error", "0.01", "--confidence", "0.9",
            "--eps", "0.5", "--auc", "0.7", "--bins", "5")
    t.ok(r.returncode == 0 and "answer: none: the binning alone" in r.stdout,
         "plan roc_hist: with 5 bins the binning alone exceeds 0.01: no answer, said so",
         r.stdout + r.stderr)
    r = run("plan", "--mechanism", "roc_hist", "--error", "0.01", "--confidence", "0.9")
    t.ok(r.returncode == 2, "plan roc_hist without --devices/--eps: exit 2", r.stderr)
    # planned at the eps a campaign implements (Q16.16, rounded down as the SDK parses it)
    r = run("plan", "--mechanism", "roc_hist", "--error", "0.01", "--confidence", "0.9",
            "--eps", "1e-9", "--no-check")
    t.ok(r.returncode == 2 and "rounds down to 0" in r.stderr and "answer" not in r.stdout,
         "plan roc_hist --eps 1e-9: refused (a campaign rounds it to 0), not planned",
         r.stdout + r.stderr)
    r = run("plan", "--mechanism", "roc_hist", "--error", "0.01", "--confidence", "0.9",
            "--eps", "0.1", "--no-check")
    t.ok(r.returncode == 0 and "campaign eps = 0.0999908447265625" in r.stdout,
         "plan roc_hist --eps 0.1: planned at 6553/65536 (the campaign eps), not 6554/65536",
         r.stdout + r.stderr)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
