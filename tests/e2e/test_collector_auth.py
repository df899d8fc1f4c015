#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Who may do what at dpm-collector (issue 12 item 5), over real TLS on loopback, TAP:
device credentials (bearer tokens stored hashed, TLS client certificates from the device CA),
per-device quotas per campaign and period, period time windows, the operator credential for
estimates and /metrics, per-address rate and connection limits, and Batch.lost_reports.
Every check has its negative control (the same request with the right credential passes)."""
import json
import os
import re
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (Harness, Tap, batch_of, load_pb2, make_ca, make_device_cert,  # noqa: E402
                            make_report, post_batch, recv_all, tls_socket, tuple_mr_template)

NOW = int(time.time())
# Campaign 1: defaults (start when first seen, one-day periods, one report per device). 3: two
# reports per device and period. 4: started ten days and an hour ago: period 10 is current, 9
# ended an hour ago (still accepted: late_seconds defaults to one period), 8 is closed.
CAMPAIGNS = f"""\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr

[campaign]
id = 3
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
device_quota = 2

[campaign]
id = 4
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
start = {NOW - 10 * 86400 - 3600}

[campaign]     # 40 periods of an hour, all still open: quotas under concurrency
id = 6
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
period_seconds = 3600
start = {NOW - 40 * 3600}
late_seconds = {80 * 3600}
"""


def reasons(r):
    return [x.reason for x in r.rejects] if r is not None else None


def concurrent_quotas(t, h, pb, tpl):
    """Quotas hold when batches of one credential arrive together (and are committed in one
    transaction): relay-3 sends 8 one-report batches at once, in each of 6 periods; device-a
    sends, at once, a batch of two reports (over its quota of one) and a batch holding one of
    them, in each of 20 periods (the first batch's insert is undone, the second must keep the
    report whichever came first)."""
    import threading

    def together(bodies, token):
        out = [None] * len(bodies)
        gate = threading.Barrier(len(bodies))

        def one(i):
            gate.wait()
            out[i] = post_batch(h, pb, bodies[i], token=token)

        th = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
        for x in th:
            x.start()
        for x in th:
            x.join()
        return out

    ok, seen = True, []
    for period in range(6):
        res = together([batch_of(pb, make_report(pb, tpl, 6, period=period)) for _ in range(8)],
                       "relay-3")
        codes = sorted(r[0] for r in res)
        rows = h.db_query("SELECT COUNT(*) FROM reports WHERE device = 'token:relay-3' AND "
                          "campaign_id = 6 AND period = ?", period)[0][0]
        quota = h.db_query("SELECT count FROM quota WHERE device = 'token:relay-3' AND "
                           "campaign_id = 6 AND period = ?", period)
        ok &= codes == [200] * 3 + [400] * 5 and rows == 3 and quota == [(3,)]
        seen.append((codes.count(200), rows, quota))
    t.ok(ok, f"relay=3, 8 batches at once in each of 6 periods: exactly 3 stored and counted "
         f"each time ({seen[0]})", seen)
    ok, seen = True, []
    for period in range(6, 26):
        r1, r2 = make_report(pb, tpl, 6, period=period), make_report(pb, tpl, 6, period=period)
        res = together([batch_of(pb, r1, r2), batch_of(pb, r1)], "device-a")
        rows = [x[0] for x in h.db_query("SELECT report_id FROM reports WHERE campaign_id = 6 "
                                         "AND period = ? AND device = 'token:device-a'", period)]
        quota = h.db_query("SELECT count FROM quota WHERE device = 'token:device-a' AND "
                           "campaign_id = 6 AND period = ?", period)
        good = (res[0][0] == 400 and res[1][0] == 200 and res[1][1].accepted == 1
                and rows == [r1.report_id] and quota == [(1,)])
        ok &= good
        if not good:
            seen.append((period, res[0][0], res[1][0], len(rows), quota))
    reruns = open(h.log.name).read().count('"event": "quota_rerun"')
    t.ok(ok, f"an over-quota batch and a batch sharing one of its reports, at once, 20 times: "
         f"the shared report is stored once, under its quota, whichever came first "
         f"({reruns} times in one transaction, run again batch by batch)", seen)


def run(t, pg=None):
    """The checks, on a SQLite file or (pg) a PostgreSQL cluster's database."""
    h = None
    try:
        h = Harness(campaigns=CAMPAIGNS, pg=pg)
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)
        h.start()

        # ---- device credentials ----------------------------------------------------------
        r1 = make_report(pb, tpl, 1)
        st, r, hd = post_batch(h, pb, batch_of(pb, r1), token=None)
        t.ok(st == 401 and "Bearer" in hd.get("WWW-Authenticate", ""),
             "POST without a credential: 401 with WWW-Authenticate: Bearer", (st, hd))
        h.creds.token["bogus"] = os.urandom(24).hex()
        st, _, _ = post_batch(h, pb, batch_of(pb, r1), token="bogus")
        t.ok(st == 401, f"an unknown token: 401 ({st})")
        st, _, _ = post_batch(h, pb, batch_of(pb, r1), token="reader")
        t.ok(st == 403, f"an operator-only token may not post: 403 ({st})")
        st, r, _ = post_batch(h, pb, batch_of(pb, r1), token="device-a")
        t.ok(st == 200 and r.accepted == 1, "a device token posts: 200, accepted 1", (st, r))
        dev = h.db_query("SELECT device FROM reports WHERE report_id = ?", r1.report_id)
        t.ok(dev == [("token:device-a",)], f"the report is stored under its credential ({dev})")

        # ---- quotas: one report per device, campaign and period ------------------------------
        r2 = make_report(pb, tpl, 1)
        st, r, _ = post_batch(h, pb, batch_of(pb, r2), token="device-a")
        t.ok(st == 400 and reasons(r) == ["device quota exceeded"]
             and r.rejects[0].report_id == r2.report_id,
             "a second report of the same device, campaign and period: 400 'device quota "
             "exceeded'", (st, r))
        t.ok(not h.db_query("SELECT 1 FROM reports WHERE report_id = ?", r2.report_id),
             "... and it is not stored")
        st, r, _ = post_batch(h, pb, batch_of(pb, r1), token="device-a")
        t.ok(st == 200 and r.duplicates == 1, "a retry of the stored report costs no quota: 200, "
             "duplicate", (st, r))
        st, r, _ = post_batch(h, pb, batch_of(pb, r2), token="device-b")
        t.ok(st == 200 and r.accepted == 1, "another device's report: 200", (st, r))
        both = [make_report(pb, tpl, 3) for _ in range(3)]
        st, r, _ = post_batch(h, pb, batch_of(pb, *both[:2]), token="device-a")
        st3, r3, _ = post_batch(h, pb, batch_of(pb, both[2]), token="device-a")
        t.ok(st == 200 and r.accepted == 2 and st3 == 400
             and reasons(r3) == ["device quota exceeded"],
             "device_quota = 2: two reports pass, the third is refused", (st, r, st3, r3))
        four = [make_report(pb, tpl, 1) for _ in range(4)]
        st, r, _ = post_batch(h, pb, batch_of(pb, *four), token="relay-3")
        t.ok(st == 400 and r.accepted == 0 and len(r.rejects) == 1
             and not h.db_query("SELECT 1 FROM reports WHERE device = 'token:relay-3'"),
             "a relay=3 credential with 4 reports in one batch: 400, nothing stored", (st, r))
        st, r, _ = post_batch(h, pb, batch_of(pb, *four[:3]), token="relay-3")
        t.ok(st == 200 and r.accepted == 3, "... the same relay with 3: 200", (st, r))

        # ---- period windows ------------------------------------------------------------------
        cases = [(1, 1, "period not open yet"), (4, 8, "period closed"),
                 (4, 11, "period not open yet")]
        for cid, period, why in cases:
            st, r, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tpl, cid, period)),
                                  token="device-b")
            t.ok(st == 400 and reasons(r) == [why],
                 f"campaign {cid}, period {period}: 400 '{why}'", (st, r))
        for period in (9, 10):
            st, r, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 4, period)),
                                  token="device-b")
            t.ok(st == 200, f"campaign 4, period {period} (late by < one period, or current): "
                 f"200 ({st})", r)

        # ---- client certificates ---------------------------------------------------------------
        cctx = ssl.create_default_context(cafile=h.ca)
        cctx.load_cert_chain(f"{h.tmp}/device-0001.crt", f"{h.tmp}/device-0001.key")
        rc = make_report(pb, tpl, 1)
        c = h.conn(ctx=cctx)
        st, _, out = h.request("POST", "/v1/reports", batch_of(pb, rc), conn=c, token=None)
        c.close()
        dev = h.db_query("SELECT device FROM reports WHERE report_id = ?", rc.report_id)
        t.ok(st == 200 and dev == [("cert:device-0001",)],
             f"a device certificate from the device CA authenticates: 200, stored as "
             f"cert:device-0001 ({st}, {dev})")
        make_ca(h.tmp, "rogue-ca", "rogue device CA")
        make_device_cert(h.tmp, "rogue-device", ca="rogue-ca")
        rctx = ssl.create_default_context(cafile=h.ca)
        rctx.load_cert_chain(f"{h.tmp}/rogue-device.crt", f"{h.tmp}/rogue-device.key")
        try:
            s = tls_socket(h, ctx=rctx)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            got = recv_all(s)
            s.close()
        except (ssl.SSLError, OSError):
            got = b""
        t.ok(not got.startswith(b"HTTP/1.1 200"),
             "a device certificate from another CA: the connection is closed", got[:60])

        # ---- the operator credential ------------------------------------------------------------
        path = "/v1/campaigns/1/estimate"
        codes = {tok: h.request("GET", path, token=tok)[0] for tok in (None, "device-a", "reader")}
        t.ok(codes == {None: 401, "device-a": 403, "reader": 200},
             f"estimates: 401 without, 403 with a device token, 200 with the operator's ({codes})")
        st, hd, _ = h.request("HEAD", path, token=None)
        t.ok(st == 401, f"HEAD of an estimate without credential: 401 too ({st})")
        st, _, body = h.request("GET", "/metrics", token="reader")
        text = body.decode()
        t.ok(st == 200 and h.request("GET", "/metrics", token=None)[0] == 401
             and 'reason="device quota exceeded"' in text and "dpm_reports_stored_total" in text,
             "/metrics: operator only, with the reject counters", text[:400])
        t.ok(h.request("GET", "/v1/campaigns/1", token=None)[0] == 200
             and h.request("GET", "/healthz", token=None)[0] == 200,
             "campaign definitions and /healthz stay public")

        # ---- lost reports -------------------------------------------------------------------------
        st, r, _ = post_batch(h, pb, batch_of(pb, lost=7), token="device-b")
        est = json.loads(h.request("GET", path, token="reader")[2])
        metric = [ln for ln in h.request("GET", "/metrics", token="reader")[2].decode().split("\n")
                  if ln.startswith("dpm_lost_reports_total")]
        rows = h.db_query("SELECT device, count FROM lost")
        t.ok(st == 200 and est.get("lost_reports") == 7 and metric == ["dpm_lost_reports_total 7"]
             and rows == [("token:device-b", 7)],
             "Batch.lost_reports = 7: counted in the estimate JSON, /metrics and per device",
             (st, est.get("lost_reports"), metric, rows))
        concurrent_quotas(t, h, pb, tpl)
        h.stop()
        h.start()
        est = json.loads(h.request("GET", path, token="reader")[2])
        t.ok(est.get("lost_reports") == 7, "... and after a restart")
        h.stop()

        # ---- per-address limits -----------------------------------------------------------------
        h.start(extra=["--rate-limit", "5", "--rate-burst", "5", "--max-conns-per-addr", "4"])
        # eight requests pipelined on one connection reach the collector together: the bucket
        # (5 a second) cannot refill between them, however slow the build (make sanitize)
        s = tls_socket(h)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 8)
        got = []
        for m in re.finditer(rb"HTTP/1\.1 (\d{3})[^\r]*\r\n(.*?)\r\n\r\n", recv_all(s), re.S):
            after = re.search(rb"^Retry-After: (\S+)", m.group(2), re.M | re.I)
            got.append((int(m.group(1)), after and after.group(1).decode()))
        s.close()
        others = [h.request("GET", "/healthz", source=a)[0] for a in ("127.0.0.2", "127.0.0.3")]
        t.ok(got[:5] == [(200, None)] * 5 and (429, "1") in got[5:] and 200 in others,
             f"--rate-limit 5: five requests pass, then 429 with Retry-After: 1; another address "
             f"is served ({[g[0] for g in got]}, others {others})")
        time.sleep(1.2)
        t.ok(h.request("GET", "/healthz")[0] == 200, "a second later the address is served again")
        held = [tls_socket(h) for _ in range(4)]
        extra = socket.create_connection(("127.0.0.1", h.port), timeout=5)
        t0 = time.monotonic()
        closed = recv_all(extra) == b""
        extra.close()
        st = h.request("GET", "/healthz", source="127.0.0.4")[0]
        t.ok(closed and time.monotonic() - t0 < 1.0 and st == 200,
             "--max-conns-per-addr 4: a 5th connection from the address is closed at once, "
             "another address is served")
        for s in held:
            s.close()
        st, _, body = h.request("GET", "/metrics", token="reader", source="127.0.0.4")
        text = body.decode()
        t.ok('refused_total{reason="per_address"} 1' in text
             and "dpm_requests_rate_limited_total" in text
             and "dpm_requests_rate_limited_total 0" not in text,
             "the refusals are counted in /metrics", text[-600:])
        t.ok(h.stop() == 0, "clean stop")
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


def main():
    t = Tap()
    run(t)
    return t.done()

if __name__ == "__main__":
    sys.exit(main())
