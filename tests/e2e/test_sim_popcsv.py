#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim with `population = csv(PATH)` (host-sim/sim/README.md, "Your own data"), printing
TAP. The CSV fixtures are written here from seeded generators (tests/e2e/popcsv_data.py: binormal
scores per group, 1..8 examples per device, rows shuffled) and their truths computed here from
the rows, independently of dpm-sim:
  - every mechanism (tuple_mr, tuple_ml, roc_hist, roc_hist_groups, dpauc, fedauc_rr/lap,
    ustat_bins/tree on a one-row-per-device file) runs in inprocess and exact mode over the file
    taken as it is, with the truths computed here (group TPR/FPR, pooled and per-group AUC);
  - inprocess at a fixed seed: every estimate inside its interval; exact mode, 400 runs: the
    tuple and AUC intervals' coverage in the binomial band (alpha ~ 1e-6), with a negative
    control (the same check against a shifted truth fails);
  - negative control of the truth: the file with its labels flipped gives TPR = the original's
    FPR per group and AUC = 1 - the original's (and not the original's TPR);
  - a prediction column, and a threshold, are what the truths use;
  - resampling (devices != the file's): stated in results.json, the group sizes by largest
    remainder, replay of a device, the same population in inprocess and exact mode; a fleet
    leaving a group empty is refused;
  - every bad file gets its message with the file and 1-based line; the example scenario
    host-sim/scenarios/own-data.scn runs."""
import math
import os
import sys
import tempfile

import subprocess

import popcsv_data as pd
from e2e_util import ROOT, SIM, Tap, read_json, run_sim
from test_collector import Harness

RUNS = 400
# Binomial(400, 0.95): Pr[X <= 351] = 1.0e-8, Pr[X = 400] = 1.2e-9 (as test_sim_roc.py).
COVER = (0.88, 0.9975)

MULTI = """\
[scenario]
name = e2e-popcsv
population = csv({csv}{extra})
runs = {runs}
seed = 5
mode = {mode}
{devices}
[campaign mr]
mechanism = tuple_mr
metrics = tpr
eps = 8
[campaign gaps]
mechanism = tuple_ml
metrics = tpr, fpr
eps = 8
[campaign roc]
mechanism = roc_hist
eps = 8
bins = 10
[campaign rocg]
mechanism = roc_hist_groups
groups = north, south
eps = 8
bins = 5
[campaign dpauc]
mechanism = dpauc
eps = 8
thresholds = 5
[campaign fedrr]
mechanism = fedauc_rr
eps = 8
[campaign fedlap]
mechanism = fedauc_lap
eps = 8
"""

SINGLE = """\
[scenario]
name = e2e-popcsv-one
population = csv({csv})
runs = 1
seed = 5
mode = {mode}
[campaign bins]
mechanism = ustat_bins
eps = 8
k = 8
[campaign tree]
mechanism = ustat_tree
eps = 8
depth = 3
grr_levels = 1
"""


def scenario(tmp, name, text, **kw):
    path = os.path.join(tmp, name + ".scn")
    with open(path, "w") as f:
        f.write(text.format(**kw))
    return path


def sim(scn, out, *args):
    return run_sim("--scenario", scn, "--out", out, "--quiet", "--no-plot", *args, timeout=600)


def items(res, campaign):
    """{(metric, kind, name): item} of a campaign's first configuration (tuple items: metric
    tpr/fpr, kind group/gap; AUC items: metric auc, kind auc (against the unbinned AUC) or
    auc_binned, roc_hist_groups' auc_group_unb per group)."""
    c = next(c for c in res["configs"] if c["campaign"] == campaign)
    return {(i["metric"], i["kind"], i["name"]): i for i in c["items"]}


MODEL = ("auc", "auc", "model")


def close(a, b, tol=1e-9):
    return a is not None and b is not None and abs(a - b) <= tol


def truth_checks(t, res, want, what):
    """The tuple and AUC truths of res against those computed from the rows."""
    bad = []
    gaps = items(res, "gaps")
    for g in ("north", "south", "east"):
        for m in ("tpr", "fpr"):
            got = gaps[(m, "group", g)]["truth"]
            if not close(got, want[g][m]):
                bad.append(f"{m} {g}: {got} != {want[g][m]}")
    rocg = {k[2]: i["truth"] for k, i in items(res, "rocg").items() if k[1] == "auc_group_unb"}
    for g in ("north", "south"):
        if not close(rocg.get(g), want[g]["auc"]):
            bad.append(f"rocg {g}: {rocg.get(g)} != {want[g]['auc']}")
    for camp, name in (("roc", "model"), ("dpauc", "server_A"), ("fedrr", "auc"), ("fedlap", "auc")):
        got = items(res, camp).get(("auc", "auc", name), {}).get("truth")
        if not close(got, want["all"]["auc"]):
            bad.append(f"{camp} AUC truth {got} != {want['all']['auc']}")
    t.ok(not bad, f"{what}: every truth equals the one computed from the rows", "\n".join(bad))
    return not bad


def misses(res, truth=None):
    """(intervals, [items whose interval misses the truth]) of every item with an interval;
    truth(campaign, item) overrides the truth (the negative control)."""
    n, out = 0, []
    for c in res["configs"]:
        for i in c["items"]:
            est, lo, hi = i["runs"][0]
            if None in (est, lo, hi):
                continue
            n += 1
            x = i["truth"] if truth is None else truth(c["campaign"], i)
            if not lo <= x <= hi:
                out.append((c["campaign"], i["kind"], i["name"], x, i["runs"][0]))
    return n, out


def miss_bound(n, p=0.05, alpha=1e-6):
    """The smallest b with Pr[Binomial(n, p) > b] < alpha."""
    tail = 1.0
    for b in range(n + 1):
        tail -= math.comb(n, b) * p ** b * (1 - p) ** (n - b)
        if tail < alpha:
            return b
    return n


def main():
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="dpm-popcsv-")
    rows = pd.rows(seed=91, devices=240)
    csv_path = os.path.join(tmp, "data.csv")
    pd.write(csv_path, rows)
    want = pd.truths(rows)

    # ---- every mechanism, inprocess and exact, truths from the rows -----------------------------
    res = {}
    for mode in ("inprocess", "exact"):
        scn = scenario(tmp, "multi-" + mode, MULTI, csv="data.csv", extra="", runs=1, mode=mode,
                       devices="")
        r = sim(scn, os.path.join(tmp, "out-" + mode))
        if not t.ok(r.returncode == 0, f"{mode}: every mechanism runs on the file", r.stderr):
            continue
        res[mode] = read_json(os.path.join(tmp, "out-" + mode), "results.json")
        truth_checks(t, res[mode], want, mode)
        pop = res[mode].get("population", {})
        t.ok(pop.get("source") == "csv" and pop.get("file_devices") == 240 and
             all(c["devices"] == 240 for c in res[mode]["configs"]),
             f"{mode}: results.json states the csv population and its 240 devices", pop)
    if "inprocess" in res:
        n, miss = misses(res["inprocess"])
        bound = miss_bound(n)
        t.ok(n >= 30 and len(miss) <= bound,
             f"inprocess, seed 5, eps 8: {n - len(miss)} of {n} intervals hold the file's truth "
             f"(at most {bound} misses: Pr[Binomial({n}, 0.05) > {bound}] < 1e-6)", miss)
    if len(res) == 2:
        same = all(a["truth"] == b["truth"] for ca, cb in zip(res["inprocess"]["configs"],
                                                               res["exact"]["configs"])
                   for a, b in zip(ca["items"], cb["items"]))
        t.ok(same, "inprocess and exact mode measure the same population (same truths)")

    # ---- one row per device: the ustat modules ---------------------------------------------------
    one = pd.rows(seed=92, devices=3000, most=1)
    pd.write(os.path.join(tmp, "one.csv"), one)
    w1 = pd.truths(one)
    for mode in ("inprocess", "exact"):
        scn = scenario(tmp, "one-" + mode, SINGLE, csv="one.csv", mode=mode)
        r = sim(scn, os.path.join(tmp, "one-" + mode))
        ok = t.ok(r.returncode == 0, f"{mode}: ustat_bins and ustat_tree run on a one-row file",
                  r.stderr)
        if ok:
            rr = read_json(os.path.join(tmp, "one-" + mode), "results.json")
            got = [items(rr, c)[MODEL]["truth"] for c in ("bins", "tree")]
            t.ok(all(close(g, w1["all"]["auc"]) for g in got),
                 f"{mode}: their model AUC is the rows' AUC", (got, w1["all"]["auc"]))

    # ---- coverage over 400 exact runs, with a negative control -----------------------------------
    cover_text = MULTI[:MULTI.index("[campaign dpauc]")]  # the campaigns with intervals
    scn = scenario(tmp, "cover", cover_text, csv="data.csv", extra="", runs=RUNS, mode="exact",
                   devices="")
    r = sim(scn, os.path.join(tmp, "cover"))
    if t.ok(r.returncode == 0, "exact mode, 400 runs", r.stderr):
        rc = read_json(os.path.join(tmp, "cover"), "results.json")
        checked = [(camp, k) for camp in ("gaps", "roc", "rocg")
                   for k in items(rc, camp) if k[1] in ("group", "gap", "auc_binned", "auc_group", "auc_gap")]
        covers = {f"{c}:{k[0]}:{k[2]}": items(rc, c)[k]["coverage"] for c, k in checked}
        t.ok(len(covers) >= 10 and all(COVER[0] <= v <= COVER[1] for v in covers.values()),
             f"{len(covers)} items' 95% intervals cover their file truth in [88%, 99.75%] of 400 runs",
             covers)
        # negative control: the same intervals against a truth shifted by 3 sd miss it
        item = items(rc, "roc")[("auc", "auc_binned", "binned")]
        sd = item["mean_sd"]
        shifted = sum(1 for e, lo, hi in item["runs"] if lo <= item["truth"] + 3 * sd <= hi)
        t.ok(shifted / len(item["runs"]) < COVER[0],
             f"negative control: a truth 3 sd off is covered in {shifted} of 400 runs (< 88%)")

    # ---- the model's AUC from the binned estimate: its interval holds the binning bound ----------
    # A fleet of 10^5 devices resampled from the file, eps 4, 10 bins: the binned AUC's interval
    # (noise + sampling) is narrower than the binning bias, and once covered the model's AUC in
    # 16 % of runs, unflagged. With the bound (half the pairs tied in a bin) it covers at least
    # the level and says so (flag "bound"). Control: the binned item's noise-only interval
    # against the same model truth misses.
    scn = scenario(tmp, "model", MULTI[:MULTI.index("[campaign rocg]")].replace(
        "[campaign roc]\nmechanism = roc_hist\neps = 8", "[campaign roc]\nmechanism = roc_hist\neps = 4"),
        csv="data.csv", extra="", runs=RUNS, mode="exact", devices="devices = 1e5")
    r = sim(scn, os.path.join(tmp, "model"))
    if t.ok(r.returncode == 0, "exact mode, 10^5 devices resampled, 400 runs", r.stderr):
        rm = read_json(os.path.join(tmp, "model"), "results.json")
        roc = items(rm, "roc")
        model = roc[MODEL]
        t.ok(model["coverage"] >= COVER[0] and model["flagged"] == 1.0,
             "the model AUC's interval (binning bound in it) covers it in >= 88% of 400 runs, "
             "flagged bound in each", (model["coverage"], model["flagged"]))
        binned = roc[("auc", "auc_binned", "binned")]
        held = sum(1 for e, lo, hi in binned["runs"] if lo <= model["truth"] <= hi)
        t.ok(held / len(binned["runs"]) < COVER[0],
             f"negative control: an interval without the binning bound covers the model AUC in "
             f"{held} of 400 runs (< 88%)")

    # ---- negative control of the truth: labels flipped ------------------------------------------
    flipped = [[d, s, "0" if l == "1" else "1", g] for d, s, l, g in rows]
    pd.write(os.path.join(tmp, "flip.csv"), flipped)
    scn = scenario(tmp, "flip", MULTI, csv="flip.csv", extra="", runs=1, mode="exact", devices="")
    r = sim(scn, os.path.join(tmp, "flip"))
    if t.ok(r.returncode == 0, "the flipped file runs", r.stderr) and "exact" in res:
        rf = read_json(os.path.join(tmp, "flip"), "results.json")
        a, b = items(res["exact"], "gaps"), items(rf, "gaps")
        comp = all(close(b[("tpr", "group", g)]["truth"], a[("fpr", "group", g)]["truth"])
                   for g in ("north", "south", "east"))
        t.ok(comp, "flipped labels: each group's TPR is the original's FPR")
        t.ok(not any(close(b[("tpr", "group", g)]["truth"], a[("tpr", "group", g)]["truth"], 1e-3)
                     for g in ("north", "south", "east")),
             "negative control: the flipped TPR is not the original's TPR")
        if "inprocess" in res:
            other = {(c["campaign"], i["kind"], i["name"], i["metric"]): i["truth"]
                     for c in rf["configs"] for i in c["items"]}
            n, miss = misses(res["inprocess"],
                             lambda camp, i: other[(camp, i["kind"], i["name"], i["metric"])])
            t.ok(len(miss) > miss_bound(n),
                 f"negative control: against the flipped file's truths {len(miss)} of {n} "
                 f"intervals miss (more than {miss_bound(n)})")
        auc_a = items(res["exact"], "roc")[MODEL]["truth"]
        auc_b = items(rf, "roc")[MODEL]["truth"]
        t.ok(close(auc_a + auc_b, 1.0), f"flipped labels: AUC {auc_b:.6f} = 1 - {auc_a:.6f}")

    # ---- a prediction column; a threshold -------------------------------------------------------
    prows = pd.rows(seed=93, devices=240, prediction=True)
    pd.write(os.path.join(tmp, "pred.csv"), prows,
             header=("device_id", "score", "label", "group", "prediction"))
    scn = scenario(tmp, "pred", MULTI, csv="pred.csv", extra="", runs=1, mode="exact", devices="")
    r = sim(scn, os.path.join(tmp, "pred"))
    if t.ok(r.returncode == 0, "a file with a prediction column runs", r.stderr):
        truth_checks(t, read_json(os.path.join(tmp, "pred"), "results.json"), pd.truths(prows),
                     "prediction column")
    # columns in another order, and a threshold of 0.7
    reordered = [[g, l, d, s] for d, s, l, g in rows]
    pd.write(os.path.join(tmp, "reorder.csv"), reordered, header=("group", "label", "device_id", "score"))
    scn = scenario(tmp, "thr", MULTI, csv="reorder.csv", extra=", threshold=0.7", runs=1,
                   mode="exact", devices="")
    r = sim(scn, os.path.join(tmp, "thr"))
    if t.ok(r.returncode == 0, "columns in another order, threshold=0.7", r.stderr):
        truth_checks(t, read_json(os.path.join(tmp, "thr"), "results.json"),
                     pd.truths(rows, threshold=0.7), "threshold 0.7")

    # ---- resampling -----------------------------------------------------------------------------
    rs = {}
    for mode in ("inprocess", "exact"):
        scn = scenario(tmp, "rs-" + mode, MULTI, csv="data.csv", extra="", runs=1, mode=mode,
                       devices="devices = 1000")
        r = sim(scn, os.path.join(tmp, "rs-" + mode))
        if t.ok(r.returncode == 0, f"{mode}: resampled to 1000 devices", r.stderr):
            rs[mode] = read_json(os.path.join(tmp, "rs-" + mode), "results.json")
    if len(rs) == 2:
        a, b = items(rs["inprocess"], "gaps"), items(rs["exact"], "gaps")
        t.ok(all(a[k]["truth"] == b[k]["truth"] for k in a),
             "resampled: inprocess and exact measure the same drawn fleet")
        t.ok("with replacement" in rs["exact"]["population"]["resampled"],
             "resampled: results.json states the method")
        d = items(res.get("exact", rs["exact"]), "gaps")
        t.ok(any(a[k]["truth"] != d[k]["truth"] for k in a),
             "resampled truths are the drawn fleet's, not the file's")
        scn = os.path.join(tmp, "rs-inprocess.scn")
        r = run_sim("replay", "--scenario", scn, "--seed", "5", "--run", "0", "--device", "999")
        t.ok(r.returncode == 0, "replay of a resampled device", r.stderr + r.stdout)
    scn = scenario(tmp, "small", MULTI, csv="data.csv", extra="", runs=1, mode="exact",
                   devices="devices = 2")
    r = sim(scn, os.path.join(tmp, "small"))
    t.ok(r.returncode != 0 and "leaves group" in r.stderr and "raise devices" in r.stderr,
         "a fleet too small for a group is refused", r.stderr)

    equivalence(t, tmp)
    network(t, tmp)
    bad_files(t, tmp)

    # ---- the example ----------------------------------------------------------------------------
    r = sim(os.path.join(ROOT, "host-sim/scenarios/own-data.scn"), os.path.join(tmp, "own"),
            "--runs", "2")
    t.ok(r.returncode == 0, "host-sim/scenarios/own-data.scn runs", r.stderr)
    return t.done()


BINORMAL = """\
[scenario]
devices = 400
runs = 1
seed = 5
mode = exact
{population}
[campaign gaps]
mechanism = tuple_ml
metrics = tpr, fpr
eps = 4
[campaign roc]
mechanism = roc_hist
eps = 4
bins = 8
[campaign rocg]
mechanism = roc_hist_groups
eps = 4
bins = 8
"""
BINORMAL_GROUPS = """\
[population]
examples = 6
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.4
scores = binormal(auc=0.70, base_rate=0.3)
partition = noniid(concentration=4, auc_sd=0.3)
"""


def equivalence(t, tmp):
    """A binormal population written as a csv file (dpm-sim population) is the same population:
    the same group TPR/FPR and binned AUCs, to the last bit."""
    bn = os.path.join(tmp, "bn.scn")
    with open(bn, "w") as f:
        f.write(BINORMAL.format(population=BINORMAL_GROUPS))
    r = run_sim("population", "--scenario", bn, "--out", os.path.join(tmp, "bn.csv"))
    if not t.ok(r.returncode == 0, "dpm-sim population writes a binormal population as csv",
                r.stderr):
        return
    back = os.path.join(tmp, "bn-back.scn")  # the same campaigns; devices: the file's 400
    with open(back, "w") as f:
        f.write(BINORMAL.format(population="").replace("devices = 400\n",
                                                       "population = csv(bn.csv)\n"))
    ra, rb = sim(bn, os.path.join(tmp, "bn-out")), sim(back, os.path.join(tmp, "bn-back-out"))
    if not t.ok(ra.returncode == 0 and rb.returncode == 0, "both run", ra.stderr + rb.stderr):
        return
    a = read_json(os.path.join(tmp, "bn-out"), "results.json")
    b = read_json(os.path.join(tmp, "bn-back-out"), "results.json")
    kinds = ("group", "gap", "auc_binned", "auc_group", "auc_gap")
    ta = {(c["campaign"], i["metric"], i["kind"], i["name"]): i["truth"] for c in a["configs"]
          for i in c["items"] if i["kind"] in kinds}
    tb = {(c["campaign"], i["metric"], i["kind"], i["name"]): i["truth"] for c in b["configs"]
          for i in c["items"] if i["kind"] in kinds}
    t.ok(len(ta) == 10 and ta == tb,
         f"the csv of a binormal population has its {len(ta)} truths (group TPR/FPR and gaps, "
         "binned AUCs)", {k: (v, tb.get(k)) for k, v in ta.items() if tb.get(k) != v})
    # inprocess: the same devices with the same examples and noise streams send the same reports
    ra = sim(bn, os.path.join(tmp, "bn-in"), "--mode", "inprocess")
    rb = sim(back, os.path.join(tmp, "bn-back-in"), "--mode", "inprocess")
    if t.ok(ra.returncode == 0 and rb.returncode == 0, "both run inprocess", ra.stderr + rb.stderr):
        ea = {(c["campaign"], i["kind"], i["name"], i["metric"]): i["runs"] for c in
              read_json(os.path.join(tmp, "bn-in"), "results.json")["configs"] for i in c["items"]}
        eb = {(c["campaign"], i["kind"], i["name"], i["metric"]): i["runs"] for c in
              read_json(os.path.join(tmp, "bn-back-in"), "results.json")["configs"]
              for i in c["items"] if i["kind"] in kinds}
        t.ok(eb and all(ea[k] == v for k, v in eb.items()),
             f"inprocess: its {len(eb)} estimates and intervals are the binormal population's, "
             "bit for bit", {k: (ea[k], v) for k, v in eb.items() if ea[k] != v})
    # negative control: another population seed writes another population
    with open(bn, "w") as f:
        f.write(BINORMAL.format(population=BINORMAL_GROUPS.replace("[population]\n",
                                                                   "[population]\nseed = 2\n")))
    r = run_sim("population", "--scenario", bn, "--out", os.path.join(tmp, "bn.csv"))
    rb = sim(back, os.path.join(tmp, "bn-back-out"))
    if r.returncode == 0 and rb.returncode == 0:
        b = read_json(os.path.join(tmp, "bn-back-out"), "results.json")
        tb = {(c["campaign"], i["metric"], i["kind"], i["name"]): i["truth"]
              for c in b["configs"] for i in c["items"] if i["kind"] in kinds}
    t.ok(r.returncode == 0 and rb.returncode == 0 and tb != ta,
         "negative control: another population seed's csv has other truths")
    r = run_sim("population", "--scenario", back, "--out", os.path.join(tmp, "x.csv"))
    t.ok(r.returncode == 2 and "already a csv file" in r.stderr,
         "dpm-sim population refuses a csv population", r.stderr)


def network(t, tmp):
    """network mode: the file's devices post to a real dpm-collector over TLS; dpm-sim's own
    cross-check passes and the estimates equal the inprocess run's."""
    text = MULTI[:MULTI.index("[campaign dpauc]")]
    scn = scenario(tmp, "net", text, csv="data.csv", extra="", runs=1, mode="inprocess", devices="")
    camp = run_sim("campaigns", "--scenario", scn)
    if not t.ok(camp.returncode == 0, "dpm-sim campaigns on a csv population", camp.stderr):
        return
    h = Harness(campaigns=camp.stdout)
    try:
        h.start()
        r = subprocess.run([SIM, "--scenario", scn, "--mode", "network", "--collector",
                            f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "2", "--batch", "50",
                            "--out", os.path.join(tmp, "net-out"), "--no-plot", "--token",
                            h.creds.files["harness"]], capture_output=True, text=True,
                           timeout=300, cwd=ROOT)
        t.ok(r.returncode == 0, "network mode: the file's devices post over TLS, the collector's "
             "counts equal ours", r.stdout + r.stderr)
        ri = sim(scn, os.path.join(tmp, "net-in"))
        if r.returncode == 0 and ri.returncode == 0:
            def est(d):
                res = read_json(d, "results.json")
                return {(c["campaign"], i["kind"], i["name"], i["metric"]): i["runs"][0]
                        for c in res["configs"] for i in c["items"]}
            a, b = est(os.path.join(tmp, "net-out")), est(os.path.join(tmp, "net-in"))
            t.ok(a and a == b, "network estimates equal the inprocess run's on the same seed")
        t.ok(h.stop() == 0, "collector: clean stop")
    finally:
        h.cleanup()


HEAD = "device_id,score,label,group\n"
GOOD = "a,0.9,1,x\na,0.2,0,x\nb,0.7,1,y\nb,0.1,0,y\n"
BAD = [
    ("empty", "", "data.csv: empty file (expected a header line"),
    ("comments only", "# nothing\n\n", "data.csv: empty file"),
    ("header only", HEAD, "data.csv:1: no data rows after the header"),
    ("missing column", "device_id,score,group\na,0.5,x\n", "data.csv:1: header: missing column 'label'"),
    ("unknown column", HEAD.strip() + ",predicton\n", "data.csv:1: header: unknown column 'predicton' (did you mean 'prediction'?)"),
    ("column twice", "device_id,score,label,score,group\n", "data.csv:1: header: column 'score' given twice"),
    ("header again", HEAD + GOOD + HEAD + GOOD, "data.csv:6: the header line again"),
    ("score > 1", HEAD + GOOD + "c,1.5,1,x\n", "data.csv:6: score '1.5' is not a number in [0, 1]"),
    ("score < 0", HEAD + "c,-0.1,1,x\n" + GOOD, "data.csv:2: score '-0.1' is not a number in [0, 1]"),
    ("score nan", HEAD + GOOD + "c,nan,1,x\n", "data.csv:6: score 'nan' is not a number in [0, 1] (plain decimals only: NaN, Inf"),
    ("score inf", HEAD + GOOD + "c,inf,1,x\n", "data.csv:6: score 'inf' is not a number"),
    ("score text", HEAD + GOOD + "c,high,1,x\n", "data.csv:6: score 'high' is not a number"),
    ("score hex", HEAD + GOOD + "c,0x1p-1,1,x\n", "data.csv:6: score '0x1p-1' is not a number"),
    ("label 2", HEAD + GOOD + "c,0.5,2,x\n", "data.csv:6: label '2' is not 0 or 1"),
    ("label yes", HEAD + "c,0.5,yes,x\n" + GOOD, "data.csv:2: label 'yes' is not 0 or 1"),
    ("prediction 3", "device_id,score,label,group,prediction\nc,0.5,1,x,3\n", "data.csv:2: prediction '3' is not 0 or 1"),
    ("no device_id", HEAD + GOOD + ",0.5,1,x\n", "data.csv:6: empty device_id (field 1)"),
    ("empty score", HEAD + GOOD + "c,,1,x\n", "data.csv:6: empty score (field 2)"),
    ("empty group", "label,group,score,device_id\n1,x,0.5,a\n0, ,0.2,b\n", "data.csv:3: empty group (field 2)"),
    ("empty prediction", "device_id,score,label,group,prediction\na,0.5,1,x,\n", "data.csv:2: empty prediction (field 5)"),
    ("trailing comma", HEAD + GOOD + "c,0.5,1,x,\n", "data.csv:6: an empty value after the last comma (a trailing comma?)"),
    ("too few fields", HEAD + GOOD + "c,0.5,1\n", "data.csv:6: 3 fields, the header has 4"),
    ("too many fields", HEAD + GOOD + "c,0.5,1,x,9\n", "data.csv:6: more than 4 values (the header has 4 columns)"),
    ("bad group", HEAD + GOOD + "c,0.5,1,x y\n", "data.csv:6: group 'x y' is not a group name"),
    ("device in two groups", HEAD + GOOD + "a,0.5,1,y\n", "data.csv:6: device 'a' is in group 'y' here but in 'x' on line 2"),
    ("quoted", HEAD + GOOD + "\"c\",0.5,1,x\n", "data.csv:6: quoted fields are not supported"),
    ("too long", HEAD + GOOD + "c" * 2000 + ",0.5,1,x\n", "data.csv:6: line longer than 1023 characters"),
    ("NUL", HEAD + GOOD + "c,0.5\0,1,x\n", "data.csv:6: NUL byte in the line"),
    ("one group", HEAD + "a,0.9,1,x\na,0.2,0,x\n", "data.csv has one group ('x'): a scenario needs at least 2 groups"),
    ("too many rows", HEAD + GOOD + "".join("big,0.5,1,x\n" for _ in range(10001)),
     "device 'big' has more than 10000 rows"),
]


def bad_files(t, tmp):
    d = os.path.join(tmp, "bad")
    os.makedirs(d, exist_ok=True)
    camp = "[campaign c]\nmechanism = tuple_ml\nmetrics = tpr\neps = 1\n"
    for what, text, want in BAD:
        with open(os.path.join(d, "data.csv"), "w") as f:
            f.write(text)
        scn = os.path.join(d, "s.scn")
        with open(scn, "w") as f:
            f.write("[scenario]\npopulation = csv(data.csv)\n" + camp)
        r = sim(scn, os.path.join(d, "out"))
        msg = r.stderr.strip()
        t.ok(r.returncode != 0 and want in msg and "s.scn:2: " in msg
             and "data.csv" in msg and r.returncode < 128,
             f"bad file, {what}: {want}", msg)
    # the scenario's side: a group of a campaign with no device in the file, [group] sections,
    # the synthetic model's keys, a bad threshold, a missing file
    with open(os.path.join(d, "data.csv"), "w") as f:
        f.write(HEAD + GOOD)
    cases = [
        ("[scenario]\npopulation = csv(data.csv)\n[campaign c]\nmechanism = tuple_ml\nmetrics = tpr\n"
         "groups = x, z\neps = 1\n", "s.scn:6: group 'z' has no devices in ", "(its groups: x, y)"),
        ("[scenario]\npopulation = csv(data.csv)\n[group a]\nshare = 1\n" + camp,
         "s.scn:3: no [group] sections with population = csv(...)", ""),
        ("[group a]\nshare = 1\n[scenario]\npopulation = csv(data.csv)\n" + camp,
         "s.scn:4: population = csv(...) takes its groups from the file", ""),
        ("[scenario]\npopulation = csv(data.csv)\n[population]\nexamples = 5\n" + camp,
         "s.scn:4: population = csv(...) takes its examples from the file", ""),
        ("[scenario]\npopulation = csv(data.csv, threshold=2)\n" + camp,
         "s.scn:2: csv(): threshold must be in [0, 1]", ""),
        ("[scenario]\npopulation = csv(nothere.csv)\n" + camp,
         "s.scn:2: population: cannot open ", "nothere.csv: No such file"),
        ("[scenario]\npopulation = json(data.csv)\n" + camp,
         "s.scn:2: population must be csv(PATH) or csv(PATH, threshold=T)", ""),
        ("[scenario]\npopulation = csv(data.csv)\n[campaign c]\nmechanism = ustat_bins\neps = 1\n",
         "group 'x' has devices with up to 2 rows in ", "give one row per device_id"),
        ("[scenario]\npopulation = csv(data.csv)\n[campaign c]\nmechanism = ustat_bins\n"
         "kernel = kendall\neps = 1\n", "kernel = kendall needs two scores per device", ""),
    ]
    for text, want, want2 in cases:
        scn = os.path.join(d, "s.scn")
        with open(scn, "w") as f:
            f.write(text)
        r = sim(scn, os.path.join(d, "out"))
        t.ok(r.returncode != 0 and want in r.stderr and want2 in r.stderr,
             f"scenario: {want}{want2}", r.stderr)


if __name__ == "__main__":
    sys.exit(main())
