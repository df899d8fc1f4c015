#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Plots of the disparity reproduction (Juarez & Korolova 2022) from the CSVs that
`dpm-repro disparity --out DIR` writes. Usage: /usr/bin/python3 host-sim/plot/disparity.py DIR

Writes into DIR:
  disparity_mse_vs_eps.png     gap MSE against eps (Fig. 1/2 analogue): analytic bands over the
                               second moment nu^2 and the simulated points, paper vs SDK splits
  disparity_table2_error.png   Table 2: mean |gap error| against eps, ours beside the paper's
  disparity_fig4_variance.png  Fig. 4: empirical variance of the group mean against the number
                               of runs, converging to Eq. 20 / Eq. 19
  disparity_groups_ci.png      per-group estimates with 95% CIs for one run

Needs only Debian's python3-matplotlib (Agg backend, no display)."""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

MECH_NAME = {"R": "M_R", "L": "M_L"}
SPLIT_STYLE = {
    "paper": {"color": "tab:orange", "marker": "s",
              "label": "paper split (NOT the stated eps)"},
    "sdk": {"color": "tab:blue", "marker": "o", "label": "SDK split (correct)"},
}


def read_csv(out_dir, name):
    with open(os.path.join(out_dir, name), newline="") as f:
        return list(csv.DictReader(f))


def floats(rows, key):
    return [float(r[key]) for r in rows]


def select(rows, **match):
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def finish(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("plot: wrote", path)


def devices_label(table2):
    k = int(table2[0]["K"])
    return "K = 1e%d" % round(math.log10(k)) if k > 0 else "K = ?"


def plot_mse_vs_eps(out_dir, curves, table2):
    """Fig. 1/2 analogue for the Table 2 population: band between the best and worst nu^2,
    the population's own nu^2 as a line, the simulated mean squared gap errors as points."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, mech in zip(axes, ("R", "L")):
        for split, style in SPLIT_STYLE.items():
            rows = select(curves, split=split, mech=mech)
            eps = floats(rows, "eps")
            lo, hi = floats(rows, "mse_lower"), floats(rows, "mse_upper")
            ax.fill_between(eps, [min(a, b) for a, b in zip(lo, hi)],
                            [max(a, b) for a, b in zip(lo, hi)], color=style["color"],
                            alpha=0.25, linewidth=0)
            ax.plot(eps, floats(rows, "mse_population"), color=style["color"], linewidth=1.2,
                    label=style["label"] + ": Eq. 19/20")
            pts = select(table2, split=split, mech=mech)
            ax.plot(floats(pts, "eps"), floats(pts, "emp_mse"), linestyle="none",
                    marker=style["marker"], color=style["color"], markeredgecolor="black",
                    label=style["label"] + ": simulated")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("eps")
        ax.set_title("%s, %s, 25/87 male (band: nu^2 bounds)" % (MECH_NAME[mech],
                                                                 devices_label(table2)))
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("MSE of the gap, [0, 1] metric scale")
    axes[1].legend(fontsize=8, loc="lower left")
    finish(fig, out_dir, "disparity_mse_vs_eps.png")


def plot_table2_error(out_dir, curves, table2):
    """Mean |gap error| against eps: ours (mean and sd over the runs), the paper's Table 2
    values (scaled to our K if it differs from the paper's 1e7) and the normal-theory
    expectation sqrt(2/pi) sqrt(MSE)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    k_ours = float(table2[0]["K"])
    k_paper = float(table2[0]["paper_K"])
    paper_scale = math.sqrt(k_paper / k_ours)
    for ax, mech in zip(axes, ("R", "L")):
        for split, style in SPLIT_STYLE.items():
            rows = select(curves, split=split, mech=mech)
            expect = [math.sqrt(2.0 / math.pi * m) for m in floats(rows, "mse_population")]
            ax.plot(floats(rows, "eps"), expect, color=style["color"], linewidth=1.0,
                    alpha=0.8, label=style["label"] + ": expected")
            pts = select(table2, split=split, mech=mech)
            mean, sd = floats(pts, "mean_abs_err"), floats(pts, "sd_abs_err")
            low = [min(s, 0.95 * m) for m, s in zip(mean, sd)]  # keep the bar on a log axis
            ax.errorbar(floats(pts, "eps"), mean, yerr=[low, sd], linestyle="none",
                        marker=style["marker"], color=style["color"], markeredgecolor="black",
                        capsize=3, label=style["label"] + ": ours (mean, sd)")
        paper = select(table2, split="paper", mech=mech)
        label = "paper's Table 2 (opt. columns)" + ("" if paper_scale == 1.0 else
                                                    " x sqrt(1e7/K) = x%.3g" % paper_scale)
        ax.plot(floats(paper, "eps"), [v * paper_scale for v in floats(paper,
                                                                       "paper_mean_abs_err")],
                linestyle="none", marker="x", markersize=9, color="black", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("eps")
        ax.set_title("Table 2: %s, %s, %s runs" % (MECH_NAME[mech], devices_label(table2),
                                                   table2[0]["runs"]))
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("mean |gap error|, [0, 1] metric scale")
    axes[1].legend(fontsize=7.5, loc="lower left")
    finish(fig, out_dir, "disparity_table2_error.png")


def plot_fig4(out_dir, fig4):
    """Empirical MSE of the group mean after N runs, and the theoretical value."""
    configs = []
    for r in fig4:
        if r["config"] not in configs:
            configs.append(r["config"])
    fig, axes = plt.subplots(1, len(configs), figsize=(4.2 * len(configs), 3.9))
    for ax, name in zip(axes if len(configs) > 1 else [axes], configs):
        rows = select(fig4, config=name)
        runs, emp = floats(rows, "runs"), floats(rows, "empirical")
        theory = float(rows[0]["theory"])
        ax.plot(runs, emp, marker="o", color="tab:blue", label="empirical")
        ax.axhline(theory, color="tab:red", linestyle="--", label="Eq. 19/20: %.4f" % theory)
        ax.set_xscale("log")
        ax.set_xlabel("runs")
        ax.set_title(name.replace(" (", "\n("), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    (axes[0] if len(configs) > 1 else axes).set_ylabel("MSE of the group mean (value scale)")
    finish(fig, out_dir, "disparity_fig4_variance.png")


def plot_groups(out_dir, groups):
    """One run: each group's estimated mean TPR with its 95% CI, and the truth."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for ax, mech in zip(axes, ("R", "L")):
        rows = select(groups, mech=mech)
        x = [int(r["group"]) for r in rows]
        est = floats(rows, "estimate")
        lo = [e - v for e, v in zip(est, floats(rows, "ci_lo"))]
        hi = [v - e for e, v in zip(est, floats(rows, "ci_hi"))]
        ax.errorbar(x, est, yerr=[lo, hi], linestyle="none", marker="o", capsize=5,
                    color="tab:blue", label="estimate, 95% CI")
        ax.plot(x, floats(rows, "true"), linestyle="none", marker="D", color="black",
                markerfacecolor="none", markersize=8, label="true mean TPR")
        k = int(rows[0]["K"])
        ax.set_title("%s (SDK split), eps = 1, K = 1e%d, one run" % (
            "M_R" if mech == "R" else "M_L k=2", round(math.log10(k))))
        ax.set_xticks(x)
        ax.set_xticklabels(["%d\nn=%d" % (g, int(float(r["n"]))) for g, r in zip(x, rows)])
        ax.set_xlabel("group (n = devices in it)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("mean TPR of the group's devices")
    finish(fig, out_dir, "disparity_groups_ci.png")


def main(argv):
    if len(argv) != 2:
        print("usage: disparity.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = argv[1]
    curves = read_csv(out_dir, "disparity_mse_curves.csv")
    table2 = read_csv(out_dir, "disparity_table2.csv")
    plot_mse_vs_eps(out_dir, curves, table2)
    plot_table2_error(out_dir, curves, table2)
    plot_fig4(out_dir, read_csv(out_dir, "disparity_fig4.csv"))
    plot_groups(out_dir, read_csv(out_dir, "disparity_groups.csv"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
