#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim's two-aggregator roc_hist (mechanism roc_hist_2agg, host-sim/sim/devices/mech_roc_2agg.c):
a scenario beside its local-DP twin on the same population, in exact mode.

- results.json says the trust model, the privacy unit, the sensitivity (2 x max_device_examples)
  and each aggregator's scale (the SDK's: sensitivity / eps);
- its items are the local-DP module's, kind by kind and name by name, with the same truths
  (the same devices' binned AUCs: the same population, realized the same way);
- inprocess mode puts every device through the SDK's device calls (Prio3 shard, HPKE seal) and
  the leader and the helper in this process: one report per device and run, the same items and
  truths as exact mode, errors the size the estimator predicts;
- its gap error is far below local DP's at the same eps (50,000 devices, eps 2: every gap's
  RMSE under a tenth of local DP's; measured 0.045 at the worst gap), and its intervals cover;
- what it refuses, with the scenario line and what to do: a missing max_device_examples, a
  population whose devices hold more examples than it, network mode without the deployed task, a
  batch below the task's minimum, metrics,
  more than 8 groups; the collector's campaigns file does not take the name (dpm-sim only);
- `dpm-sim repro fhauc`: the FHAUC paper's parties through the SDK's devices and the two
  aggregators give exactly the plaintext pooled counts and AUC;
- the planner answers for both trust models side by side (`dpm-sim plan --mechanism
  roc_hist_groups --trust both`), and its JSON names the trust model it planned;
- with `--noise gaussian --delta D` it plans the discrete Gaussian: the simulator's sigma2 and
  charged eps, more devices than Laplace at eps 1, delta 1e-9, its check simulating the Gaussian
  campaign, and what it refuses (exact messages).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from e2e_util import ROOT, OUT, Tap, read_json, run_sim

POP = """[population]
examples = 20
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.2)
[group b]
share = 0.35
scores = binormal(auc=0.8, base_rate=0.15)
[group c]
share = 0.15
scores = binormal(auc=0.72, base_rate=0.25)
"""


def scenario(d, name, body, devices=50000, runs=60, mode="exact"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(f"[scenario]\nname = {name}\ndevices = {devices}\nruns = {runs}\nmode = {mode}\n"
                f"seed = 5\n{POP}{body}")
    return path


def main():
    t = Tap()
    with tempfile.TemporaryDirectory() as d:
        both = scenario(d, "both.scn",
                        "[campaign ldp]\nmechanism = roc_hist_groups\neps = 2\nbins = 8\n"
                        "[campaign two]\nmechanism = roc_hist_2agg\neps = 2\nbins = 8\n"
                        "max_device_examples = 20\n")
        out = os.path.join(d, "out")
        r = run_sim("--scenario", both, "--out", out, "--quiet")
        if not t.ok(r.returncode == 0, "both trust models run in exact mode", r.stderr):
            return t.done()
        res = read_json(out, "results.json")
        ldp, two = res["configs"]
        t.ok(two["mechanism"] == "roc_hist_2agg" and two["eps_implemented"] == 2,
             "the configuration names the mechanism and the eps it spends", two["label"])
        x = two.get("two_aggregators", {})
        t.ok(x.get("trust_model") == "two_aggregators" and "privacy_unit" in x
             and x.get("sensitivity") == 40 and x.get("aggregators") == 2
             and abs(x.get("scale_per_aggregator", 0) - 20.0) < 1e-9,
             "results.json: trust model, privacy unit, sensitivity 2 x 20, scale 40 / 2 each", x)
        key = lambda it: (it["kind"], it["name"])
        li = {key(i): i for i in ldp["items"]}
        ti = {key(i): i for i in two["items"]}
        t.ok(set(li) == set(ti) and len(ti) == 22,
             "the same items as local DP's roc_hist_groups (3 AUCs, 3 gaps, their unbinned twins; "
             "each group's AP and ECE, their differences and ratios)",
             sorted(ti))
        t.ok(all(abs(li[k]["truth"] - ti[k]["truth"]) < 1e-12 for k in ti),
             "with the same truths (the same devices)",
             [(k, li[k]["truth"], ti[k]["truth"]) for k in ti if k in li])
        gaps = [k for k in ti if k[0] == "auc_gap"]
        worst = max(ti[k]["rmse"] / li[k]["rmse"] for k in gaps)
        t.ok(worst < 0.1, f"every gap's RMSE under a tenth of local DP's (worst ratio {worst:.3f})",
             [(k, li[k]["rmse"], ti[k]["rmse"]) for k in gaps])
        # 60 runs: a 95 % interval covering fewer than 48 has binomial p < 1e-6
        low = [(k, i["coverage"]) for k, i in ti.items() if i["coverage"] * 60 < 48]
        t.ok(not low, "every two-aggregator interval covers at the level (>= 48 of 60 runs)", low)
        t.ok("selection" in two, "every gap at once: results.json selection", list(two))

        # inprocess: every device through the SDK's device calls (Prio3 shard, HPKE seal), the
        # leader and the helper in the process; beside exact mode on the same population
        body = ("[campaign two]\nmechanism = roc_hist_2agg\neps = 2\nbins = 8\n"
                "max_device_examples = 20\n")
        runs = {}
        for mode in ("inprocess", "exact"):
            p = scenario(d, f"{mode}.scn", body, devices=600, runs=10, mode=mode)
            r = run_sim("--scenario", p, "--out", os.path.join(d, mode), "--quiet")
            if not t.ok(r.returncode == 0, f"roc_hist_2agg runs in {mode} mode", r.stderr):
                return t.done()
            runs[mode] = read_json(os.path.join(d, mode), "results.json")["configs"][0]
        ip, ex = runs["inprocess"], runs["exact"]
        t.ok(ip["reports"] == 600 * 10, "inprocess: every device made one DAP report a run "
             f"({ip['reports']})", ip["reports"])
        ii = {key(i): i for i in ip["items"]}
        ei = {key(i): i for i in ex["items"]}
        t.ok(set(ii) == set(ei) and all(abs(ii[k]["truth"] - ei[k]["truth"]) < 1e-12 for k in ii),
             "inprocess and exact: the same items and truths", sorted(ii))
        # the released sums carry the same noise law in both modes: every item's RMSE within
        # its predicted sd's chi-square band (10 runs: at 1e-6 two-sided it is [0.171, 2.203])
        far = [(k, i["rmse"], i["mean_sd"]) for k, i in ii.items()
               if k[0] in ("auc_group", "auc_gap")
               and not (0.17 * i["mean_sd"] <= i["rmse"] <= 2.21 * i["mean_sd"])]
        t.ok(not far, "inprocess: every AUC and gap error the size the estimator predicts", far)

        # the tuple statistics in this mode (metrics = tpr, fpr): each group's pooled TPR and FPR
        # at score 0.5, their gaps, and each group's positives and negatives
        body = ("[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nbins = 8\n"
                "max_device_examples = 20\nmetrics = tpr, fpr\n")
        p = scenario(d, "rates.scn", body, devices=50000, runs=200)
        r = run_sim("--scenario", p, "--out", os.path.join(d, "rates"), "--quiet")
        cfg = read_json(os.path.join(d, "rates"), "results.json")["configs"][0] \
            if r.returncode == 0 else {"items": []}
        rates = {(i["metric"], i["kind"], i["name"]): i for i in cfg["items"]
                 if i["metric"] in ("tpr", "fpr", "positives", "negatives")}
        counts = [i["truth"] for k, i in rates.items() if k[1] == "count"]
        t.ok(r.returncode == 0 and len(rates) == 18 and sum(counts) == 50000 * 20
             and all(0 < i["truth"] < 1 for k, i in rates.items() if k[1] == "group")
             and abs(rates[("tpr", "gap", "a-b")]["truth"] - rates[("tpr", "group", "a")]["truth"]
                     + rates[("tpr", "group", "b")]["truth"]) < 1e-9,
             "metrics = tpr, fpr: 3 TPRs, 3 FPRs, their 6 gaps and 6 label counts (all 10^6 "
             "examples), the gaps the groups' differences",
             r.stderr[-300:] + str(sum(counts)) + str([(k, i["truth"]) for k, i in rates.items()]))
        # 200 runs: a 95 % interval covering fewer than 173 has binomial p < 1e-6; the RMSE over
        # the predicted sd outside [0.765, 1.252] has chi-square (200 dof) p < 1e-6
        bad = [(k, i["coverage"], i["rmse"], i["mean_sd"]) for k, i in rates.items()
               if i["coverage"] * 200 < 173 or i["flagged"] > 0
               or not 0.765 * i["mean_sd"] <= i["rmse"] <= 1.252 * i["mean_sd"]]
        t.ok(rates and not bad, "every TPR, FPR, gap and count covers at its level, unflagged, "
             "its error the size predicted (eps 1, 50,000 devices, 200 runs)", bad)
        p = scenario(d, "rates_ip.scn", body, devices=600, runs=4, mode="inprocess")
        r = run_sim("--scenario", p, "--out", os.path.join(d, "rates_ip"), "--quiet")
        t.ok(r.returncode == 0 and sum(1 for i in read_json(os.path.join(d, "rates_ip"),
                                                              "results.json")["configs"][0]["items"]
                                       if i["metric"] == "tpr") == 6,
             "metrics = tpr, fpr in inprocess mode", r.stderr[-300:])

        # noise = gaussian: each aggregator adds a discrete Gaussian (zCDP), each eps of the
        # campaign being the (eps, delta)-DP of its rho. sigma2 computed here independently, as a
        # DAP task's: rho a hair below the (eps, delta) inverse, rounded down to k / 2^32, sigma2 =
        # ceil(l2sq 2^32 / (2 k)) for the squared L2 sensitivity 2 x 20^2.
        def sigma2_for(eps, delta, l2sq):
            ln = math.log(1.0 / delta)
            rho = (math.sqrt(eps + ln) - math.sqrt(ln)) ** 2 * (1.0 - 1e-9)
            k = math.floor(rho * 2.0 ** 32)
            return -(-(l2sq << 32) // (2 * k))
        gbody = body + "noise = gaussian\ndelta = 1e-9\n"
        p = scenario(d, "gauss.scn", gbody, devices=50000, runs=200)
        r = run_sim("--scenario", p, "--out", os.path.join(d, "gauss"), "--quiet")
        g = read_json(os.path.join(d, "gauss"), "results.json")["configs"][0] \
            if r.returncode == 0 else {"items": [], "two_aggregators": {}}
        x = g["two_aggregators"]
        want = sigma2_for(1.0, 1e-9, 800)
        rho = 800 / (2.0 * want)
        # kept for the planner's check below
        gauss_sim = (want, x.get("sigma2_per_aggregator"), g.get("eps_implemented"))
        t.ok(x.get("noise") == "discrete_gaussian" and x.get("sigma2_per_aggregator") == want
             and abs(x.get("rho", 0) - rho) < 1e-9 * rho and x.get("delta") == 1e-9
             and x.get("l2_sensitivity_sq") == 800
             and rho + 2 * math.sqrt(rho * math.log(1e9)) <= g.get("eps_implemented", 2) <= 1.0,
             f"noise = gaussian: sigma2 {want} per aggregator from (eps 1, delta 1e-9), the rho it "
             "gives, and a charge of at most eps 1", r.stderr[-300:] + str(x))
        gi = {(i["metric"], i["kind"], i["name"]): i for i in g["items"]
              if i.get("mean_sd") is not None}
        bad = [(k, i["coverage"], i["rmse"], i["mean_sd"]) for k, i in gi.items()
               if i["coverage"] * 200 < 173
               or not 0.765 * i["mean_sd"] <= i["rmse"] <= 1.252 * i["mean_sd"]]
        t.ok(len(gi) >= 30 and not bad, f"noise = gaussian: all {len(gi)} AUC, gap, AP, ECE, TPR, "
             "FPR and count intervals cover at their level, their errors the size predicted "
             "(50,000 devices, 200 runs)", bad)
        # inprocess: the aggregators' own draws (the SDK's dpm_dgauss, through the task's
        # central-DP extension) have the variance the estimator assumes (eps 8: sigma2 614)
        p = scenario(d, "gauss_ip.scn", gbody.replace("eps = 1", "eps = 8"), devices=600,
                     runs=10, mode="inprocess")
        r = run_sim("--scenario", p, "--out", os.path.join(d, "gauss_ip"), "--quiet")
        gp = read_json(os.path.join(d, "gauss_ip"), "results.json")["configs"][0] \
            if r.returncode == 0 else {"items": [], "two_aggregators": {}}
        far = [(i["kind"], i["name"], i["rmse"], i["mean_sd"]) for i in gp["items"]
               if i["kind"] in ("auc_group", "auc_gap", "group")
               and not (0.17 * i["mean_sd"] <= i["rmse"] <= 2.21 * i["mean_sd"])]
        t.ok(r.returncode == 0 and gp["two_aggregators"].get("sigma2_per_aggregator")
             == sigma2_for(8.0, 1e-9, 800) and gp["reports"] == 6000 and not far,
             "noise = gaussian in inprocess mode: every device reports, and each AUC, gap and "
             "rate error the size the estimator predicts", r.stderr[-300:] + str(far))

        # refusals
        cases = [
            ("a metric other than tpr and fpr",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "metrics = accuracy\n", {}, ["takes metrics tpr and fpr only", "accuracy"]),
            ("tpr without an edge at score 0.5",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "bins = 7\nmetrics = tpr\n", {}, ["give an edge at 0.5"]),
            ("no max_device_examples",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\n", {},
             ["needs max_device_examples", "calibrated"]),
            ("devices hold more examples than max_device_examples",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 12\n", {},
             ["devices hold up to 20 examples", "raise it to 20"]),
            ("max_device_examples above 255 (an 8-bit Prio3 entry)",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 300\n",
             {}, ["max_device_examples must be an integer in 1..255"]),
            ("network mode without the deployed task (tests/e2e/test_sim_2agg_network.py runs it)",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n",
             {"mode": "network", "runs": 1},
             ["needs --dap-campaigns FILE", "--dap-collector-key FILE"]),
            ("inprocess below the task's minimum batch size",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n",
             {"mode": "inprocess", "devices": 60},
             ["below the task's minimum batch size of 100", "raise devices"]),
            ("split",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "split = paper\n", {}, ["takes no split"]),
            ("noise = gaussian without delta",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "noise = gaussian\n", {}, ["noise = gaussian needs delta", "(eps, delta)-DP"]),
            ("delta with Laplace noise",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "delta = 1e-9\n", {}, ["delta is for noise = gaussian"]),
            ("delta above 1e-5",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "noise = gaussian\ndelta = 0.001\n", {}, ["delta must be a decimal in (0, 1e-5]"]),
            ("a noise the aggregators do not draw",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "noise = cauchy\n", {}, ["noise must be laplace or gaussian", "cauchy"]),
            ("an eps whose Gaussian needs sigma2 above 2^30",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 0.001\nmax_device_examples = 20\n"
             "noise = gaussian\ndelta = 1e-9\n", {}, ["sigma2 above 2^30", "raise eps or delta"]),
            ("a key of another mechanism",
             "[campaign two]\nmechanism = roc_hist_2agg\neps = 1\nmax_device_examples = 20\n"
             "group_eps = 0.5\n", {}, ["takes no key 'group_eps'", "max_device_examples"]),
        ]
        for what, body, kw, want in cases:
            kw.setdefault("devices", 2000)
            kw.setdefault("runs", 2)
            p = scenario(d, "bad.scn", body, **kw)
            net = ["--collector", "127.0.0.1:9", "--ca", os.devnull] \
                if kw.get("mode") == "network" else []
            r = run_sim("--scenario", p, "--out", os.path.join(d, "bad"), "--quiet", *net)
            t.ok(r.returncode != 0 and all(w in r.stderr for w in want),
                 f"refused, saying what to do: {what}", f"exit {r.returncode}: {r.stderr}")
        # the collector's campaigns file: not a campaigns-file mechanism (yet)
        cf = os.path.join(d, "campaigns.conf")
        with open(cf, "w") as f:
            f.write("[campaign]\nid = 1\nmechanism = roc_hist_2agg\neps = 1\nbins = 4\n")
        r = subprocess.run([os.path.join(OUT, "dpm-collector"), "--check-campaigns", cf],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
        t.ok(r.returncode != 0 and "mechanism" in (r.stderr + r.stdout),
             "the collector's campaigns file refuses roc_hist_2agg (dpm-sim only)",
             r.stdout + r.stderr)
        # FHAUC's claim through the real pipeline: the pooled counts come out exact
        r = run_sim("repro", "--out", os.path.join(d, "repro"), "--quiet", "fhauc")
        fh = read_json(os.path.join(d, "repro"), "fhauc.json") if r.returncode == 0 else {}
        exact = [c for c in fh.get("cells", []) if c["table"] == "exact"
                 and c["counts_as"] == "self-check"]
        t.ok(r.returncode == 0 and len(exact) == 48 and all(c["match"] for c in exact)
             and all(c["ours"] == 0 for c in exact),
             "repro fhauc: 24 rows of pooled counts and AUC through two aggregators, difference 0",
             r.stdout[-600:] + r.stderr[-600:])

        # the planner, both trust models
        q = ["plan", "--mechanism", "roc_hist_groups", "--shares", "0.6,0.3,0.1",
             "--auc", "0.8,0.78,0.75", "--base-rate", "0.1", "--examples", "30", "--bins", "12",
             "--error", "0.05", "--confidence", "0.9", "--eps", "1", "--no-check"]
        r = run_sim(*q, "--trust", "both")
        side = [l for l in r.stdout.splitlines() if l.startswith("side by side")]
        ks = [int(w) for w in side[0].replace(",", " ").split() if w.isdigit()] if side else []
        t.ok(r.returncode == 0 and "trust model: local DP" in r.stdout
             and "trust model: two aggregators" in r.stdout and len(ks) == 2
             and ks[1] * 50 < ks[0],
             "plan --trust both: local DP's and the two aggregators' K side by side "
             f"({ks})", r.stdout[-2000:] + r.stderr)
        r = run_sim(*q, "--trust", "both", "--json", os.path.join(d, "p.json"))
        t.ok(r.returncode == 2 and "--json takes one trust model" in r.stderr,
             "plan --trust both --json: refused, saying how", r.stderr)
        r = run_sim(*q, "--trust", "two_aggregators", "--json", "-")
        js = r.stdout[r.stdout.find("{"):]
        try:
            pj = json.loads(js)
        except ValueError:
            pj = {}
        t.ok(r.returncode == 0 and pj.get("trust_model") == "two_aggregators"
             and pj.get("answer", {}).get("devices", 0) > 0,
             "plan --trust two_aggregators --json: trust_model two_aggregators", r.stdout[-800:])
        # the README's figures (host-sim/sim/README.md): at eps 1, delta 1e-9 the Gaussian's
        # sigma2 76394 per aggregator and K 47422, beside Laplace's K 14664
        r = run_sim(*q, "--trust", "two_aggregators", "--noise", "gaussian", "--delta", "1e-9",
                    "--json", "-")
        try:
            rg = json.loads(r.stdout[r.stdout.find("{"):]).get("answer", {})
        except ValueError:
            rg = {}
        t.ok(r.returncode == 0 and rg.get("noise_var") == 76394 and rg.get("devices") == 47422
             and pj.get("answer", {}).get("devices") == 14664,
             "plan, the README's question: Gaussian sigma2 76394 and K 47422, Laplace K 14664",
             str(rg)[:400] + r.stderr)
        r = run_sim(*q, "--trust", "two_aggregators", "--examples", "300")
        t.ok(r.returncode == 2 and "255" in r.stderr,
             "plan, two aggregators, 300 examples per device: refused (8-bit Prio3 entries)",
             r.stderr)

        # the planner with each aggregator's discrete Gaussian (--noise gaussian --delta D):
        # sigma2 and the charge are the simulator's (results.json of gauss.scn above: m 20, eps 1,
        # delta 1e-9), the text and the JSON name the noise, delta and the eps charged
        gq = ["plan", "--mechanism", "roc_hist_groups", "--shares", "0.5,0.35,0.15",
              "--auc", "0.85,0.8,0.72", "--base-rate", "0.2,0.15,0.25", "--examples", "20",
              "--bins", "8", "--error", "0.05", "--confidence", "0.9", "--eps", "1",
              "--no-check", "--trust", "two_aggregators"]
        gauss = ["--noise", "gaussian", "--delta", "1e-9"]

        def plan_json(*args):
            r = run_sim(*args, "--json", "-")
            try:
                return r, json.loads(r.stdout[r.stdout.find("{"):])
            except ValueError:
                return r, {}
        r, pg = plan_json(*gq, *gauss)
        ans, qu = pg.get("answer", {}), pg.get("question", {})
        s2, s2_sim, eps_sim = gauss_sim
        t.ok(r.returncode == 0 and qu.get("noise") == "gaussian" and qu.get("delta") == 1e-9
             and ans.get("noise_var") == s2 == s2_sim
             and ans.get("eps_charged") == eps_sim and ans["eps_charged"] <= 1
             and ans.get("eps_campaign") == 1,
             f"plan --noise gaussian --json: noise gaussian, delta 1e-9, sigma2 {s2} and the "
             "charged eps, both the simulator's", str(qu) + str(ans) + r.stderr)
        r = run_sim(*gq, *gauss)
        noise = [ln for ln in r.stdout.splitlines() if ln.startswith("  noise: ")]
        t.ok(r.returncode == 0 and "aggregator's discrete Gaussian alone (eps, delta)-DP"
             in r.stdout and len(noise) == 1 and "delta = 1e-09" in noise[0]
             and f"sigma2 = {s2}," in noise[0]
             and "a device is charged eps = 1 (" in noise[0],
             "plan --noise gaussian: the trust model says (eps, delta)-DP; the noise line "
             "states delta, sigma2 and the eps a device is charged", r.stdout[:1500])
        r, pl = plan_json(*gq)
        t.ok(r.returncode == 0 and pl.get("question", {}).get("noise") == "laplace"
             and pl["question"].get("delta") is None
             and pl["answer"].get("eps_charged") == 1,
             "plan, two aggregators, Laplace (default): the JSON says noise laplace, no delta",
             str(pl.get("question")))
        # Gaussian at eps 1, delta 1e-9 needs MORE devices than Laplace: one release's sigma2
        # is ~10.6 x Laplace's 2 t^2 (zCDP pays off under composition); K grows at most as the
        # noise sd (the examples' sampling does not grow), measured 3.3x
        kg, kl = ans.get("devices", 0), pl.get("answer", {}).get("devices", 1)
        ratio = math.sqrt(ans.get("noise_var", 0) / pl.get("answer", {}).get("noise_var", 1))
        t.ok(2 * kl < kg <= ratio * kl + 1,
             f"eps 1, delta 1e-9: Gaussian K {kg} > 2 x Laplace K {kl}, at most the noise sd "
             f"ratio {ratio:.3f} times", "")
        # given K, the eps search with Gaussian noise: the K planned at eps 1 gives eps <= 1
        r, pk = plan_json(*[a for a in gq if a not in ("--eps", "1")], "--devices", str(kg),
                          *gauss)
        ek = pk.get("answer", {})
        t.ok(r.returncode == 0 and 0.9 < ek.get("eps_campaign", 0) <= 1
             and ek.get("eps_charged", 2) <= ek["eps_campaign"],
             f"plan --devices {kg} --noise gaussian: the eps search gives eps "
             f"{ek.get('eps_campaign')} <= 1, charged {ek.get('eps_charged')}", r.stderr)
        # the check simulates the Gaussian campaign (its own label) and charges the plan's eps
        ck = [a for a in gq if a != "--no-check"]
        r = run_sim(*ck, *gauss, "--devices", "40000", "--runs", "200")
        sim = [ln for ln in r.stdout.splitlines() if ln.startswith("  the check simulated: ")]
        t.ok(r.returncode == 0 and len(sim) == 1
             and "roc_hist_2agg eps=1 delta=1e-09 (gaussian) bins=8 groups=3" in sim[0]
             and "(a device charged eps = 1)" in sim[0] and "check by simulation" in r.stdout,
             "plan --noise gaussian, checked: the check simulated roc_hist_2agg with noise "
             "gaussian, delta 1e-9, and charged the plan's eps", r.stdout[-1200:] + r.stderr)
        r, pc = plan_json(*ck, *gauss, "--devices", "40000", "--runs", "200")
        pa = pc.get("answer", {})
        t.ok(r.returncode == 0 and "(gaussian)" in (pa.get("simulated_campaign") or "")
             and pa.get("eps_charged_simulated") == pa.get("eps_charged")
             and all(i.get("runs") == 200 for i in pa.get("items", [{}])),
             "plan --noise gaussian --json, checked: simulated_campaign is the Gaussian one",
             str(pa)[:800])
        r = run_sim(*gq, *gauss, "--trust", "both")
        side = [ln for ln in r.stdout.splitlines() if ln.startswith("side by side")]
        t.ok(r.returncode == 0 and r.stdout.count("  noise: ") == 1 and len(side) == 1
             and f"two aggregators (discrete Gaussian, delta 1e-09) {kg} devices" in side[0],
             "plan --noise gaussian --trust both: local DP as ever, the two aggregators' "
             "Gaussian answer beside it", r.stdout[-1500:] + r.stderr)
        # what it refuses, each saying what to do
        usage = [
            (["--noise", "gaussian"], "--noise gaussian needs --delta D (in (0, 1e-5], e.g. "
             "1e-9): the campaign's eps is then the (eps, delta)-DP its zCDP gives"),
            (["--delta", "1e-9"], "--delta is for --noise gaussian (discrete Laplace is eps-DP): "
             "add --noise gaussian, or drop --delta"),
            (["--noise", "laplace", "--delta", "1e-9"], "--delta is for --noise gaussian "
             "(discrete Laplace is eps-DP): add --noise gaussian, or drop --delta"),
            (gauss + ["--trust", "local"], "--noise gaussian and --delta are the two aggregators' "
             "(local DP's mechanisms draw their own noise): add --trust two_aggregators, or drop "
             "them"),
            (["--noise", "cauchy", "--delta", "1e-9"], "--noise: laplace or gaussian"),
            (["--noise", "gaussian", "--delta", "1e-4"],
             "--delta: a decimal in (0, 1e-5], e.g. 1e-9"),
        ]
        for extra, msg in usage:
            r = run_sim(*gq, *extra)
            first = r.stderr.splitlines()[0] if r.stderr else ""
            t.ok(r.returncode == 2 and first == "dpm-sim plan: " + msg
                 and "usage: dpm-sim plan --mechanism roc_hist_groups" in r.stderr,
                 f"plan {' '.join(extra)}: refused with the usage", r.stderr[:400])
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
