# SPDX-License-Identifier: Apache-2.0
"""Your own data as a simulated population: a DataFrame of labelled, scored examples checked
here, row by row, and handed to dpm-sim's reader as the CSV file it reads
(host-sim/sim/README.md, "Your own data": the format, the fleet and its resampling).
"""
import difflib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

REQUIRED = ("device_id", "score", "label", "group")
OPTIONAL = ("prediction",)
MAX_ROWS_PER_DEVICE = 10000  # SIM_CSV_MAX_EXAMPLES: the simulator's example buffers
MAX_GROUPS = 16  # SIM_MAX_GROUPS
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,31}\Z")


def _where(df, i):
    return f"row {i} (index {df.index[i]!r})"


def _numeric(df, col):
    """The column as float64, or TypeError naming the first value that is not a number."""
    s = df[col]
    if s.dtype == object or pd.api.types.is_string_dtype(s) or pd.api.types.is_categorical_dtype(s):
        for i, v in enumerate(s):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"population: column '{col}', {_where(df, i)}: {v!r} is not a "
                                f"number (give {col} as numbers, not {type(v).__name__})")
    if pd.api.types.is_bool_dtype(s) and col == "score":
        raise TypeError(f"population: column 'score' holds booleans; give the model's scores "
                        "in [0, 1]")
    if pd.api.types.is_complex_dtype(s):
        raise TypeError(f"population: column '{col}' holds complex numbers")
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def _zero_one(df, col):
    v = _numeric(df, col)
    bad = np.flatnonzero(~((v == 0.0) | (v == 1.0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"population: {_where(df, i)}: {col} {df[col].iloc[i]!r} is not 0 or 1")
    return v.astype(np.int8)


def check(df, columns=None):
    """The DataFrame's rows as arrays (device codes, scores, labels, predictions or None, group
    names per row, group order), or TypeError / ValueError naming the column and the row.

    columns maps our names to yours: {"score": "p_hat", "group": "country"}. Other columns of
    yours are ignored, except one that looks like a misspelling of a column we read."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"population: a pandas DataFrame or a CSV path, not {type(df).__name__}")
    columns = dict(columns or {})
    for k in columns:
        if k not in REQUIRED + OPTIONAL:
            raise ValueError(f"population: columns: {k!r} is not one of ours "
                             f"({', '.join(REQUIRED + OPTIONAL)})")
    renamed = {columns.get(c, c): c for c in REQUIRED + OPTIONAL}
    missing = [c for c in REQUIRED if columns.get(c, c) not in df.columns]
    if missing:
        c = missing[0]
        near = difflib.get_close_matches(c, [str(x) for x in df.columns], n=1, cutoff=0.75)
        hint = f" (did you mean {near[0]!r}? pass columns={{{c!r}: {near[0]!r}}})" if near else ""
        raise ValueError(f"population: missing column {columns.get(c, c)!r}{hint}; "
                         f"the DataFrame has: {', '.join(map(str, df.columns))}")
    for extra in df.columns:
        if extra in renamed:
            continue
        near = difflib.get_close_matches(str(extra), OPTIONAL, n=1, cutoff=0.8)
        if near and columns.get(near[0], near[0]) not in df.columns:
            raise ValueError(f"population: column {extra!r} looks like {near[0]!r} misspelled; "
                             f"rename it, or drop it to predict by the score's threshold")
    d = df.rename(columns={v: k for k, v in columns.items()})
    if len(d) == 0:
        raise ValueError("population: the DataFrame has no rows")
    score = _numeric(d, "score")
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"population: {_where(d, i)}: score {d['score'].iloc[i]!r} is not a "
                         f"number in [0, 1] (NaN and infinities are refused)")
    bad = np.flatnonzero((score < 0.0) | (score > 1.0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"population: {_where(d, i)}: score {score[i]!r} is outside [0, 1] "
                         f"(give the model's probability, not a logit or a percentage)")
    label = _zero_one(d, "label")
    prediction = _zero_one(d, "prediction") if "prediction" in d.columns else None
    ids = d["device_id"]
    if ids.isna().any():
        i = int(np.flatnonzero(ids.isna().to_numpy())[0])
        raise ValueError(f"population: {_where(d, i)}: empty device_id")
    groups = d["group"]
    gnames = []
    for i, g in enumerate(groups):
        if isinstance(g, (bool, np.bool_)) or isinstance(g, (float, np.floating)) or g is None:
            raise TypeError(f"population: {_where(d, i)}: group {g!r}: a group is a name or an "
                            "integer code")
        gnames.append(str(g))
    codes, _ = pd.factorize(ids, sort=False)
    group_of = {}
    for i, (c, g) in enumerate(zip(codes, gnames)):
        if not _NAME.match(g):
            raise ValueError(f"population: {_where(d, i)}: group {g!r}: a group name is 1 to 31 "
                             "of A-Z a-z 0-9 _ . -")
        first = group_of.setdefault(c, (g, i))
        if first[0] != g:
            raise ValueError(f"population: {_where(d, i)}: device {ids.iloc[i]!r} is in group "
                             f"{g!r} here but in {first[0]!r} at {_where(d, first[1])}")
    order = list(dict.fromkeys(gnames))
    if len(order) < 2:
        raise ValueError(f"population: the group column has one group ({order[0]!r}); a "
                         "disparity needs at least 2 groups")
    if len(order) > MAX_GROUPS:
        raise ValueError(f"population: {len(order)} groups, at most {MAX_GROUPS}")
    per_device = np.bincount(codes)
    if per_device.max() > MAX_ROWS_PER_DEVICE:
        c = int(np.argmax(per_device))
        raise ValueError(f"population: device {ids.iloc[int(np.flatnonzero(codes == c)[0])]!r} "
                         f"has {per_device[c]} rows, at most {MAX_ROWS_PER_DEVICE}")
    return codes, score, label, prediction, gnames, order


def _decimal(x):
    # the shortest decimal that reads back as the same double: dpm-sim's reader gets the very
    # score this DataFrame holds (it refuses exponents, so positional)
    return np.format_float_positional(x, unique=True, trim="-")


def write_csv(df, path, columns=None):
    """Check the DataFrame and write it as dpm-sim's population file. Returns (devices, groups).

    Device ids are written as d0, d1, ... in order of first appearance: dpm-sim reads a device
    as every row with its id, in that order, so the population is the same one."""
    codes, score, label, prediction, gnames, order = check(df, columns)
    head = "device_id,score,label,group" + (",prediction" if prediction is not None else "")
    lines = [head]
    for i in range(len(codes)):
        row = f"d{codes[i]},{_decimal(score[i])},{label[i]},{gnames[i]}"
        if prediction is not None:
            row += f",{prediction[i]}"
        lines.append(row)
    Path(path).write_text("\n".join(lines) + "\n")
    return int(codes.max()) + 1, order


def read_csv(path):
    """A population file (device_id, score, label, group[, prediction]) as a DataFrame."""
    return pd.read_csv(path, comment="#", dtype={"device_id": str, "group": str})
