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

Negative controls: a small tree with a two-module include cycle, one with an include of a
private SDK header, and two objects calling each other (compiled with $CC) must each be flagged.
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


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


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
