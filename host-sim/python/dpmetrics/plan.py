# SPDX-License-Identifier: Apache-2.0
"""plan(): how many devices, or which ε, for a target error: `dpm-sim plan` in this process
(host-sim/sim/README.md: what each planner plans for and how its answer is checked)."""
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import _native

MECHANISMS = ("tuple_mr", "tuple_ml", "roc_hist", "roc_hist_groups")


def _arg(key, v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return ",".join(_arg(key, x) for x in v)
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise ValueError(f"plan: {key}={v!r} is not a finite number")
        return np.format_float_positional(v, unique=True, trim="-")
    return str(v)


def plan(mechanism, *, error, confidence, devices=None, eps=None, check=True, trust=None,
         population=None, data_runs=200, **options):
    """The planner's answer as a dict (dpm-sim plan's --json: question, answer, trust_model,
    check), with "log": what it printed, each check as it ran.

    Give devices (K: which ε?) or eps (which K?), or both (roc_hist_groups: the table at that
    K and ε). Options are the planner's (`dpm-sim plan --mechanism M --help`), spelt with
    underscores: shares=[0.6, 0.3, 0.1], base_rate=0.1, examples=30, bins=12, bound="normal",
    metrics=["tpr", "fpr"], joint=True. check=False skips the simulation check. trust
    (roc_hist_groups): "local", "two_aggregators", or "both" for {"local": ...,
    "two_aggregators": ...}; noise="gaussian" with delta=1e-9 plans the two aggregators'
    discrete Gaussian (with trust="both", only their plan takes it), and the data check below
    simulates that campaign ("campaign" in "data_check").

    population (roc_hist, roc_hist_groups): your data (a DataFrame or CSV path, as simulate()
    takes it) sets what you did not: each group's share of the devices, AUC (Mann-Whitney, ties
    1/2) and base rate, and the mean examples per device (rounded; "from_data" in the answer
    says what was taken; with trust="two_aggregators" the examples are the most rows of one
    device, the campaign's max_device_examples). The planner's model is binormal; the answer is then checked on the
    data itself: simulate() of your data resampled to the planned K and ε, exact mode,
    data_runs runs, and "data_check" gives each AUC's and gap's fraction of runs within the
    error with its 95% Clopper-Pearson interval; while an item's lower end is below the
    confidence K steps up (at most 6 checks; given devices=, that K is checked once), and
    "devices" is the K verified on your data (None if none was; data_runs=0 skips the check). Exact mode of roc_hist_groups costs O(K) per
    run: at local DP's millions of devices, expect minutes.
    Raises ValueError for what the planner refuses (its message), DpmError when the check
    found no verified K (the answer, with the largest K tried, is the exception's .plan)."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"plan: mechanism {mechanism!r}: one of {', '.join(MECHANISMS)}")
    if trust == "both":  # noise= and delta= are the two aggregators' (local DP has its own)
        local = {k: v for k, v in options.items() if k not in ("noise", "delta")}
        return {t: plan(mechanism, error=error, confidence=confidence, devices=devices, eps=eps,
                        check=check, trust=t, population=population, data_runs=data_runs,
                        **(options if t == "two_aggregators" else local))
                for t in ("local", "two_aggregators")}
    from_data = None
    if population is not None:
        if mechanism not in ("roc_hist", "roc_hist_groups"):
            raise ValueError(f"plan: population= plans roc_hist and roc_hist_groups; "
                             f"{mechanism}'s planner needs only the groups' shares (shares=)")
        from_data = _data_parameters(mechanism, population, options, trust)
    args = ["--mechanism", mechanism, "--error", _arg("error", error), "--confidence",
            _arg("confidence", confidence)]
    if devices is not None:
        args += ["--devices", _arg("devices", int(devices) if float(devices).is_integer()
                                   else devices)]
    if eps is not None:
        args += ["--eps", _arg("eps", eps)]
    if trust is not None:
        args += ["--trust", str(trust)]
    if not check:
        args.append("--no-check")
    for k, v in options.items():
        if k in ("json", "help"):
            raise ValueError(f"plan: {k}= is the binding's own (the answer is the return value)")
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        elif v is False or v is None:
            continue
        else:
            args += [flag, _arg(k, v)]
    with tempfile.TemporaryDirectory(prefix="dpmetrics-plan-") as tmp:
        answer = Path(tmp) / "plan.json"
        status, out, err = _native.plan(args + ["--json", str(answer)])
        text = answer.read_text() if answer.is_file() else None
    if status == _native.USAGE or text is None:
        reason = err.split("\nusage:")[0].strip() or out.strip() or f"status {status}"
        raise ValueError(reason.replace("dpm-sim plan: ", "plan: ", 1)
                         .replace("dpm-sim: ", "plan: ", 1))
    result = json.loads(text)
    result["log"] = out
    if from_data is not None:
        result["from_data"] = from_data
        if data_runs:
            # asked which eps for a given K: that K is checked, not stepped up
            result["data_check"] = _check_on_data(mechanism, population, result, error,
                                                  confidence, trust, options, data_runs,
                                                  max_checks=1 if devices is not None else 6)
    if status == _native.CHECK:
        e = _native.DpmError("plan: the simulation check found no K shown to reach the "
                             f"confidence within its checks:\n{out.strip()}")
        e.plan = result
        raise e
    return result


def _auc(score, label):
    """Mann-Whitney AUC of scores with labels 0/1 (ties count 1/2)."""
    pos, neg = np.sort(score[label == 1]), np.sort(score[label == 0])
    below = np.searchsorted(neg, pos, side="left")
    ties = np.searchsorted(neg, pos, side="right") - below
    return float((below + 0.5 * ties).sum() / (len(pos) * len(neg)))


def _data_parameters(mechanism, population, options, trust):
    """The planner's population parameters from the data, for those options does not set."""
    from . import population as _population
    df = population[0].rename(columns={v: k for k, v in population[1].items()}) \
        if isinstance(population, tuple) else population
    if not isinstance(df, (pd.DataFrame,)):
        df = _population.read_csv(df)
    codes, score, label, _, gnames, order = _population.check(df)
    groups = np.array([order.index(g) for g in gnames])
    ndev = int(codes.max()) + 1
    dev_group = np.zeros(ndev, dtype=int)
    dev_group[codes] = groups
    taken = {}
    shares = np.bincount(dev_group, minlength=len(order)) / ndev
    aucs, rates = [], []
    for g in range(len(order)):
        s, y = score[groups == g], label[groups == g]
        if y.all() or not y.any():
            raise ValueError(f"plan: group {order[g]!r} has no {'negative' if y.all() else 'positive'} "
                             "example: its AUC is undefined")
        aucs.append(_auc(s, y))
        rates.append(float(y.mean()))
    if mechanism == "roc_hist_groups":
        taken["shares"] = [round(float(x), 6) for x in shares]
        taken["groups"] = order
        taken["auc"] = [round(a, 6) for a in aucs]
        taken["base_rate"] = [round(r, 6) for r in rates]
    else:
        taken["auc"] = round(_auc(score, label), 6)
        taken["base_rate"] = round(float(label.mean()), 6)
    rows = np.bincount(codes)
    # local DP: the mean examples of a device (the planner's sampling model); two aggregators:
    # the most rows of a device, the campaign's max_device_examples (every device must fit:
    # the central noise's sensitivity)
    taken["examples"] = int(rows.max()) if trust == "two_aggregators" else \
        max(1, int(round(len(codes) / ndev)))
    if "shares" in taken:  # six decimals: make them sum to 1 exactly as the planner asks
        taken["shares"][-1] = round(1.0 - sum(taken["shares"][:-1]), 6)
    for k, v in list(taken.items()):
        if k in options:
            del taken[k]
        elif k != "groups":
            options[k] = v
    return taken


def _clopper_pearson(k, n, level=0.95):
    """The exact binomial interval (bisection on the tails)."""
    from math import comb
    def cdf(p, upto):
        return sum(comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(upto + 1))
    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return (lo + hi) / 2
    a = (1 - level) / 2
    lower = 0.0 if k == 0 else solve(lambda p: 1 - cdf(p, k - 1) < a)
    upper = 1.0 if k == n else solve(lambda p: cdf(p, k) > a)
    return [lower, upper]


def _check_on_data(mechanism, population, result, error, confidence, trust, options, runs,
                   max_checks=6):
    """simulate() of the data at the answer's K and ε: each item's coverage of |error|; while an
    item is not verified, K steps up (aimed through the normal law at the worst item, at least
    +10 % and at most 4x a step, at most 6 checks), as dpm-sim's own check does."""
    from statistics import NormalDist
    from .simulate import simulate
    answer = result["answer"]
    k = answer.get("devices_verified") or answer.get("devices")
    e = answer.get("eps_campaign") or answer.get("eps")
    if k is None or e is None:
        return {"skipped": "the answer has no K and eps to simulate"}
    two = trust == "two_aggregators"
    campaign = {"name": "plan", "eps": e, "bins": options.get("bins", 10)}
    if mechanism == "roc_hist":
        campaign["mechanism"] = "roc_hist"
        kinds, gap_error = ("auc",), error
    else:
        campaign["mechanism"] = "roc_hist_2agg" if two else "roc_hist_groups"
        if two:
            campaign["max_device_examples"] = options.get("examples", 40)
            if options.get("noise") == "gaussian":  # the planned noise, not Laplace
                campaign["noise"], campaign["delta"] = "gaussian", options["delta"]
        elif "group_share" in options:
            campaign["group_eps"] = e * float(options["group_share"])
        kinds = ("auc_group_unb", "auc_gap_unb")
        gap_error = options.get("gap_error", error)
    steps, k = [], max(int(k), 2)
    z_target = NormalDist().inv_cdf((1 + confidence) / 2)
    for _ in range(max_checks):
        sim = simulate(population, campaign, devices=k, runs=runs, mode="exact")
        sel = sim.runs[sim.runs["kind"].isin(kinds)]
        items = []
        for (kind, name), r in sel.groupby(["kind", "name"], sort=False):
            x = gap_error if kind.startswith("auc_gap") else error
            within = int((r["error"].abs() <= x).sum())
            items.append({"kind": kind, "name": name, "within": within, "runs": len(r),
                          "coverage_ci": _clopper_pearson(within, len(r))})
        worst = min(items, key=lambda i: i["coverage_ci"][0])
        ok = worst["coverage_ci"][0] >= confidence
        steps.append({"devices": k, "items": items, "worst_item": worst["name"],
                      "verified": ok})
        if ok:
            break
        seen = min(max(worst["within"] / worst["runs"], 0.05), 0.999)
        ratio = (z_target / NormalDist().inv_cdf((1 + seen) / 2)) ** 2 * 1.1
        k = int(k * min(max(ratio, 1.1), 4.0)) + 1
    verified = steps[-1]["verified"]
    return {"eps": e, "mode": "exact", "runs": runs, "steps": steps, "verified": verified,
            "campaign": campaign,
            "devices": steps[-1]["devices"] if verified else None,
            "what": "your data resampled to K devices, each run's AUCs and gaps against the "
                    "data's own (unbinned) AUCs; verified when every item's 95% Clopper-Pearson "
                    "lower end reaches the confidence"}
