#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Plots of the Bell et al. reproduction from the cells `dpm-sim repro ustat --out DIR` writes
(DIR/ustat.json). Usage: /usr/bin/python3 host-sim/plot/ustat.py DIR

Writes into DIR:
  ustat_bins_mse_k.png   ustat_bins: MSE against k per n, one panel per eps, Corollary 1's
                         n^1/4 sqrt(eps) marked (and c times it, c fitted from the minima)
  ustat_rate_n.png       MSE against n at eps = 1: ustat_bins at its best k beside 1/sqrt(n),
                         ustat_tree (d = 2^8) beside Theorem 3's bound
  ustat_fig3.png         Figure 3's trends: the tree's mean |error| against d per eps, and
                         Algorithm 1 at k = 16 and 256

Needs only Debian's python3-matplotlib (Agg backend, no display)."""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def cells_of(out_dir):
    """{table: [cell, ...]} of DIR/ustat.json."""
    with open(os.path.join(out_dir, "ustat.json")) as f:
        cells = json.load(f)["cells"]
    by = {}
    for c in cells:
        by.setdefault(c["table"], []).append(c)
    return by


def num(text, key):
    """The number after key= in text ("n=6693 eps=1", "k=8", "d=2^4" gives 16 for d)."""
    m = re.search(rf"{key}=([0-9.e^+-]+)", text)
    if m is None:
        return None
    v = m.group(1)
    if "^" in v:
        base, exp = v.split("^")
        return float(base) ** float(exp)
    return float(v)


def log_axes(ax, xlabel, ylabel, title, xbase=10, legend=8):
    """Log-log axes with their labels, title and legend."""
    ax.set_xscale("log", base=xbase)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend)


def plot_lines(ax, series, fmt, label):
    """One line per key of series ({key: [(x, y), ...]}, by key), its points in x order; fmt and
    label are functions of the key."""
    for key, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], fmt(key), label=label(key))


def plot_bins_k(by, out_dir):
    lines = {}
    for c in by.get("bins_mse_k", []):
        if c["ours"] is not None:
            key = (num(c["row"], "eps"), num(c["row"], "n"))
            lines.setdefault(key, []).append((num(c["col"], "k"), c["ours"]))
    cfit = [c["ours"] for c in by.get("bins_kstar", []) if c["col"].startswith("c (")]
    eps_list = sorted({e for e, _ in lines})
    if not eps_list:
        raise SystemExit("ustat.py: no bins_mse_k cells in ustat.json")
    fig, axes = plt.subplots(1, len(eps_list), figsize=(5 * len(eps_list), 4.5), squeeze=False)
    for ax, eps in zip(axes[0], eps_list):
        for (e, n), pts in sorted(lines.items()):
            if e != eps:
                continue
            pts.sort()
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"n = {n:.0f}")
            kstar = n ** 0.25 * eps ** 0.5
            ax.axvline(kstar, color=line.get_color(), ls=":", alpha=0.7)
            if cfit and cfit[0] is not None:
                ax.axvline(cfit[0] * kstar, color=line.get_color(), ls="--", alpha=0.7)
        log_axes(ax, "k (bins)", "MSE of the AUC (vs exact)", f"ustat_bins, eps = {eps:g}", xbase=2)
    fig.suptitle("Corollary 1: U-shaped in k; dotted n^1/4 sqrt(eps), dashed c times it"
                 + (f" (c = {cfit[0]:.2f})" if cfit and cfit[0] is not None else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "ustat_bins_mse_k.png"), dpi=110)
    plt.close(fig)


def plot_rate_n(by, out_dir):
    series = {}
    for c in by.get("rate_n", []):
        n = num(c["row"], "n")
        if c["ours"] is None or n is None:
            continue
        if c["col"].startswith("tree"):
            series.setdefault("ustat_tree (d = 2^8): empirical MSE", []).append((n, c["ours"]))
            if c["ref"] is not None:
                series.setdefault("Theorem 3 bound", []).append((n, c["ref"]))
        elif c["col"].startswith("bins"):
            series.setdefault("ustat_bins: MSE at its best k", []).append((n, c["ours"]))
        elif c["col"].startswith("1/sqrt"):
            series.setdefault("1/sqrt(n) (Corollary 1's rate)", []).append((n, c["ours"]))
    if not series:
        raise SystemExit("ustat.py: no rate_n cells in ustat.json")
    fig, ax = plt.subplots(figsize=(7, 5))
    style = {"Theorem 3 bound": "--", "1/sqrt(n) (Corollary 1's rate)": ":"}
    plot_lines(ax, series, lambda name: style.get(name, "o-"), lambda name: name)
    log_axes(ax, "n (examples, 9.4% positives)", "MSE of the AUC",
             "MSE against n at eps = 1 (Beta(3,2) / Beta(2,3) scores)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "ustat_rate_n.png"), dpi=110)
    plt.close(fig)


def plot_fig3(by, out_dir):
    tree, bins = {}, {}
    for c in by.get("tree_error", []):
        if c["ours"] is not None:
            tree.setdefault(num(c["col"], "eps"), []).append((num(c["row"], "d"), c["ours"]))
    for c in by.get("bins_error", []):
        if c["ours"] is not None:
            bins.setdefault(num(c["row"], "k"), []).append((num(c["col"], "eps"), c["ours"]))
    if not tree:
        raise SystemExit("ustat.py: no tree_error cells in ustat.json")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
    plot_lines(a1, tree, lambda eps: "o-", lambda eps: f"eps = {eps:g}")
    log_axes(a1, "d (leaves)", "mean |AUC error| (20 runs)", "ustat_tree: robust to d (Figure 3)",
             xbase=2)
    by_eps = {}
    for eps, pts in tree.items():
        for d, err in pts:
            by_eps.setdefault(d, []).append((eps, err))
    plot_lines(a2, by_eps, lambda d: "o-", lambda d: f"tree, d = {d:.0f}")
    plot_lines(a2, bins, lambda k: "s--", lambda k: f"Algorithm 1, k = {k:.0f}")
    log_axes(a2, "eps", "mean |AUC error| (20 runs)",
             "plateau beyond eps ~ 2; Algorithm 1 grows with k", legend=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "ustat_fig3.png"), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        print("usage: ustat.py DIR", file=sys.stderr)
        return 2
    by = cells_of(sys.argv[1])
    plot_bins_k(by, sys.argv[1])
    plot_rate_n(by, sys.argv[1])
    plot_fig3(by, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
