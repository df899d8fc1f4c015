#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks tests/fuzz/targets.txt against the tree, exactly (run from test_fuzz_targets.sh).

  check_targets.py [ROOT]     ROOT: the repository (default: the current directory)

Fails, naming each problem, when: a fuzz_*.c is not a listed target or a listed target has no
fuzz_*.c (losing a target fails, so does adding one the list does not know); a target's source
(with the tests/support headers it includes) does not call one of its entries; a target has no seeds, or a corpus directory belongs to no
target; a parser declared in a header of sdk/, port/include, host-sim/collector, host-sim/mech,
host-sim/aggregator or
host-sim/sim/scenario (dpm-sim's scenario and data files) (a function whose name has decode,
parse, _open, _feed, _load or _recover) is neither a target's entry nor listed as covered or
trusted (a new parser without a target fails); a listed name is declared nowhere or listed
twice; tests/README.md's fuzz table does not list exactly the targets.
Prints the targets, one a line, then "fuzz targets: N, as listed" (exit 0) or the problems."""
import glob
import os
import re
import sys

PARSER = re.compile(r"\b([a-z][a-z0-9_]*(?:decode|parse|_open|_feed|_load|_recover)[a-z0-9_]*)\s*\(")
DECL = re.compile(r"^[a-z][^;{]*?\b([a-z][a-z0-9_]*)\s*\(", re.M)
HEADERS = ("sdk/include/**/*.h", "sdk/src/**/*.h", "port/include/**/*.h",
           "host-sim/collector/**/*.h", "host-sim/mech/*.h", "host-sim/sim/scenario/*.h",
           "host-sim/aggregator/*.h")


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def parse_list(text, problems):
    targets, others, seen = {}, {}, set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"(target|covered|trusted) ([a-z0-9_]+):\s*(.*)", line)
        if not m or not m.group(3):
            problems.append(f"targets.txt:{n}: not 'target|covered|trusted NAME: ...': {line}")
            continue
        kind, name, rest = m.groups()
        names = rest.split() if kind == "target" else [name]
        if kind == "target":
            if name in targets:
                problems.append(f"targets.txt:{n}: target {name} listed twice")
            targets[name] = names
        else:
            others[name] = kind
        for e in names:
            if e in seen:
                problems.append(f"targets.txt:{n}: {e} listed twice")
            seen.add(e)
    return targets, others


def declared(root):
    """Every function declared (or defined) at file scope in the headers."""
    names = set()
    for pattern in HEADERS:
        for h in glob.glob(os.path.join(root, pattern), recursive=True):
            text = re.sub(r"/\*.*?\*/", "", read(root, os.path.relpath(h, root)), flags=re.S)
            names.update(DECL.findall(text))
    return names


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = []
    targets, others = parse_list(read(root, "tests/fuzz/targets.txt"), problems)
    sources = {os.path.basename(p)[5:-2] for p in glob.glob(os.path.join(root, "tests/fuzz/fuzz_*.c"))}
    for t in sorted(sources - set(targets)):
        problems.append(f"tests/fuzz/fuzz_{t}.c is not a target in targets.txt")
    for t in sorted(set(targets) - sources):
        problems.append(f"target {t}: no tests/fuzz/fuzz_{t}.c")
    corpora = {os.path.basename(p) for p in glob.glob(os.path.join(root, "tests/fuzz/corpus/*"))
               if os.path.isdir(p)}
    for t in sorted(corpora - set(targets)):
        problems.append(f"tests/fuzz/corpus/{t}/ belongs to no target")
    for t, entries in sorted(targets.items()):
        seeds = glob.glob(os.path.join(root, "tests/fuzz/corpus", t, "*"))
        if not any(os.path.isfile(s) for s in seeds):
            problems.append(f"target {t}: no seeds in tests/fuzz/corpus/{t}/")
        if t in sources:
            text = read(root, f"tests/fuzz/fuzz_{t}.c")
            # and the test-support headers it includes (a round trip shared with a unit test)
            for inc in re.findall(r'^#include "([\w.]+\.h)"', text, re.M):
                if os.path.isfile(os.path.join(root, "tests/support", inc)):
                    text += read(root, f"tests/support/{inc}")
            called = set(re.findall(r"\b([a-z][a-z0-9_]*)\s*\(", text))
            for e in entries:
                if e not in called:
                    problems.append(f"target {t}: tests/fuzz/fuzz_{t}.c never calls {e}")
    names = declared(root)
    listed = {e for es in targets.values() for e in es} | set(others)
    for p in sorted(n for n in names if PARSER.search(n + "(")):
        if p not in listed:
            problems.append(f"parser {p} (declared in a header) has no fuzz target: add one, or "
                            "list it in targets.txt as covered or trusted, with why")
    for e in sorted(listed - names):
        problems.append(f"{e} is listed in targets.txt but declared in no header")
    # tests/README.md: the table whose header starts "| target | bytes from the input |"
    parts = read(root, "tests/README.md").split("\n| target | bytes from the input |", 1)
    table = parts[1].split("\n\n", 1)[0] if len(parts) == 2 else ""
    rows = set(re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M))
    if rows != set(targets):
        problems.append(f"tests/README.md's fuzz table lists {sorted(rows)}, targets.txt {sorted(targets)}")
    for t in sorted(targets):
        print(t)
    if problems:
        for p in problems:
            print("fuzz targets: " + p)
        return 1
    print(f"fuzz targets: {len(targets)}, as listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
