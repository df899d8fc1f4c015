#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Running dpm-collector for real (issue 19 items 3 and 5), TAP. The same checks run on SQLite
here and on PostgreSQL in test_collector_pg.py:
  - the structured log: every line is a JSON object with ts, level and event; start, campaign,
    stop, every reject with its reason, per-request summaries at --log-level debug only;
  - /metrics: requests by status, reports accepted / duplicate / rejected by reason, TLS
    handshakes, the commit latency histogram (cumulative, +Inf = count), open connections;
  - --config FILE: the options from a file, the command line overriding it, FILE:LINE errors;
  - stored sums, not replayed: sums written behind the collector's back (no reports) show up in
    the estimate after a restart, and `dpm-collector verify` catches the difference (its
    negative control);
  - retention: periods older than the newest N dropped with their sums, the estimates of the
    kept periods unchanged, verify still ok;
  - online backup while clients post (SQLite's backup API / pg_dump), restore into a new
    database (SQLite file / pg_restore), the restored database consistent and serving the same
    estimates as the original at the time of the backup."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_collector import (COLLECTOR, TOOL_LOAD, Harness, Tap, batch_of, load_pb2,  # noqa: E402
                            make_report, post_batch, tuple_mr_template)

NOW = int(time.time())
PERIOD = 3600
# Campaign 7 started 10 periods (and a minute) ago and accepts reports of every one of them.
CAMPAIGNS = f"""\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr

[campaign]
id = 7
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
period_seconds = {PERIOD}
start = {NOW - 10 * PERIOD - 60}
late_seconds = {20 * PERIOD}
"""


def log_lines(h, index=-1):
    """The JSON objects of a collector's log (and the lines that are not JSON objects)."""
    name = h.log.name if index < 0 else f"{h.tmp}/collector.{index}.log"
    objs, bad = [], []
    for line in open(name).read().splitlines():
        try:
            o = json.loads(line)
            if isinstance(o, dict):
                objs.append(o)
                continue
        except ValueError:
            pass
        bad.append(line)
    return objs, bad


def metric(text, name):
    """The value of the sample `name` (with its labels) in Prometheus text, or None."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def post_periods(h, pb, tpl, periods, per_period):
    """Fresh reports of campaign 7, per_period in each period; the statuses."""
    codes = []
    for p in periods:
        reps = [make_report(pb, tpl, 7, period=p, group=i % 4, value=1 if i % 3 else -1)
                for i in range(per_period)]
        codes.append(post_batch(h, pb, batch_of(pb, *reps))[0])
    return codes


def tamper(h, sql):
    """Write to the database behind the collector's back."""
    if h.pg is None:
        import sqlite3
        con = sqlite3.connect(h.db)
        con.executescript(sql)
        con.commit()
        con.close()
    else:
        h.pg.sql(h.dbname, sql)


def estimate(h, cid, query=""):
    st, _, body = h.request("GET", f"/v1/campaigns/{cid}/estimate{query}")
    return json.loads(body) if st == 200 else {"status": st, "body": body.decode()}


def logs_and_metrics(t, h, pb, tpl):
    h.start(extra=["--log-level", "debug"])
    st, r, _ = post_batch(h, pb, batch_of(pb, *[make_report(pb, tpl, 1, group=g) for g in range(4)]))
    dup = batch_of(pb, make_report(pb, tpl, 1, group=1))
    post_batch(h, pb, dup)
    post_batch(h, pb, dup)
    post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 1, group=9)))  # group out of range
    post_batch(h, pb, b"\xff\xff\xff")                                 # malformed batch
    text = h.request("GET", "/metrics")[2].decode()
    h.request("GET", "/v1/campaigns/1/estimate?period=x")
    t.ok(h.stop() == 0, "clean stop")
    objs, bad = log_lines(h)
    events = [o.get("event") for o in objs]
    ts_ok = all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o.get("ts", ""))
                and o.get("level") in ("debug", "info", "warn", "error") for o in objs)
    t.ok(not bad and objs and ts_ok,
         f"the log: {len(objs)} lines, each a JSON object with ts (UTC, ms), level and event",
         bad[:3])
    start = next((o for o in objs if o.get("event") == "start"), {})
    t.ok(start.get("backend") == h.backend and start.get("port") == h.port
         and "campaign" in events and events[-1] == "stop"
         and next(o for o in objs if o["event"] == "stop").get("accepted") == 5,
         f"start ({h.backend}, port, instance {start.get('instance')}), one 'campaign' line per "
         f"campaign, stop with the counts", start)
    rejects = {(o.get("campaign"), o.get("reason")) for o in objs if o.get("event") == "reject"}
    t.ok((1, "group out of range") in rejects and (0, "malformed batch") in rejects,
         f"every reject logged with its campaign and reason: {sorted(rejects)}")
    reqs = [o for o in objs if o.get("event") == "request"]
    t.ok(len(reqs) >= 7 and all(o["level"] == "debug" for o in reqs)
         and any(o["status"] == 400 and "period=x" in o["target"] for o in reqs)
         and all({"method", "status", "ms", "peer", "bytes_in", "bytes_out"} <= o.keys()
                 for o in reqs),
         f"--log-level debug: a summary line per request ({len(reqs)})")
    # /metrics, as seen before the stop
    accepted = metric(text, "dpm_reports_accepted_total")
    buckets = [float(m.group(2)) for m in
               re.finditer(r'dpm_commit_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', text)]
    count = metric(text, "dpm_commit_duration_seconds_count")
    t.ok(accepted == 5 and metric(text, "dpm_reports_duplicate_total") == 1
         and metric(text, 'dpm_reports_rejected_total{reason="group out of range"}') == 1
         and metric(text, 'dpm_reports_rejected_total{reason="malformed batch"}') == 1
         and metric(text, 'dpm_http_requests_total{code="200"}') >= 3
         and metric(text, 'dpm_http_requests_total{code="400"}') == 2,
         "/metrics: requests by status, reports accepted 5, duplicate 1, rejected by reason",
         text[:1500])
    t.ok(metric(text, "dpm_tls_handshakes_total") >= 6
         and metric(text, "dpm_tls_handshake_failures_total") == 0
         and metric(text, "dpm_connections_active") >= 1
         and buckets == sorted(buckets) and count and buckets[-1] == count >= 4
         and metric(text, "dpm_commit_duration_seconds_sum") > 0,
         f"/metrics: TLS handshakes, open connections, a cumulative commit histogram "
         f"({count:.0f} commits)" if count else "/metrics: commit histogram", text[-1800:])
    h.start(extra=["--log-level", "warn"])
    post_batch(h, pb, batch_of(pb, make_report(pb, tpl, 1, group=9)))
    h.stop()
    objs, _ = log_lines(h)
    t.ok(all(o["level"] in ("warn", "error") for o in objs),
         f"--log-level warn: no info or debug lines ({len(objs)} lines)", objs[:3])


def config_file(t, h):
    conf = f"{h.tmp}/collector.conf"
    with open(conf, "w") as f:
        f.write(f"# dpm-collector test configuration\nlisten = 127.0.0.1:0\n"
                f"cert = {h.tmp}/server.crt\nkey = {h.tmp}/server.key\n"
                f"campaigns = {h.campaigns}\ndb = {h.db}\ncredentials = {h.creds.path}\n"
                f"device-ca = {h.tmp}/dev-ca.crt\nlog-level = debug   # overridden below\n"
                f"public-estimates = false\nrate-limit = 0\n")
    ready = f"{h.tmp}/conf.ready"
    p = subprocess.Popen([COLLECTOR, "--config", conf, "--log-level", "info", "--ready-file",
                          ready], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if os.path.exists(ready) and open(ready).read().strip() or p.poll() is not None:
            break
        time.sleep(0.05)
    up = p.poll() is None and os.path.exists(ready)
    if up:
        h.port = int(open(ready).read())
        st = h.request("GET", "/healthz")[0]
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=15)
    levels = {json.loads(line)["level"] for line in err.splitlines() if line.startswith("{")}
    t.ok(up and st == 200 and p.returncode == 0 and "debug" not in levels,
         "--config FILE: every option from the file; --log-level on the command line overrides "
         "the file's", err[-400:])
    with open(conf, "a") as f:
        f.write("max-conns 12\n")
    p = subprocess.run([COLLECTOR, "--config", conf], capture_output=True, text=True, timeout=10)
    t.ok(p.returncode == 2 and "collector.conf:12: want NAME = VALUE" in p.stderr,
         "a bad line in the configuration file: exit 2, FILE:LINE and what is wrong", p.stderr)
    # an unknown name: FILE:LINE and, when one is close, the option meant (host-sim/common/kv.h);
    # negative control: a far-off name gets no suggestion
    for line, want in (("lisen = 127.0.0.1:0", "c2.conf:2: unknown option 'lisen' (did you mean "
                                                "'listen'?)\n"),
                       ("public-estimate = true", "c2.conf:2: unknown option 'public-estimate' "
                                                   "(did you mean 'public-estimates'?)\n"),
                       ("frobnicate = 3", "c2.conf:2: unknown option 'frobnicate'\n")):
        with open(f"{h.tmp}/c2.conf", "w") as f:
            f.write(f"# unknown names\n{line}\n")
        p = subprocess.run([COLLECTOR, "--config", f"{h.tmp}/c2.conf"], capture_output=True,
                           text=True, timeout=10)
        t.ok(p.returncode == 2 and p.stderr == "dpm-collector: " + h.tmp + "/" + want,
             f"configuration file: {want.strip()!r}", p.stderr)


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "collector")


def examples(t, h):
    """examples/collector: the configuration's every option is one the collector takes, and the
    maintenance unit's commands run (paths moved into the test's directory)."""
    p = subprocess.run([COLLECTOR, "--config", f"{EXAMPLES}/collector.conf", "--check-campaigns",
                        f"{EXAMPLES}/campaigns.txt"], capture_output=True, text=True, timeout=10)
    t.ok(p.returncode == 0 and "campaign 7" in p.stdout and "campaign 8" in p.stdout,
         "examples/collector/collector.conf: every option and value is accepted, and so is "
         "campaigns.txt", p.stdout + p.stderr)
    blocks = open(f"{EXAMPLES}/campaigns.txt").read().split("[campaign]")[1:]
    starts = [re.search(r"^start = (\S+)", b, re.M) for b in blocks]
    t.ok(len(blocks) == 2 and all(starts),
         f"examples/collector/campaigns.txt sets a start for every campaign (periods and quotas "
         f"do not restart with a new database): {[m and m.group(1) for m in starts]}")
    unit = open(f"{EXAMPLES}/dpm-collector.service").read()
    t.ok("ExecStart=/usr/local/bin/dpm-collector --config /etc/dpm-collector/collector.conf"
         in unit and "RestartPreventExitStatus=2" in unit,
         "the service unit starts the collector with that configuration")
    state = f"{h.tmp}/state"
    os.makedirs(state, exist_ok=True)
    cmds = [line.split("=", 1)[1] for line in
            open(f"{EXAMPLES}/dpm-collector-maintenance.service").read().splitlines()
            if line.startswith("ExecStart=")]
    outs = []
    for c in cmds:
        c = (c.replace("/usr/local/bin/dpm-collector", COLLECTOR)
             .replace("sqlite:/var/lib/dpm-collector/collector.db", h.db)
             .replace("/var/lib/dpm-collector", state)
             .replace("/etc/dpm-collector/campaigns.txt", h.campaigns).replace("%%", "%"))
        r = subprocess.run(["sh", "-c", c] if c.startswith("/bin/sh") is False else
                           ["/bin/sh", "-c", c.split("'", 1)[1].rsplit("'", 1)[0]],
                           capture_output=True, text=True, timeout=120)
        outs.append((r.returncode, (r.stdout + r.stderr).strip()))
    backups = [f for f in os.listdir(state) if f.startswith("backup-")]
    t.ok(len(cmds) == 3 and all(rc == 0 for rc, _ in outs) and len(backups) == 1,
         f"the maintenance unit's backup, retention and pruning commands run ({backups})", outs)


def readme_certificates(t, h, pb, tpl):
    """The collector README's certificate how-to (host-sim/collector/README.md), run as written; then a device posts with its
    certificate, the gateway with its token, and the operator reads the estimate."""
    readme = open(os.path.join(EXAMPLES, "..", "..", "host-sim", "collector", "README.md")).read()
    part = readme[readme.index("**Certificates.**"):]
    block = part[part.index("```sh\n") + 6:part.index("\n```", part.index("```sh\n"))]
    d = f"{h.tmp}/howto"
    os.makedirs(d)
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=d, capture_output=True,
                       text=True, timeout=120)
    made = [f for f in ("ca.crt", "server.crt", "server.key", "device-ca.crt", "device-0001.crt",
                        "device-0001.key", "credentials.txt", "token.gateway-7", "token.ops")
            if os.path.exists(f"{d}/{f}")]
    t.ok(r.returncode == 0 and len(made) == 9,
         f"the README's certificate commands run as written ({len(made)} of 9 files)", r.stderr)
    if r.returncode != 0:
        return
    ready = f"{d}/ready"
    p = subprocess.Popen([COLLECTOR, "--listen", "127.0.0.1:0", "--cert", f"{d}/server.crt",
                          "--key", f"{d}/server.key", "--campaigns", h.campaigns, "--db",
                          f"{d}/collector.db", "--credentials", f"{d}/credentials.txt",
                          "--device-ca", f"{d}/device-ca.crt", "--ready-file", ready],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            if os.path.exists(ready) and open(ready).read().strip() or p.poll() is not None:
                break
            time.sleep(0.05)
        port = int(open(ready).read())

        def exchange(body, token=None, cert=True, path="/v1/reports"):
            import socket
            import ssl
            ctx = ssl.create_default_context(cafile=f"{d}/ca.crt")
            if cert:
                ctx.load_cert_chain(f"{d}/device-0001.crt", f"{d}/device-0001.key")
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                server_hostname="collector.example.com")
            head = (f"{'POST' if body is not None else 'GET'} {path} HTTP/1.1\r\n"
                    f"Host: collector.example.com\r\nConnection: close\r\n")
            if token:
                head += f"Authorization: Bearer {open(f'{d}/token.{token}').read().strip()}\r\n"
            if body is not None:
                head += (f"Content-Type: application/x-protobuf\r\n"
                         f"Content-Length: {len(body)}\r\n")
            s.sendall(head.encode() + b"\r\n" + (body or b""))
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            return int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else 0

        codes = (exchange(batch_of(pb, make_report(pb, tpl, 1))),
                 exchange(batch_of(pb, make_report(pb, tpl, 1)), token="gateway-7", cert=False),
                 exchange(None, token="ops", cert=False, path="/v1/campaigns/1/estimate"),
                 exchange(None, token="gateway-7", cert=False, path="/v1/campaigns/1/estimate"))
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=15)
    import sqlite3
    con = sqlite3.connect(f"{d}/collector.db")
    devices = sorted(r[0] for r in con.execute("SELECT device FROM reports"))
    con.close()
    t.ok(codes == (200, 200, 200, 403)
         and devices == ["cert:device-0001", "token:gateway-7"],
         f"with them: the device's certificate and the gateway's token post (stored as "
         f"{devices}), the operator reads the estimate, the gateway may not (403) {codes}")


def stored_sums(t, h, pb, tpl):
    h.start()
    codes = post_periods(h, pb, tpl, range(10), 40)
    before = estimate(h, 7)
    t.ok(codes == [200] * 10 and before.get("reports") == 400,
         "400 reports of campaign 7, 40 in each of periods 0 .. 9")
    h.stop()
    ok, detail = h.consistent()
    t.ok(ok, "verify: the stored sums equal the sums of the stored reports", detail)
    # sums behind the collector's back: a million reports that exist only as sums
    tamper(h, "INSERT INTO agg_reports VALUES (7, 3, 'synthetic', 1000000);"
              if h.pg is None else
              "INSERT INTO agg_reports VALUES (7, 3, 'synthetic', 1000000)")
    tamper(h, "INSERT INTO agg_tuple (campaign_id, period, metric, grp, shard, n, s, ss) "
              "VALUES (7, 3, 0, 2, 'synthetic', 1000000, 500000, 1000000)")
    t0 = time.monotonic()
    h.start()
    startup = time.monotonic() - t0
    after = estimate(h, 7)
    p3 = estimate(h, 7, "?period=3")
    t.ok(after.get("reports") == 1000400 and p3.get("reports") == 1000040
         and after["metrics"][0]["groups"][2]["reports"]
         == before["metrics"][0]["groups"][2]["reports"] + 1000000,
         f"sums without reports show up in the estimate after a restart ({after.get('reports')} "
         f"reports; started in {startup:.2f} s): estimates read the stored sums, nothing is "
         f"replayed")
    h.stop()
    rc, out = h.admin("verify")
    t.ok(rc == 1 and "campaign 7 period 3" in out,
         "negative control: verify finds the sums that have no reports", out)
    tamper(h, "DELETE FROM agg_tuple WHERE shard = 'synthetic'; "
              "DELETE FROM agg_reports WHERE shard = 'synthetic'")
    ok, detail = h.consistent()
    t.ok(ok, "... and is ok once they are gone", detail)


def retention(t, h):
    h.start()
    before = estimate(h, 7, "?from=8")
    health = json.loads(h.request("GET", "/healthz")[2])
    h.stop()
    rc, out = h.admin("retention", "--campaigns", h.campaigns, "--keep-periods", "3",
                      "--now", str(NOW + 30))
    t.ok(rc == 0 and "dropped 8 period(s) with 320 report(s)" in out,
         f"retention --keep-periods 3 (period 10 is current): {out.strip()}")
    h.start()
    whole = estimate(h, 7)
    kept = estimate(h, 7, "?from=8")
    old = estimate(h, 7, "?to=7")
    health2 = json.loads(h.request("GET", "/healthz")[2])
    t.ok(whole.get("reports") == 80 and old.get("reports") == 0
         and kept.get("metrics") == before.get("metrics")
         and health2.get("reports") == health.get("reports") - 320,
         "after it: periods 8 and 9 are all that is left, their estimate unchanged; /healthz "
         "counts 320 fewer reports", (whole.get("reports"), old.get("reports")))
    h.stop()
    ok, detail = h.consistent()
    t.ok(ok, "the sums still equal the stored reports' (verify)", detail)


def backup_restore(t, h):
    h.start(extra=["--rate-limit", "0"])
    tool = subprocess.Popen([TOOL_LOAD, "reports", "--port", str(h.port), "--ca", h.ca,
                             "--token", h.creds.files["harness"], "--clients", "8",
                             "--seconds", "4", "--batch", "50", "--campaign", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.5)
    dump = f"{h.tmp}/backup.{'db' if h.pg is None else 'dump'}"
    t0 = time.monotonic()
    rc, out = h.admin("backup", "--to", dump)
    took = time.monotonic() - t0
    tool_out, _ = tool.communicate(timeout=120)
    res = json.loads(tool_out) if tool_out.startswith("{") else {}
    t.ok(rc == 0 and os.path.getsize(dump) > 0 and res.get("acked", 0) > 0
         and res.get("bad_answers") == 0,
         f"online backup while 8 clients post ({took:.2f} s, {os.path.getsize(dump)} bytes; "
         f"{res.get('acked')} reports acknowledged meanwhile)", out)
    rc2, out2 = h.admin("backup", "--to", dump)
    t.ok(rc2 == 1 and "exists" in out2, "a backup never overwrites a file", out2)
    h.stop()
    live = Harness.__new__(Harness)
    live.__dict__.update(h.__dict__)
    if h.pg is None:
        target = f"{h.tmp}/restored.db"
        live.db = target
    else:
        live.dbname = h.dbname + "_restored"
        target = h.pg.createdb(live.dbname)
        live.db = target
    p = subprocess.run([COLLECTOR, "restore", "--from", dump, "--db", target],
                       capture_output=True, text=True, timeout=300)
    ok, detail = live.consistent()
    t.ok(p.returncode == 0 and ok, f"restore into a new database: consistent ({detail})",
         p.stdout + p.stderr)
    p = subprocess.run([COLLECTOR, "restore", "--from", dump, "--db", target],
                       capture_output=True, text=True, timeout=300)
    t.ok(p.returncode == 1 and ("exists" in p.stderr or "already holds" in p.stderr),
         "restore refuses a database that is not new", p.stderr)
    rows = live.db_query("SELECT COUNT(*) FROM reports WHERE campaign_id = 1")[0][0]
    live.start()
    est = estimate(live, 1)
    t.ok(est.get("reports") == rows > 0, f"a collector serves the restored database "
         f"({rows} reports: those committed when the backup began)")
    live.stop()
    h.procs = live.procs


def run(t, pg=None):
    """The checks, on a SQLite file or (pg) a PostgreSQL cluster's database."""
    h = None
    try:
        h = Harness(campaigns=CAMPAIGNS, pg=pg)
        pb = load_pb2(h.tmp)
        tpl = tuple_mr_template(pb)
        logs_and_metrics(t, h, pb, tpl)
        config_file(t, h)
        stored_sums(t, h, pb, tpl)
        retention(t, h)
        backup_restore(t, h)
        if pg is None:
            examples(t, h)
            readme_certificates(t, h, pb, tpl)
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
