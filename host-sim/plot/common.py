# SPDX-License-Identifier: Apache-2.0
"""Shared by the plot scripts of host-sim/plot (sim.py, roc.py): the error-against-eps / devices
sweep figure. Imported from the scripts' own directory (the first entry of sys.path when one of
them runs as a script). Needs only Debian's python3-matplotlib (Agg)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def draw_sweep(out_dir, lines, along_eps, name, ylabel, title, colors, series_label):
    """One figure of error against eps (along_eps) or against the number of devices, written to
    out_dir/name. lines: {(series, fixed): [(x, rmse, predicted sd), ...]}, fixed the device count
    (along eps) or the eps (along devices); series_label(series) names a line. Series with fewer
    than two points are left out; with none drawn the figure says there is no such sweep.
    title ends before "eps" / "the number of devices"."""
    fig, ax = plt.subplots(figsize=(7.5, 5))
    ax.set_prop_cycle(color=colors)
    drawn = 0
    for (series, fixed), pts in sorted(lines.items()):
        pts.sort()
        if len(pts) < 2:
            continue
        xs = [p[0] for p in pts]
        line, = ax.plot(xs, [p[1] for p in pts], "o-",
                        label=f"{series_label(series)}, {'K' if along_eps else 'eps'}={fixed:g}")
        ax.plot(xs, [p[2] for p in pts], "--", color=line.get_color(), alpha=0.7)
        drawn += 1
    if drawn == 0:
        ax.text(0.5, 0.5, f"no {'eps' if along_eps else 'devices'} sweep in this scenario",
                ha="center", va="center", transform=ax.transAxes)
    else:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    ax.set_xlabel("eps" if along_eps else "devices K")
    ax.set_ylabel(ylabel)
    ax.set_title(title + ("eps" if along_eps else "the number of devices"))
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
