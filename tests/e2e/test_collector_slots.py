#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Slot-holding attacks on dpm-collector (issue 12 item 6), loopback only, bounded in time, TAP.

The review's attacks: 256 keep-alive TLS connections sending one GET every 5 s left 0 of 86
legitimate requests served; 256 silent TCP connections left 2 of 50. Here the same attackers
(spread over 8 loopback addresses, 32 each: under the per-address cap, so they are all
admitted) hold their connections, and reconnect at once whenever the collector drops one, while
a legitimate device (its own address) makes LEGIT requests, one every 0.2 s, each on a fresh
TLS connection with a 5 s timeout (x SLOW under `make sanitize`): POST one report. Each attack
runs twice: with the default limits (--max-conns 1024: the connections are simply held) and
with --max-conns 128 (half the attackers: the longest-waiting connection without a request in
progress is evicted for each newcomer). Target: every legitimate request served. Figures are
printed as "# slots:" lines.
Usage: test_collector_slots.py [--seconds S]   (default 8 s of legitimate traffic per run)"""
import os
import select
import socket
import ssl
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (SLOW, Harness, Tap, batch_of, load_pb2, make_report,  # noqa: E402
                            tuple_mr_template)

CAMPAIGNS = """\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
"""
ATTACKERS = 256
ADDRS = [f"127.0.0.{10 + i}" for i in range(8)]
LEGIT_ADDR = "127.0.0.100"


class Attack:
    """ATTACKERS connections held open from ADDRS: 'keepalive' (TLS, one GET every 5 s) or
    'silent' (TCP, never a byte). A dropped connection is replaced at once."""

    def __init__(self, h, kind):
        self.h, self.kind = h, kind
        self.socks = {}
        self.stop = threading.Event()
        self.opened = 0
        self.dropped = 0
        self.answers = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self, i):
        addr = ADDRS[i % len(ADDRS)]
        try:
            raw = socket.create_connection(("127.0.0.1", self.h.port), timeout=5 * SLOW,
                                           source_address=(addr, 0))
            if self.kind == "keepalive":
                s = self.h.ctx.wrap_socket(raw, server_hostname="localhost")
                s.setblocking(False)
            else:
                s = raw
                s.setblocking(False)
            self.socks[i] = [s, 0.0]
            self.opened += 1
        except (OSError, ssl.SSLError):
            self.socks.pop(i, None)

    def start(self):
        for i in range(ATTACKERS):
            self.connect(i)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            now = time.monotonic()
            for i in range(ATTACKERS):
                if i not in self.socks:
                    self.connect(i)
                    continue
                s, last = self.socks[i]
                if self.kind == "keepalive" and now - last >= 5.0:
                    try:
                        s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                        self.socks[i][1] = now
                    except (ssl.SSLWantWriteError, BlockingIOError):
                        pass
                    except OSError:
                        self.drop(i)
            live = [v[0] for v in self.socks.values()]
            try:
                ready, _, _ = select.select(live, [], [], 0.05)
            except (OSError, ValueError):
                ready = []
            for s in ready:
                i = next((k for k, v in self.socks.items() if v[0] is s), None)
                if i is None:
                    continue
                try:
                    data = s.recv(65536)
                    if not data:
                        self.drop(i)
                    else:
                        self.answers += data.count(b"HTTP/1.1 200")
                except (ssl.SSLWantReadError, BlockingIOError):
                    pass
                except OSError:
                    self.drop(i)

    def drop(self, i):
        s = self.socks.pop(i, [None])[0]
        self.dropped += 1
        try:
            s.close()
        except Exception:
            pass

    def finish(self):
        self.stop.set()
        self.thread.join(10)
        for s, _ in self.socks.values():
            try:
                s.close()
            except Exception:
                pass


def legit(h, pb, tpl, seconds):
    """One POST of one fresh report every 0.2 s from LEGIT_ADDR: (served, total, worst s)."""
    served, total, worst = 0, 0, 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        total += 1
        c = h.conn(timeout=5 * SLOW, source=LEGIT_ADDR)
        try:
            st, _, _ = h.request("POST", "/v1/reports", batch_of(pb, make_report(pb, tpl, 1)),
                                 conn=c)
            served += st == 200
        except Exception:  # a timeout or a reset: not served
            pass
        finally:
            c.close()
        dt = time.monotonic() - t0
        worst = max(worst, dt)
        time.sleep(max(0.0, 0.2 - dt))
    return served, total, worst


def vm_hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return -1


def main():
    seconds = 8.0
    if len(sys.argv) == 3 and sys.argv[1] == "--seconds":
        seconds = float(sys.argv[2])
    t = Tap()
    h = None
    try:
        h = Harness(campaigns=CAMPAIGNS)
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)
        for kind in ("keepalive", "silent"):
            for cap in (None, 128):
                extra = ["--rate-limit", "0"]  # the legitimate device posts 5 a second
                if cap:
                    extra += ["--max-conns", str(cap)]
                h.start(extra=extra)
                attack = Attack(h, kind)
                t0 = time.monotonic()
                attack.start()
                ramp = time.monotonic() - t0
                served, total, worst = legit(h, pb, tpl, seconds)
                attack.finish()
                metrics = h.request("GET", "/metrics")[2].decode()
                def counter(name):
                    return next((ln.split()[-1] for ln in metrics.split("\n")
                                 if ln.startswith(name)), "?")
                evicted = counter("dpm_connections_evicted_total")
                refused = counter('dpm_connections_refused_total{reason="full"}')
                label = f"{ATTACKERS} {kind} connections" + (f", --max-conns {cap}" if cap
                                                               else ", default limits")
                print(f"# slots: {label}: {served} of {total} legitimate requests served, "
                      f"slowest {worst:.2f} s; attacker opened {attack.opened} connections "
                      f"({ramp:.1f} s to open the first {ATTACKERS}), {attack.dropped} dropped "
                      f"by the collector, {attack.answers} attacker GETs answered; "
                      f"{evicted} evicted, {refused} refused (full); collector VmHWM "
                      f"{vm_hwm(h.proc.pid)} MiB", flush=True)
                t.ok(total >= 10 and served == total,
                     f"{label}: {served} of {total} legitimate requests served (slowest "
                     f"{worst:.2f} s)")
                if kind == "keepalive" and cap is None:
                    t.ok(attack.dropped == 0 and attack.answers >= ATTACKERS,
                         f"... and the attackers' own connections were served too (held, "
                         f"{attack.answers} GETs answered)")
                if cap:
                    t.ok(evicted not in ("?", "0"),
                         f"... by evicting waiting connections ({evicted} evictions)")
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
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
