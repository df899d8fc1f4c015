# SPDX-License-Identifier: Apache-2.0
"""The three notebooks of host-sim/python/notebooks, executed as a user would (`python3 -m
nbconvert --to notebook --execute`, Debian's python3-nbconvert and python3-ipykernel), each
ending with a "RESULT {json}" line whose key figures are asserted here. The collector notebook
reads the real collector of the `running` fixture."""
import json
import os
import subprocess

import nbformat
import pytest

import dpmetrics as dm
from conftest import ROOT

NOTEBOOKS = ROOT / "host-sim" / "python" / "notebooks"


def _execute(name, tmp_path, env=None):
    done = subprocess.run(
        ["/usr/bin/python3", "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=300", "--output-dir", str(tmp_path), str(NOTEBOOKS / name)],
        env={**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1", **(env or {})},
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    nb = nbformat.read(str(tmp_path / name), as_version=4)
    texts = [o.get("text", "") for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", []) if o.output_type == "stream"]
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors
    line = [l for t in texts for l in t.splitlines() if l.startswith("RESULT ")]
    assert len(line) == 1, texts
    return json.loads(line[0][len("RESULT "):]), nb


def test_notebooks_are_stored_without_outputs():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") and c.get("execution_count") is None
                   for c in nb.cells if c.cell_type == "code"), path.name
    assert len(list(NOTEBOOKS.glob("*.ipynb"))) == 3


def test_plan_your_campaign(tmp_path):
    r, _ = _execute("plan-your-campaign.ipynb", tmp_path)
    # with one example per device local DP is noise at 10^5 devices; two aggregators are not
    assert r["rmse_central_1e5"] < 0.005 and r["rmse_local_1e5"] > 0.5
    assert 1000 < r["devices_central"] and r["devices_local"] > 1000 * r["devices_central"]


def test_compare_auc_mechanisms(tmp_path):
    r, nb = _execute("compare-auc-mechanisms.ipynb", tmp_path)
    assert set(r) == {"roc_hist", "dpauc", "ustat_bins", "ustat_tree", "fedauc_rr",
                      "two_aggregators (worst group)"}
    for name, by_eps in r.items():
        assert by_eps["4"] <= by_eps["1"] * 1.05, name  # more epsilon, no more error
    one = {k: v["1"] for k, v in r.items()}
    assert min(one, key=one.get) == "two_aggregators (worst group)"
    assert one["fedauc_rr"] < one["roc_hist"] < one["dpauc"]
    assert any("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))


def test_read_a_collector(tmp_path, running):
    h, _ = running
    env = {"DPM_COLLECTOR_URL": f"https://127.0.0.1:{h.port}",
           "DPM_COLLECTOR_TOKEN": h.creds.files["harness"], "DPM_COLLECTOR_CA": h.ca}
    r, nb = _execute("read-a-collector.ipynb", tmp_path, env)
    c = dm.collector(env["DPM_COLLECTOR_URL"], token=env["DPM_COLLECTOR_TOKEN"],
                     ca=env["DPM_COLLECTOR_CA"])
    assert r["campaigns"] == [1, 3, 9] and r["periods"] == 1
    assert r["tpr_means"] == c.estimate(1).groups["mean"].tolist()
    assert r["gaps"] == c.estimate(9).gaps["gap"].tolist() and len(r["auc_groups"]) == 3
    pngs = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))
    assert pngs == 3  # the ROC, the gaps, over time
