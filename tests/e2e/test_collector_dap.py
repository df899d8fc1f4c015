#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Two aggregators as processes (issue 31 item 1): `dpm-collector --role leader` and `--role
helper` over TLS on loopback, each on its own SQLite store, one sumvec task from their shared
campaigns file ([dap_task], keys from `dpm-collector dap-keygen`), SDK-made reports from
tests/e2e/tool_dap, collections by `dpm-collector dap-collect`. TAP. Checked:
  - start-up refusals, each naming its cause: a leader without the helper's token, a task whose
    leader_hpke_config is not the key given, a campaigns file of [dap_task] blocks without --role;
    --check-campaigns lists the task with its ε, sensitivity, unit and trust model;
  - GET /dap/hpke_config answers the key's HpkeConfigList;
  - uploads: 60 reports kept; the same UploadRequest again: every report report_replayed (kept
    once); a request that is not a report: 400 invalidMessage;
  - bearer tokens: the helper refuses an aggregation job without a token (401) and with the
    collector's token (403); the leader refuses a collection without a token (401);
  - a collection below the minimum batch size (an empty hour): 400 invalidBatchSize; with a
    token the leader does not know: 401; an interval off the precision, or a key file that is
    not the task's collector_hpke_config: refused before asking;
  - faults at the helper, each logged with its reason and nothing committed: down (connection
    refused); up with another eps for the task (the DPM-Task-Digest differs: 400 naming both
    digests); a TLS server answering garbage (the job abandoned);
  - the job driver: the helper down while reports arrive, then up: the leader's retries
    aggregate every report once; the collection opens (both shares, the collector's key) to
    the exact sums of the 80 kept reports plus both aggregators' noise, within its bound
    (discrete Laplace, scale sensitivity/eps, two draws: |noise| < 40 scales with probability
    above 1 - 1e-15 per entry), and not exactly the sums (the noise is there);
  - kill -9 of the leader while its 80 acknowledged reports wait for the helper (jobs claimed,
    unanswered): restarted, it sends the stale jobs again and the collection counts all 80,
    each exact sum inside its printed interval (level 1 - 1e-6: the exact law of the two
    draws), the released sums not the exact ones; its JSON states ε, unit, trust model, noise;
  - the same collection again: the same count and the same released values (noise drawn once);
  - kill -9 of the helper, twice, while 300 reports of another hour arrive: all 300 collected
    once, each exact sum in its interval;
  - a hung helper during a collection: uploads are answered at once (no lock held across the
    call), the collection is 502 with its batch held, the same request completes it later;
  - the hybrid (local_eps, local_bins): the devices' flips, dap-collect's debiased counts, and
    --check-campaigns' two guarantees (hybrid() below);
  - PostgreSQL: two leaders sharing one database, a helper on another, 60 reports to each
    leader, then kill -9 of one leader: the other's collection counts all 120 once.
With --bench (make bench): aggregator.reports_per_s, the two roles' throughput (bench() below)."""
import http.client
import json
import os
import socket
import ssl
import sqlite3
import subprocess
import sys
import threading
import time

from e2e_util import OUT, Tap
from pg_cluster import PgCluster
from test_collector import COLLECTOR, Harness, sha256_hex

TOOL = os.path.join(OUT, "tests", "e2e", "tool_dap")
LENGTH, MAXV, EPS, MIN_BATCH = 8, 15, 4, 20
SENS = LENGTH * MAXV
CAMPAIGNS = "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 2\nmetrics = tpr\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def keygen(path, cid, aead=None):
    r = subprocess.run([COLLECTOR, "dap-keygen", "--out", path, "--config-id", str(cid)]
                       + (["--aead", aead] if aead else []),
                       capture_output=True, text=True, check=True)
    return r.stdout.strip()


def tool(*args, check=True):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise RuntimeError(f"tool_dap {args[0]}: {r.returncode} {r.stderr}")
    return json.loads(r.stdout) if r.stdout.strip() else {"rc": r.returncode, "err": r.stderr}


class Pair:
    """A leader and a helper (and on PostgreSQL a second leader, leader2, on the first's
    database) of one task; dbs: role -> --db (default SQLite files in the harness's dir); the
    task a sumvec of length x maxv at eps, with extra keys (e.g. "sensitivity = 40\n"); aead:
    dap-keygen's --aead for all three keys (None: its default, AES-128-GCM)."""

    def __init__(self, h, dbs=None, length=LENGTH, maxv=MAXV, eps=EPS, extra="", aead=None):
        self.h, d = h, h.tmp
        self.length, self.maxv, self.eps, self.extra = length, maxv, eps, extra
        self.dbs = dbs or {r: f"{d}/{r}.db" for r in ("leader", "helper")}
        self.lport, self.hport, self.l2port = free_port(), free_port(), free_port()
        self.keys = {n: keygen(f"{d}/{n}.key", i + 1, aead)
                     for i, n in enumerate(("leader", "helper", "collector"))}
        with open(f"{d}/verify.key", "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        self.tokens = {n: os.urandom(20).hex() for n in ("leader", "collector")}
        for n, t in self.tokens.items():
            with open(f"{d}/{n}.token", "w") as f:
                f.write(t + "\n")
        with open(f"{d}/helper.creds", "w") as f:
            f.write(f"leader aggregator {sha256_hex(self.tokens['leader'])}\n"
                    f"coll collector {sha256_hex(self.tokens['collector'])}\n")
        with open(f"{d}/leader.creds", "w") as f:
            f.write(f"coll collector {sha256_hex(self.tokens['collector'])}\n")
        self.task_id = "8BY0RzZMzxvA46_8ymhzycOB9krN-QIGYvg_RsByGec"
        self.campaigns = f"{d}/dap.txt"
        self.write_campaigns(self.campaigns, self.keys["leader"])
        self.procs = {}
        self.job_size = 25  # the leader's --dap-job-size
        self.drivers = 2  # and --dap-drivers

    def write_campaigns(self, path, leader_cfg, eps=None):
        with open(path, "w") as f:
            f.write(f"""# one two-aggregator task
[dap_task]
id = {self.task_id}
vdaf = sumvec
length = {self.length}
max = {self.maxv}
{self.eps_line(eps)}{self.extra}min_batch_size = {MIN_BATCH}
time_precision = 3600
leader = https://localhost:{self.lport}/dap
helper = https://localhost:{self.hport}/dap
leader_hpke_config = {leader_cfg}
helper_hpke_config = {self.keys['helper']}
collector_hpke_config = {self.keys['collector']}
verify_key = verify.key
""")

    def eps_line(self, eps):
        """The eps key (none for a task whose extra sets noise = gaussian: eps=None)."""
        e = eps or self.eps
        return f"eps = {e}\n" if e is not None else ""

    def args(self, role, campaigns=None):
        d = self.h.tmp
        port = {"leader": self.lport, "leader2": self.l2port, "helper": self.hport}[role]
        kind = "helper" if role == "helper" else "leader"  # leader2: the leader's twin
        a = [COLLECTOR, "--listen", f"127.0.0.1:{port}", "--cert", f"{d}/server.crt",
             "--key", f"{d}/server.key", "--campaigns", campaigns or self.campaigns,
             "--db", self.dbs[kind], "--role", kind, "--dap-hpke-key", f"{d}/{kind}.key",
             "--credentials", f"{d}/{kind}.creds", "--rate-limit", "0"]
        if kind == "leader":
            a += ["--dap-helper-token", f"{d}/leader.token", "--dap-helper-ca", f"{d}/ca.crt",
                  "--dap-job-size", str(self.job_size), "--dap-stale-seconds", "2",
                  "--dap-drivers", str(self.drivers)]
        return a

    def start(self, role, campaigns=None):
        d = self.h.tmp
        ready = f"{d}/{role}.ready"
        if os.path.exists(ready):
            os.unlink(ready)
        log = open(f"{d}/{role}.log", "a")
        p = subprocess.Popen(self.args(role, campaigns) + ["--ready-file", ready], stdout=log,
                             stderr=subprocess.STDOUT)
        self.h.procs.append(p)
        self.procs[role] = p
        for _ in range(400):
            if os.path.exists(ready) and open(ready).read().strip():
                return p
            if p.poll() is not None:
                raise RuntimeError(f"{role} exited {p.returncode}: " + open(log.name).read())
            time.sleep(0.05)
        raise RuntimeError(f"{role} did not start")

    def stop(self, role, sig=15):
        p = self.procs.pop(role)
        p.send_signal(sig)
        return p.wait(30)

    def common(self):
        return ["--campaigns", self.campaigns, "--ca", f"{self.h.tmp}/ca.crt"]


def collect(pair, start, duration, token="collector", wait=30, confidence=0.999999,
            key="collector"):
    """dpm-collector dap-collect: (exit status, its JSON or None, stderr)."""
    d = pair.h.tmp
    r = subprocess.run([COLLECTOR, "dap-collect", "--campaigns", pair.campaigns,
                        "--collector-key", f"{d}/{key}.key", "--token-file",
                        f"{d}/{token}.token", "--ca", f"{d}/ca.crt", "--start", str(start),
                        "--duration", str(duration), "--wait-seconds", str(wait),
                        "--confidence", str(confidence)],
                       capture_output=True, text=True, timeout=wait + 60)
    return r.returncode, json.loads(r.stdout) if r.returncode == 0 else None, r.stderr


def wait_log(path, needle, timeout=40):
    """True once needle is in the log (the leader's retries back off up to 30 s)."""
    for _ in range(int(timeout * 10)):
        if needle in open(path, errors="replace").read():
            return True
        time.sleep(0.1)
    return False


class GarbageServer:
    """A TLS server with the helper's certificate on its port that answers every request 200
    with bytes that are no AggregationJobResp; with hold, one that holds every request that
    long and closes it unanswered (a helper that hangs)."""

    def __init__(self, tmp, port, hold=0.0):
        self.hold = hold
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(f"{tmp}/server.crt", f"{tmp}/server.key")
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.hits, self.stopping = 0, False
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            try:
                with self.ctx.wrap_socket(c, server_side=True) as s:
                    s.settimeout(5)
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += s.recv(4096)
                    self.hits += 1
                    if self.hold:
                        time.sleep(self.hold)
                        continue
                    s.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/ppm-dap;"
                              b"message=aggregation-job-resp\r\nContent-Length: 5\r\n\r\njunk!")
            except (OSError, ssl.SSLError):
                pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.thread.join()
        self.sock.close()


def refusals(t, pair, h):
    """Start-up refusals, each naming its cause."""
    d = h.tmp
    a = pair.args("leader")
    i = a.index("--dap-helper-token")
    r = subprocess.run(a[:i] + a[i + 2:], capture_output=True, text=True, timeout=30)
    t.ok(r.returncode == 2 and "--dap-helper-token" in r.stderr, "a leader without the helper's "
         "token is refused, naming the option", r.stderr[-300:])
    wrong = f"{d}/wrong.txt"
    pair.write_campaigns(wrong, pair.keys["collector"])  # another key's config as the leader's
    r = subprocess.run(pair.args("leader", wrong), capture_output=True, text=True, timeout=30)
    t.ok(r.returncode != 0 and "leader_hpke_config is not the key" in r.stdout + r.stderr,
         "a task whose leader_hpke_config is not this key is refused",
         (r.stdout + r.stderr)[-400:])
    a = pair.args("helper")
    i = a.index("--role")
    a = a[:i] + a[i + 4:]  # no --role, no --dap-hpke-key
    r = subprocess.run(a + ["--allow-anonymous-devices"], capture_output=True, text=True,
                       timeout=30)
    t.ok(r.returncode != 0 and "start with --role" in r.stdout + r.stderr,
         "[dap_task] blocks without --role are refused", (r.stdout + r.stderr)[-400:])
    r = subprocess.run([COLLECTOR, "--check-campaigns", pair.campaigns], capture_output=True,
                       text=True, timeout=30)
    t.ok(r.returncode == 0 and f"dap task {pair.task_id}: prio3 sumvec" in r.stdout
         and f"central eps {EPS:.6f} per report, sensitivity {SENS}" in r.stdout
         and "trust model: two aggregators" in r.stdout,
         "--check-campaigns lists the task, its eps, sensitivity, unit and trust model", r.stdout)
    # One composed eps across both trust models: a local-DP campaign (eps 1, budget 2.5: 2
    # reports a day, 2 aligned, 4 in any day) and the task (EPS once per 3600 s: 24 aligned, 25
    # in any day), the two-aggregator part apart.
    both = f"{pair.h.tmp}/both.txt"
    with open(pair.campaigns) as f, open(both, "w") as g:
        g.write("[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\nbudget = 2.5\ngroups = 2\n"
                "metrics = tpr\nperiod_seconds = 86400\n\n" + f.read())
    r = subprocess.run([COLLECTOR, "--check-campaigns", both], capture_output=True, text=True,
                       timeout=30)
    want = [f"dap task {pair.task_id}: at most {EPS:.6f} per period of 3600 s (1 report(s)); 24 "
            "period(s) aligned with the window, 25 in any window; device-level x1",
            f"total: {2 + 24 * EPS:.6f} per 86400 s aligned with the periods, at most "
            f"{4 + 25 * EPS:.6f} in any 86400 s",
            f"of which two aggregators: {24 * EPS:.6f} aligned, at most {25 * EPS:.6f} in any "
            "86400 s (local DP: 2.000000, at most 4.000000)", "if both collude"]
    t.ok(r.returncode == 0 and all(w in r.stdout for w in want),
         "--check-campaigns composes a local-DP campaign and a DAP task into one eps per day, "
         "the two-aggregator part apart", r.stdout + r.stderr)


def hung_helper(t, pair, hour, prec):
    """A collection whose helper hangs: the leader holds no lock meanwhile (uploads go on),
    answers 502 once its call times out, holds the batch for that request, and the same
    request completes once the helper is back. The helper must be running."""
    up = tool("upload", *pair.common(), "--n", "20", "--first", "2000", "--seed", "7",
              "--time", str(hour + 60))
    leader_db = pair.dbs["leader"]
    for _ in range(300):  # every report aggregated (the job driver polls)
        with sqlite3.connect(f"file:{leader_db}?mode=ro", uri=True) as db:
            left = db.execute("SELECT count(*) FROM dap_reports WHERE job IS NULL OR job IN "
                              "(SELECT job FROM dap_jobs WHERE errors IS NULL)").fetchone()[0]
        if left == 0:
            break
        time.sleep(0.1)
    pair.stop("helper")
    res = []
    with GarbageServer(pair.h.tmp, pair.hport, hold=8.0):
        c = threading.Thread(target=lambda: res.append(collect(pair, hour, prec, wait=1)))
        c.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        during = tool("upload", *pair.common(), "--n", "5", "--first", "3000", "--seed", "7",
                      "--time", str(hour + prec + 60))
        took = time.monotonic() - t0
        busy = c.is_alive()
        c.join()
    t.ok(up["kept"] == 20 and during["kept"] == 5 and took < 3.0 and busy,
         "while a collection waits for a hung helper, an upload is answered at once (the "
         f"leader holds no lock across the call): {took:.2f} s", json.dumps(during)[:200])
    rc, _, err = res[0]
    t.ok(rc == 1 and "answered 502" in err and "send the same request again" in err,
         "the hung helper's collection: 502 once the leader's call times out, the batch held "
         "for the request", err)
    late = tool("upload", *pair.common(), "--n", "1", "--first", "3100", "--seed", "7",
                "--time", str(hour + 60))
    t.ok(late["errors"] == {"batch_collected": 1},
         "a report into the held batch: batch_collected", json.dumps(late)[:200])
    pair.start("helper")
    rc, got, err = collect(pair, hour, prec, wait=30)
    t.ok(rc == 0 and got["report_count"] == 20
         and all(lo <= w <= hi for (lo, hi), w in zip(got["ci"], up["sums"])),
         "the same request once the helper is back: the 20 reports, each exact sum inside its "
         "interval", f"{err} {json.dumps(got)[:300]}")


def shared_postgresql(t, h):
    """Two leaders on one PostgreSQL database (behind the task's one leader URL, as a load
    balancer would put them), a helper on another: reports uploaded to each leader, both job
    drivers claiming from the shared store, one collection counting every report once."""
    with PgCluster("test_collector_dap") as pg:
        pair = Pair(h, {"leader": pg.createdb("dap_leader"), "helper": pg.createdb("dap_helper")})
        for role in ("helper", "leader", "leader2"):
            pair.start(role)
        l2 = f"https://localhost:{pair.l2port}/dap"
        ups = [tool("upload", *pair.common(), "--n", "60", "--seed", "3", "--batch", "20"),
               tool("upload", *pair.common(), "--n", "60", "--first", "60", "--seed", "3",
                    "--batch", "20", "--url", l2)]
        t.ok(all(u["kept"] == 60 for u in ups), "PostgreSQL: 60 reports kept by each leader",
             json.dumps(ups)[:300])
        # one leader dies (kill -9) with its jobs perhaps claimed: the other takes them over
        pair.procs["leader2"].kill()
        pair.procs["leader2"].wait()
        pair.procs.pop("leader2")
        rc, got, err = collect(pair, ups[0]["batch_start"], ups[0]["time_precision"], wait=60)
        want = [a + b for a, b in zip(ups[0]["sums"], ups[1]["sums"])]
        t.ok(rc == 0 and got["report_count"] == 120 and len(want) == LENGTH
             and all(lo <= w <= hi for (lo, hi), w in zip(got["ci"], want)),
             "PostgreSQL, two leaders sharing the store, one killed with kill -9: the other's "
             "collection counts all 120 reports once, each exact sum inside its interval",
             f"{err} {json.dumps(got)} want {want}")
        jobs = pg.sql("dap_leader", "SELECT count(*) FROM dap_jobs WHERE errors IS NOT NULL")
        t.ok(int(jobs[0][0]) >= 120 // 25, "the shared store's jobs are committed", str(jobs))
        stopped = [pair.stop(r) for r in ("leader", "helper")]
        t.ok(stopped == [0, 0], "PostgreSQL: the aggregators stop cleanly", str(stopped))


def main():
    t = Tap()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        pair = Pair(h)
        refusals(t, pair, h)
        pair.start("helper")
        pair.start("leader")
        ctx = ssl.create_default_context(cafile=f"{h.tmp}/ca.crt")
        c = http.client.HTTPSConnection("localhost", pair.lport, context=ctx, timeout=10)
        c.request("GET", "/dap/hpke_config")
        r = c.getresponse()
        body = r.read()
        want = bytes.fromhex(pair.keys["leader"])
        t.ok(r.status == 200 and body[2:] == want and int.from_bytes(body[:2], "big") == len(want)
             and r.getheader("Content-Type") == "application/ppm-dap;message=hpke-config-list",
             "GET /dap/hpke_config: the leader's HpkeConfigList", f"{r.status} {body.hex()}")

        # the helper down: the leader keeps the reports and retries its jobs
        pair.stop("helper")
        saved = f"{h.tmp}/upload.bin"
        up = tool("upload", *pair.common(), "--n", "60", "--seed", "1", "--batch", "30",
                  "--save", saved)
        t.ok(up["kept"] == 60 and up["status"] == [200, 200] and not up["errors"],
             "60 reports uploaded, all kept", json.dumps(up)[:300])
        again = tool("post", *pair.common(), "--what", "reports", "--body", saved)
        t.ok(again["status"] == 200 and again["errors"] == {"report_replayed": 30},
             "the same UploadRequest again: each report report_replayed", json.dumps(again))
        with open(f"{h.tmp}/junk.bin", "wb") as f:
            f.write(b"\x00\x01garbage")
        junk = tool("post", *pair.common(), "--what", "reports", "--body", f"{h.tmp}/junk.bin")
        t.ok(junk["status"] == 400 and "invalidMessage" in junk["body"],
             "garbage upload: 400 invalidMessage", json.dumps(junk))
        up2 = tool("upload", *pair.common(), "--n", "20", "--first", "60", "--seed", "1")
        time.sleep(1.0)
        log = open(f"{h.tmp}/leader.log").read()
        t.ok("dap_helper_unavailable" in log, "the helper down: the leader logs it and retries",
             log[-400:])
        start, prec = up["batch_start"], up["time_precision"]
        rc, _, err = collect(pair, start, prec, wait=1)
        t.ok(rc == 1 and "answered 202" in err and "run again later" in err,
             "a collection while reports wait for the helper: 202, the collector told to come "
             "back (collecting then would lose them)", err)
        # a helper whose task is another (its eps): it refuses the jobs, naming the digests;
        # the leader commits nothing and says why
        pair.write_campaigns(f"{h.tmp}/other.txt", pair.keys["leader"], eps=EPS * 2)
        pair.start("helper", f"{h.tmp}/other.txt")
        t.ok(wait_log(f"{h.tmp}/leader.log", "parameters of this task are not this helper's")
             and wait_log(f"{h.tmp}/helper.log", "dap_task_mismatch"),
             "aggregators that disagree on the task: the helper refuses (400) and both log why")
        pair.stop("helper")
        # a helper that answers garbage: the job is abandoned, nothing committed
        with GarbageServer(h.tmp, pair.hport) as g:
            t.ok(wait_log(f"{h.tmp}/leader.log", "dap_job_abandoned") and g.hits > 0,
                 "a helper that answers garbage: the leader abandons the job and logs it")

        # kill -9 of the leader with 80 acknowledged reports not yet aggregated (its jobs
        # claimed, unanswered): after a restart its stale jobs are sent again, nothing is lost
        pair.procs["leader"].kill()
        pair.procs["leader"].wait()
        pair.procs.pop("leader")
        pair.start("leader")
        pair.start("helper")

        # tokens
        with open(f"{h.tmp}/empty.bin", "wb") as f:
            f.write(b"")
        url = f"https://localhost:{pair.hport}/dap"
        no_tok = tool("post", *pair.common(), "--what", "aggregation_jobs", "--body",
                      f"{h.tmp}/empty.bin", "--url", url)
        wrong_tok = tool("post", *pair.common(), "--what", "aggregation_jobs", "--body",
                         f"{h.tmp}/empty.bin", "--url", url, "--token-file",
                         f"{h.tmp}/collector.token")
        t.ok(no_tok["status"] == 401 and wrong_tok["status"] == 403,
             "the helper's aggregation jobs: 401 without a token, 403 with the collector's",
             f"{no_tok} {wrong_tok}")
        # the leader's token in DAP-Auth-Token (Janus's other header): authorized, and the empty
        # job is then refused as a message; a wrong one is 401
        hc = http.client.HTTPSConnection("localhost", pair.hport, context=ctx, timeout=10)
        codes = []
        for tok in (pair.tokens["leader"], "0" * 40):
            hc.request("POST", f"/dap/tasks/{pair.task_id}/aggregation_jobs", body=b"",
                       headers={"DAP-Auth-Token": tok, "Content-Type":
                                "application/ppm-dap;message=aggregation-job-init-req"})
            r = hc.getresponse()
            codes.append((r.status, r.read().decode(errors="replace")))
            hc.close()
        t.ok(codes[0][0] == 400 and "invalidMessage" in codes[0][1] and codes[1][0] == 401,
             "DAP-Auth-Token carries the leader's token too; a wrong one is 401", str(codes))
        rc, _, err = collect(pair, start, prec, token="leader")
        t.ok(rc == 1 and "answered 401" in err,
             "a collection with a token the leader does not know: 401", err)
        rc, _, err = collect(pair, start + 10 * prec, prec)
        t.ok(rc == 1 and "answered 400" in err and "invalidBatchSize" in err,
             "a collection below the minimum batch size: 400 invalidBatchSize", err)
        rc, _, err = collect(pair, start + 1, prec)
        t.ok(rc == 2 and "multiples of the task's time_precision" in err,
             "a collection interval off the time precision: refused before asking", err)
        rc, _, err = collect(pair, start, prec, key="helper")
        t.ok(rc == 2 and "is not the task's collector_hpke_config" in err,
             "a collection with another key than the task's collector_hpke_config: refused "
             "before asking", err)

        # the leader's retries reach the helper: every report aggregated once
        rc, got, err = collect(pair, start, prec, wait=60)
        want = [a + b for a, b in zip(up["sums"], up2["sums"])]
        ok = rc == 0 and got["report_count"] == 80 and got["sensitivity"] == SENS
        t.ok(ok and all(lo <= w <= hi for (lo, hi), w in zip(got["ci"], want))
             and got["sums"] != want and len(want) == LENGTH,
             "collection after kill -9 and the helper's return: all 80 reports; each exact sum "
             "inside its interval (level 1 - 1e-6), the released sums noised",
             f"{err} {json.dumps(got)} want {want}")
        t.ok(ok and got["eps"] == EPS and "one device's report" in got["privacy_unit"]
             and "two aggregators" in got["trust_model"] and got["noise"]["draws"] == 2,
             "the estimate JSON states eps, privacy unit, trust model and the noise",
             json.dumps(got)[:400])
        rc, same, _ = collect(pair, start, prec)
        t.ok(rc == 0 and same == got, "the same collection again: the same release (noise "
             "drawn once)", json.dumps(same)[:300])

        # kill -9 of the helper under load: another hour's 300 reports uploaded while the
        # helper is killed twice (its jobs cut off mid-way) and restarted
        hour = start + 2 * prec
        res = []
        up3 = threading.Thread(target=lambda: res.append(tool(
            "upload", *pair.common(), "--n", "300", "--first", "1000", "--seed", "5",
            "--batch", "10", "--time", str(hour + 60))))
        up3.start()
        for _ in range(2):
            time.sleep(0.7)
            pair.procs["helper"].kill()
            pair.procs["helper"].wait()
            pair.procs.pop("helper")
            pair.start("helper")
        up3.join()
        rc, got3, err = collect(pair, hour, prec, wait=90)
        ok = rc == 0 and res and res[0]["kept"] == 300 and got3["report_count"] == 300
        t.ok(ok and all(lo <= w <= hi for (lo, hi), w in zip(got3["ci"], res[0]["sums"])),
             "kill -9 of the helper twice under load: all 300 reports of the hour collected "
             "once, each exact sum inside its interval", f"{err} {json.dumps(got3)[:300]}")

        hung_helper(t, pair, start + 4 * prec, prec)
        stopped = [pair.stop(r) for r in ("leader", "helper")]
        t.ok(stopped == [0, 0], "both aggregators stop cleanly on SIGTERM", str(stopped))
    finally:
        h.cleanup()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        gaussian(t, h)
    finally:
        h.cleanup()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        hybrid(t, h)
    finally:
        h.cleanup()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        shared_postgresql(t, h)
    finally:
        h.cleanup()
    return t.done()


def hybrid(t, h):
    """The hybrid task (local_eps, local_bins: the label-RR extension): its devices flip each
    example's label at eps0 before sharding (the SDK, told by the TaskConfiguration), and
    dap-collect's "local" block states eps0, the flip probability and each cell's debiased
    count with its sd, each within 5.5 sd of the batch's true count (one collection: two-sided
    about 4e-8 per cell); --check-campaigns states both guarantees and what the task keeps if
    both aggregators collude."""
    bins, eps0 = 2, 1
    pair = Pair(h, extra=f"local_eps = {eps0}\nlocal_bins = {bins}\n")
    r = subprocess.run([COLLECTOR, "--check-campaigns", pair.campaigns], capture_output=True,
                       text=True, timeout=30)
    t.ok(r.returncode == 0 and "hybrid: each device also flips every example's label" in r.stdout
         and f"local eps0 1.000000 (as the SDK implements local_eps 1.000000) over {bins} score "
         "bins" in r.stdout
         and "if both aggregators collude: the hybrid tasks' labels keep at most 25.000000 in "
         "any 86400 s" in r.stdout,
         "--check-campaigns: the hybrid's eps0, and its labels' 25 hourly eps0 if both collude",
         r.stdout[-1200:])
    pair.start("leader")
    pair.start("helper")
    up = tool("upload", *pair.common(), "--n", "200", "--seed", "5")
    rc, got, err = collect(pair, up["batch_start"], up["time_precision"], wait=60)
    loc = (got or {}).get("local", {})
    q = 1.0 / (1.0 + 2.718281828459045 ** eps0)
    deb = loc.get("debiased", [])
    far = [(j, c, w) for j, (c, w) in enumerate(zip(deb, up["sums"]))
           if not (c["sd"] > 0 and abs(c["est"] - w) <= 5.5 * c["sd"])]
    t.ok(rc == 0 and got["report_count"] == 200 and abs(loc.get("label_flip", 0) - q) < 1e-6
         and loc.get("local_eps") == eps0 and loc.get("bins") == bins
         and "both aggregators collude" in loc.get("trust_model", "")
         and len(deb) == LENGTH and not far and got["sums"] != up["sums"],
         "a hybrid task through both aggregators: 200 reports collected; dap-collect's local "
         "block: eps0, q, and each debiased count within 5.5 sd of the true count",
         f"{err} {json.dumps(loc)[:600]} {far}")
    stopped = [pair.stop(r) for r in ("leader", "helper")]
    t.ok(stopped == [0, 0], "the hybrid task's aggregators stop cleanly", str(stopped))


def gaussian(t, h):
    """noise = gaussian end to end: each aggregator adds dpm_dgauss noise of sigma2 =
    l2_sensitivity_sq / (2 rho) (the sumvec's bound 8 x 15^2 = 1800 at rho 0.5), the devices
    charge the eps that rho gives at delta, and dap-collect's intervals, from the exact law of the
    two draws, hold each exact sum. Its three HPKE keys are ChaCha20-Poly1305's (dap-keygen
    --aead), which devices without AES instructions seal with: the reports and the aggregate
    shares open with them."""
    pair = Pair(h, eps=None, extra="noise = gaussian\nrho = 0.5\ndelta = 1e-9\n",
                aead="chacha20poly1305")
    # HpkeConfig: id (1 byte), kem_id, kdf_id, aead_id (2 bytes each), public key
    aeads = {n: c[10:14] for n, c in pair.keys.items()}
    t.ok(aeads == {"leader": "0003", "helper": "0003", "collector": "0003"},
         "dap-keygen --aead chacha20poly1305: each HpkeConfig names AEAD 0x0003", str(aeads))
    r = subprocess.run([COLLECTOR, "dap-keygen", "--out", f"{h.tmp}/x.key", "--aead", "aes256"],
                       capture_output=True, text=True, timeout=30)
    t.ok(r.returncode == 2 and "--aead aes128gcm|chacha20poly1305" in r.stderr
         and not os.path.exists(f"{h.tmp}/x.key"),
         "dap-keygen --aead aes256: refused with the AEADs it takes, no key written", r.stderr)
    pair.start("leader")
    pair.start("helper")
    up = tool("upload", *pair.common(), "--n", "40", "--seed", "3")
    rc, got, err = collect(pair, up["batch_start"], up["time_precision"], wait=60)
    want = up["sums"]
    ok = rc == 0 and got["report_count"] == 40
    t.ok(ok and got["noise"]["mechanism"] == "discrete_gaussian"
         and got["noise"]["sigma2"] == 1800 and got["rho"] == 0.5 and got["delta"] == 1e-9
         and abs(got["eps"] - 6.937912) < 1e-6 and "rho-zCDP" in got["trust_model"],
         "noise = gaussian with ChaCha20-Poly1305 keys: 40 reports opened and collected; sigma2 "
         "1800 from rho 0.5, eps 6.937912 at delta 1e-9, stated in the estimate JSON",
         f"{err} {json.dumps(got)[:500]}")
    t.ok(ok and all(lo <= w <= hi for (lo, hi), w in zip(got["ci"], want))
         and got["sums"] != want and 2 * 58 < got["ci"][0][1] - got["ci"][0][0] < 2 * 300,
         "noise = gaussian: each exact sum inside its interval (level 1 - 1e-6, about 4.9 sd "
         "of 60 a side), the released sums noised", f"{json.dumps(got)[:500]} want {want}")
    stopped = [pair.stop(r) for r in ("leader", "helper")]
    t.ok(stopped == [0, 0], "the gaussian task's aggregators stop cleanly", str(stopped))
    # composition: 25 hourly reports in any day, rho 0.5 each: rho 12.5 under zCDP, eps
    # 12.5 + 2 sqrt(12.5 ln 1e9) = 44.689490 at delta 1e-9, beside the basic 25 x 6.937912
    r = subprocess.run([COLLECTOR, "--check-campaigns", pair.campaigns], capture_output=True,
                       text=True, timeout=30)
    t.ok(r.returncode == 0 and "sigma2 1800" in r.stdout and "delta at most 2.5e-08" in r.stdout
         and "rho 12.500000 in any 86400 s, so eps 44.689490 at delta 1e-09 (in place of their "
         "173.447800" in r.stdout,
         "--check-campaigns: a Gaussian task's sigma2, its composed delta, and its zCDP "
         "composition beside the basic one", r.stdout[-900:])


def bench(n=4000, job_size=200, drivers=2):
    """make bench: aggregator.reports_per_s, the DAP roles' throughput on this machine. A leader
    and a helper (SQLite, TLS, the bearer token) of a 2x24-entry SumVec task of 8-bit counts (the
    shape of tests/bench/bench_aggregator.c); n reports uploaded with the helper down, then the
    helper started: every report's aggregation job (job_size reports, leader, helper, commits),
    timed from 10 % to 90 % of the reports aggregated, and the slowest tenth of that span alone
    (worst_reports_per_s), with each role's CPU per report over that span in the details.
    Prints the metrics JSON line; nothing else on stdout."""
    h = Harness(campaigns=CAMPAIGNS)
    try:
        pair = Pair(h, length=24 * 2, maxv=255)
        pair.job_size, pair.drivers = job_size, drivers
        pair.start("leader")
        up = tool("upload", *pair.common(), "--n", str(n), "--batch", "50", "--time",
                  str(int(time.time()) - 3600))
        if up["kept"] != n:
            print(f"bench: the leader kept {up['kept']} of {n} reports", file=sys.stderr)
            return 1
        db = pair.dbs["leader"]

        def aggregated():
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                return n - c.execute(
                    "SELECT count(*) FROM dap_reports WHERE job IS NULL OR job IN (SELECT job FROM "
                    "dap_jobs WHERE errors IS NULL)").fetchone()[0]
        pair.start("helper")
        pids = [pair.procs[r].pid for r in ("leader", "helper")]

        def cpu_s(pid):
            """The process's CPU seconds so far (utime + stime, all its threads)."""
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        marks, deadline = [], time.monotonic() + 600
        while True:
            done, now = aggregated(), time.monotonic()
            marks.append((now, done, [cpu_s(p) for p in pids]))
            if done == n or now > deadline:
                break
            time.sleep(0.02)
        if marks[-1][1] != n:
            print(f"bench: {marks[-1][1]} of {n} reports aggregated in 600 s", file=sys.stderr)
            return 1

        def mark(frac):
            return next(m for m in marks if m[1] >= frac * n)

        def at(frac):
            return mark(frac)[0]
        rate = 0.8 * n / (at(0.9) - at(0.1))
        worst = min(0.1 * n / (at(f + 0.1) - at(f)) for f in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,
                                                                0.8))
        # the roles' CPU per report over the same span: what the machine's other load leaves
        # alone (the rate moves with it), so what a change to the roles is judged by
        lo, hi = mark(0.1), mark(0.9)
        cpu_us = [round((hi[2][i] - lo[2][i]) / (hi[1] - lo[1]) * 1e6, 1) for i in (0, 1)]
        print(json.dumps({"metrics": [{"name": "aggregator.reports_per_s", "value": round(rate, 1),
                                       "unit": "reports/s", "baseline": None, "ratio": None,
                                       "worst_reports_per_s": round(worst, 1)}],
                          "details": {"reports": n, "job_size": job_size, "drivers": drivers,
                                      "leader_cpu_us_per_report": cpu_us[0],
                                      "helper_cpu_us_per_report": cpu_us[1],
                                      "vdaf": "sumvec 48 x 8 "
                                      "bits", "store": "sqlite", "leader_helper": "one machine"}}))
        return 0 if [pair.stop(r) for r in ("leader", "helper")] == [0, 0] else 1
    finally:
        h.cleanup()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bench"]:  # [DRIVERS]: the leader's job drivers (default 2)
        sys.exit(bench(drivers=int(sys.argv[2]) if len(sys.argv) > 2 else 2))
    sys.exit(main())
