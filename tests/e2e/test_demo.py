#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make demo's output reads true (.make/demo.sh, .make/demo_report.py), run for real: a TLS
collector, 20,000 simulated devices (DEMO_DEVICES), every campaign of host-sim/scenarios/demo.scn,
and 20,000 more through both trust models (DEMO_TRUST_DEVICES, a DAP leader and helper).
What a reader takes from it, checked against the collector's own estimate JSON of that run:

1. No interval is printed twice with opposite verdicts (the old demo printed the binned AUC's
   bounds twice, "outside" against the model's AUC and "inside" against the binned AUC).
2. The AUC headline, the line that compares with the model's AUC, is the unbinned AUC with its
   interval for the model's AUC (auc_unbinned, auc_unbinned_ci_total: roc.h's interval with the
   examples' sampling in it; auc_unbinned_ci is for the examples' own exact AUC), and says "at
   least" when that interval claims at least the level; the binned AUC's interval (auc_ci) is
   compared only with the devices' binned AUC. (Its coverage of the model's AUC:
   tests/stat/test_demo_auc.c.)
3. Per tuple metric, every gap at once with the collector's simultaneous intervals, and the
   largest gap with the collector's interval for the largest true gap (largest_disparity.ci)
   and its claim ("at least"), never a pair's own pointwise interval as "the largest
   disparity's".

4. The two trust models on the same devices (demo_trust.scn, DEMO_TRUST_DEVICES): both runs
   counted every device (local DP through the collector, two aggregators through a real DAP
   leader and helper), and each printed row holds both models' estimates and intervals as their
   results.json have them, each gap's interval as that pair's alone (no "largest"); negative
   controls: one estimate, one bound moved by 0.0001, or a "largest" in the section, are caught.

Negative control: the old demo's output (below, from main at 4ae99aa with its run's estimate
numbers) fails each of the three checks."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.abspath(os.environ.get("OUT", os.path.join(ROOT, "build", "host")))
DEVICES = 20000

INTERVAL = re.compile(r"\[([-+]?\d+\.\d+), ([-+]?\d+\.\d+)\]|([-+]?\d+\.\d+) \.\. ([-+]?\d+\.\d+)")

# `make demo` at 4ae99aa (200,000 devices), and the numbers of its run's estimates that the
# checks read (collector-estimate-3.json's "roc"; the tuple estimates had no simultaneous ones).
OLD_OUTPUT = """\
campaign 1: tuple_mr, eps 1 (implemented 1.00000), 197,568 reports stored
  TPR per group (TPR by randomized response):
     group    true  estimate             95% CI    error  in CI
    g18_29  0.8181    0.8032   [0.7863, 0.8200]  -0.0149  yes
    g30_44  0.7781    0.7975   [0.7748, 0.8202]  +0.0194  yes
    g45_64  0.7421    0.7559   [0.7226, 0.7892]  +0.0138  yes
   g65plus  0.7015    0.6771   [0.6100, 0.7442]  -0.0244  yes
  largest disparity g18_29-g65plus: true +0.1166, estimated +0.1261, 95% CI [+0.0563, +0.1958]

campaign 3: roc_hist, eps 1 (implemented 1.00000), 200,000 reports stored
  ROC at 10 score bins, labels under label DP; AUC estimate 0.8587
    95% CI 0.8576 .. 0.8599 (noise + sampling) against the model's AUC 0.8627: outside (the \
binning alone costs -0.0036)
    95% CI 0.8576 .. 0.8599 (noise only) against the devices' binned AUC 0.8591: inside
    at threshold 5: TPR 0.782 [0.780, 0.784] (true 0.783), FPR 0.222 (true 0.222)
"""
OLD_ESTIMATES = {
    1: {"mechanism": "tuple_mr", "metrics": [{"metric": "tpr", "disparities": [],
                                              "largest_disparity": None}]},
    3: {"mechanism": "roc_hist",  # that run's auc_unbinned_ci (it had no _total) as the interval
        "roc": {"auc": 0.858741889, "auc_ci": [0.857617929, 0.85986585],
                "auc_unbinned": 0.861957356,
                "auc_unbinned_ci_total": [0.860827383, 0.863087328]}},
}

n = 0
failed = 0


def ok(cond, what, diag=""):
    global n, failed
    n += 1
    print(f"{'ok' if cond else 'not ok'} {n} - {what}", flush=True)
    if not cond:
        failed += 1
        for line in str(diag).splitlines()[-40:]:
            print(f"# {line}", flush=True)
    return cond


def intervals(line):
    return [(m[0] or m[2], m[1] or m[3]) for m in INTERVAL.findall(line)]


def verdict_conflicts(text):
    """Check 1: intervals printed with both "inside" and "outside"."""
    seen = {}
    for line in text.splitlines():
        v = "inside" if ": inside" in line else "outside" if ": outside" in line else None
        for iv in intervals(line) if v else []:
            seen.setdefault(iv, set()).add(v)
    return [f"{iv} printed {sorted(vs)}" for iv, vs in seen.items() if len(vs) > 1]


def f4(x):
    return f"{x:.4f}"


def headline_problems(text, roc):
    """Check 2: the line against the model's AUC prints the unbinned AUC and its interval for the
    model's AUC, with "at least" when that is its claim."""
    lines = [line for line in text.splitlines() if "model's AUC" in line]
    want = (f4(roc["auc_unbinned_ci_total"][0]), f4(roc["auc_unbinned_ci_total"][1]))
    at_least = roc.get("auc_unbinned_ci_total_coverage") == "at_least"
    binned = (f4(roc["auc_ci"][0]), f4(roc["auc_ci"][1]))
    bad = []
    if not lines:
        bad.append("no line compares with the model's AUC")
    for line in lines:
        if want not in intervals(line) or f4(roc["auc_unbinned"]) not in line:
            bad.append(f"not the unbinned AUC {f4(roc['auc_unbinned'])} {want}: {line.strip()}")
        if binned in intervals(line):
            bad.append(f"the binned AUC's interval {binned} against the model's AUC")
        if at_least and "at least" not in line:
            bad.append(f"the interval claims at least the level, the line does not say so: "
                       f"{line.strip()}")
    return bad


def disparity_problems(text, est):
    """Check 3: every pair's simultaneous interval and the largest's own interval are printed;
    no "largest disparity" with a pair's pointwise interval."""
    bad = []
    for m in est["metrics"]:
        if "every pair at once" not in text:
            bad.append(f"{m['metric']}: no simultaneous intervals")
        for p in m["disparities"]:
            lo, hi = p["ci_simultaneous"]
            if f"[{lo:+.4f}, {hi:+.4f}]" not in text:
                bad.append(f"{m['metric']} pair {p['g']}-{p['h']}: simultaneous interval missing")
            pointwise = f"[{p['ci95'][0]:+.4f}, {p['ci95'][1]:+.4f}]"
            if any("largest" in line and pointwise in line for line in text.splitlines()):
                bad.append(f"{m['metric']}: a pair's pointwise interval shown as the largest's")
        big = m["largest_disparity"]
        if big is None:
            bad.append(f"{m['metric']}: no interval for the largest gap")
        elif not any("largest true gap" in line and
                     (f4(big["ci"][0]), f4(big["ci"][1])) in intervals(line)
                     and (big.get("ci_coverage") != "at_least" or "at least" in line)
                     for line in text.splitlines()):
            bad.append(f"{m['metric']}: the largest gap's interval {big['ci']} is not printed "
                       f"with its claim ({big.get('ci_coverage')})")
    if re.search(r"largest disparity .*95% CI", text):
        bad.append("'largest disparity ... 95% CI': a pair's pointwise interval as the largest's")
    return bad


def problems(text, estimates):
    """All three checks over a demo's output and its estimates {campaign id: estimate}."""
    out = verdict_conflicts(text)
    for e in estimates.values():
        out += headline_problems(text, e["roc"]) if e["mechanism"] == "roc_hist" else \
            disparity_problems(text, e)
    return out


def trust_problems(text, run):
    """Check 4: the trust section's rows are both runs' results."""
    bad = []
    res = {}
    for tag in ("ldp", "2agg"):
        try:
            with open(os.path.join(run, f"trust-{tag}", "results.json")) as f:
                res[tag] = json.load(f)["configs"][0]
        except OSError as e:
            return [f"trust-{tag}/results.json: {e}"]
        if res[tag]["reports"] != DEVICES:
            bad.append(f"{tag}: {res[tag]['reports']} reports, {DEVICES} devices")
    section = text[text.find("Two trust models"):]
    section = section[:section.find("\n\n")]
    if "Two trust models" not in text or "largest" in section:
        return bad + ["no trust section, or a 'largest' in it:\n" + section]
    rows = {line.split("|")[0].split()[1]: line for line in section.splitlines()
            if line.strip().startswith(("AUC ", "gap "))}
    ldp = {(i["kind"], i["name"]): i for i in res["ldp"]["items"]}
    for i in res["2agg"]["items"]:
        if i["kind"] not in ("auc_group", "auc_gap"):
            continue
        line = rows.get(i["name"])
        j = ldp.get((i["kind"], i["name"]))
        if line is None or j is None:
            bad.append(f"{i['kind']} {i['name']}: no row")
            continue
        # each model in its own column: a substring test on the whole row let a moved
        # estimate pass whenever the other columns happened to print the same four digits
        cols = line.split("|")
        for r, col in ((j["runs"][0], 1), (i["runs"][0], 2)):
            cell = cols[col].split() if len(cols) == 3 else []
            if cell[:1] != [f4(r[0])] or intervals(cols[col]) != [(f4(r[1]), f4(r[2]))]:
                bad.append(f"{i['name']}: {r} not printed in column {col}: {line}")
    return bad


def negative_controls():
    ok(verdict_conflicts(OLD_OUTPUT) != [], "negative control: the old demo prints an interval "
       "with both verdicts", verdict_conflicts(OLD_OUTPUT))
    ok(headline_problems(OLD_OUTPUT, OLD_ESTIMATES[3]["roc"]) != [],
       "negative control: the old demo's model-AUC line is the binned AUC's interval")
    roc = dict(OLD_ESTIMATES[3]["roc"], auc_unbinned_ci_total_coverage="at_least")
    line = (f"  AUC {f4(roc['auc_unbinned'])}, CI [{f4(roc['auc_unbinned_ci_total'][0])}, "
            f"{f4(roc['auc_unbinned_ci_total'][1])}] (95%) against the model's AUC 0.8627")
    ok(headline_problems(line, roc) != [] and
       headline_problems(line.replace("(95%)", "(at least 95%)"), roc) == [],
       "negative control: a headline without the claim its interval makes is found")
    ok(disparity_problems(OLD_OUTPUT, OLD_ESTIMATES[1]) != [],
       "negative control: the old demo's largest disparity is a pair's pointwise interval")
    # CI's run of 2026-12-07 printed a row whose true AUC and two-aggregator estimate were both
    # 0.7984; the two-aggregator estimate moved to 0.7985 must still be caught
    with tempfile.TemporaryDirectory(prefix="dpm-demo-trust.") as run:
        runs = {"ldp": [0.7683, 0.5830, 0.9536], "2agg": [0.7984, 0.7915, 0.8054]}
        for tag, r in runs.items():
            os.makedirs(os.path.join(run, f"trust-{tag}"))
            with open(os.path.join(run, f"trust-{tag}", "results.json"), "w") as f:
                json.dump({"configs": [{"reports": DEVICES, "items": [
                    {"kind": "auc_group", "name": "big", "runs": [r]}]}]}, f)
        row = ("Two trust models\n           AUC big  0.7984 |   0.7683    [0.5830, 0.9536]  "
               "-0.0301 |   {}    [0.7915, 0.8054]  +0.0001\n\n")
        ok(trust_problems(row.format("0.7984"), run) == [] and
           trust_problems(row.format("0.7985"), run) != [],
           "negative control: a moved two-aggregator estimate equal to the true AUC's digits is "
           "caught", trust_problems(row.format("0.7984"), run))


def main():
    negative_controls()
    for b in ("dpm-collector", "dpm-sim"):
        if not ok(os.access(os.path.join(OUT, b), os.X_OK), f"{b} is built"):
            print(f"1..{n}")
            return 1
    with tempfile.TemporaryDirectory(prefix="dpm-demo-test.") as tmp:
        env = dict(os.environ, OUT=OUT, BUILD_DIR=tmp, DEMO_DEVICES=str(DEVICES),
                   DEMO_TRUST_DEVICES=str(DEVICES))
        r = subprocess.run(["bash", ".make/demo.sh"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)
        text = r.stdout
        if not ok(r.returncode == 0, f"make demo's script runs ({DEVICES} devices)",
                  r.stdout + r.stderr):
            print(f"1..{n}")
            return 1
        run = glob.glob(os.path.join(tmp, "demo", "run-*"))[0]
        estimates = {}
        for path in glob.glob(os.path.join(run, "sim", "collector-estimate-*.json")):
            with open(path) as f:
                e = json.load(f)
            estimates[e["campaign"]] = e
        kinds = sorted(e["mechanism"] for e in estimates.values())
        ok(kinds == ["roc_hist", "tuple_ml", "tuple_mr"], f"estimates of every campaign {kinds}")
        ok(not verdict_conflicts(text), "no interval is printed with opposite verdicts",
           verdict_conflicts(text) or text)
        roc = [e for e in estimates.values() if e["mechanism"] == "roc_hist"][0]["roc"]
        ok(not headline_problems(text, roc), "the AUC headline is the unbinned AUC with its "
           "interval, against the model's AUC; the binned one only against the binned AUC",
           "\n".join(headline_problems(text, roc)) + "\n" + text)
        bad = [x for e in estimates.values() if e["mechanism"] != "roc_hist"
               for x in disparity_problems(text, e)]
        ok(not bad, "every gap with its simultaneous interval; the largest gap with the "
           "collector's interval for the largest true gap", "\n".join(bad) + "\n" + text)
        bad = trust_problems(text, run)
        ok(not bad, "the trust models' rows: both runs counted every device, each row both "
           "models' estimates and intervals as in their results.json", "\n".join(bad) + "\n" +
           text)
        # negative controls: the same output with one two-aggregator estimate, or one interval
        # bound, moved by 0.0001 is caught, and so is a "largest" in the section
        rows = [line for line in text[text.find("Two trust models"):].splitlines()
                if line.strip().startswith(("AUC ", "gap "))]
        parts = rows[0].split("|") if rows else []
        changed = []
        for old_num in parts[2].split()[:2] if len(parts) == 3 else []:
            num = old_num.strip("[],")  # in the two-aggregator columns only
            moved = parts[:2] + [parts[2].replace(num, f"{float(num) + 0.0001:.4f}", 1)]
            changed.append(text.replace(rows[0], "|".join(moved)))
        changed.append(text.replace("Two trust models", "Two trust models (largest gap)"))
        ok(len(changed) == 3 and all(trust_problems(c, run) for c in changed),
           "negative control: a moved estimate, a moved interval bound and a 'largest' in the "
           "trust section are each caught", rows[:1])
        print("# " + "\n# ".join(line for line in text.splitlines() if "AUC" in line
                                 or "largest" in line))
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
