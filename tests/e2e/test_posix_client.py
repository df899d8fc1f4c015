#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""examples/posix-client against the real collector over TLS: a report is made, charged,
stored and delivered (the device authenticates with its client certificate, --cert/--key, or a
bearer token, --token, or both with the token bound to the certificate; without a credential,
with an unknown or an operator's token, or with a token of another identity the collector
refuses the upload with 401/403, the client exits 8 and the report stays queued; the token is
never printed or stored); the ledger refuses a second report in the same period; undefined
metrics, out-of-range groups, bad events, unknown campaigns and campaigns beyond the app's
policy spend nothing; a wrong CA and a wrong server name are refused, and the kept campaign copy
lets a report queue while the collector cannot be reached; roc_hist events are reported, with
groups too; the device cap stops a second report of the day whatever its campaign period (issue
27); an outbox wiped in state.bin is counted, reported to the collector and exits 6 (negative
control: without its anchor file the same wipe is silent); a report the collector rejects
(device quota exceeded) exits 7 with the reason; a collector with a small body limit (413) gets
the queue in smaller batches, and one that rate-limits (429) gets it later."""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

OUT = os.environ.get("OUT", "build/host")
CLIENT = os.path.join(OUT, "posix-client")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Campaigns 171 and 176 (the bearer-token checks', with quotas of their own) have periods of one
# minute; period 1 is the current one, 0 ended 30 s ago (late reports are accepted for one more
# period) and 2..4 open within the default 300 s clock slack.
MINUTES = f"""\
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
period_seconds = 60
start = {int(time.time()) - 90}
"""
CAMPAIGNS = f"""\
[campaign]
id = 171
{MINUTES}
[campaign]
id = 176
{MINUTES}
[campaign]
id = 172
mechanism = roc_hist
eps = 1
bins = 8

[campaign]
id = 173
mechanism = tuple_mr
eps = 2
groups = 4
metrics = tpr

[campaign]
id = 174
mechanism = roc_hist
eps = 1
group_eps = 0.5
groups = 4
bins = 8

[campaign]
id = 175
mechanism = tuple_mr
eps = 1
budget = 2
device_quota = 1
groups = 4
metrics = tpr
"""

n = 0
failed = 0


def tap(ok, what, diag=""):
    global n, failed
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} - {what}")
    if not ok:
        failed += 1
        for line in diag.splitlines()[-8:]:
            print(f"#   {line}")


def layout_of(data):
    """(ledger offset, ledger size, outbox offset, outbox size) from the SDK's layout record at
    the start of state.bin (dpm/device.h: "DPL1", region size, sector size, the four, CRC)."""
    magic, _, _, lo, ls, oo, osz = struct.unpack_from("<4s6I", data, 0)
    if magic != b"DPL1":
        raise SystemExit("state.bin has no layout record")
    return lo, ls, oo, osz


def free_port():
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def add_tokens(h, roles):
    """More bearer tokens in the harness's credentials file (before the collector starts):
    name -> roles. Returns name -> the file holding the token."""
    from test_collector import sha256_hex
    files = {}
    with open(h.creds.path, "a") as f:
        for name, role in roles.items():
            token = os.urandom(24).hex()
            f.write(f"{name} {role} {sha256_hex(token)}\n")
            files[name] = os.path.join(h.tmp, f"token.{name}")
            with open(files[name], "w") as t:
                t.write(token + "\n")
    return files


def main():
    from test_collector import Harness, make_device_cert  # certificates + collector process
    h = Harness(campaigns=CAMPAIGNS)
    # phone-1: a device token bound to the certificate device-0001 (one identity, whichever
    # it presents); phone-2: a plain device token; phone-3: bound to another certificate.
    tokens = add_tokens(h, {"phone-1": "device,cert=device-0001", "phone-2": "device",
                            "phone-3": "device,cert=device-0002"})
    tokens["reader"] = h.creds.files["reader"]  # an operator's token: may not post reports
    secrets = [open(p).read().strip() for p in tokens.values()]
    outputs = []  # everything posix-client printed, to look for the tokens in it
    h2 = None
    try:
        h.start()
        url = f"https://localhost:{h.port}"
        with tempfile.TemporaryDirectory(prefix="dpm-client-test.") as tmp:
            def write(name, text):
                """A file of the test's temp directory holding text; its path."""
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write(text)
                return path

            good = write("events.csv", "score,label,group\n0.9,1,2\n0.2,1,2\n0.7,0,2\n0.1,0,2\n")
            no_pos = write("negatives.csv", "0.9,0,1\n0.2,0,1\n")
            state = os.path.join(tmp, "state")
            cert = ["--cert", f"{h.tmp}/device-0001.crt", "--key", f"{h.tmp}/device-0001.key"]

            # The device cap is per day; these runs use one-minute campaign periods, so they lift
            # it (the runs below with cap=None show it at its default).
            def client(*extra, events=good, ca=h.ca, identity=cert, state=state, cap="64",
                       url=url):
                args = [CLIENT, "--url", url, "--ca", ca, "--campaign", "171", "--state", state,
                        *identity]
                if cap is not None:
                    args += ["--device-cap", cap]
                if events:
                    args += ["--events", events]
                r = subprocess.run(args + list(extra), capture_output=True, text=True,
                                   timeout=60)
                outputs.append(r.stdout + r.stderr)
                return r

            r = subprocess.run([CLIENT, "--help"], capture_output=True, text=True)
            opts = ["--url", "--ca", "--campaign", "--events", "--threshold", "--period",
                    "--max-eps", "--max-budget", "--device-cap", "--state", "--server-name",
                    "--flush-only", "--cert", "--key", "--token", "--help"]
            tap(r.returncode == 0 and all(o in r.stdout for o in opts),
                "--help documents every option", r.stdout)
            r = client("--period", "0")
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "a report is measured, charged, stored and delivered over TLS", r.stdout + r.stderr)
            r = client("--period", "0")
            tap(r.returncode == 3 and "budget" in r.stderr,
                "the ledger refuses a second report in the same period (exit 3)", r.stderr)
            r = client("--period", "1", events=no_pos)
            tap(r.returncode == 4 and "undefined" in r.stderr,
                "an undefined metric (no positive label) sends nothing (exit 4)", r.stderr)
            r = client("--period", "1")
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "the next period is allowed, and the undefined attempt spent nothing", r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            est = json.loads(body)
            tap(status == 200 and est.get("reports") == 2,
                "the collector counted exactly the two delivered reports", body[:300])
            devices = {r[0] for r in h.db_query("SELECT device FROM reports")}
            tap(devices == {"cert:device-0001"},
                "the collector stored them under the certificate's identity", str(devices))
            anon = os.path.join(tmp, "anonymous")
            r = client("--period", "2", identity=[], state=anon)
            tap(r.returncode == 8 and "HTTP 401" in r.stdout and "0 delivered" in r.stdout and
                "1 pending" in r.stdout and "credential" in r.stderr,
                "without a device credential the upload is refused (401, exit 8: the "
                "credential, not the network) and the report stays queued", r.stdout + r.stderr)

            # Bearer tokens (--token FILE), the README's device credential besides certificates.
            def token_run(name, *extra, state=anon, identity=(), events=good):
                return client(*extra, "--token", tokens[name], identity=list(identity),
                              state=state, events=events)

            r = client("--flush-only", "--token", tokens["reader"], identity=[], state=anon,
                       events=None)
            tap(r.returncode == 8 and "HTTP 403" in r.stdout and "1 pending" in r.stdout and
                "403" in r.stderr,
                "an operator's token may not post reports: 403, exit 8, the report stays queued",
                r.stdout + r.stderr)
            unknown = write("token.unknown", os.urandom(24).hex() + "\n")
            secrets.append(open(unknown).read().strip())
            r = client("--flush-only", "--token", unknown, identity=[], state=anon, events=None)
            tap(r.returncode == 8 and "HTTP 401" in r.stdout and "1 pending" in r.stdout,
                "an unknown token: 401, exit 8, the report stays queued", r.stdout + r.stderr)
            r = client("--flush-only", "--token", tokens["phone-2"], identity=[], state=anon,
                       events=None)
            tap(r.returncode == 0 and "1 delivered" in r.stdout and "0 pending" in r.stdout,
                "with a device token the queued report is delivered", r.stdout + r.stderr)
            r = token_run("phone-2", "--period", "3")
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "a report made and posted with a device token (no certificate)",
                r.stdout + r.stderr)
            got = sorted(d for (d,) in h.db_query(
                "SELECT device FROM reports WHERE campaign_id = 171 AND period IN (2, 3)"))
            tap(got == ["token:phone-2", "token:phone-2"],
                "the collector stored them under the token's identity", str(got))
            both = os.path.join(tmp, "both")  # campaign 176: its own quotas
            r = token_run("phone-1", "--campaign", "176", "--period", "0", state=both,
                          identity=cert)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "a token bound to the device's certificate (cert=device-0001) goes with it",
                r.stdout + r.stderr)
            got = h.db_query("SELECT device FROM reports WHERE campaign_id = 176")
            tap(got == [("cert:device-0001",)],
                "... and the collector sees one identity, the certificate's", str(got))
            r = token_run("phone-3", "--campaign", "176", "--period", "1", state=both,
                          identity=cert)
            tap(r.returncode == 8 and "HTTP 403" in r.stdout and "1 pending" in r.stdout,
                "a token bound to another certificate, sent with this one: 403, exit 8, queued",
                r.stdout + r.stderr)
            r = token_run("phone-1", "--flush-only", state=both, identity=cert, events=None)
            tap(r.returncode == 0 and "1 delivered" in r.stdout and "0 pending" in r.stdout,
                "... and delivered with the right token", r.stdout + r.stderr)
            bad_token = write("token.bad", "not a token\r\nX-Injected: 1\n")
            r = client("--flush-only", "--token", bad_token, identity=[], state=both,
                       events=None)
            tap(r.returncode == 1 and bad_token in r.stderr and "bearer token" in r.stderr and
                "not a token" not in r.stdout + r.stderr,
                "a token file that holds no token is refused, named by its file only", r.stderr)
            r = client("--period", "2", "--campaign", "999")
            tap(r.returncode == 2 and "unknown campaign" in r.stderr,
                "an unknown campaign is refused (exit 2)", r.stderr)

            # Validation before the charge: nothing is spent for a report that is not made.
            bad_group = write("bad_group.csv", "0.9,1,9\n0.2,0,9\n")
            r = client("--period", "2", events=bad_group)
            tap(r.returncode == 1 and "group 9 is out of range" in r.stderr,
                "a group beyond the campaign's is named as such and refused (exit 1)", r.stderr)
            r = client("--period", "2")
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "... and spent nothing: the same period still reports", r.stdout + r.stderr)

            # The app's policy caps what a campaign from the network may ask for.
            r = client("--period", "0", "--campaign", "173")
            tap(r.returncode == 2 and "policy" in r.stderr,
                "a campaign asking eps 2 is refused by the default policy (eps <= 1)", r.stderr)
            r = client("--period", "0", "--campaign", "173", "--max-eps", "2", "--max-budget", "2")
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "... and accepted when the app's policy allows eps 2", r.stdout + r.stderr)

            # roc_hist: score,label events become one noised histogram report.
            roc = write("roc.csv", "score,label\n0.95,1\n0.80,1\n0.30,0\n0.10,0\n0.55,1\n0.45,0\n")
            bad_roc = write("bad_roc.csv", "0.95,1\n0.80,2\n")
            r = client("--period", "0", "--campaign", "172", events=bad_roc)
            tap(r.returncode == 1 and "label 0/1" in r.stderr,
                "a roc_hist event with label 2 is refused before anything is spent", r.stderr)
            r = client("--period", "0", "--campaign", "172", events=roc)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "roc_hist events (score,label) are reported and delivered", r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/172/estimate")
            tap(status == 200 and json.loads(body).get("reports") == 1,
                "the collector counted the roc_hist report", body[:300])

            # roc_hist with groups: score,label,group (one group per device), like tuple ones.
            roc_g = write("roc_groups.csv", "score,label,group\n0.95,1,2\n0.80,1,2\n0.30,0,2\n0.10,0,2\n")
            r = client("--period", "0", "--campaign", "174", events=roc)
            tap(r.returncode == 1 and "score,label,group" in r.stderr,
                "a grouped roc_hist campaign wants the group column (exit 1, nothing spent)",
                r.stderr)
            mixed = write("roc_mixed.csv", "0.95,1,2\n0.10,0,3\n")
            r = client("--period", "0", "--campaign", "174", events=mixed)
            tap(r.returncode == 1 and "same group" in r.stderr,
                "... one group per device (exit 1)", r.stderr)
            group4 = write("group4.csv", "0.9,1,4\n0.2,0,4\n")
            r = client("--period", "0", "--campaign", "174", events=group4)
            tap(r.returncode == 1 and "group 4 is out of range" in r.stderr,
                "... below the campaign's groups (exit 1)", r.stderr)
            r = client("--period", "0", "--campaign", "174", events=roc_g)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "a grouped roc_hist campaign is reported and delivered (spent nothing before)",
                r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/174/estimate")
            est = json.loads(body) if status == 200 else {}
            tap(est.get("reports") == 1 and "roc_groups" in est,
                "the collector counted it in the per-group estimate", body[:300])

            # A report the collector rejects: campaign 175 lets the ledger spend twice a period
            # (budget 2) but the collector stores one report per device and period (quota 1).
            quota = ["--campaign", "175", "--max-budget", "2", "--period", "0"]
            quota_state = os.path.join(tmp, "quota")
            r = client(*quota, state=quota_state)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "campaign 175: the first report of the period is delivered", r.stdout + r.stderr)
            r = client(*quota, state=quota_state)
            ids = [line.rsplit(" ", 1)[-1] for line in r.stdout.splitlines()
                   if line.startswith("report stored")]
            tap(r.returncode == 7 and "1 rejected" in r.stdout and "0 pending" in r.stdout and
                "device quota exceeded" in r.stderr and ids and
                f"rejected report {ids[0]} (campaign 175, period 0)" in r.stderr,
                "the second is rejected (device quota exceeded): exit 7, the collector's reason "
                "and the report's id, campaign and period printed", r.stdout + r.stderr)
            r = client("--flush-only", state=quota_state, events=None)
            tap(r.returncode == 0 and "0 rejected" in r.stdout and "0 delivered" in r.stdout,
                "... and it is gone from the outbox (not sent again)", r.stdout + r.stderr)

            # A collector that cannot be trusted is never posted to; the kept campaign copy lets
            # the report queue, and it is delivered by the next run that reaches the collector.
            other = os.path.join(tmp, "other")
            os.mkdir(other)
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                            f"{other}/ca.key", "-out", f"{other}/ca.crt", "-days", "1",
                            "-subj", "/CN=other CA"], check=True, capture_output=True)
            r = client("--period", "3", ca=f"{other}/ca.crt")
            tap(r.returncode == 5 and "TLS" in r.stderr and "kept copy" in r.stdout and
                "1 report(s) wait" in r.stderr,
                "a certificate from another CA is refused (exit 5); the report queues",
                r.stdout + r.stderr)
            r = client("--period", "4", "--server-name", "collector.example")
            tap(r.returncode == 5 and "TLS" in r.stderr and "2 report(s) wait" in r.stderr,
                "a certificate for another host name is refused (exit 5); the report queues",
                r.stdout + r.stderr)
            r = client("--flush-only", events=None)
            tap(r.returncode == 0 and "2 delivered" in r.stdout and "0 pending" in r.stdout,
                "--flush-only delivers the queued reports and empties the outbox",
                r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            tap(status == 200 and json.loads(body).get("reports") == 7,
                "campaign 171 counted each of its seven reports once (five with the "
                "certificate, two with a token)", body[:300])

            # Damaged state never re-spends a period's budget (period 4 is spent). The SDK lays
            # out state.bin (dpm/device.h, "the storage layout") and its record at the start says
            # where: the ledger (two mirrored slots) and the outbox; the ledger's anchor is a
            # second file.
            state_bin = os.path.join(state, "state.bin")
            with open(state_bin, "rb") as f:
                pristine = f.read()
            lo, ls, oo, osz = layout_of(pristine)
            half = ls // 2

            def damaged(edit, what):
                data = bytearray(pristine)
                edit(data)
                with open(state_bin, "wb") as f:
                    f.write(data)
                r = client("--period", "4")
                tap(r.returncode in (3, 6) and "report stored" not in r.stdout,
                    f"{what}: no second report in a spent period (exit {r.returncode})",
                    r.stdout + r.stderr)

            damaged(lambda d: d.__setitem__(lo + 10, d[lo + 10] ^ 0x01), "one bit flipped in slot A")
            damaged(lambda d: d.__setitem__(lo + half + 10, d[lo + half + 10] ^ 0x80),
                    "one bit flipped in slot B")
            damaged(lambda d: d.__setitem__(slice(lo + half, lo + ls), b"\xff" * half),
                    "slot B erased")
            damaged(lambda d: d.__setitem__(slice(lo, lo + half), b"\x00" * half), "slot A zeroed")
            damaged(lambda d: d.__setitem__(slice(lo, lo + ls), b"\xff" * ls),
                    "the whole ledger erased (the anchor file remembers)")
            r = client("--period", "4")
            tap(r.returncode == 6 and "refusing" in r.stderr,
                "a wholly erased ledger fails closed with exit 6", r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            tap(status == 200 and json.loads(body).get("reports") == 7,
                "... and the collector still counts seven reports for campaign 171", body[:300])

            # The device cap (default: --max-budget, 1 per day): a second report today is refused
            # whatever campaign period it claims, and nothing is queued for it.
            # (Each of these devices has its own certificate: the collector's quota is one report
            # per device, campaign and period.)
            def identity_of(cn):
                crt, key = make_device_cert(h.tmp, cn)
                return ["--cert", crt, "--key", key]

            capped, who = os.path.join(tmp, "capped"), identity_of("device-0101")
            r = client("--period", "2", state=capped, cap=None, identity=who)
            tap(r.returncode == 0 and "1 delivered" in r.stdout and "device today 1.000000" in
                r.stdout, "a report under the default device cap", r.stdout + r.stderr)
            r = client("--period", "3", state=capped, cap=None, identity=who)
            tap(r.returncode == 3 and "device's cap for this period is spent" in r.stderr and
                "0 pending" in r.stdout,
                "the next campaign period on the same day: refused by the device cap (exit 3)",
                r.stdout + r.stderr)

            # An outbox wiped in state.bin (where its layout record says) under its anchor file:
            # the loss is counted, sent to the collector with the next batch, and the run exits 6.
            def wiped(anchor):
                st = os.path.join(tmp, "wiped" if anchor else "wiped-no-anchor")
                who = identity_of("device-0102" if anchor else "device-0103")
                client("--period", "2", ca=f"{other}/ca.crt", state=st, identity=who)  # queued
                with open(os.path.join(st, "state.bin"), "r+b") as f:
                    _, _, out_at, out_size = layout_of(f.read(64))
                    f.seek(out_at)
                    f.write(b"\xff" * out_size)
                if not anchor:
                    os.remove(os.path.join(st, "outbox-anchor.bin"))  # as 0.1.0 kept no anchor
                return client("--period", "3", state=st, identity=who)

            _, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            lost_before = json.loads(body).get("lost_reports")
            r = wiped(True)
            _, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            lost_after = json.loads(body).get("lost_reports")
            tap(r.returncode == 6 and "was erased: 1 report(s) lost" in r.stderr and
                "1 delivered" in r.stdout and lost_after == lost_before + 1,
                "an erased outbox is counted, reported to the collector (lost_reports "
                f"{lost_before} -> {lost_after}) and exits 6", r.stdout + r.stderr)
            r = wiped(False)
            _, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            tap(r.returncode == 0 and "lost" not in r.stderr and
                json.loads(body).get("lost_reports") == lost_after,
                "negative control: without the outbox's anchor the same wipe goes unnoticed",
                r.stdout + r.stderr)

            # A collector whose body limit is below the client's batches (413, answered before
            # the body is read, and the connection closed): smaller batches, nothing lost.
            h2 = Harness(campaigns=CAMPAIGNS)
            h2.start(extra=["--max-body", "120"])
            url2 = f"https://localhost:{h2.port}"
            cert2 = ["--cert", f"{h2.tmp}/device-0001.crt", "--key", f"{h2.tmp}/device-0001.key"]
            small = os.path.join(tmp, "small")
            r = client("--period", "0", url=url2, ca=h2.ca, identity=cert2, state=small)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "a collector with --max-body 120 takes one report", r.stdout + r.stderr)
            down = f"https://localhost:{free_port()}"
            queued = [client("--period", str(p), url=down, ca=h2.ca, identity=cert2,
                             state=small).returncode for p in (1, 2, 3, 4)]
            tap(queued == [5, 5, 5, 5], "four more reports queue while it is unreachable",
                str(queued))
            r = client("--flush-only", url=url2, ca=h2.ca, identity=cert2, state=small,
                       events=None)
            _, _, metrics = h2.request("GET", "/metrics")
            too_large = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.decode().splitlines()
                            if line.startswith('dpm_http_requests_total{code="413"}'))
            tap(r.returncode == 0 and "4 delivered" in r.stdout and "0 pending" in r.stdout and
                too_large >= 1,
                f"the queue goes in smaller batches after {too_large:.0f} answer(s) 413: all four "
                "delivered, exit 0", r.stdout + r.stderr + metrics.decode()[-300:])
            got = h2.db_query("SELECT COUNT(*), COUNT(DISTINCT report_id) FROM reports")
            tap(got == [(5, 5)], "the collector stored each of the five once", str(got))

            # A collector that rate-limits (429, Retry-After: 1): the report stays queued (exit
            # 5, "retry"), and goes once the client comes back later.
            h2.stop()
            h2.start(extra=["--rate-limit", "1", "--rate-burst", "1"])
            url2 = f"https://localhost:{h2.port}"
            r = client("--period", "0", "--campaign", "172", events=roc, url=url2, ca=h2.ca,
                       identity=cert2, state=small)
            tap(r.returncode == 5 and "HTTP 429" in r.stdout and "1 pending" in r.stdout and
                "rate-limiting" in r.stderr and "nothing was lost" in r.stderr,
                "a 429 leaves the report queued, and the advice says: retry later, nothing lost",
                r.stdout + r.stderr)
            time.sleep(2.5)
            r = client("--flush-only", url=url2, ca=h2.ca, identity=cert2, state=small,
                       events=None)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "... delivered when the client comes back after its Retry-After",
                r.stdout + r.stderr)

            # The token never left the device except in its requests: not printed, not stored.
            stored = b""
            for d in (anon, both):
                for name in os.listdir(d):
                    with open(os.path.join(d, name), "rb") as f:
                        stored += f.read()
            logs = open(h.log.name, errors="replace").read()
            leaks = [i for i, t in enumerate(secrets)
                     if any(t in o for o in outputs) or t.encode() in stored or t in logs]
            tap(not leaks and len(outputs) > 30,
                f"no token in anything posix-client printed ({len(outputs)} runs), in its "
                "state files or in the collector's log", str(leaks))
    finally:
        h.cleanup()
        if h2 is not None:
            h2.cleanup()
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
