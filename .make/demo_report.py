#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make demo, step 5: the collector's estimates (collector-estimate-ID.json, fetched by dpm-sim
over HTTPS) beside the truth of the simulated population (results.json).

Usage: demo_report.py RUN_DIR ELAPSED_SECONDS

What it prints, and against which truth:
  tuple campaigns   each group's mean with its 95% interval (one group chosen in advance);
                    every gap at once with the collector's simultaneous intervals, which pairs
                    the data tell apart; the largest gap: the pair with the largest estimate (a
                    selection, biased upward) and the collector's interval for the largest true
                    gap, whichever pair it is, against the population's largest gap.
  roc_hist          headline: the unbinned AUC (pairs within a bin resolved) and its interval
                    for the model's AUC (auc_unbinned_ci_total: noise, sampling and the
                    interpolation bound) against the model's AUC; detail: the binned AUC (pairs
                    within a bin count 1/2) against the devices' binned AUC, the only truth its
                    interval is for.
  trust models      demo_trust.scn's campaigns on the same devices: each group's AUC and each gap
                    under local DP and under two aggregators, against the devices' binned AUCs.
Every interval is printed once, beside the one truth it is meant to cover, with its claim when it
is not the nominal level ("at least 95%", or no claim and why: the JSON's K_coverage, K_reason)."""
import json
import sys

NAMES = {"tuple_mr": "randomized response", "tuple_ml": "discrete Laplace"}


def verdict(lo, hi, x):
    return "inside" if lo <= x <= hi else "outside"


def level(obj, key, confidence):
    """What interval obj[key] claims (host-sim/mech/base/est_json.h): "95%", "at least 95%",
    or "no coverage claim: why"."""
    claim = obj.get(f"{key}_coverage", "nominal")
    return f"{confidence:.0%}" if claim == "nominal" else f"at least {confidence:.0%}" \
        if claim == "at_least" else f"no coverage claim: {obj.get(f'{key}_reason')}"


def mark(obj, key, notes):
    """A table row's mark for an interval that is not at the nominal level; its reason joins
    notes (printed once under the table)."""
    claim = obj.get(f"{key}_coverage", "nominal")
    if claim == "nominal":
        return ""
    why = obj.get(f"{key}_reason")
    notes.setdefault(why, len(notes) + 1)
    return f"  ({'at least' if claim == 'at_least' else 'no claim'} [{notes[why]}])"


def print_notes(notes):
    for why, i in notes.items():
        print(f"    [{i}] {why}")


def tuple_campaign(c, est):
    for m in est["metrics"]:
        items = [it for it in c["items"] if it["metric"] == m["metric"]]
        groups = [it for it in items if it["kind"] == "group"]
        gaps = {(it["g"], it["h"]): it for it in items if it["kind"] == "gap"}
        name = m["metric"].upper()
        print(f"  {name} per group ({NAMES[est['mechanism']]}), 95% CI of each group alone:")
        print(f"  {'group':>10} {'true':>7} {'estimate':>9} {'95% CI':>18} {'error':>8}  in CI")
        notes = {}
        for g, t in zip(m["groups"], groups):
            lo, hi = g["ci95"]
            print(f"  {t['name']:>10} {t['truth']:7.4f} {g['mean']:9.4f} "
                  f"{'[%.4f, %.4f]' % (lo, hi):>18} {g['mean'] - t['truth']:+8.4f}  "
                  f"{'yes' if lo <= t['truth'] <= hi else 'no'}{mark(g, 'ci', notes)}")
        print_notes(notes)
        sim = m["simultaneous"]
        print(f"  {name} gaps, every pair at once (simultaneous {sim['confidence']:.0%}: "
              f"+-{sim['critical_value']:.2f} sd, where one pair alone would take "
              f"{sim['pointwise_critical_value']:.2f}):")
        print(f"  {'pair':>18} {'true':>8} {'estimate':>9} {'simultaneous CI':>20}  apart  in CI")
        notes = {}
        for p in m["disparities"]:
            t = gaps[(p["g"], p["h"])]
            lo, hi = p["ci_simultaneous"]
            print(f"  {t['name']:>18} {t['truth']:+8.4f} {p['diff']:+9.4f} "
                  f"{'[%+.4f, %+.4f]' % (lo, hi):>20}  {'yes' if p['distinguishable'] else 'no':>5}"
                  f"  {'yes' if lo <= t['truth'] <= hi else 'no'}"
                  f"{mark(p, 'ci_simultaneous', notes)}")
        print_notes(notes)
        big = m["largest_disparity"]
        if big is None:
            print(f"  largest gap: none ({m['largest_disparity_reason']})\n")
            continue
        top = max(abs(t["truth"]) for t in gaps.values())
        pair = gaps[(big["g"], big["h"])]["name"]
        cands = ("any of the %d pairs" % len(gaps)) if len(big["candidates"]) == len(gaps) \
            else ", ".join(gaps[tuple(k)]["name"] for k in big["candidates"])
        lo, hi = big["ci"]
        print(f"  largest gap: {pair} has the largest estimate, {big['abs_diff']:.4f} (a "
              f"selection: biased upward);")
        print(f"    the largest true gap, whichever pair, lies in [{lo:.4f}, {hi:.4f}] "
              f"({level(big, 'ci', sim['confidence'])}): true {top:.4f}, "
              f"{verdict(lo, hi, top)}")
        print(f"    stability {big['stability']:.0%} (bootstrap: reruns name the same pair at most "
              f"about this often); may be the largest: {cands}\n")


def roc_campaign(c, est):
    roc, truth = est["roc"], c["roc"]["truth"]
    model = truth["auc_model"]
    lo, hi = roc["auc_unbinned_ci_total"]
    conf = est["confidence"]
    print(f"  ROC at {roc['bins']} score bins, labels under label DP")
    print(f"  AUC {roc['auc_unbinned']:.4f}, CI [{lo:.4f}, {hi:.4f}] "
          f"({level(roc, 'auc_unbinned_ci_total', conf)}) against the model's AUC {model:.4f}: "
          f"{verdict(lo, hi, model)}")
    print("    (pairs of examples within a score bin resolved by linear densities; the interval "
          "holds the noise, the examples' sampling and the interpolation-error bound)")
    if roc.get("auc_unbinned_ci_total_coverage", "nominal") == "at_least":
        print(f"    ({roc['auc_unbinned_ci_total_reason']})")
    blo, bhi = roc["auc_ci"]
    print(f"  detail: the binned AUC {roc['auc']:.4f}, CI [{blo:.4f}, {bhi:.4f}] "
          f"({level(roc, 'auc_ci', conf)}) against the devices' binned AUC {truth['auc']:.4f}: "
          f"{verdict(blo, bhi, truth['auc'])}")
    print(f"    (pairs within a bin count 1/2: binning alone moves the AUC by "
          f"{truth['auc'] - model:+.4f})")
    j = len(roc["tpr"]) // 2
    print(f"  at threshold {j}: TPR {roc['tpr'][j]:.3f} [{roc['tpr_lo'][j]:.3f}, "
          f"{roc['tpr_hi'][j]:.3f}] (true {truth['tpr'][j]:.3f}), FPR {roc['fpr'][j]:.3f} "
          f"(true {truth['fpr'][j]:.3f})\n")


def cell(run):
    """A run's [estimate, lo, hi] as printed: 'no estimate' when the estimator gave none."""
    est, lo, hi = run
    if est is None or lo is None or hi is None:
        return f"{'no estimate':>28}"
    return f"{est:8.4f} {'[%.4f, %.4f]' % (lo, hi):>19}"


def trust_models(run):
    """Step 5: demo_trust.scn's two campaigns on the same devices, local DP (its dpm-sim run
    through the collector) beside two aggregators (through the DAP leader and helper): each
    group's AUC and each gap with its 95% interval, against the devices' binned AUCs (the
    truth both intervals are for)."""
    try:
        ldp = json.load(open(f"{run}/trust-ldp/results.json"))["configs"][0]
        two = json.load(open(f"{run}/trust-2agg/results.json"))["configs"][0]
    except OSError:
        return
    items = {(i["kind"], i["name"]): i for i in ldp["items"]}
    rows = [(k, items[k], i) for i in two["items"] for k in [(i["kind"], i["name"])]
            if k[0] in ("auc_group", "auc_gap") and k in items]
    print(f"Two trust models, the same {two['devices']:,} devices (demo_trust.scn, eps {two['eps']})")
    print(f"  local DP: each device noises its own labels (roc_hist_groups through the collector, "
          f"{ldp['reports']:,} reports)")
    print(f"  two aggregators: exact histograms as Prio3 shares, each aggregator adds its noise "
          f"once (roc_hist_2agg through the DAP leader and helper, {two['reports']:,} reports "
          f"collected)")
    print(f"  {'':>16} {'true':>7} | {'local DP':>8} {'95% CI':>19} {'error':>8} | "
          f"{'2 aggr.':>8} {'95% CI':>19} {'error':>8}")
    sq = {"ldp": [], "two": []}
    for (kind, name), a, b in rows:
        what = f"{'AUC' if kind == 'auc_group' else 'gap'} {name}"
        line = f"  {what:>16} {b['truth']:{'7.4f' if kind == 'auc_group' else '+7.4f'}} |"
        for tag, i in (("ldp", a), ("two", b)):
            est = i["runs"][0][0]
            err = None if est is None else est - i["truth"]
            line += f" {cell(i['runs'][0])} {'' if err is None else '%+8.4f' % err:>8} |"
            if err is not None:
                sq[tag].append(err * err)
        print(line.rstrip("|").rstrip())
    rms = {t: (sum(v) / len(v)) ** 0.5 if v else float("nan") for t, v in sq.items()}
    print(f"  root mean square error over these rows: local DP {rms['ldp']:.4f}, two aggregators "
          f"{rms['two']:.4f}")
    print("  (true: the devices' own binned AUCs, the truth both intervals are for; each gap's "
          "interval is for that pair alone, chosen in advance: no selection among the pairs)\n")


def main():
    run, elapsed = sys.argv[1], float(sys.argv[2])
    res = json.load(open(f"{run}/sim/results.json"))
    cfgs = {c["id"]: c for c in res["configs"]}
    total = sum(c["reports"] for c in cfgs.values())
    first = next(iter(cfgs.values()))
    print(f"\n{first['devices']:,} simulated devices in 4 groups; {total:,} reports over TLS, "
          f"stored and estimated by dpm-collector ({elapsed:.1f} s in all)\n")
    for cid, c in sorted(cfgs.items()):
        est = json.load(open(f"{run}/sim/collector-estimate-{cid}.json"))
        print(f"campaign {cid}: {est['mechanism']}, eps {est['eps']:g} "
              f"(implemented {est['eps_implemented']:.5f}), {est['reports']:,} reports stored")
        if est["mechanism"] == "roc_hist":
            roc_campaign(c, est)
        else:
            tuple_campaign(c, est)
    trust_models(run)
    print("The collector never sees a true group or label: sizes, means and the ROC are its\n"
          "estimates from noised reports. A 95% interval misses its truth 1 time in 20; the\n"
          "simultaneous ones miss any of their pairs 1 time in 20 together.")
    print(f"files: {run}/ (certificates, campaigns.txt, the database, collector.*.log, "
          f"sim/*.json; the DAP leader's and helper's dap.txt, *.db, *.log, trust-*/*.json)")


if __name__ == "__main__":
    main()
