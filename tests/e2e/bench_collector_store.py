#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The collector's store under load, for `make bench` (.make/bench.py; not a test). Prints one
JSON line {"metrics": [...], "details": {...}} with:

  collector.pg.reports_per_s      two collectors on one PostgreSQL (a throw-away cluster,
                                  fsync on), 64 keep-alive TLS clients spread over both,
                                  batches of 100 (tool_load reports --ports), SECONDS long
  collector.pg.estimate_ms.1e7    GET /v1/campaigns/1/estimate (every period) with 10^7 stored
  collector.sqlite.estimate_ms.1e7  reports: the median of 20 requests on one keep-alive TLS
                                  connection (the slowest is in details)
  collector.pg.rebuild_ms.1e7     the baseline of the estimate: every sum rebuilt from the 10^7
  collector.sqlite.rebuild_ms.1e7   stored reports (`dpm-collector verify`, which reads them all
                                  as the 0.1.0 collector did at each start), so the estimates'
                                  ratio says what the stored sums save
  collector.pg.restart_s.1e7      a collector's start on that database: from exec to listening
  collector.sqlite.restart_s.1e7  (SQLite: with --integrity-check off, the full check's time
                                  is in details: it reads the whole file)

The 10^7 reports are synthetic rows written by one bulk SQL insert (generate_series on
PostgreSQL, a recursive CTE on SQLite): campaign 1 (tuple_mr, 4 groups), 30 periods, ordered
report ids, ±1 values; the sums are then computed from those rows by SQL (GROUP BY) and stored
as one shard, so they match the reports exactly (`dpm-collector verify` would agree). Nothing
in the estimate or the start-up reads the reports, which is what is measured.

    bench_collector_store.py [SECONDS] [REPORTS]     (defaults 10 and 10000000)"""
import http.client
import json
import os
import sqlite3
import ssl
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_cluster import PgCluster  # noqa: E402
from test_collector import TOOL_LOAD, Harness  # noqa: E402

PERIODS = 30


def metric(name, value, unit, baseline=None, ratio=None):
    return dict(name=name, value=value, unit=unit, baseline=baseline, ratio=ratio)


def throughput(pg, seconds):
    h = Harness(pg=pg)
    try:
        ports, pids = [], []
        for inst in ("a", "b"):
            h.start(extra=["--rate-limit", "0", "--instance", inst])
            ports.append(h.port)
            pids.append(h.proc.pid)
        p = subprocess.run([TOOL_LOAD, "reports", "--ports", ",".join(map(str, ports)),
                            "--ca", h.ca, "--token", h.creds.files["harness"], "--clients", "64",
                            "--seconds", str(seconds), "--batch", "100", "--campaign", "1"],
                           capture_output=True, text=True, timeout=seconds + 180)
        res = json.loads(p.stdout)
        if p.returncode != 0 or res["bad_answers"] or res["unsent"]:
            raise RuntimeError(f"load failed: {p.stdout} {p.stderr}")
        return res
    finally:
        h.cleanup()


def fill_pg(pg, h, n):
    """n synthetic reports of campaign 1 in h's PostgreSQL database, and their sums."""
    pg.sql(h.dbname, f"""
        SET maintenance_work_mem = '256MB';
        INSERT INTO reports (campaign_id, report_id, period, grp, nvalues, v0, raw, received_at)
        SELECT 1, int8send(i) || '\\x0000000000000000'::bytea, i % {PERIODS}, i % 4, 1,
               CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END, decode(repeat('ab', 40), 'hex'), 0
        FROM generate_series(1, {n}) AS i;
        INSERT INTO agg_reports SELECT campaign_id, period, 'bulk', count(*)
        FROM reports GROUP BY campaign_id, period;
        INSERT INTO agg_tuple (campaign_id, period, metric, grp, shard, n, s, ss)
        SELECT campaign_id, period, 0, grp, 'bulk', count(*), sum(v0), sum(v0 * v0)::float8
        FROM reports GROUP BY campaign_id, period, grp;""", timeout=3600)
    pg.sql(h.dbname, "VACUUM ANALYZE", timeout=3600)


def fill_sqlite(db, n):
    con = sqlite3.connect(db)
    con.executescript(f"""
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = OFF;
        PRAGMA cache_size = -262144;
        BEGIN;
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n})
        INSERT INTO reports (report_id, campaign_id, period, grp, nvalues, v0, raw, received_at)
        SELECT zeroblob(8) || cast(printf('%08d', i) AS blob), 1, i % {PERIODS}, i % 4, 1,
               CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END, randomblob(40), 0 FROM s;
        INSERT INTO agg_reports SELECT campaign_id, period, 'bulk', count(*)
        FROM reports GROUP BY campaign_id, period;
        INSERT INTO agg_tuple (campaign_id, period, metric, grp, shard, n, s, ss)
        SELECT campaign_id, period, 0, grp, 'bulk', count(*), sum(v0), sum(v0 * v0) * 1.0
        FROM reports GROUP BY campaign_id, period, grp;
        COMMIT;
        PRAGMA wal_checkpoint(TRUNCATE);""")
    con.close()


def timed_start(h, extra=(), timeout=60):
    t0 = time.monotonic()
    h.start(extra=list(extra), timeout=timeout)
    return time.monotonic() - t0


def estimate_ms(h, n=20):
    """Median and slowest of n GETs of the estimate on one keep-alive connection, in ms."""
    c = http.client.HTTPSConnection("localhost", h.port, context=ssl.create_default_context(
        cafile=h.ca), timeout=30)
    times, reports = [], None
    for _ in range(n + 1):
        t0 = time.perf_counter()
        c.request("GET", "/v1/campaigns/1/estimate", headers=h.creds.header())
        r = c.getresponse()
        body = r.read()
        dt = (time.perf_counter() - t0) * 1e3
        if r.status != 200:
            raise RuntimeError(f"estimate: {r.status} {body[:200]}")
        reports = json.loads(body)["reports"]
        times.append(dt)
    c.close()
    times = times[1:]  # the first one warms the connection
    return statistics.median(times), max(times), reports


def big(pg, n):
    out, details = [], {}
    for backend in ("postgresql", "sqlite"):
        h = Harness(pg=pg if backend == "postgresql" else None)
        try:
            rc, msg = h.admin("migrate")
            if rc != 0:
                raise RuntimeError(msg)
            t0 = time.monotonic()
            if backend == "postgresql":
                fill_pg(pg, h, n)
            else:
                fill_sqlite(h.db, n)
            fill_s = time.monotonic() - t0
            extra = ["--integrity-check", "off"] if backend == "sqlite" else []
            timed_start(h, extra)  # registers the campaigns: the first start writes
            h.stop()
            restart = timed_start(h, extra)
            median, slowest, reports = estimate_ms(h)
            h.stop()
            if reports != n:
                raise RuntimeError(f"{backend}: the estimate counts {reports} reports, not {n}")
            t0 = time.monotonic()
            rc, msg = h.admin("verify", timeout=3600)
            rebuild_ms = (time.monotonic() - t0) * 1e3
            if rc != 0 or not msg.startswith("ok"):
                raise RuntimeError(f"{backend}: verify: {msg}")
            name = "pg" if backend == "postgresql" else "sqlite"
            rebuild = f"collector.{name}.rebuild_ms.1e7"
            out.append(metric(rebuild, rebuild_ms, "ms"))
            out.append(metric(f"collector.{name}.estimate_ms.1e7", median, "ms", rebuild,
                              median / rebuild_ms))
            out.append(metric(f"collector.{name}.restart_s.1e7", restart, "s"))
            d = dict(reports=reports, fill_seconds=round(fill_s, 1),
                     estimate_ms_slowest=round(slowest, 2), periods=PERIODS)
            if backend == "sqlite":
                d["db_bytes"] = os.path.getsize(h.db)
                d["restart_s_integrity_full"] = round(timed_start(h, timeout=3600), 2)
                h.stop()
            details[name] = d
            print(f"{name}: {json.dumps(out[-3:])} {json.dumps(d)}", file=sys.stderr)
        finally:
            h.cleanup()
    return out, details


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    with PgCluster("bench") as pg:
        res = throughput(pg, seconds)
        metrics = [metric("collector.pg.reports_per_s", res["per_s"], "reports/s")]
        more, details = big(pg, n)
    details["pg_load"] = {k: res[k] for k in ("clients", "seconds", "acked", "io_errors",
                                              "retries", "duplicates")}
    details["pg_load"]["collectors"] = 2
    print(json.dumps({"metrics": metrics + more, "details": details}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
