#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""examples/hello/post.c (build/host/hello-post) against the real collector over TLS: hello's
local examples become one report that the collector counts; with no collector listening the
run fails naming the connection, keeps the report in its state file, and the next run (refused
a second report in the same period) posts the kept one; a wrong CA is refused as a TLS failure.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

OUT = os.environ.get("OUT", "build/host")
HELLO_POST = os.path.join(OUT, "hello-post")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import Tap  # noqa: E402

# hello's campaign, as the collector announces it (examples/hello/post.c's dpm_campaign_t).
CAMPAIGNS = """\
[campaign]
id = 1
mechanism = tuple_mr
eps = 1
groups = 4
metrics = tpr
"""

def free_port():
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    t = Tap()
    from test_collector import Harness  # certificates + collector process
    h = Harness(campaigns=CAMPAIGNS)
    try:
        h.start(extra=["--allow-anonymous-devices"])  # hello-post has no device credential
        url = f"https://localhost:{h.port}"

        def reports():
            status, _, body = h.request("GET", "/v1/campaigns/1/estimate")
            return json.loads(body).get("reports") if status == 200 else None

        def run(state, url=url, ca=h.ca):
            return subprocess.run([HELLO_POST, url, ca, state], capture_output=True, text=True,
                                  timeout=60)

        with tempfile.TemporaryDirectory(prefix="dpm-hello-post.") as tmp:
            before = reports()
            r = run(os.path.join(tmp, "a.bin"))
            after = reports()
            t.ok(r.returncode == 0 and "1 delivered, 0 pending" in r.stdout,
                "hello-post reports and posts one report over TLS", r.stdout + r.stderr)
            t.ok(before == 0 and after == 1,
                f"the collector's estimate counts one more report ({before} -> {after})")

            # No collector: the connection is refused, the report stays in the state file.
            down = f"https://localhost:{free_port()}"
            b = os.path.join(tmp, "b.bin")
            r = run(b, url=down)
            t.ok(r.returncode == 1 and "cannot connect to the collector" in r.stderr and
                "stay queued" in r.stderr and r.stdout == "",
                "no collector: exits 1 naming the connection, the report kept", r.stderr)
            t.ok(reports() == 1, "nothing reached the collector")
            r = run(b)
            t.ok(r.returncode == 3 and "no new report" in r.stdout and "1 delivered" in r.stdout,
                "the next run, refused a second report this period, posts the kept one",
                r.stdout + r.stderr)
            t.ok(reports() == 2, "the collector counts the kept report")
            r = run(b)
            t.ok(r.returncode == 3 and "0 delivered, 0 pending" in r.stdout,
                "a third run has nothing left to post (the kept report went once)",
                r.stdout + r.stderr)

            # Negative control: a CA that did not sign the collector's certificate.
            c = os.path.join(tmp, "c.bin")
            r = run(c, ca=f"{h.tmp}/dev-ca.crt")
            t.ok(r.returncode == 1 and "TLS" in r.stderr and reports() == 2,
                "a wrong CA is refused as a TLS failure, nothing posted", r.stderr)
            r = run(os.path.join(tmp, "no-such-dir", "d.bin"))
            t.ok(r.returncode == 1 and "state file" in r.stderr and "No such file" in r.stderr,
                "a state file in a missing directory is named with the cause", r.stderr)
        t.ok(h.stop() == 0, "the collector stops cleanly")
    finally:
        h.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
