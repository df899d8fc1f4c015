#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Kendall's tau in dpm-sim (ustat_bins, kernel = kendall) end to end, printing TAP: an
inprocess run (every device through the SDK) whose run-0 interval holds the binned pairs' tau_a
at a fixed seed, replay of single devices; exact mode with the same truths; over 400 exact runs
the interval covers the binned tau_a ~95% and the estimate is unbiased (alpha ~ 1e-6, each
checker with a negative control); the model's tau is the mixture formula; network mode through
a real dpm-collector over TLS (the collector's tau equals dpm-sim's, another seed's run into
the same database fails the cross-check); scenario errors (rho outside (-1, 1), a group without
pairs, k > 16) exit 2 naming the line; host-sim/scenarios/kendall.scn parses."""
import math
import os
import subprocess
import sys
import tempfile

from e2e_util import ROOT, SIM, Tap, read_json, run_sim
from test_collector import Harness

SCENARIO = """\
[scenario]
name = e2e-kendall
devices = 20000
runs = 2
seed = {seed}
[group a]
share = 0.6
pairs = bivariate_normal(rho=0.7)
[group b]
share = 0.4
pairs = bivariate_normal(rho=0.2)
[campaign tau]
id = 41
mechanism = ustat_bins
kernel = kendall
eps = 2
k = 6
"""

RUNS = 400
# Binomial(400, 0.95): Pr[X <= 351] = 1.0e-8, Pr[X = 400] = 1.2e-9 (see test_sim_roc.py).
COVER = (0.88, 0.9975)
Z = 5.0  # |mean error| <= 5 standard errors: two-sided 5.7e-7 under a normal mean


def model_tau(shares, rhos):
    return sum(wg * wh * 2 / math.pi * math.asin((rg + rh) / 2)
               for wg, rg in zip(shares, rhos) for wh, rh in zip(shares, rhos))


def cover_ok(c):
    return c is not None and COVER[0] <= c <= COVER[1]


def unbiased(item, shift=0.0):
    est = [r[0] for r in item["runs"] if r[0] is not None]
    if len(est) < 100:
        return False
    err = [e - item["truth"] - shift for e in est]
    m = sum(err) / len(err)
    sd = math.sqrt(sum((e - m) ** 2 for e in err) / (len(err) - 1))
    return abs(m) <= Z * sd / math.sqrt(len(err))


def items(res):
    return {it["name"]: it for c in res["configs"] for it in c["items"]}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def check_inprocess(t, tmp, scn):
    out = os.path.join(tmp, "in")
    dump = os.path.join(tmp, "dump.txt")
    r = run_sim("--scenario", scn, "--out", out, "--threads", "2", "--no-plot", "--quiet",
                "--dump-reports", dump, timeout=300)
    t.ok(r.returncode == 0, "inprocess Kendall run exits 0", r.stderr + r.stdout)
    if r.returncode != 0:
        return None
    res = read_json(out, "results.json")
    it = items(res)
    t.ok([(x["name"], x["kind"], x["metric"]) for x in res["configs"][0]["items"]] ==
         [("model", "tau", "tau"), ("binned", "tau_binned", "tau"), ("sample", "tau_sample", "tau")],
         "items: the model's tau, the binned pairs' tau_a, the pairs' own tau_a")
    b = it["binned"]
    lo, hi = b["runs"][0][1], b["runs"][0][2]
    t.ok(lo is not None and lo <= b["truth"] <= hi and hi - lo < 0.15,
         f"seed 1, run 0: the 95% interval [{lo}, {hi}] holds the binned tau_a {b['truth']:.4f}")
    t.ok(lo is not None and not lo <= b["truth"] + 0.15 <= hi and
         not lo <= b["truth"] - 0.15 <= hi,
         "negative control: it holds neither truth - 0.15 nor truth + 0.15")
    want = model_tau([0.6, 0.4], [0.7, 0.2])
    t.ok(abs(it["model"]["truth"] - want) < 1e-9 and
         abs(it["sample"]["truth"] - want) < 5 * 2 / math.sqrt(20000) and
         it["binned"]["truth"] < it["sample"]["truth"],
         "truths: the model's tau is the mixture formula, the sample's within 5 sd of it, "
         "binning lowers tau_a (ties count 0)",
         (it["model"]["truth"], want, it["sample"]["truth"], it["binned"]["truth"]))
    with open(dump) as f:
        lines = {tuple(l.split()[:4]): l.split()[4] for l in f}
    same = True
    for runi, dev in (("0", "0"), ("1", "11999"), ("1", "19999")):
        rr = run_sim("replay", "--scenario", scn, "--campaign", "tau", "--eps", "2", "--run",
                     runi, "--device", dev)
        got = [l.split()[2] for l in rr.stdout.splitlines() if l.startswith("bytes ")]
        if rr.returncode != 0 or not got or got[0] != lines.get(("tau", "2", runi, dev)) or \
                "1 pair of scores" not in rr.stdout:
            same = False
            print(f"# run {runi} device {dev}: {got}; {rr.stdout} {rr.stderr}")
    t.ok(same, "replay of single devices equals the run's reports")
    return res


def check_exact(t, tmp, scn, res_in):
    out = os.path.join(tmp, "ex")
    r = run_sim("--scenario", scn, "--mode", "exact", "--runs", str(RUNS), "--out", out,
                "--no-plot", "--quiet", timeout=300)
    t.ok(r.returncode == 0, "exact run exits 0", r.stderr)
    if r.returncode != 0:
        return
    res = read_json(out, "results.json")
    truth = lambda x: [it["truth"] for it in items(x).values()]
    t.ok(res_in is not None and truth(res) == truth(res_in),
         "inprocess and exact mode share the truths")
    b = items(res)["binned"]
    t.ok(len(b["runs"]) == RUNS and cover_ok(b["coverage"]) and unbiased(b),
         f"exact, {RUNS} runs: unbiased for the binned tau_a, the interval covers ~95%",
         (b["coverage"], b["mean_error"], b["rmse"], b["mean_sd"]))
    t.ok(not unbiased(b, shift=0.03) and not cover_ok(0.80) and not cover_ok(1.0),
         "negative control: the checkers reject a truth off by 0.03 and coverages 0.80 and 1.0")


def check_errors(t, tmp):
    head = SCENARIO.format(seed=1).split("[campaign tau]")[0]
    bad = [(head.replace("rho=0.2", "rho=1.5"), 11, "bivariate_normal needs rho in (-1, 1)"),
           (head.replace("rho=0.2", "rho=-1"), 11, "bivariate_normal needs rho in (-1, 1)"),
           (head.replace("bivariate_normal(rho=0.2)", "bivariate_normal(0.2)"), 11,
            "is not key=value"),
           (SCENARIO.format(seed=1).replace("pairs = bivariate_normal(rho=0.2)",
                                            "tpr = constant(0.5)"), 12,
            "kernel = kendall: group 'b' has no pairs"),
           (SCENARIO.format(seed=1).replace("k = 6", "k = 17"), 17,
            "k must be in 2..16 for kernel = kendall")]
    ok = True
    for text, line, want in bad:
        p = write(os.path.join(tmp, "bad.scn"), text)
        rr = run_sim("check", "--scenario", p)
        if rr.returncode != 2 or want not in rr.stderr or f"bad.scn:{line}:" not in rr.stderr:
            ok = False
            print(f"# want line {line} '{want}': rc {rr.returncode}: {rr.stderr.strip()}")
    t.ok(ok, "scenario errors: rho outside (-1, 1), a malformed rho, a group without pairs, "
         "k > 16 (exit 2, with the line)")
    rr = run_sim("check", "--scenario", os.path.join(ROOT, "host-sim/scenarios/kendall.scn"))
    t.ok(rr.returncode == 0 and "2 groups, 2 campaigns" in rr.stdout,
         "host-sim/scenarios/kendall.scn parses", rr.stderr + rr.stdout)


def check_network(t, tmp):
    small = lambda seed: SCENARIO.format(seed=seed).replace("runs = 2", "runs = 1").replace(
        "devices = 20000", "devices = 5000")
    scn = write(os.path.join(tmp, "net.scn"), small(5))
    camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True, text=True)
    t.ok(camp.returncode == 0 and "kernel = kendall" in camp.stdout,
         "dpm-sim campaigns writes kernel = kendall for the collector", camp.stderr)
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
             "tau equals ours", r.stdout + r.stderr)
        out_in = os.path.join(tmp, "netin")
        ri = run_sim("--scenario", scn, "--out", out_in, "--no-plot", "--quiet", timeout=300)
        net = items(read_json(out_net, "results.json")) if r.returncode == 0 else {}
        inp = items(read_json(out_in, "results.json")) if ri.returncode == 0 else {}
        t.ok(net and {k: v["runs"] for k, v in net.items()} ==
             {k: v["runs"] for k, v in inp.items()},
             "network estimates equal the inprocess run's on the same seed", ri.stderr)
        theirs = None
        if r.returncode == 0:
            e = read_json(out_net, "collector-estimate-41.json")["ustat_bins"]
            theirs = (e.get("kernel"), e.get("estimate"), e.get("tau"))
        mine = net["binned"]["runs"][0][0] if net else None
        t.ok(theirs is not None and theirs[:2] == ("kendall", "kendall_tau_a") and
             mine is not None and abs(theirs[2] - mine) <= 1e-8,
             f"the collector's estimate JSON: kendall_tau_a {theirs} = dpm-sim's {mine}")
        other = write(os.path.join(tmp, "other.scn"), small(6))
        r2 = network(other, os.path.join(tmp, "net2"))
        t.ok(r2.returncode != 0 and "collector's estimate differs from ours at" in r2.stderr,
             "negative control: another seed's run into the same database fails the "
             f"cross-check (exit {r2.returncode})", r2.stdout + r2.stderr)
        t.ok(h.stop() == 0, "clean collector stop")
    finally:
        h.cleanup()


def main():
    t = Tap()
    if not os.path.exists(SIM):
        t.ok(False, f"{SIM} exists")
        return t.done()
    with tempfile.TemporaryDirectory(prefix="dpm-sim-kendall.") as tmp:
        scn = write(os.path.join(tmp, "k.scn"), SCENARIO.format(seed=1))
        res_in = check_inprocess(t, tmp, scn)
        check_exact(t, tmp, scn, res_in)
        check_errors(t, tmp)
        check_network(t, tmp)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
