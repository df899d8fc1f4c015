#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""FedAUC in the collector's operations, over real TLS with SDK-made messages
(tests/e2e/tool_fedauc), on SQLite and then on a throw-away PostgreSQL 15:

  - /metrics: dpm_fedauc_uploads_{accepted,duplicate,rejected,late}_total,
    dpm_fedauc_rank_replies_total, dpm_fedauc_reports_{accepted,rejected}_total move by exactly
    what was sent (3 uploads, 1 resent, a wrong fingerprint, an unknown campaign, a late upload,
    4 rank replies, 2 reports, 1 orphan report); negative control: a tuple_mr campaign's accepted
    and rejected reports move none of the FedAUC counters;
  - reject statistics: every refused upload is counted with its reason ("fedauc upload: ...")
    in dpm_reports_rejected_total{reason}, dpm_rejects_total{campaign, reason} (the database),
    the campaign's estimate ("rejects") and the log's reject events, by campaign (0 for an
    unknown one); negative control: the stored and resent uploads count as no reject;
  - dropouts: dpm_fedauc_dropouts_total{campaign} is 0 while the period's reports are still
    open (one upload unreported: the negative control) and 1 once the period closed;
  - retention: `dpm-collector retention --keep-periods 1`, beside the running collector, drops
    the closed period's 3 uploads and its phase with its 2 reports and sums (the estimate of
    that period says phase none, the dropouts metric falls to 0, its tokens' rank replies are
    404); the current period's upload and phase are kept
    (negative control) and so is everything with --keep-periods 1000; verify still ok; and a
    retention with a clock a period ahead drops the current period's ranked phase: uploads for
    that period again are ranked afresh (not from the collector's cached ranking).

The campaign's periods last 8 s (late_seconds and clock_slack_seconds 0), so a period closes
while the test waits. TAP."""
import json
import os
import re
import subprocess
import sys
import time

from e2e_util import OUT, Tap
from pg_cluster import PgCluster
from test_collector import Harness, batch_of, load_pb2, make_report, post_batch, tuple_mr_template
from test_collector_fedauc import edit_body_token, edit_id
from test_wire_collector import fields, message, varint

TOOL = os.path.join(OUT, "tests", "e2e", "tool_fedauc")
P = 8  # period_seconds of the FedAUC campaign
CID = 40
START = int(time.time()) - 10 * P


def campaigns():
    return f"""[campaign]
id = {CID}
mechanism = fedauc_rr
eps = 2
score_bits = 20
period_seconds = {P}
start = {START}
upload_seconds = {P - 1}
upload_count = 3
late_seconds = 0
clock_slack_seconds = 0

[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
start = {int(time.time()) - 60}
"""


FEDAUC_COUNTERS = ("uploads_accepted", "uploads_duplicate", "uploads_rejected", "uploads_late",
                   "rank_replies", "reports_accepted", "reports_rejected")


def metrics(h):
    """{(name, labels): value} of GET /metrics."""
    st, _, body = h.request("GET", "/metrics", token="reader")
    out = {}
    for line in body.decode().splitlines():
        m = re.match(r"^([a-z_]+)(\{[^}]*\})? (\S+)$", line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return st, out


def fa(m, name):
    return m.get((f"dpm_fedauc_{name}_total", ""))


def token_of(upload):
    return next(v for f, _, v in fields(upload) if f == 4)


def period_now():
    return (int(time.time()) - START) // P


def wait_for_fresh_period(need):
    """Sleep until the current period has at least `need` seconds left; its number."""
    left = P - (time.time() - START) % P
    if left < need:
        time.sleep(left + 0.2)
    return period_now()


def sdk_uploads(camp, n, period, seed):
    p = subprocess.Popen([TOOL, camp.hex(), str(n), "20", str(period), str(seed)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ups = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(n)]
    p.kill()
    p.wait()
    return ups


def stale_ranking(t, h, name, camp):
    """A retention run with a clock one period ahead drops the current period's ranked phase,
    then new uploads fill that period again: the collector ranks them, not its cached ranking
    of the dropped uploads (which knows none of the new tokens)."""
    time.sleep(P - (time.time() - START) % P + 0.2)  # a period without uploads
    k = period_now()
    old = sdk_uploads(camp, 3, k, 79)
    sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in old]
    first = h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(old[0]).hex()}")[0]
    rc, out = h.admin("retention", "--campaigns", h.campaigns, "--keep-periods", "1", "--now",
                      str(int(time.time()) + P))
    new = sdk_uploads(camp, 3, k, 80)
    sts += [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in new]
    ranks = [h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(u).hex()}")[0] for u in new]
    gone = h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(old[0]).hex()}")[0]
    t.ok(sts == [200] * 6 and first == 200 and rc == 0 and "and 4 FedAUC upload(s)" in out
         and ranks == [200] * 3 and gone == 404 and period_now() == k,
         f"{name}: period {k} ranked, dropped by a retention one period ahead (its 3 uploads "
         "and the one of the period before), uploaded again: "
         f"the new uploads get their ranks {ranks}, the dropped token {gone}",
         (sts, first, out, ranks, gone))


def run(t, pg=None):
    name = "PostgreSQL" if pg else "SQLite"
    h = Harness(campaigns=campaigns(), pg=pg)
    pb = load_pb2(h.tmp)
    try:
        h.start(extra=["--rate-limit", "0"])
        st, m0 = metrics(h)
        t.ok(st == 200 and all(fa(m0, k) == 0 for k in FEDAUC_COUNTERS)
             and m0.get(("dpm_fedauc_dropouts_total", f'{{campaign="{CID}"}}')) == 0,
             f"{name}: /metrics has the FedAUC counters, all 0 at start", m0)
        st, _, camp = h.request("GET", f"/v1/campaigns/{CID}")
        k = wait_for_fresh_period(6)
        p = subprocess.Popen([TOOL, camp.hex(), "3", "20", str(k), "77"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        ups = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(3)]
        sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in ups]
        again = h.request("POST", "/v1/fedauc/uploads", ups[0])[0]
        bad_fp = message([(f, wt, bytes([v[0] ^ 1]) + v[1:] if f == 3 else v)
                          for f, wt, v in fields(ups[0])])
        fp = h.request("POST", "/v1/fedauc/uploads", bad_fp)[0]
        unknown = message([(f, wt, varint(999) if f == 1 else v) for f, wt, v in fields(ups[0])])
        unk = h.request("POST", "/v1/fedauc/uploads", unknown)[0]
        late = message([(f, wt, b"\x5a" * 16 if f == 4 else v) for f, wt, v in fields(ups[0])])
        st_late, _, late_body = h.request("POST", "/v1/fedauc/uploads", late)
        replies = [h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(u).hex()}") for u in ups]
        h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(ups[0]).hex()}")  # any number of times
        for r in replies:
            p.stdin.write("reply " + r[2].hex() + "\n")
        p.stdin.flush()
        reps = [bytes.fromhex(p.stdout.readline().split()[1]) for _ in range(3)]
        p.stdout.readline()
        p.wait(30)
        # two devices report, the third drops out; an orphan report is refused
        st_rep, _, _ = h.request("POST", "/v1/reports",
                                 b"".join(b"\x0a" + varint(len(r)) + r for r in reps[:2]))
        orphan = edit_id(edit_body_token(reps[2], b"\x66" * 16), b"\x21" * 16)
        st_orph, _, _ = h.request("POST", "/v1/reports", b"\x0a" + varint(len(orphan)) + orphan)
        # negative control: tuple_mr reports (one stored, one refused) are not FedAUC's
        tpl = tuple_mr_template(pb)
        st_t1, _, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 1, 0, 1)))
        st_t2, _, _ = post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 1, 5, 1)))
        t.ok(sts == [200] * 3 and again == 200 and fp == 400 and unk == 404 and st_late == 409
             and b"upload phase closed" in late_body and all(r[0] == 200 for r in replies)
             and st_rep == 200 and st_orph == 400 and st_t1 == 200 and st_t2 == 400,
             f"{name}: period {k}: 3 uploads (the count closes the phase), 1 resent, 3 refused; "
             "4 rank replies; 2 reports stored, 1 orphan refused; 2 tuple_mr reports",
             (sts, again, fp, unk, st_late, [r[0] for r in replies], st_rep, st_orph, st_t1,
              st_t2))

        st, m1 = metrics(h)
        want = {"uploads_accepted": 3, "uploads_duplicate": 1, "uploads_rejected": 3,
                "uploads_late": 1, "rank_replies": 4, "reports_accepted": 2,
                "reports_rejected": 1}
        got = {k2: fa(m1, k2) for k2 in FEDAUC_COUNTERS}
        t.ok(got == want, f"{name}: the FedAUC counters moved by exactly that: {got}", (got, want))
        t.ok(m1.get(("dpm_reports_accepted_total", "")) == 3
             and m1.get(("dpm_reports_rejected_total", '{reason="period not open yet"}')) == 1,
             f"{name}: negative control: the tuple_mr reports are in the general counters "
             "(3 accepted, 1 rejected) and in none of the FedAUC ones")

        reasons = {"fedauc upload: fingerprint mismatch": CID,
                   "fedauc upload: unknown campaign": 0,
                   "fedauc upload: late (upload phase closed)": CID}
        proc_ok = all(m1.get(("dpm_reports_rejected_total", f'{{reason="{r}"}}')) == 1
                      for r in reasons)
        db_ok = all(m1.get(("dpm_rejects_total", f'{{campaign="{c}",reason="{r}"}}')) == 1
                    for r, c in reasons.items())
        fedauc_rejects = sum(v for (n, lab), v in m1.items()
                             if n == "dpm_reports_rejected_total" and "fedauc upload" in lab)
        st, _, body = h.request("GET", f"/v1/campaigns/{CID}/estimate?period={k}")
        est = json.loads(body.decode()) if st == 200 else {}
        rej = est.get("rejects", {})
        est_ok = rej.get("fedauc upload: fingerprint mismatch") == 1 and \
            rej.get("fedauc upload: late (upload phase closed)") == 1
        log = open(h.log.name).read()
        log_ok = all(re.search(r'"event": "reject".*"campaign": %d, "reason": "%s"'
                               % (c, re.escape(r)), log) for r, c in reasons.items())
        t.ok(proc_ok and db_ok and est_ok and log_ok,
             f"{name}: refused uploads are counted by reason and campaign: per process, in the "
             "database, in the estimate's rejects and in the log", (proc_ok, db_ok, rej, log_ok))
        t.ok(fedauc_rejects == 3,
             f"{name}: negative control: the stored and the resent upload are no reject "
             f"({fedauc_rejects:.0f} upload rejects for 3 refusals)")

        drop_open = m1.get(("dpm_fedauc_dropouts_total", f'{{campaign="{CID}"}}'))
        time.sleep(max(0.0, START + (k + 1) * P - time.time()) + 0.3)
        st, m2 = metrics(h)
        drop_closed = m2.get(("dpm_fedauc_dropouts_total", f'{{campaign="{CID}"}}'))
        t.ok(drop_open == 0 and drop_closed == 1,
             f"{name}: dropouts: {drop_open:.0f} while period {k}'s reports are open (negative "
             f"control), {drop_closed:.0f} once it closed")

        # the next period: one upload, kept by the retention
        k2 = period_now()
        p2 = subprocess.Popen([TOOL, camp.hex(), "1", "20", str(k2), "78"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        up2 = bytes.fromhex(p2.stdout.readline().split()[1])
        p2.kill()
        p2.wait()
        st2 = h.request("POST", "/v1/fedauc/uploads", up2)[0]

        def uploads(period):
            return h.db_query("SELECT COUNT(*) FROM fedauc_uploads WHERE campaign_id = ? AND "
                              "period = ?", CID, period)[0][0]

        def phases(period):
            return h.db_query("SELECT COUNT(*) FROM fedauc_phases WHERE campaign_id = ? AND "
                              "period = ?", CID, period)[0][0]

        before = (uploads(k), phases(k), uploads(k2), phases(k2))
        rc0, out0 = h.admin("retention", "--campaigns", h.campaigns, "--keep-periods", "1000")
        rc, out = h.admin("retention", "--campaigns", h.campaigns, "--keep-periods", "1")
        after = (uploads(k), phases(k), uploads(k2), phases(k2))
        t.ok(st2 == 200 and k2 == k + 1 and rc0 == 0 and "and 0 FedAUC upload(s)" in out0
             and rc == 0 and "with 2 report(s) and 3 FedAUC upload(s)" in out
             and before == (3, 1, 1, 1) and after == (0, 0, 1, 1),
             f"{name}: retention beside the running collector: --keep-periods 1000 drops "
             f"nothing; --keep-periods 1: {out.strip()}; period {k2}'s upload and phase kept "
             f"(uploads, phases of {k} and {k2}: {before} -> {after})", (out0, out, before, after))
        st, m3 = metrics(h)
        gone = h.request("GET", f"/v1/fedauc/{CID}/ranks/{token_of(ups[0]).hex()}")[0]
        st, _, body = h.request("GET", f"/v1/campaigns/{CID}/estimate?period={k}")
        e = json.loads(body.decode()).get("fedauc", {}) if st == 200 else {}
        t.ok(m3.get(("dpm_fedauc_dropouts_total", f'{{campaign="{CID}"}}')) == 0 and gone == 404
             and e.get("phase") == "none" and e.get("reports") == 0,
             f"{name}: after it period {k} is gone: dropouts 0, its tokens' rank replies 404 "
             f"(200 before), its estimate says phase {e.get('phase')}, {e.get('reports')} "
             "reports", (m3, gone, e))
        stale_ranking(t, h, name, camp)
        t.ok(h.stop() == 0, f"{name}: clean stop")
        ok, detail = h.consistent()
        t.ok(ok, f"{name}: dpm-collector verify after the retention ({detail})")
    finally:
        h.cleanup()


def main():
    t = Tap()
    run(t)
    with PgCluster("test_collector_fedauc_ops") as pg:
        run(t, pg=pg)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
