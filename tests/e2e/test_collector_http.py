#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The minor HTTP and TLS points of issue 12 item 8, against dpm-collector on loopback, TAP:
HEAD is answered without a body (keep-alive stays in step), an HTTP/1.1 request without Host
is refused (400) and absolute-form targets are accepted (RFC 9112 §3.2, RFC 9112 §3.2.2), only AEAD
cipher suites are offered (no CBC-SHA1/SHA256, no CCM or CCM_8; openssl s_client offers them
one at a time), a TLS 1.3 KeyUpdate keeps the connection (both kinds, openssl s_client's k and
K commands), and the same report_id in another campaign is a new report, not a duplicate."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (Harness, Tap, batch_of, load_pb2, make_report, post_batch,  # noqa: E402
                            recv_all, tls_socket, tuple_mr_template)

CAMPAIGNS = """\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr

[campaign]
id = 5
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
"""


def raw_exchange(h, data, source=None):
    s = tls_socket(h, source=source)
    s.sendall(data)
    s.settimeout(5)
    got = recv_all(s)
    s.close()
    return got


def split_responses(data):
    """[(status line, headers dict, body)] from a byte stream of HTTP/1.1 responses, using
    Content-Length; a HEAD response is recognised by the caller passing it first."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode().split("\r\n")
        hdrs = dict(line.split(": ", 1) for line in lines[1:])
        out.append((lines[0], hdrs, rest))
        data = rest
    return out


def s_client(h, args, stdin=b"", keyupdate=None, timeout=10):
    """openssl s_client to the collector; returns (established, output). keyupdate: a list of
    lines to send interleaved with sleeps (s_client commands are lines of their own)."""
    cmd = ["openssl", "s_client", "-connect", f"127.0.0.1:{h.port}", "-servername", "localhost",
           "-CAfile", h.ca, *args]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        for chunk in (keyupdate or [stdin]):
            time.sleep(0.3)
            p.stdin.write(chunk)
            p.stdin.flush()
        time.sleep(0.3)
        p.stdin.close()
    except BrokenPipeError:
        pass
    p.stdin = None  # closed: communicate must not flush it
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    text = out.decode(errors="replace")
    established = "Cipher is" in text and "Cipher is (NONE)" not in text
    return established, text


def run(t, pg=None):
    """The checks, on a SQLite file or (pg) a PostgreSQL cluster's database."""
    h = None
    try:
        h = Harness(campaigns=CAMPAIGNS, pg=pg)
        pb = load_pb2(h.tmp)
        h.start()

        # ---- HEAD ------------------------------------------------------------------------
        got = raw_exchange(h, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                              b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head, sep, rest = got.partition(b"\r\n\r\n")
        length = [ln for ln in head.split(b"\r\n") if ln.startswith(b"Content-Length: ")]
        t.ok(head.startswith(b"HTTP/1.1 200 ") and length and length != [b"Content-Length: 0"]
             and rest.startswith(b"HTTP/1.1 200 "),
             "HEAD: 200 with the GET's Content-Length but no body; the next response follows "
             "at once on the same connection", got[:200])
        got = raw_exchange(h, b"HEAD /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
                              b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 404 ") and b"\r\n\r\nHTTP/1.1 200 " in got,
             "a HEAD answered 404 carries no body either", got[:200])
        st, hd, _ = h.request("POST", "/healthz", b"")
        t.ok(st == 405 and hd.get("Allow") == "GET, HEAD", "POST /healthz: 405, Allow: GET, HEAD")

        # ---- Host --------------------------------------------------------------------------
        got = raw_exchange(h, b"GET /healthz HTTP/1.1\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in got,
             "HTTP/1.1 without Host: 400 and closed", got[:60])
        got = raw_exchange(h, b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 400 "), "two Host headers: 400", got[:60])
        got = raw_exchange(h, b"GET /healthz HTTP/1.0\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 200 "), "HTTP/1.0 without Host: 200", got[:60])

        # ---- absolute-form -----------------------------------------------------------------
        port = str(h.port).encode()
        got = raw_exchange(h, b"GET https://localhost:" + port + b"/healthz HTTP/1.1\r\n"
                              b"Connection: close\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 200 ") and b'"status": "ok"' in got,
             "absolute-form https://localhost:PORT/healthz (no Host needed): 200", got[:80])
        got = raw_exchange(h, b"GET http://localhost/v1/campaigns/1?x=1 HTTP/1.1\r\n"
                              b"Host: localhost\r\nConnection: close\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 200 ") and b"application/x-protobuf" in got,
             "absolute-form with a query: routed by its path", got[:80])
        got = raw_exchange(h, b"GET ftp://localhost/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        t.ok(got.startswith(b"HTTP/1.1 400 "), "another scheme: 400", got[:60])

        # ---- cipher suites -----------------------------------------------------------------
        for what, args in [("TLS 1.2 ECDHE-ECDSA-AES128-SHA (CBC, SHA-1)",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"]),
                           ("TLS 1.2 ECDHE-ECDSA-AES256-SHA384 (CBC)",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-SHA384"]),
                           ("TLS 1.2 ECDHE-ECDSA-AES128-CCM8",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-CCM8"]),
                           ("TLS 1.2 ECDHE-ECDSA-AES128-CCM",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-CCM"]),
                           ("TLS 1.3 TLS_AES_128_CCM_8_SHA256",
                            ["-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_8_SHA256"]),
                           ("TLS 1.3 TLS_AES_128_CCM_SHA256",
                            ["-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_SHA256"])]:
            ok, out = s_client(h, args)
            t.ok(not ok, f"{what}: refused", out[-300:])
        for what, args in [("TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"]),
                           ("TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305",
                            ["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"]),
                           ("TLS 1.3 TLS_AES_256_GCM_SHA384",
                            ["-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"]),
                           ("TLS 1.3 TLS_CHACHA20_POLY1305_SHA256",
                            ["-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"])]:
            ok, out = s_client(h, args)
            t.ok(ok, f"{what}: accepted (the positive control)", out[-300:])

        # ---- TLS 1.3 KeyUpdate -------------------------------------------------------------
        get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        for cmd, what in [(b"k\n", "KeyUpdate (update_not_requested)"),
                          (b"K\n", "KeyUpdate (update_requested: the server updates too)")]:
            ok, out = s_client(h, ["-tls1_3"], keyupdate=[get, cmd, get, cmd, get])
            t.ok(ok and out.count("HTTP/1.1 200 OK") == 3 and "KEYUPDATE" in out,
                 f"TLS 1.3 {what} twice between requests: the connection survives, all three "
                 f"requests answered", out[-400:])

        # ---- de-duplication per (campaign, report_id) ---------------------------------------
        tpl = tuple_mr_template(pb)
        a = make_report(pb, tpl, 1)
        b = make_report(pb, tpl, 5)
        b.report_id = a.report_id
        st1, r1, _ = post_batch(h, pb, batch_of(pb, a))
        st2, r2, _ = post_batch(h, pb, batch_of(pb, b))
        t.ok(st1 == 200 and r1.accepted == 1 and st2 == 200 and r2.accepted == 1
             and r2.duplicates == 0,
             "the same report_id in another campaign is a new report (accepted, not a "
             "duplicate)", (r1, r2))
        st3, r3, _ = post_batch(h, pb, batch_of(pb, a, b))
        rows = h.db_query("SELECT campaign_id FROM reports WHERE report_id = ? ORDER BY 1",
                          a.report_id)
        t.ok(st3 == 200 and r3.duplicates == 2 and r3.accepted == 0 and rows == [(1,), (5,)],
             "... and each is a duplicate of itself only", (r3, rows))
        t.ok(h.stop() == 0, "clean stop")
    except Exception as exc:
        import traceback
        t.ok(False, f"test aborted: {exc!r}", traceback.format_exc())
    finally:
        if h is not None:
            h.cleanup()


def main():
    t = Tap()
    run(t)
    return t.done()

if __name__ == "__main__":
    sys.exit(main())
