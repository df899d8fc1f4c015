#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make size, the host half: the worst-case stack of one call into the SDK on the build machine
(x86_64), from GCC's -fstack-usage / -fcallgraph-info=su output of objects built with
-ffunction-sections, and the objects' relocations.

  stack_host.py OBJDIR ROOT [ROOT...] [--budget BYTES] [--image "NAME NAME PREFIX* ..."]
                [--build LABEL] [--json FILE]

For each ROOT: the deepest chain of frames over the compiler's call graph. A call through a
function pointer costs the deepest chain of any function whose address is stored in data or
taken by code of the image (RAM storage callbacks, nanopb's stream callbacks), resolved one
level; the app's own callbacks (its RNG) are not in OBJDIR and are named, not counted. The image
is what a firmware on the API --image names would link: the functions those names (a trailing *:
every global function with that prefix; a leading !: none of those) and the ROOTs reach through calls and taken addresses;
without --image, every object's taken addresses count (a function-pointer call in an image that
cannot reach, say, FedAUC's wire callbacks is not charged with them). Calls out of OBJDIR (the C library's
memcpy, memset...) count 0 and are listed. Recursion is named and its cycle counted once.
--json FILE: also write {"build": LABEL, "stack": {ROOT: bytes}} there (make results records it).
An unbounded frame (alloca, VLA) or a root not found is an error. Exit status 1 if a root's stack
is over --budget (when given: a "MISSED LABEL ..." line says by how much), 2 if it cannot be
measured.
"""
import glob
import os
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def parse(objdir):
    """frames {key: (bytes, qualifier)}, calls {key: set(keys)}, indirect {key: n}, externals.
    Keys: a global's name, or "unit:name" for a static (GCC titles statics "path/unit.c:name")."""
    frames, calls, indirect, titles = {}, {}, {}, {}
    for path in glob.glob(os.path.join(objdir, "**", "*.ci"), recursive=True):
        text = open(path).read()
        for m in re.finditer(r'node: \{ title: "([^"]+)" label: "([^"]*)"', text):
            su = re.search(r"(\d+) bytes \(([^)]+)\)", m.group(2))
            key = title_key(m.group(1))
            if su:
                frames[key] = (int(su.group(1)), su.group(2))
                calls.setdefault(key, set())
                indirect.setdefault(key, 0)
            else:
                titles.setdefault(key, m.group(1))
        for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
            src, dst = title_key(m.group(1)), m.group(2)
            if dst == "__indirect_call":
                indirect[src] = indirect.get(src, 0) + 1
            else:
                calls.setdefault(src, set()).add(title_key(dst))
    externals = sorted({c for cs in calls.values() for c in cs if c not in frames})
    return frames, calls, indirect, externals


def title_key(title):
    if ":" in title:
        unit, name = title.rsplit(":", 1)
        return os.path.splitext(os.path.basename(unit))[0] + ":" + name
    return title


def address_taken(objdir, frames):
    """{taker: functions whose address it stores} for code (a relocation against a function, or
    its own .text.<name> section, that is not the operand of a call or jump), and the set of
    functions whose address is stored in data (tables of pointers), always counted."""
    by_code, in_data = {}, set()
    statics = {k.split(":", 1)[1]: k for k in frames if ":" in k}
    for obj in glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True):
        unit = os.path.splitext(os.path.basename(obj))[0]
        last, taker = "", None
        for line in run("objdump", "-dr", "--no-show-raw-insn", obj).splitlines():
            m = re.match(r"^[0-9a-f]+ <(\S+)>:$", line)
            if m:
                taker = resolve(m.group(1), unit, frames, statics)
                continue
            m = re.match(r"^\s+[0-9a-f]+: (R_X86_64_\S+)\s+(\S+?)([-+]0x[0-9a-f]+)?$", line)
            if m:
                # the start of a function (PC-relative: -4), not a call's or jump's operand
                if m.group(3) in (None, "-0x4") and not re.match(r"(call|jmp|j[a-z]+)\b", last):
                    t = resolve(m.group(2), unit, frames, statics)
                    if t in frames:
                        by_code.setdefault(taker, set()).add(t)
                continue
            m = re.match(r"^\s+[0-9a-f]+:\s+(\S.*)$", line)
            if m:
                last = m.group(1)
        section = None  # data sections: tables of pointers
        for line in run("readelf", "-rW", obj).splitlines():
            m = re.match(r"^Relocation section '\.rela(\S+)'", line)
            if m:
                section = m.group(1)
                continue
            p = line.split()
            # a function's start stored in data (not a switch table's offsets into one: addend != 0)
            if (section and section.startswith((".data", ".rodata")) and len(p) >= 5 and
                    p[2].startswith("R_X86_64") and (len(p) < 7 or int(p[6], 16) == 0)):
                in_data.add(resolve(p[4], unit, frames, statics))
    return by_code, {t for t in in_data if t in frames}


def image_targets(frames, calls, by_code, in_data, roots):
    """The pointer targets of the image reached from roots: taken in data, or by its code."""
    seen, todo = set(), list(roots) + sorted(in_data)
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        todo.extend(calls.get(k, ()))
        todo.extend(by_code.get(k, ()))
    return set(in_data) | {t for k in seen for t in by_code.get(k, ())}


def resolve(sym, unit, frames, statics):
    if sym.startswith(".text."):
        sym = sym[len(".text."):]
    if f"{unit}:{sym}" in frames:
        return f"{unit}:{sym}"
    return sym


def worst_from(frames, calls, indirect, ind_cost):
    memo, path, cycles = {}, [], set()

    def worst(k):
        if k in path:
            cycles.add(" -> ".join(path[path.index(k):] + [k]))
            return 0, []
        if k in memo:
            return memo[k]
        if k not in frames:
            return 0, []
        path.append(k)
        best = (0, [])
        for c in calls.get(k, ()):
            w = worst(c)
            if w[0] > best[0]:
                best = w
        if indirect.get(k) and ind_cost[0] > best[0]:
            best = ind_cost
        path.pop()
        memo[k] = (frames[k][0] + best[0], [k] + best[1])
        return memo[k]

    sys.setrecursionlimit(100000)
    return worst, cycles


def main():
    args = sys.argv[1:]
    opts = {}
    for opt in ("--budget", "--image", "--build", "--json"):
        if opt in args:
            i = args.index(opt)
            opts[opt] = args[i + 1]
            del args[i:i + 2]
    budget = int(opts["--budget"]) if "--budget" in opts else None
    image = opts["--image"].split() if "--image" in opts else None
    build = opts.get("--build", "x86_64")
    if len(args) < 2:
        sys.exit(__doc__)
    objdir, roots = args[0], args[1:]
    frames, calls, indirect, externals = parse(objdir)
    if not frames:
        print(f"stack_host: no -fcallgraph-info output under {objdir}", file=sys.stderr)
        sys.exit(2)
    # "dynamic,bounded" (an aligned frame) is a bound; a plain "dynamic" one (alloca, VLA) is not
    dynamic = sorted(k for k, (_, q) in frames.items() if q == "dynamic")
    by_code, in_data = address_taken(objdir, frames)
    every = set(in_data) | {t for ts in by_code.values() for t in ts}
    if image is None:
        taken = every
    else:
        def match(k, n):
            return k.startswith(n[:-1]) if n.endswith("*") else k == n
        names = []
        excluded = [n[1:] for n in image if n.startswith("!")]
        for n in (n for n in image if not n.startswith("!")):
            hits = [k for k in frames if ":" not in k and match(k, n)
                    and not any(match(k, e) for e in excluded)]
            if not hits:
                print(f"stack_host: {n} (--image) is not in {objdir}", file=sys.stderr)
                sys.exit(2)
            names += hits
        taken = image_targets(frames, calls, by_code, in_data, names + roots)
    # one level: a pointer call costs the deepest direct chain of an address-taken function
    direct, _ = worst_from(frames, calls, {}, (0, []))
    ind = max((direct(t) for t in taken), default=(0, []), key=lambda w: w[0])
    worst, cycles = worst_from(frames, calls, indirect, ind)
    status = 0
    totals = {}
    for root in roots:
        if root not in frames:
            print(f"stack_host: {root} is not in {objdir}", file=sys.stderr)
            sys.exit(2)
        total, chain = worst(root)
        totals[root] = total
        print(f"{root}: {total} bytes: " + " > ".join(f"{k} {frames[k][0]}" for k in chain))
        if budget is not None and total > budget:
            print(f"MISSED {build} one-call stack of {root}: {total} bytes, budget {budget}, "
                  f"over by {total - budget} ({100.0 * (total - budget) / budget:.0f}%)")
            status = 1
    print(f"  function-pointer calls: counted as {ind[0]} bytes (the deepest of "
          f"{', '.join(sorted(taken)) or 'none'}); the app's own callbacks (its RNG) come on top")
    if every - taken:
        print(f"  address-taken outside the image, not counted: {', '.join(sorted(every - taken))}")
    print(f"  outside the SDK, counted 0: {', '.join(externals) or 'none'}")
    print(f"  recursion: {'; '.join(sorted(cycles)) or 'none'}")
    if dynamic:
        print(f"stack_host: dynamic frames: {', '.join(dynamic)}", file=sys.stderr)
        sys.exit(2)
    if "--json" in opts:
        import json
        with open(opts["--json"], "w") as f:
            json.dump({"build": build, "stack": totals}, f, indent=1)
    sys.exit(status)


if __name__ == "__main__":
    main()
