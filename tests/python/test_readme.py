# SPDX-License-Identifier: Apache-2.0
"""The Python starts of README.md ("For analysts: Python") and host-sim/python/README.md run as
written, from the repository's root, and print what they say."""
import contextlib
import io
import os
import re

import pytest

from conftest import ROOT


def _block(path, after):
    text = (ROOT / path).read_text()
    start = text.index(after)
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)


@pytest.mark.parametrize("path,after", [("README.md", "## For analysts: Python"),
                                        ("host-sim/python/README.md", "## Use")])
def test_python_start_runs(path, after, monkeypatch):
    code = _block(path, after)
    assert len(code.strip().splitlines()) <= 12, "a start of about 10 lines"
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    ns = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, path, "exec"), ns)
    sim = ns["sim"]
    assert len(sim.summary) > 0 and (sim.summary["runs"] > 0).all()
    if path == "README.md":
        printed = out.getvalue()
        assert "east-south" in printed and int(printed.strip().splitlines()[-1]) > 1000
