#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-sim end to end, printing TAP: a small scenario in inprocess and exact mode (JSON and CSV
outputs well-formed and consistent, plots written), replay of single devices equal to the bytes
the run produced (--dump-reports), exit codes for bad scenarios (with the line number) and bad
usage, a trailing comma and a misspelled section called what they are, the progress line (on
a terminal only: on a pseudo-terminal the test creates; never with --quiet or into a pipe), the
console line leading with the largest gap, the collector campaigns file accepted by
dpm-collector, the planners (margin, verified K, trust model, JSON, metrics per report, roc_hist
with groups, bad values), the bench JSON lines, and `dpm-sim repro` writing
README.md and cells that say where their reference comes from."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

from e2e_util import OUT, PTY_NEEDED, SIM, Tap, read_csv, read_json, run_on_pty
from e2e_util import run_sim as run

COLLECTOR = os.path.join(OUT, "dpm-collector")

SCENARIO = """\
[scenario]
name = e2e
devices = 3000, 6000
runs = 4
seed = 9
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4, examples=10)
[group b]
share = 0.3
tpr = constant(0.7)
fpr = beta(1, 9)
[group c]
share = 0.2
tpr = beta(4, 2)
fpr = constant(0.1)
[campaign mr]
id = 11
mechanism = tuple_mr
eps = 1, 2
metrics = tpr
[campaign ml]
id = 12
mechanism = tuple_ml
eps = 1.5
metrics = tpr, fpr
groups = a, c
"""


def check_outputs(t, d, mode, expected_configs):
    res = read_json(d, "results.json")
    t.ok(res["mode"] == mode and len(res["configs"]) == expected_configs,
         f"{mode}: results.json has {expected_configs} configurations",
         (res.get("mode"), len(res.get("configs", []))))
    rows = 0
    items = 0
    for c in res["configs"]:
        for it in c["items"]:
            items += 1
            rows += len(it["runs"])
    with open(os.path.join(d, "runs.csv"), newline="") as f:
        runs = list(csv.DictReader(f))
    with open(os.path.join(d, "summary.csv"), newline="") as f:
        summary = list(csv.DictReader(f))
    t.ok(len(runs) == rows and len(summary) == items,
         f"{mode}: runs.csv and summary.csv have one row per run item and per item",
         (len(runs), rows, len(summary), items))
    bad = [r for r in runs if not r["estimate"] or abs(float(r["error"]) - (float(r["estimate"])
           - float(r["truth"]))) > 1e-9 or r["covered"] not in ("0", "1")]
    t.ok(not bad, f"{mode}: every run row has estimate = truth + error and a coverage flag",
         bad[:3])
    cov = [float(s["coverage"]) for s in summary]
    gaps = [s for s in summary if s["kind"] == "gap"]
    t.ok(all(0.0 <= c <= 1.0 for c in cov) and gaps and all(float(s["rmse"]) < 0.5 for s in gaps),
         f"{mode}: summary coverage in [0, 1], disparity RMSE sane")
    return res


def main():
    t = Tap()
    # make test builds dpm-sim and dpm-collector first: a missing one is a failure, not a skip
    if not t.ok(os.access(SIM, os.X_OK), f"{SIM} is built"):
        return t.done()
    with tempfile.TemporaryDirectory(prefix="dpm-sim-e2e.") as tmp:
        scn = os.path.join(tmp, "e2e.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        # inprocess with outputs, plots and every report dumped
        out_in = os.path.join(tmp, "in")
        dump = os.path.join(tmp, "dump.txt")
        r = run("--scenario", scn, "--out", out_in, "--dump-reports", dump, "--threads", "2")
        t.ok(r.returncode == 0, "inprocess run exits 0", r.stderr + r.stdout)
        if r.returncode == 0:
            check_outputs(t, out_in, "inprocess", 6)
            pngs = [p for p in ("sim_error_vs_eps.png", "sim_error_vs_devices.png",
                                "sim_disparities.png", "sim_groups.png")
                    if os.path.getsize(os.path.join(out_in, p)) > 1000] \
                if os.path.exists(os.path.join(out_in, "sim_groups.png")) else []
            # run from the repository root with python3-matplotlib installed (make deps):
            # "plots: skipped" would be a failure here, not a pass
            t.ok(len(pngs) == 4, "plots written (4 PNG files over 1000 bytes)", r.stdout)
        # replay: single devices equal their bytes in the run (device count 3000: --devices)
        lines = {}
        with open(dump) as f:
            for line in f:
                camp, eps, runi, dev, hexs = line.split()
                lines[(camp, eps, runi, dev)] = hexs
        n3000 = sum(1 for k in lines if k[0] == "mr" and k[1] == "1" and k[2] == "0")
        t.ok(len(lines) > 0 and n3000 > 2000, "dump has the reports of the run", len(lines))
        r1 = run("--scenario", scn, "--devices", "3000", "--runs", "2", "--dump-reports", dump,
                 "--quiet", "--threads", "2")
        with open(dump) as f:
            lines = {tuple(l.split()[:4]): l.split()[4] for l in f}
        same = True
        for camp, eps, runi, dev in (("mr", "1", "1", "0"), ("mr", "2", "0", "2999"),
                                     ("ml", "1.5", "1", "17"), ("ml", "1.5", "0", "2500")):
            rr = run("replay", "--scenario", scn, "--devices", "3000", "--campaign", camp,
                     "--eps", eps, "--run", runi, "--device", dev)
            got = [l.split()[2] for l in rr.stdout.splitlines() if l.startswith("bytes ")]
            want = lines.get((camp, eps, runi, dev))
            if rr.returncode != 0 or (want is None) != (not got) or (got and got[0] != want):
                same = False
                print(f"# {camp} {eps} run {runi} device {dev}: {got} != {want}; {rr.stderr}")
        t.ok(r1.returncode == 0 and same, "replay of single devices equals the run's reports")
        # exact mode
        out_ex = os.path.join(tmp, "ex")
        r = run("--scenario", scn, "--mode", "exact", "--runs", "3", "--out", out_ex, "--no-plot")
        t.ok(r.returncode == 0, "exact run exits 0", r.stderr)
        if r.returncode == 0:
            ex = check_outputs(t, out_ex, "exact", 6)
            t.ok(ex["runs"] == 3, "--runs overrides the scenario")
        # errors: scenario with the line number, usage
        bad = os.path.join(tmp, "bad.scn")
        with open(bad, "w") as f:
            f.write(SCENARIO.replace("eps = 1.5", "eps = -1"))
        r = run("--scenario", bad)
        line = SCENARIO.splitlines().index("eps = 1.5") + 1
        t.ok(r.returncode == 2 and f"bad.scn:{line}:" in r.stderr,
             "a bad scenario exits 2 naming file and line", r.stderr)
        for args, what in ((["--scenario", scn, "--runs", "0"], "--runs 0"),
                           (["--scenario", scn, "--frobnicate"], "an unknown option"),
                           (["--runs", "3"], "no --scenario"),
                           (["--scenario", os.path.join(tmp, "missing.scn")], "a missing file"),
                           (["--scenario", scn, "--mode", "network"], "network without collector"),
                           (["replay", "--scenario", scn], "replay without --device")):
            r = run(*args)
            t.ok(r.returncode == 2 and r.stderr, f"{what} exits 2 with a message", r.stderr)
        r = run("check", "--scenario", scn)
        t.ok(r.returncode == 0 and "6 configurations" in r.stdout, "check parses", r.stdout)
        for text, want in ((SCENARIO.replace("eps = 1, 2", "eps = 1, 2,"),
                            "eps: an empty value after the last comma (a trailing comma?)"),
                           (SCENARIO.replace("[group b]", "[grup b]"),
                            "unknown section [grup] (did you mean 'group'?)")):
            with open(bad, "w") as f:
                f.write(text)
            r = run("check", "--scenario", bad)
            t.ok(r.returncode == 2 and want in r.stderr, f"the parse error says: {want}", r.stderr)
        # console: the largest gap first, a real time column, no progress line into a pipe
        r = run("--scenario", scn, "--mode", "exact", "--runs", "3", "--devices", "3000")
        mr = [l for l in r.stdout.splitlines() if l.strip().startswith("mr ")]
        t.ok(r.returncode == 0 and mr and all("largest tpr gap a-c:" in l for l in mr)
             and all(" ms " in l or " s  " in l for l in mr) and "ETA" not in r.stderr,
             "the console line leads with the largest true gap (a-c: TPR 0.768 against 0.667) "
             "and shows the time",
             r.stdout + r.stderr)
        r = run("--scenario", scn, "--mode", "exact", "--runs", "3", "--quiet")
        t.ok(r.returncode == 0 and r.stdout == "" and r.stderr == "", "--quiet prints nothing",
             r.stdout + r.stderr)
        # the progress line on a terminal: dpm-sim's stderr on a pseudo-terminal the test makes
        # (run_on_pty; it needs no terminal of its own, and fails saying so when the machine
        # has no pseudo-terminal device). It redraws every 0.2 s, so each configuration must
        # outlast that on a fast, quiet machine: 200,000 devices took 0.13 s there and never
        # drew (2 M: about 1 s)
        rc, out, tty, problem = run_on_pty([SIM, "--scenario", scn, "--devices", "2000000",
                                            "--runs", "2", "--threads", "2"])
        t.ok(problem is None and rc == 0 and "devices/s" in tty and "ETA" in tty
             and "ETA" not in out,
             "on a terminal a progress line (on stderr) shows the rate and the ETA",
             problem or f"exit {rc}; the terminal's text (stderr):\n{tty[-1500:]}\nstdout:\n"
                        f"{out[-500:]}")

        def no_pty():
            raise OSError(2, "No such file or directory", "/dev/ptmx")

        rc, out, tty, problem = run_on_pty([SIM, "--version"], openpty=no_pty)
        t.ok(rc is None and problem is not None and problem.startswith(PTY_NEEDED),
             "negative control: without a pseudo-terminal device the progress check says it "
             "needs one (a failure, never a pass)", problem)
        # collector campaigns file (one eps per campaign)
        one = os.path.join(tmp, "one.scn")
        with open(one, "w") as f:
            f.write(SCENARIO.replace("eps = 1, 2", "eps = 1"))
        r = run("campaigns", "--scenario", one)
        camp = os.path.join(tmp, "campaigns.txt")
        with open(camp, "w") as f:
            f.write(r.stdout)
        if t.ok(os.access(COLLECTOR, os.X_OK), f"{COLLECTOR} is built"):
            c = subprocess.run([COLLECTOR, "--check-campaigns", camp], capture_output=True,
                               text=True)
            t.ok(r.returncode == 0 and c.returncode == 0,
                 "dpm-sim campaigns is accepted by dpm-collector --check-campaigns",
                 r.stderr + c.stdout + c.stderr)
        r = run("campaigns", "--scenario", scn)
        t.ok(r.returncode == 2, "campaigns refuses an eps sweep (one eps per collector campaign)")
        # planner: answers with a margin, a check that finds the K shown to reach the target,
        # the trust model it plans for, JSON
        pj = os.path.join(tmp, "plan.json")
        r = run("plan", "--mechanism", "tuple_ml", "--error", "0.02", "--confidence", "0.9",
                "--eps", "2", "--json", pj)
        t.ok(r.returncode == 0 and "-> PASS" in r.stdout and "minimum devices" in r.stdout
             and "error planned for" in r.stdout and "trust model: local DP" in r.stdout
             and "Clopper-Pearson" in r.stdout,
             "plan answers (Chebyshev), says what error and which trust model it plans for, and "
             "its check verifies the answer", r.stdout + r.stderr)
        try:
            pl = read_json(tmp, "plan.json")
        except (OSError, ValueError) as e:
            pl = {"error": repr(e)}
        t.ok(pl.get("trust_model") == "local_dp" and pl.get("check", {}).get("verified") is True
             and pl["check"]["steps"][0]["coverage_ci"][0] >= 0.9
             and pl["answer"]["devices_verified"] >= pl["answer"]["devices"],
             "plan --json: trust_model local_dp, the check's coverage interval above 0.9",
             json.dumps(pl)[:1500])
        r = run("plan", "--mechanism", "tuple_ml", "--error", "0.02", "--confidence", "0.9",
                "--eps", "2", "--bound", "normal")
        m = re.search(r"K = (\d+) \(([+-]\d+) devices on the bound's K\)", r.stdout)
        v = re.search(r"K = (\d+) devices verified", r.stdout)
        t.ok(r.returncode == 0 and m is not None and int(m.group(2)) > 0 and v is not None
             and int(v.group(1)) >= int(m.group(1)) and "-> PASS" in r.stdout,
             "normal bound: planned with a margin above the bound's K, then verified (no coin "
             "flip at the bound's K)", r.stdout + r.stderr)
        ks = []
        for metrics in ("tpr", "tpr,fpr"):
            r = run("plan", "--mechanism", "tuple_mr", "--error", "0.02", "--confidence", "0.9",
                    "--eps", "1", "--bound", "normal", "--metrics", metrics, "--no-check")
            m = re.search(r"minimum devices K = (\d+)", r.stdout)
            ks.append(int(m.group(1)) if r.returncode == 0 and m else None)
        t.ok(None not in ks and ks[1] > 3 * ks[0],
             f"--metrics tpr,fpr: the SDK splits eps over the report's metrics ({ks})",
             r.stdout + r.stderr)
        r = run("plan", "--mechanism", "roc_hist_groups", "--shares", "0.65,0.2,0.1,0.05",
                "--error", "0.02", "--gap-error", "none", "--confidence", "0.9", "--eps", "1",
                "--devices", "200000", "--no-check", "--json", "-")
        try:
            gj = json.loads(r.stdout[r.stdout.index('{"planner"'):])
            meets = [i["meets"] for i in gj["answer"]["items"]]
        except (ValueError, KeyError) as e:
            gj, meets = {}, repr(e)
        t.ok(r.returncode == 0 and gj.get("trust_model") == "local_dp"
             and meets == [True, False, False, False] and "misses its target" in r.stdout,
             "roc_hist with 4 groups at eps 1, 200,000 devices: only the 65% group's AUC meets "
             "0.02", r.stdout[-1500:] + r.stderr)
        r = run("plan", "--mechanism", "tuple_mr", "--error", "0.02", "--confidence", "0.9")
        t.ok(r.returncode == 2, "plan without --devices/--eps exits 2")
        r = run("plan", "--mechanism", "tuple_mr", "--error", "0.02", "--confidence", "0.9",
                "--eps", "1e-9")
        t.ok(r.returncode == 2 and "rounds down to 0" in r.stderr,
             "plan --eps 1e-9 is refused: a campaign rounds it down to 0", r.stderr)
        for bad, why in ((["--devices", "0x10"], "bad value for --devices"),
                         (["--eps", "1", "--metrics", "5"], "--metrics"),
                         (["--eps", "1", "--runs", "10"], "use more --runs")):
            r = run("plan", "--mechanism", "tuple_mr", "--error", "0.02", "--confidence", "0.9",
                    *bad)
            t.ok(r.returncode == 2 and why in r.stderr,
                 f"plan {' '.join(bad)} exits 2 saying {why!r}", r.stdout + r.stderr)
        # bench: JSON lines in the bench.json schema
        r = run("bench", "--quick", timeout=300)
        names = set()
        try:
            for l in r.stdout.splitlines():
                m = json.loads(l)
                assert set(m) == {"name", "value", "unit", "baseline", "ratio"}
                names.add(m["name"])
        except (ValueError, AssertionError) as e:
            names = {repr(e)}
        want = {"sim.inprocess.tuple.devices_per_s", "sim.inprocess.tuple.devices_per_s_1thread",
                "sim.exact.1e9.seconds", "sim.inprocess.grr.perturb_per_s"}
        t.ok(r.returncode == 0 and want <= names, "bench prints the sim metrics as JSON lines",
             r.stdout + r.stderr)
        # tuple intervals carry the collector's claims (estimate/disparity.h dpm_disp_mean_ci):
        # with nu2 = worst, M_R's variance at nu2 = 0 exceeds the truth where the devices'
        # values are near 1 (conservative); with the true nu2 it is exact (no flag)
        flagged = {}
        for nu2 in ("worst", "true"):
            sf = os.path.join(tmp, f"flags-{nu2}.scn")
            with open(sf, "w") as f:
                f.write("[scenario]\nname = flags\ndevices = 2000\nruns = 2\nseed = 5\n"
                        f"nu2 = {nu2}\n[group a]\nshare = 0.6\ntpr = constant(0.95)\n"
                        "fpr = constant(0.2)\n[group b]\nshare = 0.4\ntpr = beta(4, 2)\n"
                        "fpr = constant(0.1)\n[campaign mr]\nid = 31\nmechanism = tuple_mr\n"
                        "eps = 8\nmetrics = tpr\n")
            od = os.path.join(tmp, f"flags-{nu2}")
            r = run("--scenario", sf, "--out", od, "--no-plot", "--quiet")
            rows = read_csv(od, "runs.csv") if r.returncode == 0 else []
            flagged[nu2] = [x["ci_flags"] for x in rows if x["kind"] == "group"]
        t.ok(flagged["worst"] and all("conservative" in f for f in flagged["worst"]) and
             flagged["true"] and not any(flagged["true"]),
             "dpm-sim's tuple intervals carry their claim: conservative with nu2 = worst, none "
             "with the true nu2", flagged)
        # repro: the paper scenarios and README.md (quick)
        rep = os.path.join(tmp, "repro")
        r = run("repro", "--out", rep, "--quick", "--no-plot", timeout=600)
        readme = os.path.join(rep, "README.md")
        ok = r.returncode == 0 and os.path.exists(readme)
        text = open(readme).read() if ok else ""
        t.ok(ok and "matches the paper" in text and "self-checks" in text
             and "disparity.md" in text and "table1" in text and "table2_empirical" in text,
             "repro writes README.md, paper matches and self-checks apart", r.stdout + r.stderr)
        try:
            with open(os.path.join(rep, "disparity.json")) as f:
                cells = json.load(f)["cells"]
        except (OSError, ValueError, KeyError):
            cells = []
        keys = {"table", "row", "col", "paper", "ref", "ref_source", "ours", "rel_err",
                "counts_as", "match"}
        t.ok(cells and all(keys <= set(c) for c in cells) and all(c["ref_source"] for c in cells),
             "every cell has the schema's fields and says where its reference comes from")
        paper = [c for c in cells if c["counts_as"] == "paper"]
        t.ok(paper and all(c["ref_source"].startswith("paper ") and c["paper"] == c["ref"]
                           for c in paper if c["ref"] is not None),
             "cells that count as the paper's hold the paper's printed numbers")
        t.ok(all(c["paper"] is None for c in cells if not c["ref_source"].startswith("paper ")),
             "'paper' is null wherever the reference is not the paper's (spec, notebook, truth)",
             [c for c in cells if c["paper"] is not None
              and not c["ref_source"].startswith("paper ")][:3])
        t.ok({c["table"] for c in paper} == {"table1", "table2_alpha", "table2_empirical"}
             and sum(c["table"] == "table2_empirical" for c in paper) == 8,
             "only numbers the paper printed count as the paper's (Table 2: the 8 configurations "
             "it ran)", sorted({c["table"] for c in paper}))
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
