# SPDX-License-Identifier: Apache-2.0
"""Plots of a campaign's estimates (matplotlib, Debian's python3-matplotlib): each draws the
collector's own numbers and intervals from an Estimate and returns the Figure. The intervals
drawn are the ones meant for what is shown: the ROC's simultaneous band (the whole curve at
once), each group's AUC interval, the gaps' simultaneous intervals (every pair at once: read
when looking at several pairs or the largest)."""
import matplotlib.pyplot as plt  # its default backend: inline in Jupyter, Agg without a display


def _axes(ax, title):
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.set_title(title)
    return ax.figure, ax


def _need(frame, est, what):
    """Refuses to plot what the campaign has not: every plot words it alike (what: the missing
    piece, e.g. "ROC curve to plot")."""
    if frame.empty:
        raise ValueError(f"campaign {est.campaign} ({est.mechanism}) has no {what}")


def roc(est, ax=None):
    """The pooled ROC curve with its pointwise and simultaneous bands; with groups, each group's
    curve with ±1.96 sd of its TPR."""
    fig, ax = _axes(ax, f"ROC, campaign {est.campaign} (eps {est.eps})")
    curves = est.roc
    _need(curves, est, "ROC curve to plot")
    pooled = curves[curves["group"].isna()]
    if not pooled.empty:
        ax.plot(pooled["fpr"], pooled["tpr"], color="k", label="all groups")
        if "tpr_lo_simultaneous" in pooled:
            ax.fill_between(pooled["fpr"], pooled["tpr_lo_simultaneous"],
                            pooled["tpr_hi_simultaneous"], color="k", alpha=0.15,
                            label="simultaneous band")
    for g, c in curves[curves["group"].notna()].groupby("group"):
        name = est.names[int(g)] if est.names else f"group {int(g)}"
        line, = ax.plot(c["fpr"], c["tpr"], label=name)
        if "tpr_sd" in c:
            ax.fill_between(c["fpr"], c["tpr"] - 1.96 * c["tpr_sd"], c["tpr"] + 1.96 * c["tpr_sd"],
                            color=line.get_color(), alpha=0.15)
    ax.plot([0, 1], [0, 1], ls=":", color="grey")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.legend(loc="lower right")
    return fig


def pr(est, ax=None):
    """The precision-recall curve with each threshold's pointwise interval, and the AP."""
    curve = est.pr
    _need(curve, est, "precision-recall curve to plot (roc_hist campaigns have one)")
    ap = est.json["pr"]["ap"]
    fig, ax = _axes(ax, f"precision-recall, campaign {est.campaign} (AP {ap:.3f})")
    ax.plot(curve["recall"], curve["precision"], marker="o", color="k")
    ax.fill_between(curve["recall"], curve["lo"].astype(float), curve["hi"].astype(float),
                    color="k", alpha=0.15, label=f"{int(round(100 * est.confidence))}% pointwise")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower left")
    return fig


def reliability(est, ax=None):
    """The reliability diagram: each bin's observed positive rate with its interval against the
    bin's score midpoint, the diagonal of perfect calibration, and the ECE."""
    cal = est.calibration
    _need(cal, est, "calibration to plot (roc_hist campaigns have one)")
    ece = est.json["calibration"]["ece"]
    fig, ax = _axes(ax, f"reliability, campaign {est.campaign} (ECE {ece:.3f})")
    rate = cal["rate"].astype(float)
    ax.errorbar(cal["midpoint"], rate, yerr=[rate - cal["lo"].astype(float),
                                             cal["hi"].astype(float) - rate], fmt="o", capsize=3)
    ax.plot([0, 1], [0, 1], ls=":", color="grey")
    ax.set_xlabel("score (bin midpoint)")
    ax.set_ylabel("observed positive rate")
    return fig


def auc_by_group(est, ax=None):
    """Each group's AUC with its interval (the binned AUC's `ci`)."""
    fig, ax = _axes(ax, f"AUC by group, campaign {est.campaign}")
    a = est.auc
    a = a[a["group"].notna()] if "group" in a else a
    _need(a, est, "per-group AUC")
    labels = list(a["group_name"]) if "group_name" in a else [str(g) for g in a["group"]]
    y = list(range(len(a)))
    ax.errorbar(a["auc"], y, xerr=[a["auc"] - a["ci_lo"], a["ci_hi"] - a["auc"]], fmt="o",
                capsize=3)
    ax.set_yticks(y, labels)
    ax.set_xlabel(f"AUC ({int(round(100 * est.confidence))}% interval)")
    return fig


def disparities(est, ax=None, metric=None):
    """Every pairwise gap with its simultaneous interval: the AUC gaps with groups, else the
    metric's disparities (tuple_mr, tuple_ml; metric= picks one, default the first)."""
    gaps = est.gaps
    if not gaps.empty:
        value, what = "gap", "AUC gap"
    else:
        gaps = est.disparities
        _need(gaps, est, "disparities")
        metric = metric or gaps["metric"].iloc[0]
        gaps = gaps[gaps["metric"] == metric]
        value, what = "diff", f"{metric} gap"
    fig, ax = _axes(ax, f"{what}s, campaign {est.campaign} (every pair at once)")
    g = [n if n is not None else str(i) for n, i in zip(gaps.get("g_name", gaps["g"]), gaps["g"])]
    h = [n if n is not None else str(i) for n, i in zip(gaps.get("h_name", gaps["h"]), gaps["h"])]
    y = list(range(len(gaps)))
    lo, hi = gaps["ci_simultaneous_lo"], gaps["ci_simultaneous_hi"]
    ax.errorbar(gaps[value], y, xerr=[gaps[value] - lo, hi - gaps[value]], fmt="o", capsize=3)
    ax.axvline(0, color="grey", ls=":")
    ax.set_yticks(y, [f"{a} - {b}" for a, b in zip(g, h)])
    ax.set_xlabel(f"{what} (simultaneous {int(round(100 * est.confidence))}% intervals)")
    return fig


def over_time(estimates, group, metric=None, ax=None):
    """One group's estimate per period (a list of Estimates, Collector.periods): the metric's
    mean (tuple mechanisms) or the group's AUC (roc_hist with groups), with its interval."""
    fig, ax = _axes(ax, f"group {group} per period")
    xs, ys, lo, hi = [], [], [], []
    for e in estimates:
        if e.json.get("roc_groups"):
            t = e.auc
            col = "auc"
        else:
            t = e.groups
            t = t[t["metric"] == (metric or t["metric"].iloc[0])]
            col = "mean"
        key = "group_name" if isinstance(group, str) else "group"
        row = t[t[key] == group]
        if row.empty or row[col].isna().all():
            continue
        xs.append(e.period_from)
        ys.append(float(row[col].iloc[0]))
        lo.append(float(row["ci_lo"].iloc[0]))
        hi.append(float(row["ci_hi"].iloc[0]))
    if not xs:
        raise ValueError(f"no period has an estimate for group {group!r}")
    ax.errorbar(xs, ys, yerr=[[y - a for y, a in zip(ys, lo)], [b - y for y, b in zip(ys, hi)]],
                fmt="o-", capsize=3)
    ax.set_xlabel("period")
    return fig
