#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-collector's two-phase FedAUC campaign over real TLS (host-sim/mech/base/fedauc_phase.h),
with SDK-made messages: the golden fedauc_rr vectors of tests/vectors/wire/0.2.0 (an upload of
12 scores, its report) plus a second upload of the 20 other scores the vector's server ranked.

Checked: an upload without a device credential (401/403), with a wrong fingerprint, a rank request for an unknown token or before the
phase closes, a report without a matching upload, all refused with a reason and nothing
stored; a restart between the two uploads loses nothing (the ranks after it are the golden
reply, byte for byte); an upload after the phase closed is refused; the golden report is
accepted once, a second report for the same token (another report id) is refused, the same
report resent is a duplicate; the estimate of the period says ranked, 2 uploads, 1 report,
1 dropout, and is an estimate of the reported examples whose interval is widened by the dropout
(the device of the second upload never reports), with no NaN in the JSON. Negative control: the estimate without ?period= is refused
as a mix of rankings.

Full runs (tests/e2e/tool_fedauc: DEVICES devices through the real SDK code of both rounds,
the messages carried here over TLS): one campaign per mechanism and variant (fedauc_rr; lap
local, global, orthogonal, adaptive); the phase closes at the upload count, every device gets
and validates its ranks, every report is accepted, and the collector's estimate (AUC, sd, CI)
equals host-sim/estimate/fedauc.c's on the same reports and ranking to 1e-8 (the JSON's 9
digits); negative control: the comparison fails against the estimate with one report's localP
one higher. Then dpm-collector verify (stored sums = stored reports'). On SQLite, then the same
on a throw-away PostgreSQL 15. And a phase closed by its deadline (upload_seconds) instead of
a count: ranks refused before it, served after it, a late upload refused, a valid estimate. TAP."""
import json
import math
import os
import subprocess
import sys
import time

from e2e_util import OUT, Tap
from pg_cluster import PgCluster
from test_collector import COLLECTOR, Harness, intervals_without_claims
from test_wire_collector import fields, message, read_hex, read_varint, varint

REL, CASE = "0.2.0", "fedauc_rr"
PERIOD = 86400
TOOL = os.path.join(OUT, "tests", "e2e", "tool_fedauc")
# every device of a run posts from 127.0.0.1: on a fast machine the per-address limit answered
# 429 mid-run (test_collector_auth.py tests the limit)
NO_RATE_LIMIT = ["--rate-limit", "0"]
DEVICES = 40  # devices of the full runs, each with 1 .. 60 examples
# the full runs' campaigns: every mechanism and variant, the phase closing at DEVICES uploads
FULL = {20: "mechanism = fedauc_rr\neps = 2", 21: "mechanism = fedauc_lap\neps = 4",
        22: "mechanism = fedauc_lap\neps = 4\nvariant = global",
        23: "mechanism = fedauc_lap\neps = 4\nvariant = orthogonal\np_share = 0.3",
        24: "mechanism = fedauc_lap\neps = 4\nvariant = adaptive"}


def campaigns():
    return f"""[campaign]
id = 6
mechanism = fedauc_rr
eps = 1
score_bits = 16
start = {int(time.time()) - 5 * PERIOD - 60}
upload_count = 2
min_uploaders = 2
""" + "".join(f"""
[campaign]
id = {cid}
{keys}
score_bits = 20
start = {int(time.time()) - 5 * PERIOD - 60}
upload_count = {DEVICES}
""" for cid, keys in FULL.items())


def edit_body_token(report, token):
    """The report with its FedaucBody's upload token replaced."""
    out = []
    for f, wt, v in fields(report):
        if f == 15:
            v = message([(g, w, token if g == 1 else x) for g, w, x in fields(v)])
        out.append((f, wt, v))
    return message(out)


def edit_id(report, new_id):
    return message([(f, wt, new_id if f == 1 else v) for f, wt, v in fields(report)])


def close(a, b, rel=1e-8):
    return a is not None and b is not None and abs(a - b) <= rel * max(1e-300, abs(b))


def full_run(t, h, cid, label):
    """DEVICES SDK devices (tool_fedauc) through both rounds over TLS; the collector's estimate
    must be host-sim/estimate/fedauc.c's on the same reports (to its 9 printed digits)."""
    st, _, camp = h.request("GET", f"/v1/campaigns/{cid}")
    p = subprocess.Popen([TOOL, camp.hex(), str(DEVICES), "60", "5", str(1000 + cid)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ups = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(DEVICES)]
    sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in ups]
    replies = []
    for u in ups:
        token = next(v for f, _, v in fields(u) if f == 4)
        replies.append(h.request("GET", f"/v1/fedauc/{cid}/ranks/{token.hex()}"))
    for r in replies:
        p.stdin.write("reply " + r[2].hex() + "\n")
    p.stdin.flush()
    reps = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(DEVICES)]
    want = json.loads(p.stdout.readline())
    p.wait(30)
    t.ok(sts == [200] * DEVICES and all(r[0] == 200 for r in replies),
         f"{label}: {DEVICES} SDK uploads stored, the phase closed at the count, every device "
         "got its ranks", (sts, [r[0] for r in replies]))
    body = b"".join(b"\x0a" + varint(len(r)) + r for r in reps)
    st, _, data = h.request("POST", "/v1/reports", body)
    t.ok(st == 200, f"{label}: the {DEVICES} reports (validated by the devices against the "
         "collector's ranks) are accepted", data)
    st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate?period=5")
    got = json.loads(body.decode()).get("fedauc", {}) if st == 200 else {}
    w = want["estimate"]
    same = all(close(got.get(k), w[k]) for k in ("auc", "auc_unbiased", "sd")) and \
        close(got["ci"][0], w["ci"][0]) and close(got["ci"][1], w["ci"][1]) and \
        got.get("dropouts") == 0 and got.get("scores") == want["m"]
    t.ok(st == 200 and got.get("valid") is True and same,
         f"{label}: the collector's estimate is estimate/fedauc.c's on the same reports: AUC "
         f"{got.get('auc')} sd {got.get('sd')} (truth {want['truth']:.6f}, M = {want['m']})",
         (got, w))
    t.ok(st == 200 and not intervals_without_claims({"fedauc": got}) and
         got.get("ci_coverage") in ("nominal", "at_least", "none"),
         f"{label}: the interval has its coverage claim beside it ({got.get('ci_coverage')})",
         got)
    b = want["perturbed"]
    t.ok(not (close(got.get("auc"), b["auc"]) and close(got.get("sd"), b["sd"])),
         f"{label}: negative control: the same comparison fails against the estimate with one "
         f"report's localP + 1 (AUC {b['auc']:.9g})")
    return got, want


BAD_BLOCKS = {  # campaign blocks the collector must refuse, and a word of the reason
    "groups = 2\n": "no groups",
    "p_share = 0.5\n": "fedauc_rr takes no variant or p_share",
    "score_bits = 0\n": "bad score_bits",
    "score_bits = 12\nscore_bits = 13\n": "given twice",
    "upload_seconds = 90000\n": "longer than the period",
    "upload_count = 0\n": "bad upload_count",
    "upload_count = 5\nmin_uploaders = 6\n": "upload_count is below min_uploaders",
    "min_uploaders = 0\n": "bad min_uploaders",
    "max_examples = 65537\n": "fedauc max_examples is at most 65536",
}


def campaign_errors(t, h):
    """--check-campaigns refuses bad FedAUC blocks with the line and reason; a good one passes
    (the negative control of the check itself)."""
    bad = []
    for extra, want in BAD_BLOCKS.items():
        path = os.path.join(h.tmp, "bad.txt")
        with open(path, "w") as f:
            f.write("[campaign]\nid = 9\nmechanism = fedauc_rr\neps = 1\n" + extra)
        r = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True, text=True)
        if r.returncode == 0 or want not in r.stderr:
            bad.append((extra, r.returncode, r.stderr.strip()))
    with open(os.path.join(h.tmp, "good.txt"), "w") as f:
        f.write("[campaign]\nid = 9\nmechanism = fedauc_lap\neps = 1\nvariant = adaptive\n"
                "upload_count = 5\nmin_uploaders = 5\n")
    r = subprocess.run([COLLECTOR, "--check-campaigns", os.path.join(h.tmp, "good.txt")],
                       capture_output=True, text=True)
    t.ok(not bad and r.returncode == 0,
         f"campaigns file: {len(BAD_BLOCKS)} bad FedAUC blocks refused with their reason, a good "
         "one accepted", (bad, r.stderr))


def deadline_run(t, pg):
    """The upload phase closed by its deadline (upload_seconds), not a count: ranks are 409
    until then and 200 after; an upload after it is refused; the reports make a valid estimate."""
    start = int(time.time()) - 5 * 3600 - 1
    h = Harness(campaigns=f"""[campaign]
id = 25
mechanism = fedauc_lap
eps = 4
variant = orthogonal
period_seconds = 3600
start = {start}
upload_seconds = 8
min_uploaders = 3
""", pg=pg)
    try:
        h.start(extra=NO_RATE_LIMIT)
        st, _, camp = h.request("GET", "/v1/campaigns/25")
        p = subprocess.Popen([TOOL, camp.hex(), "3", "20", "5", "7"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        ups = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(3)]
        sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in ups]
        tokens = [next(v for f, _, v in fields(u) if f == 4) for u in ups]
        early = h.request("GET", f"/v1/fedauc/25/ranks/{tokens[0].hex()}")[0]
        replies, waited = [], 0
        while time.time() < start + 5 * 3600 + 30:
            replies = [h.request("GET", f"/v1/fedauc/25/ranks/{k.hex()}") for k in tokens]
            if all(r[0] == 200 for r in replies):
                break
            time.sleep(0.5)
            waited += 1
        t.ok(sts == [200] * 3 and early == 409 and all(r[0] == 200 for r in replies),
             f"deadline: 3 uploads, ranks 409 before the deadline, 200 after it ({waited} polls)",
             (sts, early, [r[0] for r in replies]))
        late = message([(f, wt, b"\x44" * 16 if f == 4 else v) for f, wt, v in fields(ups[0])])
        st, _, body = h.request("POST", "/v1/fedauc/uploads", late)
        t.ok(st == 409 and b"upload phase closed" in body,
             f"deadline: an upload after it is refused ({body.decode().strip()})")
        for r in replies:
            p.stdin.write("reply " + r[2].hex() + "\n")
        p.stdin.flush()
        reps = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(3)]
        want = json.loads(p.stdout.readline())["estimate"]
        p.wait(30)
        st, _, _ = h.request("POST", "/v1/reports",
                             b"".join(b"\x0a" + varint(len(r)) + r for r in reps))
        st2, _, body = h.request("GET", "/v1/campaigns/25/estimate?period=5")
        got = json.loads(body.decode()).get("fedauc", {}) if st2 == 200 else {}
        t.ok(st == 200 and got.get("valid") is True and close(got.get("auc"), want["auc"]),
             f"deadline: the 3 reports give the estimate of estimate/fedauc.c (AUC "
             f"{got.get('auc')})", (got, want))
        t.ok(h.stop() == 0, "deadline: clean stop")
    finally:
        h.cleanup()


def run(t, pg=None):
    up = read_hex(REL, CASE, "upload")
    reply = read_hex(REL, CASE, "reply")
    report = read_hex(REL, CASE, "report")
    head = {f: v for f, _, v in fields(up) if f in (1, 2, 3)}
    token = next(v for f, _, v in fields(up) if f == 4)
    others = b"".join(varint(i * 40503 % 65537) for i in range(20))
    other = message([(1, 0, head[1]), (2, 0, head[2]), (3, 5, head[3]), (4, 2, b"\x77" * 16),
                     (5, 2, others)])
    cid = read_varint(head[1], 0)[0]
    h = Harness(campaigns=campaigns(), pg=pg)
    try:
        h.start(extra=NO_RATE_LIMIT)

        def uploads():
            return h.db_query("SELECT COUNT(*) FROM fedauc_uploads")[0][0]

        def reports():
            return h.db_query("SELECT COUNT(*) FROM reports")[0][0]

        def post(body):
            st, _, data = h.request("POST", "/v1/reports", body)
            return st, data

        st, _, body = h.request("POST", "/v1/fedauc/uploads", up, token=None)
        st2, _, _ = h.request("POST", "/v1/fedauc/uploads", up, token="reader")
        t.ok(st == 401 and st2 == 403 and uploads() == 0,
             "an upload without a device credential: 401, with an operator's only: 403; "
             "nothing stored")
        bad_fp = message([(f, wt, bytes([v[0] ^ 1]) + v[1:] if f == 3 else v)
                          for f, wt, v in fields(up)])
        st, _, body = h.request("POST", "/v1/fedauc/uploads", bad_fp)
        t.ok(st == 400 and b"fingerprint" in body and uploads() == 0,
             f"an upload with a wrong fingerprint: 400 ({body.decode().strip()}), nothing stored")
        st, _, body = h.request("POST", "/v1/fedauc/uploads", up)
        t.ok(st == 200 and uploads() == 1, f"the SDK's upload is stored ({body.decode().strip()})")
        st, _, body = h.request("POST", "/v1/fedauc/uploads", up)
        t.ok(st == 200 and uploads() == 1, "sent again: 200, stored once")
        st, _, body = h.request("GET", f"/v1/fedauc/{cid}/ranks/{token.hex()}")
        t.ok(st == 409 and b"upload phase open" in body,
             f"ranks asked before the phase closes: 409 ({body.decode().strip()})")
        st, _, body = h.request("GET", f"/v1/fedauc/{cid}/ranks/{'ab' * 16}")
        t.ok(st == 404 and b"unknown upload token" in body, "ranks for an unknown token: 404")
        st, data = post(b"\x0a" + varint(len(report)) + report)
        t.ok(st == 400 and b"ranks not sent yet" in data and reports() == 0,
             "a report before the ranking: 400 with the reason, nothing stored", data)

        t.ok(h.stop() == 0, "restart between the two uploads: clean stop")
        h.start(extra=NO_RATE_LIMIT)
        st, _, body = h.request("POST", "/v1/fedauc/uploads", other)
        t.ok(st == 200 and uploads() == 2, "after the restart the second upload closes the phase")
        st, _, got = h.request("GET", f"/v1/fedauc/{cid}/ranks/{token.hex()}")
        t.ok(st == 200 and got == reply,
             "the ranks after the restart are the golden rank reply, byte for byte", got.hex())
        late = message([(f, wt, b"\x55" * 16 if f == 4 else v) for f, wt, v in fields(up)])
        st, _, body = h.request("POST", "/v1/fedauc/uploads", late)
        t.ok(st == 409 and b"upload phase closed" in body and uploads() == 2,
             f"an upload after the phase closed: 409 ({body.decode().strip()}), nothing stored")

        orphan = edit_id(edit_body_token(report, b"\x66" * 16), b"\x21" * 16)
        st, data = post(b"\x0a" + varint(len(orphan)) + orphan)
        t.ok(st == 400 and b"no upload with this token" in data and reports() == 0,
             "a report without a matching upload: 400 with the reason, nothing stored", data)
        st, data = post(b"\x0a" + varint(len(report)) + report)
        t.ok(st == 200 and reports() == 1, "the SDK's report is accepted", data)
        twin = edit_id(report, b"\x22" * 16)
        st, data = post(b"\x0a" + varint(len(twin)) + twin)
        t.ok(st == 400 and b"upload token already reported" in data and reports() == 1,
             "a second report for the same upload token: 400 with the reason, nothing stored",
             data)
        st, data = post(b"\x0a" + varint(len(report)) + report)
        t.ok(st == 200 and reports() == 1, "the same report resent: a duplicate, stored once")
        claimed = h.db_query("SELECT COUNT(*) FROM fedauc_uploads WHERE report_id IS NOT NULL")
        t.ok(claimed[0][0] == 1, "exactly one token is claimed")

        st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate?period=5")
        text = body.decode()
        e = json.loads(text).get("fedauc", {}) if st == 200 else {}
        # the dropout rule (fedauc_phase.h): the estimate is of the 12 reported examples, its
        # interval widened by what the 20 dropped examples can do to their ranks; it used to be
        # refused ("dropouts"), so one silent upload blocked the period
        ci, bias = e.get("ci") or [0, 0], e.get("dropout_bias_max") or 0
        t.ok(st == 200 and e.get("phase") == "ranked" and e.get("uploads") == 2
             and e.get("scores") == 32 and e.get("reports") == 1 and e.get("dropouts") == 1
             and e.get("valid") is True and e.get("m") == 12 and e.get("dropout_examples") == 20
             and bias > 0 and ci[1] - ci[0] >= 2 * bias
             and "NaN" not in text and "Infinity" not in text,
             f"the estimate: ranked, 2 uploads, 32 scores, 1 report, 1 dropout: an estimate of "
             f"the 12 reported examples, its interval {ci} widened by the dropouts' +-{bias:.3f}",
             text)
        st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate")
        e = json.loads(body.decode()).get("fedauc", {}) if st == 200 else {}
        t.ok(st == 200 and e.get("valid") is False and "one period" in (e.get("reason") or ""),
             "negative control: without ?period= the estimate is refused as a mix of rankings")
        names = {20: "fedauc_rr", 21: "fedauc_lap local", 22: "fedauc_lap global",
                 23: "fedauc_lap orthogonal", 24: "fedauc_lap adaptive"}
        for cid2 in FULL:
            got, want = full_run(t, h, cid2, ("PostgreSQL " if pg else "SQLite ") + names[cid2])
            print(f"# {names[cid2]}: AUC {got.get('auc')} sd {got.get('sd')} ci {got.get('ci')} "
                  f"truth {want['truth']:.6f} M {want['m']}")
        t.ok(h.stop() == 0, "clean stop")
        ok, detail = h.consistent()
        t.ok(ok, f"dpm-collector verify: the stored FedAUC sums are the stored reports' ({detail})")
    finally:
        h.cleanup()


def main():
    t = Tap()
    h = Harness(campaigns=campaigns())
    try:
        campaign_errors(t, h)
    finally:
        h.cleanup()
    run(t)
    deadline_run(t, None)
    with PgCluster("test_collector_fedauc") as pg:
        run(t, pg=pg)
        deadline_run(t, pg)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
