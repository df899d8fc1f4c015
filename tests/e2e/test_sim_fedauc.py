#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim with the fedauc_rr / fedauc_lap modules end to end, printing TAP: an inprocess run of
every variant (every device through both SDK rounds); exact mode with the same truth; estimates
against simulation truth over 400 exact-mode runs at fixed seeds (interval coverage and bias,
alpha ~ 1e-6, each checker with a negative control); inprocess against exact (a two-sample test
of the means at 5 standard errors); the scenario errors of the new keys, network mode accepted; and
`dpm-sim repro fedauc --quick` (cells with the paper's numbers, honest counts)."""
import math
import os
import tempfile

from e2e_util import SIM, Tap, read_json, run_sim

SCENARIO = """\
[scenario]
name = e2e-fedauc
devices = 1000
runs = 40
seed = 21
[population]
examples = 8
[group a]
share = 0.5
scores = binormal(auc=0.80, base_rate=0.3)
[group b]
share = 0.5
scores = binormal(auc=0.70, base_rate=0.3)
[campaign rr]
mechanism = fedauc_rr
eps = 1
[campaign local]
mechanism = fedauc_lap
eps = 2
[campaign global]
mechanism = fedauc_lap
eps = 2
variant = global
[campaign orth]
mechanism = fedauc_lap
eps = 2
variant = orthogonal
p_share = 0.3
score_bits = 12
[campaign adaptive]
mechanism = fedauc_lap
eps = 2
variant = adaptive
"""

RUNS = 400
# Binomial(400, 0.95): Pr[X <= 351] = 1.0e-8, Pr[X = 400] = 1.2e-9 (as test_sim_auc.py).
COVER = (0.88, 0.9975)
Z = 5.0  # 5 standard errors: two-sided 5.7e-7 under a normal mean


def run(*args):
    return run_sim(*args, timeout=300)


def cover_ok(c):
    return c is not None and COVER[0] <= c <= COVER[1]


def errors(item, shift=0.0):
    return [r[0] - item["truth"] - shift for r in item["runs"] if r[0] is not None]


def unbiased(item, shift=0.0):
    err = errors(item, shift)
    if len(err) < 100:
        return False
    m = sum(err) / len(err)
    sd = math.sqrt(sum((e - m) ** 2 for e in err) / (len(err) - 1))
    return abs(m) <= Z * sd / math.sqrt(len(err))


def same_mean(a, b):
    """Two-sample test of the mean estimate (inprocess runs a against exact runs b)."""
    xa = [r[0] for r in a["runs"] if r[0] is not None]
    xb = [r[0] for r in b["runs"] if r[0] is not None]
    ma, mb = sum(xa) / len(xa), sum(xb) / len(xb)
    va = sum((x - ma) ** 2 for x in xa) / (len(xa) - 1)
    vb = sum((x - mb) ** 2 for x in xb) / (len(xb) - 1)
    return abs(ma - mb) <= Z * math.sqrt(va / len(xa) + vb / len(xb))


PAPER_TABLES = ("table1", "table2", "table5", "table7")


def mech_twins_ok(cells):
    """Every cell of Tables 1, 2, 5, 7 has its twin run with the paper's mechanism
    (<table>_paper_mech: same row, col and printed reference, a number of ours, never counted)."""
    paper = {(c["table"], c["row"], c["col"]): c for c in cells if c["table"] in PAPER_TABLES}
    twins = {(c["table"][:-len("_paper_mech")], c["row"], c["col"]): c for c in cells
             if c["table"].endswith("_paper_mech")}
    return (len(paper) >= 140 and set(paper) == set(twins) and
            all(twins[k]["ref_text"] == paper[k]["ref_text"] and twins[k]["ours"] is not None and
                twins[k]["counts_as"] == "info" and twins[k]["match"] is None and
                twins[k]["ref_source"].startswith("paper Table") for k in paper))


def explained_ok(md, stdout):
    """The explanation section lists the cells outside +-20% with the discrete / continuous
    variance ratio, and each such cell has an EXPLAIN line with a verdict."""
    part = md.split("## Why cells miss", 1)
    rows = [ln for ln in part[1].splitlines() if ln.startswith("| table")] if len(part) == 2 else []
    lines = [ln for ln in stdout.splitlines() if ln.startswith("EXPLAIN ")]
    return (len(rows) >= 2 and len(rows) == len(lines) + 1 and  # + the header
            "Var_discrete(t)/Var_continuous(t)" in part[1] and
            all("Var_d/Var_c(t)" in ln and "; z ours " in ln for ln in lines))


def by_campaign(res):
    return {c["campaign"]: c for c in res["configs"]}


def main():
    t = Tap()
    if not os.path.exists(SIM):
        t.ok(False, f"{SIM} exists")
        return t.done()
    names = {"rr", "local", "global", "orth", "adaptive"}
    with tempfile.TemporaryDirectory() as tmp:
        scn = os.path.join(tmp, "fedauc.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        out_in = os.path.join(tmp, "in")
        r = run("--scenario", scn, "--out", out_in, "--threads", "2", "--no-plot", "--quiet")
        t.ok(r.returncode == 0, "inprocess run of fedauc_rr and every fedauc_lap variant exits 0",
             r.stderr + r.stdout)
        res_in = read_json(out_in, "results.json") if r.returncode == 0 else {"configs": []}
        cin = by_campaign(res_in)
        est = [x[0] for c in cin.values() for it in c["items"] for x in it["runs"]]
        t.ok(set(cin) == names and est and
             all(e is not None and math.isfinite(e) for e in est),
             "inprocess: every configuration estimates every run", (sorted(cin), len(est)))
        t.ok(all([it["kind"] for it in c["items"]] == ["auc", "auc_examples"] and
                 0.70 < c["items"][1]["truth"] < 0.80 for c in cin.values()),
             "items: the model's AUC and the examples' AUC (0.70 .. 0.80)",
             [[it["truth"] for it in c["items"]] for c in cin.values()])
        out_ex = os.path.join(tmp, "ex")
        r = run("--scenario", scn, "--mode", "exact", "--runs", str(RUNS), "--out", out_ex,
                "--no-plot", "--quiet")
        t.ok(r.returncode == 0, "exact run exits 0", r.stderr)
        if r.returncode == 0:
            cex = by_campaign(read_json(out_ex, "results.json"))
            t.ok(all(cex[n]["items"][1]["truth"] == cin[n]["items"][1]["truth"] for n in names),
                 "inprocess and exact share the examples' truth")
            items = {n: cex[n]["items"][1] for n in names}
            t.ok(all(cover_ok(it["coverage"]) for it in items.values()),
                 "exact: every variant's 95% interval covers the examples' AUC (400 runs)",
                 {n: it["coverage"] for n, it in items.items()})
            t.ok(all(unbiased(it) for it in items.values()),
                 "exact: every variant unbiased for the examples' AUC (5 se)",
                 {n: it["mean_error"] for n, it in items.items()})
            t.ok(all(same_mean(cin[n]["items"][1], items[n]) for n in names),
                 "inprocess (40 runs) and exact (400 runs) agree in mean (5 se)")
            t.ok(items["adaptive"]["rmse"] < items["local"]["rmse"] and
                 items["orth"]["rmse"] < items["global"]["rmse"],
                 "adaptive beats local and orthogonal beats global (rmse)",
                 {n: it["rmse"] for n, it in items.items()})
            # negative controls: the checkers fail on a truth off by 0.02, coverages 0.80, 1.0,
            # and a two-sample test between different configurations
            t.ok(not unbiased(items["rr"], shift=0.02) and
                 not unbiased(items["adaptive"], shift=0.02) and not cover_ok(0.80) and
                 not cover_ok(1.0) and
                 not same_mean({"runs": [[x[0] + 0.02] for x in items["rr"]["runs"]]},
                               items["rr"]),
                 "negative control: bias, coverage and two-sample checkers reject wrong inputs")
        bad = [("fedauc_rr", "variant = local\n", "takes no key 'variant'"),
               ("fedauc_lap", "variant = adaptive\np_share = 0.5\n", "takes no p_share"),
               ("fedauc_lap", "variant = median\n", "variant must be local"),
               ("fedauc_lap", "p_share = 1\n", "p_share must be a decimal in (0, 1)"),
               ("fedauc_rr", "score_bits = 32\n", "score_bits must be an integer in 1..31"),
               ("fedauc_rr", "k = 8\n", "takes no key 'k'")]
        ok = True
        for mech, extra, want in bad:
            text = SCENARIO.split("[campaign rr]")[0] + \
                f"[campaign c]\nmechanism = {mech}\neps = 1\n{extra}"
            p = os.path.join(tmp, "bad.scn")
            with open(p, "w") as f:
                f.write(text)
            rr = run("check", "--scenario", p)
            if rr.returncode != 2 or want not in rr.stderr:
                ok = False
                print(f"# {mech} {extra!r}: rc {rr.returncode}: {rr.stderr.strip()}")
        t.ok(ok, "scenario errors: keys the module does not read, bad values (exit 2)")
        p = os.path.join(tmp, "net.scn")
        with open(p, "w") as f:
            f.write(SCENARIO.replace("seed = 21\n", "seed = 21\nmode = network\n"))
        rr = run("check", "--scenario", p)
        t.ok(rr.returncode == 0,
             "network mode is accepted (both rounds through the collector: "
             "test_sim_fedauc_network.py)", rr.stderr)
        rep = os.path.join(tmp, "repro")
        r = run("repro", "--out", rep, "--quick", "--no-plot", "--quiet", "fedauc")
        t.ok(r.returncode == 0 and "fedauc: matches the paper 0/0" in r.stdout,
             "repro fedauc --quick runs (its 20-run cells are info, not counted)",
             r.stdout[-500:] + r.stderr)
        try:
            cells = read_json(rep, "fedauc.json")["cells"]
        except (OSError, ValueError, KeyError):
            cells = []
        paper = [c for c in cells if c["table"] in ("table1", "table2", "table5", "table7")]
        tables = {c["table"] for c in paper}
        t.ok(tables == {"table1", "table2", "table5", "table7"} and len(paper) >= 140 and
             all(c["ref"] is not None and c["ours"] is not None and c["counts_as"] == "info"
                 for c in paper),
             "repro fedauc --quick: cells of Tables 1, 2, 5, 7 with the printed value and ours",
             (sorted(tables), len(paper)))
        t.ok(mech_twins_ok(cells) and
             "with the paper's continuous Laplace" in r.stdout and
             not mech_twins_ok([c for c in cells if c["table"] != "table1_paper_mech"]),
             "repro fedauc --quick: every paper cell also run with the paper's mechanism "
             "(not counted; a missing twin table is caught)")
        try:
            with open(os.path.join(rep, "fedauc.md")) as f:
                md = f.read()
        except OSError:
            md = ""
        t.ok(explained_ok(md, r.stdout) and
             not explained_ok(md.split("## Why cells miss")[0], r.stdout),
             "repro fedauc --quick: the cells outside +-20% explained (variance ratio, sampling "
             "spread, verdict; a report without the section is caught)")
        self_cells = [c for c in cells if c["table"] == "sanity"]
        t.ok(all(c["paper"] is None and c["counts_as"] == "self-check" for c in self_cells) and
             any("eps=inf" in c["col"] and c["match"] for c in self_cells),
             "repro fedauc: eps=inf exact to 1e-12, self-checks never counted as the paper's")
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
