#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The collector end to end for dpauc, ustat_bins and ustat_tree (issue 17 item 5): SDK-made
reports of one campaign per case (tool_auc_reports, fixed seeds) are posted over TLS; the
collector's estimate must equal what host-sim/estimate computes from the same reports with its
own aggregation (relative 1e-9), and must differ from the estimate of other reports (negative
control: the comparison can fail). Bad input: a report for another mechanism's campaign, values
outside the campaign's domain or bounds, damaged bytes: each rejected with its reason and
nothing of it stored (report count, estimate and dpm-collector verify unchanged). The same runs
on PostgreSQL from test_collector_pg.py. TAP."""
import json
import os
import subprocess
import sys
import tempfile
import time

from e2e_util import Tap
from test_collector import OUT, Harness, load_pb2, no_nan, nulls_have_reasons, \
    intervals_without_claims, post_batch

TOOL = os.path.join(OUT, "tests", "e2e", "tool_auc_reports")
CASES = ["dpauc", "dpauc_tight", "bins_auc", "bins_private", "bins_kendall", "tree", "tree_grr"]
N = 1500  # reports per case
SEED = 17


def make(case, n=N, seed=SEED):
    p = subprocess.run([TOOL, case, str(n), str(seed)], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)


def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def observed(est):
    """The numbers tool_auc_reports prints as "expected", from the collector's estimate."""
    if "dpauc" in est:
        v = est["dpauc"]["variants"]
        return {"auc_A": v["A"]["auc"], "auc_B": v["B"]["auc"]}
    if "ustat_bins" in est:
        u = est["ustat_bins"]
        ci = u["ci"] or [None, None]
        return {"value": u.get("auc", u.get("tau")), "sd": u["sd"], "ci_lo": ci[0],
                "ci_hi": ci[1]}
    u = est["ustat_tree"]
    return {"value": u["auc"], "sd": u["sd"], "mse_bound": u["mse_bound"]}


def matches(obs, exp):
    keys = [k for k in exp if k != "mechanism"]
    return all(close(obs.get(k), exp[k]) for k in keys), {k: (obs.get(k), exp[k]) for k in keys}


def estimate(h, cid):
    st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate")
    return st, no_nan(body.decode())


def campaigns_text(data):
    start = int(time.time()) - 60
    return "".join(d["campaign"] + f"start = {start}\ndevice_quota = 1000000\n\n"
                   for d in data.values())


def post_all(h, pb, hexes, size=500):
    acc = 0
    for i in range(0, len(hexes), size):
        reps = [pb.Report.FromString(bytes.fromhex(x)) for x in hexes[i:i + size]]
        b = pb.Batch()
        for r in reps:
            b.reports.add().CopyFrom(r)
        st, r, _ = post_batch(h, pb, b.SerializeToString())
        acc += r.accepted if st == 200 and r else 0
    return acc


def check_cases(t, h, pb, data):
    for case, d in data.items():
        cid = pb.Report.FromString(bytes.fromhex(d["reports"][0])).campaign_id
        acc = post_all(h, pb, d["reports"])
        t.ok(acc == N, f"{case}: the {N} SDK-made reports are accepted ({acc})")
        st, est = estimate(h, cid)
        ok, detail = matches(observed(est), d["expected"])
        t.ok(st == 200 and est["reports"] == N and ok,
             f"{case}: the collector's estimate equals host-sim/estimate's on the same reports "
             f"({detail})", est)
        t.ok(not nulls_have_reasons(est), f"{case}: every null of the estimate has a reason",
             nulls_have_reasons(est))
        t.ok(not intervals_without_claims(est),
             f"{case}: every interval has its coverage claim beside it",
             intervals_without_claims(est))
        other = make(case, N, SEED + 1)["expected"]
        ok2, detail2 = matches(observed(est), other)
        t.ok(not ok2, f"{case}: negative control: other reports' estimate differs ({detail2})")


def bad_input(t, h, pb, data):
    """Each bad report: a 400 naming its reason, nothing stored."""
    def first(case):
        return pb.Report.FromString(bytes.fromhex(data[case]["reports"][0]))

    ids = {c: first(c).campaign_id for c in data}
    before = {c: estimate(h, ids[c])[1] for c in data}
    stored = h.db_query("SELECT COUNT(*) FROM reports")[0][0]
    n = [0]

    def fresh(r):
        n[0] += 1
        r.report_id = bytes([0xEE, n[0]]) + bytes(14)
        return r

    def dpauc_big():
        r = fresh(first("dpauc"))
        r.dpauc.tp[0] = 1000000
        return r

    def dpauc_short():
        r = fresh(first("dpauc"))
        del r.dpauc.tp[-1], r.dpauc.fp[-1], r.dpauc.tn[-1], r.dpauc.fn[-1]
        return r

    def bins_value():
        r = fresh(first("bins_auc"))
        r.ustat_bins.value = 8  # k = 8: values 0 .. 7
        return r

    def bins_label():
        r = fresh(first("bins_auc"))
        r.ustat_bins.label = 2
        return r

    def tree_level():
        r = fresh(first("tree"))
        r.ustat_tree.level = 7  # depth 6
        return r

    def wrong_body():
        r = fresh(first("bins_auc"))
        r.campaign_id = ids["tree"]  # a ustat_bins body for a ustat_tree campaign
        return r

    cases = {"a dpauc count beyond the report bounds": (dpauc_big(), "count out of range"),
             "a dpauc report with one threshold too few": (dpauc_short(), ""),
             "a ustat_bins value outside k": (bins_value(), ""),
             "a ustat_bins label 2": (bins_label(), ""),
             "a ustat_tree level beyond depth": (tree_level(), ""),
             "a ustat_bins report for a ustat_tree campaign": (wrong_body(), "")}
    for what, (rep, want) in cases.items():
        b = pb.Batch()
        b.reports.add().CopyFrom(rep)
        st, r, _ = post_batch(h, pb, b.SerializeToString())
        reasons = [x.reason for x in r.rejects] if r else []
        t.ok(st == 400 and r.accepted == 0 and len(reasons) == 1 and reasons[0]
             and want in reasons[0], f"{what}: 400, rejected ({reasons[0] if reasons else '-'})",
             r)
    good = fresh(first("tree_grr")).SerializeToString()
    for what, raw in {"a truncated report": good[:-3],
                      "a report with a damaged length byte": good[:20] + b"\xff" + good[21:]
                      }.items():
        body = b"\x0a" + bytes([len(raw)]) + raw
        st, r, _ = post_batch(h, pb, body)
        reasons = [x.reason for x in r.rejects] if r else []
        t.ok(st == 400 and (r is None or r.accepted == 0),
             f"{what}: 400, nothing accepted ({reasons[0] if reasons else 'malformed batch'})", r)
    t.ok(h.db_query("SELECT COUNT(*) FROM reports")[0][0] == stored,
         f"bad input: nothing stored ({stored} reports before and after)")
    after = {c: estimate(h, ids[c])[1] for c in data}
    same = all(observed(before[c]) == observed(after[c]) for c in data)
    t.ok(same, "bad input: every estimate unchanged")
    ok, out = h.consistent()
    t.ok(ok, f"dpm-collector verify: the stored vector sums equal the stored reports' ({out})")


def quota(t, h, pb, data):
    """One report per device credential, campaign and period (the default quota 1)."""
    rep = pb.Report.FromString(bytes.fromhex(data["bins_auc"]["reports"][0]))
    st, r, _ = post_batch(h, pb, _batch(pb, rep), token="device-a")
    rep.report_id = b"\x77" * 16
    st2, r2, _ = post_batch(h, pb, _batch(pb, rep), token="device-a")
    t.ok(st == 200 and r.accepted == 1 and st2 != 200 and r2 and r2.accepted == 0,
         f"quota 1: a device's second ustat_bins report in a period is refused ({st2}, "
         f"{[x.reason for x in r2.rejects] if r2 else '-'})")


def _batch(pb, *reps):
    b = pb.Batch()
    for r in reps:
        b.reports.add().CopyFrom(r)
    return b.SerializeToString()


def no_reports(t, h, pb, data):
    """Estimates of campaigns without reports: every value null, with a reason."""
    for case, d in data.items():
        cid = pb.Report.FromString(bytes.fromhex(d["reports"][0])).campaign_id
        st, est = estimate(h, cid)
        t.ok(st == 200 and est["reports"] == 0 and not nulls_have_reasons(est)
             and all(v is None for v in observed(est).values()),
             f"{case}: no reports: an undefined estimate with its reason, no NaN", est)


def bad_campaigns(t):
    """Campaign blocks the collector must refuse, each with a reason naming its line."""
    from test_collector import COLLECTOR
    base = "[campaign]\nid = 1\neps = 1\n"
    bad = {"kernel = auc_pairs": ("mechanism = ustat_bins\nk = 8\nkernel = auc_pairs\n",
                                  "line 6"),
           "k = 1": ("mechanism = ustat_bins\nk = 1\n", "line 5"),
           "k beyond the build": ("mechanism = ustat_bins\nk = 1000000\n", "line 5"),
           "ustat_bins without k": ("mechanism = ustat_bins\n", "needs k"),
           "unsorted thresholds": ("mechanism = dpauc\nthresholds = 0.5, 0.2\n", "line 5"),
           "duplicate thresholds": ("mechanism = dpauc\nthresholds = 0.2, 0.2\n", "line 5"),
           "a threshold above 1": ("mechanism = dpauc\nthresholds = 0.2, 1.5\n", "line 5"),
           "thresholds = 1": ("mechanism = dpauc\nthresholds = 1\n", "line 5"),
           "calibration = loose": ("mechanism = dpauc\nthresholds = 5\ncalibration = loose\n",
                                   "line 6"),
           "dpauc without thresholds": ("mechanism = dpauc\n", "needs thresholds"),
           "k on a dpauc campaign": ("mechanism = dpauc\nthresholds = 5\nk = 4\n",
                                     "are for ustat_bins"),
           "groups on a dpauc campaign": ("mechanism = dpauc\nthresholds = 5\ngroups = 2\n",
                                          "no groups or metrics"),
           "depth beyond the collector's": ("mechanism = ustat_tree\ndepth = 11\n", "line 5"),
           "grr_levels above depth": ("mechanism = ustat_tree\ndepth = 3\ngrr_levels = 4\n",
                                      "line 1"),
           "thresholds given twice": ("mechanism = dpauc\nthresholds = 5\nthresholds = 6\n",
                                      "line 6")}
    with tempfile.TemporaryDirectory(prefix="dpm-auc-campaigns.") as tmp:
        path = os.path.join(tmp, "bad.txt")
        for what, (body, want) in bad.items():
            with open(path, "w") as f:
                f.write(base + body)
            p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True,
                               text=True)
            why = p.stderr.strip().replace(path + ": ", "")
            t.ok(p.returncode != 0 and "line" in why and want in why,
                 f"campaigns file with {what}: refused ({why})", p.stderr)
        with open(path, "w") as f:
            f.write(base + "mechanism = ustat_bins\nk = 8\nkernel = kendall\n")
        p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True, text=True)
        t.ok(p.returncode == 0, "negative control: the same file with a good block is accepted",
             p.stderr)


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
    one = make("bins_auc", 2)
    text = one["campaign"] + f"start = {int(time.time()) - 60}\n"
    h = Harness(campaigns=text, pg=pg)
    try:
        h.start()
        quota(t, h, load_pb2(h.tmp), {"bins_auc": one})
        t.ok(h.stop() == 0, "clean stop (quota)")
    finally:
        h.cleanup()


def main():
    t = Tap()
    bad_campaigns(t)
    run(t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
