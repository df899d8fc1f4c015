#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The app's front door stays small, printing TAP.

`dpm/dpm.h` declares what an app uses: the compiler lists every function a translation unit
including it sees (gcc -aux-info), and there are at most FRONT_MAX of them, each named in
FRONT (so a function that slips in through a new include is caught by name, and one that
leaves is noticed too). The headers beside it (`sdk/include/dpm/*.h`) never include the expert
API (`dpm/expert/`); the layouts in `dpm/bits/` declare no function; every expert header
compiles on its own (simulator.h only with -DDPM_SIMULATOR_API: without, it is an error).

Negative controls, on a temporary copy of the headers: a front header that includes an expert
header, a bits header that declares a function, and dpm.h pulling in the samplers must each be
flagged."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CC = os.environ.get("CC", "cc")
# What an app calls (sdk/README.md, "The device API"), and two static inline helpers an app
# may use or that dpm_device_init's macro evaluates in the app's translation unit.
FRONT = """
dpm_device_init_abi dpm_device_accept_campaign dpm_device_accept_mech dpm_device_why
dpm_device_report_tuple dpm_device_report_roc_hist dpm_device_report_roc_hist_group
dpm_device_report_dpauc dpm_device_report_ustat_bins dpm_device_report_ustat_tree
dpm_device_fedauc_upload dpm_device_report_fedauc dpm_device_memo_open dpm_device_flush
dpm_storage_layout dpm_config_check_abi
dpm_mech_score_bins dpm_mech_dpauc dpm_dpauc_counts_init dpm_dpauc_counts_add
dpm_confusion_add dpm_score_hist_init dpm_score_hist_add
dpm_eps_from_decimal dpm_eps_from_ratio dpm_eps_format dpm_strerror dpm_version
dpm_version_number dpm_ram_storage dpm_port_crc32
dpm_abi_fingerprint dpm_score_from_double
""".split()
FRONT_MAX = 33  # "at most about 30": 31 functions (dpm_port_crc32 a port hook) and 2 inline helpers

n = 0
failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, what))
    if not cond:
        failed += 1


def declared(include_root, header="dpm/dpm.h", defines=()):
    """The dpm_* functions a translation unit including `header` sees, or None (with the
    compiler's message) if it does not compile."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        aux = os.path.join(tmp, "aux.txt")
        with open(src, "w") as f:
            f.write('#include "%s"\n' % header)
        r = subprocess.run([CC, "-std=c99", "-Werror", "-fsyntax-only", "-aux-info", aux,
                            "-I", include_root] + ["-D" + d for d in defines] + [src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, " ".join(r.stderr.split())
        names = set()
        with open(aux) as f:
            for line in f:
                m = re.search(r"\b(dpm_\w+)\s*\(", line.split("*/", 1)[-1])
                if m:
                    names.add(m.group(1))
        return names, ""


def rules(include_root):
    """Problems of the header tree under include_root (a list of strings)."""
    probs = []
    base = os.path.join(include_root, "dpm")
    for h in sorted(glob.glob(os.path.join(base, "*.h"))):
        text = open(h).read()
        for m in re.finditer(r'#include\s+[<"](dpm/expert/[\w]+\.h)', text):
            probs.append("%s includes %s" % (os.path.basename(h), m.group(1)))
    for h in sorted(glob.glob(os.path.join(base, "bits", "*.h"))):
        names, err = declared(include_root, "dpm/bits/" + os.path.basename(h))
        if names is None:
            probs.append("bits/%s does not compile alone: %s" % (os.path.basename(h), err))
            continue
        own = set(re.findall(r"\b(dpm_\w+)\s*\(", re.sub(r"/\*.*?\*/", "", open(h).read(),
                                                            flags=re.S)))
        fns = sorted((names & own) - {"dpm_score_from_double"})
        if fns:
            probs.append("bits/%s declares %s" % (os.path.basename(h), ", ".join(fns)))
    names, err = declared(include_root)
    if names is None:
        probs.append("dpm/dpm.h does not compile: " + err)
    else:
        extra = sorted(names - set(FRONT))
        if extra:
            probs.append("dpm/dpm.h declares what is not front-door API: " + ", ".join(extra))
        if len(names) > FRONT_MAX:
            probs.append("dpm/dpm.h declares %d functions (at most %d)" % (len(names), FRONT_MAX))
    return probs


def main():
    inc = os.path.join(ROOT, "sdk", "include")
    names, err = declared(inc)
    ok(names is not None, "dpm/dpm.h compiles alone" + (": " + err if err else ""))
    names = names or set()
    print("# dpm/dpm.h declares %d functions" % len(names))
    ok(len(names) <= FRONT_MAX, "dpm/dpm.h declares at most %d functions (%d)" % (FRONT_MAX,
                                                                                  len(names)))
    ok(names == set(FRONT), "dpm/dpm.h declares exactly the front-door list (extra: %s; "
       "missing: %s)" % (sorted(names - set(FRONT)), sorted(set(FRONT) - names)))
    probs = rules(inc)
    for p in probs:
        print("# " + p)
    ok(not probs, "front headers include no expert header; bits declare no function")
    bad = []
    for h in sorted(glob.glob(os.path.join(inc, "dpm", "expert", "*.h"))):
        sim = os.path.basename(h) == "simulator.h"
        got, err = declared(inc, "dpm/expert/" + os.path.basename(h),
                            ("DPM_SIMULATOR_API",) if sim else ())
        if got is None:
            bad.append("%s: %s" % (os.path.basename(h), err))
    for b in bad:
        print("# " + b)
    ok(not bad, "every expert header compiles on its own")
    got, err = declared(inc, "dpm/expert/simulator.h")
    ok(got is None and "for simulators and tests" in err,
       "dpm/expert/simulator.h stops a build without -DDPM_SIMULATOR_API (%s)" % err[:80])

    # Negative controls on a copy of the headers.
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "include")

        def fresh():
            if os.path.exists(copy):
                shutil.rmtree(copy)
            shutil.copytree(inc, copy)

        def edit(rel, old, new):
            p = os.path.join(copy, rel)
            text = open(p).read()
            assert old in text, (rel, old)
            open(p, "w").write(text.replace(old, new, 1))

        fresh()
        ok(rules(copy) == [], "control: the copy itself passes")
        edit("dpm/stats.h", '#include "dpm/types.h"',
             '#include "dpm/types.h"\n#include "dpm/expert/noise.h"')
        p = rules(copy)
        ok(any("stats.h includes dpm/expert/noise.h" in x for x in p) and
           any("not front-door API" in x and "dpm_laplace_init" in x for x in p),
           "control: a front header including the samplers is flagged")
        fresh()
        edit("dpm/bits/noise.h", "} dpm_rand_t;",
             "} dpm_rand_t;\ndpm_status_t dpm_rand_peek(dpm_rand_t *r);")
        ok(any("bits/noise.h declares dpm_rand_peek" in x for x in rules(copy)),
           "control: a bits header declaring a function is flagged")
        fresh()
        edit("dpm/device.h", "const char *dpm_device_why(const dpm_device_t *d);",
             "const char *dpm_device_why(const dpm_device_t *d);\n"
             "int dpm_device_debug_dump(const dpm_device_t *d);")
        ok(any("dpm_device_debug_dump" in x for x in rules(copy)),
           "control: a new function in the front door must be listed")
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
