#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Every host-sim/... and sdk/src/... path the repository names exists, printing TAP.

Read: every tracked text file (README.md, the rooms' README.md files, sdk/CHANGES.md, comments in
the sources, the tests, the scripts and the Makefile). A path is `host-sim/` or `sdk/src/`
followed by path characters; a trailing `:LINE` or `:A-B` and trailing punctuation are dropped.
`x.[ch]` means x.c and x.h, a name without extension x.c or x.h (a module), `{a,b}` each of a and b, `*` at least one match; a path with a
placeholder (`<name>`, `%`, `$`) is skipped. A path that does not exist fails with the file and
line that names it, so a moved or renamed file cannot leave a stale mention behind.
Not read: this file and tests/unit/test_host_deps.py, whose negative controls name throw-away
trees.

Negative controls: a copy naming a path that does not exist (the pre-rooms
host-sim/collector/batch.c), a `.[ch]` pair with one half missing and a `*` that matches nothing
must each be flagged, and the forms above must pass where their files exist."""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PATH = re.compile(r"(?<![\w/.-])((?:host-sim|sdk/src)/[\w./*\[\]{},<>%$-]*)")
SKIP = {"tests/unit/test_paths.py", "tests/unit/test_host_deps.py"}
n = 0
failed = 0


def ok(cond, what, diag=()):
    global n, failed
    n += 1
    print(f"{'ok' if cond else 'not ok'} {n} - {what}", flush=True)
    if not cond:
        failed += 1
        for line in list(diag)[:30]:
            print(f"# {line}", flush=True)
    return cond


def expand(path):
    """The concrete paths a mention stands for: braces and [ch] expanded (globs stay globs)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if m:
        return [p for alt in m.group(1).split(",")
                for p in expand(path[:m.start()] + alt + path[m.end():])]
    if ".[ch]" in path:
        return expand(path.replace(".[ch]", ".c", 1)) + expand(path.replace(".[ch]", ".h", 1))
    return [path]


def clean(token):
    keep = token.endswith(".[ch]")
    token = re.sub(r"[.,:;)\]`'\"]+$", "", token) + ("]" if keep else "")
    token = re.sub(r":\d+(-\d+)?$", "", token)
    if token.count("{") != token.count("}"):  # a brace list cut by the regex: keep the head
        token = token[:token.index("{")]
    return re.sub(r"[.,:;)`'\"]+$", "", token)


def missing(root, files):
    """['file:line: path', ...] for every named path that does not exist under root."""
    bad = []
    for rel in files:
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lines = f.readlines()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        for no, line in enumerate(lines, 1):
            for token in PATH.findall(line):
                path = clean(token)
                if re.search(r"[<>%$]", path) or path.rstrip("/") in ("host-sim", "sdk/src"):
                    continue
                for p in expand(path):
                    full = os.path.join(root, p)
                    found = glob.glob(full) if "*" in p else os.path.exists(full) or (
                        # a module named without its extension (host-sim/estimate/fedauc)
                        not os.path.splitext(p)[1] and (os.path.exists(full + ".c")
                                                        or os.path.exists(full + ".h")))
                    if not found:
                        bad.append(f"{rel}:{no}: {p}")
    return bad


def tracked(root):
    """git's file list in a checkout; in a release tree (make distcheck: no .git) every file
    but build/ and dot-folders, which is what the release holds."""
    r = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                       text=True)
    if r.returncode == 0 and os.path.realpath(r.stdout.strip()) == os.path.realpath(root):
        r = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"git ls-files: {r.stderr}")
        files = r.stdout.splitlines()
    else:
        files = []
        for top, dirs, names in os.walk(root):
            rel = os.path.relpath(top, root)
            dirs[:] = [d for d in dirs if not d.startswith(".") and (rel != "." or d != "build")]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return [f for f in files if f not in SKIP and not f.startswith("build/")]


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    files = tracked(ROOT)
    ok(len(files) > 300, f"{len(files)} tracked files to read")
    bad = missing(ROOT, files)
    ok(not bad, "every host-sim/ and sdk/src/ path the repository names exists", bad)

    with tempfile.TemporaryDirectory() as t:
        for rel in ("host-sim/estimate/roc.c", "host-sim/estimate/roc.h", "host-sim/mech/base/bounds.h",
                    "host-sim/scenarios/paper-dpauc.ref", "host-sim/collector/api/request.h",
                    "sdk/src/mech/tuple.c"):
            write(t, rel, "\n")
        good = ("`host-sim/estimate/roc.[ch]`, host-sim/mech/base/bounds.h:12-20, "
                "host-sim/scenarios/paper-*.ref. host-sim/{mech/base/bounds.h,estimate/roc.c} "
                "host-sim/sim/mech_<name>.c (sdk/src/mech/tuple.c:40) host-sim/collector/api/ "
                "host-sim/estimate/roc\n")
        write(t, "README.md", good)
        b = missing(t, ["README.md"])
        ok(not b, "control: .[ch], :LINE-LINE, *, {a,b}, <placeholder>, a folder, a module pass", b)
        for what, text, want in (
                ("a moved file's old path", "see host-sim/collector/batch.c.\n",
                 "host-sim/collector/batch.c"),
                ("a .[ch] pair with one half missing", "host-sim/mech/base/bounds.[ch]\n",
                 "host-sim/mech/base/bounds.c"),
                ("a module with neither .c nor .h", "host-sim/estimate/rocx\n",
                 "host-sim/estimate/rocx"),
                ("a * that matches nothing", "host-sim/scenarios/paper-*.scn\n",
                 "host-sim/scenarios/paper-*.scn"),
                ("a missing sdk/src file", "sdk/src/mech/tuple_ops.c\n", "sdk/src/mech/tuple_ops.c")):
            write(t, "README.md", text)
            b = missing(t, ["README.md"])
            ok(b == [f"README.md:1: {want}"], f"control: {what} is flagged", b or ["nothing"])
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
