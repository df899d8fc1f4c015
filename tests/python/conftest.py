# SPDX-License-Identifier: Apache-2.0
"""pytest fixtures of the dpmetrics package's tests (run by tests/e2e/test_python.py in make
test): the package from the tree, the library of the build under test ($DPMETRICS_LIB, which
the runner sets to $OUT/lib/libdpmsim.so), dpm-sim beside it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host-sim" / "python"))
OUT = Path(os.environ.get("OUT", ROOT / "build" / "host"))
if not OUT.is_absolute():
    OUT = ROOT / OUT
os.environ.setdefault("DPMETRICS_LIB", str(OUT / "lib" / "libdpmsim.so"))
os.environ.setdefault("DPMETRICS_COLLECTOR", str(OUT / "dpm-collector"))
OWN_SCN = ROOT / "host-sim" / "scenarios" / "own-data.scn"
OWN_CSV = ROOT / "host-sim" / "scenarios" / "own-data.csv"
# own-data.scn's campaigns, as simulate() takes them
OWN_CAMPAIGNS = [
    {"name": "gaps", "id": 41, "mechanism": "tuple_ml", "metrics": ["tpr", "fpr"], "eps": [1, 4]},
    {"name": "roc", "id": 42, "mechanism": "roc_hist", "eps": [1, 4], "bins": 10},
    {"name": "roc_by_group", "id": 43, "mechanism": "roc_hist_groups",
     "groups": ["north", "south"], "eps": 4, "bins": 5},
]


@pytest.fixture(scope="session")
def dpm_sim():
    path = OUT / "dpm-sim"
    assert path.is_file(), f"{path} is missing: make builds it"
    return path


@pytest.fixture(scope="session")
def own_df():
    import dpmetrics
    return dpmetrics.read_csv(OWN_CSV)


# A real collector for the reading tests and the collector notebook: the e2e suites' harness
# (TLS, credentials, SQLite), filled by dpm-sim's network mode with three campaigns.
SCENARIO = """\
[scenario]
name = reading
devices = 4000
runs = 1
seed = 3
[population]
examples = 8
[group young]
share = 0.5
scores = binormal(auc=0.85, base_rate=0.4)
[group old]
share = 0.3
scores = binormal(auc=0.72, base_rate=0.4)
[group other]
share = 0.2
scores = binormal(auc=0.65, base_rate=0.4)
[campaign tpr]
id = 1
mechanism = tuple_mr
metrics = tpr
eps = 2
[campaign auc]
id = 3
mechanism = roc_hist
eps = 2
bins = 8
[campaign auc_by_group]
id = 9
mechanism = roc_hist_groups
eps = 4
bins = 6
"""


@pytest.fixture(scope="session")
def running(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from test_collector import Harness  # the e2e suites' collector: TLS, credentials, SQLite
    tmp = tmp_path_factory.mktemp("reading")
    scn = tmp / "reading.scn"
    scn.write_text(SCENARIO)
    sim = str(OUT / "dpm-sim")
    camp = subprocess.run([sim, "campaigns", "--scenario", str(scn)], capture_output=True,
                          text=True, check=True)
    h = Harness(campaigns=camp.stdout)
    h.start()
    try:
        out = tmp / "net"
        r = subprocess.run([sim, "--scenario", str(scn), "--mode", "network", "--collector",
                            f"127.0.0.1:{h.port}", "--ca", h.ca, "--clients", "2", "--batch",
                            "50", "--out", str(out), "--no-plot", "--quiet", "--token",
                            h.creds.files["harness"]], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        yield h, out
    finally:
        h.stop()
        h.cleanup()
