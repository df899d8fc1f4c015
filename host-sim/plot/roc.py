#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""ROC plots of a dpm-sim run with roc_hist campaigns, from the files `dpm-sim --out DIR` writes
(roc.csv, summary.csv). Usage: /usr/bin/python3 host-sim/plot/roc.py DIR
(host-sim/plot/sim.py calls it when DIR has a roc.csv).

Writes into DIR:
  roc_curve.png           per configuration (smallest device count, where the band is widest;
                          up to 6 panels): run 0's
                          estimated ROC with its pointwise 95% TPR band (dark) and simultaneous
                          (Bonferroni) band (light), the population's true binned ROC, and the
                          AUC's RMSE against the model's AUC and against the devices' binned AUC
  roc_auc_vs_eps.png      RMSE of the AUC across runs against the devices' binned AUC (the
                          mechanism's noise) against eps (one line per campaign and
                          device count), beside the predicted standard deviation (dashed):
                          needs an eps sweep
  roc_auc_vs_devices.png  the same against the number of devices: needs a devices sweep
Needs only Debian's python3-matplotlib (Agg)."""
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
    path = os.path.join(out_dir, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    return float(x) if x not in ("", None) else math.nan


def curves(roc_rows):
    """Rows of roc.csv grouped by (devices, campaign, eps), points in threshold order."""
    out = defaultdict(list)
    for r in roc_rows:
        out[(int(r["devices"]), r["campaign"], r["eps"])].append(r)
    for rows in out.values():
        rows.sort(key=lambda r: int(r["point"]))
    return out


def auc_rows(summary, kind):
    """kind "auc": against the model's AUC; "auc_binned": against the devices' binned AUC."""
    return {(int(r["devices"]), r["campaign"], r["eps"]): r for r in summary if r["kind"] == kind}


def plot_curves(out_dir, roc_rows, summary):
    cs = curves(roc_rows)
    if not cs:
        return False
    small = min(k[0] for k in cs)
    keys = sorted((k for k in cs if k[0] == small), key=lambda k: (k[1], num(k[2])))[:MAX_PANELS]
    model, binned = auc_rows(summary, "auc"), auc_rows(summary, "auc_binned")
    cols = min(3, len(keys))
    rows_n = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 4.2 * rows_n), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.axis("off")
    for ax, key in zip(axes.flat, keys):
        rows = cs[key]
        fpr = [num(r["fpr"]) for r in rows]
        tpr = [num(r["tpr"]) for r in rows]
        ax.fill_between(fpr, [num(r["tpr_lo_sim"]) for r in rows],
                        [num(r["tpr_hi_sim"]) for r in rows], color="tab:blue", alpha=0.15,
                        step=None, label="simultaneous band")
        ax.fill_between(fpr, [num(r["tpr_lo"]) for r in rows], [num(r["tpr_hi"]) for r in rows],
                        color="tab:blue", alpha=0.35, label="pointwise 95% band")
        ax.plot(fpr, tpr, "o-", color="tab:blue", ms=3, lw=1.2, label="estimate (run 0)")
        ax.plot([num(r["fpr_truth"]) for r in rows], [num(r["tpr_truth"]) for r in rows], "--",
                color="tab:red", lw=1.2, label="truth (binned)")
        ax.plot([0, 1], [0, 1], ":", color="gray", lw=0.8)
        m, b = model.get(key), binned.get(key)
        title = f"{key[1]} eps={key[2]} K={key[0]}"
        if m is not None and b is not None:
            title += f"\nAUC vs model {num(m['truth']):.4f}: RMSE {num(m['rmse']):.2g}" \
                     f"\nvs binned {num(b['truth']):.4f}: RMSE {num(b['rmse']):.2g}, " \
                     f"cover {100 * num(b['coverage']):.0f}%"
        ax.set_title(title, fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel("FPR")
        ax.set_ylabel("TPR")
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.suptitle("roc_hist: estimated ROC with CI band against the truth", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "roc_curve.png"), dpi=110)
    plt.close(fig)
    return True


def plot_sweep(out_dir, summary, along_eps):
    lines = defaultdict(list)
    for r in summary:
        if r["kind"] != "auc_binned":  # the mechanism's noise: the 1/(eps sqrt K) law
            continue
        devices, eps = int(r["devices"]), num(r["eps"])
        fixed = devices if along_eps else eps
        lines[(r["campaign"], fixed)].append((eps if along_eps else devices, num(r["rmse"]),
                                              num(r["mean_sd"])))
    if not lines:
        return False
    name = "roc_auc_vs_eps.png" if along_eps else "roc_auc_vs_devices.png"
    draw_sweep(out_dir, lines, along_eps, name, "RMSE of the AUC against the devices' binned AUC (solid); predicted sd (dashed)",
               "roc_hist: AUC error against ", plt.cm.tab10.colors, str)
    return True


def plot_all(out_dir):
    """Every ROC plot; returns the files written."""
    roc_rows = read_csv(out_dir, "roc.csv")
    summary = read_csv(out_dir, "summary.csv")
    written = []
    if plot_curves(out_dir, roc_rows, summary):
        written.append("roc_curve.png")
    if plot_sweep(out_dir, summary, along_eps=True):
        written.append("roc_auc_vs_eps.png")
    if plot_sweep(out_dir, summary, along_eps=False):
        written.append("roc_auc_vs_devices.png")
    return written


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    written = plot_all(sys.argv[1])
    if not written:
        print("roc.py: no roc_hist results in " + sys.argv[1], file=sys.stderr)
        return 1
    print(f"plots: {sys.argv[1]}/" + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
