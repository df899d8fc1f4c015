#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make results: the figures the documents quote, recorded with their command and commit, and
the documents' results tables regenerated from those records.

  results.py run [SOURCE ...]     run each source's producer, record it, regenerate the tables
  results.py record SOURCE --commit C --date D [--seconds S]
                                  record what the producer already wrote under build/
  results.py tables [--check]     regenerate every marked table (--check: change nothing, exit 1
                                  if a table is not what its record gives)

Sources (`make results RESULTS="bench size"`; default: all): bench (`make bench`), size
(`make size`), repro (`make repro`: every paper) or repro-<paper> (`dpm-sim repro <paper>`),
demo (`make demo`, DEMO_WAIT=0: the report it prints, from its summary line to its closing
note, with the machine's cores and load average at its end; its output is kept in
build/demo/report.txt), hello (`build/host/hello` after `make host`: what it prints) and tests
(FIGURE_TESTS: fixed-seed unit and stat tests, built and run two at a time, about 90 s on a
loaded 2-core machine; each prints the figures the documents quote as `# figure NAME VALUE
UNIT` (tests/support/test_figure.h), recorded as metrics PROGRAM.NAME; a test that fails or
prints no figure fails the source; outputs in build/tests-figures/).
Records: tests/results/<source>.json (repro: repro-<paper>.json, one per paper), each the
producer's JSON with a stamp: `command`, `commit` (`git rev-parse --short HEAD`, `-dirty` when a
tracked file other than a document or a record differs: documents and records do not change what
is measured) and `date`, taken before the producer starts. A record is a measurement, kept in
git; what the documents quote must be in one (tests/unit/test_results_figures.py).

A table in a document sits between markers; everything between them is generated:

  <!-- results: tests/results/bench.json view=metrics names=NAME,NAME,... -->
  `make bench` at f7b7344 (2026-12-06), tests/results/bench.json:
  (blank line, the table)
  <!-- /results -->

Views (VIEWS below): metrics (bench: name, value, unit, baseline, ratio, target), grid (bench:
metrics PREFIX+ROW.COL as rows and columns), size-builds (size: flash, RAM, stack, TLS arena,
flash added per build), size-memory (size: the structs an app holds), size-stack (size: the
stack of one device call per build), repro-tables (a repro record: matches and self-checks per
table), repro-summary (the same summed over the tables), auc-compare (its shapes and
mechanisms), repro-cells (a repro record's cells of table=NAME), demo-excerpt (the demo's
report of campaigns=ID,...: each campaign's lines, only metric=NAME's of a tuple campaign,
a table cut to its first row), demo-trust (the demo's two trust models on the same devices),
output (a record's `output` lines as a code block under `$ COMMAND`). A table with no record yet
says why on the line before it: <!-- results: unrecorded: REASON -->. Numbers are printed by
fmt() alone; the test reads them back with the same rules. Exit status 1 when a producer fails (a missed budget or target is a result, not a
failure: `make size` exits 1 for those and is recorded), a record is missing, or a marked table
names an unknown view, record or item."""
import concurrent.futures
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS_DIR = "tests/results"
BUILD_DIR = os.environ.get("BUILD_DIR", "build")
OUT = os.environ.get("OUT", os.path.join(BUILD_DIR, "host"))
MAKE = os.environ.get("MAKE", "make")
BEGIN = re.compile(r"^<!-- results: (\S+)((?: \w+=\S+)*) -->$")
END = "<!-- /results -->"
# What a number looks like in a table and in a record's strings (the test's rule too).
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")
SOURCES = ("bench", "size", "repro", "demo", "hello", "tests")
# The tests whose printed figures the documents quote (source tests), under OUT/tests/; each
# prints them as "# figure NAME VALUE UNIT" (tests/support/test_figure.h). Longest first: they
# run two at a time.
FIGURE_TESTS = ("stat/test_roc_groups_coverage", "stat/test_roc_unbinned", "stat/test_few_events",
                "stat/test_fedauc_coverage", "stat/test_roc_central",
                "unit/test_outbox_damage", "unit/test_ledger", "unit/test_outbox_faults",
                "stat/test_ustat_unbiased", "stat/test_ustat_gof", "stat/test_dpauc_unbiased",
                "unit/test_roc_estimate", "unit/test_fedauc")
FIGURE = re.compile(r"^# figure ([a-z0-9_.]+) (\S+) (\S+)$")
TESTS_LOGS = os.path.join(BUILD_DIR, "tests-figures")
DEMO_REPORT = os.path.join(BUILD_DIR, "demo", "report.txt")
SIZE_OUTPUTS = ("size.json", "size_memory.json", "size_stack_host_tuple_only.json",
                "size_stack_host_default.json")


class Problem(Exception):
    pass


def fmt(x):
    """The one way a recorded number is printed: integers with thousands commas, other numbers
    to 4 significant digits (at or above 1,000: rounded, with commas); null as a dash."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    if abs(x) >= 1000:
        return f"{round(x):,}"
    return f"{x:.4g}"


def stamp():
    """(commit, date) of the tree about to be measured."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ".", ":!*.md",
                            f":!{RESULTS_DIR}"], cwd=ROOT).returncode != 0
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return commit + ("-dirty" if dirty else ""), date


def load(path):
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Problem(f"cannot read {path}: {e}")


def write_record(name, body, command, commit, date, seconds):
    rec = {"command": command, "commit": commit, "date": date}
    if seconds is not None:
        rec["seconds"] = round(seconds)
    rec.update(body)
    os.makedirs(os.path.join(ROOT, RESULTS_DIR), exist_ok=True)
    path = os.path.join(RESULTS_DIR, f"{name}.json")
    with open(os.path.join(ROOT, path), "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"results: wrote {path} ({command} at {commit})")


# ---- recording: what each producer wrote under build/, condensed ------------------------------
def record_bench(commit, date, seconds):
    bench = load(os.path.join(BUILD_DIR, "bench.json"))
    sys.path.insert(0, os.path.join(ROOT, ".make"))
    import bench as bench_py  # the targets the figures are held to, as of this commit
    targets = {k: {"field": f, "op": op, "bound": b} for k, (f, op, b) in bench_py.TARGETS.items()}
    write_record("bench", {"machine": bench["machine"], "targets": targets,
                           "metrics": bench["metrics"]}, "make bench", commit, date, seconds)


def record_size(commit, date, seconds):
    size = load(os.path.join(BUILD_DIR, "size.json"))
    memory = load(os.path.join(BUILD_DIR, "size_memory.json"))
    body = {k: size[k] for k in ("target", "flags", "totals")}
    body["modules"] = {name: rows for name, rows in size["builds"].items()}
    body["memory"] = memory
    # the stack of one device call: Cortex-M4 per build (size.py), x86_64 (stack_host.py)
    body["one_call_stack"] = {f"cortex-m4:{b}": n["one_call_stack"] for b, n in size["notes"].items()
                              if n.get("one_call_stack")}
    for build in ("tuple_only", "default"):
        host = load(os.path.join(BUILD_DIR, f"size_stack_host_{build}.json"))
        body["one_call_stack"][host["build"].replace(" ", ":")] = host["stack"]
    write_record("size", body, "make size", commit, date, seconds)


def repro_counts(cells):
    """{"paper": [hold, of], "self-check": [hold, of], "shown": n} of some cells."""
    out = {}
    for kind in ("paper", "self-check"):
        these = [c for c in cells if c["counts_as"] == kind]
        out[kind] = [sum(1 for c in these if c["match"]), len(these)]
    out["shown"] = sum(1 for c in cells if c["counts_as"] not in ("paper", "self-check"))
    return out


def record_repro(paper, command, commit, date, seconds):
    rec = load(os.path.join(BUILD_DIR, "repro", f"{paper}.json"))
    if "cells" in rec:  # the counts a table quotes, so that every number quoted is recorded
        tables = []
        for c in rec["cells"]:
            if c["table"] not in tables:
                tables.append(c["table"])
        rec = {"counts": dict(repro_counts(rec["cells"]), tables=len(tables)),
               "table_counts": {t: repro_counts([c for c in rec["cells"] if c["table"] == t])
                                for t in tables}, **rec}
    write_record(f"repro-{paper}", rec, command, commit, date, seconds)


def record_demo(command, commit, date, seconds, load=None):
    """The report `make demo` printed (DEMO_REPORT): from its summary line ("N simulated
    devices ...") up to its closing note, and the machine it ran on."""
    try:
        with open(os.path.join(ROOT, DEMO_REPORT), encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise Problem(f"cannot read {DEMO_REPORT}: {e}")
    start = next((i for i, l in enumerate(lines) if re.match(r"^[\d,]+ simulated devices ", l)), None)
    end = next((i for i, l in enumerate(lines) if l.startswith("The collector never sees")), None)
    if start is None or end is None or end < start:
        raise Problem(f"{DEMO_REPORT} holds no demo report")
    report = lines[start:end]
    while report and not report[-1].strip():
        report.pop()
    m = re.match(r"^([\d,]+) simulated devices .*?; ([\d,]+) reports .*\(([\d.]+) s in all\)", report[0])
    machine = {"cores": os.cpu_count(),
               "load_average": round(load if load is not None else os.getloadavg()[0], 1)}
    body = {"machine": machine, "devices": int(m.group(1).replace(",", "")),
            "reports": int(m.group(2).replace(",", "")), "elapsed_s": float(m.group(3)),
            "report": report}
    write_record("demo", body, command, commit, date, seconds)


def record_hello(commit, date, seconds):
    run = subprocess.run([os.path.join(OUT, "hello")], cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise Problem(f"{OUT}/hello failed (exit {run.returncode}): nothing recorded")
    write_record("hello", {"output": run.stdout.rstrip("\n").split("\n")},
                 f"{OUT}/hello", commit, date, seconds)


def record_tests(commit, date, seconds):
    """The figures FIGURE_TESTS printed (their logs under TESTS_LOGS, each ending in its exit
    status) as metrics named PROGRAM.NAME (PROGRAM without "test_"); Problem if a test failed,
    printed no figure, a malformed or non-finite one, or one name twice."""
    metrics, programs, problems = [], [], []
    for test in FIGURE_TESTS:
        prog = os.path.basename(test)
        try:
            with open(os.path.join(ROOT, TESTS_LOGS, prog + ".log"), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError as e:
            raise Problem(f"cannot read {TESTS_LOGS}/{prog}.log: {e}")
        status = next((l for l in reversed(lines) if l.startswith("# exit ")), "# exit ?")
        if status != "# exit 0" or any(l.startswith("not ok") for l in lines):
            problems.append(f"{test} failed ({status[2:]})")
        got = []
        for l in lines:
            if l.startswith("# figure "):
                m = FIGURE.match(l)
                try:
                    value = float(m.group(2)) if m else None
                except ValueError:
                    value = None
                if value is None or value != value or value in (float("inf"), float("-inf")):
                    problems.append(f"{test}: malformed figure line {l!r}")
                    continue
                got.append({"name": f"{prog[len('test_'):]}.{m.group(1)}",
                            "value": int(value) if value.is_integer() and abs(value) < 1e15 else value,
                            "unit": m.group(3)})
        if not got:
            problems.append(f"{test} printed no figure")
        metrics += got
        programs.append(f"{OUT}/tests/{test}")
    names = [m["name"] for m in metrics]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append("figures printed twice: " + ", ".join(twice))
    if problems:
        raise Problem("; ".join(problems) + ": nothing recorded")
    write_record("tests", {"programs": programs, "metrics": metrics},
                 "make results RESULTS=tests", commit, date, seconds)


def run_figure_tests():
    """Build and run FIGURE_TESTS, two at a time, each one's output and exit status kept in
    TESTS_LOGS/PROGRAM.log."""
    bins = [os.path.join(OUT, "tests", t) for t in FIGURE_TESTS]
    if subprocess.run([MAKE, "--no-print-directory", "-j2"] + bins, cwd=ROOT).returncode != 0:
        raise Problem("building the tests failed")
    os.makedirs(os.path.join(ROOT, TESTS_LOGS), exist_ok=True)
    env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")

    def one(path):
        t0 = time.monotonic()
        run = subprocess.run([path], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(os.path.join(ROOT, TESTS_LOGS, os.path.basename(path) + ".log"), "w",
                  encoding="utf-8") as f:
            f.write(run.stdout + f"\n# exit {run.returncode}\n")
        print(f"results: {path}: exit {run.returncode}, {time.monotonic() - t0:.1f} s")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, bins))


def papers_written():
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, BUILD_DIR, "repro", "*.json")))


def produce(source):
    """Run one source's producer and record it; Problem if it could not."""
    commit, date = stamp()
    start = time.monotonic()
    if source == "bench":
        # bench.py keeps metrics of an older bench.json it did not measure: start from none
        for stale in glob.glob(os.path.join(ROOT, BUILD_DIR, "bench.json")):
            os.unlink(stale)
        if subprocess.run([MAKE, "--no-print-directory", "bench"], cwd=ROOT).returncode != 0:
            raise Problem("make bench failed (a figure could not be measured): nothing recorded")
        record_bench(commit, date, time.monotonic() - start)
    elif source == "size":
        for stale in SIZE_OUTPUTS:
            if os.path.exists(os.path.join(ROOT, BUILD_DIR, stale)):
                os.unlink(os.path.join(ROOT, BUILD_DIR, stale))
        run = subprocess.run([MAKE, "--no-print-directory", "size"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(run.stdout)
        # exit 1 with every figure measured and budgets missed is a result; anything else is not
        measured = "could not measure" not in run.stdout and "failed" not in run.stdout and all(
            os.path.exists(os.path.join(ROOT, BUILD_DIR, f)) for f in SIZE_OUTPUTS)
        if run.returncode != 0 and not (measured and "MISSED" in run.stdout):
            raise Problem(f"make size failed (exit {run.returncode}): nothing recorded")
        record_size(commit, date, time.monotonic() - start)
    elif source == "repro":
        for stale in glob.glob(os.path.join(ROOT, BUILD_DIR, "repro", "*.json")):
            os.unlink(stale)
        if subprocess.run([MAKE, "--no-print-directory", "repro"], cwd=ROOT).returncode != 0:
            raise Problem("make repro failed: nothing recorded")
        seconds = time.monotonic() - start
        for paper in papers_written():
            record_repro(paper, "make repro", commit, date, seconds)
    elif source.startswith("repro-"):
        paper = source[len("repro-"):]
        target = os.path.join(ROOT, BUILD_DIR, "repro", f"{paper}.json")
        if os.path.exists(target):
            os.unlink(target)
        if subprocess.run([MAKE, "--no-print-directory", "host"], cwd=ROOT).returncode != 0:
            raise Problem("make host failed")
        if subprocess.run([os.path.join(OUT, "dpm-sim"), "repro", "--out",
                           os.path.join(BUILD_DIR, "repro"), paper], cwd=ROOT).returncode != 0:
            raise Problem(f"dpm-sim repro {paper} failed: nothing recorded")
        record_repro(paper, f"dpm-sim repro {paper}", commit, date, time.monotonic() - start)
    elif source == "demo":
        # the demo prints its report (.make/demo_report.py); kept here, and recorded from here
        path = os.path.join(ROOT, DEMO_REPORT)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            os.unlink(path)
        env = dict(os.environ, DEMO_WAIT="0")
        command = "make demo" + (f" DEMO_DEVICES={env['DEMO_DEVICES']}" if env.get("DEMO_DEVICES") else "")
        with open(path, "w", encoding="utf-8") as out:
            run = subprocess.Popen([MAKE, "--no-print-directory", "demo"], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for line in run.stdout:
                sys.stdout.write(line)
                out.write(line)
            load = os.getloadavg()[0]
        if run.wait() != 0:
            raise Problem(f"make demo failed (exit {run.returncode}): nothing recorded")
        record_demo(command, commit, date, time.monotonic() - start, load)
    elif source == "hello":
        if subprocess.run([MAKE, "--no-print-directory", "host"], cwd=ROOT).returncode != 0:
            raise Problem("make host failed")
        record_hello(commit, date, time.monotonic() - start)
    elif source == "tests":
        for stale in glob.glob(os.path.join(ROOT, TESTS_LOGS, "*.log")):
            os.unlink(stale)
        run_figure_tests()
        record_tests(commit, date, time.monotonic() - start)
    else:
        raise Problem(f"unknown source {source!r} (bench, size, repro, repro-<paper>, demo, hello, tests)")


# ---- views: a record and the block's options -> the table's lines ---------------------------
def metric_target(rec, name):
    t = rec.get("targets", {}).get(name)
    if t is None:
        return ""
    m = next(m for m in rec["metrics"] if m["name"] == name)
    x = m[t["field"]]
    if x is None:
        return f"{t['field']} {t['op']} {fmt(t['bound'])}: unmeasured"
    met = x >= t["bound"] if t["op"] == ">=" else x <= t["bound"]
    op = "≥" if t["op"] == ">=" else "≤"
    return f"{t['field']} {op} {fmt(t['bound'])}: {'met' if met else '**missed**'}"


def view_metrics(rec, opts):
    by_name = {m["name"]: m for m in rec["metrics"]}
    lines = ["| metric | value | unit | baseline in the same run | ratio | target |",
             "|---|---|---|---|---|---|"]
    for name in opts["names"].split(","):
        if name not in by_name:
            raise Problem(f"no metric {name}")
        m = by_name[name]
        base = m.get("baseline") or ""
        lines.append(f"| `{name}` | {fmt(m['value'])} | {m['unit']} | {base} | "
                     f"{'' if m.get('ratio') is None else fmt(m['ratio'])} | {metric_target(rec, name)} |")
    return lines


def view_grid(rec, opts):
    """Metrics named PREFIX + ROW + "." + COL (or without the dot: sep=none), one row per ROW;
    a dash where the row has no such metric (at least one per row)."""
    by_name = {m["name"]: m for m in rec["metrics"]}
    sep = "" if opts.get("sep") == "none" else "."
    rows, cols = opts["rows"].split(","), opts["cols"].split(",")
    lines = [f"| `{opts.get('prefix', '')}…` | " + " | ".join(f"`{c}`" for c in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for r in rows:
        got = [by_name.get(f"{opts.get('prefix', '')}{r}{sep}{c}") for c in cols]
        if not any(got):
            raise Problem(f"no metric {opts.get('prefix', '')}{r}{sep}*")
        lines.append(f"| {r} | " + " | ".join(fmt(m["value"]) if m else "—" for m in got) + " |")
    return lines


def view_size_builds(rec, opts):
    lines = ["| build | flash | RAM | stack | TLS arena | flash added |", "|---|---|---|---|---|---|"]
    for name in opts["builds"].split(","):
        if name not in rec["totals"]:
            raise Problem(f"no build {name}")
        t = rec["totals"][name]
        arena = "" if t.get("arena") is None else fmt(t["arena"])
        added = "" if t.get("flash_added") is None else fmt(t["flash_added"])
        lines.append(f"| {name} | {fmt(t['flash'])} | {fmt(t['ram'])} | {fmt(t['stack'])} | {arena} | {added} |")
    return lines


def view_size_memory(rec, opts):
    mem = rec["memory"]
    cols = list(mem)
    names = sorted({n for c in cols for n in mem[c]["sizes"]},
                   key=lambda n: (not n.startswith("dpm_state_"), n))
    lines = ["| object (`tests/cross/size_state.c`) | " + " | ".join(cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for n in names:
        lines.append(f"| `{n}` | " + " | ".join(fmt(mem[c]["sizes"].get(n)) for c in cols) + " |")
    lines.append("| **held, total** | " + " | ".join(f"**{fmt(mem[c]['held'])}**" for c in cols) + " |")
    return lines


def view_size_stack(rec, opts):
    """The stack of one device call (bytes) per build: calls=NAME,... cols=BUILD,..."""
    stack = rec["one_call_stack"]
    cols = opts["cols"].split(",")
    for c in cols:
        if c not in stack:
            raise Problem(f"no one-call stack of {c}")
    lines = ["| call | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for call in opts["calls"].split(","):
        if not any(call in stack[c] for c in cols):
            raise Problem(f"no build measured {call}")
        lines.append(f"| `{call}` | " + " | ".join(fmt(stack[c].get(call)) for c in cols) + " |")
    return lines


def view_repro_tables(rec, opts):
    """Per table of a repro record: what its cells count as and how many hold."""
    src = {}
    for c in rec["cells"]:
        src.setdefault(c["table"], set()).add(c["ref_source"])
    lines = ["| table | reference | counts as | hold | of |", "|---|---|---|---|---|"]
    for t, k in rec["table_counts"].items():
        kind = "paper" if k["paper"][1] else "self-check" if k["self-check"][1] else None
        held, of = k[kind] if kind else ("", k["shown"])
        lines.append(f"| {t} | {'; '.join(sorted(src[t]))} | {kind or 'shown, not counted'} | "
                     f"{fmt(held) if kind else ''} | {fmt(of)} |")
    return lines


def view_repro_summary(rec, opts):
    """A repro record's cells by what they count as: how many hold, of how many."""
    k = rec["counts"]
    return ["| cells | hold | of |", "|---|---|---|",
            f"| matching the paper | {fmt(k['paper'][0])} | {fmt(k['paper'][1])} |",
            f"| self-checks | {fmt(k['self-check'][0])} | {fmt(k['self-check'][1])} |",
            f"| shown, not counted | | {fmt(k['shown'])} |",
            f"| (in tables) | | {fmt(k['tables'])} |"]


def view_auc_compare(rec, opts):
    """dpm-sim repro auc_compare: per shape and mechanism its error, coverage and bytes."""
    cols = ("rmse", "coverage", "bytes_per_device", "down_bytes_per_device", "rounds",
            "reports_per_device")
    lines = ["| shape | mechanism | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for shape in rec["shapes"]:
        for k, m in enumerate(shape["mechanisms"]):
            lines.append(f"| {shape['what'] if k == 0 else ''} | {m['mechanism']} | " +
                         " | ".join(fmt(m[c]) for c in cols) + " |")
    return lines


def view_repro_cells(rec, opts):
    cells = [c for c in rec["cells"] if c["table"] == opts["table"]]
    if not cells:
        raise Problem(f"no cells of table {opts['table']}")
    cols = []
    for c in cells:
        if c["col"] not in cols:
            cols.append(c["col"])
    rows = []
    for c in cells:
        if c["row"] not in rows:
            rows.append(c["row"])
    at = {(c["row"], c["col"]): c for c in cells}
    lines = ["| row | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in rows:
        lines.append(f"| {r} | " + " | ".join(
            fmt(at[(r, c)]["ours"]) if (r, c) in at else "" for c in cols) + " |")
    return lines


def view_demo_excerpt(rec, opts):
    """The demo's report, as a code block under the machine it ran on: its summary line, then
    each campaign of campaigns=ID,... whole, except that a tuple campaign shows only the part of
    metric=NAME (when given) and a table (rows under a header ending "in CI") only its first row
    and "..."."""
    report = rec["report"]
    lines = [f"On {fmt(rec['machine']['cores'])} cores, load average "
             f"{fmt(rec['machine']['load_average'])} at its end:", "```", report[0]]
    starts = [i for i, l in enumerate(report) if re.match(r"^campaign \d+:", l)] + [len(report)]
    for cid in opts["campaigns"].split(","):
        at = next((k for k, i in enumerate(starts[:-1]) if report[i].startswith(f"campaign {cid}:")), None)
        if at is None:
            raise Problem(f"no campaign {cid} in the demo's report")
        section = report[starts[at]:starts[at + 1]]
        while section and not section[-1].strip():
            section.pop()
        lines.append("")
        keep, i = True, 0
        while i < len(section):
            part = re.match(r"^  (\w+) per group ", section[i])
            if part and opts.get("metric"):
                keep = part.group(1) == opts["metric"]
            if not keep:
                i += 1
                continue
            lines.append(section[i])
            if section[i].rstrip().endswith("in CI"):
                j = i + 1
                while j < len(section) and re.match(r"^\s+\S+\s+[+-]?\d+\.\d+", section[j]):
                    j += 1
                lines += section[i + 1:j] if j - i - 1 <= 1 else [section[i + 1], "      ..."]
                i = j
                continue
            i += 1
        while lines[-1] == "":
            lines.pop()
    return lines + ["```"]


def view_demo_trust(rec, opts):
    """The demo's two trust models on the same devices (.make/demo.sh step 5), whole, as a code
    block under the machine it ran on."""
    report = rec["report"]
    at = next((i for i, l in enumerate(report) if l.startswith("Two trust models")), None)
    if at is None:
        raise Problem("no trust-models section in the demo's report (make results RESULTS=demo)")
    end = next((i for i in range(at, len(report)) if not report[i].strip()), len(report))
    return [f"On {fmt(rec['machine']['cores'])} cores:", "```"] + report[at:end] + ["```"]


def view_output(rec, opts):
    """A record's output lines as a code block, under the command that printed them."""
    return ["```", f"$ {rec['command']}"] + rec["output"] + ["```"]


VIEWS = {"demo-excerpt": view_demo_excerpt, "demo-trust": view_demo_trust, "output": view_output, "metrics": view_metrics, "grid": view_grid, "size-builds": view_size_builds,
         "size-memory": view_size_memory, "size-stack": view_size_stack,
         "repro-tables": view_repro_tables, "repro-summary": view_repro_summary,
         "repro-cells": view_repro_cells, "auc-compare": view_auc_compare}


def render(record_path, opts):
    """The generated lines of one block: the stamp line, a blank line, the view's lines."""
    if not os.path.exists(os.path.join(ROOT, record_path)):
        raise Problem(f"no record {record_path} (make results RESULTS=...)")
    rec = load(record_path)
    view = VIEWS.get(opts.get("view"))
    if view is None:
        raise Problem(f"unknown view {opts.get('view')!r} ({', '.join(VIEWS)})")
    return [f"`{rec['command']}` at {rec['commit']} ({rec['date'][:10]}), {record_path}:", ""] + view(rec, opts)


def blocks(text):
    """[(begin line index, end line index, record path, options)] of the marked blocks."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            j = next((k for k in range(i + 1, len(lines)) if lines[k] == END), None)
            if j is None:
                raise Problem(f"line {i + 1}: no {END}")
            opts = dict(o.split("=", 1) for o in m.group(2).split())
            out.append((i, j, m.group(1), opts))
            i = j
        i += 1
    return out


def regenerate(text):
    lines = text.split("\n")
    for i, j, path, opts in reversed(blocks(text)):
        lines[i + 1:j] = render(path, opts)
    return "\n".join(lines)


def documents():
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.split()
    return [f for f in files if os.path.exists(os.path.join(ROOT, f))]


def tables(check):
    stale = []
    for doc in documents():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        if "<!-- results:" not in text:
            continue
        try:
            new = regenerate(text)
        except Problem as e:
            raise Problem(f"{doc}: {e}")
        if new != text:
            stale.append(doc)
            if not check:
                with open(os.path.join(ROOT, doc), "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"results: regenerated the tables of {doc}")
    if check and stale:
        raise Problem("tables not as their records give them: " + ", ".join(stale))


def main(argv):
    try:
        if argv[:1] == ["run"]:
            # a failed producer leaves its records as they were (each names its own commit):
            # the others are still measured and the tables regenerated, then the run fails
            failed = []
            for source in argv[1:] or SOURCES:
                try:
                    produce(source)
                except Problem as e:
                    print(f"make results: {e}", file=sys.stderr)
                    failed.append(source)
            tables(check=False)
            if failed:
                raise Problem(f"{len(failed)} producer(s) failed: {', '.join(failed)}")
        elif argv[:1] == ["record"] and len(argv) >= 2:
            opts = dict(zip(argv[2::2], argv[3::2]))
            commit, date = opts["--commit"], opts["--date"]
            seconds = float(opts["--seconds"]) if "--seconds" in opts else None
            if argv[1] == "bench":
                record_bench(commit, date, seconds)
            elif argv[1] == "size":
                record_size(commit, date, seconds)
            elif argv[1] == "demo":
                record_demo(opts.get("--command", "make demo"), commit, date, seconds)
            elif argv[1] == "hello":
                record_hello(commit, date, seconds)
            elif argv[1] == "tests":
                record_tests(commit, date, seconds)
            elif argv[1].startswith("repro"):
                papers = [argv[1][6:]] if argv[1].startswith("repro-") else papers_written()
                for paper in papers:
                    record_repro(paper, opts.get("--command", "make repro"), commit, date, seconds)
        elif argv[:1] == ["tables"]:
            tables(check="--check" in argv)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Problem as e:
        print(f"make results: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
