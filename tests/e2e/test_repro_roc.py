#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dpm-sim repro roc --quick` (roc_hist against DPAUC, issue 17 item 7), printing TAP: roc.json
holds the table vs_dpauc with the eight ratio cells (roc_hist's auc_unbinned) and their eight
*_binned twins (its binned AUC), each finite and positive; the four with a target name it
honestly (issue 17, not a paper) and say PASS exactly when the ratio reaches it; the binned twins
carry no target; none counts as the paper's; with negative controls for the checker."""
import copy
import math
import os
import sys
import tempfile

from e2e_util import Tap, read_json, run_sim

COLS = [f"{s}_B{n}{b}" for n in (25, 100) for s in ("A", "B", "Atight", "Btight")
        for b in ("", "_binned")]
TARGET = {"A": 5.0, "B": 10.0}


def problems(js):
    """What is wrong with roc.json's vs_dpauc cells ([] when nothing)."""
    cells = {c["col"]: c for c in js.get("cells", []) if c["table"] == "vs_dpauc"}
    why = [f"missing {c}" for c in COLS if c not in cells]
    for col, c in cells.items():
        ours = c["ours"]
        if c["row"] != "ours" or not isinstance(ours, (int, float)) or not 0 < ours < 1e4:
            why.append(f"{col}: ours {ours!r}")
            continue
        if c["counts_as"] == "paper" or c["paper"] is not None:
            why.append(f"{col}: a target counted as the paper's")
        target = None if col.endswith("_binned") else TARGET.get(col.split("_")[0])
        if target is None:
            if c["ref"] is not None:
                why.append(f"{col}: a target for the tight calibration or the binned AUC")
            continue
        if c["ref"] != target or "issue 17" not in c["ref_source"]:
            why.append(f"{col}: ref {c['ref']} from {c['ref_source']!r}")
        verdict = "PASS" if ours >= target else "MISS"
        if verdict not in c["check"] or ("MISS" if verdict == "PASS" else "PASS") in c["check"]:
            why.append(f"{col}: {ours:.3g} vs {target:g} says {c['check']!r}")
    return why


def main():
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "repro")
        r = run_sim("repro", "--out", rep, "--quick", "--no-plot", "--quiet", "roc")
        t.ok(r.returncode == 0 and os.path.exists(os.path.join(rep, "roc.md")),
             "repro roc --quick runs and writes roc.md", r.stdout + r.stderr)
        try:
            js = read_json(rep, "roc.json")
        except (OSError, ValueError):
            js = {"cells": []}
        why = problems(js)
        t.ok(not why, "vs_dpauc: sixteen ratios, targets from issue 17, PASS/MISS truthful", why)
        rm = {(c["row"], c["col"]): c["ours"] for c in js["cells"] if c["table"] == "rmse"}
        roc = [rm.get((row, f"N=B={n} vs exact"), math.nan) for n in (25, 100)
               for row in ("roc_hist (auc_unbinned)", "roc_hist binned (ties 1/2)")]
        t.ok(all(0 < x < 0.01 for x in roc), "roc_hist's RMSEs at 15 parties are below 0.01", roc)
        bad = copy.deepcopy(js)
        for c in bad["cells"]:
            if c["table"] == "vs_dpauc" and c["col"] == "A_B100":
                c["check"] = ">= 5x: PASS" if "MISS" in c["check"] else ">= 5x: MISS"
        t.ok(problems(bad) != [], "negative control: a flipped PASS/MISS is caught")
        bad = copy.deepcopy(js)
        bad["cells"] = [c for c in bad["cells"] if c["col"] != "Btight_B25"]
        t.ok(problems(bad) != [], "negative control: a missing cell is caught")
        bad = copy.deepcopy(js)
        for c in bad["cells"]:
            if c["table"] == "vs_dpauc" and c["col"] == "B_B25_binned":
                c["ref"] = 10.0
        t.ok(problems(bad) != [], "negative control: a target on a binned twin is caught")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
