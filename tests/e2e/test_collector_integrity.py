#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-collector's storage integrity (issue 12 item 6), TAP:
  - a damaged report index is found at start-up (PRAGMA integrity_check): the collector refuses
    to start (exit 2, the reason named); with the check turned off it starts, its commits fail
    and /healthz turns 503 with the reason (the failure the review found: /healthz said ok
    while 83 of 110 batches got 500);
  - a full file system (RLIMIT_FSIZE) fails a commit: 500 to the device, /healthz 503 and
    dpm_storage_healthy 0 in /metrics;
  - a schema-0 database (report_id unique on its own) is migrated in place to schema 3, its
    reports kept and summed (its campaigns start when their first report arrived); the 0.1.0
    schema (2) is tested in test_collector_migrate.py.
Negative controls: the same database before the damage starts and answers 200."""
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (Harness, Tap, batch_of, load_pb2, make_report, post_batch,  # noqa: E402
                            tuple_mr_template)

CAMPAIGNS = """\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
"""


def fill(h, pb, tpl, batches, size=100):
    """Post `batches` batches of fresh reports; the statuses."""
    return [post_batch(h, pb, batch_of(pb, *[make_report(pb, tpl, 1) for _ in range(size)]))[0]
            for _ in range(batches)]


def index_pages(db):
    con = sqlite3.connect(db)
    try:
        name = con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND "
                           "tbl_name = 'reports'").fetchone()[0]
        pages = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = ? AND "
                                           "pagetype = 'leaf'", (name,))]
        size = con.execute("PRAGMA page_size").fetchone()[0]
        return name, pages, size
    finally:
        con.close()


def main():
    t = Tap()
    h = None
    try:
        h = Harness(campaigns=CAMPAIGNS)
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)

        # ---- a damaged index ----------------------------------------------------------------
        h.start()
        codes = fill(h, pb, tpl, 20)
        t.ok(codes == [200] * 20, "2000 reports stored")
        t.ok(h.stop() == 0, "clean stop")
        h.start()
        st, _, body = h.request("GET", "/healthz")
        t.ok(st == 200, f"negative control: the intact database starts and /healthz is ok ({body})")
        h.stop()
        name, pages, size = index_pages(h.db)
        t.ok(len(pages) >= 4, f"the index {name} has {len(pages)} leaf pages of {size} bytes")
        with open(h.db, "r+b") as f:  # overwrite the cells of two leaf pages in the middle
            for p in pages[1:3]:
                f.seek((p - 1) * size + size // 2)
                f.write(os.urandom(size // 2))
        p = subprocess.run(h.args(), capture_output=True, text=True, timeout=30)
        t.ok(p.returncode == 2 and "integrity check failed" in p.stderr,
             "the damaged index is found at start-up: exit 2", p.stderr)
        p = subprocess.run(h.args(extra=["--integrity-check", "quick"]), capture_output=True,
                           text=True, timeout=30)
        t.ok(p.returncode == 2 and "quick_check" in p.stderr,
             "--integrity-check quick finds it too", p.stderr)
        h.start(extra=["--integrity-check", "off"])
        codes = fill(h, pb, tpl, 10)
        st, _, body = h.request("GET", "/healthz")
        health = json.loads(body) if body.startswith(b"{") else {}
        t.ok(500 in codes and st == 503 and health.get("status") == "unhealthy"
             and "corrupt" in health.get("reason", ""),
             f"with the check off it starts, commits fail ({codes.count(500)} of 10 batches got "
             f"500) and /healthz says 503: {health.get('reason')}", (codes, body))
        h.stop()

        # ---- a full file system ---------------------------------------------------------------
        os.remove(h.db)
        for ext in ("-wal", "-shm"):
            if os.path.exists(h.db + ext):
                os.remove(h.db + ext)
        limit = 384 * 1024

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        h.start(preexec_fn=small_files)
        st, _, _ = h.request("GET", "/healthz")
        codes = []
        for _ in range(60):
            codes += fill(h, pb, tpl, 1)
            if codes[-1] != 200:
                break
        st, _, body = h.request("GET", "/healthz")
        health = json.loads(body) if body.startswith(b"{") else {}
        metrics = h.request("GET", "/metrics")[2].decode()
        t.ok(codes[-1] == 500 and st == 503 and "storage failure" in health.get("reason", "")
             and "dpm_storage_healthy 0" in metrics,
             f"files limited to {limit // 1024} KiB: after {len(codes) - 1} batches a commit "
             f"fails (500) and /healthz says 503: {health.get('reason')}", (codes[-3:], body))
        h.stop()

        # ---- schema 0 is upgraded in place ---------------------------------------------------
        old = f"{h.tmp}/old.db"
        rep = make_report(pb, tpl, 1, group=2, value=1)
        con = sqlite3.connect(old)
        con.executescript(
            "CREATE TABLE campaigns (id INTEGER PRIMARY KEY, mechanism INTEGER NOT NULL,"
            " eps_q16 INTEGER NOT NULL, params_hash INTEGER NOT NULL, campaign BLOB NOT NULL);"
            "CREATE TABLE reports (seq INTEGER PRIMARY KEY, report_id BLOB NOT NULL UNIQUE,"
            " campaign_id INTEGER NOT NULL, period INTEGER NOT NULL, grp INTEGER NOT NULL,"
            " nvalues INTEGER NOT NULL, v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER,"
            " raw BLOB NOT NULL, received_at INTEGER NOT NULL);"
            "CREATE TABLE rejects (campaign_id INTEGER NOT NULL, reason TEXT NOT NULL,"
            " count INTEGER NOT NULL, PRIMARY KEY (campaign_id, reason)) WITHOUT ROWID;")
        con.execute("INSERT INTO campaigns VALUES (1, 7, ?, ?, x'')",
                    (rep.eps_q16, rep.params_hash))
        con.execute("INSERT INTO reports(report_id, campaign_id, period, grp, nvalues, v0, raw,"
                    " received_at) VALUES (?, 1, 0, 2, 1, 1, ?, ?)",
                    (rep.report_id, rep.SerializeToString(), int(time.time()) - 60))
        con.commit()
        con.close()
        h.db = old
        h.start()
        est = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
        version = h.db_query("PRAGMA user_version")[0][0]
        st, r, _ = post_batch(h, pb, batch_of(pb, rep))
        t.ok(est["reports"] == 1 and version == 3 and st == 200 and r.duplicates == 1
             and '"event": "schema_migrated"' in open(h.log.name).read(),
             f"a schema-0 database is migrated in place (0 -> 2 -> 3, user_version {version}); "
             f"its report is kept, summed and still de-duplicated", (est["reports"], version, st, r))
        t.ok(h.stop() == 0, "clean stop")
        ok, detail = h.consistent()
        t.ok(ok, "integrity_check ok, the sums equal the reports'", detail)
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
        if h is not None and h.procs:
            print("# collector log:")
            for line in open(h.log.name).read().splitlines()[-20:]:
                print(f"#   {line}")
    finally:
        if h is not None:
            h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
