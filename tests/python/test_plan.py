# SPDX-License-Identifier: Apache-2.0
"""plan() is `dpm-sim plan` in this process: the same answer as the command's --json, its
refusals as ValueError with the planner's own message."""
import json
import subprocess

import pytest

import dpmetrics as dm


def _cli(dpm_sim, tmp_path, *args):
    out = tmp_path / "plan.json"
    subprocess.run([str(dpm_sim), "plan", *args, "--json", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def test_tuple_equals_dpm_sim(dpm_sim, tmp_path):
    cli = _cli(dpm_sim, tmp_path, "--mechanism", "tuple_mr", "--error", "0.02", "--confidence",
               "0.9", "--eps", "1", "--bound", "normal", "--metrics", "tpr,fpr")
    got = dm.plan("tuple_mr", error=0.02, confidence=0.9, eps=1, bound="normal",
                  metrics=["tpr", "fpr"])
    assert "K = " in got.pop("log")
    for part in ("question", "answer", "trust_model"):
        assert got[part] == cli[part]
    assert got["check"]["verified"] and got["answer"]["devices"] == cli["answer"]["devices"]


def test_groups_both_trust_models(dpm_sim, tmp_path):
    """The README's figures: local DP K = 3,936,715, two aggregators K = 14,664."""
    args = dict(error=0.05, confidence=0.9, eps=1, shares=[0.6, 0.3, 0.1],
                auc=[0.8, 0.78, 0.75], base_rate=0.1, examples=30, bins=12, check=False)
    both = dm.plan("roc_hist_groups", trust="both", **args)
    assert both["local"]["answer"]["devices"] == 3936715
    assert both["two_aggregators"]["answer"]["devices"] == 14664
    cli = _cli(dpm_sim, tmp_path, "--mechanism", "roc_hist_groups", "--error", "0.05",
               "--confidence", "0.9", "--eps", "1", "--shares", "0.6,0.3,0.1", "--auc",
               "0.8,0.78,0.75", "--base-rate", "0.1", "--examples", "30", "--bins", "12",
               "--no-check", "--trust", "two_aggregators")
    assert both["two_aggregators"]["answer"] == cli["answer"]


def test_groups_gaussian(own_df):
    """noise="gaussian" with delta= is the two aggregators' (trust="both" plans local DP as
    before), and the check on your data simulates the Gaussian campaign it planned."""
    args = dict(error=0.05, confidence=0.9, eps=1, shares=[0.6, 0.3, 0.1],
                auc=[0.8, 0.78, 0.75], base_rate=0.1, examples=30, bins=12, check=False)
    both = dm.plan("roc_hist_groups", trust="both", noise="gaussian", delta=1e-9, **args)
    assert both["local"]["answer"]["devices"] == 3936715  # as without noise=
    assert both["two_aggregators"]["question"]["noise"] == "gaussian"
    assert both["two_aggregators"]["answer"]["devices"] == 47422  # host-sim/sim/README.md
    r = dm.plan("roc_hist_groups", error=0.05, confidence=0.9, eps=1, population=own_df,
                trust="two_aggregators", noise="gaussian", delta=1e-9, check=False, bins=12,
                data_runs=100)
    camp = r["data_check"]["campaign"]
    assert camp["mechanism"] == "roc_hist_2agg" and camp["noise"] == "gaussian"
    assert camp["delta"] == 1e-9
    assert r["data_check"]["verified"]


@pytest.mark.parametrize("kwargs,message", [
    ({"mechanism": "roc_hist_groups", "shares": [0.6, 0.3, 0.2]}, "--shares must sum to 1"),
    ({"mechanism": "tuple_mr", "bound": "gauss"}, "bound"),
    ({"mechanism": "tuple_mr", "confidence": 1.5}, "confidence"),
    ({"mechanism": "tuple_mr", "colour": "red"}, "--colour"),
    ({"mechanism": "dpauc"}, "mechanism 'dpauc': one of tuple_mr"),
    ({"mechanism": "tuple_mr", "error": float("nan")}, "not a finite number"),
])
def test_refusals(kwargs, message):
    args = {"error": 0.05, "confidence": 0.9, "eps": 1, "check": False, **kwargs}
    with pytest.raises(ValueError) as e:
        dm.plan(args.pop("mechanism"), **args)
    assert message in str(e.value)
    assert "usage:" not in str(e.value)


def test_plan_from_your_data(own_df):
    """population= takes the data's shares, AUCs, base rates and examples, and checks the
    answer on the data itself, stepping K up until every item is verified there."""
    r = dm.plan("roc_hist_groups", error=0.05, confidence=0.9, eps=1, population=own_df,
                trust="two_aggregators", check=False, bins=12, data_runs=200)
    taken = r["from_data"]
    devices = own_df.groupby("group", sort=False)["device_id"].nunique()
    assert taken["groups"] == list(devices.index)
    assert taken["shares"] == pytest.approx(list(devices / devices.sum()), abs=2e-6)
    north = own_df[own_df["group"] == "north"]
    pos = north.loc[north["label"] == 1, "score"].to_numpy()
    neg = north.loc[north["label"] == 0, "score"].to_numpy()
    auc = ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()) / (pos.size * neg.size)
    assert taken["auc"][taken["groups"].index("north")] == pytest.approx(auc, abs=1e-6)
    assert taken["examples"] == own_df.groupby("device_id").size().max()
    check = r["data_check"]
    ks = [s["devices"] for s in check["steps"]]
    assert ks[0] == r["answer"]["devices"] and ks == sorted(ks)
    assert check["verified"] and check["devices"] == ks[-1]
    last = check["steps"][-1]["items"]
    assert len(last) == 6 and all(i["coverage_ci"][0] >= 0.9 for i in last)
    # this data has fewer examples per device than the binormal model's: the model's K is not
    # enough here, which is why the answer is checked on the data
    assert len(ks) >= 2 and not check["steps"][0]["verified"]
    assert ks == [2618, 8212]  # the figures host-sim/python/README.md quotes


def test_plan_from_data_refusals(own_df):
    with pytest.raises(ValueError, match="population= plans roc_hist and roc_hist_groups"):
        dm.plan("tuple_mr", error=0.05, confidence=0.9, eps=1, population=own_df)
    one = own_df.copy()
    one.loc[one["group"] == "east", "label"] = 1
    with pytest.raises(ValueError, match="group 'east' has no negative example"):
        dm.plan("roc_hist_groups", error=0.05, confidence=0.9, eps=1, population=one,
                check=False)


def test_plan_which_eps_from_data_checks_that_k(own_df):
    """Given devices=, the data check runs at that K once (a fixed fleet is not stepped up)."""
    r = dm.plan("roc_hist_groups", error=0.05, confidence=0.9, devices=20000, population=own_df,
                trust="two_aggregators", check=False, bins=12, data_runs=100)
    steps = r["data_check"]["steps"]
    assert len(steps) == 1 and steps[0]["devices"] == 20000
    assert r["data_check"]["eps"] == r["answer"]["eps_campaign"] > 0
    assert r["data_check"]["devices"] == (20000 if steps[0]["verified"] else None)
