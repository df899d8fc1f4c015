# SPDX-License-Identifier: Apache-2.0
"""simulate() runs dpm-sim's own code: its files equal the dpm-sim command's bit for bit, for a
scenario file and for the same population given as a DataFrame, in both modes and both trust
models."""
import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import dpmetrics as dm
from conftest import OWN_CAMPAIGNS, OWN_CSV, OWN_SCN

TIMING = {"seconds", "prepare_seconds", "threads"}


def _cli(dpm_sim, tmp_path, *args):
    out = tmp_path / "cli"
    subprocess.run([str(dpm_sim), *args, "--out", str(out), "--quiet", "--no-plot"], check=True)
    return out


def _untimed(obj):
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _same_files(a, b):
    assert (a / "runs.csv").read_bytes() == (b / "runs.csv").read_bytes()
    sa, sb = pd.read_csv(a / "summary.csv"), pd.read_csv(b / "summary.csv")
    pd.testing.assert_frame_equal(sa.drop(columns="seconds"), sb.drop(columns="seconds"),
                                  check_exact=True)
    ja = json.loads((a / "results.json").read_text())
    jb = json.loads((b / "results.json").read_text())
    ja.pop("scenario_file", None), jb.pop("scenario_file", None)
    assert _untimed(ja) == _untimed(jb)


def test_scenario_file_equals_dpm_sim(dpm_sim, tmp_path):
    cli = _cli(dpm_sim, tmp_path, "--scenario", str(OWN_SCN), "--runs", "40", "--threads", "2")
    sim = dm.simulate(scenario=OWN_SCN, runs=40, threads=2)
    _same_files(cli, sim.out)
    # own-data.scn at its 2 fleet sizes: gaps 48 rows, roc 20 (per eps: 3 AUC items, AP, ECE),
    # roc_by_group 28 (its 2 groups: 6 AUC items, each group's AP and ECE, their differences
    # and ratios)
    assert len(sim.summary) == 96 and sim.results["mode"] == "exact"


@pytest.mark.parametrize("mode,devices,runs", [("exact", [300, 100000], 40),
                                               ("inprocess", [300], 3)])
def test_dataframe_equals_dpm_sim(dpm_sim, tmp_path, own_df, mode, devices, runs):
    cli = _cli(dpm_sim, tmp_path, "--scenario", str(OWN_SCN), "--runs", str(runs), "--mode", mode,
               "--devices", ",".join(map(str, devices)), "--threads", "2")
    sim = dm.simulate(own_df, OWN_CAMPAIGNS, devices=devices, runs=runs, seed=7, mode=mode,
                      threads=2, name="own-data")
    assert (cli / "runs.csv").read_bytes() == (sim.out / "runs.csv").read_bytes()
    pd.testing.assert_frame_equal(sim.summary.drop(columns="seconds"),
                                  pd.read_csv(cli / "summary.csv").drop(columns="seconds"))


def test_another_seed_differs(own_df):
    a = dm.simulate(own_df, OWN_CAMPAIGNS[1], runs=20, seed=7)
    b = dm.simulate(own_df, OWN_CAMPAIGNS[1], runs=20, seed=8)
    assert not a.runs["estimate"].equals(b.runs["estimate"])
    assert a.runs["truth"].equals(b.runs["truth"])  # the data's truths, whatever the noise


def test_columns_mapping_and_order(own_df):
    """Your column names, extra columns and rows in another order of devices' rows keep the
    population (a device is every row with its id, in order of first appearance)."""
    base = dm.simulate(own_df, OWN_CAMPAIGNS[0], runs=20, seed=3)
    mine = own_df.rename(columns={"score": "p_hat", "group": "country"})
    mine["feature"] = np.arange(len(mine))
    got = dm.simulate((mine, {"score": "p_hat", "group": "country"}), OWN_CAMPAIGNS[0], runs=20,
                      seed=3)
    pd.testing.assert_frame_equal(base.runs, got.runs)


def test_csv_path_and_truths(own_df):
    """A CSV path is read by dpm-sim itself; the AUC truth is the file's Mann-Whitney AUC."""
    sim = dm.simulate(OWN_CSV, {"name": "roc", "mechanism": "roc_hist", "eps": 1, "bins": 10},
                      runs=5)
    model = sim.summary[sim.summary["kind"] == "auc"]  # against the model: the file's scores
    pos = own_df.loc[own_df["label"] == 1, "score"].to_numpy()
    neg = own_df.loc[own_df["label"] == 0, "score"].to_numpy()
    auc = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
        len(pos) * len(neg))
    assert len(model) == 1 and model["truth"].iloc[0] == pytest.approx(auc, abs=1e-9)


def test_both_trust_models(own_df):
    """Local DP and the two aggregators (central DP) on one DataFrame, item by item."""
    groups = ["north", "south", "east"]
    sim = dm.simulate(own_df, [
        {"name": "local", "mechanism": "roc_hist_groups", "groups": groups, "eps": 1, "bins": 10},
        {"name": "central", "mechanism": "roc_hist_2agg", "groups": groups, "eps": 1, "bins": 10,
         "max_device_examples": 8}], devices=100000, runs=30)
    items = sim.summary[sim.summary["kind"].isin(["auc_group", "auc_gap"])]
    local = items[items["campaign"] == "local"].set_index(["kind", "name"])["rmse"]
    central = items[items["campaign"] == "central"].set_index(["kind", "name"])["rmse"]
    assert len(local) == 6 and local.index.equals(central.index)
    assert (central < local / 5).all(), pd.concat([local, central], axis=1)


def test_fleet_is_kept(own_df):
    sim = dm.simulate(own_df, OWN_CAMPAIGNS[1], devices=1000, runs=2)
    assert sim.results["population"]["file_devices"] == 300
    assert set(sim.summary["devices"]) == {1000}


ALL = [  # every mechanism dpm-sim registers, on one-example devices (the ustat modules need them)
    {"name": "mr", "mechanism": "tuple_mr", "metrics": ["tpr"], "eps": 2},
    {"name": "ml", "mechanism": "tuple_ml", "metrics": ["accuracy"], "eps": 2},
    {"name": "roc", "mechanism": "roc_hist", "eps": 2, "bins": 8},
    {"name": "rocg", "mechanism": "roc_hist_groups", "eps": 2, "bins": 6},
    {"name": "dpauc", "mechanism": "dpauc", "eps": 2},
    {"name": "ub", "mechanism": "ustat_bins", "eps": 2, "k": 6},
    {"name": "ut", "mechanism": "ustat_tree", "eps": 2},
    {"name": "frr", "mechanism": "fedauc_rr", "eps": 2},
    {"name": "flap", "mechanism": "fedauc_lap", "eps": 2},
    {"name": "central", "mechanism": "roc_hist_2agg", "eps": 2, "bins": 6,
     "max_device_examples": 1},
]


@pytest.mark.parametrize("mode", ["exact", "inprocess"])
def test_every_mechanism_equals_dpm_sim(dpm_sim, tmp_path, mode):
    """Every registered mechanism runs on a DataFrame in both modes, and its runs equal
    dpm-sim's on the same rows written as a CSV file with the scenario written by hand."""
    rng = np.random.default_rng(34)
    n = 600
    label = rng.integers(0, 2, n)
    score = np.clip(rng.normal(0.35 + 0.3 * label, 0.2), 0, 1).round(4)
    df = pd.DataFrame({"device_id": [f"p{i}" for i in range(n)], "score": score, "label": label,
                       "group": np.array(["a", "b", "c"])[rng.integers(0, 3, n)]})
    sim = dm.simulate(df, ALL, runs=2, seed=11, mode=mode, threads=2)
    assert set(sim.summary["mechanism"]) == {c["mechanism"] for c in ALL}
    # each campaign estimated something (at 600 devices a local-DP group AUC may be undefined)
    assert (sim.summary.groupby("campaign")["runs"].max() >= 1).all()
    df.to_csv(tmp_path / "pop.csv", index=False)
    lines = ["[scenario]", "name = python", "population = csv(pop.csv, threshold=0.5)", "",
             "[population]", "seed = 1"]
    for c in ALL:
        lines.append(f"\n[campaign {c['name']}]")
        lines += [f"{k} = {', '.join(map(str, v)) if isinstance(v, list) else v}"
                  for k, v in c.items() if k != "name"]
    (tmp_path / "s.scn").write_text("\n".join(lines) + "\n")
    cli = _cli(dpm_sim, tmp_path, "--scenario", str(tmp_path / "s.scn"), "--runs", "2", "--seed",
               "11", "--mode", mode, "--threads", "2")
    assert (cli / "runs.csv").read_bytes() == (sim.out / "runs.csv").read_bytes()
