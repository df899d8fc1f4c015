#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The results tables the documents quote come from a record, printing TAP.

A record is a tests/results/<source>.json written by `make results` (.make/results.py): a
producer's figures with its `command`, `commit` and `date`. In every tracked markdown file, each
block between `<!-- results: RECORD view=... -->` and `<!-- /results -->` must
- name a record that exists;
- state the record's commit (its first line: "`COMMAND` at COMMIT (DATE), RECORD:");
- hold no number the record does not: every number of the block (as NUMBER reads it) must be
  one the record prints, a number of the record formatted by the generator's fmt() or a number
  inside one of the record's strings (a metric's name, a baseline, a table's source);
- be exactly what `make results` writes from the record (`results.py tables --check`).
A results table outside any block fails: a markdown table whose header, the paragraph just
before it or its section's heading names a producer (`make bench`, `make size`, `make repro`,
`dpm-sim bench`, `dpm-sim repro`, or their build/ outputs). A table that quotes such figures
but has no record yet is let through only with `<!-- results: unrecorded: REASON -->` on the
line before it; each is listed here (`# unrecorded: ...`), so what is left stays visible.

Every document's prose is held too (prose_figures()): each paragraph, table or output code
block outside the results blocks that quotes a measured figure either
- takes it from files it names: a line `<!-- results: from PATH ... -->` before it, or else the
  tree's files it names itself in inline code or a link (`tests/results/bench.json`,
  [the test](../tests/unit/test_dpauc.c)); every figure must be one of those files' numbers as
  the figure rounds it (holds(): 0.7458 holds 0.745812, 97.0 % holds 0.97, 1.42 M holds
  1,421,337, 2.9 KB holds 2,950 or 2,970, 4.58·10^5 and 4.58e5 hold 457,812, −8.2 holds -8.2:
  a figure is read without its sign; an integer exactly). A record is a measurement with its commit; a test that asserts a value, a header
  that defines a constant or a document of the tree are sources of what they state; or
- is marked `<!-- results: unrecorded: REASON -->` on the line before it (listed likewise);
  their number may only fall (UNRECORDED_MAX).
What counts as a measured figure, mechanically (figures()): the text outside results blocks and
outside fenced code with a language tag (source: ```c, ```sh), with inline code, link targets
and HTML comments removed; in it a number (ranges such as 5–6 included) is a figure when it has
a thousands separator (595,135), a decimal point (6.5), a unit after it (s, ms, min, minutes, h,
%, ×, B, KB, MB, GB, KiB, MiB, bytes, instructions, executions, M, devices/s, reports/s,
handshakes/s), or stands within three words of "measured" or before "at <commit>". Not figures:
a number joined to a word or another number by a hyphen, slash, caret, dot or underscore
(Cortex-M3, AES-256, 2-core, 2026-11-25, 19/20, 10^7, Q16.16, x86_64), one with two dots or more
(0.4.7, 127.0.0.1: versions, addresses), X.Y right after a capitalized word (Mbed TLS 3.6,
License 2.0: versions, sections), a number after "=" (ε = 1: a parameter) or after a bound (≤,
≥, <, >, below, above, at most, at least, up to, and the second of "below 95 % / 85 %": a
target, not a measurement); a plain integer otherwise (Table 2, 10 runs, exit 1, years).

Negative controls, on temporary copies of a document with a block and of its record: a figure
changed by one digit, a block naming another commit, a row dropped by hand (what only the
regeneration sees) and an unmarked results table must each fail, each by its own check; the
copy unchanged, a table marked unrecorded and a table naming no producer must pass. For the
prose rule: an unmarked paragraph with "took 12.3 s" and an output code block with a number
fail; the same paragraph marked unrecorded passes and is listed; versions, dates, parameters,
bounds, inline code and a source code block pass; a digit changed inside README.md's demo
excerpt fails. For sources: a paragraph naming a record with a figure the record holds (and
one rounding it, and a percentage of a share) passes; the same with a digit changed fails, as
does one whose `from` line names a file the tree lacks; a `from` line naming a test file passes
with the test's asserted value and fails with another."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_paths as tap  # noqa: E402  (its TAP counter)
from test_paths import ok  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
spec = importlib.util.spec_from_file_location("results", os.path.join(ROOT, ".make", "results.py"))
results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(results)

# The elements marked unrecorded may only get fewer: a new figure names its source or is recorded.
UNRECORDED_MAX = 36
PRODUCER = re.compile(r"make (bench|size|repro)\b|dpm-sim (repro|bench)\b|"
                      r"build/(bench|size)[\w.]*\.json|build/repro/")
UNRECORDED = re.compile(r"^<!-- results: unrecorded: .+ -->$")
UNIT = (r"devices/s|reports/s|handshakes/s|instructions|executions|minutes|bytes|min|ms|µs|ns|"
        r"KiB|MiB|GiB|KB|MB|GB|s|h|B|M|%|×")
NUM = r"\d+(?:,\d{3})*(?:\.\d+)*"
EXP = r"(?:e[-+−]?\d+|·10\^[-−]?\d+)"  # 2.24e-3, 4.58·10^5: one figure with its power of ten
FIGURE = re.compile(rf"(?<![\w.,/^–\-])({NUM}{EXP}?)(?:\s?–\s?({NUM}{EXP}?))?(?![\w/^\-]|[.,]\d)")
TOKEN = re.compile(rf"({NUM})(?:e([-+−]?\d+)|·10\^([-−]?\d+))?")
HASH = r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\b"
STAMP = re.compile(r"^`[^`]+` at (\S+) \([\d-]+\), (\S+):$")
def printable(rec):
    """Every number as the record prints it: its numbers through fmt(), the numbers inside its
    strings and keys as they stand."""
    out = set()

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                out.update(results.NUMBER.findall(k))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str):
            out.update(results.NUMBER.findall(x))
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out.update(results.NUMBER.findall(results.fmt(x)))
    walk(rec)
    return out


def tables_outside(text, spans):
    """[(line, what named it)] of results-looking tables outside the blocks, and [(line, reason)]
    of those marked unrecorded."""
    lines, bad, unrecorded, fence, i = text.split("\n"), [], [], False, 0
    inside = set()
    for b, e, _, _ in spans:
        inside.update(range(b, e + 1))
    while i < len(lines):
        if lines[i].startswith("```"):
            fence = not fence
        if (not fence and i not in inside and lines[i].startswith("|") and i + 1 < len(lines)
                and re.match(r"^\|[-| :]+\|$", lines[i + 1])):
            k = i - 1
            if k >= 0 and UNRECORDED.match(lines[k]):  # the lead is what comes before it
                k -= 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            s = k
            while s >= 0 and lines[s].strip() and not lines[s].startswith(("|", "#")):
                s -= 1
            h = i - 1
            while h >= 0 and not lines[h].startswith("#"):
                h -= 1
            lead = " ".join(lines[s + 1:k + 1]) + " " + lines[i] + " " + (lines[h] if h >= 0 else "")
            m = PRODUCER.search(lead)
            if m:
                if i > 0 and UNRECORDED.match(lines[i - 1]):
                    unrecorded.append((i + 1, lines[i - 1]))
                else:
                    bad.append((i + 1, m.group(0)))
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            continue
        i += 1
    return bad, unrecorded


def figures(text):
    """[figure] of one paragraph, table or output block, by the rule in the docstring."""
    text = re.sub(r"<!--.*?-->", " ", text)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    out = []
    for m in FIGURE.finditer(text):
        parts = [p for p in m.groups() if p]
        before, after = text[:m.start()], text[m.end():]
        if any(p.count(".") >= 2 for p in parts):
            continue  # a version or an address
        if re.search(r"(?:=|≤|≥|<|>|\bbelow|\babove|\bat\s+most|\bat\s+least|\bup\s+to)\s*"
                     r"(?:[\d.,]+\s?%?\s*/\s*)?$", before):
            continue  # a parameter or a bound
        if (not m.group(2) and re.fullmatch(r"[1-9]\d*\.\d+", parts[0])
                and re.search(r"(?:^|\s)[A-Z][\w.+-]*\s$", before)):
            continue  # a version or a section number after its name
        unit = re.match(rf"[ \u00a0\u202f]?(?:{UNIT})(?![\w/])", after)  # on its line
        near = (re.search(r"\bmeasured(?:\W+\w+){0,3}\W+$", before)
                or re.match(rf"(?:\W+\w+){{0,3}}?\W+(?:measured\b|at {HASH})", after))
        if any("," in p or "." in p for p in parts) or unit or near:
            out.append(m.group(0) + (unit.group(0) if unit else ""))
    return out


def elements(text, spans):
    """[(first line index, kind, lines)] of a document's paragraphs, tables, headings and code
    blocks outside its results blocks; kind "source" for fenced code with a language tag."""
    lines, out, i = text.split("\n"), [], 0
    inside = set()
    for b, e, _, _ in spans:
        inside.update(range(b, e + 1))
    while i < len(lines):
        line = lines[i]
        if i in inside or not line.strip() or re.match(r"^<!--.*-->$", line):
            i += 1
            continue
        if line.startswith("```"):
            j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), len(lines) - 1)
            out.append((i, "source" if line[3:].strip() not in ("", "text") else "output", lines[i:j + 1]))
            i = j + 1
            continue
        j = i + 1
        if not line.startswith("#"):
            while (j < len(lines) and j not in inside and lines[j].strip() and not lines[j].startswith(("```", "#"))
                   and not re.match(r"^<!--.*-->$", lines[j]) and lines[j].startswith("|") == line.startswith("|")):
                j += 1
        out.append((i, "table" if line.startswith("|") else "text", lines[i:j]))
        i = j
    return out


def values(path, root):
    """[float] of every number a source holds: a record's numbers and the numbers inside its
    strings and keys; any other file's numbers as its text writes them (commas read as
    thousands separators). PATH#PREFIX: only the record's metrics whose name starts with PREFIX
    (a record of hundreds of figures holds nearly any rounded value; a prefix keeps the check
    one that can fail). None when the source is not a file of the tree, or has no such metric."""
    path, _, prefix = path.partition("#")
    full = os.path.join(root, path)
    if not os.path.isfile(full) or os.path.isabs(path) or ".." in path.split("/"):
        return None
    with open(full, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not path.endswith(".json"):
        return [float(t.replace(",", "")) for t in results.NUMBER.findall(text)]
    out = []
    record = json.loads(text)
    if prefix:
        metrics = record.get("metrics", []) if isinstance(record, dict) else []
        record = [m for m in metrics if str(m.get("name", "")).startswith(prefix)]
        if not record:
            return None

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                out.extend(float(t.replace(",", "")) for t in results.NUMBER.findall(k))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str):
            out.extend(float(t.replace(",", "")) for t in results.NUMBER.findall(x))
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out.append(float(x))
    walk(record)
    return out


# How a figure's unit scales the number a source holds: a share printed as a percentage,
# a count in millions, a size in kilobytes (either kind).
SCALES = {"%": (1, 100), "M": (1, 1e-6), "KB": (1, 1e-3, 1 / 1024), "KiB": (1, 1 / 1024),
          "MB": (1, 1e-6, 1 / 1048576), "MiB": (1, 1 / 1048576)}


def holds(vals, figure):
    """True when every number of a figure is one of vals as the figure rounds it: 0.7458 holds
    0.745812, 97.0 % holds 0.97, 1.42 M holds 1,421,337; an integer must be exact."""
    unit = re.search(r"[^\d\s,.–]+$", figure)
    scales = SCALES.get(unit.group(0) if unit else "", (1,))
    for t, e1, e2 in TOKEN.findall(figure):
        want = float(t.replace(",", ""))
        dec = len(t.split(".")[1]) if "." in t else 0
        power = 10.0 ** int((e1 or e2 or "0").replace("−", "-"))
        # a figure's number carries no sign (FIGURE reads none): −8.2 holds -8.2
        if not any(round(abs(v) * s / power, dec) == want for v in vals for s in scales):
            return False
    return True


SOURCE_MARK = re.compile(r"^<!-- results: from ((?:\S+ ?)+) -->$")
NAMED = re.compile(r"(?:`|\]\()((?:tests|sdk|host-sim|port|examples|\.make)/[\w./-]+?)(?:#[\w-]*)?(?:`|\))")


def sources(lines, i, body, root):
    """The files an element takes its figures from: those a `<!-- results: from PATH ... -->`
    line before it names, else the tree's files it names itself (inline code or a link)."""
    m = SOURCE_MARK.match(lines[i - 1]) if i > 0 else None
    if m:
        return m.group(1).split()
    named = [p for p in NAMED.findall("\n".join(body)) if os.path.isfile(os.path.join(root, p))]
    return list(dict.fromkeys(named))


def prose_figures(text, spans, root=ROOT):
    """[(line, figures)] of elements quoting figures that no source they name holds, and
    [(line, reason)] of those marked unrecorded."""
    lines, bad, unrecorded = text.split("\n"), [], []
    for i, kind, body in elements(text, spans):
        if kind == "source":
            continue
        got = figures("\n".join(body[1:-1] if kind == "output" else body))
        if not got:
            continue
        if i > 0 and UNRECORDED.match(lines[i - 1]):
            unrecorded.append((i + 1, lines[i - 1]))
            continue
        named = sources(lines, i, body, root)
        vals = [v for p in named for v in (values(p, root) or [])]
        missing = [p for p in named if values(p, root) is None]
        if missing:
            bad.append((i + 1, [f"names {', '.join(missing)}, not a file of the tree (or a "
                                "record with no metric of that #prefix)"]))
            continue
        loose = [g for g in got if not holds(vals, g)]
        if loose:
            bad.append((i + 1, loose if not named else [f"{', '.join(loose[:6])} (not in {', '.join(named)})"]))
    return bad, unrecorded


def check_doc(doc, text, root, report=True, prose=False, listed=None):
    """[problem] of one document's blocks and tables (each check reported as a TAP line when
    report); records are read under root."""
    problems = []

    def check(cond, what, diag):
        if report:
            ok(cond, what, diag)
        if not cond:
            problems.append(what)
        return cond

    results.ROOT = root
    try:
        spans = results.blocks(text)
    except results.Problem as e:
        check(False, f"{doc}: its blocks are well formed", [str(e)])
        return problems
    lines = text.split("\n")
    for b, e, path, opts in spans:
        where = f"{doc}:{b + 1} ({path} {opts.get('view')})"
        full = os.path.join(root, path)
        if not check(os.path.exists(full), f"{where}: the record exists", [path]):
            continue
        with open(full, encoding="utf-8") as f:
            rec = json.load(f)
        body = lines[b + 1:e]
        m = STAMP.match(body[0]) if body else None
        check(bool(m) and m.group(1) == rec["commit"] and m.group(2) == path,
              f"{where}: names the record's commit {rec['commit']}", [body[0] if body else "(empty)"])
        known = printable(rec)
        strange = [f"line {b + 2 + k}: {t}" for k, line in enumerate(body[1:], 1)
                   for t in results.NUMBER.findall(line) if t not in known]
        check(not strange, f"{where}: every number is in the record", strange)
        try:
            want = results.render(path, opts)
        except results.Problem as err:
            want = [f"(cannot render: {err})"]
        diff = [f"line {b + 2 + k}: has {have!r}, make results writes {w!r}"
                for k, (have, w) in enumerate(zip(body, want)) if have != w]
        if len(body) != len(want):
            diff.append(f"{len(body)} lines, make results writes {len(want)}")
        check(not diff, f"{where}: is what make results writes from the record", diff)
    bad, unrecorded = tables_outside(text, spans)
    check(not bad, f"{doc}: no results table outside a results block",
          [f"line {line}: a table under {what}, in no <!-- results: ... --> block" for line, what in bad])
    if prose:
        pbad, punrec = prose_figures(text, spans, root)
        check(not pbad, f"{doc}: every measured figure is in a results block, in a source it names "
              "or marked unrecorded",
              [f"line {line}: {', '.join(got[:6])}" for line, got in pbad])
        unrecorded = sorted(dict(unrecorded + punrec).items())
    if report:
        for line, reason in unrecorded:
            print(f"# unrecorded: {doc}:{line}: {reason[len('<!-- results: unrecorded: '):-4]}")
    if listed is not None:
        listed.extend(f"{doc}:{line}" for line, _ in unrecorded)
    return problems


def prose_controls():
    """The prose rule's negative controls, on texts and on a copy of README.md's demo block."""
    took = "The first build took 12.3 s here.\n"
    mark = "<!-- results: unrecorded: a control -->\n"

    def prose(text):
        return prose_figures(text, results.blocks(text))

    bad, unrec = prose("# Copy\n\n" + took)
    ok(len(bad) == 1 and "12.3 s" in bad[0][1], "control: an unmarked paragraph with 'took 12.3 s' fails",
       [f"bad {bad}"])
    bad, unrec = prose("# Copy\n\n" + mark + took)
    ok(not bad and len(unrec) == 1, "control: the same paragraph marked unrecorded passes and is listed",
       [f"bad {bad}, listed {unrec}"])
    bad, _ = prose("# Copy\n\n```\n$ hello\nhello: a report of 38 bytes\n```\n")
    ok(len(bad) == 1, "control: an unmarked output code block with a figure fails", [f"bad {bad}"])
    fine = ("# Copy 1.2\n\nMbed TLS 3.6 and nanopb 0.4.7 on 127.0.0.1, Cortex-M3, AES-256, a 2-core "
            "machine, 2026-11-25, Eq. 19/20, K = 10^7 at ε = 1.5, `12.3 s`, coverage below 95 %, "
            "value ≤ 1.5 KB, 10 runs of Table 2, exit 1 (2022).\n\n```c\nstatic uint8_t m[8,192]; "
            "/* 1.5 s */\n```\n")
    fine += "\nThe gate fails below 95 % / 85 %.\n"
    bad, _ = prose(fine)
    ok(not bad, "control: versions, addresses, names, dates, parameters, bounds, inline and source code pass",
       [f"bad {bad}"])
    for text, want in (("about 5–6 minutes", "5–6 minutes"), ("595,135 reports", "595,135"),
                       ("load average 6.5", "6.5"), ("131 measured", "131"), ("378 at c0aec07", "378"),
                       ("2.08–2.78 M tuple devices/s", "2.08–2.78 M"), ("96.9 %", "96.9 %")):
        ok(figures(text) == [want], f"control: {text!r} is the figure {want!r}", [f"got {figures(text)}"])
    for text, want in (("about 4.58·10^5 devices", "4.58·10^5"), ("2.24e-3 against", "2.24e-3")):
        ok(figures(text) == [want], f"control: {text!r} is the figure {want!r}", [f"got {figures(text)}"])
    for text in ("a 2,000,000-instruction loop", "at\nmost 65,536 reports", "line 2\ns.scn"):
        ok(not figures(text), f"control: {text!r} holds no figure (a compound, a bound across "
           "lines, a number ending its line)", [f"got {figures(text)}"])
    ok(holds([457812.0], "4.58·10^5") and not holds([457812.0], "4.59e5") and holds([0.00224], "2.24e-3"),
       "control: a figure with its power of ten holds what it rounds, and only that")
    # sources: a record and a file of the tree named, on a copy of the tree's files
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "tests", "results"))
        os.makedirs(os.path.join(t, "tests", "unit"))
        with open(os.path.join(t, "tests", "results", "x.json"), "w", encoding="utf-8") as f:
            json.dump({"commit": "abc1234", "m": {"us": 5902, "share": 0.9697, "auc": 0.745812},
                       "metrics": [{"name": "a.us", "value": 5902}, {"name": "b.share", "value": 0.9697}]}, f)
        with open(os.path.join(t, "tests", "unit", "test_x.c"), "w", encoding="utf-8") as f:
            f.write("CHECK(auc == 0.764583);\n")
        named = "In `tests/results/x.json` a report took {} instructions, covered {} and {}.\n"
        for what, text, want_bad in (
                ("a paragraph naming its record, with figures it holds", named.format("5,902", "97.0 %", "0.7458"), False),
                ("the same with a digit changed", named.format("5,903", "97.0 %", "0.7458"), True),
                ("the same with a rounding the record does not hold", named.format("5,902", "96.0 %", "0.7458"), True),
                ("a from line naming a missing file", "<!-- results: from tests/results/y.json -->\nIt took 5,902 instructions.\n", True),
                ("a from line naming a test, with its asserted value", "<!-- results: from tests/unit/test_x.c -->\nThe AUC is 0.764583.\n", False),
                ("a from line naming a test, with another value", "<!-- results: from tests/unit/test_x.c -->\nThe AUC is 0.764584.\n", True),
                ("a from line naming a record's metrics by prefix, with one of theirs", "<!-- results: from tests/results/x.json#a. -->\nIt took 5,902 instructions.\n", False),
                ("the same with a figure only another prefix holds", "<!-- results: from tests/results/x.json#a. -->\nIt covered 97.0 %.\n", True),
                ("a from line naming a prefix no metric has", "<!-- results: from tests/results/x.json#c. -->\nIt took 5,902 instructions.\n", True)):
            text = "# Copy\n\n" + text
            bad, _ = prose_figures(text, results.blocks(text), t)
            ok(bool(bad) == want_bad, f"control: {what} {'fails' if want_bad else 'passes'}",
               [f"bad {bad}"])
    # a digit changed inside README.md's demo block (a copy, with the record)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    demo = [s for s in results.blocks(readme) if s[2] == "tests/results/demo.json"]
    if not ok(len(demo) == 1, "control: README.md has the demo's block"):
        return
    b, e, path, _ = demo[0]
    lines = readme.split("\n")
    block = lines[b:e + 1]
    k = next(k for k, line in enumerate(block) if "reports stored" in line)
    changed = block[:k] + [re.sub(r"(\d)(,\d{3} reports stored)", lambda m: str((int(m.group(1)) + 1) % 10) +
                                  m.group(2), block[k], count=1)] + block[k + 1:]
    for what, body, want_bad in (("README.md's demo block unchanged", block, False),
                                 ("README.md's demo block with a digit changed", changed, True)):
        with tempfile.TemporaryDirectory() as t:
            os.makedirs(os.path.join(t, os.path.dirname(path)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, path), os.path.join(t, path))
            got = check_doc("copy.md", "# Copy\n\n" + "\n".join(body) + "\n", t, report=False, prose=True)
        ok(any("every number is in the record" in g for g in got) if want_bad else not got,
           f"control: {what} {'fails' if want_bad else 'passes'}", got or ["nothing flagged"])


def main():
    docs = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True,
                          text=True).stdout.split()
    if not docs:  # a release tree without git: its files
        docs = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(ROOT)
                for f in fs if f.endswith(".md") and "/build" not in d]
    nblocks = 0
    example = None
    listed = []
    for doc in sorted(docs):
        path = os.path.join(ROOT, doc)
        if not os.path.exists(path) or doc.startswith("build/"):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        spans = results.blocks(text) if "<!-- results:" in text else []
        nblocks += len(spans)
        if spans and example is None:
            example = (doc, text, spans[0])
        check_doc(doc, text, ROOT, prose=True, listed=listed)
    ok(nblocks > 0, f"the documents hold results blocks ({nblocks})")
    ok(len(listed) <= UNRECORDED_MAX, f"{len(listed)} elements marked unrecorded, at most "
       f"{UNRECORDED_MAX}", ["a new figure: record it (make results) or name the file it comes "
                             "from; lower UNRECORDED_MAX when one gets recorded"])
    if len(listed) < UNRECORDED_MAX:
        print(f"# {UNRECORDED_MAX - len(listed)} fewer unrecorded: lower UNRECORDED_MAX to {len(listed)}")

    # Negative controls: a temporary copy of a document's first block and of its record.
    if example is None:
        ok(False, "controls: a document with a results block to copy")
    else:
        doc, text, (b, e, path, opts) = example
        lines = text.split("\n")
        block = "\n".join(lines[b:e + 1])

        def control(what, new_block, want_bad, by=""):
            """The copy fails (by the check whose name holds `by`) or passes."""
            with tempfile.TemporaryDirectory() as t:
                os.makedirs(os.path.join(t, os.path.dirname(path)), exist_ok=True)
                shutil.copy(os.path.join(ROOT, path), os.path.join(t, path))
                got = check_doc("copy.md", f"# Copy\n\n{new_block}\n", t, report=False)
            hit = any(by in g for g in got)
            ok(hit if want_bad else not got,
               f"control: {what} {'fails: ' + by if want_bad else 'passes'}", got or ["nothing flagged"])

        control(f"{doc}'s first block unchanged", block, False)
        body = lines[b + 2:e]
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            known = printable(json.load(f))
        # a figure of the table changed by one digit into a number the record does not print
        mutated = None
        for k, line in enumerate(body):
            for m in results.NUMBER.finditer(line):
                tok = m.group(0)
                for p, ch in enumerate(tok):
                    if ch.isdigit():
                        alt = tok[:p] + str((int(ch) + 1) % 10) + tok[p + 1:]
                        if alt not in known and not alt.startswith("0"):
                            mutated = (k, line[:m.start()] + alt + line[m.end():])
                            break
                if mutated:
                    break
            if mutated:
                break
        if ok(mutated is not None, "control: a figure of the block can be changed by one digit"):
            k, line = mutated
            changed = lines[b:b + 2] + body[:k] + [line] + body[k + 1:] + [lines[e]]
            control("a figure changed by one digit", "\n".join(changed), True,
                    "every number is in the record")
        other = re.sub(r" at (\S+) ", " at 1234abc ", lines[b + 1], count=1)
        control("a block naming another commit",
                "\n".join([lines[b], other] + lines[b + 2:e + 1]), True, "names the record's commit")
        # a hand edit the number check alone cannot see: a row dropped
        if len(body) > 3:
            control("a block with a row dropped by hand",
                    "\n".join(lines[b:b + 2] + body[:-1] + [lines[e]]), True, "is what make results writes")
        control("an unmarked results table", block + "\n\nFigures of `make bench` (by hand):\n\n"
                "| metric | value |\n|---|---|\n| `noise.rr.eps1` | 7.7 |\n", True,
                "no results table outside")
        control("a results table marked unrecorded (listed, not failed)", block +
                "\n\nFigures of `make bench`:\n\n<!-- results: unrecorded: a control -->\n"
                "| metric | value |\n|---|---|\n| `noise.rr.eps1` | 7.7 |\n", False)
        bad, unrec = tables_outside("Figures of `make bench`:\n\n<!-- results: unrecorded: a control -->"
                                    "\n| a |\n|---|\n| 1 |\n", [])
        ok(not bad and len(unrec) == 1, "control: a table marked unrecorded under a producer is listed",
           [f"bad {bad}, listed {unrec}"])
        control("a table naming no producer", block + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", False)
    prose_controls()
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
