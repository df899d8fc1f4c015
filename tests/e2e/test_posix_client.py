#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""examples/posix-client against the real collector over TLS: a report is made, charged,
stored and delivered (the device authenticates with its client certificate, --cert/--key;
without one the collector refuses the upload and the report stays queued); the ledger refuses a second report in the same period; undefined
metrics, out-of-range groups, bad events, unknown campaigns and campaigns beyond the app's
policy spend nothing; a wrong CA and a wrong server name are refused, and the kept campaign copy
lets a report queue while the collector cannot be reached; roc_hist events are reported; the
device cap stops a second report of the day whatever its campaign period (issue 27); an outbox
wiped in state.bin is counted, reported to the collector and exits 6 (negative control: without
its anchor file the same wipe is silent)."""
import json
import os
import subprocess
import sys
import tempfile
import time

OUT = os.environ.get("OUT", "build/host")
CLIENT = os.path.join(OUT, "posix-client")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Campaign 171 has periods of one minute; period 1 is the current one, 0 ended 30 s ago (late
# reports are accepted for one more period) and 2..4 open within the default 300 s clock slack.
CAMPAIGNS = f"""\
[campaign]
id = 171
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
period_seconds = 60
start = {int(time.time()) - 90}

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


def main():
    from test_collector import Harness, make_device_cert  # certificates + collector process
    h = Harness(campaigns=CAMPAIGNS)
    try:
        h.start()
        url = f"https://localhost:{h.port}"
        with tempfile.TemporaryDirectory(prefix="dpm-client-test.") as tmp:
            good = os.path.join(tmp, "events.csv")
            with open(good, "w") as f:
                f.write("score,label,group\n0.9,1,2\n0.2,1,2\n0.7,0,2\n0.1,0,2\n")
            no_pos = os.path.join(tmp, "negatives.csv")
            with open(no_pos, "w") as f:
                f.write("0.9,0,1\n0.2,0,1\n")
            state = os.path.join(tmp, "state")
            cert = ["--cert", f"{h.tmp}/device-0001.crt", "--key", f"{h.tmp}/device-0001.key"]

            # The device cap is per day; these runs use one-minute campaign periods, so they lift
            # it (the runs below with cap=None show it at its default).
            def client(*extra, events=good, ca=h.ca, identity=cert, state=state, cap="64"):
                args = [CLIENT, "--url", url, "--ca", ca, "--campaign", "171", "--state", state,
                        *identity]
                if cap is not None:
                    args += ["--device-cap", cap]
                if events:
                    args += ["--events", events]
                return subprocess.run(args + list(extra), capture_output=True, text=True,
                                      timeout=60)

            r = subprocess.run([CLIENT, "--help"], capture_output=True, text=True)
            opts = ["--url", "--ca", "--campaign", "--events", "--threshold", "--period",
                    "--max-eps", "--max-budget", "--device-cap", "--state", "--server-name",
                    "--flush-only", "--cert", "--key", "--help"]
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
            r = client("--period", "2", identity=[], state=os.path.join(tmp, "anonymous"))
            tap(r.returncode == 5 and "401" in r.stdout and "0 delivered" in r.stdout,
                "without a device certificate the upload is refused (401) and the report stays "
                "queued (exit 5)", r.stdout + r.stderr)
            r = client("--period", "2", "--campaign", "999")
            tap(r.returncode == 2 and "unknown campaign" in r.stderr,
                "an unknown campaign is refused (exit 2)", r.stderr)

            # Validation before the charge: nothing is spent for a report that is not made.
            bad_group = os.path.join(tmp, "bad_group.csv")
            with open(bad_group, "w") as f:
                f.write("0.9,1,9\n0.2,0,9\n")
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
            roc = os.path.join(tmp, "roc.csv")
            with open(roc, "w") as f:
                f.write("score,label\n0.95,1\n0.80,1\n0.30,0\n0.10,0\n0.55,1\n0.45,0\n")
            bad_roc = os.path.join(tmp, "bad_roc.csv")
            with open(bad_roc, "w") as f:
                f.write("0.95,1\n0.80,2\n")
            r = client("--period", "0", "--campaign", "172", events=bad_roc)
            tap(r.returncode == 1 and "label 0/1" in r.stderr,
                "a roc_hist event with label 2 is refused before anything is spent", r.stderr)
            r = client("--period", "0", "--campaign", "172", events=roc)
            tap(r.returncode == 0 and "1 delivered" in r.stdout,
                "roc_hist events (score,label) are reported and delivered", r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/172/estimate")
            tap(status == 200 and json.loads(body).get("reports") == 1,
                "the collector counted the roc_hist report", body[:300])

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
            tap(status == 200 and json.loads(body).get("reports") == 5,
                "campaign 171 counted each of its five reports once", body[:300])

            # Damaged state never re-spends a period's budget (period 4 is spent). The ledger is
            # the first 4 KiB of state.bin, two mirrored 2 KiB slots; its anchor is a second file.
            state_bin = os.path.join(state, "state.bin")
            with open(state_bin, "rb") as f:
                pristine = f.read()

            def damaged(edit, what):
                data = bytearray(pristine)
                edit(data)
                with open(state_bin, "wb") as f:
                    f.write(data)
                r = client("--period", "4")
                tap(r.returncode in (3, 6) and "report stored" not in r.stdout,
                    f"{what}: no second report in a spent period (exit {r.returncode})",
                    r.stdout + r.stderr)

            damaged(lambda d: d.__setitem__(10, d[10] ^ 0x01), "one bit flipped in slot A")
            damaged(lambda d: d.__setitem__(2048 + 10, d[2048 + 10] ^ 0x80),
                    "one bit flipped in slot B")
            damaged(lambda d: d.__setitem__(slice(2048, 4096), b"\xff" * 2048), "slot B erased")
            damaged(lambda d: d.__setitem__(slice(0, 2048), b"\x00" * 2048), "slot A zeroed")
            damaged(lambda d: d.__setitem__(slice(0, 4096), b"\xff" * 4096),
                    "the whole ledger erased (the anchor file remembers)")
            r = client("--period", "4")
            tap(r.returncode == 6 and "refusing" in r.stderr,
                "a wholly erased ledger fails closed with exit 6", r.stdout + r.stderr)
            status, _, body = h.request("GET", "/v1/campaigns/171/estimate")
            tap(status == 200 and json.loads(body).get("reports") == 5,
                "... and the collector still counts five reports for campaign 171", body[:300])

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

            # An outbox wiped in state.bin (bytes 4096..) under its anchor file: the loss is
            # counted, sent to the collector with the next batch, and the run exits 6.
            def wiped(anchor):
                st = os.path.join(tmp, "wiped" if anchor else "wiped-no-anchor")
                who = identity_of("device-0102" if anchor else "device-0103")
                client("--period", "2", ca=f"{other}/ca.crt", state=st, identity=who)  # queued
                with open(os.path.join(st, "state.bin"), "r+b") as f:
                    f.seek(4096)
                    f.write(b"\xff" * (65536 - 4096))
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
    finally:
        h.cleanup()
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
