#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""FedAUC under attack (issue 27 items 1-3 and the FedAUC part of 8): each attack the audit
reproduced against the real collector, as a test on loopback, bounded in time (about 30 s for
both backends), each with its negative control. TAP.

Bounded reports (host-sim/mech/base/bounds.h). 50 SDK devices (tests/e2e/tool_fedauc) per
campaign (fedauc_lap local, fedauc_lap orthogonal, fedauc_rr) go through both rounds; the device
with the most examples is the attacker and sends, in place of its honest report:
  - the audit's report, localP = INT64_MAX: 400 "localP out of range" (it was accepted, and the
    sums overflowed); localSum2 / T = INT64_MAX likewise;
  - one past its bound, computed here from the report's own fields (the discrete Laplace tail of
    the SDK's scale, Python's math): 400;
  - the two corners of its bounds that move the AUC most apart, one in the campaign and one in
    its twin (another campaign, the same devices and honest reports): both accepted (live
    negative control of the check: the edge passes, beyond it does not), and the two AUCs differ
    by at most the max_auc_shift_one_report each estimate announces (bounds.h: any one report
    replaced by any other accepted one), and by at least a fifth of it;
then dpm-collector verify (the stored sums are the stored reports'). On PostgreSQL the
INT64_MAX report goes in the same group commit as 49 honest batches posted at once: every honest
report is stored, /healthz stays 200 (the audit: "bigint out of range" failed the whole commit
and /healthz answered 503 while the device resent).

Under the credential (fedauc_phase.h):
  - quota: a device credential's second upload of a period is 409 "device quota exceeded";
    negative control: a relay=3 credential uploads 2 (and counts as 2 uploaders);
  - binding: another credential asking for the ranks of device-a's token gets 404 (as for an
    unknown token) and its report for that token is refused; device-a gets both;
  - max_examples: 21 scores refused (400), 20 accepted;
  - rank scraping: the audit's probe (an upload holding every score value, score_bits 6) with
    one victim of 25 scores: with the default min_uploaders of a 2-upload campaign the probe's
    rank reply gives back the victim's 25 scores exactly (the attack, negative control); with
    min_uploaders 3 and the same two uploads the ranks are withheld (409) when the phase closes
    by its deadline and the estimate says so; with a third device the probe reads only the
    pooled 50 scores of the two others, not which are the victim's.
Memory: with --memory-limit 128MiB the upload phase refuses the upload whose ranking would pass
half the budget, and the cached ranking stays reserved (negative control: the default limit
takes it).

Dropouts: 3 of 20 devices (fedauc_lap, eps 8) never report; the estimate is valid and its span
holds the exact AUC of the reported examples; negative control: their sums with the dropouts
ignored fall outside that span."""
import json
import math
import os
import subprocess
import sys
import threading
import time

from e2e_util import OUT, Tap
from pg_cluster import PgCluster
from test_collector import Harness, load_pb2
from test_wire_collector import fields, message, read_varint, varint

TOOL = os.path.join(OUT, "tests", "e2e", "tool_fedauc")
NO_RATE_LIMIT = ["--rate-limit", "0"]
K = 50  # devices of the bounded-report runs: M ~ 1000, so that one report cannot empty a class
DAY = 86400
INT64_MAX = 2 ** 63 - 1
TWIN = 10  # campaign id + TWIN: the same campaign, the same devices (seed), another attacker
BOUNDED = {30: ("fedauc_lap local", "mechanism = fedauc_lap\neps = 2"),
           31: ("fedauc_lap orthogonal", "mechanism = fedauc_lap\neps = 2\nvariant = orthogonal\n"
                                         "p_share = 0.3"),
           32: ("fedauc_rr", "mechanism = fedauc_rr\neps = 2")}


def campaigns(now):
    start = now - 5 * DAY - 60
    text = "".join(f"""[campaign]
id = {cid + twin}
{keys}
score_bits = 20
max_examples = 40
start = {start}
upload_count = {K}
""" for cid, (_, keys) in BOUNDED.items() for twin in (0, TWIN))
    # scraping: the audit's probe (every value of 6-bit scores) against one victim
    probe = "mechanism = fedauc_lap\neps = 1\nscore_bits = 6\nmax_examples = 100\n"
    text += f"[campaign]\nid = 33\n{probe}start = {start}\nupload_count = 2\n"
    text += f"[campaign]\nid = 34\n{probe}start = {start}\nupload_count = 3\nmin_uploaders = 3\n"
    # the same two uploads, min_uploaders 3: the phase closes by its deadline, 9 s from now
    hour_start = now - 5 * 3600 - 1
    text += (f"[campaign]\nid = 35\n{probe}start = {hour_start}\nperiod_seconds = 3600\n"
             f"upload_seconds = 10\nmin_uploaders = 3\n")
    # dropouts: 20 devices, 3 silent (fedauc_lap local at eps 8: little noise)
    text += (f"[campaign]\nid = 37\nmechanism = fedauc_lap\neps = 8\nscore_bits = 20\n"
             f"max_examples = 40\nstart = {start}\nupload_count = 20\n")
    # quota, binding, max_examples
    text += (f"[campaign]\nid = 36\nmechanism = fedauc_lap\neps = 1\nmax_examples = 20\n"
             f"start = {start}\nupload_count = 3\nmin_uploaders = 3\n")
    return text


def k_bound(t):
    """The smallest k with Pr[|Z| > k] = 2 p^(k+1) / (1 + p) <= 2^-41, p = exp(-1/t): the bound
    of each of a report's two noised values."""
    p = math.exp(-1.0 / t)
    target = -41 * math.log(2)
    k = max(0, math.ceil(t * (math.log(2) - math.log1p(p) - target)) - 1)
    while k > 0 and math.log(2) - k / t - math.log1p(p) <= target:
        k -= 1
    while math.log(2) - (k + 1) / t - math.log1p(p) > target:
        k += 1
    return k


def ranks_of(reply):
    """The doubled ranks of a FedaucRankReply (field 6, packed)."""
    out = []
    for f, wt, v in fields(reply):
        i = 0
        while f == 6 and i < len(v):
            x, i = read_varint(v, i)
            out.append(x)
    return out


def upload_msg(cid, mech, params_hash, token, scores):
    packed = b"".join(varint(s) for s in scores)
    return message([(1, 0, varint(cid)), (2, 0, varint(mech)),
                    (3, 5, params_hash.to_bytes(4, "little")), (4, 2, token), (5, 2, packed)])


def fingerprint(h, cid):
    """(mechanism, params_hash) of a campaign as a device computes them: from an SDK upload."""
    camp = h.request("GET", f"/v1/campaigns/{cid}")[2]
    proc = subprocess.Popen([TOOL, camp.hex(), "1", "1", "5", "1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    up = bytes.fromhex(proc.stdout.readline().split()[1])
    proc.kill()
    proc.wait(10)
    head = {f: v for f, _, v in fields(up)}
    return read_varint(head[2], 0)[0], int.from_bytes(head[3], "little")


def token_of(upload):
    return next(v for f, _, v in fields(upload) if f == 4)


def batch_of(*reps):
    return b"".join(b"\x0a" + varint(len(r)) + r for r in reps)


def ranges(rep, eps_q16, variant, ranks):
    """The accepted ranges of a report (bounds.h), from its own fields and ranks, with this
    file's k (the collector's is the same or one more: its double evaluation keeps a margin)."""
    b = rep.fedauc
    n, S = b.n, b.sum_rank2
    if variant == "rr":
        return (0, n), (0, S), "local_sum2"
    kp = k_bound(65536.0 / b.eps_p_q16)
    ks = 0 if b.sensitivity == 0 else k_bound(b.sensitivity * 65536.0 / (eps_q16 - b.eps_p_q16))
    if variant == "orthogonal":
        tpos = sum(max(0, n * r - S) for r in ranks)
        return (-kp, n + kp), (-tpos - ks, tpos + ks), "t"
    return (-kp, n + kp), (-ks, S + ks), "local_sum2"


def auc_from(sum_r, p, m):
    return (sum_r - p * (p - 1) / 2) / (p * (m - p))


def devices(h, cid, seed):
    """K SDK devices of campaign cid through both rounds: their reports, rank replies and the
    tool's estimate of the honest reports."""
    st, _, camp = h.request("GET", f"/v1/campaigns/{cid}")
    proc = subprocess.Popen([TOOL, camp.hex(), str(K), "40", "5", str(seed)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ups = [bytes.fromhex(proc.stdout.readline().split()[1]) for _ in range(K)]
    sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in ups]
    replies = [h.request("GET", f"/v1/fedauc/{cid}/ranks/{token_of(u).hex()}") for u in ups]
    for r in replies:
        proc.stdin.write("reply " + r[2].hex() + "\n")
    proc.stdin.flush()
    reps = [bytes.fromhex(proc.stdout.readline().split()[1]) for _ in range(K)]
    want = json.loads(proc.stdout.readline())
    proc.wait(30)
    return sts, replies, reps, want


def run_bounded(t, h, pb, cid, label, variant, pg):
    """K SDK devices; the largest lies at the edges of its bounds: one edge in campaign cid, the
    opposite one in its twin (the same devices). Returns the honest estimate."""
    sts, replies, reps, want = devices(h, cid, 500 + cid)
    sts2, replies2, reps2, want2 = devices(h, cid + TWIN, 500 + cid)
    same = want2["estimate"] == want["estimate"] or variant == "rr"  # rr: flips per campaign
    t.ok(sts == [200] * K and all(r[0] == 200 for r in replies) and sts2 == sts
         and all(r[0] == 200 for r in replies2) and same,
         f"{label}: {K} SDK uploads, every device got its ranks; the twin campaign has the same "
         f"devices{'' if variant == 'rr' else ' and the same honest estimate'}",
         (sts, [r[0] for r in replies], sts2))
    # the attacker: the device with the most examples (the announced bound is over all uploads)
    ranks_all = [ranks_of(r[2]) for r in replies]
    x = max(range(K), key=lambda i: len(ranks_all[i]))
    honest = pb.Report()
    honest.ParseFromString(reps[x])
    ranks = ranks_all[x]
    others = [reps[i] for i in range(K) if i != x]
    others2 = [reps2[i] for i in range(K) if i != x]
    (plo, phi), (slo, shi), sfield = ranges(honest, honest.eps_q16, variant, ranks)

    def forged(new_id, **values):
        r = pb.Report()
        r.CopyFrom(honest)
        r.report_id = new_id
        for k, v in values.items():
            setattr(r.fedauc, k, v)
        return r.SerializeToString()

    # the audit's reports, and one past each bound (+2: the collector's k may be one more)
    # fedauc_rr: the SDK's own check (dpm_mech_check_report) already pins its exact statistics
    bad_p = "localP out of range" if variant != "rr" else "value out of range"
    over = [("the audit's localP = INT64_MAX", {"local_p": INT64_MAX}, bad_p)]
    if variant != "rr":
        over += [(f"localP {phi + 2} (bound {phi})", {"local_p": phi + 2}, "localP out of range"),
                 (f"localP {plo - 2} (bound {plo})", {"local_p": plo - 2}, "localP out of range")]
    what = "T" if sfield == "t" else "localSum2"
    bad_s = f"{what} out of range" if variant != "rr" else "value out of range"
    over += [(f"{what} = INT64_MAX", {sfield: INT64_MAX}, bad_s),
             (f"{what} {shi + 2} (bound {shi})", {sfield: shi + 2}, bad_s)]
    if variant == "rr":  # within [0, S] but beyond the localP largest ranks: the collector's
        srt = sorted(ranks)
        over.append((f"localP 1 with localSum2 {srt[-1] + 1} (the largest rank {srt[-1]})",
                     {"local_p": 1, "local_sum2": srt[-1] + 1},
                     "localSum2 cannot come from the ranks sent"))
    if pg is not None:
        # the audit's PostgreSQL case: the lie goes into the group commit of 11 honest batches
        res = {}

        def post(i, body):
            res[i] = h.request("POST", "/v1/reports", body)
        threads = [threading.Thread(target=post, args=(i + 1, batch_of(r)))
                   for i, r in enumerate(others)]
        threads.append(threading.Thread(target=post, args=(0, batch_of(
            forged(os.urandom(16), local_p=INT64_MAX)))))
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        health = h.request("GET", "/healthz")
        t.ok(all(res[i][0] == 200 for i in range(1, K)) and res[0][0] == 400
             and bad_p.encode() in res[0][2] and health[0] == 200,
             f"{label}: the INT64_MAX report posted with {K - 1} honest batches at once on "
             "PostgreSQL: "
             "it is refused, every honest report is stored, /healthz stays 200",
             ({i: r[0] for i, r in res.items()}, res[0][2], health))
    else:
        st, _, body = h.request("POST", "/v1/reports", batch_of(*others))
        t.ok(st == 200, f"{label}: the {K - 1} honest reports are stored", body)
    st, _, body = h.request("POST", "/v1/reports", batch_of(*others2))
    t.ok(st == 200, f"{label}: and the twin's", body)
    for name, values, reason in over:
        st, _, body = h.request("POST", "/v1/reports", batch_of(forged(os.urandom(16), **values)))
        resp = pb.BatchResponse()
        resp.ParseFromString(body)
        t.ok(st == 400 and [x.reason for x in resp.rejects] == [reason],
             f"{label}: {name}: 400 '{reason}', nothing stored", (st, resp))
    # the honest aggregate without the attacker, then each corner of its bounds
    m, sum_r, p = want["m"], want["sum_r"], want["p"]
    own_p = honest.fedauc.local_p
    if sfield == "t":
        own_s = (honest.fedauc.t + honest.fedauc.sum_rank2 * own_p) / honest.fedauc.n / 2
    else:
        own_s = honest.fedauc.local_sum2 / 2
    rest_s, rest_p = sum_r - own_s, p - own_p
    rho = 0.0
    if variant == "rr":  # the de-biasing the estimator makes (fedauc.h)
        rho = 1 / (1 + math.exp(2))
    corners = [(a, b) for a in (plo, phi) for b in (slo, shi)]
    if variant == "rr":  # localSum2 between the sums of the localP smallest and largest ranks
        srt = sorted(ranks)
        corners = [(a, b) for a in range(0, honest.fedauc.n + 1)
                   for b in (sum(srt[:a]), sum(srt[len(srt) - a:]) if a else 0)]

    def auc_at(a, b):
        s_dev = (b + honest.fedauc.sum_rank2 * a) / honest.fedauc.n / 2 if sfield == "t" else b / 2
        S, P = rest_s + s_dev, rest_p + a
        if variant == "rr":
            S, P = (S - rho * m * (m - 1) / 2) / (1 - 2 * rho), (P - rho * m) / (1 - 2 * rho)
        return auc_from(S, P, m)
    aucs = {c: auc_at(*c) for c in corners}
    lo_c = min(corners, key=lambda c: aucs[c])
    hi_c = max(corners, key=lambda c: aucs[c])
    st, _, body = h.request("POST", "/v1/reports",
                            batch_of(forged(os.urandom(16), local_p=lo_c[0], **{sfield: lo_c[1]})))
    honest.campaign_id = cid + TWIN
    st2, _, body2 = h.request("POST", "/v1/reports",
                              batch_of(forged(os.urandom(16), local_p=hi_c[0],
                                              **{sfield: hi_c[1]})))
    est = json.loads(h.request("GET", f"/v1/campaigns/{cid}/estimate?period=5")[2])["fedauc"]
    est2 = json.loads(h.request("GET", f"/v1/campaigns/{cid + TWIN}/estimate?period=5")[2])
    est2 = est2["fedauc"]
    a1, a2 = est.get("auc_unbiased", math.nan), est2.get("auc_unbiased", math.nan)
    b1, b2 = est.get("max_auc_shift_one_report") or 0, est2.get("max_auc_shift_one_report") or 0
    tol = 2e-8  # the JSON's 9 significant digits
    if variant != "rr":  # twins: the same honest reports, so a2 - a1 is the attacker's alone
        shift = abs(a2 - a1)
        ok = shift <= min(b1, b2) + tol and shift >= 0.15 * min(b1, b2)
        said = f"differ in AUC by {shift:.4f} <= the announced {min(b1, b2):.4f}"
    else:  # fedauc_rr's memoized flips depend on the campaign: each against its honest estimate
        h1 = want["estimate"]["auc_unbiased"]
        h2 = want2["estimate"]["auc_unbiased"]
        shift = max(abs(a1 - h1), abs(a2 - h2))
        ok = abs(a1 - h1) <= b1 + tol and abs(a2 - h2) <= b2 + tol and shift >= 0.1 * min(b1, b2)
        said = (f"move the AUC from the honest estimate by {abs(a1 - h1):.4f} <= {b1:.4f} and "
                f"{abs(a2 - h2):.4f} <= {b2:.4f}")
    print(f"# {label}: M {m}, honest AUC {want['estimate']['auc_unbiased']:.4f}; the device with "
          f"{honest.fedauc.n} examples at the two ends of its bounds (localP {lo_c[0]}, {what} "
          f"{lo_c[1]}: AUC {a1:.4f}; localP {hi_c[0]}, {what} {hi_c[1]}: AUC {a2:.4f}): {said} "
          f"(announced max_auc_shift_one_report {b1} and {b2}; {shift / min(b1, b2):.0%} of the "
          "smaller)")
    t.ok(st == 200 and st2 == 200 and est.get("reports") == K and est2.get("reports") == K
         and b1 > 0 and b2 > 0 and ok,
         f"{label}: the worst accepted reports (the two ends of one device's bounds) are stored "
         f"and {said} (>= {'15' if variant != 'rr' else '10'} % of it)",
         (st, body, st2, body2, est, est2))
    return want


def scraping(t, h, pb, tag):
    """The audit's probe: every score value of a 6-bit campaign, uploaded beside a victim."""
    cmp = {cid: fingerprint(h, cid) for cid in (33, 34, 35)}
    values = list(range(65))  # every quantized score of score_bits 6: 0 .. 2^6
    victim = sorted((i * 37 + 11) % 65 for i in range(25))
    other = sorted((i * 23 + 5) % 65 for i in range(25))

    def up(cid, token, scores, who):
        mech, params_hash = cmp[cid]
        return h.request("POST", "/v1/fedauc/uploads",
                         upload_msg(cid, mech, params_hash, token, scores), token=who)

    def recover(reply):
        """The others' histogram from the probe's ranks: R(v) = 2 below(v) + c_v, below(v) =
        v + (others below v)."""
        hist, below = [], 0
        for v, r in zip(values, ranks_of(reply)):
            c = r - 2 * (v + below)
            hist.append(c)
            below += c
        return [v for v, c in zip(values, hist) for _ in range(c)]

    probe, vic, oth = b"\x51" * 16, b"\x52" * 16, b"\x53" * 16
    sts35 = [up(35, probe, values, "device-a")[0], up(35, vic, victim, "device-b")[0]]
    # negative control: two uploads, ranks released at the count
    sts = [up(33, probe, values, "device-a")[0], up(33, vic, victim, "device-b")[0]]
    st, _, reply = h.request("GET", f"/v1/fedauc/33/ranks/{probe.hex()}", token="device-a")
    got = recover(reply) if st == 200 else None
    t.ok(sts == [200, 200] and st == 200 and got == victim,
         f"{tag}negative control (min_uploaders 2): the probe's rank reply gives back the "
         "victim's 25 scores exactly (the audit's attack)", (sts, st, got))
    # min_uploaders 3, the same two uploads: withheld when the phase closes by its deadline
    sts = sts35
    deadline = time.time() + 25
    st, body = 0, b""
    while time.time() < deadline:
        st, _, body = h.request("GET", f"/v1/fedauc/35/ranks/{probe.hex()}", token="device-a")
        if b"upload phase open" not in body:
            break
        time.sleep(0.5)
    per = json.loads(h.request("GET", "/v1/campaigns/35/estimate?period=5")[2])["fedauc"]
    t.ok(sts == [200, 200] and st == 409 and b"ranks withheld" in body
         and per.get("phase") == "withheld" and per.get("uploaders") == 2
         and per.get("valid") is False,
         f"{tag}min_uploaders 3, the same probe and victim: when the phase closes the ranks are "
         f"withheld ({body.decode(errors='replace').strip()}); the estimate says phase 'withheld'", (st, body, per))
    # with a third device the probe reads the pooled scores of two devices only
    sts = [up(34, probe, values, "device-a")[0], up(34, vic, victim, "device-b")[0],
           up(34, oth, other, "relay-3")[0]]
    st, _, reply = h.request("GET", f"/v1/fedauc/34/ranks/{probe.hex()}", token="device-a")
    got = recover(reply) if st == 200 else None
    t.ok(sts == [200] * 3 and st == 200 and got == sorted(victim + other) and got != victim,
         f"{tag}min_uploaders 3 with a third device: the probe reads the pooled 50 scores of "
         "the two others, not which 25 are the victim's", (sts, st, got))


def credential(t, h, pb, tag):
    """Quota, binding and max_examples on campaign 36 (device_quota 1, max_examples 20)."""
    mech, params_hash = fingerprint(h, 36)

    def up(token, n, who):
        scores = [(i * 977) % 65536 for i in range(n)]
        return h.request("POST", "/v1/fedauc/uploads",
                         upload_msg(36, mech, params_hash, token, scores), token=who)
    a1, a2, r1, r2 = b"\x61" * 16, b"\x62" * 16, b"\x71" * 16, b"\x72" * 16
    st21, _, body21 = up(a1, 21, "device-a")
    st20, _, _ = up(a1, 20, "device-a")
    t.ok(st21 == 400 and b"max_examples (20)" in body21 and st20 == 200,
         f"{tag}max_examples 20: 21 scores refused ({body21.decode(errors='replace').strip()}), 20 accepted")
    st, _, body = up(a2, 5, "device-a")
    t.ok(st == 409 and b"device quota exceeded" in body,
         f"{tag}device-a's second upload of the period: 409 ({body.decode(errors='replace').strip()})")
    sts = [up(r1, 5, "relay-3")[0], up(r2, 5, "relay-3")[0]]
    t.ok(sts == [200, 200], f"{tag}negative control: a relay=3 credential uploads 2 (the phase "
         "closes at 3 uploads, 3 uploaders)", sts)
    other = h.request("GET", f"/v1/fedauc/36/ranks/{a1.hex()}", token="device-b")
    relay = h.request("GET", f"/v1/fedauc/36/ranks/{a1.hex()}", token="relay-3")
    mine = h.request("GET", f"/v1/fedauc/36/ranks/{a1.hex()}", token="device-a")
    t.ok(other[0] == 404 and relay[0] == 404 and b"unknown upload token" in other[2]
         and mine[0] == 200,
         f"{tag}binding: device-b and relay-3 asking for device-a's ranks get 404 (as for an "
         "unknown token); device-a gets 200", (other[:2], relay[:2], mine[0]))
    # a report for device-a's upload: from device-b refused, from device-a accepted
    ranks = ranks_of(mine[2])
    rep = pb.Report()
    rep.report_id = os.urandom(16)
    rep.campaign_id = 36
    rep.period = 5
    rep.mechanism = mech
    rep.eps_q16 = 65536
    rep.params_hash = params_hash
    b = rep.fedauc
    b.upload_token = a1
    b.n = 20
    b.total = 30
    b.local_p = 3
    b.local_sum2 = 100
    b.sum_rank2 = sum(ranks)
    b.sensitivity = max(ranks)
    b.eps_p_q16 = 32768
    body = batch_of(rep.SerializeToString())
    st_b, _, data_b = h.request("POST", "/v1/reports", body, token="device-b")
    resp = pb.BatchResponse()
    resp.ParseFromString(data_b)
    st_a, _, data_a = h.request("POST", "/v1/reports", body, token="device-a")
    t.ok(st_b == 400 and [x.reason for x in resp.rejects] == ["no upload with this token"]
         and st_a == 200,
         f"{tag}binding: device-b's report for device-a's upload is refused ('no upload with this "
         "token'); the same report from device-a is stored", (st_b, resp, st_a, data_a))


def dropouts(t, h, tag):
    """The dropout rule: 3 of 20 devices never report. The estimate is of the 17 others'
    examples: the interval spans what the dropouts' examples below them can add, and holds the
    exact AUC of those examples among themselves; ignoring the dropouts (their examples left in
    the ranks) gives a value outside that span (the negative control: the correction is needed)."""
    camp = h.request("GET", "/v1/campaigns/37")[2]
    proc = subprocess.Popen([TOOL, camp.hex(), "20", "40", "5", "37", "3"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    ups = [bytes.fromhex(proc.stdout.readline().split()[1]) for _ in range(20)]
    sts = [h.request("POST", "/v1/fedauc/uploads", u)[0] for u in ups]
    replies = [h.request("GET", f"/v1/fedauc/37/ranks/{token_of(u).hex()}") for u in ups]
    for r in replies:
        proc.stdin.write("reply " + r[2].hex() + "\n")
    proc.stdin.flush()
    reps = [bytes.fromhex(proc.stdout.readline().split()[1]) for _ in range(20)]
    want = json.loads(proc.stdout.readline())
    proc.wait(30)
    st, _, body = h.request("POST", "/v1/reports", batch_of(*reps[:17]))
    e = json.loads(h.request("GET", "/v1/campaigns/37/estimate?period=5")[2])["fedauc"]
    auc, bias, sd = e.get("auc_unbiased", math.nan), e.get("dropout_bias_max", 0), e.get("sd", 1)
    truth, naive = want["truth_heard"], want["naive_heard"]
    print(f"# {tag}dropouts: 3 of 20 devices silent ({e.get('dropout_examples')} of "
          f"{e.get('scores')} examples): estimate {auc:.4f} +- {bias:.4f} (sd {sd:.4f}); the "
          f"reported examples' AUC {truth:.4f}; ignoring the dropouts {naive:.4f}")
    t.ok(sts == [200] * 20 and st == 200 and e.get("valid") is True and e.get("dropouts") == 3
         and e.get("reports") == 17 and abs(truth - auc) <= bias + 4 * sd,
         f"{tag}dropouts: 3 silent uploads of 20 do not block the estimate; its span holds the "
         "reported examples' exact AUC", (sts, st, body, e, want))
    t.ok(naive > auc + bias or naive < auc - bias,
         f"{tag}negative control: the same reports with the dropouts ignored give "
         f"{naive:.4f}, outside the span {auc - bias:.4f} .. {auc + bias:.4f}", (e, want))


def memory(t):
    """A ranking's memory is reserved from the collector's budget: with --memory-limit 128MiB
    (a 32 MiB budget) the phase takes 7 uploads of 65,536 scores and refuses the 8th ("upload
    phase full": its ranking would take more than half the budget); after the deadline the ranks
    are served and the cached ranking stays reserved (4 B a score + 56 B an upload). Negative
    control: with the default 512 MiB the 8th upload is stored."""
    def campaign():
        return (f"[campaign]\nid = 38\nmechanism = fedauc_lap\neps = 1\nmax_examples = 65536\n"
                f"period_seconds = 3600\nstart = {int(time.time()) - 5 * 3600 - 1}\n"
                f"upload_seconds = 8\nmin_uploaders = 1\n")
    results = {}
    for limit in ("128MiB", None):
        h = Harness(campaigns=campaign())
        try:
            h.start(extra=NO_RATE_LIMIT + (["--memory-limit", str(128 << 20)] if limit else []))
            mech, params_hash = fingerprint(h, 38)
            tokens = [bytes([0x80 + i]) * 16 for i in range(8)]
            sts, bodies = [], []
            for i, tok in enumerate(tokens):
                scores = [(j * 7919 + i * 104729) % 65537 for j in range(65536)]
                st, _, body = h.request("POST", "/v1/fedauc/uploads",
                                        upload_msg(38, mech, params_hash, tok, scores))
                sts.append(st)
                bodies.append(body)
            rank_st, deadline = 0, time.time() + 25
            while time.time() < deadline:
                rank_st = h.request("GET", f"/v1/fedauc/38/ranks/{tokens[0].hex()}")[0]
                if rank_st == 200:
                    break
                time.sleep(0.5)
            metrics = h.request("GET", "/metrics")[2].decode()
            reserved = next((int(line.split()[1]) for line in metrics.splitlines()
                             if line.startswith("dpm_memory_reserved_bytes ")), -1)
            results[limit] = (sts, bodies[-1], rank_st, reserved)
            h.stop()
        finally:
            h.cleanup()
    sts, last, rank_st, reserved = results["128MiB"]
    cached = 4 * 7 * 65536 + 56 * 7
    print(f"# memory: --memory-limit 128MiB: uploads {sts}; the ranks {rank_st}; reserved after "
          f"{reserved} bytes (the cached ranking: {cached}); default limit: {results[None][0]}")
    t.ok(sts == [200] * 7 + [409] and b"upload phase full" in last and rank_st == 200
         and cached <= reserved < cached + (1 << 20),
         "memory: with a 32 MiB budget the phase takes 7 uploads of 65,536 scores and refuses the "
         "8th (its ranking would pass half the budget); the ranks are served and the cached "
         "ranking stays reserved", results["128MiB"][:1] + results["128MiB"][2:])
    t.ok(results[None][0] == [200] * 8,
         "negative control: with the default 512 MiB limit the 8th upload is stored",
         results[None][0])


def guarded(t, what, fn, *args):
    """fn(*args); an exception (an answer this test did not expect) is one failure, and the
    other parts still run."""
    try:
        fn(*args)
    except Exception as exc:
        import traceback
        t.ok(False, f"{what}: aborted: {exc!r}", traceback.format_exc())


def run(t, pg=None):
    h = Harness(campaigns=campaigns(int(time.time())), pg=pg)
    try:
        h.start(extra=NO_RATE_LIMIT)
        pb = load_pb2(h.tmp)
        tag = "PostgreSQL " if pg else "SQLite "
        # first: campaign 35's upload phase ends 10 s after the start
        guarded(t, tag + "scraping", scraping, t, h, pb, tag)
        guarded(t, tag + "credential", credential, t, h, pb, tag)
        guarded(t, tag + "dropouts", dropouts, t, h, tag)
        for cid, variant in ((30, "local"), (31, "orthogonal"), (32, "rr")):
            guarded(t, tag + BOUNDED[cid][0], run_bounded, t, h, pb, cid, tag + BOUNDED[cid][0],
                    variant, pg)
        t.ok(h.stop() == 0, f"{tag}clean stop")
        ok, detail = h.consistent()
        t.ok(ok, f"{tag}dpm-collector verify: the stored sums are the stored reports' ({detail})")
    finally:
        h.cleanup()


def main():
    t = Tap()
    guarded(t, "memory", memory, t)
    run(t)
    with PgCluster("test_collector_fedauc_trust") as pg:
        run(t, pg=pg)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
