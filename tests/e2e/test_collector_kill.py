#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exactly-once across crashes: dpm-collector is killed with SIGKILL twice while 16 TLS clients
post reports, and restarted on the same port and database. The clients (tool_load) resend every
batch that got no answer, with the same report ids, as a device does. Afterwards every report
that got a 200 must be in the database exactly once, nothing may be stored that was never
acknowledged, and the collector's counts (rebuilt from the database) must match. Prints TAP."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import TOOL_LOAD, Harness, Tap  # noqa: E402


def run(t, pg=None):
    """The checks, on a SQLite file or (pg) a PostgreSQL cluster's database."""
    h = None
    tool = None
    try:
        h = Harness(pg=pg)
        h.start(extra=["--rate-limit", "0"])
        port = h.port
        ids_file = f"{h.tmp}/acked"
        out = open(f"{h.tmp}/tool.out", "w")
        tool = subprocess.Popen([TOOL_LOAD, "reports", "--port", str(port), "--ca", h.ca,
                                 "--token", h.creds.files["harness"],
                                 "--clients", "16", "--seconds", "7", "--batch", "100",
                                 "--campaign", "1", "--grace-seconds", "30", "--ids", ids_file],
                                stdout=out, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        for n, kill_at in enumerate((1.5, 4.0), 1):
            time.sleep(max(0.0, kill_at - (time.monotonic() - t0)))
            h.proc.send_signal(signal.SIGKILL)
            rc = h.proc.wait(10)
            t.ok(rc == -signal.SIGKILL, f"kill -9 number {n} under load")
            time.sleep(0.5)
            h.start(port=port, extra=["--rate-limit", "0"])
            t.ok(h.port == port, f"restarted on the same port and database")
        try:
            rc = tool.wait(90)
        except subprocess.TimeoutExpired:
            tool.kill()
            rc = None
        out.close()
        text = open(f"{h.tmp}/tool.out").read()
        try:
            res = json.loads(text)
        except ValueError:
            res = None
        t.ok(rc == 0 and res is not None, "the clients finished", text)
        if res is None:
            return
        print(f"# load: {json.dumps(res)}")
        t.ok(res["unsent"] == 0 and res["bad_answers"] == 0,
             f"every batch was eventually answered ({res['retries']} retries, "
             f"{res['io_errors']} broken connections)")
        t.ok(res["io_errors"] > 0, "the kills were felt by the clients")
        acked = [line.strip() for line in open(ids_file) if line.strip()]
        rows = {r[0].hex(): r[1] for r in h.db_query(
            "SELECT report_id, COUNT(*) FROM reports GROUP BY report_id")}
        lost = [i for i in acked if i not in rows]
        t.ok(len(acked) == res["acked"] > 0, f"{len(acked)} reports acknowledged with 200")
        t.ok(not lost, f"every acknowledged report survived the kills ({len(lost)} lost)")
        t.ok(all(v == 1 for v in rows.values()) and len(set(acked)) == len(acked),
             "each is stored once and acknowledged once")
        t.ok(len(rows) == len(acked),
             f"nothing unacknowledged is stored ({len(rows)} rows, {len(acked)} acked; "
             f"{res['duplicates']} duplicates acknowledged after the restarts)")
        st, _, body = h.request("GET", "/v1/campaigns/1/estimate")
        est = json.loads(body)
        t.ok(st == 200 and est["reports"] == len(rows),
             f"the live collector counts each report once ({est['reports']})")
        t.ok(h.stop() == 0, "clean stop")
        ok, detail = h.consistent()
        t.ok(ok, "the stored sums equal the sums of the stored reports (no report summed "
             "twice or lost from the sums across the kills)", detail)
        h.start()
        est = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
        t.ok(est["reports"] == len(rows), "after another restart: still counted once")
        h.stop()
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    finally:
        if tool is not None and tool.poll() is None:
            tool.kill()
            tool.wait()
        if h is not None:
            h.cleanup()


def main():
    t = Tap()
    run(t)
    return t.done()

if __name__ == "__main__":
    sys.exit(main())
