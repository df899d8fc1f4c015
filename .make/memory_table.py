#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make size: the sizes of the structs an app on the device API holds, per build and target,
read with nm -S from tests/cross/size_state.c compiled for each (dpm_state_*: held between
calls and summed; dpm_part_*: listed). Prints a table and writes it as JSON.

  memory_table.py --out FILE [--budget LABEL=BYTES ...] LABEL:NM:OBJECT ...

--budget: the held total of column LABEL must be <= BYTES; a "MISSED LABEL ..." line and exit
status 1 if not.
"""
import json
import subprocess
import sys


def sizes(nm, obj):
    out = subprocess.run([nm, "-S", obj], check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[3].startswith(("dpm_state_", "dpm_part_")):
            got[p[3]] = int(p[1], 16)
    if not got:
        sys.exit(f"memory_table: no dpm_state_* objects in {obj}")
    return got


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[0] != "--out":
        sys.exit(__doc__)
    out, specs, budgets = args[1], args[2:], {}
    while specs and specs[0] == "--budget":
        label, limit = specs[1].rsplit("=", 1)
        budgets[label] = int(limit)
        specs = specs[2:]
    cols = []
    for spec in specs:
        label, nm, obj = spec.split(":", 2)
        cols.append((label, sizes(nm, obj)))
    names = sorted({n for _, s in cols for n in s}, key=lambda n: (not n.startswith("dpm_state_"), n))
    print("\nmemory: sizeof of what an app holds (bytes; * = held between calls, summed in 'held')")
    print(f"  {'object':30}" + "".join(f"{label:>22}" for label, _ in cols))
    for n in names:
        mark = "*" if n.startswith("dpm_state_") else " "
        short = n.split("_", 2)[2]
        print(f"  {mark}{short:29}" + "".join(f"{s.get(n, '-'):>22}" for _, s in cols))
    held = {label: sum(v for k, v in s.items() if k.startswith("dpm_state_")) for label, s in cols}
    print(f"  {'held':30}" + "".join(f"{held[label]:>22}" for label, _ in cols))
    with open(out, "w") as f:
        json.dump({label: {"held": held[label], "sizes": s} for label, s in cols}, f, indent=1)
    missed = 0
    for label, limit in budgets.items():
        if label not in held:
            sys.exit(f"memory_table: no column {label} for its budget")
        if held[label] > limit:
            over = held[label] - limit
            print(f"MISSED {label} held state: {held[label]} bytes, budget {limit}, over by {over} "
                  f"({100.0 * over / limit:.0f}%)")
            missed = 1
        else:
            print(f"  {label} held state: {held[label]} bytes, within the budget of {limit}")
    sys.exit(missed)


if __name__ == "__main__":
    main()
