#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-collector on PostgreSQL (issue 19 items 1, 2 and 7), TAP. One throw-away cluster
(tests/e2e/pg_cluster.py: initdb/pg_ctl under build/pg/, a Unix socket, no TCP port) serves
every check, each on a fresh database, and is stopped at the end whatever happens.

  - The suites the SQLite store runs, unchanged, on PostgreSQL: test_collector.py (the main
    one: curl, bad requests, estimates and their queries, a 64-client load check, restart),
    test_collector_kill.py (kill -9 under load, twice), test_collector_auth.py (credentials,
    quotas, windows, limits, lost reports), test_collector_http.py (the same id in two
    campaigns), test_collector_ops.py (logs, metrics, config, stored sums, retention,
    pg_dump backup and pg_restore), test_collector_influence.py (bounded influence of one
    report, through the stored sums) and test_wire_collector.py (every release's golden
    reports). Not here, being about SQLite or not about the store: test_collector_integrity.py
    (PRAGMA integrity_check, a full file system), test_collector_migrate.py (released SQLite
    databases; PostgreSQL's schema versions are below), test_collector_memory.py and
    test_collector_slots.py (connection and memory limits, in front of the store).
  - Several collectors, one campaign: two collectors (instances a and b) on two loopback ports,
    32 clients spread over both and failing over, `kill -9` of one under load and its restart:
    every acknowledged report stored once, nothing stored that was not acknowledged, the sums
    equal the reports' (verify), both collectors' sums in their own shard, and the two answer
    byte-identical estimates.
  - An outage: the server stopped under a running collector: 500 (nothing stored) and /healthz
    503 with the reason; the server back: the collector reconnects by itself.
  - Timeouts: a server that accepts connections and never answers stops the start within the
    5 s connect timeout (PGCONNECT_TIMEOUT overrides it); an estimate blocked by a lock gets 503
    after the reader's 10 s statement timeout instead of hanging.
  - Schema versions: a database of a newer schema is refused with a clear message; `migrate`
    creates and re-checks the current one.
  - The DAP aggregator's store (host-sim/collector/dap/dap_store.h): tests/unit/test_dap_store
    run on a database of the cluster (DPM_TEST_DB): upload once, jobs claimed apart by two
    processes at once (FOR UPDATE SKIP LOCKED), committed once, collection, kill -9."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector  # noqa: E402
import test_collector_auth  # noqa: E402
import test_collector_http  # noqa: E402
import test_collector_influence  # noqa: E402
import test_collector_kill  # noqa: E402
import test_collector_ops  # noqa: E402
import test_collector_read  # noqa: E402
import test_collector_operator  # noqa: E402
import test_collector_auc  # noqa: E402
import test_collector_roc_groups  # noqa: E402
import test_wire_collector  # noqa: E402
import e2e_util  # noqa: E402
from pg_cluster import PgCluster  # noqa: E402
from test_collector import (TOOL_LOAD, Harness, Tap, batch_of, load_pb2,  # noqa: E402
                            make_report, post_batch, tuple_mr_template)


def guarded(t, what, fn, *args):
    """Run one group of checks; a crash is a failed check, and the next group still runs."""
    try:
        fn(*args)
    except Exception as exc:
        import traceback
        t.ok(False, f"{what} aborted: {exc!r}", traceback.format_exc())


def main_suite(t, pg):
    h = Harness(pg=pg)
    try:
        pb = load_pb2(h.tmp)
        test_collector.main_tests(t, h, pb)
    except Exception as exc:
        import traceback
        t.ok(False, f"test_collector on PostgreSQL aborted: {exc!r}", traceback.format_exc())
        if h.procs:
            for line in open(h.log.name).read().splitlines()[-20:]:
                print(f"#   {line}")
    finally:
        h.cleanup()


def start_as(h, instance, port=0, extra=()):
    """Start one more collector of the harness; (process, port)."""
    h.start(port=port, extra=["--rate-limit", "0", "--instance", instance, *extra])
    return h.proc, h.port


def several_collectors(t, pg):
    h = Harness(pg=pg)
    tool = None
    try:
        pa, port_a = start_as(h, "a")
        _, port_b = start_as(h, "b")
        ids = f"{h.tmp}/acked"
        out = open(f"{h.tmp}/tool.out", "w")
        tool = subprocess.Popen([TOOL_LOAD, "reports", "--ports", f"{port_a},{port_b}",
                                 "--ca", h.ca, "--token", h.creds.files["harness"],
                                 "--clients", "32", "--seconds", "6", "--batch", "100",
                                 "--campaign", "1", "--grace-seconds", "30", "--ids", ids],
                                stdout=out, stderr=subprocess.STDOUT)
        time.sleep(2.0)
        pa.send_signal(signal.SIGKILL)
        t.ok(pa.wait(10) == -signal.SIGKILL, "kill -9 of collector a under load (b goes on)")
        time.sleep(1.0)
        pa, port = start_as(h, "a", port=port_a)
        t.ok(port == port_a, "collector a restarted on its port and database")
        rc = tool.wait(120)
        out.close()
        text = open(f"{h.tmp}/tool.out").read()
        res = json.loads(text) if text.startswith("{") else None
        t.ok(rc == 0 and res is not None and res["unsent"] == 0 and res["bad_answers"] == 0
             and res["io_errors"] > 0,
             f"32 clients over both collectors: every batch answered "
             f"({res and res['acked']} reports acknowledged, {res and res['io_errors']} broken "
             f"connections failed over, {res and res['retries']} retries)", text[-600:])
        acked = [line.strip() for line in open(ids) if line.strip()]
        rows = {r[0].hex(): r[1] for r in h.db_query(
            "SELECT report_id, COUNT(*) FROM reports WHERE campaign_id = 1 GROUP BY report_id")}
        lost = [i for i in acked if i not in rows]
        t.ok(acked and not lost, f"zero acknowledged reports lost ({len(acked)} acknowledged, "
             f"{len(lost)} missing)")
        t.ok(all(v == 1 for v in rows.values()) and len(set(acked)) == len(acked)
             and len(rows) == len(acked),
             f"zero counted twice: each stored once, {len(rows)} rows for {len(acked)} "
             f"acknowledgements ({res and res['duplicates']} duplicates acknowledged after "
             f"retries)")
        shards = dict(h.db_query("SELECT shard, SUM(reports) FROM agg_reports "
                                 "WHERE campaign_id = ? GROUP BY shard", 1))
        t.ok(set(shards) == {"a", "b"} and sum(shards.values()) == len(rows),
             f"the sums are sharded per collector: {shards}")
        answers = []
        for port in (port_a, port_b):
            h.port = port
            answers.append(h.request("GET", "/v1/campaigns/1/estimate")[2])
            answers.append(h.request("GET", "/v1/campaigns/1/estimate?period=0&confidence=0.9")[2])
        est = json.loads(answers[0])
        t.ok(answers[0] == answers[2] and answers[1] == answers[3]
             and est["reports"] == len(rows),
             f"both collectors answer byte-identical estimates ({est['reports']} reports)")
        for p in list(h.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(15)
        ok, detail = h.consistent()
        t.ok(ok, "the sums equal the stored reports' (verify)", detail)
    finally:
        if tool is not None and tool.poll() is None:
            tool.kill()
            tool.wait()
        h.cleanup()


def outage(t, pg):
    h = Harness(pg=pg)
    try:
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)
        h.start()
        st, r, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 1)))
        t.ok(st == 200 and r.accepted == 1, "a report stored while the server is up")
        pg.halt()
        try:
            lost = make_report(pb, tpl, 1)
            st, _, _ = post_batch(h, pb, batch_of(pb, lost))
            hst, _, body = h.request("GET", "/healthz")
            health = json.loads(body) if body.startswith(b"{") else {}
            est = h.request("GET", "/v1/campaigns/1/estimate")[0]
        finally:
            pg.resume()
        t.ok(st == 500 and hst == 503 and health.get("status") == "unhealthy" and est == 503,
             f"PostgreSQL stopped: a batch gets 500 (nothing stored), /healthz 503 "
             f"({health.get('reason')}), an estimate 503", (st, hst, est))
        st, r, _ = post_batch(h, pb, batch_of(pb, lost))
        est = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
        t.ok(st == 200 and r.accepted == 1 and est["reports"] == 2,
             "PostgreSQL back: the collector reconnects by itself; the retried batch is stored "
             "(2 reports)", (st, r))
        h.stop()
        objs, _ = test_collector_ops.log_lines(h)
        errors = [o for o in objs if o.get("event") == "storage_error" and o["level"] == "error"]
        t.ok(errors, f"the storage errors are logged ({len(errors)}, e.g. "
             f"{errors[0].get('error') if errors else None!r})")
    finally:
        h.cleanup()


def silent_server_exit(h, env):
    """Seconds until a collector pointed at a TCP port that accepts connections but never
    answers (a hung server) gives up, its exit status and its message."""
    lsn = socket.socket()
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(8)
    db = f"postgresql://dpm@127.0.0.1:{lsn.getsockname()[1]}/silent"
    a = h.args()
    a[a.index("--db") + 1] = db
    env = {**{k: v for k, v in os.environ.items() if k != "PGCONNECT_TIMEOUT"}, **env}
    t0 = time.monotonic()
    try:
        p = subprocess.run(a, capture_output=True, text=True, timeout=60, env=env)
    finally:
        lsn.close()
    return time.monotonic() - t0, p.returncode, p.stderr.strip()[-300:]


def timeouts(t, pg):
    h = Harness(pg=pg)
    locker = None
    try:
        secs, rc, err = silent_server_exit(h, {})
        t.ok(rc == 2 and 4.0 <= secs <= 15.0 and "timeout" in err,
             f"a server that never answers: the collector gives up after {secs:.1f} s (5 s "
             f"connect timeout), exit {rc}", err)
        secs1, rc1, err1 = silent_server_exit(h, {"PGCONNECT_TIMEOUT": "2"})
        t.ok(rc1 == 2 and 1.5 <= secs1 < 4.0, f"PGCONNECT_TIMEOUT=2 overrides it: {secs1:.1f} s",
             err1)
        pb = load_pb2(h.tmp)
        h.start()
        st, r, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tuple_mr_template(pb), 1)))
        # a session that holds every sum table for 14 s: an estimate must not wait for it
        locker = subprocess.Popen(
            [os.path.join(pg.bindir, "psql"), "-h", pg.dir, "-U", "dpm", "-d", h.dbname, "-X",
             "-q", "-c", "BEGIN; LOCK TABLE agg_reports IN ACCESS EXCLUSIVE MODE; "
             "SELECT pg_sleep(14); COMMIT"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            if pg.sql(h.dbname, "SELECT count(*) FROM pg_locks WHERE mode = "
                      "'AccessExclusiveLock' AND relation = 'agg_reports'::regclass")[0][0] == "1":
                break
            time.sleep(0.05)
        t0 = time.monotonic()
        c = h.conn(timeout=30)  # longer than the 10 s statement timeout it waits for
        est = h.request("GET", "/v1/campaigns/1/estimate", conn=c)[0]
        secs = time.monotonic() - t0
        c.close()
        locker.wait(30)
        after = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
        t.ok(st == 200 and est == 503 and 9.0 <= secs <= 13.5 and after["reports"] == 1,
             f"an estimate blocked by a lock: 503 after {secs:.1f} s (10 s statement "
             f"timeout on the reader), then 200 once the lock is gone",
             (st, est, locker.stderr.read()))
        h.stop()
        objs, _ = test_collector_ops.log_lines(h)
        t.ok(any("statement timeout" in str(o.get("error", "")) for o in objs),
             "the timeout is logged as a storage error")
    finally:
        if locker is not None and locker.poll() is None:
            locker.kill()
            locker.wait()
        h.cleanup()


def schema_versions(t, pg):
    h = Harness(pg=pg)
    try:
        rc, out = h.admin("migrate")
        rc2, out2 = h.admin("migrate")
        t.ok(rc == 0 and "created schema version 1" in out and rc2 == 0
             and "nothing to do" in out2, f"migrate: {out.strip()}; again: {out2.strip()}")
        pg.sql(h.dbname, "UPDATE dpm_schema SET version = 2")
        p = subprocess.run(h.args(), capture_output=True, text=True, timeout=30)
        t.ok(p.returncode == 2 and "schema version 2 is newer than this collector's (1)"
             in p.stderr, "a database of a newer schema is refused (exit 2), saying so",
             p.stderr[-400:])
        pg.sql(h.dbname, "UPDATE dpm_schema SET version = 1")
        h.db += "&password=hunter2"  # trust authentication ignores it; the log must not show it
        h.start()
        t.ok(h.request("GET", "/healthz")[0] == 200, "negative control: version 1 starts")
        h.stop()
        log = open(h.log.name).read()
        t.ok("hunter2" not in log and "password=***" in log,
             "the log names the database without its password", log[-300:])
    finally:
        h.cleanup()


def dap_store(t, pg):
    """The DAP store's unit test program, every test of it, on a PostgreSQL database."""
    prog = os.path.join(e2e_util.OUT, "tests", "unit", "test_dap_store")
    url = pg.createdb("dap")
    # cmocka's own summary, whatever format the suite runner asks the C tests for
    r = subprocess.run([prog], env={**os.environ, "DPM_TEST_DB": url,
                                    "DPM_TEST_DB_EMPTY": pg.createdb("dap_old"),
                                    "CMOCKA_MESSAGE_OUTPUT": "STDOUT"},
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    t.ok(r.returncode == 0 and "PASSED  ] 7 test(s)" in out,
         "the DAP store's tests pass on PostgreSQL (test_dap_store, DPM_TEST_DB)", out[-1500:])
    rows = pg.sql("dap", "SELECT count(*) FROM dap_aggregated")
    t.ok(rows and int(rows[0][0]) > 0, "they ran on PostgreSQL: its dap_aggregated has rows", rows)


def main():
    t = Tap()
    try:
        t0 = time.monotonic()
        with PgCluster("test_collector_pg") as pg:
            try:  # the cluster answers before anything relies on it
                answer = pg.sql("postgres", "SELECT 6 * 7")
            except RuntimeError as e:
                answer = str(e)
            t.ok(answer == [["42"]], f"a throw-away PostgreSQL cluster in {pg.dir} answers a "
                 f"query ({time.monotonic() - t0:.1f} s to initdb and start)", answer)
            guarded(t, "several collectors", several_collectors, t, pg)
            guarded(t, "outage", outage, t, pg)
            guarded(t, "timeouts", timeouts, t, pg)
            guarded(t, "schema versions", schema_versions, t, pg)
            main_suite(t, pg)
            guarded(t, "kill", test_collector_kill.run, t, pg)
            guarded(t, "auth", test_collector_auth.run, t, pg)
            guarded(t, "http", test_collector_http.run, t, pg)
            guarded(t, "ops", test_collector_ops.run, t, pg)
            guarded(t, "operator reloads", test_collector_operator.run_pg, t, pg)
            guarded(t, "influence", test_collector_influence.run, t, pg)
            guarded(t, "wire", test_wire_collector.run, t, pg)
            guarded(t, "auc", test_collector_auc.run, t, pg)
            guarded(t, "roc_groups", test_collector_roc_groups.run, t, pg)
            guarded(t, "dap store", dap_store, t, pg)
            guarded(t, "estimate reader", test_collector_read.run, t, pg)
        t.ok(not os.path.exists(pg.dir), "the cluster is stopped and its directory removed")
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
