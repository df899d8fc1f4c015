#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""host-sim's dependency rules, checked on the sources and on the built objects:

1. No cycle between host-sim modules. A module is a file's path without its extension (foo.c and
   foo.h are one module); its edges are the #include lines of both files that resolve to another
   host-sim module. A cycle fails, with the modules on it.
2. No include of an SDK-private header: host-sim sees the SDK only through its public headers
   (sdk/include, port/include, sdk/proto). An include that resolves to a header under sdk/src
   fails (host-sim is also compiled without -Isdk/src: this names the offender).
3. No cycle between host-sim's objects either: object A uses a symbol object B defines (nm), so
   A depends on B. This sees what include lines cannot (a header declaring a function another
   module defines, two modules calling each other).
4. The rooms (host-sim/README.md): a room is a folder holding sources; its rank comes from the
   room table of host-sim/README.md. A file includes only its own room and rooms of lower rank,
   and collector/* and sim/* never include each other (no back-arrow); there is no cycle between
   rooms; no room holds more than 25 source files (.c/.h); every folder holding .c/.h/.py has a
   README.md whose card (the lines before its first "## " heading, if any: a program's room may
   go on with its user guide, as sim/ does) is at most 60 lines with the lines "Owns:", "May
   call:" (naming every room its files include), "Entry points:" and "Tests:". The back-arrows that only the host mechanism module
   (issue 29, package B) removes are allowed by file:line in ALLOWED below; an entry that no
   longer occurs fails, so that list can only shrink.

Negative controls: a small tree with a two-module include cycle, one with an include of a
private SDK header, and two objects calling each other (compiled with $CC) must each be flagged;
for the rooms, a back-arrow, a cycle between two rooms, a collector -> sim include, a 26-file
room, a 61-line README, a README without "Tests:" and a stale allow-list entry must each fail.
Run from the repository root; OUT (default build/host) holds the objects (make test builds them
first)."""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.environ.get("OUT", "build/host")
CC = os.environ.get("CC", "gcc")
NM = os.environ.get("NM", "nm")
PUBLIC = ["sdk/include", "port/include", "sdk/proto"]
PRIVATE = ["sdk/src/internal", "sdk/src"]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
MAX_ROOM_FILES = 25
MAX_README_LINES = 60
README_LINES = ("Owns:", "May call:", "Entry points:", "Tests:")
# The room table of host-sim/README.md: "| rank | `room` | ...".
RANK_ROW = re.compile(r"^\|\s*(\d+(?:\.\d+)?)\s*\|\s*`([a-z_/]+)`\s*\|", re.M)
FAMILIES = ("collector", "sim")  # the two programs: neither includes the other's rooms
# Back-arrows only the host mechanism module (package B of issue 29) removes: (file, line, the
# header it includes). Each must still occur there; remove an entry with the include it allows.
ALLOWED = []

n = 0
failed = 0


def ok(cond, what, diag=()):
    global n, failed
    n += 1
    print(f"{'ok' if cond else 'not ok'} {n} - {what}", flush=True)
    if not cond:
        failed += 1
        for line in list(diag)[:20]:
            print(f"# {line}", flush=True)
    return cond


def sources(root):
    return sorted(glob.glob(os.path.join(root, "host-sim", "**", "*.[ch]"), recursive=True))


def include_graph(root):
    """(graph module -> set of modules, list of private-include violations)."""
    graph, bad = {}, []
    for path in sources(root):
        rel = os.path.relpath(path, root)
        mod = os.path.splitext(rel)[0]
        graph.setdefault(mod, set())
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for quote, name in INCLUDE.findall(text):
            dirs = ([os.path.dirname(rel)] if quote == '"' else []) + ["host-sim"] + PUBLIC
            found = next((os.path.join(d, name) for d in dirs
                          if os.path.isfile(os.path.join(root, d, name))), None)
            private = next((os.path.join(d, name) for d in PRIVATE
                            if os.path.isfile(os.path.join(root, d, name))), None)
            if "sdk/src" in name or (found is None and private is not None):
                bad.append(f"{rel}: #include {quote}{name}: an SDK-private header "
                           f"({private or name}); use the public API (sdk/include)")
                continue
            if found is not None and found.startswith("host-sim/"):
                target = os.path.splitext(os.path.normpath(found))[0]
                if target != mod:
                    graph[mod].add(target)
    return graph, bad


def find_cycle(graph):
    """A cycle as a list of nodes (first == last), or None."""
    color, stack = {}, []

    def visit(v):
        color[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if color.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if color.get(w) is None:
                c = visit(w)
                if c:
                    return c
        stack.pop()
        color[v] = 2
        return None

    for v in sorted(graph):
        if color.get(v) is None:
            c = visit(v)
            if c:
                return c
    return None


def object_graph(objects, root_of):
    """Module graph from nm: a module depends on the module defining a symbol it uses."""
    defined, used = {}, {}
    for obj in objects:
        mod = root_of(obj)
        r = subprocess.run([NM, obj], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{NM} {obj}: {r.stderr}")
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                used.setdefault(mod, set()).add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRCG":
                defined[parts[2]] = mod
    graph = {m: set() for m in set(defined.values()) | set(used)}
    for mod, syms in used.items():
        for s in syms:
            target = defined.get(s)
            if target is not None and target != mod:
                graph[mod].add(target)
    return graph


def ranks(root):
    """{room: rank} from the room table of host-sim/README.md."""
    path = os.path.join(root, "host-sim", "README.md")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return {room: float(rank) for rank, room in RANK_ROW.findall(f.read())}


def room_of(rel):
    """host-sim/collector/ingest/batch.c -> collector/ingest"""
    return os.path.dirname(os.path.relpath(rel, "host-sim"))


def includes(root):
    """(file, line, name, the host-sim file it resolves to), for every host-sim include of one."""
    out = []
    for path in sources(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                quote, name = m.groups()
                dirs = ([os.path.dirname(rel)] if quote == '"' else []) + ["host-sim"]
                found = next((os.path.normpath(os.path.join(d, name)) for d in dirs
                              if os.path.isfile(os.path.join(root, d, name))), None)
                if found is not None:
                    out.append((rel, no, name, found))
    return out


def may_call(text, known):
    """The rooms named on a README's "May call:" line."""
    line = next((l for l in text.splitlines() if l.startswith("May call:")), "")
    return {w for w in re.findall(r"[a-z_]+(?:/[a-z_]+)?", line) if w in known}


def check_rooms(root, allowed):
    """{kind: [problem, ...]} for the rules of 4. (kinds: rank, back, cycle, size, readme, stale)"""
    rank = ranks(root)
    bad = {k: [] for k in ("rank", "back", "cycle", "size", "readme", "stale")}
    if not rank:
        bad["rank"].append("host-sim/README.md has no room table (| rank | `room` | ...)")
    files = {}
    for base, _, names in os.walk(os.path.join(root, "host-sim")):
        rel = os.path.relpath(base, os.path.join(root, "host-sim"))
        srcs = [n for n in names if n.endswith((".c", ".h"))]
        if srcs or any(n.endswith(".py") for n in names):
            files[rel] = srcs
    for room, srcs in sorted(files.items()):
        if srcs and room not in rank:
            bad["rank"].append(f"host-sim/{room}: a room without a rank in host-sim/README.md")
        if len(srcs) > MAX_ROOM_FILES:
            bad["size"].append(f"host-sim/{room}: {len(srcs)} source files (at most "
                               f"{MAX_ROOM_FILES}: split it into rooms)")
    used = {a[:3] for a in allowed}
    seen, edges, called = set(), {}, {}
    for rel, no, name, found in includes(root):
        a, b = room_of(rel), room_of(found)
        if a == b:
            continue
        fam_a, fam_b = a.split("/")[0], b.split("/")[0]
        back = (a in rank and b in rank and rank[b] >= rank[a]) or \
               (fam_a in FAMILIES and fam_b in FAMILIES and fam_a != fam_b)
        if back and (rel, no, name) in used:
            seen.add((rel, no, name))
            continue
        called.setdefault(a, set()).add(b)
        if back:
            bad["back"].append(f"{rel}:{no}: #include \"{name}\": {a} (rank {rank.get(a, '?'):g}) "
                               f"may not include {b} (rank {rank.get(b, '?'):g}); the rank order "
                               "is in host-sim/README.md")
        edges.setdefault(a, set()).add(b)
    for entry in sorted(used - seen):
        bad["stale"].append(f"{entry[0]}:{entry[1]}: #include \"{entry[2]}\" no longer there or no "
                            "longer a back-arrow: remove it from ALLOWED")
    c = find_cycle(edges)
    if c:
        bad["cycle"].append("rooms: " + " -> ".join(c))
    for room in sorted(files):
        path = os.path.join(root, "host-sim", room, "README.md")
        if not os.path.isfile(path):
            bad["readme"].append(f"host-sim/{room}: no README.md")
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
        # the card: what precedes the first "## " heading (a user guide may follow it)
        guide = [i for i, l in enumerate(lines) if l.startswith("## ")]
        lines = lines[:guide[0]] if guide else lines
        if len(lines) > MAX_README_LINES:
            bad["readme"].append(f"host-sim/{room}/README.md: a card of {len(lines)} lines (at "
                                 f"most {MAX_README_LINES} before its first \"## \" heading)")
        for want in README_LINES:
            if not any(l.startswith(want) for l in lines):
                bad["readme"].append(f"host-sim/{room}/README.md: no line \"{want}\"")
        missing = called.get(room, set()) - may_call(text, rank) - {room}
        if missing:
            bad["readme"].append(f"host-sim/{room}/README.md: \"May call:\" does not name "
                                 f"{', '.join(sorted(missing))}, which its files include")
    return bad


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def room_tree(root, extra=None, readme=None):
    """A small host-sim of four rooms that passes check_rooms, plus extra {path: text}."""
    write(root, "host-sim/README.md", "| rank | room |\n|---|---|\n| 0 | `low` |\n| 1 | `high` |\n"
          "| 2 | `collector/x` |\n| 1.5 | `sim/y` |\n")
    for room in ("low", "high", "collector/x", "sim/y"):
        write(root, f"host-sim/{room}/README.md", readme or
              "Owns: this.\nMay call: low, high\nEntry points: a.h\nTests: none.\n")
    write(root, "host-sim/low/a.h", "\n")
    write(root, "host-sim/high/b.h", '#include "low/a.h"\n')
    write(root, "host-sim/collector/x/d.h", '#include "high/b.h"\n')
    write(root, "host-sim/sim/y/f.h", '#include "low/a.h"\n')
    for rel, text in (extra or {}).items():
        write(root, rel, text)


def main():
    os.chdir(ROOT)
    # 1, 2: the real tree
    graph, bad = include_graph(ROOT)
    ok(len(graph) > 40, f"host-sim has {len(graph)} modules to check")
    cycle = find_cycle(graph)
    ok(cycle is None, "no include cycle between host-sim modules",
       [" -> ".join(cycle)] if cycle else [])
    ok(not bad, "no host-sim file includes an SDK-private header (sdk/src)", bad)

    # negative controls on a throw-away tree
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp, "host-sim/x/a.h", '#include "x/b.h"\n')
        write(tmp, "host-sim/x/a.c", '#include "x/a.h"\n')
        write(tmp, "host-sim/x/b.c", '#include "x/a.h"\n')
        write(tmp, "host-sim/x/b.h", "\n")
        write(tmp, "host-sim/x/c.c", '#include "mech/tuple_internal.h"\n')
        write(tmp, "sdk/src/mech/tuple_internal.h", "\n")
        g, b = include_graph(tmp)
        c = find_cycle(g)
        ok(c is not None and set(c) == {"host-sim/x/a", "host-sim/x/b"},
           "control: a two-module include cycle is found", [repr(c)])
        ok(len(b) == 1 and "tuple_internal" in b[0],
           "control: an include of a private SDK header is found", b)

        # 3: the objects, and their control
        write(tmp, "p.c", "int q(int);\nint p(int x) { return x ? q(x - 1) : 0; }\n")
        write(tmp, "q.c", "int p(int);\nint q(int x) { return x ? p(x - 1) : 1; }\n")
        objs = []
        for name in ("p", "q"):
            o = os.path.join(tmp, name + ".o")
            r = subprocess.run([CC, "-c", os.path.join(tmp, name + ".c"), "-o", o],
                               capture_output=True, text=True)
            ok(r.returncode == 0, f"control: {CC} compiles {name}.c", r.stderr.splitlines())
            objs.append(o)
        c = find_cycle(object_graph(objs, lambda o: os.path.basename(o)[:-2]))
        ok(c is not None and set(c) == {"p", "q"}, "control: two objects calling each other form "
           "a cycle", [repr(c)])

    # 4: the rooms
    bad = check_rooms(ROOT, ALLOWED)
    rank = ranks(ROOT)
    ok(len(rank) >= 15, f"host-sim/README.md ranks {len(rank)} rooms", bad["rank"])
    ok(not bad["rank"], "every folder holding host-sim sources is a ranked room", bad["rank"])
    ok(not bad["back"], "no back-arrow between rooms (rank order, collector/* and sim/* apart)",
       bad["back"])
    ok(not bad["cycle"], "no include cycle between rooms", bad["cycle"])
    ok(not bad["size"], f"no room holds more than {MAX_ROOM_FILES} source files", bad["size"])
    ok(not bad["readme"], f"every room has a README.md of at most {MAX_README_LINES} lines with "
       "Owns:, May call: (its includes), Entry points:, Tests:", bad["readme"])
    ok(not bad["stale"], f"each of the {len(ALLOWED)} allowed back-arrows still occurs",
       bad["stale"])

    def control(what, kind, extra=None, allowed=(), readme=None, clean=False):
        with tempfile.TemporaryDirectory() as t:
            room_tree(t, extra, readme)
            b = check_rooms(t, list(allowed))
            hit = b[kind] if kind else [p for v in b.values() for p in v]
            ok(not hit if clean else bool(hit), f"control: {what}",
               [f"{k}: {v}" for k, v in b.items() if v] or ["nothing found"])

    control("the small room tree passes", None, clean=True)
    control("a back-arrow (low includes collector/x) fails", "back",
            {"host-sim/low/c.c": '#include "collector/x/d.h"\n'})
    control("a cycle between two rooms (low <-> high) fails", "cycle",
            {"host-sim/low/c.c": '#include "high/b.h"\n'})
    control("collector/x including sim/y (lower rank, other program) fails", "back",
            {"host-sim/collector/x/e.c": '#include "sim/y/f.h"\n'})
    control("a 26-file room fails", "size",
            {f"host-sim/low/f{i}.c": "\n" for i in range(25)})
    control("a 25-file room passes", None,
            {f"host-sim/low/f{i}.c": "\n" for i in range(24)}, clean=True)
    control("a 61-line README fails", "readme",
            readme="Owns: this.\nMay call: low, high\nEntry points: a.h\nTests: none.\n"
            + "x\n" * 57)
    control("a 61-line card before a guide fails", "readme",
            readme="Owns: this.\nMay call: low, high\nEntry points: a.h\nTests: none.\n"
            + "x\n" * 57 + "## Guide\n")
    control("a 4-line card with a 100-line guide passes", None,
            readme="Owns: this.\nMay call: low, high\nEntry points: a.h\nTests: none.\n"
            + "## Guide\n" + "x\n" * 100, clean=True)
    control("a README whose \"Tests:\" is only in its guide fails", "readme",
            readme="Owns: this.\nMay call: low, high\nEntry points: a.h\n## Guide\nTests: none.\n")
    control("a README without \"Tests:\" fails", "readme",
            readme="Owns: this.\nMay call: low, high\nEntry points: a.h\n")
    control("a README whose \"May call:\" misses an included room fails", "readme",
            readme="Owns: this.\nMay call: low\nEntry points: a.h\nTests: none.\n")
    control("an unranked room fails", "rank", {"host-sim/other/g.c": "\n"})
    control("an allowed back-arrow passes", None,
            {"host-sim/low/c.c": '/* why */\n#include "collector/x/d.h"\n'},
            allowed=[("host-sim/low/c.c", 2, "collector/x/d.h")], clean=True)
    control("an allow-list entry that no longer occurs fails", "stale",
            allowed=[("host-sim/low/a.h", 1, "collector/x/d.h")])

    base = os.path.join(OUT, "obj")
    objects = sorted(glob.glob(os.path.join(base, "host-sim", "**", "*.o"), recursive=True))
    objects = [o for o in objects if os.path.isfile(o.replace(os.path.join(base, ""), "", 1)
                                                    [:-2] + ".c")]
    ok(len(objects) > 30, f"{len(objects)} host-sim objects under {base} (make builds them)")
    g = object_graph(objects, lambda o: os.path.relpath(o, base)[:-2])
    c = find_cycle(g)
    ok(c is None, "no cycle between host-sim objects (symbols used and defined, nm)",
       [" -> ".join(c)] if c else [])
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
