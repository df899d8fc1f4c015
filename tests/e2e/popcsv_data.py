#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Seeded CSV populations for `population = csv(PATH)` (host-sim/sim/README.md, "Your own data"),
and their truths computed here, independently of dpm-sim.

    python3 tests/e2e/popcsv_data.py host-sim/scenarios/own-data.csv

writes the example of host-sim/scenarios/own-data.scn (seed 34). A device holds 1..8 examples;
a group g has binormal scores (positives N(mu_g, 1), negatives N(0, 1), score = Phi(x - mu_g/2)
rounded to 4 decimals) and base rate pi_g; rows are shuffled, so a device's rows are not
adjacent."""
import bisect
import math
import random
import sys

GROUPS = (("north", 0.5, 0.85, 0.35), ("south", 0.3, 0.75, 0.30), ("east", 0.2, 0.65, 0.45))


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def phi_inv(p):
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if phi(mid) < p else (lo, mid)
    return (lo + hi) / 2


def rows(seed=34, devices=300, groups=GROUPS, most=8, prediction=False):
    """[(device_id, score, label, group[, prediction])] from a seeded generator."""
    r = random.Random(seed)
    out = []
    sizes = [round(devices * share) for _, share, _, _ in groups]
    sizes[0] += devices - sum(sizes)
    dev = 0
    for (name, _, auc, base), n in zip(groups, sizes):
        mu = math.sqrt(2.0) * phi_inv(auc)
        for _ in range(n):
            dev += 1
            for _ in range(r.randint(1, most)):
                label = 1 if r.random() < base else 0
                x = r.gauss(mu if label else 0.0, 1.0)
                score = round(phi(x - mu / 2), 4)
                row = ["d%04d" % dev, "%.4f" % score, str(label), name]
                if prediction:
                    row.append(str(r.randint(0, 1)))
                out.append(row)
    r.shuffle(out)
    return out


def write(path, data, header=("device_id", "score", "label", "group")):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in data:
            f.write(",".join(row) + "\n")


def truths(data, threshold=0.5):
    """Per group: mean TPR / FPR over the devices that report them together (a tpr, fpr tuple:
    devices with a positive and a negative), and the pooled unbinned AUC (ties one half),
    computed from the rows; 'all' for the AUC over every group."""
    dev = {}
    for row in data:
        dev.setdefault(row[0], []).append(row)
    per = {}
    for rs in dev.values():
        g = rs[0][3]
        tp = sum(1 for x in rs if x[2] == "1" and pred(x, threshold))
        npos = sum(1 for x in rs if x[2] == "1")
        fp = sum(1 for x in rs if x[2] == "0" and pred(x, threshold))
        nneg = len(rs) - npos
        e = per.setdefault(g, {"tpr": [], "fpr": []})
        if npos and nneg:
            e["tpr"].append(tp / npos)
            e["fpr"].append(fp / nneg)
    out = {g: {m: sum(v) / len(v) for m, v in e.items() if v} for g, e in per.items()}
    for g in list(out) + ["all"]:
        ex = [(float(x[1]), x[2] == "1") for x in data if g == "all" or x[3] == g]
        out.setdefault(g, {})["auc"] = auc(ex)
    return out


def pred(row, threshold):
    return row[4] == "1" if len(row) > 4 else float(row[1]) >= threshold


def auc(ex):
    pos = sorted(s for s, l in ex if l)
    neg = sorted(s for s, l in ex if not l)
    wins = 0.0
    for s in pos:
        lo = bisect.bisect_left(neg, s)
        hi = bisect.bisect_right(neg, s)
        wins += lo + 0.5 * (hi - lo)
    return wins / (len(pos) * len(neg))


if __name__ == "__main__":
    write(sys.argv[1], rows())
