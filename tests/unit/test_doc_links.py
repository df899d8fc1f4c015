#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Every relative link in the documents and every section reference in the code resolves,
printing TAP.

Links: in every tracked markdown file, each `[text](target)` or `![alt](target)` whose target
has no scheme (http:, mailto:, ...) names a file that exists, relative to the document; a
`#anchor` (alone: the document itself) must be the anchor of one of the target document's
headings, made as GitHub makes it (lowercase; every character but letters, digits, `_`, `-` and
spaces dropped; spaces to `-`; a repeated heading gets `-1`, `-2`, ...). Fenced code is not read.

Section references: in every tracked text file (sources, scripts, scenario and reference files,
documents), each `§` must follow either `RFC <number> ` (a published standard) or `<file>.md `
naming a markdown file of the repository (relative to the repository root, else to the citing
file), and the text after the `§` must start with one of that file's headings (or, for a
heading "Name (detail)", with its Name), followed by a character that is not a letter, digit or
`_` (`sdk/docs/tuple.md §Thresholds:`). So a reference
to a paper extract outside the repository ("spec §3.1", "DESIGN.md §4") fails, and so does a
heading renamed under its citations.

Negative controls, on a temporary copy: a link to a missing file, a link to a missing anchor,
a bare `§`, "spec §3.1", a reference to a heading that does not exist and one to a file outside
the repository must each be flagged, and the forms above must pass."""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_paths as tap  # noqa: E402  (its TAP counter, and the same file list: git's, or a
from test_paths import ok, tracked, write  # noqa: E402  release tree's)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SELF = "tests/unit/test_doc_links.py"  # its docstring and controls name broken references
LINK = re.compile(r"!?\[[^\]]*\]\(([^()\s]+)\)")
README_MAX_LINES = 300
REF = re.compile(r"(?:(RFC \d+)|([\w./-]+\.md)) §$")
def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return None


def headings(text):
    """[(line, title)] of the markdown headings outside fenced code."""
    out, fence = [], False
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                out.append((no, m.group(1)))
    return out


def anchors(text):
    seen, out = {}, set()
    for _, title in headings(text):
        a = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else f"{a}-{k}")
    return out


def prose_lines(text, markdown):
    """(line number, line) outside fenced code in markdown; every line elsewhere."""
    fence = False
    for no, line in enumerate(text.splitlines(), 1):
        if markdown and line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield no, line


def broken_links(root, files):
    bad = []
    for rel in files:
        if not rel.endswith(".md"):
            continue
        text = read(os.path.join(root, rel))
        if text is None:
            continue
        for no, line in prose_lines(text, True):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(root, os.path.dirname(rel), path)) if path \
                    else os.path.join(root, rel)
                if not os.path.exists(full):
                    bad.append(f"{rel}:{no}: {target}: no such file")
                elif anchor and (not full.endswith(".md")
                                 or anchor not in anchors(read(full) or "")):
                    bad.append(f"{rel}:{no}: {target}: no such heading")
    return bad


def broken_refs(root, files):
    bad, cache = [], {}
    for rel in files:
        text = read(os.path.join(root, rel))
        if text is None or "§" not in text:
            continue
        for no, line in prose_lines(text, False):
            for m in re.finditer("§", line):
                before, after = line[:m.end()], line[m.end():]
                r = REF.search(before)
                if not r:
                    bad.append(f"{rel}:{no}: {line.strip()[:90]}: a § that names no RFC and "
                               "no document of the repository")
                    continue
                if r.group(1):
                    continue
                doc = r.group(2)
                cands = [os.path.normpath(os.path.join(root, doc)),
                         os.path.normpath(os.path.join(root, os.path.dirname(rel), doc))]
                full = next((c for c in cands if os.path.isfile(c)), None)
                if full is None:
                    bad.append(f"{rel}:{no}: {doc} §: no such file in the repository")
                    continue
                if full not in cache:  # a heading "Name (`detail`)" may be cited as "Name"
                    cache[full] = {c for _, t in headings(read(full) or "")
                                   for c in (t, t.split(" (")[0])}
                if not any(after.startswith(t) and not re.match(r"\w", after[len(t):len(t) + 1])
                           for t in cache[full]):
                    bad.append(f"{rel}:{no}: {doc} §{after[:40]}: no such heading in {doc}")
    return bad


def main():
    files = [f for f in tracked(ROOT) if f != SELF]
    docs = [f for f in files if f.endswith(".md")]
    refs = [f for f in files if "§" in (read(os.path.join(ROOT, f)) or "")]
    ok(len(docs) >= 30, f"{len(docs)} tracked markdown files to read")
    ok(len(refs) >= 40, f"{len(refs)} tracked files with § references to read")
    bad = broken_links(ROOT, files)
    ok(not bad, "every relative link in the documents names an existing file and heading", bad)
    bad = broken_refs(ROOT, files)
    ok(not bad, "every § reference names an RFC, or a heading of a document in the repository",
       bad)
    # The front page stays a front page (issue 33: the pitch, two commands, hello, a tour);
    # detail goes to the documents it links.
    n = len(read(os.path.join(ROOT, "README.md")).splitlines())
    ok(n <= README_MAX_LINES, f"README.md has {n} lines, at most {README_MAX_LINES}")

    # Negative controls on a copy of the repository's documents and citing files: the copy
    # passes, and one broken link or one paper-extract reference in it fails.
    with tempfile.TemporaryDirectory() as t:
        for rel in files:
            if rel.endswith(".md") or rel in refs:
                os.makedirs(os.path.join(t, os.path.dirname(rel)), exist_ok=True)
                shutil.copy(os.path.join(ROOT, rel), os.path.join(t, rel))
        # link targets that are not documents (images, sources): empty files; in a release tree
        # (no .git) the file list leaves out dot-folders, which documents link to (.make/)
        dotted = [os.path.relpath(os.path.join(top, n), ROOT)
                  for d in os.listdir(ROOT) if d.startswith(".") and d not in (".git",)
                  and os.path.isdir(os.path.join(ROOT, d))
                  for top, _, names in os.walk(os.path.join(ROOT, d)) for n in names]
        for rel in files + dotted:
            if not os.path.exists(os.path.join(t, rel)):
                write(t, rel, "")
        ok(not broken_links(t, files) and not broken_refs(t, files),
           "control: the copy passes as the repository does")
        with open(os.path.join(t, "README.md"), "a", encoding="utf-8") as f:
            f.write("\n[moved](sdk/docs/tuple.md#no-such-section) [gone](sdk/docs/gone.md)\n")
        b = broken_links(t, files)
        ok(len(b) == 2, "control: a broken anchor and a missing file in the copy's README fail", b)
        with open(os.path.join(t, "sdk/include/dpm/expert/ustat.h"), "a", encoding="utf-8") as f:
            f.write("/* spec §3.3 */\n/* sdk/docs/ustat.md §No such heading */\n")
        b = broken_refs(t, files)
        ok(len(b) == 2, "control: \"spec §3.3\" and a missing heading in the copy's ustat.h fail",
           b)

    # Negative controls: a small tree, good forms first, then each broken form alone.
    doc = ("# Title\n\n## Thresholds\n\nx\n\n### Rules the code keeps (and tests)\n\n"
           "## Thresholds\n\n```\n## not a heading\n```\n")
    good_md = ("[a](docs/t.md) [b](docs/t.md#thresholds) [c](docs/t.md#thresholds-1) "
               "[d](#top-level) ![e](docs/t.md) [f](https://example.invalid/x#y)\n"
               "[g](docs/t.md#rules-the-code-keeps-and-tests)\n\n# Top level\n")
    good_c = ("/* docs/t.md §Thresholds: x; docs/t.md §Rules the code keeps, RFC 9180 §5.2 */\n")

    def control(what, md=None, c=None, extra=None, want_bad=True):
        with tempfile.TemporaryDirectory() as t:
            write(t, "docs/t.md", doc)
            write(t, "README.md", md if md is not None else good_md)
            write(t, "src/a.c", c if c is not None else good_c)
            if extra:
                write(t, *extra)
            fs = ["docs/t.md", "README.md", "src/a.c"] + ([extra[0]] if extra else [])
            b = broken_links(t, fs) + broken_refs(t, fs)
            ok(bool(b) == want_bad, f"control: {what} {'is flagged' if want_bad else 'passes'}",
               b or ["nothing flagged"])

    control("the good forms (links, anchors, a repeated heading, RFC and document §)",
            want_bad=False)
    control("a document citing a sibling by its own folder", extra=(
        "docs/u.md", "see t.md §Thresholds and [t](t.md#thresholds).\n"), want_bad=False)
    control("a link to a missing file", md="[a](docs/missing.md)\n")
    control("a link to a missing anchor", md="[a](docs/t.md#no-such-heading)\n")
    control("an anchor into fenced code", md="[a](docs/t.md#not-a-heading)\n")
    control("a bare §", c="/* the table of §3 */\n")
    control("a paper extract's \"spec §3.1\"", c="/* spec §3.1 */\n")
    control("a heading that does not exist", c="/* docs/t.md §Threshold tables */\n")
    control("a heading's prefix that runs on into a word", c="/* docs/t.md §Thresholdsx */\n")
    control("a document outside the repository", c="/* DESIGN.md §4 */\n")
    control("a second § that names no document", c="/* docs/t.md §Thresholds, §Title */\n")
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
