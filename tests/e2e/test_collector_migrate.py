#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Databases of every released schema open and migrate (issue 20 item 3, issue 19 item 7), TAP.

tests/vectors/db/RELEASE/ holds, per release, a database its collector wrote (sqlite.sql, a
dump), its campaigns file and the estimates that collector answered (estimates.json); lines
are only ever added to tests/vectors/db/MANIFEST. For each: the dump is loaded into a new file,
today's collector opens it, migrates it once (the sums back-filled from the stored reports) and
must answer the same estimates (every count exactly, every number to 1e-9 relative), keep
de-duplicating its reports, and leave a database `dpm-collector verify` finds consistent. A
second start migrates nothing. Then: a database of a newer schema is refused with a clear
message, and `dpm-collector migrate` upgrades a copy without a collector running. (PostgreSQL:
test_collector_pg.py; no release has shipped a PostgreSQL schema before this one.)"""
import json
import math
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import COLLECTOR, ROOT, Harness, Tap, batch_of, load_pb2, post_batch  # noqa: E402

VECTORS = os.path.join(ROOT, "tests", "vectors", "db")
SCHEMA_NOW = 3  # PRAGMA user_version this collector writes


def releases():
    with open(os.path.join(VECTORS, "MANIFEST")) as f:
        return [line.split()[0] for line in f if line.strip() and not line.startswith("#")]


def load_dump(release, path):
    con = sqlite3.connect(path)
    with open(os.path.join(VECTORS, release, "sqlite.sql")) as f:
        con.executescript(f.read())
    con.close()


def close(a, b, rel=1e-9):
    """Equal JSON values: numbers to rel (sums of squares are summed in another order now)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and close(v, b[k], rel) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return (a is None) == (b is None) and (a is None or
                                               math.isclose(a, b, rel_tol=rel, abs_tol=1e-12))
    return a == b


# What 0.1.0 answered and must still be answered the same (keys of 0.1.0's estimate JSON).
OLD_TOP = ("campaign", "mechanism", "groups", "reports", "rejects", "rejects_unattributed",
           "lost_reports")
OLD_GROUP = ("group", "reports", "size", "mean", "var", "ci95", "max_shift_one_report")
OLD_GAP = ("g", "h", "diff", "var", "ci95")
OLD_ROC = ("bins", "pos_sum", "neg_sum", "valid", "positives", "negatives", "auc",
           "auc_var_noise", "auc_var_sampling", "auc_ci", "auc_ci_total", "tpr", "fpr")


def same_value(k, old, new):
    """old[k] and new[k] agree: equal, except an interval the new answer flags few_events (issue
    28: few randomization events get the Poisson-aware interval), which must contain the old."""
    if k == "ci95" and "few_events" in (new.get("ci_flags") or []):
        o, n = old.get(k), new.get(k)
        return o is not None and n is not None and n[0] <= o[0] + 1e-12 and o[1] <= n[1] + 1e-12
    return close(old[k], new.get(k))


def same_as_old(old, new):
    """The differences between an old estimate and the new one, on the old keys."""
    diffs = []
    for k in OLD_TOP:
        if not close(old.get(k), new.get(k)):
            diffs.append((k, old.get(k), new.get(k)))
    for mo, mn in zip(old.get("metrics", []), new.get("metrics", [])):
        for go, gn in zip(mo["groups"], mn["groups"]):
            diffs += [(f"group {go['group']} {k}", go[k], gn.get(k)) for k in OLD_GROUP
                      if not same_value(k, go, gn)]
        for do, dn in zip(mo["disparities"], mn["disparities"]):
            diffs += [(f"gap {do['g']}-{do['h']} {k}", do[k], dn.get(k)) for k in OLD_GAP
                      if not same_value(k, do, dn)]
    if "roc" in old:
        diffs += [(f"roc {k}", old["roc"].get(k), new["roc"].get(k)) for k in OLD_ROC
                  if not close(old["roc"].get(k), new["roc"].get(k))]
    return diffs


def check_release(t, release):
    with open(os.path.join(VECTORS, release, "campaigns.txt")) as f:
        campaigns = f.read()
    with open(os.path.join(VECTORS, release, "estimates.json")) as f:
        old = json.load(f)
    h = Harness(campaigns=campaigns)
    try:
        load_dump(release, h.db)
        version = h.db_query("PRAGMA user_version")[0][0]
        rows = h.db_query("SELECT COUNT(*) FROM reports")[0][0]
        h.start()
        log = open(h.log.name).read()
        t.ok(f'"event": "schema_migrated", "backend": "sqlite", "from": {version}, "to": '
             f'{SCHEMA_NOW}' in log,
             f"{release}: its database (schema {version}, {rows} reports) opens and is migrated "
             f"to schema {SCHEMA_NOW}", log[-600:])
        for cid, est_old in sorted(old.items(), key=lambda kv: int(kv[0])):
            body = h.request("GET", f"/v1/campaigns/{cid}/estimate")[2]
            new = json.loads(body)
            diffs = same_as_old(est_old, new)
            t.ok(not diffs, f"{release}: campaign {cid} ({est_old['mechanism']}, "
                 f"{est_old['reports']} reports): the same estimate as {release} answered",
                 diffs[:5])
        one = json.loads(json.dumps(next(iter(old.values()))))
        one["reports"] += 1
        t.ok(same_as_old(one, next(iter(old.values()))),
             "negative control: an estimate one report off is told apart")
        pb = load_pb2(h.tmp)
        raw = h.db_query("SELECT raw FROM reports WHERE device = 'token:device-b'")
        if raw:
            r = pb.Report()
            r.ParseFromString(raw[0][0])
            st, resp, _ = post_batch(h, pb, batch_of(pb, r), token="device-b")
            t.ok(st == 200 and resp.duplicates == 1 and resp.accepted == 0,
                 f"{release}: a stored report sent again is still a duplicate", (st, resp))
        t.ok(h.stop() == 0, "clean stop")
        ok, detail = h.consistent()
        t.ok(ok and h.db_query("PRAGMA user_version")[0][0] == SCHEMA_NOW
             and h.db_query("SELECT COUNT(*) FROM reports")[0][0] == rows + 0,
             f"{release}: nothing lost ({rows} reports), the back-filled sums equal the reports' "
             f"and integrity_check is ok", detail)
        h.start()
        h.stop()
        t.ok('"schema_migrated"' not in open(h.log.name).read(),
             f"{release}: the next start migrates nothing (the back-fill ran once)")
    finally:
        h.cleanup()


def newer_and_migrate(t):
    release = releases()[-1]
    with open(os.path.join(VECTORS, release, "campaigns.txt")) as f:
        campaigns = f.read()
    h = Harness(campaigns=campaigns)
    try:
        load_dump(release, h.db)
        rc, out = h.admin("migrate")
        rc2, out2 = h.admin("migrate")
        t.ok(rc == 0 and f"migrated schema version 2 to {SCHEMA_NOW}" in out and rc2 == 0
             and "nothing to do" in out2,
             f"dpm-collector migrate (no collector running): {out.strip()}; again: "
             f"{out2.strip()}")
        con = sqlite3.connect(h.db)
        con.execute(f"PRAGMA user_version = {SCHEMA_NOW + 1}")
        con.commit()
        con.close()
        p = subprocess.run(h.args(), capture_output=True, text=True, timeout=30)
        t.ok(p.returncode == 2 and f"schema version {SCHEMA_NOW + 1} is newer than this "
             f"collector's ({SCHEMA_NOW})" in p.stderr,
             "a database of a newer schema is refused (exit 2), saying so", p.stderr[-400:])
        rc, out = h.admin("verify")
        t.ok(rc == 1 and "newer" in out, "... and so is it by the maintenance commands", out)
        con = sqlite3.connect(h.db)
        con.execute("PRAGMA user_version = 1")
        con.commit()
        con.close()
        p = subprocess.run(h.args(), capture_output=True, text=True, timeout=30)
        t.ok(p.returncode == 2 and "no migration from it" in p.stderr,
             "a schema version that was never released is refused", p.stderr[-300:])
        p = subprocess.run([COLLECTOR, "migrate", "--db", "mysql://x"], capture_output=True,
                           text=True, timeout=10)
        t.ok(p.returncode == 1 and "postgresql://" in p.stderr,
             "an unknown --db scheme is refused with the forms it takes", p.stderr)
    finally:
        h.cleanup()


def main():
    t = Tap()
    try:
        rels = releases()
        t.ok(rels and os.path.exists(os.path.join(VECTORS, rels[0], "sqlite.sql")),
             f"released database vectors: {', '.join(rels)}")
        for r in rels:
            check_release(t, r)
        newer_and_migrate(t)
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
