#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dpm-collector estimate`: an analyst reads a store's estimates without a collector's
endpoint (issue 34 item 3), TAP. On SQLite here and on PostgreSQL from test_collector_pg.py
(run(t, pg)).

A collector is filled by dpm-sim's network mode with three campaigns. While it serves, the
reader's JSON must be the endpoint's byte for byte (the same code from the same sums) for
every campaign, for one period and for another confidence. Reading writes nothing: a campaign
the file adds but the store never saw reads as empty and is not recorded; the SQLite file's
bytes are unchanged. A campaigns file whose parameters differ from the stored ones, a schema
this reader does not read, a missing database and bad options are refused with what to do."""
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import SIM, Tap  # noqa: E402
from test_collector import COLLECTOR, Harness  # noqa: E402

SCENARIO = """\
[scenario]
name = read
devices = 1500
runs = 1
seed = 11
[population]
examples = 6
[group young]
share = 0.6
scores = binormal(auc=0.84, base_rate=0.4)
[group old]
share = 0.4
scores = binormal(auc=0.7, base_rate=0.4)
[campaign tpr]
id = 1
mechanism = tuple_mr
metrics = tpr
eps = 2
[campaign auc]
id = 3
mechanism = roc_hist
eps = 2
bins = 8
[campaign auc_by_group]
id = 9
mechanism = roc_hist_groups
eps = 4
bins = 6
"""
NEW_CAMPAIGN = "\n[campaign]\nid = 77\nmechanism = roc_hist\neps = 1\nbins = 4\n"


def estimate(h, *args, campaigns=None):
    p = subprocess.run([COLLECTOR, "estimate", "--db", h.db, "--campaigns",
                        campaigns or h.campaigns, *args], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def no_now(text):
    """period_now follows the clock: the endpoint's and the reader's may be a second apart."""
    return re.sub(r'"period_now": \d+', '"period_now": N', text)


def stored_campaigns(h):
    return sorted(r[0] for r in h.db_query("SELECT id FROM campaigns"))


def run(t, pg=None):
    h = Harness(pg=pg)
    kind = "PostgreSQL" if pg is not None else "SQLite"
    try:
        scn = os.path.join(h.tmp, "read.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True, check=True).stdout
        with open(h.campaigns, "w") as f:
            f.write(camp)
        h.start()
        r = subprocess.run([SIM, "--scenario", scn, "--mode", "network", "--collector",
                            f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "2", "--batch",
                            "50", "--out", os.path.join(h.tmp, "net"), "--no-plot", "--quiet",
                            "--token", h.creds.files["harness"]], capture_output=True,
                           text=True, timeout=300)
        t.ok(r.returncode == 0, f"{kind}: dpm-sim's network mode filled a collector",
             r.stdout[-800:] + r.stderr[-800:])
        # while the collector serves: the endpoint's bytes
        for query, args in (("", []), ("?period=0", ["--period", "0"]),
                            ("?from=0&to=3&confidence=0.9",
                             ["--from", "0", "--to", "3", "--confidence", "0.9"])):
            same = []
            for cid in (1, 3, 9):
                st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate{query}")
                rc, out, err = estimate(h, "--campaign", str(cid), *args)
                same.append(st == 200 and rc == 0 and no_now(out) == no_now(body.decode()))
            t.ok(all(same), f"{kind}: the reader's JSON is the endpoint's byte for byte, "
                 f"campaigns 1, 3, 9, query {query or '(every period)'!r}, collector running",
                 f"{same} {err}")
        rc, out, err = estimate(h)
        arr = json.loads(out) if rc == 0 else []
        t.ok(rc == 0 and [e["campaign"] for e in arr] == [1, 3, 9]
             and all(e["reports"] > 0 for e in arr),
             f"{kind}: without --campaign, a JSON array of every campaign's estimate "
             f"({[e['reports'] for e in arr]} reports)", err)
        h.stop()

        before = stored_campaigns(h)
        digest = (hashlib.sha256(open(h.db, "rb").read()).hexdigest() if pg is None else None)
        more = os.path.join(h.tmp, "more.txt")
        with open(more, "w") as f:
            f.write(camp + NEW_CAMPAIGN)
        rc, out, err = estimate(h, "--campaign", "77", campaigns=more)
        e = json.loads(out) if rc == 0 else {}
        t.ok(rc == 0 and e.get("reports") == 0 and stored_campaigns(h) == before,
             f"{kind}: a campaign the store never saw reads as empty and is not recorded "
             f"(stored campaigns {before})", err + out[:300])
        if pg is None:
            t.ok(hashlib.sha256(open(h.db, "rb").read()).hexdigest() == digest,
                 "SQLite: reading leaves the database file's bytes unchanged")

        changed = os.path.join(h.tmp, "changed.txt")
        with open(changed, "w") as f:
            f.write(camp.replace("eps = 2\nbins = 8", "eps = 3\nbins = 8", 1))
        rc, out, err = estimate(h, campaigns=changed)
        t.ok(rc == 1 and out == "" and "campaign 3: the database holds its reports made with "
             "other parameters" in err and "campaigns file the collector served" in err,
             f"{kind}: a campaigns file with another eps is refused with what to do: "
             f"{err.strip()!r}")
        rc, out, err = estimate(h, "--period", "-1")
        t.ok(rc == 2 and "period must be a period number" in err,
             f"{kind}: a bad --period is a usage error: {err.splitlines()[0]!r}")
        rc, out, err = estimate(h, "--campaign", "5")
        t.ok(rc == 2 and "campaign 5 is not in" in err,
             f"{kind}: an unknown --campaign is a usage error: {err.splitlines()[0]!r}")
        rc, out, err = estimate(h, "--keep-periods", "2")
        t.ok(rc == 2 and "unknown option --keep-periods" in err,
             f"{kind}: another command's option is refused: {err.splitlines()[0]!r}")
        if pg is None:
            newer = os.path.join(h.tmp, "newer.db")
            shutil.copy(h.db, newer)
            con = sqlite3.connect(newer)
            con.execute("PRAGMA user_version = 9")
            con.close()
            p = subprocess.run([COLLECTOR, "estimate", "--db", newer, "--campaigns",
                                h.campaigns], capture_output=True, text=True, timeout=60)
            t.ok(p.returncode == 1 and "schema version 9 and this reader reads version 3" in
                 p.stderr and "with the dpm-collector that wrote it" in p.stderr,
                 f"SQLite: a newer schema is refused: {p.stderr.strip()!r}")
            p = subprocess.run([COLLECTOR, "estimate", "--db", h.db + ".missing",
                                "--campaigns", h.campaigns], capture_output=True, text=True,
                               timeout=60)
            t.ok(p.returncode == 1 and "no database file at" in p.stderr
                 and not os.path.exists(h.db + ".missing"),
                 f"SQLite: a missing database is not created: {p.stderr.strip()!r}")
        else:
            pg.sql(h.dbname, "UPDATE dpm_schema SET version = 9")
            rc, out, err = estimate(h)
            t.ok(rc == 1 and "schema version 9, and this reader reads version 1" in err,
                 f"PostgreSQL: a newer schema is refused: {err.strip()!r}")
            pg.sql(h.dbname, "UPDATE dpm_schema SET version = 1")
    finally:
        h.cleanup()


def main():
    t = Tap()
    t0 = time.monotonic()
    try:
        run(t)
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    print(f"# {time.monotonic() - t0:.1f} s")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
