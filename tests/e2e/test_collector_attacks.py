#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Attacks on dpm-collector from issue 27 (items 5 and 6), each as an attacker runs it, over real
TLS on loopback only (127.0.0.0/8 and ::1), bounded in time (about 20 s in all), TAP. Each
section fails on the collector before the fix (4ae99aa; run it with OUT=<that build>/host: its
figures are in the threat model in host-sim/collector/README.md), and each has a control in the same run that the
fixed collector still serves what it should. A section that raises fails alone (the old
collector refuses options it does not know), the others still run.

  no_body_routes  a body on GET/HEAD, an unknown route or a route that takes none: 413 and
              closed, nothing reserved; without the body the usual answer.
  bodies      120 trickled `GET /healthz` with `Content-Length: 1048576` (every sixth with 1
              byte, to fill the gaps) from 127.0.0.2 and .3, each reconnecting as soon as it
              is closed, while a legitimate device posts 49 batches, one attempt each: all 49
              stored. Before: 0 to 19 of 49 (the review: 2), the budget full (415.9 MiB).
  ipv6_loopback  the per-address limits over ::1 (the /64 keying: tests/unit/
              test_collector_trust.c, since loopback has one IPv6 address).
  lost        Batch.lost_reports capped per credential and UTC day (3 x 4294967295 add 26, not
              12,884,901,885); the excess is a counted reject.
  identity    a certificate with another identity's token: 403; a token bound to the
              certificate (cert=CN) is the same identity (one quota).
  revoked     --revoked: fingerprints and identities, reread on change, fail-closed on a bad
              file.
  empty_db    a 0-byte SQLite file is refused (start, verify, backup); a missing one is made.
  on_pg       on PostgreSQL (a throw-away cluster, pg_cluster.py): the lost-report cap again,
              and databases holding part of the schema are refused."""
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (SLOW, Harness, Tap, batch_of, load_pb2,  # noqa: E402
                            make_report, post_batch, recv_all, tuple_mr_template)

NOW = int(time.time())
CAMPAIGNS = f"""\
[campaign]     # 100 periods of an hour, all open: one report per device and period
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
period_seconds = 3600
start = {NOW - 99 * 3600}
late_seconds = {100 * 3600}

[campaign]     # a day per period, two reports per device
id = 2
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
device_quota = 2
start = {NOW - 3600}
"""
ATTACKERS = ("127.0.0.2", "127.0.0.3")
PER_ADDR = 60  # 120 in all, under the default 64 connections per address
LEGIT_BATCHES = 49


def metric(h, name):
    text = h.request("GET", "/metrics", token="harness")[2].decode()
    return next((int(float(ln.split()[-1])) for ln in text.split("\n") if ln.startswith(name)),
                -1)


def head_status(s):
    """The status of the response head on s, 0 if none arrives (closed, or still silent)."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    return int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else 0


def bodies(t, h, pb, tpl):
    """The two-address body flood (see the module docstring)."""
    h.start()
    stop = threading.Event()
    answers, lock = [], threading.Lock()
    opened = [0]

    def attacker(source, length):
        while not stop.is_set():
            try:
                raw = socket.create_connection(("127.0.0.1", h.port), timeout=2 * SLOW,
                                               source_address=(source, 0))
                s = h.ctx.wrap_socket(raw, server_hostname="localhost")
            except (OSError, ssl.SSLError):
                time.sleep(0.2)
                continue
            with lock:
                opened[0] += 1
            st = 0
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                          % length)
                s.settimeout(0.5)
                while not stop.is_set():  # trickle the body: a byte every half second
                    try:
                        st = head_status(s)
                        if st:
                            break
                    except socket.timeout:
                        pass
                    s.sendall(b"x")
            except (OSError, ssl.SSLError):
                pass
            finally:
                s.close()
            if st or not stop.is_set():  # (not one the end of the test cut short)
                with lock:
                    answers.append(st)
            time.sleep(0.2)  # and again, on a new connection

    # 1 MiB bodies (4 MiB reserved each), and every sixth one small (1 MiB + 3 bytes) to fill
    # the gaps the big ones leave in the budget
    threads = [threading.Thread(target=attacker, args=(a, 1 if i % 6 == 5 else 1 << 20))
               for a in ATTACKERS for i in range(PER_ADDR)]
    for th in threads:
        th.start()
    time.sleep(2)  # the flood is in place
    stored = []
    codes = {}
    t0 = time.monotonic()
    for k in range(LEGIT_BATCHES):  # one attempt per batch, as in the review's run
        rep = make_report(pb, tpl, 1, period=k)
        try:
            st, r, _ = post_batch(h, pb, batch_of(pb, rep), token="device-a")
        except (OSError, ssl.SSLError):
            st, r = 0, None
        codes[st] = codes.get(st, 0) + 1
        if st == 200 and r is not None and r.accepted == 1:
            stored.append(k)
    dt = time.monotonic() - t0
    stop.set()
    for th in threads:
        th.join(10 * SLOW)
    peak = metric(h, "dpm_memory_reserved_peak_bytes")
    counts = {s: answers.count(s) for s in sorted(set(answers))}
    print(f"# bodies: {len(threads)} attackers from {len(ATTACKERS)} addresses opened "
          f"{opened[0]} connections, answers {counts}; legitimate device: {len(stored)} of "
          f"{LEGIT_BATCHES} batches stored in {dt:.1f} s ({codes}); budget peak "
          f"{peak / 2**20:.1f} MiB", flush=True)
    t.ok(opened[0] >= len(threads) and sum(counts.values()) > 0,
         f"control: the flood reached the collector ({opened[0]} connections)")
    t.ok(len(stored) == LEGIT_BATCHES,
         f"under the flood a legitimate device got all {LEGIT_BATCHES} batches stored, one "
         f"attempt each ({len(stored)}; {codes})")
    t.ok(413 in counts and set(counts) <= {413, 429},
         f"every trickled GET with a body was answered 413 at once, or 429 once its address "
         f"had spent its rate ({counts})")
    # the flood's connections (96 KiB each) are all it may hold: no body was ever reserved
    conn_only = (len(threads) + 8) * 96 * 1024
    t.ok(0 < peak <= conn_only + 4 * (1 << 20),
         f"no body of theirs was reserved: budget peak {peak / 2**20:.1f} MiB <= connections "
         f"+ the device's requests ({(conn_only + 4 * (1 << 20)) / 2**20:.1f} MiB)")
    t.ok(h.stop() == 0, "clean stop")


def raw_request(h, head, body=b"", source=None):
    """head (+ body) on a fresh TLS connection: (status, closed after the answer)."""
    raw = socket.create_connection(("127.0.0.1", h.port), timeout=5 * SLOW,
                                   source_address=(source, 0) if source else None)
    s = h.ctx.wrap_socket(raw, server_hostname="localhost")
    s.sendall(head + body)
    st = head_status(s)
    s.settimeout(1.0 * SLOW)
    closed = False
    try:  # the answer's body (if any), then end-of-file if the collector closed
        while True:
            if s.recv(65536) == b"":
                closed = True
                break
    except (socket.timeout, TimeoutError):
        pass  # still open after a second: kept alive
    except (OSError, ssl.SSLError):
        closed = True
    s.close()
    return st, closed


def no_body_routes(t, h):
    """413 before anything is reserved, for every request that carries a body where none is
    taken; the same requests without a body are answered as before (the control)."""
    h.start()
    tok = h.creds.token["harness"]
    auth = f"Authorization: Bearer {tok}\r\n".encode()
    cases = [(b"GET", b"/healthz", 200), (b"HEAD", b"/healthz", 200),
             (b"GET", b"/v1/campaigns/1", 200), (b"GET", b"/metrics", 200),
             (b"GET", b"/nowhere", 404), (b"POST", b"/nowhere", 404),
             (b"POST", b"/healthz", 405), (b"DELETE", b"/v1/reports", 405),
             (b"GET", b"/v1/fedauc/1/ranks/" + b"0" * 32, 404)]
    got, ok = [], True
    for method, path, without in cases:
        head = method + b" " + path + b" HTTP/1.1\r\nHost: x\r\n" + auth
        with_body = raw_request(h, head + b"Content-Length: 5\r\n\r\n", b"hello")
        plain = raw_request(h, head + b"Content-Length: 0\r\n\r\n")[0]
        got.append((method.decode(), path.decode()[:20], with_body, plain))
        ok &= with_body == (413, True) and plain == without
    peak = metric(h, "dpm_memory_reserved_peak_bytes")
    t.ok(ok, "a body on GET/HEAD, an unknown route or a route that takes none: 413 and the "
         "connection closed; without the body the same request gets its usual answer", got)
    t.ok(peak <= 4 * 96 * 1024,
         f"... and none of them reserved body memory (budget peak {peak} bytes)")
    t.ok(h.stop() == 0, "clean stop")


def ipv6_loopback(t, h):
    """Over ::1 (the only IPv6 loopback address: the /64 keying itself is unit-tested in
    tests/unit/test_collector_trust.c): the per-address limits apply to IPv6 clients too."""
    h.start(extra=["--listen", "[::1]:0", "--rate-limit", "5", "--rate-burst", "5"])
    raw = socket.create_connection(("::1", h.port), timeout=5 * SLOW)
    s = h.ctx.wrap_socket(raw, server_hostname="localhost")
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 8)
    data = recv_all(s)  # the 429 closes the connection
    s.close()
    codes = [int(m.group(1)) for m in re.finditer(rb"HTTP/1\.1 (\d{3}) ", data)]
    body = raw_request_v6(h, b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n")
    t.ok(codes[:6] == [200] * 5 + [429] and body == 413,
         f"over ::1: five requests, then 429 (--rate-limit 5 keyed on ::/64), and a body on GET "
         f"413 ({codes}, {body})")
    t.ok(h.stop() == 0, "clean stop")


def raw_request_v6(h, head):
    time.sleep(1.1)  # the bucket refills
    raw = socket.create_connection(("::1", h.port), timeout=5 * SLOW)
    s = h.ctx.wrap_socket(raw, server_hostname="localhost")
    s.sendall(head)
    st = head_status(s)
    s.close()
    return st


def lost(t, h, pb):
    """Batch.lost_reports capped per credential and UTC day; the excess counted, not added."""
    h.start()
    cap = 24 * 1 + 1 * 2  # campaign 1: 24 hourly periods x quota 1; campaign 2: 1 day x 2
    path = "/v1/campaigns/1/estimate"

    def lost_now():
        est = json.loads(h.request("GET", path, token="harness")[2])
        return est.get("lost_reports"), metric(h, "dpm_lost_reports_total")

    over_name = 'dpm_reports_rejected_total{reason="lost reports over the daily cap"}'
    st1, _, _ = post_batch(h, pb, batch_of(pb, lost=7), token="device-a")
    st2, _, _ = post_batch(h, pb, batch_of(pb, lost=30), token="device-a")
    got_a = lost_now()
    over_a = metric(h, over_name)
    t.ok(st1 == st2 == 200 and got_a == (cap, cap) and over_a == 7 + 30 - cap,
         f"control: an honest device's 7 lost reports count whole; its next 30 count up to its "
         f"daily cap of {cap} (what it may store in a day), the other {7 + 30 - cap} are counted "
         f"as rejects ({st1}, {st2}, lost {got_a}, over {over_a})")
    codes = [post_batch(h, pb, batch_of(pb, lost=2**32 - 1), token="device-b")[0]
             for _ in range(3)]
    got = lost_now()
    over = metric(h, over_name)
    rows = h.db_query("SELECT device, count FROM lost ORDER BY device")
    t.ok(codes == [200] * 3 and got == (2 * cap, 2 * cap)
         and over == 7 + 30 - cap + 3 * (2**32 - 1) - cap
         and rows == [("token:device-a", cap), ("token:device-b", cap)],
         f"3 empty batches claiming 4294967295 lost reports each add {cap}, not 12,884,901,885: "
         f"the estimate and /metrics say {got}, per credential {rows}; the excess is a counted "
         f"reject ({over})")
    h.stop()
    h.start()
    t.ok(lost_now() == (2 * cap, 2 * cap), "... and the same after a restart")
    post_batch(h, pb, batch_of(pb, lost=1), token="device-b")
    t.ok(lost_now() == (2 * cap, 2 * cap) and h.stop() == 0,
         "the cap holds across the restart (the day's count is in the database); clean stop")


def cert_ctx(h, cn):
    ctx = ssl.create_default_context(cafile=h.ca)
    ctx.load_cert_chain(f"{h.tmp}/{cn}.crt", f"{h.tmp}/{cn}.key")
    return ctx


def post_as(h, pb, body, token=None, cert=None):
    """POST /v1/reports with a token (name in h.creds, or None) and/or a client certificate
    (its CN, or None): (status, BatchResponse or None, body text)."""
    c = h.conn(ctx=cert_ctx(h, cert) if cert else None)
    try:
        st, hd, out = h.request("POST", "/v1/reports", body, conn=c, token=token)
    finally:
        c.close()
    r = pb.BatchResponse() if hd.get("Content-Type") == "application/x-protobuf" else None
    if r is not None:
        r.ParseFromString(out)
    return st, r, out.decode(errors="replace") if r is None else ""


def bind_token(h, name, roles):
    """A new token in the credentials file (read at the next start); returns the file's old
    text."""
    from test_collector import sha256_hex
    old = open(h.creds.path).read()
    h.creds.token[name] = os.urandom(24).hex()
    with open(h.creds.path, "a") as f:
        f.write(f"{name} {roles} {sha256_hex(h.creds.token[name])}\n")
    return old


def start_or_exit(args, wait=5):
    """Run the collector: (exit status, output) if it exits within wait seconds, else
    (None, output) after killing it (it started: what the refused cases must not do)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = p.communicate(timeout=wait * SLOW)[0]
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        return None, p.communicate()[0]


def identity(t, h, pb, tpl):
    """One identity per device holding a token and a certificate (campaign 2: quota 2)."""
    h.start()
    d = post_as(h, pb, batch_of(pb, make_report(pb, tpl, 2)), token="device-a",
                cert="device-0001")
    e = post_as(h, pb, batch_of(pb, make_report(pb, tpl, 2)), token="device-a")
    t.ok(d[0] == 403 and "two different identities" in d[2] and e[0] == 200,
         f"a certificate with a token of another identity (unbound): 403, not a second "
         f"identity ({d[0]}: {d[2].strip()!r}); the same token alone: 200 ({e[0]})")
    t.ok(h.stop() == 0, "clean stop")
    creds = bind_token(h, "dev1-token", "device,cert=device-0001")
    try:
        h.start()
        a = post_as(h, pb, batch_of(pb, make_report(pb, tpl, 2)), cert="device-0001")
        b = post_as(h, pb, batch_of(pb, make_report(pb, tpl, 2)), token="dev1-token")
        c = post_as(h, pb, batch_of(pb, make_report(pb, tpl, 2)), token="dev1-token",
                    cert="device-0001")
        devs = h.db_query("SELECT device, COUNT(*) FROM reports WHERE campaign_id = 2 AND device "
                          "LIKE 'cert:%' GROUP BY device")
        t.ok(a[0] == 200 and b[0] == 200 and c[0] == 400 and c[1] is not None
             and [x.reason for x in c[1].rejects] == ["device quota exceeded"]
             and devs == [("cert:device-0001", 2)],
             f"a token bound to the device's certificate (cert=device-0001) is the same "
             f"identity: certificate, token, both: {a[0]}, {b[0]}, {c[0]} (device_quota = 2 for "
             f"the device, not per credential; stored as {devs})", (a, b, c))
        t.ok(h.stop() == 0, "clean stop")
    finally:  # the other sections run with the usual credentials
        with open(h.creds.path, "w") as f:
            f.write(creds)


def fingerprint(path):
    out = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", path],
                         check=True, capture_output=True, text=True).stdout
    return out.strip().split("=", 1)[1]


def revoked(t, h, pb, tpl):
    """--revoked: a deny list of certificate fingerprints and identities, reread on change."""
    from test_collector import make_device_cert
    make_device_cert(h.tmp, "device-0002")
    deny = f"{h.tmp}/revoked.txt"
    with open(deny, "w") as f:
        f.write("# revoked device certificates\n")
    h.start(extra=["--revoked", deny])
    period = iter(range(LEGIT_BATCHES, 100))  # the periods bodies() left free

    def post(**who):
        return post_as(h, pb, batch_of(pb, make_report(pb, tpl, 1, period=next(period))), **who)

    def rewrite(text):
        with open(deny + ".new", "w") as f:
            f.write(text)
        os.replace(deny + ".new", deny)  # as an operator's tools would: atomically
        time.sleep(0.5)  # > COLL_REVOKED_CHECK_MS

    before = (post(cert="device-0002")[0], post(cert="device-0001")[0])
    rewrite(f"# lost in the field\n{fingerprint(f'{h.tmp}/device-0002.crt')}  # device-0002\n")
    after = post(cert="device-0002")
    other = post(cert="device-0001")[0]
    t.ok(before == (200, 200) and after[0] == 403 and "revoked" in after[2] and other == 200,
         f"device-0002's fingerprint added to the list: 403 'revoked' within half a second, "
         f"without a restart ({before} -> {after[0]}: {after[2].strip()!r}); device-0001 still "
         f"{other}")
    rewrite(f"{fingerprint(f'{h.tmp}/device-0002.crt').replace(':', '').lower()}\n"
            f"token:device-b\ncert:device-0001\n")
    got = {k: post(**w)[0] for k, w in
           (("device-b", {"token": "device-b"}), ("device-a", {"token": "device-a"}),
            ("device-0001", {"cert": "device-0001"}), ("device-0002", {"cert": "device-0002"}))}
    t.ok(got == {"device-b": 403, "device-a": 200, "device-0001": 403, "device-0002": 403},
         f"identities too (token:device-b, cert:device-0001), and a fingerprint without colons: "
         f"{got}")
    with open(deny, "a") as f:
        f.write("not a fingerprint\n")
    time.sleep(0.5)
    still = (post(token="device-b")[0], post(cert="device-0002")[0])
    log = open(h.log.name).read()
    t.ok(still == (403, 403) and '"event": "revoked_reload_failed"' in log
         and "line 4" in log,
         f"a damaged list changes nothing (the list in force stays: {still}) and is logged with "
         f"its line")
    rewrite("")
    cleared = (post(token="device-b")[0], post(cert="device-0002")[0])
    entries = metric(h, "dpm_revoked_entries")
    t.ok(cleared == (200, 200) and entries == 0,
         f"an empty list: both served again ({cleared}); dpm_revoked_entries {entries}")
    t.ok(h.stop() == 0, "clean stop")
    bad = f"{h.tmp}/revoked.bad"
    with open(bad, "w") as f:
        f.write("cert:\n")
    h.proc = subprocess.Popen(h.args(extra=["--revoked", bad]), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    out = h.proc.communicate(timeout=20)[0]
    t.ok(h.proc.returncode == 2 and "revoked.bad: line 1" in out,
         f"a bad list at start-up: exit 2 with FILE: line N ({h.proc.returncode})", out[-300:])


def empty_db(t, h):
    """A 0-byte SQLite file is refused; a missing one is created (the control)."""
    empty = f"{h.tmp}/empty.db"
    open(empty, "w").close()
    rc, out = start_or_exit(h.args(extra=["--db", empty]))
    t.ok(rc == 2 and "empty (0-byte) file" in out and "restore" in out
         and os.path.getsize(empty) == 0,
         f"a 0-byte database file: exit 2, nothing written, restore advised (exit {rc}; None: it "
         f"started on it)", out[-400:])
    rc, out = h.admin("verify", "--db", empty)
    rc2, out2 = h.admin("backup", "--db", empty, "--to", f"{h.tmp}/empty-backup.db")
    t.ok(rc != 0 and "empty (0-byte) file" in out and os.path.getsize(empty) == 0
         and rc2 != 0 and "nothing to back up" in out2
         and not os.path.exists(f"{h.tmp}/empty-backup.db"),
         f"... and `dpm-collector verify` on it too ({rc}); `backup` makes no empty backup "
         f"({rc2})", out[-300:] + out2[-300:])
    fresh = f"{h.tmp}/fresh.db"
    h.start(extra=["--db", fresh])
    log = open(h.log.name).read()
    t.ok(os.path.getsize(fresh) > 0 and '"event": "database_created"' in log and h.stop() == 0,
         "control: a database file that does not exist is created, and the creation is logged "
         "(database_created, warn)")


def on_pg(t, _h):
    """PostgreSQL: the lost-report cap (charged in the shared quota table), then databases that
    hold part of a schema are refused; an empty one is new."""
    from pg_cluster import PgCluster
    with PgCluster("test_collector_attacks") as pg:
        h = Harness(campaigns=CAMPAIGNS, pg=pg)
        try:
            lost(t, h, load_pb2(h.tmp))
            cases = []
            for damage in ("DELETE FROM dpm_schema", "DROP TABLE dpm_schema",
                           "CREATE TABLE dpm_schema (version integer NOT NULL); "
                           "INSERT INTO dpm_schema VALUES (1); DROP TABLE reports"):
                pg.sql(h.dbname, damage)
                rc, out = start_or_exit(h.args())
                cases.append((damage[:22], rc, "part of one" in out))
            t.ok(all(rc == 2 and said for _, rc, said in cases),
                 f"a PostgreSQL database with part of the schema (its version row deleted, the "
                 f"version table dropped, a table dropped): exit 2 each ({cases})")
        finally:
            h.cleanup()


def section(t, h, fn, *args):
    """Run one attack; an exception fails it (the old collector refuses options it lacks)
    without stopping the others."""
    try:
        fn(t, h, *args)
    except Exception as exc:
        import traceback
        t.ok(False, f"{fn.__name__}: aborted: {exc!r}", traceback.format_exc())
        if h is not None and h.procs:
            print("# collector log:")
            for line in open(h.log.name).read().splitlines()[-10:]:
                print(f"#   {line}")
    if h is not None and h.proc is not None and h.proc.poll() is None:
        h.proc.kill()
        h.proc.wait()


def main():
    t = Tap()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)
        section(t, h, no_body_routes)
        section(t, h, bodies, pb, tpl)
        section(t, h, ipv6_loopback)
        section(t, h, lost, pb)
        section(t, h, identity, pb, tpl)
        section(t, h, revoked, pb, tpl)
        section(t, h, empty_db)
    finally:
        h.cleanup()
    section(t, None, on_pg)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
