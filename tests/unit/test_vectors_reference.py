#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The golden vectors are the independent reference's: tests/vectors/reference.py (Python,
written from the samplers' definitions) recomputes every case of tests/vectors/noise.json and
must give the file's outputs exactly; test_vectors checks the C SDK against the same file, so
the two implementations agree or one of the tests fails. Negative controls: a file with one
output changed, a case that does not name the reference as its producer, and a reference with
one definition changed (Bernoulli(exp(-1))'s thresholds 1/k! taken as 1/(k+1)!) are refused."""
import copy
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "vectors"))
import reference  # noqa: E402

VECTORS = os.path.join(ROOT, "tests", "vectors", "noise.json")


def check_quiet(data):
    """reference.check on data (a parsed vector file): (cases, failures), its TAP swallowed."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
    try:
        with redirect_stdout(io.StringIO()):
            return reference.check(f.name)
    finally:
        os.unlink(f.name)


def main():
    total, bad = reference.check(VECTORS)  # one TAP line per case
    n = total
    with open(VECTORS) as f:
        data = json.load(f)
    samplers = {c["sampler"] for c in data["cases"]}
    want = {"uniform", "bernoulli", "bernoulli_exp", "dlap", "dgauss", "laplace", "laplace_fixed",
            "grr", "rr"}
    n += 1
    ok = samplers == want
    bad += not ok
    print(f"{'ok' if ok else 'not ok'} {n} - the file covers every sampler: {sorted(samplers)}")

    mutated = copy.deepcopy(data)
    mutated["cases"][9]["outputs"][5] += 1
    n += 1
    ok = check_quiet(mutated)[1] == 1
    bad += not ok
    print(f"{'ok' if ok else 'not ok'} {n} - negative control: one changed output is refused")

    foreign = copy.deepcopy(data)
    foreign["cases"][0]["producer"] = "sdk"
    n += 1
    ok = check_quiet(foreign)[1] == 1
    bad += not ok
    print(f"{'ok' if ok else 'not ok'} {n} - negative control: a case the SDK produced is refused")

    original = reference.bexp1_from_byte
    fact = reference.math.factorial

    def wrong(s, b):  # thresholds 1/(k+1)! instead of 1/k!
        reference.math.factorial = lambda k: fact(k + 1)
        try:
            return original(s, b)
        finally:
            reference.math.factorial = fact

    reference.bexp1_from_byte = wrong
    try:
        failures = check_quiet(data)[1]
    finally:
        reference.bexp1_from_byte = original
    n += 1
    ok = failures >= 5
    bad += not ok
    print(f"{'ok' if ok else 'not ok'} {n} - negative control: a wrong definition of "
          f"Bernoulli(exp(-1)) disagrees with {failures} cases")
    print(f"1..{n}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
