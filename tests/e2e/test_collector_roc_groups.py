#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The collector end to end for per-group roc_hist (issue 17 items 4 and 5): SDK-made grouped
reports of one campaign per case (tool_roc_groups_reports, fixed seeds) are posted over TLS;
the collector's every group's AUC and every pairwise AUC gap, with their intervals, must equal
what host-sim/estimate/roc_groups.h (dpm-sim's estimator) computes from the same reports with
its own aggregation (to the JSON's 9 significant digits), and its pooled "roc" sums must equal the reports' sums.
Negative control: other reports' estimates differ. Bad input: a report whose group is outside
the campaign's, a grouped report for an ungrouped campaign and the reverse, damaged cells:
each rejected with its reason and nothing of it stored (report count, estimates and
dpm-collector verify unchanged); a resent report is a duplicate, summed once. Bad campaign
blocks are refused with a reason naming the line. The same runs on PostgreSQL from
test_collector_pg.py. TAP."""
import json
import os
import subprocess
import sys
import tempfile
import time

from e2e_util import Tap
from test_collector import COLLECTOR, OUT, Harness, load_pb2, no_nan, nulls_have_reasons, \
    intervals_without_claims, post_batch

TOOL = os.path.join(OUT, "tests", "e2e", "tool_roc_groups_reports")
CASES = ["g4b8", "g2b20", "g3b4", "g2b44", "u8"]
N = 1200  # reports per case
SEED = 23


def make(case, n=N, seed=SEED):
    p = subprocess.run([TOOL, case, str(n), str(seed)], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)


def close(a, b, rel=1e-8):
    """Equal to the JSON's 9 significant digits (an interval's end can pass 1: 1e-9 absolute
    is too tight there)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def observed(est):
    """The numbers tool_roc_groups_reports prints as "expected", from the collector's estimate."""
    rg = est["roc_groups"]
    groups = []
    for x in rg["by_group"]:
        ci = x["ci"] or [None, None]
        groups.append({"group": x["group"], "defined": x["defined"], "auc": x["auc"],
                       "sd": x["sd"], "ci_lo": ci[0], "ci_hi": ci[1]})
    gaps = []
    for x in rg["gaps"]:
        ci = x["ci"] or [None, None]
        gaps.append({"g": x["g"], "h": x["h"], "defined": x["defined"], "gap": x["gap"],
                     "sd": x["sd"], "ci_lo": ci[0], "ci_hi": ci[1],
                     "sim_lo": x["ci_simultaneous"][0], "sim_hi": x["ci_simultaneous"][1],
                     "distinguishable": x["distinguishable"]})
    big = rg["largest_gap"]
    largest = None if big is None else {"g": big["g"], "h": big["h"], "lo": big["ci"][0],
                                         "hi": big["ci"][1], "stability": big["stability"]}
    return {"groups": groups, "gaps": gaps, "largest": largest, "pos_sum": est["roc"]["pos_sum"],
            "neg_sum": est["roc"]["neg_sum"]}


def matches(obs, exp):
    bad = []
    for part in ("groups", "gaps"):
        if len(obs[part]) != len(exp[part]):
            return False, f"{part}: {len(obs[part])} != {len(exp[part])}"
        for o, e in zip(obs[part], exp[part]):
            for k in e:
                ok = o.get(k) == e[k] if isinstance(e[k], (bool, int)) and not \
                    isinstance(e[k], float) else close(o.get(k), e[k])
                if not ok:
                    bad.append((part, k, o.get(k), e[k]))
    for k in ("pos_sum", "neg_sum"):
        if obs[k] != exp[k]:
            bad.append((k, obs[k], exp[k]))
    o, e = obs["largest"], exp["largest"]
    if (o is None) != (e is None) or (e is not None and not all(
            o[k] == e[k] if k in "gh" else close(o[k], e[k]) for k in e)):
        bad.append(("largest", o, e))
    return not bad, bad[:4]


def estimate(h, cid):
    st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate")
    return st, no_nan(body.decode())


def campaigns_text(data):
    start = int(time.time()) - 60
    tail = f"start = {start}\ndevice_quota = 1000000\n\n"
    return "".join(d["campaign"] + tail for d in data.values())


def batch_of(pb, reps):
    b = pb.Batch()
    for r in reps:
        b.reports.add().CopyFrom(r)
    return b.SerializeToString()


def post_all(h, pb, hexes, size=400):
    acc = 0
    for i in range(0, len(hexes), size):
        reps = [pb.Report.FromString(bytes.fromhex(x)) for x in hexes[i:i + size]]
        st, r, _ = post_batch(h, pb, batch_of(pb, reps))
        acc += r.accepted if st == 200 and r else 0
    return acc


def cid_of(pb, d):
    return pb.Report.FromString(bytes.fromhex(d["reports"][0])).campaign_id


def no_reports(t, h, pb, data):
    for case, d in data.items():
        if d["expected"] is None:
            continue
        st, est = estimate(h, cid_of(pb, d))
        rg = est.get("roc_groups", {})
        undefined = all(not x["defined"] and x["auc"] is None and x["reason"] == "no reports"
                        for x in rg.get("by_group", [None]))
        t.ok(st == 200 and est["reports"] == 0 and undefined and rg.get("gaps")
             and all(not x["defined"] for x in rg["gaps"]) and not nulls_have_reasons(est),
             f"{case}: no reports: every group and gap undefined with reason 'no reports', no NaN",
             est)


def check_cases(t, h, pb, data):
    for case, d in data.items():
        if d["expected"] is None:
            continue
        cid = cid_of(pb, d)
        acc = post_all(h, pb, d["reports"])
        t.ok(acc == N, f"{case}: the {N} SDK-made grouped reports are accepted ({acc})")
        st, est = estimate(h, cid)
        ok, detail = matches(observed(est), d["expected"])
        g = est["roc_groups"]
        aucs = [x["auc"] for x in g["by_group"]]
        t.ok(st == 200 and est["reports"] == N and g["n"] == N and sum(g["reported"]) == N
             and ok, f"{case}: every group's AUC and every gap, with intervals (pointwise and "
             f"simultaneous) and the largest gap's, equal "
             f"host-sim/estimate/roc_groups.h's on the same reports (AUCs "
             f"{', '.join(f'{a:.4f}' for a in aucs if a is not None)}; {detail})", est)
        t.ok(not nulls_have_reasons(est), f"{case}: every null of the estimate has a reason",
             nulls_have_reasons(est))
        t.ok(not intervals_without_claims(est),
             f"{case}: every interval has its coverage claim beside it",
             intervals_without_claims(est))
        other = make(case, N, SEED + 1)["expected"]
        ok2, _ = matches(observed(est), other)
        t.ok(not ok2, f"{case}: negative control: other reports' estimates differ")
        # exactly once: the first batch again is all duplicates, the estimate unchanged
        reps = [pb.Report.FromString(bytes.fromhex(x)) for x in d["reports"][:50]]
        st2, r2, _ = post_batch(h, pb, batch_of(pb, reps))
        st3, est2 = estimate(h, cid)
        t.ok(st2 == 200 and r2.accepted == 0 and r2.duplicates == 50 and
             est2["roc_groups"] == est["roc_groups"],
             f"{case}: 50 reports sent again: duplicates, the estimate unchanged "
             f"({r2.accepted if r2 else '-'} accepted)")


def bad_input(t, h, pb, data):
    """Each bad report: a 400 naming its reason, nothing stored."""
    def first(case):
        return pb.Report.FromString(bytes.fromhex(data[case]["reports"][0]))

    ids = {c: cid_of(pb, data[c]) for c in data}
    before = {c: estimate(h, ids[c])[1] for c in data}
    stored = h.db_query("SELECT COUNT(*) FROM reports")[0][0]
    n = [0]

    def fresh(r):
        n[0] += 1
        r.report_id = bytes([0xED, n[0]]) + bytes(14)
        return r

    def group_out():
        r = fresh(first("g4b8"))
        r.roc_hist.group = 4  # groups 0 .. 3
        return r

    def grouped_to_ungrouped():
        r = fresh(first("g4b8"))
        r.campaign_id = ids["u8"]
        return r

    def ungrouped_to_grouped():
        r = fresh(first("u8"))
        r.campaign_id = ids["g4b8"]
        return r

    def big_cell():
        r = fresh(first("g3b4"))
        r.roc_hist.pos[0] = 100000
        return r

    def short_body():
        r = fresh(first("g3b4"))
        del r.roc_hist.pos[-1], r.roc_hist.neg[-1]
        return r

    cases = {"a report whose group is outside the campaign's 4": (group_out(), ""),
             "a grouped report for an ungrouped campaign": (grouped_to_ungrouped(), ""),
             "an ungrouped report for a grouped campaign": (ungrouped_to_grouped(), ""),
             "a histogram cell beyond the report bounds": (big_cell(), "out of range"),
             "a report with one bin too few": (short_body(), "")}
    for what, (rep, want) in cases.items():
        st, r, _ = post_batch(h, pb, batch_of(pb, [rep]))
        reasons = [x.reason for x in r.rejects] if r else []
        t.ok(st == 400 and r.accepted == 0 and len(reasons) == 1 and reasons[0]
             and want in reasons[0], f"{what}: 400, rejected ({reasons[0] if reasons else '-'})",
             r)
    t.ok(h.db_query("SELECT COUNT(*) FROM reports")[0][0] == stored,
         f"bad input: nothing stored ({stored} reports before and after)")
    after = {c: estimate(h, ids[c])[1] for c in data}
    t.ok(all(before[c].get("roc_groups") == after[c].get("roc_groups") and
             before[c]["roc"] == after[c]["roc"] for c in data),
         "bad input: every estimate unchanged")
    ok, out = h.consistent()
    t.ok(ok, f"dpm-collector verify: the stored per-group sums equal the stored reports' ({out})")


def bad_campaigns(t):
    """Campaign blocks the collector must refuse, each with a reason naming its line."""
    base = "[campaign]\nid = 1\nmechanism = roc_hist\neps = 1\n"
    bad = {"groups = 1": ("bins = 8\ngroups = 1\n", "groups must be 2"),
           "groups = 0": ("bins = 8\ngroups = 0\n", "groups must be 2"),
           "groups beyond the build": ("bins = 8\ngroups = 17\n", "groups must be 2"),
           "groups = two": ("bins = 8\ngroups = two\n", "line 6"),
           "groups x bins beyond the collector's sums": ("bins = 16\ngroups = 16\n",
                                                         "exceed the collector"),
           "2 groups x 45 bins": ("bins = 45\ngroups = 2\n", "exceed the collector"),
           "group_eps without groups": ("bins = 8\ngroup_eps = 0.5\n", "group_eps is for"),
           "group_eps = eps": ("bins = 8\ngroups = 2\ngroup_eps = 1\n", "group_eps"),
           "group_eps = -1": ("bins = 8\ngroups = 2\ngroup_eps = -1\n", "line 7"),
           "groups given twice": ("bins = 8\ngroups = 2\ngroups = 3\n", "line 7"),
           "metrics on roc_hist with groups": ("bins = 8\ngroups = 2\nmetrics = tpr\n",
                                               "no metrics"),
           "cells too large for exact products": ("bins = 8\ngroups = 2\n"
                                                  "max_examples = 100000\n", "cells must stay"),
           "group_eps on a tuple campaign": ("", "")}
    bad["group_eps on a tuple campaign"] = (None, "group_eps is for")
    with tempfile.TemporaryDirectory(prefix="dpm-rocg-campaigns.") as tmp:
        path = os.path.join(tmp, "bad.txt")
        for what, (body, want) in bad.items():
            text = base + body if body is not None else (
                "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 2\n"
                "metrics = tpr\ngroup_eps = 0.5\n")
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True,
                               text=True)
            why = p.stderr.strip().replace(path + ": ", "")
            t.ok(p.returncode != 0 and "line" in why and want in why,
                 f"campaigns file with {what}: refused ({why[:110]})", p.stderr)
        for good in ("bins = 8\ngroups = 2\n", "bins = 44\ngroups = 2\n",
                     "bins = 15\ngroups = 16\ngroup_eps = 0.25\n"):
            with open(path, "w") as f:
                f.write(base + good)
            p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True,
                               text=True)
            t.ok(p.returncode == 0, "negative control: a good block is accepted ("
                 + good.strip().replace("\n", ", ") + ")", p.stderr)


def run(t, pg=None):
    data = {c: make(c) for c in CASES}
    h = Harness(campaigns=campaigns_text(data), pg=pg)
    try:
        h.start()
        pb = load_pb2(h.tmp)
        no_reports(t, h, pb, data)
        check_cases(t, h, pb, data)
        bad_input(t, h, pb, data)
        t.ok(h.stop() == 0, "clean stop")
    finally:
        h.cleanup()


def main():
    t = Tap()
    bad_campaigns(t)
    run(t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
