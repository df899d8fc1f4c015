#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The dpmetrics Python package's tests (tests/python, pytest) as TAP for make test: one TAP
line per pytest test (its setup, call and teardown together), "not ok" with the failure's last
lines as TAP comments. pytest and the package run with Debian's python3 (python3-pytest,
python3-numpy, python3-pandas: make deps), against the library of the build under test
($OUT/lib/libdpmsim.so). A missing pytest is a failure, not a skip."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = {}
        self.order = []
        self.seconds = {}

    def pytest_runtest_logreport(self, report):
        if report.nodeid not in self.failed:
            self.order.append(report.nodeid)
            self.failed[report.nodeid] = None
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.failed and self.failed[report.nodeid] is None:
            self.failed[report.nodeid] = f"{report.when}: {report.longreprtext}"
        elif report.skipped and report.when != "teardown":
            # a skip is reported as one (run-tests.sh fails it under CI)
            self.failed[report.nodeid] = self.failed[report.nodeid] or "SKIP"

    def pytest_collectreport(self, report):
        if report.failed:
            self.order.append(report.nodeid or "collection")
            self.failed[report.nodeid or "collection"] = f"collection: {report.longreprtext}"

    def print(self):
        for nodeid in self.order:
            self.n += 1
            why = self.failed[nodeid]
            name = nodeid.replace("tests/python/", "")
            if why is None:
                print(f"ok {self.n} - {name}")
            elif why == "SKIP":
                print(f"ok {self.n} - {name} # SKIP skipped by pytest")
            else:
                print(f"not ok {self.n} - {name}")
                for line in why.strip().splitlines()[-25:]:
                    print(f"# {line}")
        # where make test's time goes (this suite is one of its longest)
        slow = sorted(self.seconds.items(), key=lambda kv: -kv[1])[:5]
        print("# slowest: " + ", ".join(f"{k.replace('tests/python/', '')} {v:.1f} s"
                                        for k, v in slow))
        print(f"1..{self.n}")


def main():
    try:
        import pytest
    except ImportError:
        print("not ok 1 - pytest is not installed: make deps installs python3-pytest")
        print("1..1")
        return 1
    out = Path(os.environ.get("OUT", "build/host"))
    lib = (out if out.is_absolute() else ROOT / out) / "lib" / "libdpmsim.so"
    if not lib.is_file():
        print(f"not ok 1 - {lib} is missing: make builds it (make pylib)")
        print("1..1")
        return 1
    os.environ["DPMETRICS_LIB"] = str(lib)
    tap = Tap()
    # pytest's own report and the TAP lines share standard output (one stream keeps their
    # order; standard error reaches the log through another pipe), the TAP lines after it, each
    # on a line of its own
    status = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT / "tests"),
                          str(ROOT / "tests" / "python")], plugins=[tap])
    print()
    tap.print()
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
