# SPDX-License-Identifier: Apache-2.0
"""simulate(): a campaign run on a population by dpm-sim's own code, in this process.

A scenario is written (host-sim/scenarios/README.md is its format) and run by libdpmsim.so's
dpmsim_run, the function `dpm-sim --scenario F --out DIR` calls: the same files, the same
numbers, bit for bit (tests/python/test_simulate.py compares them).
"""
import json
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import _native, population as _population

MODES = {"inprocess": 1, "exact": 2}
_KEY = re.compile(r"[a-z_]{1,31}\Z")


class Simulation:
    """What a run wrote: `summary` (one row per configuration and item: estimate error, rmse,
    coverage of the intervals), `runs` (one row per run and item: estimate, interval, truth),
    `results` (results.json as a dict) and `out` (the directory of the files)."""

    def __init__(self, out):
        self.out = Path(out)
        self.results = json.loads((self.out / "results.json").read_text())
        self.summary = pd.read_csv(self.out / "summary.csv")
        self.runs = pd.read_csv(self.out / "runs.csv", keep_default_na=False,
                                na_values={"estimate": [""], "ci_lo": [""], "ci_hi": [""],
                                           "sd": [""], "error": [""]})

    def __repr__(self):
        return (f"Simulation({self.results.get('scenario')!r}, mode {self.results.get('mode')}, "
                f"{len(self.summary)} items, out={str(self.out)!r})")


def _value(key, v):
    if isinstance(v, (list, tuple, np.ndarray)):
        if len(v) == 0:
            raise ValueError(f"campaign key {key!r}: an empty list")
        return ", ".join(_value(key, x) for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise ValueError(f"campaign key {key!r}: {v!r} is not a finite number")
        return np.format_float_positional(v, unique=True, trim="-")
    s = str(v)
    if "\n" in s or "#" in s or "[" in s:
        raise ValueError(f"campaign key {key!r}: {s!r} holds a newline, '#' or '['")
    return s


def _campaign_lines(campaigns):
    if isinstance(campaigns, dict):
        campaigns = [campaigns]
    if not campaigns:
        raise ValueError("campaigns: at least one, e.g. {'mechanism': 'roc_hist', 'eps': 1}")
    lines = []
    for i, c in enumerate(campaigns):
        if not isinstance(c, dict):
            raise TypeError(f"campaigns[{i}]: a dict of scenario keys, not {type(c).__name__}")
        c = dict(c)
        name = str(c.pop("name", f"c{i + 1}"))
        if "mechanism" not in c or "eps" not in c:
            raise ValueError(f"campaigns[{i}] ({name}): 'mechanism' and 'eps' are needed")
        lines.append(f"\n[campaign {name}]")
        for k, v in c.items():
            if not isinstance(k, str) or not _KEY.match(k):
                raise ValueError(f"campaigns[{i}] ({name}): {k!r} is not a scenario key")
            lines.append(f"{k} = {_value(k, v)}")
    return lines


def simulate(population=None, campaigns=None, *, scenario=None, devices=None, runs=None,
             seed=None, population_seed=1, mode=None, threads=0, threshold=0.5,
             confidence=None, out=None, name="python"):
    """Simulate campaigns on a population, as `dpm-sim` does.

    population: a DataFrame (columns device_id, score, label, group[, prediction]; or pass
        (df, {"score": "your_column", ...})) or the path of such a CSV file; with campaigns, a
        list of dicts of scenario keys ({"name": "roc", "mechanism": "roc_hist", "eps": [1, 4],
        "bins": 10}). Or scenario: a scenario file's path, run as it is.
    devices: the fleet size, or a list (a sweep). Default: the data's devices, each once with
        its own rows; a larger fleet is resampled from them, stratified by group (each group
        keeps its share; devices drawn with replacement by population_seed, each keeping its
        rows). For a DataFrame, a fleet smaller than its data is refused: subsample it yourself
        (a CSV path is resampled down too, as dpm-sim does).
    runs (default 200; a scenario's own), seed (the devices' noise, default 1), mode
        ("exact": each run's aggregate drawn directly; "inprocess": every device through the
        real SDK; default: a scenario's own mode, exact for a population), threads (0: the
        machine's), confidence (default 0.95), out (a directory to keep the files in; default
        a temporary one, removed when the result is discarded).
    Returns a Simulation. Raises TypeError / ValueError on bad input, DpmError for what
    dpm-sim's core refuses (its message names the scenario or population line)."""
    if mode is None:  # a scenario file's own mode; exact for a population
        mode = None if scenario is not None else "exact"
    elif mode not in MODES:
        raise ValueError(f"mode {mode!r}: one of {', '.join(MODES)} (network mode: the dpm-sim "
                         "command, against a running collector)")
    sweep = [] if devices is None else list(np.atleast_1d(devices))
    for k in sweep:
        if isinstance(k, (bool, np.bool_)) or not float(k).is_integer() or k < 2:
            raise ValueError(f"devices {k!r}: a whole number of devices, at least 2")
    if runs is not None and (isinstance(runs, bool) or int(runs) != runs or not 1 <= runs <= 10**7):
        raise ValueError(f"runs {runs!r}: 1 .. 10^7")
    if not isinstance(threads, int) or not 0 <= threads <= 16:
        raise ValueError(f"threads {threads!r}: 1 .. 16, or 0 for the machine's")
    tmp = Path(tempfile.mkdtemp(prefix="dpmetrics-"))
    try:
        if scenario is not None:
            if population is not None or campaigns is not None:
                raise ValueError("give scenario=, or population and campaigns, not both")
            path = Path(scenario)
            if not path.is_file():
                raise ValueError(f"scenario {str(path)!r}: no such file")
        else:
            path = _write_scenario(tmp, population, campaigns, sweep, threshold, confidence,
                                   population_seed, name)
        out_dir = Path(out) if out is not None else tmp / "out"
        try:
            _native.run(path, out_dir, mode=MODES.get(mode, 0), threads=threads,
                        runs=int(runs) if runs is not None else (0 if scenario else 200),
                        seed=seed, devices=[int(k) for k in sweep])
        except _native.DpmError as e:
            if scenario is not None:
                raise
            raise _native.DpmError(_yours(str(e), tmp, population)) from None
        result = Simulation(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out is None:
        result._tmp = tempfile.TemporaryDirectory()  # removed with the result
        shutil.move(str(out_dir), result._tmp.name)
        result.out = Path(result._tmp.name) / out_dir.name
    shutil.rmtree(tmp, ignore_errors=True)
    return result


def _yours(message, tmp, population):
    """dpm-sim's message about the files written here, said about what the caller gave: the
    scenario's line as its section and key, the population file as the caller's file, or as
    the DataFrame's row (line L is row L - 2: the header is line 1)."""
    lines = (tmp / "scenario.scn").read_text().splitlines()

    def where(m):  # "[campaign roc] bins = 1000: " for the scenario's line
        n = int(m.group(1))
        head = next((l for l in reversed(lines[:n]) if l.startswith("[")), "")
        text = lines[n - 1] if 0 < n <= len(lines) else ""
        return f"{head} {text}: " if text != head else f"{head}: "
    message = re.sub(re.escape(str(tmp / "scenario.scn")) + r":(\d+): ", where, message)
    if isinstance(population, tuple):
        population = population[0]
    csv = str(tmp / "population.csv")
    if isinstance(population, (str, Path)):
        return message.replace(csv, str(population))
    message = re.sub(re.escape(csv) + r":(\d+)",
                     lambda m: f"the DataFrame's row {int(m.group(1)) - 2}", message)
    return message.replace(csv, "the DataFrame")


def _write_scenario(tmp, population, campaigns, sweep, threshold, confidence, population_seed,
                    name):
    if population is None or campaigns is None:
        raise ValueError("simulate needs a population and campaigns (or scenario=PATH)")
    if not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold {threshold!r}: a number in [0, 1]")
    columns = None
    if isinstance(population, tuple):
        population, columns = population
    if isinstance(population, (str, Path)):
        if not Path(population).is_file():
            raise ValueError(f"population {str(population)!r}: no such file")
        # linked under a plain name: `csv(PATH, ...)` cannot hold a path with ',' or ')'
        csv = tmp / "population.csv"
        csv.symlink_to(Path(population).resolve())
        ndev = None
    else:
        csv = tmp / "population.csv"
        ndev, _ = _population.write_csv(population, csv, columns)
    for k in sweep:
        if ndev is not None and k < ndev:
            raise ValueError(f"devices {int(k)} is smaller than the data's {ndev} devices: "
                             "a fleet is the data as it is (devices=None) or resampled up from "
                             "it; to measure fewer devices, subsample the DataFrame")
    lines = ["[scenario]", f"name = {_value('name', name)}",
             f"population = csv({csv}, threshold={_value('threshold', float(threshold))})"]
    if sweep:
        lines.append(f"devices = {_value('devices', [int(k) for k in sweep])}")
    if confidence is not None:
        lines.append(f"confidence = {_value('confidence', float(confidence))}")
    lines += ["", "[population]", f"seed = {int(population_seed)}"]
    lines += _campaign_lines(campaigns)
    path = tmp / "scenario.scn"
    path.write_text("\n".join(lines) + "\n")
    return path
