# SPDX-License-Identifier: Apache-2.0
"""Bad input gets a Python exception whose message names the cause (and the row), never a
crash: wrong types, NaN or Inf scores, scores outside [0, 1], labels not 0/1, missing columns,
one group, a fleet smaller than the data, bad files; and random DataFrames (fuzz-style)."""
import numpy as np
import pandas as pd
import pytest

import dpmetrics as dm

ROC = {"name": "roc", "mechanism": "roc_hist", "eps": 1, "bins": 10}


def _df(n=40, groups=("a", "b"), seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"device_id": [f"u{i // 2}" for i in range(n)],
                         "score": rng.random(n),
                         "label": rng.integers(0, 2, n),
                         "group": [groups[(i // 2) % len(groups)] for i in range(n)]})


def _set(df, col, row, value):
    df = df.copy()
    if col in df and df[col].dtype != object:
        df[col] = df[col].astype(object)
    df.loc[row, col] = value
    return df


@pytest.mark.parametrize("df,exc,message", [
    (_df().drop(columns="label"), ValueError, "missing column 'label'"),
    (_df().rename(columns={"score": "scores"}), ValueError, "did you mean 'scores'"),
    (_set(_df(), "score", 7, float("nan")), ValueError, "row 7 (index 7): score nan is not a number"),
    (_set(_df(), "score", 3, float("inf")), ValueError, "row 3 (index 3): score inf"),
    (_set(_df(), "score", 5, 1.5), ValueError, "row 5 (index 5): score 1.5 is outside [0, 1]"),
    (_set(_df(), "score", 2, "0.3"), TypeError, "row 2 (index 2): '0.3' is not a number"),
    (_set(_df(), "label", 9, 2), ValueError, "row 9 (index 9): label 2 is not 0 or 1"),
    (_set(_df(), "label", 4, 0.5), ValueError, "label 0.5 is not 0 or 1"),
    (_df(groups=("only",)), ValueError, "the group column has one group ('only')"),
    (_set(_df(), "group", 1, "b"), ValueError, "device 'u0' is in group 'b' here but in 'a'"),
    (_set(_df(), "group", 6, "a b"), ValueError, "group 'a b': a group name is 1 to 31"),
    (_set(_df(), "device_id", 8, None), ValueError, "row 8 (index 8): empty device_id"),
    (_df().iloc[0:0], ValueError, "has no rows"),
    (_df().assign(predicton=0), ValueError, "'predicton' looks like 'prediction' misspelled"),
    (_df().assign(prediction=3), ValueError, "prediction 3 is not 0 or 1"),
    ([1, 2, 3], TypeError, "a pandas DataFrame or a CSV path, not list"),
    (_df().assign(score=True), TypeError, "column 'score' holds booleans"),
])
def test_dataframe_errors(df, exc, message):
    with pytest.raises(exc) as e:
        dm.simulate(df, ROC, runs=2)
    assert message in str(e.value)


def test_named_index_in_message():
    df = _set(_df(), "score", 7, -0.25).set_index(pd.Index([f"ex{i}" for i in range(40)]))
    with pytest.raises(ValueError, match=r"row 7 \(index 'ex7'\): score -0.25 is outside"):
        dm.simulate(df, ROC, runs=2)


def test_fleet_smaller_than_data():
    with pytest.raises(ValueError, match="devices 10 is smaller than the data's 20 devices"):
        dm.simulate(_df(), ROC, devices=10, runs=2)


@pytest.mark.parametrize("kwargs,message", [
    ({"mode": "network"}, "mode 'network': one of inprocess, exact"),
    ({"runs": 0}, "runs 0: 1 .. 10^7"),
    ({"devices": 2.5}, "devices 2.5: a whole number"),
    ({"threads": 99}, "threads 99"),
    ({"threshold": 2}, "threshold 2: a number in [0, 1]"),
])
def test_option_errors(kwargs, message):
    with pytest.raises(ValueError) as e:
        dm.simulate(_df(), ROC, **{"runs": 2, **kwargs})
    assert message in str(e.value)


def test_campaign_errors_come_from_the_parser():
    """What the scenario parser refuses comes back with its own message."""
    with pytest.raises(dm.DpmError, match="bins"):
        dm.simulate(_df(), dict(ROC, bins=1000), runs=2)
    with pytest.raises(dm.DpmError, match=r"^\[campaign c1\] bims = 10: unknown key 'bims'"):
        dm.simulate(_df(), {"mechanism": "roc_hist", "eps": 1, "bims": 10}, runs=2)
    with pytest.raises(ValueError, match="'mechanism' and 'eps' are needed"):
        dm.simulate(_df(), {"mechanism": "roc_hist"}, runs=2)
    with pytest.raises(dm.DpmError, match="group 'zz' has no devices in the DataFrame"):
        dm.simulate(_df(), {"mechanism": "roc_hist_groups", "eps": 1, "groups": ["a", "zz"]},
                    runs=2)


def test_bad_csv_file_names_the_line(tmp_path):
    p = tmp_path / "data.csv"
    p.write_text("device_id,score,label,group\nd1,0.5,1,a\nd2,0.7,2,b\n")
    with pytest.raises(dm.DpmError, match=r"data.csv:3: label '2' is not 0 or 1"):
        dm.simulate(p, ROC, runs=2)
    with pytest.raises(ValueError, match="no such file"):
        dm.simulate(tmp_path / "nope.csv", ROC, runs=2)
    odd = tmp_path / "my data, v2 (final).csv"  # a path the scenario syntax could not hold
    odd.write_text("device_id,score,label,group\nd1,0.5,1,a\nd2,0.7,0,b\nd3,0.2,0,a\n"
                   "d4,0.9,1,b\n")
    assert len(dm.simulate(odd, ROC, runs=2).summary) > 0


def _random_frame(rng):
    n = int(rng.integers(0, 30)) if rng.random() < 0.2 else int(rng.integers(6, 30))
    cols = {}
    pick = lambda: rng.choice(["int", "float", "str", "nan", "bool", "obj", "big"])
    for name in ["device_id", "score", "label", "group", "prediction", "extra"]:
        if rng.random() < 0.04:
            continue
        kind = pick() if rng.random() < 0.12 else {"device_id": "dev", "score": "float",
                                                   "label": "bit", "group": "grp",
                                                   "prediction": "bit", "extra": "float"}[name]
        vals = {"int": lambda: rng.integers(-3, 5, n),
                "float": lambda: rng.random(n) * rng.choice([1, 1, 2, -1]),
                "str": lambda: np.array([str(x) for x in rng.integers(0, 3, n)], dtype=object),
                "nan": lambda: np.where(rng.random(n) < 0.2, np.nan, rng.random(n)),
                "bool": lambda: rng.random(n) < 0.5,
                "obj": lambda: np.array([None, 1, "x", 2.5, (1,)] * n, dtype=object)[:n],
                "big": lambda: np.full(n, 1e300),
                "bit": lambda: rng.integers(0, 2, n),
                "dev": lambda: np.arange(n) // 2,
                "grp": lambda: np.array(["a", "b", "c"])[(np.arange(n) // 2) % 3]}[kind]()
        cols[name] = vals
    return pd.DataFrame(cols)


def test_random_frames_never_crash():
    """Random DataFrames (missing columns, mixed types, NaN, huge values, empty): each is
    simulated or refused with TypeError, ValueError or DpmError; the interpreter survives."""
    rng = np.random.default_rng(20261206)
    outcomes = {"ran": 0, "refused": 0}
    for _ in range(300):
        df = _random_frame(rng)
        try:
            dm.simulate(df, ROC, runs=1, threads=1)
            outcomes["ran"] += 1
        except (TypeError, ValueError, dm.DpmError) as e:
            assert str(e), "an exception without a message"
            outcomes["refused"] += 1
    assert outcomes["ran"] > 10 and outcomes["refused"] > 100, outcomes
