#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The web console (issue 35), in a real browser, printing TAP.

A collector is filled by `dpm-sim --mode network` (3 periods of a tuple_mr, a per-group roc_hist
and a roc_hist campaign, named by the scenario). Over HTTPS: every console path and its JSON
answer 401 without the operator credential (offering Basic), 403 to a device credential, and 200
with the operator token as a Basic password; the served files are the tree's (no data in them);
the Content-Security-Policy has no inline script and no other origin; bad input gets 404/400
with a reason; pages are at most their stated size. Then Debian's headless chromium signs in
once, loads each page and checks its DOM against the estimate JSON (the AUCs and means shown
equal the JSON's to the digits shown, every interval the JSON has is drawn, too-small and
undefined estimates carry their reason), that no report id appears in any page, that a
restarting collector is announced and the page recovers, takes a screenshot of each page
(DPM_CONSOLE_SHOTS=DIR: into DIR as JPEG, for the README: `make console-screenshots`; else
PNG in $OUT/console-screenshots) and
fails on any console error. A missing chromium is a failure, never a skip."""
import base64
import http.client
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

from browser import Browser, CdpError, find_chromium
from e2e_util import OUT, ROOT, SIM, Tap
from test_collector import Harness

HERE = os.path.dirname(os.path.abspath(__file__))
CONSOLE_DIR = os.path.join(ROOT, "host-sim", "console")
PERIOD = 86400

SCENARIO = """\
[scenario]
name = console
devices = 2400
runs = 1
seed = 11
[population]
examples = 12
[group young]
share = 0.5
scores = binormal(auc=0.88, base_rate=0.35)
[group middle]
share = 0.3
scores = binormal(auc=0.80, base_rate=0.35)
[group older]
share = 0.2
scores = binormal(auc=0.72, base_rate=0.3)
[campaign tpr_by_age]
id = 1
mechanism = tuple_mr
eps = 2
metrics = tpr
[campaign auc_by_age]
id = 2
mechanism = roc_hist_groups
eps = 4
group_eps = 2
bins = 6
[campaign auc]
id = 3
mechanism = roc_hist
eps = 2
bins = 10
"""


def fmt(x, d=4):
    """What the console shows for x (JavaScript's toFixed: round half away from zero on the
    binary value, as Python's format on the same double for these magnitudes)."""
    return f"{x:.{d}f}" if isinstance(x, (int, float)) else None


def get(h, path, headers=None, method="GET"):
    c = h.conn()
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.headers, body


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def campaigns_file(h, text):
    """dpm-sim's campaigns with a start three periods ago and a long late window, so that the
    simulation's runs 0, 1, 2 land in periods 0, 1, 2 and period 3 is the current one."""
    start = int(time.time()) - 3 * PERIOD - 600
    return text.replace("[campaign]", f"[campaign]\nstart = {start}\nlate_seconds = {10 * PERIOD}")


def http_checks(t, h, op, dev):
    """Authentication, headers, files, bad input, pagination: no browser needed."""
    paths = ["/console/", "/console/campaign/1", "/console/ingestion", "/console/assets/console.js",
             "/v1/campaigns", "/v1/campaigns/1/info", "/v1/campaigns/1/periods", "/v1/ingestion",
             "/v1/campaigns/1/estimate"]
    st = [get(h, p) for p in paths]
    t.ok(all(s == 401 for s, _, _ in st) and all(
        "Basic realm" in " ".join(hd.get_all("WWW-Authenticate") or []) for _, hd, _ in st),
        "unauthenticated: every console page, file and JSON endpoint answers 401 offering Basic "
        "(the browser's sign-in)", [(p, s) for p, (s, _, _) in zip(paths, st)])
    st = [get(h, p, basic("x", dev))[0] for p in paths]
    t.ok(all(s == 403 for s in st), "a device credential may not read the console (403)", st)
    st = [get(h, p, basic("operator", op + "x"))[0] for p in paths]
    t.ok(all(s == 401 for s in st), "a wrong password: 401", st)
    ok = [get(h, p, basic("operator", op))[0] for p in paths]
    ok_bearer = [get(h, p, {"Authorization": f"Bearer {op}"})[0] for p in paths]
    t.ok(all(s == 200 for s in ok + ok_bearer), "the operator token, as the Basic password (any "
         "user name) or as a bearer token: 200 everywhere", ok + ok_bearer)
    auth = basic("operator", op)
    s, hd, body = get(h, "/console/", auth)
    csp = hd.get("Content-Security-Policy", "")
    t.ok("script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
         and "frame-ancestors 'none'" in csp and hd.get("X-Content-Type-Options") == "nosniff"
         and not re.search(r"https?://", csp),
         "Content-Security-Policy: scripts and requests from the collector only, no inline "
         "script, no framing", csp)
    html = body.decode()
    t.ok("<script>" not in html and not re.search(r"\son[a-z]+=", html) and not re.search(
        r"(src|href)=\"(https?:)?//", html),
         "the page has no inline script, no event attribute and loads nothing from elsewhere")
    same = True
    for name in sorted(os.listdir(CONSOLE_DIR)):
        if not name.endswith((".html", ".css", ".js")):
            continue
        url = "/console/" if name == "index.html" else f"/console/assets/{name}"
        with open(os.path.join(CONSOLE_DIR, name), "rb") as f:
            same = same and get(h, url, auth)[2] == f.read()
    t.ok(same, "every page and file served is the tree's host-sim/console/ file byte for byte "
         "(static: no page can embed report data)")
    js = open(os.path.join(CONSOLE_DIR, "console.js")).read()
    t.ok(not re.search(r"https?://(?!www\.w3\.org/2000/svg)", js) and "/v1/reports" not in js,
         "the script names no other origin and never asks for reports")
    s1 = get(h, "/console/", auth, method="POST")[0]
    s2 = get(h, "/v1/campaigns", auth, method="DELETE")[0]
    t.ok(s1 == 405 and s2 == 405, "the console only reads: POST/DELETE answer 405 (nothing to "
         "forge across sites)", (s1, s2))
    bad = {
        "/console/campaign/999": 404, "/console/campaign/1?period=99": 404,
        "/console/campaign/1/time?from=0&to=40": 400, "/console/campaign/1?confidence=2": 400,
        "/console/campaign/1?from=3&to=1": 400, "/console/campaign/1?bogus=1": 400,
        "/console/nowhere": 404, "/console/ingestion?x=1": 400,
        "/v1/campaigns/999/periods": 404, "/v1/campaigns/1/periods?from=0&to=31": 400,
        "/v1/campaigns/1/periods?to=9": 404, "/v1/campaigns?page=1": 400,
        "/v1/campaigns?page=x": 400,
    }
    got = {p: get(h, p, auth) for p in bad}
    t.ok(all(got[p][0] == want for p, want in bad.items()),
         "bad input: unknown campaign, period not begun or page: 404; a query out of range: 400",
         {p: (g[0], g[2][:80]) for p, g in got.items() if g[0] != bad[p]})
    reasons = [got[p][2].decode() for p in ("/console/campaign/1?period=99",
                                            "/console/campaign/1/time?from=0&to=40",
                                            "/v1/campaigns/1/periods?from=0&to=31")]
    t.ok("has not begun" in reasons[0] and "current period is 3" in reasons[0]
         and "at most 31 periods" in reasons[1] and "at most 31 periods" in reasons[2],
         "each says why (the current period; the largest page)", reasons)
    s, _, body = get(h, "/v1/campaigns/1/periods", auth)
    d = json.loads(body)
    t.ok(s == 200 and d["from"] == 0 and d["to"] == 3 and len(d["periods"]) == 4
         and [p["period_from"] for p in d["periods"]] == [0, 1, 2, 3]
         and [p["reports"] > 0 for p in d["periods"]] == [True, True, True, False],
         "/periods: one estimate per period up to the current one (3 with reports, the "
         "current one empty)", {k: d.get(k) for k in ("from", "to", "period_now")})
    one = json.loads(get(h, "/v1/campaigns/3/estimate?period=1", auth)[2])
    many = json.loads(get(h, "/v1/campaigns/3/periods?from=1&to=1", auth)[2])["periods"][0]
    t.ok(one == many, "/periods gives exactly the estimate endpoint's JSON of each period")
    info = json.loads(get(h, "/v1/campaigns/1/info", auth)[2])
    t.ok(info["name"] == "tpr_by_age" and info["group_names"] == ["young", "middle", "older"]
         and "tuple" in info["privacy_unit"] and "local DP" in info["trust_model"]
         and info["period_now"] == 3, "campaign JSON: names, privacy unit, trust model, "
         "current period", info)
    return auth


def pagination(t):
    """30 campaigns: pages of at most 25, the next page, and page 2 refused."""
    text = "".join(f"[campaign]\nid = {i}\nname = c{i}\nmechanism = tuple_mr\neps = 1\n"
                   f"groups = 2\nmetrics = tpr\n" for i in range(1, 31))
    h = Harness(campaigns=text)
    try:
        h.start()
        auth = {"Authorization": f"Bearer {h.creds.token['reader']}"}
        p0 = json.loads(get(h, "/v1/campaigns", auth)[2])
        p1 = json.loads(get(h, "/v1/campaigns?page=1", auth)[2])
        s2 = get(h, "/v1/campaigns?page=2", auth)
        t.ok(len(p0["campaigns"]) == 25 and len(p1["campaigns"]) == 5 and p0["pages"] == 2
             and p0["total"] == 30 and s2[0] == 400 and b"0 .. 1" in s2[2]
             and [c["id"] for c in p0["campaigns"] + p1["campaigns"]] == list(range(1, 31)),
             "30 campaigns: pages of at most 25 (25 + 5); page 2 is a 400 naming the range",
             (len(p0["campaigns"]), len(p1["campaigns"]), s2[0]))
        h.stop()
    finally:
        h.cleanup()


def report_ids(h):
    con = sqlite3.connect(f"file:{h.db}?mode=ro", uri=True)
    try:
        return [bytes(r[0]) for r in con.execute("SELECT report_id FROM reports")]
    finally:
        con.close()


def leaked(dom, ids):
    """Report ids (hex or base64, the two ways bytes get printed) found in a page's text."""
    low = dom.lower()
    return [i.hex() for i in ids if i.hex() in low or base64.b64encode(i).decode() in dom]


def browser_checks(t, h, op, auth, shots, ext):
    est = {cid: json.loads(get(h, f"/v1/campaigns/{cid}/estimate", auth)[2]) for cid in (1, 2, 3)}
    ids = report_ids(h)
    base = f"https://localhost:{h.port}"
    b = Browser(trust_cert=f"{h.tmp}/server.crt")
    try:
        b.sign_in_with("operator", op)
        pages = [("campaigns", "/console/"), ("campaign-tuple", "/console/campaign/1"),
                 ("campaign-auc-groups", "/console/campaign/2"), ("campaign-roc", "/console/campaign/3"),
                 ("over-time", "/console/campaign/2/time"), ("ingestion", "/console/ingestion")]
        doms = {}
        for name, path in pages:
            r = b.goto(base + path)
            doms[name] = b.eval("document.documentElement.outerHTML") or ""
            b.screenshot(os.path.join(shots, f"{name}.{ext}"))
            t.ok(r == "1", f"page {path} loads and draws ({name}.{ext})", b.errors or r)
        t.ok(1 <= b.auth_prompts <= 2, f"the browser asked for the credential once "
             f"({b.auth_prompts} prompt(s) for {len(pages)} pages and their JSON)")

        # the numbers shown are the JSON's, to the digits shown; intervals drawn
        b.goto(base + "/console/campaign/3")
        shown = b.eval("document.querySelector('[data-field=auc]').textContent")
        roc = est[3]["roc"]
        t.ok(shown == fmt(roc["auc"]), f"roc_hist: the AUC shown ({shown}) is the estimate "
             f"JSON's ({roc['auc']!r}) to 4 digits", shown)
        t.ok(fmt(roc["auc"] + 1e-3) != shown, "negative control: an AUC 0.001 off would not "
             "match what is shown")
        ci = b.eval("document.querySelector('[data-field=\"auc-ci\"]').textContent")
        t.ok(ci == f"[{fmt(roc['auc_ci_total'][0])}, {fmt(roc['auc_ci_total'][1])}]",
             f"its interval {ci} is auc_ci_total", ci)
        band = b.eval("(() => { const p = document.querySelector('svg[data-chart=roc] path[data-band]');"
                      " return p ? p.getAttribute('d').split('L').length : 0; })()")
        t.ok(band >= 2 * len(roc["fpr"]), f"the ROC band is drawn ({band} vertices for "
             f"{len(roc['fpr'])} thresholds, both edges)", band)

        b.goto(base + "/console/campaign/2")
        rg = est[2]["roc_groups"]
        got = b.eval("[...document.querySelectorAll('[data-field^=auc-group-]')].filter(e => !e.dataset.field.endsWith('-ci')).map(e => [e.dataset.field, e.textContent])")
        want = [[f"auc-group-{x['group']}", fmt(x["auc"]) if x["auc"] is not None else "undefined"]
                for x in rg["by_group"]]
        t.ok(got == want, "per-group AUCs shown are the JSON's to 4 digits", (got, want))
        n_ci = b.eval("document.querySelectorAll('svg[data-chart=auc_groups] line.ci').length")
        n_gap_ci = b.eval("document.querySelectorAll('svg[data-chart=auc_gaps] line.ci').length")
        t.ok(n_ci == sum(1 for x in rg["by_group"] if x.get("ci")) and n_gap_ci == sum(
            1 for x in rg["gaps"] if x.get("ci")) and n_ci > 0 and n_gap_ci > 0,
             f"every group's and gap's interval is drawn ({n_ci} + {n_gap_ci})")
        gaps = b.eval("[...document.querySelectorAll('[data-field^=gap-]')].filter(e => !e.dataset.field.endsWith('-ci')).map(e => e.textContent)")
        t.ok(gaps == [fmt(x["gap"]) if x["gap"] is not None else "undefined" for x in rg["gaps"]],
             "AUC gaps shown are the JSON's", gaps)
        names = b.eval("document.querySelector('svg[data-chart=auc_groups]').textContent")
        t.ok(all(n in names for n in ("young", "middle", "older")),
             "groups are shown by their names from the campaigns file")

        b.goto(base + "/console/campaign/1")
        m = est[1]["metrics"][0]
        got = b.eval("[...document.querySelectorAll('[data-field^=mean-0-]')].filter(e => !e.dataset.field.endsWith('-ci')).map(e => e.textContent)")
        t.ok(got == [fmt(g["mean"]) if g["mean"] is not None else "undefined" for g in m["groups"]],
             "tuple_mr: per-group TPRs shown are the JSON's", got)
        n = b.eval("[document.querySelectorAll('svg[data-chart=metric_0] line.ci').length,"
                   " document.querySelectorAll('svg[data-chart=disparities_0] line.ci').length]")
        t.ok(n == [len(m["groups"]), len(m["disparities"])], f"group and disparity intervals "
             f"drawn ({n})", n)

        b.goto(base + "/console/campaign/2/time")
        per = json.loads(get(h, "/v1/campaigns/2/periods", auth)[2])["periods"]
        n = b.eval("document.querySelectorAll('svg[data-chart=auc] line.ci').length")
        t.ok(n == sum(1 for p in per if p["roc"].get("auc_ci_total")) and n == 3,
             f"over time: the pooled AUC's interval of each period with reports is drawn ({n})")

        b.goto(base + "/console/campaign/3?period=3")
        flag = b.eval("(() => { const e = document.querySelector('[data-field=auc]');"
                      " return [e.className, e.textContent, e.closest('td').textContent]; })()")
        t.ok(flag[0] == "flag undefined" and "no reports" in flag[2],
             "an estimate without data is shown as undefined with its reason, never a bare "
             "number", flag)
        b.goto(base + "/console/ingestion")
        acc = b.eval("document.querySelector('[data-field=accepted]').textContent")
        want = sum(e["reports"] for e in est.values())
        t.ok(acc == f"{want:,}", f"ingestion: the reports accepted ({acc}) are the stored "
             f"reports of the 3 campaigns ({want:,})", acc)
        n = b.eval("document.querySelectorAll('svg[data-chart=ingestion] circle').length")
        t.ok(n > 0, f"ingestion over time drawn ({n} points)")
        ing = json.loads(get(h, "/v1/ingestion", auth)[2])
        legend = b.eval("document.querySelector('.legend').textContent")
        t.ok(ing["reasons"] and all(f"rejected: {r}" in legend for r in ing["reasons"]),
             f"rejects by reason are drawn ({ing['reasons']})", legend)

        bad = [k for k, v in doms.items() if leaked(v, ids)]
        t.ok(ids and not bad, f"no page shows a report id ({len(ids)} stored ids looked for in "
             f"{len(doms)} pages)", bad)
        dom = doms["campaigns"] + f"<span>{ids[0].hex()}</span>"
        t.ok(leaked(dom, ids), "negative control: a report id in a page is found")

        b.goto(base + "/console/campaign/999", ready="document.body")
        b.wait_for("document.body.textContent.length > 0", 5)
        st = b.eval("(() => { const e = document.getElementById('error'); return e && [e.dataset.status, e.textContent]; })()")
        t.ok(st and st[0] == "404" and "No campaign has the id 999" in st[1],
             "an unknown campaign is a clear 404 page", st)
        errors_before = list(b.errors)
        b.errors.clear()  # the 404 above is logged by the browser as a failed load: expected
        b.eval("console.error('negative control')")
        b.pump(0.2)
        t.ok(any("negative control" in e for e in b.errors), "negative control: a console "
             "error is caught")
        b.errors.clear()

        # a restarting collector: the page says so, retries, and draws once it is back
        port = h.port
        b.goto(base + "/console/campaign/3")
        h.stop()
        b.eval("void window.dpmConsole.refresh()")  # what the page does every minute
        b.wait_for("document.body.dataset.retrying", 10)
        banner = b.eval("document.getElementById('status').hidden ? '' : document.getElementById('status').textContent")
        t.ok("not answering" in banner and "retrying" in banner,
             "collector down: the page says it is not answering and retries", banner)
        h.start(port=port, extra=["--series-seconds", "1"])
        r = b.wait_for("document.body.dataset.ready === '1' && document.getElementById('status').hidden", 30)
        t.ok(r, "collector back on its port: the page draws and the notice goes")
        net = [e for e in b.errors if "(network)" not in e]
        t.ok(not net, "during the restart only failed connections were logged", net)
        b.errors.clear()
        t.ok(not [e for e in errors_before if "/console/campaign/999" not in e],
             "no console error on any page (exceptions, console.error, failed loads)",
             errors_before)
    finally:
        b.close()


def main():
    t = Tap()
    if find_chromium() is None:
        t.ok(False, "chromium is installed (make deps installs Debian's chromium): the console "
             "is tested in a real browser, and a missing one is a failure, not a skip")
        return t.done()
    shots = os.environ.get("DPM_CONSOLE_SHOTS") or os.path.join(OUT, "console-screenshots")
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dpm-console.") as tmp:
        scn = os.path.join(tmp, "console.scn")
        with open(scn, "w") as f:
            f.write(SCENARIO)
        camp = subprocess.run([SIM, "campaigns", "--scenario", scn], capture_output=True,
                              text=True)
        t.ok(camp.returncode == 0 and "group_names = young, middle, older" in camp.stdout,
             "dpm-sim campaigns writes the scenario's campaign and group names", camp.stderr)
        h = Harness(campaigns=campaigns_file(None, camp.stdout))
        try:
            h.start(extra=["--series-seconds", "1"])
            started = time.monotonic()
            rs = [subprocess.run([SIM, "--scenario", scn, "--mode", "network", "--run", str(p),
                                  "--collector", f"127.0.0.1:{h.port}", "--ca", h.ca,
                                  "--clients", "4", "--batch", "200", "--out",
                                  os.path.join(tmp, f"sim{p}"), "--no-plot", "--quiet",
                                  "--token", h.creds.files["harness"]],
                                 capture_output=True, text=True, timeout=300, cwd=ROOT)
                  for p in range(3)]
            t.ok(all(r.returncode == 0 for r in rs), f"dpm-sim network mode fills periods 0, 1, "
                 f"2 (--run 0, 1, 2; each run's estimate cross-checked; "
                 f"{time.monotonic() - started:.1f} s)", "".join(r.stdout + r.stderr for r in rs))
            bad = h.request("POST", "/v1/reports", body=b"\x0a\x05junk!", token="harness")
            t.ok(bad[0] == 400, "a malformed batch is rejected (for the ingestion page's "
                 "rejects)", bad[0])
            op = h.creds.token["reader"]
            auth = http_checks(t, h, op, h.creds.token["device-a"])
            browser_checks(t, h, op, auth, shots, "jpg" if os.environ.get("DPM_CONSOLE_SHOTS") else "png")
            t.ok(h.stop() == 0, "clean stop")
        except CdpError as e:
            t.ok(False, f"the browser: {e}")
        finally:
            h.cleanup()
    pagination(t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
