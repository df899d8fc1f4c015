# SPDX-License-Identifier: Apache-2.0
"""A throw-away PostgreSQL cluster for the tests, `make demo-pg` and `make bench` (not a test
itself): initdb and pg_ctl (Debian's postgresql-15) in a directory under build/pg/, a Unix
socket in that directory and no TCP port, trust authentication for the user "dpm". PostgreSQL
refuses to run as root: as root the server runs as the "postgres" user (runuser), otherwise as
whoever runs the tests. When that user cannot reach build/ (a checkout under /root) or the
socket path would be too long, the cluster goes to $TMPDIR/dpm-pg-UID/ instead. The programs
are found in $PG_BINDIR, /usr/lib/postgresql/N/bin (Debian), pg_config --bindir or PATH. The
cluster is stopped (and its directory removed) when the `with`
block ends, whatever happens inside it, and at interpreter exit.

    with PgCluster("test_collector_pg") as pg:
        url = pg.createdb("t1")            # postgresql:///t1?host=...&user=dpm
        pg.sql("t1", "SELECT count(*) FROM reports")   # rows as lists of strings

Also a command (used by .make/demo.sh and .make/bench.py for a cluster that outlives one
Python process): pg_cluster.py start DIR | stop DIR, printing the socket directory."""
import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"))


def pg_bindir():
    """The server programs' directory: $PG_BINDIR, else the newest /usr/lib/postgresql/N/bin
    (Debian keeps initdb and pg_ctl there, off PATH), else pg_config --bindir, else PATH."""
    cands = [os.environ.get("PG_BINDIR", "")]
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    cands += sorted(versions, key=lambda d: [int(x) for x in re.findall(r"\d+", d)],
                    reverse=True)
    if shutil.which("pg_config"):
        r = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        cands.append(r.stdout.strip())
    cands.append(os.path.dirname(shutil.which("initdb") or ""))
    for d in cands:
        if d and all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "pg_ctl")):
            return d
    raise RuntimeError("initdb and pg_ctl not found (looked in $PG_BINDIR, "
                       "/usr/lib/postgresql/*/bin, pg_config --bindir, PATH): install "
                       "postgresql-15 (make deps)")


def _as_server_user(cmd):
    """cmd run as the cluster's owner: postgres when we are root."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _server_can_use(d):
    """Whether the server's user can write in d (as root: every parent must let postgres
    through, which a checkout under /root does not) and d's socket path fits in sun_path."""
    if len(os.path.join(d, ".s.PGSQL.5432")) > 100:
        return False
    return subprocess.run(_as_server_user(["test", "-w", d, "-a", "-x", d]),
                          capture_output=True).returncode == 0


def _fallback(d):
    """Where a cluster goes when d does not suit the server (see _server_can_use)."""
    return os.path.join(tempfile.gettempdir(), f"dpm-pg-{os.geteuid()}", os.path.basename(d))


def _make_dir(d):
    os.makedirs(d)
    if os.geteuid() == 0:
        shutil.chown(d, "postgres", "postgres")
    os.chmod(d, 0o755)

class PgCluster:
    def __init__(self, name, base=None):
        self.bindir = pg_bindir()
        self.dir = os.path.join(base or os.path.join(BUILD, "pg"), f"{name}.{os.getpid()}")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self.running = False

    # ---- life cycle ------------------------------------------------------------------------
    def reap(self):
        """Stop and remove the clusters of test processes that died without stopping theirs
        (killed with SIGKILL): their directories end in the dead process's id."""
        base = os.path.dirname(self.dir)
        for d in glob.glob(os.path.join(base, "*.*")):
            pid = d.rsplit(".", 1)[1]
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
                continue
            if os.path.exists(os.path.join(d, "data", "postmaster.pid")):
                subprocess.run(_as_server_user([os.path.join(self.bindir, "pg_ctl"), "-D",
                                                os.path.join(d, "data"), "-m", "immediate",
                                                "stop"]), capture_output=True, text=True)
            shutil.rmtree(d, ignore_errors=True)

    def start(self, fsync=True):
        if os.geteuid() == 0 and subprocess.run(["id", "postgres"],
                                                capture_output=True).returncode != 0:
            raise RuntimeError("running as root, and there is no postgres user to run the "
                               "server as (PostgreSQL refuses root): install postgresql-15")
        self.reap()
        shutil.rmtree(self.dir, ignore_errors=True)
        _make_dir(self.dir)
        if not _server_can_use(self.dir):
            # build/ is out of the server user's reach (or too deep for a socket path): a
            # directory of the same name under /tmp instead, reaped the same way
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = _fallback(self.dir)
            os.makedirs(os.path.dirname(self.dir), mode=0o755, exist_ok=True)
            self.reap()
            shutil.rmtree(self.dir, ignore_errors=True)
            _make_dir(self.dir)
            if not _server_can_use(self.dir):
                raise RuntimeError(f"the server's user cannot use {self.dir}")
            self.data = os.path.join(self.dir, "data")
            self.log = os.path.join(self.dir, "server.log")
        run = dict(check=True, capture_output=True, text=True, timeout=120)
        subprocess.run(_as_server_user([os.path.join(self.bindir, "initdb"), "-D", self.data,
                                        "-A", "trust", "-U", "dpm", "--no-sync",
                                        "-E", "UTF8", "--locale", "C"]), **run)
        opts = (f"-k {self.dir} -c listen_addresses='' -c max_connections=64 "
                f"-c shared_buffers=64MB -c fsync={'on' if fsync else 'off'}")
        self.opts = opts
        self.running = True
        atexit.register(self.stop)
        subprocess.run(_as_server_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.data,
                                        "-o", opts, "-l", self.log, "-w", "-t", "60",
                                        "start"]), **run)
        return self

    def halt(self):
        """Stop the server but keep the cluster (an outage); resume() starts it again."""
        subprocess.run(_as_server_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.data,
                                        "-m", "fast", "-w", "-t", "30", "stop"]),
                       check=True, capture_output=True, text=True, timeout=60)

    def resume(self):
        subprocess.run(_as_server_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.data,
                                        "-o", self.opts, "-l", self.log, "-w", "-t", "60",
                                        "start"]),
                       check=True, capture_output=True, text=True, timeout=120)

    def stop(self):
        if not self.running:
            return
        self.running = False
        ctl = os.path.join(self.bindir, "pg_ctl")
        r = subprocess.run(_as_server_user([ctl, "-D", self.data, "-m", "fast", "-w", "-t", "30",
                                            "stop"]), capture_output=True, text=True)
        if r.returncode != 0:
            subprocess.run(_as_server_user([ctl, "-D", self.data, "-m", "immediate", "stop"]),
                           capture_output=True, text=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- use -----------------------------------------------------------------------------------
    def url(self, db):
        return f"postgresql:///{db}?host={self.dir}&user=dpm"

    def createdb(self, db):
        subprocess.run([os.path.join(self.bindir, "createdb"), "-h", self.dir, "-U", "dpm", db],
                       check=True, capture_output=True, text=True, timeout=60)
        return self.url(db)

    def dropdb(self, db):
        subprocess.run([os.path.join(self.bindir, "dropdb"), "-h", self.dir, "-U", "dpm",
                        "--force", db], check=True, capture_output=True, text=True, timeout=60)

    def sql(self, db, query, timeout=600):
        """Rows of a query (lists of strings; NULL as None), or raises with psql's message."""
        r = subprocess.run([os.path.join(self.bindir, "psql"), "-h", self.dir, "-U", "dpm",
                            "-d", db, "-X", "-q", "-A", "-t", "-F", "\x1f", "-P", "null=\x07",
                            "-v", "ON_ERROR_STOP=1", "-c", query],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"psql: {r.stderr.strip()}")
        rows = []
        for line in r.stdout.split("\n"):
            if line:
                rows.append([None if v == "\x07" else v for v in line.split("\x1f")])
        return rows


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        print("usage: pg_cluster.py start|stop DIR", file=sys.stderr)
        return 2
    base = os.path.abspath(sys.argv[2])
    c = PgCluster("cluster", base=os.path.dirname(base))
    c.dir = base
    c.data = os.path.join(base, "data")
    c.log = os.path.join(base, "server.log")
    if sys.argv[1] == "start":
        c.start()
        atexit.unregister(c.stop)  # outlives this process: `stop DIR` ends it
        c.createdb("dpm")
        print(c.dir)
    else:
        if not os.path.isdir(c.data) and os.path.isdir(os.path.join(_fallback(base), "data")):
            c.dir = _fallback(base)
            c.data = os.path.join(c.dir, "data")
        c.running = os.path.isdir(c.data)
        c.stop()
    return 0


if __name__ == "__main__":
    time.tzset()
    sys.exit(main())
