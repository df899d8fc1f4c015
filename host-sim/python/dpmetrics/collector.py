# SPDX-License-Identifier: Apache-2.0
"""Reading real campaigns: a running dpm-collector's estimates over HTTPS, its store (SQLite file
or PostgreSQL database, read-only, through `dpm-collector estimate`), or saved estimate JSON,
as DataFrames with their intervals, n and flags (the JSON's members: host-sim/collector/README.md,
"Estimates"). Nothing is recomputed here: every number is the collector's own."""
import json
import os
import shutil
import ssl
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pandas as pd

from ._native import DpmError, TREE_BUILD


def _flat(rows, names=None):
    """A list of JSON objects as a DataFrame: scalars as they are, each [lo, hi] interval as
    X_lo and X_hi, flag lists joined with ',', per-bin lists left out (see Estimate.roc)."""
    out = []
    for r in rows:
        row = {}
        for k, v in r.items():
            if isinstance(v, list):
                if k.endswith("_flags"):
                    row[k] = ",".join(v)
                elif len(v) == 2 and k not in ("candidates",) and all(
                        x is None or isinstance(x, (int, float)) for x in v):
                    row[k + "_lo"], row[k + "_hi"] = v
            elif not isinstance(v, dict):
                row[k] = v
        out.append(row)
    df = pd.DataFrame(out)
    if names is not None:
        for col in ("group", "g", "h"):
            if col in df:
                df.insert(df.columns.get_loc(col) + 1, col + "_name",
                          [names[int(x)] if x is not None and 0 <= int(x) < len(names) else None
                           for x in df[col]])
    return df


def _curve(obj, index, cols):
    """Per-point lists of an estimate's object as a DataFrame (index: the point's name)."""
    if not obj or not all(c in obj for c in cols):
        return pd.DataFrame()
    df = pd.DataFrame({c: obj[c] for c in cols})
    df.insert(0, index, range(len(df)))
    return df


class Estimate:
    """One estimate JSON (GET /v1/campaigns/{id}/estimate), read:

    - `json`: the whole object; `campaign`, `mechanism`, `eps`, `eps_implemented`,
      `privacy_unit`, `trust_model`, `reports`, `confidence` from it;
    - `groups`, `disparities` (tuple_mr, tuple_ml; roc_hist's group counts too): one row per
      metric and group / pair, with mean or diff, ci_lo, ci_hi, ci_coverage, ci_flags, n,
      too_small and reason (`ci_simultaneous_lo`/`_hi` per pair: read those when comparing
      several pairs or the largest);
    - `auc` (roc_hist; per group with roc_hist groups): AUC, its intervals and claims;
    - `gaps` (roc_hist with groups): every pairwise AUC gap with its intervals;
    - `roc`: the ROC curve point by point with its pointwise and simultaneous bands (the pooled
      one, and per group with groups);
    - `pr`, `calibration` (roc_hist): the precision-recall curve per threshold and the
      reliability diagram per bin, each point with its interval and claim; `summary`: AP and
      ECE with their intervals (noise: the devices' examples; total: the model's);
    - `by_group`, `difference`, `ratio` (roc_hist with groups): Fairlearn's MetricFrame,
      privately: each group's AP and ECE with intervals, and per metric the largest minus the
      smallest group (AUC too) and the smallest over the largest, with intervals that account
      for picking those groups."""

    def __init__(self, obj):
        if not isinstance(obj, dict) or "mechanism" not in obj or "campaign" not in obj:
            raise ValueError("an estimate is the JSON object of GET /v1/campaigns/{id}/estimate "
                             "(members campaign, mechanism, ...)")
        self.json = obj
        for k in ("campaign", "mechanism", "eps", "eps_implemented", "privacy_unit", "trust_model",
                  "reports", "confidence", "period_from", "period_to"):
            setattr(self, k, obj.get(k))
        self.names = obj.get("group_names")

    def __repr__(self):
        return (f"Estimate(campaign {self.campaign}, {self.mechanism}, eps {self.eps}, "
                f"{self.reports} reports)")

    def _per_metric(self, member):
        frames = [_flat(m[member], self.names).assign(metric=m["metric"])
                  for m in self.json.get("metrics") or []]
        return _first(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
                      "metric")

    @property
    def groups(self):
        return self._per_metric("groups")

    @property
    def disparities(self):
        return self._per_metric("disparities")

    @property
    def auc(self):
        rows = []
        roc = self.json.get("roc")
        if roc and roc.get("valid"):
            # the pooled AUC's members named as the groups' are: auc_ci -> ci, ...
            pooled = {(k[4:] if k.startswith("auc_ci") else k): v for k, v in roc.items()}
            rows.append(_flat([pooled]).assign(group=None).iloc[0].to_dict())
        rg = self.json.get("roc_groups")
        if rg:
            rows += _flat(rg["by_group"]).to_dict("records")
        df = pd.DataFrame(rows)
        if not df.empty:
            df["group"] = df["group"].astype("Int64")  # <NA>: the pooled AUC, every group
        if not df.empty and self.names is not None:
            df.insert(1, "group_name", [None if g is None or pd.isna(g) else self.names[int(g)]
                                        for g in df["group"]])
        return _first(df, "group")

    @property
    def gaps(self):
        rg = self.json.get("roc_groups")
        return _flat(rg["gaps"], self.names) if rg else pd.DataFrame()

    @property
    def roc(self):
        curves = []
        roc = self.json.get("roc")
        if roc and roc.get("valid") and roc.get("fpr"):
            keys = [k for k in ("fpr", "tpr", "tpr_lo", "tpr_hi", "tpr_lo_simultaneous",
                                "tpr_hi_simultaneous") if k in roc]
            curves.append(pd.DataFrame({k: roc[k] for k in keys}).assign(group=None))
        rg = self.json.get("roc_groups")
        for g in (rg or {}).get("by_group", []):
            if g.get("defined") and g.get("fpr"):
                keys = [k for k in ("fpr", "tpr", "fpr_sd", "tpr_sd") if k in g]
                curves.append(pd.DataFrame({k: g[k] for k in keys}).assign(group=g["group"]))
        return _first(pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(),
                      "group")


    @property
    def pr(self):
        """The precision-recall curve: per threshold (predict positive from that bin up) recall,
        precision and its pointwise interval with its claim ('nominal', 'at_least', 'none')."""
        df = _curve(self.json.get("pr"), "threshold",
                    ["recall", "precision", "precision_lo", "precision_hi", "precision_coverage"])
        return df.rename(columns={"precision_lo": "lo", "precision_hi": "hi",
                                  "precision_coverage": "coverage"})

    @property
    def calibration(self):
        """The reliability diagram: per bin its score midpoint, the observed positive rate and
        its interval with its claim."""
        df = _curve(self.json.get("calibration"), "bin",
                    ["midpoint", "rate", "rate_lo", "rate_hi", "rate_coverage"])
        return df.rename(columns={"rate_lo": "lo", "rate_hi": "hi", "rate_coverage": "coverage"})

    @property
    def summary(self):
        """AP and ECE, a row each: the estimate, ci (around the devices' examples' value) and
        ci_total (around the model's), each with its coverage claim, flags and reason."""
        rows = []
        for name, key in (("ap", "pr"), ("ece", "calibration")):
            obj = self.json.get(key) or {}
            if name in obj:
                row = {"metric": name, "estimate": obj[name]}
                for k in ("ci", "ci_total"):
                    lo, hi = obj[f"{name}_{k}"]
                    row.update({f"{k}_lo": lo, f"{k}_hi": hi,
                                f"{k}_coverage": obj[f"{name}_{k}_coverage"],
                                f"{k}_flags": ",".join(obj[f"{name}_{k}_flags"]),
                                f"{k}_reason": obj[f"{name}_{k}_reason"]})
                rows.append(row)
        return pd.DataFrame(rows)

    def _frame(self):
        rg = self.json.get("roc_groups") or {}
        return rg.get("metric_frame")

    @property
    def by_group(self):
        """Each group's AP and ECE with their intervals, claims and reasons."""
        mf = self._frame()
        return _flat(mf["by_group"], self.names) if mf else pd.DataFrame()

    def _compare(self, what):
        mf, rows = self._frame(), []
        for metric in (mf or {}).get("metrics", []):
            c = mf["compare"][metric]
            g = c.get(f"{what}_groups")
            lo, hi = c[f"{what}_ci"]
            row = {"metric": metric, what: c[what], "ci_lo": lo, "ci_hi": hi,
                   "ci_coverage": c[f"{what}_ci_coverage"]}
            t = mf.get("compare_total", {}).get(metric)
            if t:
                row.update({"ci_total_lo": t[f"{what}_ci"][0], "ci_total_hi": t[f"{what}_ci"][1],
                            "ci_total_coverage": t[f"{what}_ci_coverage"],
                            "method_total": t["method"], "reason_total": t.get("reason")})
            row.update({"groups": [self.names[i] if self.names else i for i in g] if g else None,
                        "method": c["method"], "reason": c.get("reason")})
            rows.append(row)
        return rows

    @property
    def difference(self):
        """Per metric the largest group's minus the smallest group's (Fairlearn's difference()),
        with an interval that holds whichever groups they are (at least the level): ci around
        the devices' examples, ci_total around the model (noise and sampling). The AUC's is the
        largest AUC gap's (ci only: its ci_total is not estimated, see the reason)."""
        rows = self._compare("difference")
        big = (self.json.get("roc_groups") or {}).get("largest_gap")
        if big:
            rows.insert(0, {"metric": "auc", "difference": big["abs_diff"], "ci_lo": big["ci"][0],
                            "ci_hi": big["ci"][1], "ci_coverage": big["ci_coverage"],
                            "ci_total_lo": None, "ci_total_hi": None, "ci_total_coverage": None,
                            "method_total": None,
                            "reason_total": "the binned AUC gap has no sampling term: read "
                                            "gaps' gap_unbinned_ci_total per pair",
                            "groups": [self.names[i] if self.names else i
                                       for i in (big["g"], big["h"])],
                            "method": "max_t", "reason": big.get("reason")})
        return pd.DataFrame(rows)

    @property
    def ratio(self):
        """Per metric the smallest group's over the largest's (Fairlearn's ratio()), with ci
        and ci_total as difference's."""
        return pd.DataFrame(self._compare("ratio"))


def _first(df, col):
    if col in df.columns:
        df = df[[col] + [c for c in df.columns if c != col]]
    return df


def read_estimate(src):
    """An Estimate from a saved JSON file's path, JSON text or the decoded dict."""
    if isinstance(src, dict):
        return Estimate(src)
    if isinstance(src, Path) or (isinstance(src, str) and not src.lstrip().startswith("{")):
        try:
            text = Path(src).read_text()
        except OSError as e:
            raise ValueError(f"read_estimate: {src}: {e.strerror}") from None
    else:
        text = src
    try:
        return Estimate(json.loads(text))
    except json.JSONDecodeError as e:
        raise ValueError(f"read_estimate: not JSON ({e.msg} at line {e.lineno} column "
                         f"{e.colno})") from None


def _collector_program():
    """dpm-collector: $DPMETRICS_COLLECTOR, else the one on PATH, else the source tree's."""
    env = os.environ.get("DPMETRICS_COLLECTOR")
    tried = [env] if env else [shutil.which("dpm-collector"), str(TREE_BUILD / "dpm-collector")]
    found = next((p for p in tried if p and os.access(p, os.X_OK)), None)
    if found is None:
        raise DpmError("read_store: dpm-collector not found (looked at: "
                       + ", ".join(p for p in tried if p) + "): put it on PATH, set "
                       "DPMETRICS_COLLECTOR to its path, or run `make` in the repository")
    return found


def read_store(db, campaigns, campaign=None, period=None, from_=None, to=None, confidence=None,
               now=None):
    """The estimates a collector's store holds, read-only (`dpm-collector estimate`): db is its
    --db (a SQLite file, or postgresql://...), campaigns the campaigns file it served. Collectors
    may serve the store meanwhile; nothing is written to it. One Estimate for campaign=ID, else a
    list with every campaign's; the numbers are the collector endpoint's, byte for byte."""
    args = [_collector_program(), "estimate", "--db", str(db), "--campaigns", str(campaigns)]
    for opt, v in (("--campaign", campaign), ("--period", period), ("--from", from_),
                   ("--to", to), ("--confidence", confidence), ("--now", now)):
        if v is not None:
            args += [opt, str(v)]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        why = p.stderr.strip().splitlines()[0] if p.stderr.strip() else f"status {p.returncode}"
        raise DpmError(why.replace("dpm-collector estimate: ", "read_store: ", 1))
    got = json.loads(p.stdout)
    return Estimate(got) if campaign is not None else [Estimate(e) for e in got]


class Collector:
    """A running dpm-collector: url ("https://host:port"), token (an operator's bearer token,
    or the path of a file whose first line is one), ca (the PEM file that signed its
    certificate; default: the system's)."""

    def __init__(self, url, token=None, ca=None, timeout=30):
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("https", "http") or not parsed.netloc:
            raise ValueError(f"collector: {url!r}: give https://HOST:PORT")
        self.url = url.rstrip("/")
        if token is not None and Path(str(token)).is_file():
            token = Path(token).read_text().splitlines()[0].strip()
        self.token = token
        self.timeout = timeout
        self.ctx = ssl.create_default_context(cafile=str(ca) if ca is not None else None)

    def get(self, path, **query):
        """GET a path of the JSON API; DpmError with the status and the collector's reason."""
        q = {k.rstrip("_"): v for k, v in query.items() if v is not None}
        url = self.url + path + ("?" + urllib.parse.urlencode(q) if q else "")
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.ctx) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            body = e.read().decode(errors="replace").strip()
            try:
                body = json.loads(body).get("error", body)
            except (ValueError, AttributeError):
                pass
            hint = {401: " (give an operator's token)", 403: " (this token is not an "
                    "operator's)"}.get(e.code, "")
            raise DpmError(f"collector: GET {path}: {e.code} {e.reason}: {body}{hint}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            hint = ("ca= must be the certificate authority that signed the collector's "
                    "certificate" if isinstance(reason, ssl.SSLError) else
                    "is the collector running at this address?")
            raise DpmError(f"collector: {self.url}: {reason} ({hint})") from None

    def campaigns(self):
        """Every campaign (all pages) as a DataFrame."""
        rows, page = [], 0
        while True:
            got = self.get("/v1/campaigns", page=page)
            rows += got["campaigns"]
            page += 1
            if page >= got.get("pages", 1):
                return _flat(rows)

    def estimate(self, campaign, period=None, from_=None, to=None, confidence=None):
        return Estimate(self.get(f"/v1/campaigns/{int(campaign)}/estimate", period=period,
                                 from_=from_, to=to, confidence=confidence))

    def periods(self, campaign, from_=None, to=None, confidence=None):
        """The estimate of each period (at most 31 a request), oldest first, as Estimates."""
        got = self.get(f"/v1/campaigns/{int(campaign)}/periods", from_=from_, to=to,
                       confidence=confidence)
        return [Estimate(p) for p in got["periods"]]


def collector(url, token=None, ca=None, timeout=30):
    return Collector(url, token=token, ca=ca, timeout=timeout)
