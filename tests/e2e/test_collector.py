#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dpm-collector end to end, over real TLS on loopback, printing TAP.

A throw-away CA and server certificate are made with the openssl command line in a temporary
directory, with a device CA and a credentials file (bearer tokens stored as SHA-256); the
collector is started on 127.0.0.1 (port 0, read back from --ready-file) with its own campaigns
file and database. Clients: curl, Python's ssl/http.client (an independent TLS and HTTP stack),
raw sockets for the misbehaving ones, and tests/e2e/tool_load (Mbed TLS, reports made by the
SDK). Every process started here is killed at the end, even on failure. The harness's own
token (relay + operator) goes with every request unless a test says otherwise; the defences
themselves are tested in test_collector_auth.py, test_collector_attacks.py,
test_collector_integrity.py and test_collector_influence.py.

Also a library: test_collector_kill.py and soak_collector.sh reuse Harness and load_check.
Usage: test_collector.py                  the tests (TAP)
       test_collector.py --soak SECONDS   only the load check, for that long (TAP)
       test_collector.py --bench SECONDS [tool_load options]   the collector benchmark: one
           JSON line with collector.reports_per_s and collector.handshakes_per_s (make bench)
"""
import hashlib
import http.client
import json
import math
import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time

from e2e_util import OUT, ROOT, Tap, built_with_asan  # Tap: test_collector_kill.py takes it

COLLECTOR = os.path.join(OUT, "dpm-collector")
# Under `make sanitize` the collector runs several times slower (ASan + UBSan, on a shared
# machine): the time allowances of the collector scripts' checks are multiplied by SLOW there,
# and only there (main() checks that the detection agrees with the build directory's name).
SANITIZED = built_with_asan(COLLECTOR)
SLOW = 4 if SANITIZED else 1
TOOL_LOAD = os.path.join(OUT, "tests", "e2e", "tool_load")
TOOL_EMIT = os.path.join(OUT, "tests", "e2e", "tool_emit_reports")

# Campaigns matching what tool_emit_reports makes at eps = 1 (its ids: 100 + 10 * mechanism + m,
# m metrics from tpr, fpr, accuracy, precision, 3 + m groups; periods 0, 1000, .., 4000: these
# campaigns started 5000 periods ago and accept reports that late), plus a population pair.
_NOW = int(time.time())
CAMPAIGNS = f"""\
# dpm-collector test campaigns
[campaign]
id = 171
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
start = {_NOW - 5000 * 86400}
late_seconds = {5000 * 86400}

[campaign]
id = 182
mechanism = tuple_ml
eps = 1
budget = 2
period_seconds = 3600
groups = 5
metrics = tpr, fpr
start = {_NOW - 5000 * 3600}
late_seconds = {5000 * 3600}

[campaign]     # the simulated population: tuple_mr and tuple_ml, 4 groups, TPR
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr

[campaign]
id = 2
mechanism = tuple_ml
eps = 1
groups = 4
metrics = tpr
"""


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_device_cert(d, cn, ca="dev-ca"):
    """A device client certificate {d}/{cn}.crt + .key (ECDSA P-256) signed by {d}/{ca}."""
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", f"{d}/{cn}.key")
    openssl("req", "-new", "-key", f"{d}/{cn}.key", "-subj", f"/CN={cn}", "-out", f"{d}/{cn}.csr")
    with open(f"{d}/{cn}.ext", "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", f"{d}/{cn}.csr", "-CA", f"{d}/{ca}.crt", "-CAkey",
            f"{d}/{ca}.key", "-sha256", "-days", "2", "-set_serial", "0x" + os.urandom(8).hex(),
            "-extfile", f"{d}/{cn}.ext", "-out", f"{d}/{cn}.crt")
    return f"{d}/{cn}.crt", f"{d}/{cn}.key"


def make_ca(d, name, cn):
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", f"{d}/{name}.key")
    openssl("req", "-x509", "-new", "-key", f"{d}/{name}.key", "-sha256", "-days", "2",
            "-subj", f"/CN={cn}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign", "-out", f"{d}/{name}.crt")


def make_pki(d):
    """A CA and a 'localhost' server certificate (ECDSA P-256), and a device CA with one device
    certificate (CN device-0001), made with openssl."""
    run = openssl
    make_ca(d, "dev-ca", "dpm-collector test device CA")
    run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{d}/ca.key")
    run("req", "-x509", "-new", "-key", f"{d}/ca.key", "-sha256", "-days", "2",
        "-subj", "/CN=dpm-collector test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign", "-out", f"{d}/ca.crt")
    run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-out", f"{d}/server.key")
    run("req", "-new", "-key", f"{d}/server.key", "-subj", "/CN=localhost", "-out", f"{d}/server.csr")
    with open(f"{d}/server.ext", "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
        "-sha256", "-days", "2", "-set_serial", "0x" + os.urandom(8).hex(),
        "-extfile", f"{d}/server.ext", "-out", f"{d}/server.crt")
    make_device_cert(d, "device-0001")


def sha256_hex(token):
    return hashlib.sha256(token.encode()).hexdigest()


class Credentials:
    """Bearer tokens and the --credentials file holding their hashes. name -> token; the
    harness's own 'harness' token (relay for 10^8 devices + operator) goes with every request
    the harness makes unless told otherwise."""

    ROLES = {"harness": "relay=100000000,operator", "device-a": "device", "device-b": "device",
             "relay-3": "relay=3", "reader": "operator"}

    def __init__(self, d):
        self.path = f"{d}/credentials.txt"
        self.token = {name: os.urandom(24).hex() for name in self.ROLES}
        with open(self.path, "w") as f:
            f.write("# NAME ROLES SHA256(token)\n")
            for name, roles in self.ROLES.items():
                f.write(f"{name} {roles} {sha256_hex(self.token[name])}\n")
        self.files = {}
        for name, tok in self.token.items():
            self.files[name] = f"{d}/token.{name}"
            with open(self.files[name], "w") as f:
                f.write(tok + "\n")

    def header(self, name="harness"):
        return {"Authorization": f"Bearer {self.token[name]}"} if name else {}

def load_pb2(tmp):
    gen = os.path.join(tmp, "pb")
    os.makedirs(gen, exist_ok=True)
    subprocess.run(["protoc", f"-I{ROOT}/sdk/proto", f"--python_out={gen}",
                    f"{ROOT}/sdk/proto/dpm.proto"], check=True)
    sys.path.insert(0, gen)
    import dpm_pb2  # noqa: E402
    return dpm_pb2


class Harness:
    """Temp dir, PKI, and collector processes that are always cleaned up. The store is a SQLite
    file in the temp dir, or with pg (a pg_cluster.PgCluster) a fresh database of that
    cluster: h.db is the --db value, h.backend "sqlite" or "postgresql"."""

    _pg_dbs = 0

    def __init__(self, campaigns=CAMPAIGNS, pg=None):
        self.tmp = tempfile.mkdtemp(prefix="dpm-collector-test.")
        make_pki(self.tmp)
        self.ca = f"{self.tmp}/ca.crt"
        self.campaigns = f"{self.tmp}/campaigns.txt"
        with open(self.campaigns, "w") as f:
            f.write(campaigns)
        self.pg = pg
        if pg is None:
            self.backend = "sqlite"
            self.db = f"{self.tmp}/collector.db"
        else:
            Harness._pg_dbs += 1
            self.backend = "postgresql"
            self.dbname = f"h{os.getpid()}_{Harness._pg_dbs}"
            self.db = pg.createdb(self.dbname)
        self.creds = Credentials(self.tmp)
        self.procs = []
        self.proc = None
        self.port = 0
        self.ctx = ssl.create_default_context(cafile=self.ca)

    def args(self, port=0, extra=(), auth=True):
        """The collector's command line: the harness's PKI, campaigns, database and (auth)
        credentials and device CA."""
        a = [COLLECTOR, "--listen", f"127.0.0.1:{port}", "--cert", f"{self.tmp}/server.crt",
             "--key", f"{self.tmp}/server.key", "--campaigns", self.campaigns, "--db", self.db]
        if auth:
            a += ["--credentials", self.creds.path, "--device-ca", f"{self.tmp}/dev-ca.crt"]
        return a + list(extra)

    def start(self, port=0, extra=(), wait=True, auth=True, preexec_fn=None, timeout=10 * SLOW):
        ready = f"{self.tmp}/ready.{len(self.procs)}"
        self.log = open(f"{self.tmp}/collector.{len(self.procs)}.log", "w")
        args = self.args(port, ["--ready-file", ready, *extra], auth)
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=preexec_fn)
        self.procs.append(self.proc)
        if not wait:
            return self.proc
        for _ in range(int(timeout * 20)):  # up to timeout seconds
            if os.path.exists(ready) and open(ready).read().strip():
                self.port = int(open(ready).read())
                return self.proc
            if self.proc.poll() is not None:
                raise RuntimeError(f"collector exited with {self.proc.returncode}: "
                                   + open(self.log.name).read())
            time.sleep(0.05)
        raise RuntimeError("collector did not start")

    def stop(self, sig=signal.SIGTERM, timeout=15 * SLOW):
        p = self.proc
        if p is None or p.poll() is not None:
            return p.returncode if p else None
        p.send_signal(sig)
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None
        # A sanitizer report from a thread still running while main exits can end with the
        # process's exit 0: the report in the log makes the stop unclean all the same.
        if rc == 0 and SANITIZED and "Sanitizer" in open(self.log.name, errors="replace").read():
            print(f"# a sanitizer report in {self.log.name}", flush=True)
            return 1
        return rc

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run(["rm", "-rf", self.tmp])

    def conn(self, timeout=10, source=None, ctx=None):
        return http.client.HTTPSConnection("localhost", self.port, context=ctx or self.ctx,
                                           timeout=timeout,
                                           source_address=(source, 0) if source else None)

    def request(self, method, path, body=None, ctype="application/x-protobuf", conn=None,
                token="harness", source=None):
        c = conn or self.conn(source=source)
        headers = {"Content-Type": ctype} if body is not None else {}
        headers.update(self.creds.header(token))
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r.status, dict(r.getheaders()), data

    def tool(self, *args, timeout=120, token="harness"):
        cmd = [TOOL_LOAD, args[0], "--port", str(self.port), "--ca", self.ca, *args[1:]]
        if token:
            cmd += ["--token", self.creds.files[token]]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        try:
            return p.returncode, json.loads(p.stdout), p.stderr
        except ValueError:
            return p.returncode, None, p.stdout + p.stderr

    def db_query(self, sql, *params):
        """Rows of a query that both backends understand (? placeholders; report ids and raw
        bytes as bytes, integers as int)."""
        if self.pg is None:
            con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
            try:
                return con.execute(sql, params).fetchall()
            finally:
                con.close()
        parts = sql.split("?")
        assert len(parts) == len(params) + 1, sql
        text = parts[0]
        for p, rest in zip(params, parts[1:]):
            if isinstance(p, (bytes, bytearray)):
                lit = f"'\\x{bytes(p).hex()}'::bytea"
            elif isinstance(p, int):
                lit = str(p)
            else:
                lit = "'" + str(p).replace("'", "''") + "'"
            text += lit + rest
        out = []
        for row in self.pg.sql(self.dbname, text):
            vals = []
            for v in row:
                if v is not None and v.startswith("\\x"):
                    v = bytes.fromhex(v[2:])
                elif v is not None and v.lstrip("-").isdigit():
                    v = int(v)
                vals.append(v)
            out.append(tuple(vals))
        return out

    def admin(self, *args, timeout=600):
        """dpm-collector COMMAND ARGS on this harness's database: (exit status, output)."""
        p = subprocess.run([COLLECTOR, args[0], "--db", self.db, *args[1:]], capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr

    def consistent(self):
        """(ok, detail): the stored sums equal the stored reports' (dpm-collector verify) and,
        with SQLite, PRAGMA integrity_check says ok."""
        rc, out = self.admin("verify")
        ok = rc == 0 and out.startswith("ok")
        if self.pg is None:
            check = self.db_query("PRAGMA integrity_check")[0][0]
            ok = ok and check == "ok"
            out = out.strip() + f"; integrity_check: {check}"
        return ok, out.strip()


def load_check(t, h, clients, seconds, campaign=1):
    """tool_load posts for `seconds`; every id acknowledged with 200 is stored exactly once."""
    ids_file = f"{h.tmp}/acked.{time.time_ns()}"
    before = h.db_query("SELECT COUNT(*) FROM reports WHERE campaign_id = ?", campaign)[0][0]
    rc, res, err = h.tool("reports", "--clients", str(clients), "--seconds", str(seconds),
                          "--batch", "100", "--campaign", str(campaign), "--ids", ids_file,
                          "--server-pid", str(h.proc.pid), timeout=seconds + 120)
    if not t.ok(rc == 0 and res is not None, f"load: {clients} TLS clients for {seconds} s", err):
        return None
    print(f"# load: {json.dumps(res)}")
    acked = [line.strip() for line in open(ids_file) if line.strip()]
    stored = {row[0].hex(): row[1] for row in h.db_query(
        "SELECT report_id, COUNT(*) FROM reports WHERE campaign_id = ? GROUP BY report_id",
        campaign)}
    lost = [i for i in acked if i not in stored]
    t.ok(len(acked) == res["acked"] and res["acked"] > 0 and res["unsent"] == 0
         and res["bad_answers"] == 0,
         f"load: {res['acked']} reports acknowledged, none unanswered, every answer consistent")
    t.ok(not lost, f"load: zero lost (every acked id is in the database; {len(lost)} missing)")
    dup_rows = sum(1 for v in stored.values() if v != 1)
    t.ok(dup_rows == 0 and len(set(acked)) == len(acked) and res["duplicates"] == 0,
         "load: zero duplicated (each acked id stored once, none acknowledged twice)")
    t.ok(len(stored) - before == len(acked),
         f"load: stored rows grew by exactly the acked count ({len(stored) - before})")
    t.ok(res["per_s"] > 0, f"load: {res['per_s']:.0f} reports/s, "
         f"{res['clients']} clients, server CPU {res['server_cpu_s']} s")
    return res


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def tls_socket(h, source=None, ctx=None):
    raw = socket.create_connection(("127.0.0.1", h.port), timeout=10,
                                   source_address=(source, 0) if source else None)
    return (ctx or h.ctx).wrap_socket(raw, server_hostname="localhost")


def sdk_reports():
    """The reports tool_emit_reports makes with the SDK: JSON rows (hex, campaign_id, ...)."""
    return [json.loads(line) for line in subprocess.run(
        [TOOL_EMIT], check=True, capture_output=True, text=True).stdout.splitlines()]


def tuple_mr_template(pb):
    """A genuine tuple_mr report (eps 1, 4 groups, TPR): its fingerprint fits every campaign
    with those parameters, whatever its id."""
    row = next(r for r in sdk_reports() if r["campaign_id"] == 171 and r["eps_q16"] == 65536)
    rep = pb.Report()
    rep.ParseFromString(bytes.fromhex(row["hex"]))
    return rep


def make_report(pb, template, campaign, period=0, group=0, value=None):
    """A copy of template with a fresh report_id and the given fields."""
    r = pb.Report()
    r.CopyFrom(template)
    r.report_id = os.urandom(16)
    r.campaign_id = campaign
    r.period = period
    if r.HasField("tuple"):
        r.tuple.group = group
        if value is not None:
            del r.tuple.values[:]
            r.tuple.values.extend(value if isinstance(value, list) else [value])
    return r


def batch_of(pb, *reports, lost=0):
    b = pb.Batch()
    for r in reports:
        b.reports.add().CopyFrom(r)
    if lost:
        b.lost_reports = lost
    return b.SerializeToString()


def post_batch(h, pb, body, token="harness", source=None):
    """POST /v1/reports: (status, BatchResponse or None, headers)."""
    st, hd, out = h.request("POST", "/v1/reports", body, token=token, source=source)
    r = pb.BatchResponse() if hd.get("Content-Type") == "application/x-protobuf" else None
    try:
        r and r.ParseFromString(out)
    except Exception:
        r = None
    return st, r, hd


def recv_all(s, limit=1 << 20):
    data = b""
    try:
        while len(data) < limit:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, ssl.SSLError, socket.timeout, OSError):
        pass
    return data


def recv_all_quick(s, wait=0.3):
    """What s has received within `wait` seconds: b"" if it was closed, None if still open."""
    s.settimeout(wait)
    try:
        data = s.recv(65536)
        return data
    except (socket.timeout, TimeoutError):
        return None
    except OSError:
        return b""


def no_nan(text):
    """The JSON, refusing NaN and Infinity (which json.loads accepts by default)."""
    def refuse(c):
        raise ValueError(f"{c} in the JSON")
    return json.loads(text, parse_constant=refuse)


def walk(x, path=""):
    """(path, value) of every member of a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from walk(v, f"{path}[{i}]")
    else:
        yield path, x


def null_needs_reason(key):
    """A null that needs its object's reason: not a reason itself (an interval's "..._reason"
    is null when it has no flag), nor an effective number of events (null: infinite, no
    randomization event can move the estimate) or an interpolation bound (null: too few bins,
    which the interval's flags say)."""
    return key not in ("reason", "period_from", "period_to") and not key.endswith("_reason") \
        and not key.endswith("events") and not key.endswith("_bound")


# An interval's claim (host-sim/mech/base/est_json.h): every interval of the
# estimate JSON has "<key>_coverage" beside it (ci95 and ci_clipped share "ci"'s, the TPR band's
# arrays "tpr_band_coverage"). The largest gap's "ci" (largest_disparity, largest_gap) has its own.
INTERVAL_KEYS = ("ci", "ci95", "ci_clipped", "ci_simultaneous", "auc_ci", "auc_ci_total",
                 "auc_unbinned_ci", "auc_unbinned_ci_total", "gap_unbinned_ci",
                 "gap_unbinned_ci_total", "tpr_lo")


def objects(obj, path=""):
    """Every JSON object in obj with its path, depth first."""
    if isinstance(obj, dict):
        yield path, obj
        for k, v in obj.items():
            yield from objects(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from objects(v, f"{path}[{i}]")


def intervals_without_claims(est):
    """Paths of intervals with no coverage claim beside them."""
    def claim(obj, k):
        k = "ci" if k in ("ci95", "ci_clipped") else "tpr_band" if k == "tpr_lo" else k
        return obj.get(f"{k}_coverage") in ("nominal", "at_least", "none")
    return [f"{path}.{k}" for path, obj in objects(est) for k, v in obj.items()
            if k in INTERVAL_KEYS and isinstance(v, list) and not claim(obj, k)]


def nulls_have_reasons(est):
    """Paths of nulls whose object says no reason (every null must come with one): a member K
    with a sibling "K_reason" needs that reason (or the object's "reason"); any other null (or
    null in a list) needs the object's "reason"."""
    bad = []
    for path, obj in objects(est):
        keyed = {k for k in obj if f"{k}_reason" in obj}
        bad.extend(f"{path}.{k}" for k in keyed
                   if obj[k] is None and not obj[f"{k}_reason"] and not obj.get("reason"))
        has_null = any(v is None for k, v in obj.items()
                       if k not in keyed and null_needs_reason(k))
        has_null |= any(isinstance(v, list) and any(x is None for x in v) for v in obj.values())
        if has_null and not obj.get("reason"):
            bad.append(path)
    return bad


def tiny_est(get):
    st, body = get(171)
    return no_nan(body) if st == 200 else {}


def estimate_queries(t, h):
    """?period=, ?from=&to=, ?confidence=, the 400s, the flags and clipped values."""
    def get(cid, query=""):
        st, hd, body = h.request("GET", f"/v1/campaigns/{cid}/estimate{query}")
        return st, body

    st, body = get(1)
    whole = no_nan(body)
    st0, body0 = get(1, "?period=0")
    p0 = no_nan(body0) if st0 == 200 else {}
    t.ok(st0 == 200 and p0["reports"] == whole["reports"] > 0 and p0["period_from"] == 0
         and p0["period_to"] == 0 and whole["period_from"] is None
         and p0["metrics"] == whole["metrics"],
         f"?period=0 (every population report is in period 0): the same estimate, "
         f"{p0.get('reports')} reports", (st0, body0[:200]))
    st, body = get(1, "?from=0&to=0")
    t.ok(st == 200 and no_nan(body)["metrics"] == p0["metrics"], "?from=0&to=0 = ?period=0")
    st, body = get(1, "?period=1")
    p1 = no_nan(body) if st == 200 else {}
    g1 = p1["metrics"][0]["groups"] if p1 else []
    t.ok(st == 200 and p1["reports"] == 0 and p1["n"] == 0 and g1
         and all(g["mean"] is None and g["too_small"] and g["reason"] == "no reports"
                 and g["n"] == 0 for g in g1)
         and p1["metrics"][0]["largest_disparity"] is None
         and p1["metrics"][0]["largest_disparity_reason"] == "no reports"
         and p1["metrics"][0]["simultaneous_reason"] == "no reports"
         and not nulls_have_reasons(p1),
         "?period=1 (no reports): n 0, every value null with the reason 'no reports'",
         body[:400])
    st, body = get(2, "?from=1")
    t.ok(st == 200 and no_nan(body)["reports"] == 0 and no_nan(body)["period_to"] == 4294967295,
         "?from=1 alone: periods 1 .. the last", body[:200])
    st, body = get(1, "?confidence=0.5")
    half = no_nan(body) if st == 200 else {}
    ok = st == 200 and half["confidence"] == 0.5
    for g, w in zip(half.get("metrics", [{}])[0].get("groups", []), whole["metrics"][0]["groups"]):
        lo, hi = g["ci"]
        lo95, hi95 = w["ci"]
        ratio = (hi - lo) / (hi95 - lo95)
        ok &= abs(ratio - 0.6744897501960817 / 1.959963984540054) < 1e-6
        ok &= g["ci95"] == w["ci95"] == w["ci"] and g["mean"] == w["mean"]
    t.ok(ok, "?confidence=0.5: intervals z(0.75)/z(0.975) = 0.344 as wide, ci95 unchanged",
         body[:300])
    bad = {"?period=abc": "period", "?period=-1": "period", "?period=4294967296": "period",
           "?confidence=1": "confidence", "?confidence=0": "confidence",
           "?confidence=nan": "confidence", "?confidence=1e-1": "confidence",
           "?colour=red": "unknown", "?period=1&from=0": "not both", "?from=5&to=2": "after",
           "?period=1&period=2": "twice", "?period": "no value", "?period=1&": "ends"}
    answers = {q: get(1, q) for q in bad}
    wrong = {q: a for q, a in answers.items()
             if a[0] != 400 or bad[q].encode() not in a[1] or not a[1].startswith(b"bad query: ")}
    t.ok(not wrong, f"{len(bad)} bad queries: 400 with the reason (e.g. "
         f"{answers['?confidence=1'][1].decode().strip()!r})", wrong)
    try:
        no_nan('{"a": NaN}')
        refused = False
    except ValueError:
        refused = True
    t.ok(refused and nulls_have_reasons({"x": {"mean": None, "reason": None}}) == [".x"]
         and not nulls_have_reasons({"x": {"mean": None, "reason": "why"}})
         and nulls_have_reasons({"m": {"largest": None, "largest_reason": None}})
         == [".m.largest"]
         and not nulls_have_reasons({"m": {"largest": None, "largest_reason": "why"}}),
         "negative controls: NaN in JSON is caught, a null without a reason is found")
    t.ok(not intervals_without_claims(whole) and not intervals_without_claims(tiny_est(get))
         and intervals_without_claims({"x": {"ci": [0, 1]}}) == [".x.ci"]
         and not intervals_without_claims({"x": {"ci": [0, 1], "ci_coverage": "at_least"}}),
         "every interval has its coverage claim (nominal, at_least or none) beside it; negative "
         "control: a bare interval is found", intervals_without_claims(whole))
    # campaign 171 holds a handful of reports: every estimate flagged, values clipped
    st, body = get(171)
    tiny = no_nan(body) if st == 200 else {}
    groups = tiny["metrics"][0]["groups"] if tiny else []
    ok = bool(st == 200 and 0 < tiny["reports"] < 30 and groups)
    for g in groups:
        ok &= g["too_small"] is True and bool(g["reason"]) and g["n"] == g["reports"]
        if g["mean"] is not None:
            ok &= 0.0 <= g["mean_clipped"] <= 1.0 and g["var"] is not None
            ok &= (g["mean_clipped"] == g["mean"]) == (0.0 <= g["mean"] <= 1.0)
        if g["size"] is not None:
            ok &= 0.0 <= g["size_clipped"] <= tiny["reports"]
    t.ok(ok and not nulls_have_reasons(tiny)
         and all(d["too_small"] for d in tiny["metrics"][0]["disparities"]),
         f"{tiny.get('reports')} reports: every group and disparity too_small with a reason, "
         f"clipped values in range, each null with a reason, no NaN",
         [(g["mean"], g["size"], g["reason"]) for g in groups])
    big = whole["metrics"][0]["groups"]
    t.ok(all(not g["too_small"] and g["reason"] is None and g["n"] > 1000
             and 0 < g["size_sd"] < 0.2 * g["size"] for g in big),
         f"60000 devices: no group too small (relative sd of the sizes "
         f"{', '.join('%.3f' % (g['size_sd'] / g['size']) for g in big)})")


def main_tests(t, h, pb):
    # ---- configuration errors ----------------------------------------------------------
    bad_files = {
        "unknown key": "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                       "metrics = tpr\ncolour = red\n",
        "one group": "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 1\nmetrics = tpr\n",
        "eps not a decimal": "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1e0\ngroups = 4\n"
                             "metrics = tpr\n",
        "id used twice": CAMPAIGNS + "[campaign]\nid = 1\nmechanism = tuple_ml\neps = 1\n"
                                     "groups = 4\nmetrics = tpr\n",
        "budget below one report": "[campaign]\nid = 1\nmechanism = tuple_ml\neps = 2\n"
                                   "budget = 1\ngroups = 4\nmetrics = tpr\n",
        "repeated metric": "[campaign]\nid = 1\nmechanism = tuple_ml\neps = 2\ngroups = 4\n"
                           "metrics = tpr, tpr\n",
        "wrong frac_bits": "[campaign]\nid = 1\nmechanism = tuple_ml\neps = 2\ngroups = 4\n"
                           "metrics = tpr\nfrac_bits = 12\n",
        "a start that is no time": "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\n"
                                   "groups = 4\nmetrics = tpr\nstart = yesterday\n",
        "max_examples on a tuple campaign": "[campaign]\nid = 1\nmechanism = tuple_mr\n"
                                            "eps = 1\ngroups = 4\nmetrics = tpr\n"
                                            "max_examples = 10\n",
    }
    for what, text in bad_files.items():
        path = f"{h.tmp}/bad.txt"
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True, text=True)
        t.ok(p.returncode == 2 and "dpm-collector:" in p.stderr and "bad.txt" in p.stderr,
             f"campaigns file with {what}: exit 2 and a clear message "
             f"({p.stderr.strip().split(': ', 2)[-1]})", p.stderr)
    # the simulator's hints, as suffixes of the messages above (host-sim/common/kv.h); negative
    # controls: a far-off key or section gets no suggestion, a bad value without a trailing
    # comma no comma hint
    head = "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
    hints = [
        (head + "metric = tpr\n", "bad.txt: line 6: unknown key 'metric' (did you mean 'metrics'?)"),
        (head + "metrics = tpr\ncolour = red\n", "bad.txt: line 7: unknown key 'colour'\n"),
        ("[campain]\n" + head[11:], "bad.txt: line 1: expected '[campaign]', '[dap_task]' or "
                                    "'key = value' (did you mean 'campaign'?)"),
        ("[settings]\n" + head[11:], "bad.txt: line 1: expected '[campaign]', '[dap_task]' or "
                                     "'key = value'\n"),
        (head + "metrics = tpr, fpr,\n",
         "bad.txt: line 6: bad metrics 'tpr, fpr,' (want 1 to 4 distinct of tpr, fpr, accuracy, "
         "precision, comma-separated): an empty value after the last comma (a trailing comma?)"),
        (head + "metrics = tpr, fpr, tpr\n",
         "bad.txt: line 6: bad metrics 'tpr, fpr, tpr' (want 1 to 4 distinct of tpr, fpr, "
         "accuracy, precision, comma-separated)\n"),
        ("[campaign]\nid = 1\nmechanism = dpauc\neps = 1\nthresholds = 8,\n",
         "bad.txt: line 5: bad thresholds '8,' (want "),
    ]
    for text, want in hints:
        path = f"{h.tmp}/bad.txt"
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([COLLECTOR, "--check-campaigns", path], capture_output=True, text=True)
        trailing = want.startswith("bad.txt: line 5: bad thresholds")
        t.ok(p.returncode == 2 and want in p.stderr
             and (not trailing or p.stderr.rstrip().endswith("(a trailing comma?)")),
             f"campaigns file hint: {want.strip()!r}", p.stderr)
    good = f"{h.tmp}/good.txt"
    with open(good, "w") as f:
        f.write("[campaign]\nid = 9\nmechanism = roc_hist\neps = 1\nbins = 4\n"
                "max_examples = 20\ndevice_quota = 3\nstart = 2025-12-01T00:00:00Z\n"
                "clock_slack_seconds = 60\nlate_seconds = 0\n")
    p = subprocess.run([COLLECTOR, "--check-campaigns", good], capture_output=True, text=True)
    t.ok(p.returncode == 0 and "campaign 9" in p.stdout,
         "the collector's campaign options (max_examples, device_quota, start as UTC, "
         "clock_slack_seconds, late_seconds) are accepted", p.stderr)
    # The composed eps of one device in every campaign of a file (mech/base/composition.h):
    # tuple_mr eps 1, budget 2.5 (2 reports) per day; roc_hist eps 0.5, budget 1 (2 reports) per
    # 7 hours (4 periods in a day aligned, 5 in any day), max_examples 20.
    comp = f"{h.tmp}/comp.txt"
    with open(comp, "w") as f:
        f.write("[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\nbudget = 2.5\ngroups = 2\n"
                "metrics = tpr\nperiod_seconds = 86400\n\n[campaign]\nid = 2\nmechanism = roc_hist\n"
                "eps = 0.5\nbudget = 1\nbins = 4\nperiod_seconds = 25200\nmax_examples = 20\n")
    p = subprocess.run([COLLECTOR, "--check-campaigns", comp], capture_output=True, text=True)
    want = ["campaign 1: at most 2.000000 per period of 86400 s (2 report(s)); 1 period(s) aligned "
            "with the window, 2 in any window; device-level x1",
            "campaign 2: at most 1.000000 per period of 25200 s (2 report(s)); 4 period(s) aligned "
            "with the window, 5 in any window; device-level x20",
            "total: 6.000000 per 86400 s aligned with the periods, at most 9.000000 in any 86400 s",
            "device-level: at most 104.000000 in any 86400 s",
            "privacy unit: one example's label (label-DP); trust model: local DP"]
    t.ok(p.returncode == 0 and all(w in p.stdout for w in want),
         "--check-campaigns: each campaign's unit and trust model, the composed eps of one device "
         "in all of them (per unit and device-level)", p.stdout + p.stderr)
    with open(comp, "a") as f:
        f.write("\n[campaign]\nid = 3\nmechanism = fedauc_rr\neps = 1\n")
    p = subprocess.run([COLLECTOR, "--check-campaigns", comp], capture_output=True, text=True)
    t.ok(p.returncode == 0 and "device-level: no bound (a FedAUC campaign uploads its scores in "
         "clear)" in p.stdout, "--check-campaigns: with FedAUC, no device-level bound, said why",
         p.stdout + p.stderr)
    args = h.args(extra=["--db", f"{h.tmp}/unused.db"])
    p = subprocess.run([a if a != h.campaigns else f"{h.tmp}/bad.txt" for a in args],
                       capture_output=True, text=True, timeout=10 * SLOW)
    t.ok(p.returncode == 2 and "bad.txt" in p.stderr,
         "the server itself refuses an invalid campaigns file with exit 2", p.stderr)
    p = subprocess.run([a if a != f"{h.tmp}/server.crt" else f"{h.tmp}/ca.crt" for a in args],
                       capture_output=True, text=True, timeout=10 * SLOW)
    t.ok(p.returncode == 2 and "does not match" in p.stderr,
         "a key that does not match the certificate: exit 2", p.stderr)
    p = subprocess.run(h.args(extra=["--db", f"{h.tmp}/unused.db"], auth=False),
                       capture_output=True, text=True, timeout=10 * SLOW)
    t.ok(p.returncode == 2 and "--allow-anonymous-devices" in p.stderr,
         "without device credentials (tokens or a device CA) the server refuses to start",
         p.stderr)

    # ---- start, health, campaigns ----------------------------------------------------------
    # (no rate limit here: the population and load checks post thousands of batches from one
    # address; test_collector_auth.py tests the limit)
    h.start(extra=["--max-body", "65536", "--handshake-timeout-ms", "2000",
                   "--idle-timeout-ms", "3000", "--request-timeout-ms", "2000",
                   "--rate-limit", "0"])
    st, hd, body = h.request("GET", "/healthz")
    health = json.loads(body) if st == 200 else {}
    t.ok(st == 200 and health.get("status") == "ok" and health.get("campaigns") == 4,
         "GET /healthz: 200 and JSON status ok")

    st, hd, body = h.request("GET", "/v1/campaigns/182")
    c = pb.Campaign()
    c.ParseFromString(body)
    t.ok(st == 200 and hd.get("Content-Type") == "application/x-protobuf"
         and c.id == 182 and c.mechanism == pb.TUPLE_ML and c.eps_q16 == 65536
         and c.budget_q16 == 2 * 65536 and c.period_seconds == 3600 and c.groups == 5
         and list(c.metrics) == [pb.TPR, pb.FPR] and c.frac_bits == 16,
         "GET /v1/campaigns/182 decodes with python3-protobuf and matches the file", c)
    st, _, body = h.request("GET", "/v1/campaigns/171")
    c.ParseFromString(body)
    t.ok(st == 200 and c.id == 171 and c.mechanism == pb.TUPLE_MR and c.budget_q16 == 65536
         and c.period_seconds == 86400 and c.groups == 4 and list(c.metrics) == [pb.TPR],
         "GET /v1/campaigns/171 (defaults: budget = eps, one day)")
    t.ok(h.request("GET", "/v1/campaigns/999")[0] == 404, "GET an unknown campaign: 404")
    t.ok(h.request("GET", "/nowhere")[0] == 404, "GET an unknown path: 404")
    st, hd, _ = h.request("POST", "/healthz", b"")
    t.ok(st == 405 and hd.get("Allow") == "GET, HEAD", "POST /healthz: 405 with Allow: GET, HEAD")
    st, hd, _ = h.request("GET", "/v1/reports")
    t.ok(st == 405 and hd.get("Allow") == "POST", "GET /v1/reports: 405 with Allow: POST")

    # ---- reports made by the SDK, posted with curl -------------------------------------------
    rows = [json.loads(line) for line in subprocess.run(
        [TOOL_EMIT], check=True, capture_output=True, text=True).stdout.splitlines()]
    good = [r for r in rows if r["campaign_id"] in (171, 182) and r["eps_q16"] == 65536]
    wrong_eps = [r for r in rows if r["campaign_id"] == 171 and r["eps_q16"] != 65536]
    t.ok(len(good) == 10 and len(wrong_eps) == 10, "tool_emit_reports gives SDK-made reports")
    batch = pb.Batch()
    for r in good:
        batch.reports.add().ParseFromString(bytes.fromhex(r["hex"]))
    batch_file = f"{h.tmp}/batch.bin"
    with open(batch_file, "wb") as f:
        f.write(batch.SerializeToString())

    def curl(data_file, ctype="application/x-protobuf", extra=()):
        p = subprocess.run(["curl", "-sS", "--max-time", "20", "--cacert", h.ca,
                            "-H", f"Content-Type: {ctype}", "--data-binary", f"@{data_file}",
                            "-H", f"Authorization: Bearer {h.creds.token['harness']}",
                            "-o", f"{h.tmp}/curl.out", "-w", "%{http_code}", *extra,
                            f"https://localhost:{h.port}/v1/reports"],
                           capture_output=True, text=True)
        out = open(f"{h.tmp}/curl.out", "rb").read() if os.path.exists(f"{h.tmp}/curl.out") else b""
        return int(p.stdout or 0), out

    code, out = curl(batch_file)
    resp = pb.BatchResponse()
    resp.ParseFromString(out)
    t.ok(code == 200 and resp.accepted == 10 and resp.duplicates == 0 and not resp.rejects,
         "curl --cacert posts a Batch of 10 SDK reports: 200, accepted 10", (code, resp))
    ids = {r["report_id"] for r in good}
    stored = {row[0].hex() for row in h.db_query("SELECT report_id FROM reports")}
    t.ok(ids <= stored and len(stored) == 10, "the 10 reports are in the database")
    raw_ok = all(bytes.fromhex(r["hex"]) == h.db_query(
        "SELECT raw FROM reports WHERE report_id = ?", bytes.fromhex(r["report_id"]))[0][0]
        for r in good)
    t.ok(raw_ok, "the database keeps each report's exact bytes")

    code, out = curl(batch_file)
    resp.ParseFromString(out)
    t.ok(code == 200 and resp.accepted == 0 and resp.duplicates == 10,
         "the same batch again: 200, duplicates 10, accepted 0", (code, resp))
    n_rows = h.db_query("SELECT COUNT(*) FROM reports")[0][0]
    est = json.loads(h.request("GET", "/v1/campaigns/182/estimate")[2])
    t.ok(n_rows == 10 and est["reports"] == 5, "a retried batch is stored and counted once")

    # ---- bad requests, each rejected cleanly --------------------------------------------------
    def post(body, ctype="application/x-protobuf"):
        st, hd, out = h.request("POST", "/v1/reports", body, ctype)
        r = pb.BatchResponse()
        try:
            r.ParseFromString(out)
        except Exception:
            r = None
        return st, r, out

    def healthy():
        return h.request("GET", "/healthz")[0] == 200

    # garbage that no protobuf reader can take, whatever the bytes: field 1 declares 127 bytes
    # and 76 follow (random bytes here parsed as a valid Batch now and then: a flaky test)
    st, r, _ = post(b"\x0a\x7f" + bytes(range(7, 67)) + b"\xff" * 16)
    t.ok(st == 400 and r is not None and [x.reason for x in r.rejects] == ["malformed batch"],
         "garbage body: 400, reject 'malformed batch'", (st, r))
    whole = batch.SerializeToString()
    st, r, _ = post(whole[: len(whole) // 2 + 3])
    t.ok(st == 400 and r is not None and r.rejects and r.rejects[0].reason == "malformed batch",
         "truncated protobuf: 400 malformed batch", (st, r))
    st, _, _ = post(whole, "application/json")
    t.ok(st == 415, "wrong Content-Type: 415")
    st, _, _ = post(whole, "application/x-protobuf; charset=binary")
    t.ok(st == 200, "Content-Type parameters are ignored (application/x-protobuf; charset=...)")

    # a report for an unknown campaign -> 404, nothing stored
    rep = pb.Report()
    rep.ParseFromString(bytes.fromhex(good[0]["hex"]))
    rep.campaign_id = 999
    rep.report_id = os.urandom(16)
    fresh = pb.Report()
    fresh.ParseFromString(bytes.fromhex(good[1]["hex"]))
    fresh.report_id = os.urandom(16)
    b = pb.Batch()
    b.reports.add().CopyFrom(fresh)
    b.reports.add().CopyFrom(rep)
    st, r, _ = post(b.SerializeToString())
    t.ok(st == 404 and len(r.rejects) == 1 and r.rejects[0].reason == "unknown campaign"
         and r.rejects[0].report_id == rep.report_id,
         "a report for an unknown campaign: 404, reject names it", (st, r))
    t.ok(not h.db_query("SELECT 1 FROM reports WHERE report_id = ?", fresh.report_id),
         "... and nothing of that batch is stored (not even its valid report)")

    # wrong fingerprints: epsilon, parameter hash, mechanism; a valid report beside them
    bad_eps = pb.Report()
    bad_eps.ParseFromString(bytes.fromhex(wrong_eps[0]["hex"]))
    bad_hash = pb.Report()
    bad_hash.ParseFromString(bytes.fromhex(good[0]["hex"]))
    bad_hash.report_id = os.urandom(16)
    bad_hash.params_hash ^= 1
    bad_group = pb.Report()
    bad_group.ParseFromString(bytes.fromhex(good[0]["hex"]))
    bad_group.report_id = os.urandom(16)
    bad_group.tuple.group = 4
    no_id = pb.Report()
    no_id.ParseFromString(bytes.fromhex(good[0]["hex"]))
    no_id.report_id = bytes(16)
    b = pb.Batch()
    for x in (fresh, bad_eps, bad_hash, bad_group, no_id):
        b.reports.add().CopyFrom(x)
    raw = b.SerializeToString() + b"\x0a\x03\x01\x02\x03"  # plus an undecodable report
    st, r, _ = post(raw)
    reasons = {x.report_id: x.reason for x in r.rejects} if r else {}
    t.ok(st == 400 and len(r.rejects) == 5
         and reasons.get(bad_eps.report_id) == "epsilon mismatch"
         and reasons.get(bad_hash.report_id) == "parameter fingerprint mismatch"
         and reasons.get(bad_group.report_id) == "group out of range"
         and reasons.get(bytes(16)) == "missing report id"
         and reasons.get(b"") == "malformed report",
         "wrong fingerprints: 400, each bad report listed with its reason", (st, r))
    t.ok(not h.db_query("SELECT 1 FROM reports WHERE report_id = ?", fresh.report_id),
         "... and the valid report in that batch is NOT stored (all or nothing)")
    est = json.loads(h.request("GET", "/v1/campaigns/171/estimate")[2])
    rej = dict(h.db_query("SELECT reason, count FROM rejects WHERE campaign_id = 171"))
    t.ok(est["rejects"].get("epsilon mismatch") == 1
         and est["rejects"].get("parameter fingerprint mismatch") == 1
         and rej.get("epsilon mismatch") == 1 and rej.get("group out of range") == 1
         and est["rejects_unattributed"].get("malformed batch") == 2
         and est["rejects_unattributed"].get("unknown campaign") == 1,
         "rejects are counted by reason in the estimate and persisted", (est["rejects"], rej))
    st, r, _ = post(b"")
    t.ok(st == 200 and r.accepted == 0 and not r.rejects, "an empty batch: 200, nothing")

    # oversize: the 413 comes right after the head; the body is never read
    auth = b"Authorization: Bearer " + h.creds.token["harness"].encode() + b"\r\n"
    s = tls_socket(h)
    s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
              b"application/x-protobuf\r\nContent-Length: 100000000\r\n" + auth + b"\r\n")
    s.settimeout(5)
    got = recv_all(s)
    s.close()
    t.ok(got.startswith(b"HTTP/1.1 413 ") and b"Connection: close" in got,
         "Content-Length 100 MB: 413 at once, without the body being sent", got[:80])
    s = tls_socket(h)
    s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
              b"application/x-protobuf\r\nContent-Length: 60000\r\n\r\n")
    s.settimeout(5)
    got = recv_all(s)
    s.close()
    t.ok(got.startswith(b"HTTP/1.1 401 ") and b"Connection: close" in got
         and b"WWW-Authenticate: Bearer" in got,
         "a POST without a credential: 401 right after the head, its body never read", got[:80])
    big = f"{h.tmp}/big.bin"
    with open(big, "wb") as f:
        f.write(b"\x0a\x10" + os.urandom(200000))
    code, _ = curl(big)
    t.ok(code == 413, f"curl posting 200 kB over a 64 kB limit: 413 (got {code})")
    t.ok(healthy(), "after all that the collector is up")

    # malformed HTTP over TLS: 400 and the connection is closed
    for what, req in [("a header without a colon", b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n"),
                      ("HTTP/2.0", b"GET /healthz HTTP/2.0\r\n\r\n"),
                      ("chunked POST", b"POST /v1/reports HTTP/1.1\r\nTransfer-Encoding: chunked"
                                       b"\r\n\r\n0\r\n\r\n"),
                      ("POST without length", b"POST /v1/reports HTTP/1.1\r\nHost: x\r\n\r\n"),
                      ("binary junk", b"\x00\x01\x02 / HTTP/1.1\r\n\r\n")]:
        s = tls_socket(h)
        s.sendall(req)
        s.settimeout(5)
        got = recv_all(s)
        s.close()
        status = got[9:12]
        t.ok(got.startswith(b"HTTP/1.1 4") or got.startswith(b"HTTP/1.1 5"),
             f"malformed HTTP ({what}): {status.decode(errors='replace')} and closed", got[:80])
    # headers too large
    s = tls_socket(h)
    s.sendall(b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * 9000 + b"\r\n\r\n")
    s.settimeout(5)
    got = recv_all(s)
    s.close()
    t.ok(got.startswith(b"HTTP/1.1 431 "), "a 9 kB header: 431", got[:60])

    # keep-alive and pipelining on one TLS connection
    s = tls_socket(h)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/campaigns/1 HTTP/1.1\r\n"
              b"Host: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    s.settimeout(5)
    got = recv_all(s)
    s.close()
    t.ok(got.count(b"HTTP/1.1 200 OK") == 3, "three pipelined requests on one connection: 3 x 200")

    # plain TCP (no TLS) to the TLS port
    s = socket.create_connection(("127.0.0.1", h.port), timeout=5)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = recv_all(s)
    s.close()
    t.ok(got.startswith(b"HTTP/1.1 400 ") and b"TLS" in got,
         "a plain-HTTP client: plain 400 'this port speaks HTTPS' and closed", got[:80])
    s = socket.create_connection(("127.0.0.1", h.port), timeout=5)
    s.sendall(b"\x16\x03\x01\x00\x05hello" + os.urandom(64))
    got = recv_all(s)
    s.close()
    t.ok(len(got) < 100, f"a broken ClientHello: closed ({len(got)} bytes of alert)")
    t.ok(healthy(), "the collector is still up")

    # ---- slow, idle and half-open clients never block a normal one -------------------------
    idle_tcp = socket.create_connection(("127.0.0.1", h.port), timeout=10)
    half_hello = socket.create_connection(("127.0.0.1", h.port), timeout=10)
    half_hello.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    half_req = tls_socket(h)
    half_req.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n"
                     b"Content-Type: application/x-protobuf\r\nAuthorization: Bearer "
                     + h.creds.token["harness"].encode() + b"\r\n\r\n\x0a\x10")
    idle_tls = tls_socket(h)
    slow = []
    for _ in range(20):  # plus a crowd of silent connections
        slow.append(socket.create_connection(("127.0.0.1", h.port), timeout=10))
    t0 = time.monotonic()
    st, _, _ = h.request("GET", "/healthz")
    dt = time.monotonic() - t0
    t.ok(st == 200 and dt < 1.0 * SLOW,
         f"with idle, half-handshake, half-request and 20 silent clients open, a normal "
         f"request takes {dt * 1000:.0f} ms")
    code, out = curl(batch_file)
    t.ok(code == 200, "... and a curl POST is served too")
    t0 = time.monotonic()
    half_req.settimeout(6 * SLOW)
    got = recv_all(half_req)
    t.ok(got.startswith(b"HTTP/1.1 408 ") and time.monotonic() - t0 < 4 * SLOW,
         f"the half-sent request gets 408 after the 2 s request timeout", got[:60])
    idle_tls.settimeout(6 * SLOW)
    t.ok(recv_all(idle_tls) == b"", "the idle keep-alive TLS connection is closed (3 s)")
    for s in (idle_tcp, half_hello):
        s.settimeout(6 * SLOW)
        t.ok(recv_all(s) == b"", "a connection stuck before its handshake is closed (2 s)")
    for s in [idle_tcp, half_hello, half_req, idle_tls] + slow:
        s.close()

    # ---- estimates for a simulated population ------------------------------------------------
    rc, pop, err = h.tool("population", "--campaigns", "1,2", "--devices", "60000",
                          "--clients", "16", "--seed", "7", timeout=120)
    t.ok(rc == 0 and pop and pop["acked"] == pop["reports_sent"] and pop["unsent"] == 0,
         "60000 simulated devices post one report per campaign (tuple_mr, tuple_ml)", err)
    for k, cid in enumerate((1, 2)):
        st, hd, body = h.request("GET", f"/v1/campaigns/{cid}/estimate")
        try:
            e = json.loads(body)
        except ValueError:
            e = None
        t.ok(st == 200 and hd.get("Content-Type") == "application/json" and e is not None,
             f"campaign {cid} estimate: well-formed JSON")
        if e is None or not pop:
            continue
        m = e["metrics"][0]
        truth = pop["truth"][k]["metrics"][0]["groups"]
        devices = sum(g["devices"] for g in truth)
        t.ok(e["reports"] == devices and sum(g["reports"] for g in m["groups"]) == devices,
             f"campaign {cid}: reports counted = {devices}")
        fine = True
        lines = []
        for g, tr in zip(m["groups"], truth):
            sd = math.sqrt(g["var"])
            lo, hi = g["ci95"]
            fine &= abs(g["mean"] - tr["mean"]) <= 5 * sd and lo < g["mean"] < hi
            fine &= abs((hi - lo) - 2 * 1.959964 * sd) < 1e-6
            lines.append(f"group {g['group']}: truth {tr['mean']:.4f} estimate {g['mean']:.4f} "
                         f"sd {sd:.4f}")
        print("# " + "\n# ".join(lines))
        t.ok(fine, f"campaign {cid} ({e['mechanism']}): every group mean within 5 sd of the "
             "truth, 95% CI = mean +- 1.96 sd", lines)
        d = e["groups"]
        pairs = m["disparities"]
        biggest = max(pairs, key=lambda x: abs(x["diff"]))
        big = m["largest_disparity"]
        t.ok(len(pairs) == d * (d - 1) // 2 and big["g"] == biggest["g"]
             and big["h"] == biggest["h"] and big["abs_diff"] == abs(biggest["diff"])
             and all(p["ci95"][0] < p["diff"] < p["ci95"][1] for p in pairs),
             f"campaign {cid}: {len(pairs)} pairwise disparities with CIs, the largest named")
        # every pair at once: wider than the pointwise interval, the largest's interval holds
        # the largest estimate's |diff| and reaches the candidates' intervals
        sim = m["simultaneous"]
        wider = all(p["ci_simultaneous"][0] < p["ci"][0] and p["ci"][1] < p["ci_simultaneous"][1]
                    for p in pairs)
        calls = all(p["distinguishable"] == (p["ci_simultaneous"][0] > 0
                                             or p["ci_simultaneous"][1] < 0) for p in pairs)
        cands = {(p["g"], p["h"]) for p in pairs
                 if max(abs(x) for x in p["ci_simultaneous"]) >= big["ci"][0]}
        shares = sum(p["largest_share"] for p in pairs)
        t.ok(sim["pairs_with_interval"] == len(pairs) and sim["critical_value"]
             > sim["pointwise_critical_value"] and wider and calls
             and big["ci"][0] <= big["abs_diff"] <= big["ci"][1]
             and {tuple(c) for c in big["candidates"]} == cands
             and (big["g"], big["h"]) in cands and abs(shares - 1) < 1e-6
             and big["stability"] == next(p["largest_share"] for p in pairs
                                          if (p["g"], p["h"]) == (big["g"], big["h"])),
             f"campaign {cid}: simultaneous intervals ({sim['method']}, "
             f"{sim['critical_value']:.3f} sd), {sim['distinguishable']} pairs distinguishable, "
             f"the largest {big['abs_diff']:.4f} in [{big['ci'][0]:.4f}, {big['ci'][1]:.4f}], "
             f"stability {big['stability']:.2f}", json.dumps(m)[:800])

    estimate_queries(t, h)

    # ---- load: 64 clients, zero lost, zero duplicated ------------------------------------
    load_check(t, h, 64, 5)

    # ---- shutdown, restart, refusals ----------------------------------------------------------
    rows_before = h.db_query("SELECT COUNT(*) FROM reports")[0][0]
    est_before = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
    t.ok(est_before.get("mechanism") == "tuple_mr" and "tuple" in str(est_before.get("privacy_unit"))
         and str(est_before.get("trust_model")).startswith("local DP")
         and est_before.get("eps_implemented", 0) > 0,
         "the estimate states its eps, privacy unit and trust model",
         {k: est_before.get(k) for k in ("eps", "eps_implemented", "privacy_unit", "trust_model")})
    t0 = time.monotonic()
    rc = h.stop()
    t.ok(rc == 0 and time.monotonic() - t0 < 8 * SLOW, f"SIGTERM: clean exit 0 ({rc})")
    ok, detail = h.consistent()
    t.ok(ok, "the database is consistent: stored sums = the stored reports' sums", detail)
    h.start()
    est_after = json.loads(h.request("GET", "/v1/campaigns/1/estimate")[2])
    t.ok(est_after["reports"] == est_before["reports"]
         and est_after["metrics"] == est_before["metrics"]
         and est_after["rejects_unattributed"] == est_before["rejects_unattributed"],
         "after a restart the estimates and reject counts are rebuilt identically from the DB")
    if h.pg is None:
        second = subprocess.run(h.args(), capture_output=True, text=True, timeout=10 * SLOW)
        t.ok(second.returncode == 2 and "in use" in second.stderr,
             "a second collector on the same SQLite file is refused", second.stderr)
    else:
        other = f"{h.tmp}/second.ready"
        second = subprocess.Popen(h.args(extra=["--ready-file", other, "--instance", "second"]),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(200 * SLOW):
            if os.path.exists(other) and open(other).read().strip() or second.poll() is not None:
                break
            time.sleep(0.05)
        running = second.poll() is None
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=15 * SLOW)
        t.ok(running and second.returncode == 0,
             "a second collector on the same PostgreSQL database starts and stops cleanly", err)
    h.stop()
    changed = f"{h.tmp}/changed.txt"
    with open(changed, "w") as f:
        f.write(CAMPAIGNS.replace("id = 171\nmechanism = tuple_mr\neps = 1\n",
                                  "id = 171\nmechanism = tuple_mr\neps = 2\n"))
    p = subprocess.run([a if a != h.campaigns else changed for a in h.args()],
                       capture_output=True, text=True, timeout=10 * SLOW)
    t.ok(p.returncode == 2 and "campaign 171" in p.stderr,
         "changing a stored campaign's parameters is refused (exit 2)", p.stderr)
    t.ok(h.db_query("SELECT COUNT(*) FROM reports")[0][0] == rows_before,
         "no report was lost or added across the restarts")

    # ---- the connection cap: silent peers are evicted, requests in progress are not ----------
    h.start(extra=["--max-conns", "4", "--handshake-timeout-ms", "1000",
                   "--request-timeout-ms", "3000"])
    silent = [socket.create_connection(("127.0.0.1", h.port), timeout=10) for _ in range(4)]
    time.sleep(0.2)
    t0 = time.monotonic()
    st = h.request("GET", "/healthz")[0]
    evicted = sum(1 for s in silent if recv_all_quick(s) == b"")
    t.ok(st == 200 and time.monotonic() - t0 < 1.0 * SLOW and evicted >= 1,
         f"with --max-conns 4 held by silent peers a new client is served at once "
         f"({evicted} silent peer(s) evicted)")
    for s in silent:
        s.close()
    busy = []
    for _ in range(4):  # four requests in progress: never evicted
        b = tls_socket(h)
        b.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n"
                  b"Content-Type: application/x-protobuf\r\nAuthorization: Bearer "
                  + h.creds.token["harness"].encode() + b"\r\n\r\n\x0a")
        busy.append(b)
    time.sleep(0.3)
    extra = socket.create_connection(("127.0.0.1", h.port), timeout=5)
    t0 = time.monotonic()
    got = recv_all(extra)
    extra.close()
    t.ok(got == b"" and time.monotonic() - t0 < 1.0 * SLOW,
         "with 4 requests in progress a 5th connection is closed at once (none is cut short)")
    answers = [recv_all(b) for b in busy]
    t.ok(all(a.startswith(b"HTTP/1.1 408 ") for a in answers),
         "... and those requests run to their own deadline (408)", [a[:40] for a in answers])
    for b in busy:
        b.close()
    st = h.request("GET", "/healthz")[0]
    t.ok(st == 200, "once they ended the slots are free again")
    t.ok(h.stop() == 0, "clean stop")


def bench(seconds, tool_args):
    """Prints tool_load's bench JSON (collector.reports_per_s, collector.handshakes_per_s) for a
    collector started here; nothing else on stdout. Exit status 0 if it ran."""
    h = None
    try:
        h = Harness()
        h.start(extra=["--rate-limit", "0"])  # throughput, not the per-address limit
        rc, res, err = h.tool("bench", "--seconds", str(seconds), "--server-pid",
                              str(h.proc.pid), *tool_args, timeout=4 * seconds + 120)
        if rc != 0 or res is None:
            print(f"bench failed: {err}", file=sys.stderr)
            return 1
        print(json.dumps(res))
        return 0 if h.stop() == 0 else 1
    finally:
        if h is not None:
            h.cleanup()


def main():
    t = Tap()
    soak = None
    if len(sys.argv) == 3 and sys.argv[1] == "--soak":
        soak = int(sys.argv[2])
    if len(sys.argv) >= 3 and sys.argv[1] == "--bench":
        return bench(int(sys.argv[2]), sys.argv[3:])
    h = None
    try:
        h = Harness()
        pb = load_pb2(h.tmp)
        # the setup is checked, not assumed: the server certificate verifies against the
        # throw-away CA, and protoc's module round-trips a Report
        v = subprocess.run(["openssl", "verify", "-CAfile", h.ca, f"{h.tmp}/server.crt"],
                           capture_output=True, text=True)
        rep = pb.Report(report_id=bytes(range(16)), campaign_id=171, eps_q16=65536)
        back = pb.Report.FromString(rep.SerializeToString())
        t.ok(v.returncode == 0 and back.campaign_id == 171 and back.report_id == bytes(range(16)),
             "throw-away CA and server certificate verify (openssl); protoc python code "
             "round-trips a Report", v.stdout + v.stderr)
        t.ok(SANITIZED == OUT.endswith("-sanitize"),
             f"the collector is {'' if SANITIZED else 'not '}an ASan build, as its build "
             f"directory says ({OUT}): time allowances x{SLOW}")
        if soak:
            h.start(extra=["--rate-limit", "0"])
            load_check(t, h, 64, soak)
            t.ok(h.stop() == 0, "clean stop")
        else:
            main_tests(t, h, pb)
    except Exception as exc:  # a crash of the test itself is a failure, never a pass
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
