# SPDX-License-Identifier: Apache-2.0
"""Reading real campaigns: a real dpm-collector over TLS (the e2e harness: SQLite, operator
token), filled by dpm-sim's network mode, read with dpmetrics.collector() and from saved JSON;
the DataFrames hold the collector's own numbers, its errors come back with their reasons, and
the plots draw those numbers."""
import json

import numpy as np
import pytest

import dpmetrics as dm

def _client(h, **kw):
    return dm.collector(f"https://127.0.0.1:{h.port}", **{"token": h.creds.files["harness"],
                                                          "ca": h.ca, **kw})


def test_campaigns(running):
    h, _ = running
    c = _client(h).campaigns()
    assert list(c["id"]) == [1, 3, 9]
    assert list(c["mechanism"]) == ["tuple_mr", "roc_hist", "roc_hist"]
    assert c["trust_model"].str.startswith("local DP").all()


def test_tuple_estimate_is_the_collectors(running):
    h, out = running
    e = _client(h).estimate(1)
    saved = json.loads((out / "collector-estimate-1.json").read_text())
    groups = saved["metrics"][0]["groups"]
    g = e.groups
    assert list(g["group_name"]) == ["young", "old", "other"]
    assert list(g["mean"]) == [x["mean"] for x in groups]
    assert list(g["ci_lo"]) == [x["ci"][0] for x in groups]
    assert list(g["n"]) == [x["n"] for x in groups] and g["n"].sum() == e.reports
    d = e.disparities
    assert len(d) == 3 and (d["ci_simultaneous_lo"] <= d["ci_lo"]).all()
    assert e.eps == 2 and e.privacy_unit and e.trust_model.startswith("local DP")
    # saved JSON reads the same
    again = dm.read_estimate(out / "collector-estimate-1.json")
    assert again.groups.equals(g)


def test_auc_by_group_and_roc(running):
    h, out = running
    e = _client(h).estimate(9)
    saved = json.loads((out / "collector-estimate-9.json").read_text())["roc_groups"]
    a = e.auc
    by_group = a[a["group"].notna()]
    assert list(by_group["auc"]) == [x["auc"] for x in saved["by_group"]]
    assert list(by_group["group_name"]) == ["young", "old", "other"]
    assert a["group"].isna().sum() == 1  # the pooled AUC, every group's reports
    gaps = e.gaps
    assert list(gaps["gap"]) == [x["gap"] for x in saved["gaps"]]
    assert list(zip(gaps["g_name"], gaps["h_name"])) == [("young", "old"), ("young", "other"),
                                                         ("old", "other")]
    roc = e.roc
    assert set(roc["group"].dropna()) == {0, 1, 2}
    pooled = e.json["roc"]
    assert list(roc[roc["group"].isna()]["tpr"]) == pooled["tpr"]
    single = _client(h).estimate(3)
    assert single.auc["auc"].iloc[0] == single.json["roc"]["auc"]
    assert single.auc["ci_lo"].iloc[0] == single.json["roc"]["auc_ci"][0]


def test_store_reads_as_the_endpoint(running):
    """The store, read-only while the collector serves it: the endpoint's numbers."""
    h, _ = running
    c = _client(h)
    every = dm.read_store(h.db, h.campaigns)
    assert [e.campaign for e in every] == [1, 3, 9]
    one = dm.read_store(h.db, h.campaigns, campaign=1, period=0, confidence=0.9)
    http = c.estimate(1, period=0, confidence=0.9)
    assert one.groups.equals(http.groups) and one.disparities.equals(http.disparities)
    assert every[2].gaps.equals(c.estimate(9).gaps)
    with pytest.raises(dm.DpmError, match="read_store: campaign 5 is not in"):
        dm.read_store(h.db, h.campaigns, campaign=5)
    with pytest.raises(dm.DpmError, match="read_store: no database file at .*give the --db"):
        dm.read_store(str(h.db) + ".gone", h.campaigns)


def test_pr_and_calibration(running):
    """roc_hist's precision-recall curve, reliability diagram, AP and ECE: the collector's."""
    h, _ = running
    e = _client(h).estimate(3)
    pr, cal, summary = e.pr, e.calibration, e.summary
    assert len(pr) == 8 and list(pr["precision"]) == e.json["pr"]["precision"]
    assert pr["recall"].iloc[0] == 1 and pr["recall"].is_monotonic_decreasing
    assert (pr["lo"] <= pr["precision"]).all() and (pr["precision"] <= pr["hi"]).all()
    assert len(cal) == 8 and list(cal["midpoint"]) == [(b + 0.5) / 8 for b in range(8)]
    assert list(summary["metric"]) == ["ap", "ece"]
    ap = summary.iloc[0]
    assert ap["estimate"] == e.json["pr"]["ap"] and ap["ci_lo"] < ap["estimate"] < ap["ci_hi"]
    assert ap["ci_total_lo"] <= ap["ci_lo"] and ap["ci_coverage"] in ("nominal", "at_least")
    from dpmetrics import plot
    assert plot.pr(e).axes[0].get_xlabel() == "recall"
    assert plot.reliability(e).axes[0].get_title().startswith("reliability, campaign 3 (ECE")
    with pytest.raises(ValueError, match="has no precision-recall curve"):
        plot.pr(_client(h).estimate(1))


def test_metric_frame(running):
    """roc_hist with groups: Fairlearn's by_group, difference and ratio, the collector's."""
    h, _ = running
    e = _client(h).estimate(9)
    bg = e.by_group
    assert list(bg["group_name"]) == ["young", "old", "other"]
    mf = e.json["roc_groups"]["metric_frame"]
    assert list(bg["ap"]) == [x["ap"] for x in mf["by_group"]]
    assert (bg["ap_ci_lo"] <= bg["ap"]).all() and (bg["ap"] <= bg["ap_ci_hi"]).all()
    # the model's: noise and the sampling of the group's examples, so no narrower than the ci
    assert (bg["ap_var_sampling"] > 0).all()
    assert (bg["ap_ci_total_lo"] <= bg["ap_ci_lo"]).all()
    assert (bg["ap_ci_total_hi"] >= bg["ap_ci_hi"]).all()
    d = e.difference
    assert list(d["metric"]) == ["auc", "ap", "ece"]
    ap = d[d["metric"] == "ap"].iloc[0]
    assert ap["difference"] == pytest.approx(bg["ap"].max() - bg["ap"].min(), abs=1e-8)
    assert ap["ci_lo"] <= ap["difference"] <= ap["ci_hi"] and ap["ci_coverage"] == "at_least"
    assert ap["ci_total_coverage"] == "at_least" and ap["ci_total_lo"] <= ap["difference"]
    assert ap["ci_total_hi"] - ap["ci_total_lo"] >= ap["ci_hi"] - ap["ci_lo"]
    auc = d[d["metric"] == "auc"].iloc[0]
    assert np.isnan(auc["ci_total_lo"]) and "gap_unbinned_ci_total" in auc["reason_total"]
    r = e.ratio
    assert r.iloc[0]["ratio"] == pytest.approx(bg["ap"].min() / bg["ap"].max(), rel=1e-8)
    assert set(r.iloc[0]["groups"]) <= {"young", "old", "other"}
    assert _client(h).estimate(3).by_group.empty  # no groups: nothing to compare


def test_periods(running):
    h, _ = running
    ps = _client(h).periods(1)
    assert len(ps) == 1 and ps[0].groups["mean"].equals(_client(h).estimate(1, period=0)
                                                        .groups["mean"])


def test_errors_say_what_to_do(running, tmp_path):
    h, _ = running
    with pytest.raises(dm.DpmError, match="401 .*give an operator's token"):
        _client(h, token=None).estimate(1)
    with pytest.raises(dm.DpmError, match="404 .*unknown campaign"):
        _client(h).estimate(77)
    with pytest.raises(dm.DpmError, match="400 .*confidence must be a decimal"):
        _client(h).estimate(1, confidence=2)
    with pytest.raises(dm.DpmError, match="ca= must be the certificate authority"):
        _client(h, ca=None).estimate(1)
    with pytest.raises(dm.DpmError, match="is the collector running"):
        dm.collector("https://127.0.0.1:1", ca=h.ca).estimate(1)
    with pytest.raises(ValueError, match="give https://HOST:PORT"):
        dm.collector("127.0.0.1:8443")
    bad = tmp_path / "bad.json"
    bad.write_text('{"campaign": 1,')
    with pytest.raises(ValueError, match="not JSON"):
        dm.read_estimate(bad)
    with pytest.raises(ValueError, match="an estimate is the JSON object"):
        dm.read_estimate({"hello": 1})
    with pytest.raises(ValueError, match="No such file"):
        dm.read_estimate(tmp_path / "missing.json")


def test_plots_draw_the_estimates(running):
    from dpmetrics import plot
    h, _ = running
    c = _client(h)
    e = c.estimate(9)
    fig = plot.roc(e)
    ax = fig.axes[0]
    pooled = e.roc[e.roc["group"].isna()]
    assert np.array_equal(ax.lines[0].get_ydata(), pooled["tpr"].to_numpy())
    assert len(ax.lines) == 1 + 3 + 1  # pooled, each group, the diagonal
    fig = plot.auc_by_group(e)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["young", "old", "other"]
    fig = plot.disparities(e)
    xs = fig.axes[0].lines[0].get_xdata()
    assert np.array_equal(xs, e.gaps["gap"].to_numpy())
    fig = plot.disparities(c.estimate(1))
    assert np.array_equal(fig.axes[0].lines[0].get_xdata(),
                          c.estimate(1).disparities["diff"].to_numpy())
    fig = plot.over_time(c.periods(9), "old")
    assert fig.axes[0].lines[0].get_ydata()[0] == e.auc[e.auc["group_name"] == "old"]["auc"].iloc[0]
    with pytest.raises(ValueError, match="has no ROC curve"):
        plot.roc(c.estimate(1))
