#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Plots of a dpm-sim run, from the files `dpm-sim --out DIR` writes (summary.csv, runs.csv).
Usage: /usr/bin/python3 host-sim/plot/sim.py DIR

Writes into DIR:
  sim_error_vs_eps.png      RMSE of each campaign's disparities against eps (one line per
                            campaign, metric and device count), beside the predicted standard
                            deviation (dashed): needs an eps sweep (campaign eps = a, b, ...)
  sim_error_vs_devices.png  the same against the number of devices: needs a devices sweep
  sim_disparities.png       every disparity of run 0 with its confidence interval, beside the
                            truth, one panel per configuration (largest device count)
  sim_groups.png            per-group mean metric of run 0 with intervals, beside the truth
  roc_*.png                 roc_hist campaigns (DIR/roc.csv): host-sim/plot/roc.py
All values on the metric's [0, 1] scale. Needs only Debian's python3-matplotlib (Agg)."""
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from common import draw_sweep  # noqa: E402  (host-sim/plot/common.py)

MAX_PANELS = 6


def read_csv(out_dir, name):
    with open(os.path.join(out_dir, name), newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    return float(x) if x not in ("", None) else math.nan


def config_key(r):
    return (r["campaign"], r["split"], r["metric"])


def label_of(r):
    split = " (paper split)" if r["split"] == "paper" else ""
    return f"{r['campaign']} {r['mechanism']}{split} {r['metric']}"


def gap_rows(summary):
    """Mean over a configuration's gaps of RMSE and predicted sd, keyed by (config, devices, eps)."""
    acc = defaultdict(lambda: [0.0, 0.0, 0])
    meta = {}
    for r in summary:
        if r["kind"] != "gap":
            continue
        k = (config_key(r), int(r["devices"]), num(r["eps"]))
        a = acc[k]
        a[0] += num(r["rmse"]) ** 2
        a[1] += num(r["mean_sd"]) ** 2
        a[2] += 1
        meta[config_key(r)] = label_of(r)
    out = {k: (math.sqrt(v[0] / v[2]), math.sqrt(v[1] / v[2])) for k, v in acc.items()}
    return out, meta


def plot_sweep(out_dir, summary, along_eps):
    rows, meta = gap_rows(summary)
    lines = defaultdict(list)
    for (cfg, devices, eps), (rmse, sd) in rows.items():
        fixed = devices if along_eps else eps
        lines[(cfg, fixed)].append((eps if along_eps else devices, rmse, sd))
    name = "sim_error_vs_eps.png" if along_eps else "sim_error_vs_devices.png"
    draw_sweep(out_dir, lines, along_eps, name,
               "RMSE of the disparities (solid); predicted sd (dashed)",
               "Disparity error against ",
               plt.cm.tab20.colors,  # more lines than the default 10 colours
               meta.__getitem__)


def run0_panels(runs, kind):
    """Rows of run 0 for the largest device count, grouped by configuration (eps included)."""
    big = max(int(r["devices"]) for r in runs)
    panels = defaultdict(list)
    for r in runs:
        if r["run"] == "0" and r["kind"] == kind and int(r["devices"]) == big:
            panels[(label_of(r), r["eps"])].append(r)
    return big, list(panels.items())[:MAX_PANELS]


def plot_intervals(out_dir, runs, kind, name, title):
    big, panels = run0_panels(runs, kind)
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 1.2 + 1.6 * len(panels)),
                             squeeze=False)
    for ax, ((label, eps), rows) in zip(axes[:, 0], panels):
        ys = range(len(rows))
        est = [num(r["estimate"]) for r in rows]
        lo = [e - num(r["ci_lo"]) if not math.isnan(e) else 0 for e, r in zip(est, rows)]
        hi = [num(r["ci_hi"]) - e if not math.isnan(e) else 0 for e, r in zip(est, rows)]
        ax.errorbar(est, ys, xerr=[lo, hi], fmt="o", color="tab:blue", capsize=3,
                    label="estimate, interval")
        ax.plot([num(r["truth"]) for r in rows], ys, "x", color="tab:red", label="truth")
        ax.set_yticks(list(ys))
        ax.set_yticklabels([r["name"] for r in rows], fontsize=7)
        ax.set_title(f"{label}, eps={eps}", fontsize=9)
        if kind == "gap":
            ax.axvline(0.0, color="gray", lw=0.8)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{title} (run 0, K = {big})", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    summary = read_csv(out_dir, "summary.csv")
    runs = read_csv(out_dir, "runs.csv")
    if not summary or not runs:
        print("sim.py: empty results", file=sys.stderr)
        return 1
    if any(r["kind"] in ("gap", "group") for r in summary):
        plot_sweep(out_dir, summary, along_eps=True)
        plot_sweep(out_dir, summary, along_eps=False)
        plot_intervals(out_dir, runs, "gap", "sim_disparities.png",
                       "Disparities m_g - m_h with intervals")
        plot_intervals(out_dir, runs, "group", "sim_groups.png", "Group means with intervals")
        print(f"plots: {out_dir}/sim_error_vs_eps.png, sim_error_vs_devices.png, "
              f"sim_disparities.png, sim_groups.png")
    if os.path.exists(os.path.join(out_dir, "roc.csv")):
        # roc_hist campaigns: ROC with CI band, AUC error against eps and devices (roc.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import roc  # noqa: E402

        written = roc.plot_all(out_dir)
        print(f"plots: {out_dir}/" + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
