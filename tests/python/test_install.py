# SPDX-License-Identifier: Apache-2.0
"""`pip install host-sim/python` into a fresh virtual environment, with no package index
(--no-index: nothing may be downloaded), and the installed package runs from another folder
with the library it carries, giving the tree's numbers."""
import os
import subprocess
import sys

import dpmetrics as dm
from conftest import OWN_CAMPAIGNS, OWN_CSV, ROOT


def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index",
                           str(ROOT / "host-sim" / "python")], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    env.pop("DPMETRICS_LIB")  # the installed package's own library
    script = (
        "import dpmetrics as dm, sys\n"
        "from pathlib import Path\n"
        "lib = dm._native.lib()._name\n"
        "assert Path(lib).parent.parent == Path(dm.__file__).parent, lib\n"
        f"sim = dm.simulate(dm.read_csv({str(OWN_CSV)!r}), {OWN_CAMPAIGNS[1]!r}, runs=10, seed=5)\n"
        "sys.stdout.write(sim.runs.to_csv(index=False))\n")
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    here = dm.simulate(dm.read_csv(OWN_CSV), OWN_CAMPAIGNS[1], runs=10, seed=5)
    assert run.stdout == here.runs.to_csv(index=False)
    assert "site-packages" in subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import dpmetrics; print(dpmetrics.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
