# SPDX-License-Identifier: Apache-2.0
"""pytest fixtures of the dpmetrics package's tests (run by tests/e2e/test_python.py in make
test): the package from the tree, the library of the build under test ($DPMETRICS_LIB, which
the runner sets to $OUT/lib/libdpmsim.so), dpm-sim beside it."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host-sim" / "python"))
OUT = Path(os.environ.get("OUT", ROOT / "build" / "host"))
if not OUT.is_absolute():
    OUT = ROOT / OUT
os.environ.setdefault("DPMETRICS_LIB", str(OUT / "lib" / "libdpmsim.so"))
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
