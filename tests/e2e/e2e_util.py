# SPDX-License-Identifier: Apache-2.0
"""Shared by the end-to-end test scripts of tests/e2e (not a test itself: the test runner takes
only tests/e2e/test_*.py): the repository root, the build output directory (OUT, as `make test`
passes it), running dpm-sim, TAP output and reading CSV and JSON outputs. The scripts import it from their own directory, the first
entry of sys.path when one runs as a script."""
import csv
import json
import os
import subprocess
import threading

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, os.environ.get("OUT", "build/host"))
SIM = os.path.join(OUT, "dpm-sim")


def built_with_asan(path):
    """True if the program at path was linked with AddressSanitizer (`make sanitize`): its
    runtime's entry point is in the binary. Timing and memory checks of a sanitized server
    adapt to ASan's overhead (slower, shadow memory and redzones); never in a normal build."""
    try:
        with open(path, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


class Tap:
    """TAP lines "ok N - what" / "not ok N - what", the latter followed by up to 20 lines of diag
    as "# " comments; done() prints the plan and returns the exit status."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, diag=None):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}", flush=True)
        if not cond:
            self.failed += 1
            if diag is not None:
                for line in str(diag).splitlines()[:20]:
                    print(f"# {line}", flush=True)
        return cond

    def done(self):
        print(f"1..{self.n}", flush=True)
        return 1 if self.failed else 0


def run_sim(*args, timeout=120):
    """dpm-sim ARGS from the repository root, its output captured as text."""
    return subprocess.run([SIM, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def read_json(d, name):
    """The JSON file d/name."""
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def read_csv(d, name):
    """The rows of the CSV file d/name as dicts."""
    with open(os.path.join(d, name), newline="") as f:
        return list(csv.DictReader(f))


PTY_NEEDED = ("needs a pseudo-terminal device (/dev/ptmx and a devpts /dev/pts): this check runs "
              "the program on a terminal, which it creates itself")


def run_on_pty(argv, timeout=300, cwd=ROOT, openpty=os.openpty):
    """argv with its stderr on a pseudo-terminal this function creates (as on a user's terminal:
    isatty(2) is true there), stdout a pipe, stdin /dev/null: the test needs no terminal of its
    own. Returns (returncode, stdout, tty_text, problem): problem is None, or why no
    pseudo-terminal could be made (PTY_NEEDED and the system's reason); a caller must fail then,
    never pass. openpty is a parameter for the negative control."""
    try:
        master, slave = openpty()
    except OSError as e:
        return None, "", "", f"{PTY_NEEDED}: os.openpty() failed: {e}"
    chunks = []

    def drain():  # the child blocks once the pty's buffer is full: read it as it comes
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: every slave end is closed
                return
            if not b:
                return
            chunks.append(b)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                           timeout=timeout, cwd=cwd)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return (p.returncode, p.stdout.decode(errors="replace"),
            b"".join(chunks).decode(errors="replace"), None)
