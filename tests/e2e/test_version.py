#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""One version everywhere: the numbers in sdk/include/dpm/version.h (the one place they are set)
are what .make/version.sh and `make version` print, what `dpm-collector --version` and
`dpm-sim --version` print (both through dpm_version()), what the collector's /healthz reports,
and the newest release heading of sdk/CHANGES.md; DPM_WIRE_VERSION is the N of the protobuf
package dpm.vN. (tests/unit/test_version.c checks the macros against the library.) TAP."""
import json
import os
import re
import subprocess
import sys

from e2e_util import OUT, ROOT, Tap
from test_collector import Harness

HEADER = os.path.join(ROOT, "sdk", "include", "dpm", "version.h")


def header_version(text):
    """("X.Y.Z", wire) from version.h's text; None for a part that is missing."""
    num = {k: re.search(rf"^#define DPM_VERSION_{k} (\d+)$", text, re.M)
           for k in ("MAJOR", "MINOR", "PATCH")}
    wire = re.search(r"^#define DPM_WIRE_VERSION (\d+)$", text, re.M)
    version = None if None in num.values() else ".".join(num[k].group(1)
                                                          for k in ("MAJOR", "MINOR", "PATCH"))
    return version, wire.group(1) if wire else None


def newest_release(changes):
    """The first "## X.Y.Z" heading of CHANGES.md ("Unreleased" is not one)."""
    m = re.search(r"^## (\d+\.\d+\.\d+)\b", changes, re.M)
    return m.group(1) if m else None


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT, **kw)


def main():
    t = Tap()
    with open(HEADER) as f:
        version, wire = header_version(f.read())
    t.ok(version is not None and wire is not None, f"version.h sets {version}, wire v{wire}")

    r = run("sh", ".make/version.sh")
    t.ok(r.returncode == 0 and r.stdout == f"{version}\n", ".make/version.sh prints it", r.stderr)
    r = run("sh", ".make/version.sh", "-", input="#define DPM_VERSION_MAJOR 1\n")
    t.ok(r.returncode != 0 and r.stdout == "",
         "negative control: .make/version.sh fails on a header without all three numbers")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = run("make", "-s", "--no-print-directory", "version", env=env)
    t.ok(r.returncode == 0 and r.stdout == f"{version}\n", "make version prints it",
         r.stdout + r.stderr)

    for tool in ("dpm-collector", "dpm-sim"):
        r = run(os.path.join(OUT, tool), "--version")
        t.ok(r.returncode == 0 and r.stdout == f"{tool} {version}\n",
             f"{tool} --version prints '{tool} {version}'", r.stdout + r.stderr)

    h = Harness(campaigns="[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                          "metrics = tpr\n")
    try:
        h.start()
        st, _, body = h.request("GET", "/healthz")
        got = json.loads(body).get("version") if st == 200 else None
        t.ok(got == version, f"/healthz reports version {got}", body)
    finally:
        h.cleanup()

    with open(os.path.join(ROOT, "sdk", "CHANGES.md")) as f:
        changes = f.read()
    t.ok(newest_release(changes) == version,
         f"sdk/CHANGES.md's newest release is {newest_release(changes)}")
    t.ok(changes.find("## Unreleased") < changes.find(f"## {version}"),
         "sdk/CHANGES.md has an Unreleased section above it")
    with open(os.path.join(ROOT, "sdk", "proto", "dpm.proto")) as f:
        package = re.search(r"^package (\S+);", f.read(), re.M)
    t.ok(package is not None and package.group(1) == f"dpm.v{wire}",
         f"dpm.proto's package is dpm.v{wire} (DPM_WIRE_VERSION)")

    # Negative controls: the parsers see another version when there is one.
    other, _ = header_version("#define DPM_VERSION_MAJOR 0\n#define DPM_VERSION_MINOR 2\n"
                              "#define DPM_VERSION_PATCH 0\n#define DPM_WIRE_VERSION 1\n")
    t.ok(other == "0.2.0",
         "negative control: a header saying 0.2.0 is read as 0.2.0")
    t.ok(header_version("#define DPM_VERSION_MAJOR 0\n")[0] is None,
         "negative control: a header without all three numbers has no version")
    t.ok(newest_release("## Unreleased\n\n## 9.8.7 — x\n") == "9.8.7",
         "negative control: the CHANGES.md reader finds the first release heading")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
