#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""host-sim/plot/ustat.py draws its three PNGs from a ustat.json holding the cells it reads
(bins_mse_k, bins_kstar, rate_n, tree_error, bins_error: made up here, the shapes `dpm-sim repro
ustat` writes); negative control: a ustat.json without them makes it fail. TAP."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "host-sim", "plot", "ustat.py")
PNGS = ("ustat_bins_mse_k.png", "ustat_rate_n.png", "ustat_fig3.png")


def cell(table, row, col, ours, ref=None):
    return {"table": table, "row": row, "col": col, "ours": ours, "ref": ref}


def cells():
    out = []
    for n in (1000, 4000):
        for eps in (0.5, 1):
            for k in (2, 4, 8, 16):
                out.append(cell("bins_mse_k", f"n={n} eps={eps:g}", f"k={k}",
                                (k / 4 + 4 / k) / (n * eps)))
        out.append(cell("rate_n", f"n={n}", "bins: min MSE over k (eps=1)", 1 / n))
        out.append(cell("rate_n", f"n={n}", "1/sqrt(n) (Corollary 1's rate, L=1)", n ** -0.5))
        out.append(cell("rate_n", f"n={n}", "tree: MSE (d=2^8, eps=1)", 10 / n, 100 / n))
    out.append(cell("bins_kstar", "all interior minima", "c (estimates sqrt(L))", 0.4))
    for d in (4, 8):
        for eps in (0.5, 1, 2):
            out.append(cell("tree_error", f"d=2^{d}", f"eps={eps:g}", 0.1 / eps))
    for k in (16, 256):
        for eps in (0.5, 1):
            out.append(cell("bins_error", f"k={k}", f"eps={eps:g}", k / 100 / eps))
    return out


def run(d, content):
    with open(os.path.join(d, "ustat.json"), "w") as f:
        json.dump({"cells": content}, f)
    return subprocess.run(["/usr/bin/python3", SCRIPT, d], capture_output=True, text=True,
                          timeout=120)


def main():
    n = failed = 0

    def ok(cond, what, diag=""):
        nonlocal n, failed
        n += 1
        failed += not cond
        print(f"{'ok' if cond else 'not ok'} {n} - {what}", flush=True)
        if not cond:
            for line in str(diag).splitlines()[:20]:
                print(f"# {line}")

    with tempfile.TemporaryDirectory() as d:
        r = run(d, cells())
        sizes = [os.path.getsize(os.path.join(d, p)) if os.path.exists(os.path.join(d, p)) else 0
                 for p in PNGS]
        ok(r.returncode == 0 and all(s > 1000 for s in sizes),
           "ustat.py writes its three PNGs (over 1000 bytes each)", r.stdout + r.stderr)
    with tempfile.TemporaryDirectory() as d:
        r = run(d, [c for c in cells() if c["table"] != "bins_mse_k"])
        ok(r.returncode != 0, "negative control: without the bins_mse_k cells it fails")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
