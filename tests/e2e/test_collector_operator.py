#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Operator basics of dpm-collector (issue 35 item 5), printing TAP: SIGHUP reloads the
credentials, the certificate, the campaign names and campaigns appended to the file without
dropping a connection (and a bad file, or a removed campaign, changes nothing); /metrics has # HELP and # TYPE for every family, build_info and process
metrics; the example alert rules name only metrics /metrics exports; backups are written 0600
and the example maintenance unit prunes old ones; a relay credential is not held to the
per-address rate limit meant for devices. Each check has its negative control."""
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time

import yaml

from e2e_util import ROOT, Tap
from test_collector import COLLECTOR, Harness, openssl, sha256_hex

CAMPAIGNS = """\
[campaign]
id = 1
name = first name
mechanism = tuple_mr
eps = 1
groups = 2
group_names = a, b
metrics = tpr
"""


def families(text):
    """{family: set of '# HELP'/'# TYPE' seen} and the families of the sample lines."""
    meta, samples = {}, set()
    for line in text.splitlines():
        m = re.match(r"# (HELP|TYPE) (\S+)", line)
        if m:
            meta.setdefault(m.group(2), set()).add(m.group(1))
        elif line and not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
            for suffix in ("_bucket", "_sum", "_count"):  # a histogram's samples
                if name.endswith(suffix) and name[: -len(suffix)] in meta:
                    name = name[: -len(suffix)]
            samples.add(name)
    return meta, samples


def undocumented(text):
    meta, samples = families(text)
    return sorted(f for f in samples if meta.get(f) != {"HELP", "TYPE"})


def new_server_cert(d):
    """A new key and certificate for localhost from the harness's CA (over the old files)."""
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", f"{d}/server2.key")
    openssl("req", "-new", "-key", f"{d}/server2.key", "-subj", "/CN=localhost",
            "-out", f"{d}/server2.csr")
    openssl("x509", "-req", "-in", f"{d}/server2.csr", "-CA", f"{d}/ca.crt", "-CAkey",
            f"{d}/ca.key", "-sha256", "-days", "2", "-set_serial", "0x" + os.urandom(8).hex(),
            "-extfile", f"{d}/server.ext", "-out", f"{d}/server2.crt")
    os.replace(f"{d}/server2.key", f"{d}/server.key")
    os.replace(f"{d}/server2.crt", f"{d}/server.crt")


def peer_cert(conn):
    return hashlib.sha256(conn.sock.getpeercert(binary_form=True)).hexdigest()


def get(h, path, token="reader", conn=None):
    return h.request("GET", path, token=token, conn=conn)


def wait_log(h, event, count, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if open(h.log.name).read().count(f'"{event}"') >= count:
            return True
        time.sleep(0.05)
    return False


def reload_checks(t, h):
    keep = h.conn()
    s0, _, _ = get(h, "/v1/campaigns/1/info", conn=keep)
    cert0 = peer_cert(keep)
    # a new operator token, a new certificate, a new campaign name
    new_token = os.urandom(24).hex()
    with open(h.creds.path, "a") as f:
        f.write(f"ops-new operator {sha256_hex(new_token)}\n")
    h.creds.token["ops-new"] = new_token
    s_before = get(h, "/v1/campaigns/1/info", token="ops-new")[0]
    new_server_cert(h.tmp)
    with open(h.campaigns, "w") as f:
        f.write(CAMPAIGNS.replace("first name", "second name"))
    h.proc.send_signal(signal.SIGHUP)
    t.ok(wait_log(h, "reloaded", 1), "SIGHUP: the collector reloads (log 'reloaded')",
         open(h.log.name).read()[-600:])
    s_after, _, body = get(h, "/v1/campaigns/1/info", token="ops-new")
    t.ok(s_before == 401 and s_after == 200, f"a credential added to the file works after "
         f"SIGHUP ({s_before} before, {s_after} after)")
    t.ok(json.loads(body)["name"] == "second name", "the campaign's new name is shown")
    s1, _, _ = get(h, "/v1/campaigns/1/info", conn=keep)
    t.ok(s0 == 200 and s1 == 200 and peer_cert(keep) == cert0,
         "a keep-alive connection opened before the reload goes on, with its certificate")
    c2 = h.conn()
    get(h, "/healthz", conn=c2)
    t.ok(peer_cert(c2) != cert0, "a new connection gets the new certificate")
    c2.close()
    keep.close()
    # a bad campaigns change (a new mechanism parameter) and a bad credentials file: nothing
    with open(h.campaigns, "w") as f:
        f.write(CAMPAIGNS.replace("first name", "third name").replace("eps = 1", "eps = 2"))
    h.proc.send_signal(signal.SIGHUP)
    t.ok(wait_log(h, "reload_failed", 1), "a changed mechanism parameter refuses the reload")
    log = open(h.log.name).read()
    name = json.loads(get(h, "/v1/campaigns/1/info")[2])["name"]
    t.ok("campaign 1" in log and "restart" in log and name == "second name",
         "... saying which campaign and that it needs a restart; the name in force stays",
         name)
    with open(h.campaigns, "w") as f:
        f.write(CAMPAIGNS.replace("first name", "fourth name"))
    with open(h.creds.path, "a") as f:
        f.write("broken line\n")
    h.proc.send_signal(signal.SIGHUP)
    t.ok(wait_log(h, "reload_failed", 2), "a damaged credentials file refuses the reload")
    st = get(h, "/v1/campaigns/1/info", token="ops-new")
    t.ok(st[0] == 200 and json.loads(st[2])["name"] == "second name",
         "nothing changed: the credentials and names in force stay (all or nothing)")
    metrics = get(h, "/metrics")[2].decode()
    t.ok('dpm_reloads_total{result="ok"} 1' in metrics
         and 'dpm_reloads_total{result="failed"} 2' in metrics,
         "/metrics counts reloads by outcome")
    added_campaign_checks(t, h)


SECOND = """[campaign]
id = 2
name = added
mechanism = tuple_ml
eps = 2
groups = 2
metrics = tpr
"""


def added_campaign_checks(t, h):
    """A campaign appended to the file starts at SIGHUP: registered in the database, served to
    devices, its reports stored and estimated, without dropping a connection; it stays after a
    restart. Removing one still needs a restart (the negative control)."""
    with open(h.creds.path) as f:  # undo the damaged line of the last check
        lines = [x for x in f if x.strip() != "broken line"]
    with open(h.creds.path, "w") as f:
        f.writelines(lines)
    keep = h.conn()
    s0 = get(h, "/v1/campaigns/1/info", conn=keep)[0]
    before = get(h, "/v1/campaigns/2/info")[0]
    reloaded_before = open(h.log.name).read().count('"reloaded"')
    with open(h.campaigns, "w") as f:
        f.write(CAMPAIGNS.replace("first name", "second name") + SECOND)
    h.proc.send_signal(signal.SIGHUP)
    ok = wait_log(h, "reloaded", reloaded_before + 1)
    log = open(h.log.name).read()
    t.ok(ok and '"added": 1' in log, "SIGHUP with a campaign appended: reloaded, 1 added",
         log[-600:])
    st, _, body = get(h, "/v1/campaigns/2/info")
    t.ok(before == 404 and st == 200 and json.loads(body).get("name") == "added",
         f"the new campaign is served ({before} before the reload, {st} after)", body[:300])
    rc, pop, err = h.tool("population", "--campaigns", "2", "--devices", "400", "--clients", "2",
                          "--seed", "5")
    est = json.loads(get(h, "/v1/campaigns/2/estimate")[2] or b"{}")
    t.ok(rc == 0 and pop and pop["acked"] == 400 and est.get("reports") == 400,
         "400 devices report to it; its estimate counts them", (rc, pop, err[-300:],
                                                                 str(est)[:300]))
    s1 = get(h, "/v1/campaigns/1/info", conn=keep)[0]
    t.ok(s0 == 200 and s1 == 200, "a connection opened before the reload goes on")
    keep.close()
    h.stop()
    h.start(port=h.port)
    est = json.loads(get(h, "/v1/campaigns/2/estimate")[2] or b"{}")
    t.ok(est.get("reports") == 400, "after a restart the added campaign and its reports stay",
         str(est)[:300])
    failed_before = open(h.log.name).read().count('"reload_failed"')
    with open(h.campaigns, "w") as f:
        f.write(SECOND)  # campaign 1 removed
    h.proc.send_signal(signal.SIGHUP)
    ok = wait_log(h, "reload_failed", failed_before + 1)
    log = open(h.log.name).read()
    st = get(h, "/v1/campaigns/1/info")[0]
    t.ok(ok and "restart" in log and st == 200,
         "removing a campaign refuses the reload, saying a restart is needed; campaign 1 stays",
         log[-400:])


def metrics_checks(t, h):
    text = get(h, "/metrics")[2].decode()
    bad = undocumented(text)
    t.ok(not bad, "/metrics: every metric family has # HELP and # TYPE", bad)
    t.ok(undocumented(text + "dpm_made_up_total 1\n") == ["dpm_made_up_total"],
         "negative control: a family without them is found")
    ver = subprocess.run([COLLECTOR, "--version"], capture_output=True, text=True).stdout.split()[1]
    t.ok(f'dpm_collector_build_info{{version="{ver}"}} 1' in text, f"build_info carries the "
         f"version ({ver})")
    vals = dict(re.findall(r"^(process_[a-z_]+) ([0-9.e+]+)$", text, re.M))
    now = time.time()
    ok = (float(vals.get("process_resident_memory_bytes", 0)) > 1e6
          and now - 3600 < float(vals.get("process_start_time_seconds", 0)) <= now + 5
          and float(vals.get("process_open_fds", 0)) >= 3
          and float(vals.get("process_max_fds", 0)) >= float(vals.get("process_open_fds", 0))
          and float(vals.get("process_threads", 0)) >= 2 and "process_cpu_seconds_total" in vals)
    t.ok(ok, "process metrics: resident memory, start time (this hour), descriptors, threads, "
         "CPU", vals)
    rules = yaml.safe_load(open(os.path.join(ROOT, "examples", "collector", "alerts.yml")))
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    names = {n for e in exprs for n in re.findall(r"\b((?:dpm|process)_[a-z_]+)", e)}
    meta, samples = families(text)
    exported = samples | {f for f, seen in meta.items() if "TYPE" in seen}
    missing = sorted(n for n in names if n not in exported)
    t.ok(len(exprs) >= 5 and not missing and {"dpm_storage_healthy", "dpm_lost_reports_total",
                                              "dpm_reports_rejected_total"} <= names,
         f"examples/collector/alerts.yml: {len(exprs)} rules on storage health, reject bursts "
         f"and lost reports, every metric they name exported", missing)
    t.ok([n for n in names | {"dpm_no_such_metric"} if n not in exported] == ["dpm_no_such_metric"],
         "negative control: a rule naming a metric /metrics lacks is found")


def relay_checks(t):
    h = Harness(campaigns=CAMPAIGNS)
    try:
        h.start(extra=["--rate-limit", "1", "--rate-burst", "3"])
        conn = h.conn()
        relay = [get(h, "/healthz", token="relay-3", conn=conn)[0] for _ in range(20)]
        device = [get(h, "/healthz", token="device-a", conn=conn)[0] for _ in range(20)]
        t.ok(all(s == 200 for s in relay), "a relay credential is not held to the per-address "
             "rate limit (20 requests at --rate-limit 1 --rate-burst 3: all 200)", relay)
        t.ok(device.count(429) >= 15, f"negative control: a device credential from the same "
             f"address is ({device.count(429)} of 20 answered 429)", device)
        conn.close()
        h.stop()
    finally:
        h.cleanup()


def backup_checks(t, h):
    old = os.umask(0o022)
    try:
        to = os.path.join(h.tmp, "backup-20250101T000000Z.db")
        r = subprocess.run([COLLECTOR, "backup", "--db", h.db, "--to", to], capture_output=True,
                           text=True)
        ctl = os.path.join(h.tmp, "control")
        open(ctl, "w").close()
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(to).st_mode) if r.returncode == 0 else None
    t.ok(mode == 0o600, f"dpm-collector backup writes its file 0600 under umask 022 (mode "
         f"{oct(mode) if mode is not None else r.stderr})")
    t.ok(stat.S_IMODE(os.stat(ctl).st_mode) == 0o644, "negative control: a file made under "
         "the same umask is 0644")
    unit = open(os.path.join(ROOT, "examples", "collector",
                             "dpm-collector-maintenance.service")).read()
    prune = [line.split("=", 1)[1] for line in unit.splitlines()
             if line.startswith("ExecStart=") and "-delete" in line]
    d = os.path.join(h.tmp, "state")
    os.makedirs(d)
    for name, age_days in (("backup-old.db", 20), ("backup-new.db", 1), ("collector.db", 20)):
        p = os.path.join(d, name)
        open(p, "w").close()
        then = time.time() - age_days * 86400
        os.utime(p, (then, then))
    if prune:
        subprocess.run(prune[0].replace("/var/lib/dpm-collector", d), shell=True, check=False)
    left = sorted(os.listdir(d))
    t.ok(len(prune) == 1 and "UMask=0077" in unit and left == ["backup-new.db", "collector.db"],
         "the example maintenance unit prunes backups older than 14 days (and only backups)",
         left)


def run_pg(t, pg):
    """The reload checks on a PostgreSQL cluster's database (test_collector_pg.py)."""
    h = Harness(campaigns=CAMPAIGNS, pg=pg)
    try:
        h.start()
        reload_checks(t, h)
        t.ok(h.stop() == 0, "clean stop (PostgreSQL)")
    finally:
        h.cleanup()


def main():
    t = Tap()
    h = Harness(campaigns=CAMPAIGNS)
    try:
        h.start()
        metrics_checks(t, h)
        reload_checks(t, h)
        backup_checks(t, h)
        t.ok(h.stop() == 0, "clean stop")
    finally:
        h.cleanup()
    relay_checks(t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
