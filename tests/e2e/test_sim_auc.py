#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim with the AUC family's modules (dpauc, ustat_bins, ustat_tree, roc_hist_groups) end to
end, printing TAP: an inprocess run of every module (every device through the SDK) and replay of
single devices; exact mode with the same population truth; estimates against simulation truth
over 400 exact-mode runs at fixed seeds (interval coverage and bias, alpha ~ 1e-6, each checker
with a negative control); the scenario errors of the new keys; host-sim/scenarios/auc.scn
parsing; and `dpm-sim repro auc_compare --quick`: every mechanism in both shapes, errors in sane
ranges against the examples' exact AUC, bytes and reports per device."""
import math
import os
import sys
import tempfile

from e2e_util import ROOT, SIM, Tap, read_json, run_sim

SCENARIO = """\
[scenario]
name = e2e-auc
devices = 20000
runs = 2
seed = 11
[population]
examples = 1
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.4
scores = binormal(auc=0.70, base_rate=0.4)
[campaign groups]
mechanism = roc_hist_groups
eps = 4
bins = 6
[campaign dpauc]
mechanism = dpauc
eps = 4
thresholds = 5
[campaign bins]
mechanism = ustat_bins
eps = 2
k = 8
[campaign tree]
mechanism = ustat_tree
eps = 4
depth = 3
grr_levels = 1
"""

RUNS = 400
# Binomial(400, 0.95): Pr[X <= 351] = 1.0e-8, Pr[X = 400] = 1.2e-9 (see test_sim_roc.py).
COVER = (0.88, 0.9975)
Z = 5.0  # |mean error| <= 5 standard errors: two-sided 5.7e-7 under a normal mean


def run(*args):
    return run_sim(*args, timeout=300)


def cover_ok(c):
    return c is not None and COVER[0] <= c <= COVER[1]


def unbiased(item, shift=0.0):
    """The mean error of the runs within Z standard errors of 0 (truth shifted by `shift` for
    the negative control)."""
    est = [r[0] for r in item["runs"] if r[0] is not None]
    if len(est) < 100:
        return False
    err = [e - item["truth"] - shift for e in est]
    m = sum(err) / len(err)
    sd = math.sqrt(sum((e - m) ** 2 for e in err) / (len(err) - 1))
    return abs(m) <= Z * sd / math.sqrt(len(err))


def by_campaign(res):
    return {c["campaign"]: c for c in res["configs"]}


def check_exact(t, res):
    cfg = by_campaign(res)
    t.ok(set(cfg) == {"groups", "dpauc", "bins", "tree"} and
         all(len(it["runs"]) == RUNS for c in cfg.values() for it in c["items"]),
         "exact: every module's configuration with its items and runs", list(cfg))
    g, gu = cfg["groups"]["items"][:3], cfg["groups"]["items"][3:6]
    prc = cfg["groups"]["items"][6:]  # each group's AP and ECE, their difference and ratio
    t.ok([it["kind"] for it in prc] == ["ap_group"] * 2 + ["ece_group"] * 2 +
         ["ap_difference", "ap_ratio", "ece_difference", "ece_ratio"] and
         all(it["coverage"] >= COVER[0] if it["coverage"] is not None else it["flagged"] == 1
             for it in prc),
         "roc_hist_groups: each group's AP and ECE, their difference and ratio, covered at least "
         "at the level (no interval only where every run's groups are flagged)",
         [(it["kind"], it["coverage"], it["flagged"]) for it in prc])
    t.ok([it["kind"] for it in g] == ["auc_group", "auc_group", "auc_gap"] and
         abs(g[2]["truth"] - (g[0]["truth"] - g[1]["truth"])) < 1e-12 and g[2]["truth"] > 0.05,
         "roc_hist_groups: two group AUCs and their gap, truth = the difference",
         [(it["kind"], it["truth"]) for it in g])
    # the unbinned twins, against the groups' model AUCs: covered at least at the level (their
    # intervals hold the interpolation bound; "flagged" says when it dominates)
    t.ok([it["kind"] for it in gu] == ["auc_group_unb", "auc_group_unb", "auc_gap_unb"] and
         abs(gu[2]["truth"] - (gu[0]["truth"] - gu[1]["truth"])) < 1e-12 and
         all(it["coverage"] is not None and it["coverage"] >= COVER[0] and
             (it["flagged"] > 0 or it["coverage"] <= COVER[1]) for it in gu),
         "roc_hist_groups: unbinned group AUCs and gap against the model AUCs, covered",
         [(it["kind"], it["truth"], it["coverage"], it["flagged"]) for it in gu])
    t.ok(all(cover_ok(it["coverage"]) for it in g),
         "roc_hist_groups: group AUC and gap intervals cover the truth ~95%",
         [it["coverage"] for it in g])
    t.ok(all(unbiased(it) for it in g), "roc_hist_groups: group AUCs and gap unbiased (5 se)",
         [it["mean_error"] for it in g])
    b = cfg["bins"]["items"][1]
    t.ok(b["kind"] == "auc_binned" and cover_ok(b["coverage"]) and unbiased(b),
         "ustat_bins: unbiased for the binned AUC, interval covers ~95%",
         (b["coverage"], b["mean_error"]))
    d = {it["name"] + it["kind"]: it for it in cfg["dpauc"]["items"]}
    a_b = d["server_Aauc_binned"]
    b_b = d["server_Bauc_binned"]
    t.ok(all(it["coverage"] is None for it in d.values()) and
         all(0.0 <= r[0] <= 1.0 for r in a_b["runs"]) and abs(b_b["mean_error"]) < 0.05 and
         b_b["rmse"] < 0.2 and a_b["mean_error"] < 0 and not unbiased(a_b),
         "dpauc: no interval; server A clamped in [0, 1] and biased low (the clamp), server B "
         "(a ratio: consistent, not unbiased) within 0.05",
         (a_b["mean_error"], b_b["mean_error"], b_b["rmse"]))
    tr = cfg["tree"]["items"][1]
    t.ok(tr["rmse"] < 0.05 and abs(tr["mean_error"]) < 0.02 and tr["coverage"] is None,
         "ustat_tree: rmse < 0.05 and |bias| < 0.02 against the tree's binned AUC",
         (tr["rmse"], tr["mean_error"]))
    # negative controls: each checker fails on a wrong truth or a wrong coverage
    t.ok(not unbiased(b, shift=0.02) and not unbiased(g[2], shift=0.02) and
         not cover_ok(0.80) and not cover_ok(1.0),
         "negative control: the bias and coverage checkers reject a truth off by 0.02 and "
         "coverages 0.80 and 1.0")


def compare_ok(js):
    """Sanity of auc_compare.json against the examples' exact AUC."""
    shapes = {s["shape"]: {m["mechanism"]: m for m in s["mechanisms"]} for s in js["shapes"]}
    many, few = shapes.get("many_devices", {}), shapes.get("few_parties", {})
    fedauc = {"fedauc_rr", "fedauc_lap local", "fedauc_lap global", "fedauc_lap orthogonal",
              "fedauc_lap adaptive"}
    names = {"roc_hist", "roc_hist_groups", "dpauc_A", "dpauc_B", "ustat_bins", "ustat_tree"} | fedauc
    why = []
    if set(many) != names or set(few) != names:
        return ["mechanisms"]
    for s in (many, few):
        for n in ("roc_hist", "ustat_bins", "ustat_tree"):
            if not s[n]["rmse"] < 0.1:
                why.append(f"{n} rmse")
        if not s["dpauc_A"]["rmse"] < 0.5:
            why.append("dpauc_A rmse")
        for n in ("roc_hist", "ustat_bins"):
            c = s[n]["coverage"]
            # 20 runs: 9 or more misses at a 15% miss rate has probability 1e-3, at 5% 2e-7
            if c is None or not 0.55 <= c <= 1.0:
                why.append(f"{n} coverage")
        for n in sorted(fedauc):  # two rounds, an interval, a rank reply down
            m = s[n]
            if not (m["rmse"] < 0.1 and m["coverage"] is not None and 0.55 <= m["coverage"] <= 1
                    and m["rounds"] == 2 and m["down_bytes_per_device"] > 0):
                why.append(f"{n}: rmse, coverage, rounds or reply")
        if s["dpauc_A"]["coverage"] is not None or s["ustat_tree"]["coverage"] is not None:
            why.append("coverage without an interval")
    if not few["roc_hist"]["rmse"] < few["dpauc_A"]["rmse"] < few["dpauc_B"]["rmse"]:
        why.append("few parties: roc_hist < dpauc A < dpauc B")
    if not (many["ustat_bins"]["reports_per_device"] == 10 and
            many["roc_hist"]["reports_per_device"] == 1 and
            many["dpauc_A"]["bytes_per_device"] > many["roc_hist"]["bytes_per_device"] > 40):
        why.append("reports and bytes per device")
    if not 0.75 < js["auc_exact"] < 0.85:
        why.append("auc_exact")
    return why


def main():
    t = Tap()
    if not os.path.exists(SIM):
        t.ok(False, f"{SIM} exists")
        return t.done()
    with tempfile.TemporaryDirectory() as tmp:
        scn = os.path.join(tmp, "auc.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        out_in = os.path.join(tmp, "in")
        dump = os.path.join(tmp, "dump.txt")
        r = run("--scenario", scn, "--out", out_in, "--threads", "2", "--no-plot", "--quiet",
                "--dump-reports", dump)
        t.ok(r.returncode == 0, "inprocess run of every AUC module exits 0", r.stderr + r.stdout)
        res_in = read_json(out_in, "results.json") if r.returncode == 0 else {"configs": []}
        est = [x[0] for c in res_in["configs"] for it in c["items"] for x in it["runs"]]
        t.ok(len(res_in["configs"]) == 4 and est and all(e is not None and math.isfinite(e)
                                                         for e in est),
             "inprocess: every configuration estimates every item", len(est))
        with open(dump) as f:
            lines = {tuple(l.split()[:4]): l.split()[4] for l in f}
        same = True
        for camp, runi, dev in (("groups", "1", "19999"), ("dpauc", "0", "7"),
                                ("bins", "1", "123"), ("tree", "0", "12001")):
            rr = run("replay", "--scenario", scn, "--campaign", camp, "--eps",
                     {"bins": "2"}.get(camp, "4"), "--run", runi, "--device", dev)
            got = [l.split()[2] for l in rr.stdout.splitlines() if l.startswith("bytes ")]
            want = lines.get((camp, {"bins": "2"}.get(camp, "4"), runi, dev))
            if rr.returncode != 0 or not got or got[0] != want:
                same = False
                print(f"# {camp} run {runi} device {dev}: {got} != {want}; {rr.stderr}")
        t.ok(same, "replay of single devices equals the run's reports (every module)")
        out_ex = os.path.join(tmp, "ex")
        r = run("--scenario", scn, "--mode", "exact", "--runs", str(RUNS), "--out", out_ex,
                "--no-plot", "--quiet")
        t.ok(r.returncode == 0, "exact run exits 0", r.stderr)
        if r.returncode == 0:
            res_ex = read_json(out_ex, "results.json")
            truth = lambda res: [it["truth"] for c in res["configs"] for it in c["items"]]
            t.ok(truth(res_ex) == truth(res_in), "inprocess and exact mode share the truth")
            check_exact(t, res_ex)
        # scenario errors of the new keys
        bad = [("k = 8\n", "roc_hist", "takes no key 'k'"),
               ("thresholds = 99\n", "dpauc", "thresholds must be in 3..25"),
               ("depth = 9\n", "ustat_tree", "depth must be in 1..6"),
               ("grr_levels = 4\ndepth = 3\n", "ustat_tree", "grr_levels must be in 0..depth"),
               ("kernel = kendall\n", "ustat_bins", "group 'a' has no pairs"),
               ("kernel = tau\n", "ustat_bins", "kernel must be auc, auc_private_label or kendall")]
        ok = True
        for extra, mech, want in bad:
            text = SCENARIO.split("[campaign groups]")[0] + \
                f"[campaign c]\nmechanism = {mech}\neps = 1\n{extra}"
            p = os.path.join(tmp, "bad.scn")
            with open(p, "w") as f:
                f.write(text)
            rr = run("check", "--scenario", p)
            if rr.returncode != 2 or want not in rr.stderr or "bad.scn:" not in rr.stderr:
                ok = False
                print(f"# {mech} {extra!r}: rc {rr.returncode}: {rr.stderr.strip()}")
        many = SCENARIO.replace("examples = 1", "examples = 5")
        p = os.path.join(tmp, "many.scn")
        with open(p, "w") as f:
            f.write(many)
        rr = run("check", "--scenario", p)
        ok &= rr.returncode == 2 and "one report per" in rr.stderr
        t.ok(ok, "scenario errors: a key the mechanism does not read, ranges, ustat with "
             "several examples per device (exit 2, with the line)", rr.stderr)
        rr = run("check", "--scenario", os.path.join(ROOT, "host-sim/scenarios/auc.scn"))
        t.ok(rr.returncode == 0, "host-sim/scenarios/auc.scn parses", rr.stderr + rr.stdout)
        # the comparison
        rep = os.path.join(tmp, "repro")
        r = run("repro", "--out", rep, "--quick", "--no-plot", "--quiet", "auc_compare")
        t.ok(r.returncode == 0 and "ustat_tree" in r.stdout and "bytes/device" in r.stdout,
             "repro auc_compare --quick prints the table", r.stdout + r.stderr)
        try:
            js = read_json(rep, "auc_compare.json")
        except (OSError, ValueError):
            js = {"shapes": []}
        why = compare_ok(js)
        t.ok(not why, "auc_compare: every mechanism in both shapes, errors in sane ranges", why)
        bad = read_json(rep, "auc_compare.json") if js["shapes"] else js
        for s in bad["shapes"]:
            for m in s["mechanisms"]:
                if m["mechanism"] == "ustat_bins":
                    m["rmse"] = 0.5
        t.ok(compare_ok(bad) != [], "negative control: the sanity check rejects an rmse of 0.5")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
