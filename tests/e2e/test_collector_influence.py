#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Bounded influence (issue 12 item 4): one malicious report moves an estimate by at most the
documented bound (host-sim/mech/base/bounds.h, host-sim/collector/README.md "Threat model"), TAP.

dpm-sim network mode posts a population (4000 devices, 3 groups) to a collector: a tuple_ml TPR
campaign and a roc_hist campaign (max_examples 10, as many as each device has). Then, with a
stolen credential:
  - the issue's reports: a tuple_ml value of INT32_MAX (it moved a TPR from 0.525 to 10.8) and
    a roc_hist cell of INT32_MAX (it moved an AUC from 0.863 to 0.0000121): now rejected with
    their reason, the estimates unchanged;
  - one past the bound: rejected too;
  - the worst report that is accepted (the extreme value; the histogram that drags the AUC down
    hardest within the checks): it moves the estimate by at most the bound the estimate JSON
    announced beforehand (max_shift_one_report, max_auc_shift_one_report); the tuple bound is
    reached exactly, the AUC bound (a total-variation argument) to within a factor of a few;
  - k forged devices with the extreme value move the group mean exactly as the collector README's formula
    m' = (S + k V) / (a gain (n + k delta_n)) says (tuple_ml and tuple_mr), and the number of
    forged devices it takes to move a TPR by 0.05 is printed for both mechanisms.
The value bound itself is recomputed here from the discrete Laplace tail (Python's math).

Issue 27 item 2 (run_auc: 4000 devices, 3 groups): the per-group roc_hist report into the group
announced most movable moves every group's AUC and every gap by at most its announced bound
(that group by >= 10 % of it); a dpauc report with TP and TN at their lowest, FN and FP at their
highest moves both server variants by at most theirs (and >= 10 %); ustat_bins's bound is exact:
the worst report, found here from the stored sums, moves the AUC by exactly the announced
amount."""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (ROOT, Harness, Tap, batch_of, load_pb2, post_batch)  # noqa: E402
from e2e_util import SIM  # noqa: E402

SCENARIO = """\
[scenario]
name = influence
devices = 4000
runs = 1
seed = 12
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4, examples=10)
[group b]
share = 0.3
tpr = constant(0.7)
fpr = constant(0.1)
[group c]
share = 0.2
tpr = constant(0.6)
fpr = constant(0.2)
[campaign mr]
id = 31
mechanism = tuple_mr
eps = 1
metrics = tpr
[campaign ml]
id = 32
mechanism = tuple_ml
eps = 1
metrics = tpr
[campaign roc]
id = 33
mechanism = roc_hist
eps = 1
bins = 6
groups = a
"""
MR, ML, ROC = 31, 32, 33
F = 16


def value_bound(eps_q16, metrics=1):
    """k(t, 2^-40 / m) + 2^F for the tuple_ml scale t = 2^(F+1) / (eps / m), from
    Pr[|Z| > k] = 2 p^(k+1) / (1 + p), p = exp(-1/t)."""
    t = (2 ** (F + 1)) * 65536 * metrics / eps_q16
    p = math.exp(-1.0 / t)
    delta = 2.0 ** -40 / metrics
    k = math.ceil(t * math.log(2.0 / (delta * (1.0 + p)))) - 1
    return (1 << F) + k


def auc_of(pos, neg):
    """The trapezoid AUC of non-negative binned counts (host-sim/estimate/roc.h), ties 1/2."""
    P, N = sum(pos), sum(neg)
    above = 0.0
    total = 0.0
    for b in reversed(range(len(pos))):
        total += neg[b] * (above + pos[b] / 2.0)
        above += pos[b]
    return total / (P * N)


def stored_raw(h, campaign):
    return h.db_query("SELECT raw FROM reports WHERE campaign_id = ? LIMIT 1", campaign)[0][0]


def run(t, pg=None):
    """Every check, on SQLite or (pg, test_collector_pg.py) a database of that cluster."""
    h = None
    try:
        with tempfile.TemporaryDirectory(prefix="dpm-influence.") as tmp:
            scn = os.path.join(tmp, "influence.scn")
            with open(scn, "w") as f:
                f.write(SCENARIO)
            camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                                  text=True, check=True).stdout
            camp = camp.replace("mechanism = roc_hist\n", "mechanism = roc_hist\nmax_examples = 10\n")
            h = Harness(campaigns=camp, pg=pg)
            pb = load_pb2(h.tmp)
            h.start()
            r = subprocess.run([SIM, "--scenario", scn, "--mode", "network", "--collector",
                                f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4", "--batch",
                                "100", "--out", os.path.join(tmp, "out"), "--no-plot",
                                "--token", h.creds.files["harness"]],
                               capture_output=True, text=True, timeout=300, cwd=ROOT)
            t.ok(r.returncode == 0, "dpm-sim network mode posted the population", r.stderr)

            def estimate(cid):
                return json.loads(h.request("GET", f"/v1/campaigns/{cid}/estimate")[2])

            # ---- tuple_ml ------------------------------------------------------------------
            est = estimate(ML)
            groups = est["metrics"][0]["groups"]
            g = min(range(len(groups)), key=lambda i: groups[i]["size"])  # the smallest group
            vmax = est["report_bounds"]["value_max"]
            t.ok(vmax == value_bound(est and round(est["eps_implemented"] * 65536)),
                 f"value_max {vmax} grid units (|v| <= {vmax / 2 ** F:.1f} on [-1, 1]) equals "
                 f"2^F + k from the discrete Laplace tail, recomputed here")
            tpl = pb.Report()
            tpl.ParseFromString(stored_raw(h, ML))

            def ml_report(value):
                rep = pb.Report()
                rep.CopyFrom(tpl)
                rep.report_id = os.urandom(16)
                rep.tuple.group = g
                del rep.tuple.values[:]
                rep.tuple.values.append(value)
                return rep
            for value, what in [(2 ** 31 - 1, "INT32_MAX (the issue's report)"),
                                (vmax + 1, "value_max + 1"), (-vmax - 1, "-value_max - 1")]:
                st, resp, _ = post_batch(h, pb, batch_of(pb, ml_report(value)))
                t.ok(st == 400 and [x.reason for x in resp.rejects] == ["value out of range"],
                     f"tuple_ml {what}: 400 'value out of range'", (st, resp))
            t.ok(estimate(ML)["metrics"] == est["metrics"], "... and the estimate is unchanged")
            before = groups[g]
            sign = 1 if before["mean"] < 0.5 else -1  # push away from the middle: the larger move
            st, resp, _ = post_batch(h, pb, batch_of(pb, ml_report(sign * vmax)))
            after_all = estimate(ML)["metrics"][0]
            after = after_all["groups"][g]
            # every disparity moves by at most its announced bound (issue 27 item 2), the ones
            # with group g by a good part of it; so do the other groups' means and the largest gap
            gaps = est["metrics"][0]["disparities"]
            moves = [(abs(a["diff"] - b["diff"]), b["max_shift_one_report"], b["g"], b["h"])
                     for b, a in zip(gaps, after_all["disparities"])]
            others = [(abs(a["mean"] - b["mean"]), b["max_shift_one_report"])
                      for k, (b, a) in enumerate(zip(groups, after_all["groups"])) if k != g]
            mx_b, mx_a = est["metrics"][0]["largest_disparity"], after_all["largest_disparity"]
            mx = (abs(mx_a["abs_diff"] - mx_b["abs_diff"]), mx_b["max_shift_one_report"])
            t.ok(mx[1] == max(b["max_shift_one_report"] for b in gaps),
                 "largest_disparity's max_shift_one_report is the largest of the disparities' "
                 "(|max x - max y| <= max |x - y|)", (mx[1], [b["max_shift_one_report"]
                                                             for b in gaps]))
            print("# influence: tuple_ml disparities after that report: " + "; ".join(
                f"{g1}-{h1}: moved {m:.4f} <= {bd:.4f}" for m, bd, g1, h1 in moves)
                + f"; other groups' means {[round(m, 5) for m, _ in others]} <= "
                f"{[round(bd, 5) for _, bd in others]}; largest_disparity {mx[0]:.4f} <= {mx[1]:.4f}")
            t.ok(all(m <= bd * (1 + 1e-9) + 2e-9 for m, bd, _, _ in moves + [(*o, 0, 0)
                                                                          for o in others]
                     + [(*mx, 0, 0)])
                 and all(m >= 0.5 * bd for m, bd, g1, h1 in moves if g in (g1, h1)),
                 "tuple_ml: that report moves every disparity, the other groups' means and the "
                 "largest disparity by at most their announced max_shift_one_report (the gaps "
                 "with its group by at least half of it)", moves)
            shift = abs(after["mean"] - before["mean"])
            bound = before["max_shift_one_report"]
            print(f"# influence: tuple_ml TPR of group {g} (estimated size {before['size']:.0f}): "
                  f"{before['mean']:.4f} -> {after['mean']:.4f} by one report of {sign * vmax} "
                  f"(the worst accepted), shift {shift:.4f}, documented bound {bound:.4f}; "
                  f"INT32_MAX is rejected (it moved a TPR from 0.525 to 10.8 before)")
            t.ok(st == 200 and 0.5 * bound <= shift <= bound * (1 + 1e-9),
                 f"the worst accepted tuple_ml report moves the TPR by {shift:.4f} <= the "
                 f"documented {bound:.4f} (and >= half of it)")

            # k forged devices: the README formula, exactly
            rb = est["report_bounds"]
            a, q, gain = rb["a"], rb["q"], rb["gain"]
            dn = (1 - q) / (a - q)
            n0, m0 = after["size"], 2 * after["mean"] - 1  # value scale
            k = 25
            st, resp, _ = post_batch(h, pb, batch_of(pb, *[ml_report(sign * vmax)
                                                          for _ in range(k)]))
            got = 2 * estimate(ML)["metrics"][0]["groups"][g]["mean"] - 1
            want = (a * gain * m0 * n0 + k * sign * vmax / 2 ** F) / (a * gain * (n0 + k * dn))
            t.ok(st == 200 and abs(got - want) < 1e-6,
                 f"{k} forged devices move the group mean to {(got + 1) / 2:.4f}, as the "
                 f"formula (S + kV) / (a gain (n + k delta_n)) predicts ({(want + 1) / 2:.4f})")

            # tuple_mr: values are +-1 and need no bound; forged devices still count
            est = estimate(MR)
            rb = est["report_bounds"]
            a, q, gain = rb["a"], rb["q"], rb["gain"]
            dn = (1 - q) / (a - q)
            gm = est["metrics"][0]["groups"][g]
            n0, m0 = gm["size"], 2 * gm["mean"] - 1
            mtpl = pb.Report()
            mtpl.ParseFromString(stored_raw(h, MR))
            forged = []
            for _ in range(k):
                rep = pb.Report()
                rep.CopyFrom(mtpl)
                rep.report_id = os.urandom(16)
                rep.tuple.group = g
                del rep.tuple.values[:]
                rep.tuple.values.append(sign)
                forged.append(rep)
            st, resp, _ = post_batch(h, pb, batch_of(pb, *forged))
            got = 2 * estimate(MR)["metrics"][0]["groups"][g]["mean"] - 1
            want = (a * gain * m0 * n0 + k * sign) / (a * gain * (n0 + k * dn))
            t.ok(st == 200 and abs(got - want) < 1e-6,
                 f"tuple_mr: {k} forged devices move the group mean from {(m0 + 1) / 2:.4f} to "
                 f"{(got + 1) / 2:.4f}, as the formula predicts ({(want + 1) / 2:.4f})")
            # how many forged devices move a TPR of 0.75 by 0.05 in a group of 10,000 devices
            consts = {"tuple_mr": (a, gain, dn, 1.0)}
            rbl = estimate(ML)["report_bounds"]
            consts["tuple_ml"] = (rbl["a"], rbl["gain"], (1 - rbl["q"]) / (rbl["a"] - rbl["q"]),
                                  rbl["value_max"] / 2 ** F)
            for mech, (ca, cg, cd, cv) in consts.items():
                mv, dv, n = 0.5, -0.1, 10000  # value scale: TPR 0.75 - 0.05
                kk = ca * cg * dv * n / (-cv - ca * cg * (mv + dv) * cd)
                print(f"# influence: {mech} eps 1, 3 groups: {math.ceil(kk)} forged devices "
                      f"(a = {ca:.4f}, gain = {cg:.4f}, delta_n = {cd:.3f}, V = {cv:.2f}) move "
                      f"a TPR of 0.75 by -0.05 in a group of {n} devices")

            # ---- roc_hist ---------------------------------------------------------------------
            est = estimate(ROC)
            roc = est["roc"]
            rb = est["report_bounds"]
            rtpl = pb.Report()
            rtpl.ParseFromString(stored_raw(h, ROC))
            bins = roc["bins"]

            def roc_report(pos, neg):
                rep = pb.Report()
                rep.CopyFrom(rtpl)
                rep.report_id = os.urandom(16)
                del rep.roc_hist.pos[:]
                del rep.roc_hist.neg[:]
                rep.roc_hist.pos.extend(pos)
                rep.roc_hist.neg.extend(neg)
                return rep
            big = [0] * bins
            big[0] = 2 ** 31 - 1
            st, resp, _ = post_batch(h, pb, batch_of(pb, roc_report(big, [0] * bins)))
            t.ok(st == 400 and [x.reason for x in resp.rejects] == ["histogram cell out of range"],
                 "roc_hist cell of INT32_MAX (the issue's report): 400 'histogram cell out of "
                 "range'", (st, resp))
            lo, hi = rb["cell"]
            clo, chi = rb["class_sum"]
            tlo, thi = rb["total_sum"]
            over = [0] * bins
            over[0] = hi + 1
            st, resp, _ = post_batch(h, pb, batch_of(pb, roc_report(over, [0] * bins)))
            t.ok(st == 400, f"a cell one past its bound ({hi + 1}): 400", (st, resp))
            t.ok(estimate(ROC)["roc"] == roc, "... and the AUC estimate is unchanged")

            # The worst accepted report: positives added to the lowest bins and taken out of the
            # highest, negatives the other way round, within the cell, class and total sums;
            # the split that drags the AUC down most, found with the estimator's own formula.
            def within(cells):
                while sum(cells) < clo:
                    b = max(i for i in range(bins) if cells[i] < 0)
                    cells[b] += 1
                while sum(cells) > chi:
                    b = max(i for i in range(bins) if cells[i] > 0)
                    cells[b] -= 1
                return cells

            best = None
            for split in range(1, bins):
                pos = within([hi] * split + [lo] * (bins - split))
                neg = within([lo] * split + [hi] * (bins - split))
                while sum(pos) + sum(neg) < tlo:
                    pos[max(i for i in range(bins) if pos[i] < 0)] += 1
                while sum(pos) + sum(neg) > thi:
                    pos[min(i for i in range(bins) if pos[i] > 0)] -= 1
                drop = roc["auc"] - auc_of([a + b for a, b in zip(roc["pos_sum"], pos)],
                                           [a + b for a, b in zip(roc["neg_sum"], neg)])
                if best is None or drop > best[0]:
                    best = (drop, pos, neg)
            _, pos, neg = best
            st, resp, _ = post_batch(h, pb, batch_of(pb, roc_report(pos, neg)))
            after = estimate(ROC)["roc"]
            shift = abs(after["auc"] - roc["auc"])
            bound = roc["max_auc_shift_one_report"]
            print(f"# influence: roc_hist AUC {roc['auc']:.4f} -> {after['auc']:.4f} by one "
                  f"report (pos {pos}, neg {neg}; L1 {sum(map(abs, pos))} + "
                  f"{sum(map(abs, neg))}, class_l1_max {rb['class_l1_max']}), shift "
                  f"{shift:.5f}, documented bound {bound:.5f}; INT32_MAX is rejected (it moved "
                  f"the AUC from 0.863 to 0.0000121 before)")
            t.ok(st == 200 and not roc["projected"] and not after["projected"],
                 "the worst accepted roc_hist report is stored (the sums stay non-negative)",
                 (st, resp))
            t.ok(shift <= bound and shift >= 0.15 * bound,
                 f"it moves the AUC by {shift:.5f} <= the documented {bound:.5f} ({shift / bound:.0%}"
                 f" of it: the bound assumes mass moved between the extremes of the other "
                 f"class's distribution)")
            t.ok(h.stop() == 0, "clean stop")
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    finally:
        if h is not None:
            h.cleanup()


AUC_SCENARIO = """\
[scenario]
name = influence_auc
devices = 4000
runs = 1
seed = 27
[population]
examples = 8
[group a]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.3
scores = binormal(auc=0.70, base_rate=0.4)
[group c]
share = 0.2
scores = binormal(auc=0.60, base_rate=0.4)
[campaign rocg]
id = 41
mechanism = roc_hist_groups
eps = 4
group_eps = 1.5000153
bins = 6
"""
# dpauc and ustat send one example per report
AUC1_SCENARIO = """\
[scenario]
name = influence_auc1
devices = 3000
runs = 1
seed = 28
[population]
examples = 1
[group a]
share = 0.6
scores = binormal(auc=0.85, base_rate=0.4)
[group b]
share = 0.4
scores = binormal(auc=0.70, base_rate=0.4)
[campaign dpauc]
id = 42
mechanism = dpauc
eps = 8
thresholds = 5
calibration = tight
[campaign bins]
id = 43
mechanism = ustat_bins
eps = 2
k = 8
"""
ROCG, DPAUC, BINS = 41, 42, 43
TOL = 2e-8  # the JSON's 9 significant digits


def run_auc(t, pg=None):
    """Issue 27 item 2: one report's influence announced and reached for per-group roc_hist (each
    group and gap), dpauc (both server variants) and ustat_bins (exact: the worst report)."""
    h = None
    try:
        with tempfile.TemporaryDirectory(prefix="dpm-influence-auc.") as tmp:
            scns, camp = [], ""
            for i, text in enumerate((AUC_SCENARIO, AUC1_SCENARIO)):
                scns.append(os.path.join(tmp, f"influence_auc{i}.scn"))
                with open(scns[-1], "w") as f:
                    f.write(text)
                camp += subprocess.run([SIM, "campaigns", "--scenario", scns[-1]],
                                       capture_output=True, text=True, check=True).stdout
            # a grouped report may hold as many examples as a device has (8), not 100
            camp = camp.replace("mechanism = roc_hist\n",
                                "mechanism = roc_hist\nmax_examples = 8\n")
            camp = camp.replace("mechanism = dpauc\n", "mechanism = dpauc\nmax_examples = 1\n")
            h = Harness(campaigns=camp, pg=pg)
            pb = load_pb2(h.tmp)
            h.start()
            for i, scn in enumerate(scns):
                r = subprocess.run([SIM, "--scenario", scn, "--mode", "network", "--collector",
                                    f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "4",
                                    "--batch", "100", "--out", os.path.join(tmp, f"out{i}"),
                                    "--no-plot", "--token", h.creds.files["harness"]],
                                   capture_output=True, text=True, timeout=300, cwd=ROOT)
                t.ok(r.returncode == 0, f"dpm-sim network mode posted the AUC population {i}",
                     r.stderr)

            def estimate(cid):
                return json.loads(h.request("GET", f"/v1/campaigns/{cid}/estimate")[2])

            def template(cid):
                rep = pb.Report()
                rep.ParseFromString(stored_raw(h, cid))
                rep.report_id = os.urandom(16)
                return rep

            # ---- roc_hist with groups: the worst report into the group announced most movable
            est = estimate(ROCG)
            rb = est["report_bounds"]
            lo, hi = rb["cell"]
            clo, chi = rb["class_sum"]
            groups = est["roc_groups"]["by_group"]
            g = max(range(len(groups)), key=lambda i: groups[i]["max_shift_one_report"] or 0)
            bins = est["roc_groups"]["bins"]

            def within(cells):
                while sum(cells) < clo:
                    cells[max(i for i in range(bins) if cells[i] < 0)] += 1
                while sum(cells) > chi:
                    cells[max(i for i in range(bins) if cells[i] > 0)] -= 1
                return cells
            half = bins // 2  # positives low, negatives high: the AUC of group g drops
            pos = within([hi] * half + [lo] * (bins - half))
            neg = within([lo] * half + [hi] * (bins - half))
            rep = template(ROCG)
            rep.roc_hist.group = g
            del rep.roc_hist.pos[:]
            del rep.roc_hist.neg[:]
            rep.roc_hist.pos.extend(pos)
            rep.roc_hist.neg.extend(neg)
            st, resp, _ = post_batch(h, pb, batch_of(pb, rep))
            after = estimate(ROCG)["roc_groups"]
            ok, worst = st == 200, 0.0
            lines = []
            for k, (b, a) in enumerate(zip(groups, after["by_group"])):
                move, bound = abs(a["auc"] - b["auc"]), b["max_shift_one_report"]
                ok = ok and bound is not None and move <= bound + TOL
                lines.append(f"group {k}: {b['auc']:.4f} -> {a['auc']:.4f} ({move:.4f} <= "
                             f"{bound:.4f})")
                if k == g:
                    worst = move / bound
            for b, a in zip(est["roc_groups"]["gaps"], after["gaps"]):
                move, bound = abs(a["gap"] - b["gap"]), b["max_shift_one_report"]
                ok = ok and bound is not None and move <= bound + TOL
                lines.append(f"gap {b['g']}-{b['h']}: {b['gap']:.4f} -> {a['gap']:.4f} "
                             f"({move:.4f} <= {bound:.4f})")
            big_b, big_a = est["roc_groups"]["largest_gap"], after["largest_gap"]
            big_ok = big_b is not None and big_a is not None and \
                big_b["max_shift_one_report"] == max(b["max_shift_one_report"]
                                                     for b in est["roc_groups"]["gaps"])
            if big_ok:
                move, bound = abs(big_a["abs_diff"] - big_b["abs_diff"]), \
                    big_b["max_shift_one_report"]
                big_ok = move <= bound + TOL
                lines.append(f"largest gap: {big_b['abs_diff']:.4f} -> {big_a['abs_diff']:.4f} "
                             f"({move:.4f} <= {bound:.4f}, the largest gap's bound)")
            print("# influence: roc_hist 3 groups x 6 bins, one report into group "
                  f"{g} (pos {pos}, neg {neg}): " + "; ".join(lines))
            t.ok(ok and big_ok and worst >= 0.1,
                 f"roc_hist with groups: one report within the checks moves every group's AUC, "
                 f"every gap and the largest gap by at most its announced max_shift_one_report "
                 f"(group {g}: {worst:.0%} of its bound)", (st, resp, lines, big_b, big_a))

            # ---- dpauc: the report that drags both variants down (tpr down, fpr up)
            est = estimate(DPAUC)
            lo, hi = est["report_bounds"]["count"]
            n = est["dpauc"]["thresholds"]
            rep = template(DPAUC)
            for name, v in (("tp", lo), ("fn", hi), ("fp", hi), ("tn", lo)):
                cells = getattr(rep.dpauc, name)
                del cells[:]
                cells.extend([v] * n)
            st, resp, _ = post_batch(h, pb, batch_of(pb, rep))
            after = estimate(DPAUC)["dpauc"]["variants"]
            ok, lines = st == 200, []
            for var in ("A", "B"):
                b, a = est["dpauc"]["variants"][var], after[var]
                move, bound = abs(a["auc"] - b["auc"]), b.get("max_shift_one_report")
                ok = ok and bound is not None and move <= bound + TOL and move >= 0.1 * bound
                lines.append(f"{var}: {b['auc']:.4f} -> {a['auc']:.4f} ({move:.4f} <= "
                             f"{bound:.4f}, {move / bound:.0%})")
            print(f"# influence: dpauc 5 thresholds, counts in [{lo}, {hi}], one report "
                  "(TP, TN low, FN, FP high): " + "; ".join(lines))
            t.ok(ok, "dpauc: the report moves both server variants' AUC by at most their "
                 "announced max_shift_one_report (and by >= 10 % of it)", (st, resp, lines))

            # ---- ustat_bins: the bound is exact: the worst value, found here from the stored
            # sums with the estimator's formula, moves the AUC by exactly the announced amount
            est = estimate(BINS)
            ub = est["ustat_bins"]
            k = ub["k"]
            rows = dict(h.db_query("SELECT idx, SUM(s) FROM agg_vec WHERE campaign_id = ? "
                                   "GROUP BY idx", BINS))
            c = [[rows.get(lab * 256 + v, 0) for v in range(k)] for lab in (0, 1)]
            rep = template(BINS)
            # the GRR: keep p for the true value, q for each other (k values), from the campaign
            eps = rep.eps_q16 / 65536.0
            pkeep = math.exp(eps) / (math.exp(eps) + k - 1)
            q = (1 - pkeep) / (k - 1)

            def auc(c0, c1):
                n0, n1 = sum(c0), sum(c1)
                hn = [(x - n0 * q) / (pkeep - q) for x in c0]
                hp = [(x - n1 * q) / (pkeep - q) for x in c1]
                below, num = 0.0, 0.0
                for v in range(k):
                    num += hp[v] * (below + 0.5 * hn[v])
                    below += hn[v]
                return num / (n0 * n1)
            now = auc(c[0], c[1])
            best = None
            for lab in (0, 1):
                for v in range(k):
                    c2 = [row[:] for row in c]
                    c2[lab][v] += 1
                    move = abs(auc(c2[0], c2[1]) - now)
                    if best is None or move > best[0]:
                        best = (move, lab, v)
            _, lab, v = best
            rep.ustat_bins.label = lab
            rep.ustat_bins.value = v
            st, resp, _ = post_batch(h, pb, batch_of(pb, rep))
            a2 = estimate(BINS)["ustat_bins"]["auc"]
            move, bound = abs(a2 - ub["auc"]), ub["max_shift_one_report"]
            print(f"# influence: ustat_bins k {k}: the worst report (label {lab}, value {v}) "
                  f"moves the AUC {ub['auc']:.6f} -> {a2:.6f} by {move:.3g}; announced {bound:.3g}"
                  f" (this file's formula gave {now:.6f} before)")
            t.ok(st == 200 and abs(now - ub["auc"]) < 1e-8 and bound is not None
                 and abs(move - bound) <= TOL,
                 "ustat_bins: the worst possible report moves the AUC by exactly the announced "
                 "max_shift_one_report", (st, resp, move, bound, now, ub))
            t.ok(h.stop() == 0, "clean stop")
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    finally:
        if h is not None:
            h.cleanup()


def main():
    t = Tap()
    run(t)
    run_auc(t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
