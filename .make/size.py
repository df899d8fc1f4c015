#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make size, the analysis (.make/size.sh builds the images): flash, static RAM and worst-case
stack per module of each build, printed as a table and written as build/size.json
(tests/README.md §Results files).

  size.py --out build/size.json --arena-log LOG [--lean-arena-log LOG] [--one-call "NAME ..."]
          --build NAME:ELF:MAP:STATE_OBJ:DIR[,DIR...] ...

flash  text + rodata + the .data initialisers of the input sections the image links, per module
       (from the linker map);
ram    .data + .bss the modules link (0 for the SDK, which has no globals) plus the caller-owned
       state an app on the device API keeps between calls (tests/cross/size_state.c's
       dpm_state_* objects: the dpm_device_t, one dpm_mech_t, the RAM storage handle; plus the
       TLS session for the TLS builds; the arena is reported on its own);
stack  worst case over the module's public functions of the deepest call chain: frames from
       -fstack-usage/-fcallgraph-info=su (disassembly prologues for the C library), calls from
       the call graph and the disassembly (libcalls included). A function-pointer call counts
       the deepest function whose address the image takes (port hooks, nanopb's stream
       callback, Mbed TLS's tables): one level, an over-estimate. Recursion is reported and
       its cycle counted once. The one-call figures (--one-call NAMES) are the same analysis
       rooted at each device report call (one report: check, charge, perturb, encode, queue).
       The tuple builds (--rng-builds; their --build gets :RNG_ELF:RNG_MAP, the same image
       with port/cortex-m/ctr_drbg.c linked) take their stack from that image: the port's
       production random source (CTR_DRBG with its reseed from the TRNG, RNG_HOOKS) charged at
       the SDK's rng->fill call sites only, its own pointer calls resolved by RNG_POINTERS, plus
       an interrupt allowance (IRQ_ALLOWANCE) on every figure. --stack-of does the same for one
       image (tests/cross/test_cm_stack.sh's painted one).
Exit status 1 if a target is missed (a "MISSED ..." line each) or a figure cannot be measured.
"""
import argparse
import glob
import json
import os
import re
import struct
import subprocess
import sys

TARGETS = {  # build -> {metric: limit in bytes}
    # issue 32: the smallest tuple build (tuple_mr only) carries the tuple budgets; tuple_only
    # (with tuple_ml's Laplace sampler) is reported beside it
    "tuple_min": {"flash": 16 * 1024, "ram": 1024, "stack": 2048},
    # issue 32: the 120 KiB flash budget is the lean TLS 1.3 profile's (default+lean_tls); the
    # device profile (TLS 1.2 too, RSA, X25519, AES-GCM) is measured and reported, unbudgeted
    "default+tls": {"arena": 48 * 1024},
    "default+lean_tls": {"flash": 120 * 1024, "arena": 48 * 1024},
    # issue 30: the two-aggregator mode adds at most 16 KB beyond what the TLS client links,
    # with every Prio3 variant and with those of the campaigns' shapes (Histogram, SumVec)
    "default+tls+dap": {"flash_added": 16 * 1024},
    "default+tls+dap_shapes": {"flash_added": 16 * 1024},
}
# issue 31: the hybrid's label RR on top of dap_shapes (which leaves it out), reported only
DAP_BUILDS = ["default+tls+dap", "default+tls+dap_shapes", "default+tls+dap_shapes+label_rr"]
# What a tuple build's stack figure adds to the SDK's own chains (--rng-builds): the port's
# production random source (port/cortex-m/ctr_drbg.c: CTR_DRBG with its reseed from the TRNG,
# charged at the SDK's rng->fill call sites: the objects named below) and an interrupt
# taken at the deepest point, on the same stack (a bare-metal firmware: one stack for both).
RNG_HOOKS = ["cm_drbg_fill", "trng_fill"]  # the dpm_rng_t fill functions of port/cortex-m
RNG_CALLERS = ["rand", "device_dap"]       # sdk/src/noise/rand.c, sdk/src/device/device_dap.c
# The pointer calls on the hook's chain and what they call: the DRBG's entropy callback (the
# TRNG, set by dpm_cm_drbg_init) and Mbed TLS's volatile memset pointer. A pointer call on the
# chain from a function not listed stops make size (a chain it cannot see is not counted as
# free), as does a listed target the image does not take the address of.
RNG_POINTERS = {
    "mbedtls_ctr_drbg_reseed_internal": ["cm_drbg_entropy"],
    "mbedtls_platform_zeroize": ["memset"],
}
# (tests/cross/test_cm_stack.sh's negative control drops an entry: the analysis must stop)
for _k in filter(None, os.environ.get("SIZE_RNG_POINTERS_DROP", "").split(",")):
    RNG_POINTERS.pop(_k, None)
IRQ_ALLOWANCE = [
    (108, "Cortex-M4 exception entry with the FPU context: 8 core + 18 FP words (S0-S15, FPSCR,"
          " reserved; lazy stacking reserves them) + 1 word of 8-byte alignment"),
    (128, "one interrupt handler, not nested: a HAL-style IRQ handler saving r4-r11 and lr (36"
          " + 4 alignment), ~64 bytes of locals and one callback frame (~24); deeper or nested"
          " handlers need their own allowance (under an RTOS handlers run on the main stack:"
          " only the exception frame lands on the task's)"),
]
OBJDUMP, NM, READELF = "arm-none-eabi-objdump", "arm-none-eabi-nm", "arm-none-eabi-readelf"


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


# ---- modules ------------------------------------------------------------------------------------

def module_of(obj, roots):
    """Module of a linker-map object name such as build/size/default/libdpm.a(ledger.o)."""
    m = re.match(r"(.*?)([^/]+)\.a\((.+)\)$", obj)
    if not m:
        return os.path.basename(obj)
    lib, member = m.group(2), m.group(3)
    if lib.startswith("libmbed"):
        return {"libmbedcrypto": "mbedtls/crypto", "libmbedx509": "mbedtls/x509",
                "libmbedtls": "mbedtls/tls"}.get(lib, lib)
    if lib in ("libc", "libc_nano", "libnosys", "libg", "libg_nano"):
        return "libc"
    if lib in ("libgcc", "libm"):
        return lib
    if lib.startswith("libdpm"):
        for root in roots:
            hits = glob.glob(os.path.join(root, "**", member), recursive=True)
            if hits:
                rel = os.path.relpath(hits[0], root)
                parts = rel.split(os.sep)
                if parts[:2] == ["sdk", "src"]:
                    return "sdk/" + parts[2]
                if parts[0] == "sdk":
                    return "sdk/" + parts[1]
                if parts[0] == "port":
                    return "port/" + parts[1]
                return parts[0]
    return lib


def module_of_loose(obj):
    """Objects named on the command line (port/cortex-m's storage and TRNG)."""
    if "/port/cortex-m/" in obj:
        return "port/cortex-m"
    return os.path.basename(obj)


# ---- the linker map -----------------------------------------------------------------------------

def parse_map(path):
    """[(output section, input section, address, size, object)] of the memory map."""
    out, section, pending = [], None, None
    with open(path) as f:
        lines = f.read().split("Linker script and memory map", 1)[1].splitlines()
    for line in lines:
        if line.startswith(".") or line.startswith("/DISCARD/"):
            section = line.split()[0]
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m and section:
            name = m.group(1) or pending
            pending = None
            if name and not m.group(4).startswith("0x"):
                out.append((section, name, int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
        elif not line.startswith("  "):
            pending = None
    return out


# ---- ELF: symbols, words, disassembly -----------------------------------------------------------

def functions(elf):
    """address -> (name, size, bind) of FUNC symbols (Thumb bit cleared)."""
    funcs = {}
    for line in run(READELF, "-sW", elf).splitlines():
        p = line.split()
        if len(p) >= 8 and p[3] == "FUNC" and p[6] != "UND":
            funcs[int(p[1], 16) & ~1] = (p[7], int(p[2]), p[4])
    return funcs


class Elf32:
    """Just enough ELF32 (little-endian) to read a word at a virtual address."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        shoff, = struct.unpack_from("<I", self.data, 0x20)
        shentsize, shnum = struct.unpack_from("<HH", self.data, 0x2E)
        self.sections = []
        for i in range(shnum):
            _, stype, flags, addr, off, size = struct.unpack_from("<IIIIII", self.data, shoff + i * shentsize)
            if stype == 1 and flags & 2:  # PROGBITS, SHF_ALLOC
                self.sections.append((addr, off, size))

    def word(self, addr):
        for a, off, size in self.sections:
            if a <= addr < a + size - 3:
                return struct.unpack_from("<I", self.data, off + addr - a)[0]
        return None


def address_taken(elf, funcs):
    """Functions whose address the image stores (R_ARM_ABS32 relocations kept by
    --emit-relocs point at the slots; the linked word is the Thumb address). The vector table
    of a test image (port/cortex-m's dpm_cm_vectors) does not count: the core calls those
    handlers, no pointer call in the code does."""
    img = Elf32(elf)
    taken, skip = set(), []
    for line in run(NM, "-S", elf).splitlines():
        p = line.split()
        if len(p) == 4 and p[3] == "dpm_cm_vectors":
            skip.append((int(p[0], 16), int(p[0], 16) + int(p[1], 16)))
    for line in run(READELF, "-rW", elf).splitlines():
        p = line.split()
        if len(p) >= 3 and p[2] == "R_ARM_ABS32":
            if any(lo <= int(p[0], 16) < hi for lo, hi in skip):
                continue
            w = img.word(int(p[0], 16))
            if w is not None and w & 1 and (w & ~1) in funcs:
                taken.add(w & ~1)
    return taken


PUSH = re.compile(r"^(push|push\.w|stmdb(\.w)?\s+sp!,)\s*\{([^}]*)\}")
VPUSH = re.compile(r"^vpush\s*\{([^}]*)\}")
SUBSP = re.compile(r"^sub(w|\.w)?\s+sp,\s*(sp,\s*)?#(\d+)")
CALL = re.compile(r"^(bl|b\.w|b)\s+([0-9a-f]+)\s+<([^>+]+)>")  # bl: call; b, b.w: tail call


def reg_count(regs):
    n = 0
    for part in regs.split(","):
        part = part.strip()
        m = re.match(r"([rsd])(\d+)-[rsd](\d+)", part)
        n += int(m.group(3)) - int(m.group(2)) + 1 if m else (1 if part else 0)
    return n


def disassemble(elf, funcs):
    """address -> (frame bytes from the prologue, {callee addresses}, {tail-called addresses},
    indirect call count)."""
    info, cur = {}, None
    for line in run(OBJDUMP, "-d", "--no-show-raw-insn", elf).splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            a = int(m.group(1), 16)
            cur = a if a in funcs else None
            if cur is not None:
                info[cur] = [0, set(), 0, 0, set()]  # frame, calls, indirect, instructions, tails
            continue
        if cur is None or "\t" not in line:
            continue
        ins = line.split("\t", 1)[1].strip()
        rec = info[cur]
        rec[3] += 1
        if rec[3] <= 8:  # the prologue
            m = PUSH.match(ins)
            if m:
                rec[0] += 4 * reg_count(m.group(3))
            m = VPUSH.match(ins)
            if m:
                regs = m.group(1)
                rec[0] += (8 if "d" in regs else 4) * reg_count(regs)
            m = SUBSP.match(ins)
            if m:
                rec[0] += int(m.group(3))
        m = CALL.match(ins)
        if m:
            target = int(m.group(2), 16)
            if target in funcs and target != cur:
                rec[1 if m.group(1) == "bl" else 4].add(target)
        elif re.match(r"^blx\s+r\d+", ins):
            rec[2] += 1
    return {a: (r[0], r[1], r[4], r[2]) for a, r in info.items()}


# ---- -fcallgraph-info=su ------------------------------------------------------------------------

def parse_ci(dirs):
    """{object stem: {function: (bytes, qualifier, {callee names}, indirect calls)}}"""
    units = {}
    for d in dirs:
        for path in glob.glob(os.path.join(d, "**", "*.ci"), recursive=True):
            stem = os.path.basename(path)[:-3]
            fns = {}
            with open(path) as f:
                text = f.read()
            # statics are titled "path/file.c:name"
            for m in re.finditer(r'node: \{ title: "([^"]+)" label: "([^"]*)"', text):
                su = re.search(r"(\d+) bytes \(([^)]+)\)", m.group(2))
                if su:
                    fns[m.group(1).rsplit(":", 1)[-1]] = [int(su.group(1)), su.group(2), set(), 0]
            for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
                src, dst = m.group(1).rsplit(":", 1)[-1], m.group(2).rsplit(":", 1)[-1]
                if src in fns:
                    if dst == "__indirect_call":
                        fns[src][3] += 1
                    else:
                        fns[src][2].add(dst)
            units[stem] = fns
    return units


def object_stem(obj):
    m = re.search(r"\(([^)]+)\)$", obj)
    base = m.group(1) if m else os.path.basename(obj)
    for ext in (".obj", ".o"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


# ---- one build ----------------------------------------------------------------------------------

def analyse(name, elf, mapfile, state_obj, roots, one_call_names, rng=None):
    """rng (the tuple builds): {'hooks': names of the dpm_rng_t fill functions the image
    links, 'callers': object stems whose pointer calls are rng->fill, 'irq': [(bytes, why)]}:
    the hooks' own chains (their Mbed TLS pointer calls resolved, see rng_chain) are charged
    at those call sites only, and the interrupt allowance is added to every stack figure."""
    entries = parse_map(mapfile)
    funcs = functions(elf)
    by_name = {}
    for a, (n, _, _) in funcs.items():
        by_name.setdefault(n, []).append(a)
    flash, ram, owner, files = {}, {}, {}, {}
    for section, insec, addr, size, obj in entries:
        mod = module_of(obj, roots) if ".a(" in obj else module_of_loose(obj)
        if section in (".text", ".ARM.exidx", ".ARM.extab", ".data"):
            flash[mod] = flash.get(mod, 0) + size
            key = f"{mod}/{object_stem(obj)}"
            files[key] = files.get(key, 0) + size
        if section in (".data", ".bss"):
            ram[mod] = ram.get(mod, 0) + size
        if section == ".text" and size:
            for a in range(addr & ~1, addr + size, 2):
                if a in funcs:
                    owner[a] = (mod, object_stem(obj))
    # caller-owned state: dpm_state_<module>_<what>
    state = {}
    for line in (run(NM, "-S", state_obj) if state_obj else "").splitlines():
        p = line.split()
        if len(p) == 4 and p[3].startswith("dpm_state_"):
            mod = p[3].split("_")[2]
            mod = "port/tls" if mod == "tls" else "sdk/" + mod
            state[mod] = state.get(mod, 0) + int(p[1], 16)

    # ---- stack --------------------------------------------------------------------------------
    units = parse_ci(roots)
    dis = disassemble(elf, funcs)
    # Calls come from the disassembly (it has the C library's and the compiler's libcalls, and
    # tells tail calls, b/b.w, from calls, bl) plus the call graph's edges it does not show.
    frame, callees, tails, indirect, quals = {}, {}, {}, {}, {}
    for a, (fname, _, _) in funcs.items():
        d_frame, d_calls, d_tails, d_ind = dis.get(a, (0, set(), set(), 0))
        ci = units.get(owner.get(a, ("", ""))[1], {}).get(fname)
        tails[a] = d_tails
        if ci:
            frame[a], quals[a] = ci[0], ci[1]
            calls = set(d_calls)
            for n in ci[2]:
                cands = by_name.get(n, [])
                # a static of the same unit first, else every definition (the largest wins)
                same = [c for c in cands if owner.get(c, ("", ""))[1] == owner.get(a, ("", ""))[1]]
                calls.update(c for c in (same or cands) if c not in d_tails)
            callees[a] = calls
            indirect[a] = max(ci[3], d_ind)
        else:
            frame[a], quals[a], callees[a], indirect[a] = d_frame, "prologue", d_calls, d_ind
    taken = address_taken(elf, funcs)
    recursion = set()
    rng_hooks = set()
    if rng:
        rng_hooks = {a for n in rng["hooks"] for a in by_name.get(n, [])}
        taken -= rng_hooks  # charged at the rng->fill call sites only, below

    # Which functions a pointer call may reach: the SDK's pointers (port hooks, nanopb's
    # streams) reach port/cortex-m, nanopb and the SDK; only sdk/upload holds the transport, so
    # only its pointers reach port/tls's transport view (tls_send, tls_recv); Mbed TLS's
    # (cipher and hash tables, its I/O and RNG callbacks) reach Mbed TLS, the C library and
    # port/tls's callbacks for it (bio_send, bio_recv, tls_rng).
    TRANSPORT_VIEW = ("tls_send", "tls_recv")
    def world(a):
        mod = owner.get(a, ("?",))[0]
        if mod == "sdk/upload":
            return "upload"
        return "sdk" if mod.startswith("sdk/") or mod == "nanopb" else "tls"

    def reachable(w, a):
        mod = owner.get(a, ("?",))[0]
        if mod == "port/tls":
            return w == ("upload" if funcs[a][0] in TRANSPORT_VIEW else "tls")
        if mod.startswith("port/"):
            return True
        return world(a) == w or (w == "upload" and world(a) == "sdk")

    def ind_costs(table):
        return {w: max([table[a] for a in taken if reachable(w, a)] or [0])
                for w in ("sdk", "upload", "tls")}

    def rng_caller(a):
        return rng is not None and owner.get(a, ("", ""))[1] in rng["callers"]

    def worst_all(costs, rng_cost=0):
        memo, path, kinds = {}, [], []

        def worst(a, kind="call"):
            if a in path:  # a cycle: name it, count it once
                i = path.index(a)
                grows = "call" in kinds[i + 1:] + [kind]
                recursion.add(" -> ".join(funcs[x][0] for x in path[i:] + [a]) +
                              ("" if grows else " (tail calls only: a loop, no stack growth)"))
                return 0
            if a in memo:
                return memo[a]
            path.append(a)
            kinds.append(kind)
            ind = 0
            if indirect[a]:
                ind = max(costs[world(a)], rng_cost) if rng_caller(a) else costs[world(a)]
            deepest = max([worst(c) for c in callees[a]] + [ind])
            # a tail call replaces this frame
            memo[a] = max([frame[a] + deepest] + [worst(t, "tail") for t in tails[a]])
            path.pop()
            kinds.pop()
            return memo[a]

        sys.setrecursionlimit(100000)
        return {a: worst(a) for a in funcs}

    # Pointer calls resolved one level: a call through a pointer costs the deepest direct-call
    # chain of a function it can reach; that function's own pointer calls are not followed
    # (with Mbed TLS's tables, following them makes every chain the deepest one).
    depth1 = worst_all({"sdk": 0, "upload": 0, "tls": 0})
    costs = ind_costs(depth1)
    rng_notes = None
    if rng:
        # The port RNG hook's own chain: its pointer calls resolved by RNG_POINTERS (a cycle
        # counted once).
        taken_names = {funcs[t][0]: t for t in taken}
        unresolved = set()

        def pointer_targets(a):
            base = funcs[a][0].split(".")[0]  # GCC's clones: name.part.0, name.constprop.0
            if base not in RNG_POINTERS:
                unresolved.add(funcs[a][0])
                return []
            missing = [t for t in RNG_POINTERS[base] if t not in taken_names]
            if missing:
                sys.exit(f"make size: {name}: RNG_POINTERS names {', '.join(missing)} for {base}, "
                         "but the image does not take its address: update .make/size.py")
            return [taken_names[t] for t in RNG_POINTERS[base]]

        memo_r = {}

        def rng_chain(a, path):
            if a in path:
                return 0, [], True
            if a in memo_r:
                return memo_r[a]
            path = path + [a]
            best, best_path, cyc = 0, [], False
            nexts = [(c, 0) for c in callees[a]] + [(t, 1) for t in tails[a]]
            if indirect[a]:
                nexts += [(t, 0) for t in pointer_targets(a)]
            for c, is_tail in nexts:
                d, p, c_cyc = rng_chain(c, path)
                cyc = cyc or c_cyc
                if is_tail:
                    if d - frame[a] > best:  # the callee replaces this frame
                        best, best_path = d - frame[a], p
                elif d > best:
                    best, best_path = d, p
            res = (frame[a] + best, [a] + best_path, cyc)
            if not cyc:
                memo_r[a] = res
            return res

        chains = {a: rng_chain(a, []) for a in rng_hooks}
        if unresolved:
            sys.exit(f"make size: {name}: pointer calls on the RNG hook's chain from "
                     f"{', '.join(sorted(unresolved))}: name their targets in RNG_POINTERS")
        if not chains:
            sys.exit(f"make size: {name}: none of the RNG hooks {rng['hooks']} is in the image")
        hook_a = max(chains, key=lambda a: chains[a][0])
        rng_cost, rng_path = chains[hook_a][0], chains[hook_a][1]
        sites = sorted(funcs[a][0] for a in funcs if indirect[a] and rng_caller(a))
        if not sites:
            sys.exit(f"make size: {name}: no rng->fill call site (objects {rng['callers']}) in the image")
        rng_notes = {"hook": funcs[hook_a][0], "hook_stack": rng_cost,
                     "hook_chain": [f"{funcs[x][0]} {frame[x]}" for x in rng_path],
                     "call_sites": sites, "irq": rng["irq"],
                     "irq_bytes": sum(b for b, _ in rng["irq"])}
        full = worst_all(costs, rng_cost)
        without = worst_all(costs, 0)         # the hook taken as free (the old figure)
        plus1 = worst_all(costs, rng_cost + 1)  # does a chain go through the hook?
    else:
        full = worst_all(costs)
    hook = costs["upload"]
    sdk_taken = [a for a in taken if reachable("upload", a)]
    hook_fn = max(sdk_taken, key=lambda a: depth1[a]) if sdk_taken else None
    tls_taken = [a for a in taken if reachable("tls", a)]
    tls_fn = max(tls_taken, key=lambda a: depth1[a]) if tls_taken else None
    one_call = {n: max(full[a] for a in by_name[n]) for n in one_call_names if n in by_name}
    if rng_notes:
        irq = rng_notes["irq_bytes"]
        parts = {}
        for n in one_call:
            w0 = max(without[a] for a in by_name[n])
            through = max(plus1[a] for a in by_name[n]) > one_call[n]
            parts[n] = {"sdk_only": w0, "through_rng": through,
                        "sdk_to_rng_call": one_call[n] - rng_notes["hook_stack"] if through else None,
                        "rng_hook": rng_notes["hook_stack"], "irq": irq,
                        "total": one_call[n] + irq}
            one_call[n] += irq
        rng_notes["one_call_parts"] = parts
    stack, deepest_fn = {}, {}
    for a, (fname, _, bind) in funcs.items():
        mod = owner.get(a, ("?", ""))[0]
        if bind == "GLOBAL" and (mod.startswith("sdk/") or mod == "port/tls"):
            if full[a] > stack.get(mod, -1):
                stack[mod], deepest_fn[mod] = full[a], fname
    dynamic = sorted(funcs[a][0] for a in funcs if quals.get(a, "static") not in ("static", "prologue"))
    ind_fns = sorted(funcs[a][0] for a in funcs if indirect[a] and owner.get(a, ("?",))[0].startswith("sdk/"))
    mods = sorted(set(flash) | set(ram) | set(state))
    rows = [{"name": m, "flash": flash.get(m, 0), "ram": ram.get(m, 0) + state.get(m, 0),
             "stack": stack.get(m, 0), "static_data": ram.get(m, 0), "state": state.get(m, 0),
             "deepest": deepest_fn.get(m, "")} for m in mods]
    total = {"flash": sum(flash.values()), "ram": sum(ram.values()) + sum(state.values()),
             "stack": max(stack.values() or [0]) + (rng_notes["irq_bytes"] if rng_notes else 0)}
    notes = {
        "recursion": sorted(recursion),
        "dynamic_frames": dynamic,
        "indirect_callers_in_sdk": ind_fns,
        "indirect_call_cost": hook,
        "indirect_call_cost_mbedtls": costs["tls"],
        "indirect_call_deepest_target_mbedtls": funcs[tls_fn][0] if tls_fn is not None else None,
        "indirect_call_deepest_target": funcs[hook_fn][0] if hook_fn is not None else None,
        "address_taken": len(taken),
        "largest_files": sorted(files.items(), key=lambda kv: -kv[1])[:8],
        "one_call_stack": one_call,
        "rng_hook": rng_notes,
    }
    return rows, total, notes


def arena_from_log(path):
    sizes = {}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"# smallest arena for a TLS (1\.[23](?:\+cert)?) session \((?:device|device_lean) config, (\S+)\): (\d+) bytes", line)
                if m:
                    sizes[m.group(1)] = (int(m.group(3)), m.group(2))
    except OSError:
        pass
    return sizes


def print_rng(r, ind):
    """The parts of a stack figure with the port RNG hook and the interrupt allowance."""
    print(f"{ind}port RNG hook {r['hook']}: {r['hook_stack']} bytes of stack at the rng->fill call "
          f"({', '.join(r['call_sites'])}); its chain: {' -> '.join(r['hook_chain'])}")
    print(f"{ind}interrupt allowance {r['irq_bytes']} bytes: " +
          "; ".join(f"{b} {why}" for b, why in r["irq"]))
    for n, p in r["one_call_parts"].items():
        if p["through_rng"]:
            print(f"{ind}{n}: {p['total']} = SDK frames down to the rng->fill call "
                  f"{p['sdk_to_rng_call']} + RNG hook {p['rng_hook']} + interrupts {p['irq']} "
                  f"(the SDK alone, hook counted as free: {p['sdk_only']})")
        elif p["sdk_only"] > 64:  # (not a report kind the build leaves out, which only refuses)
            print(f"{ind}{n}: {p['total']} = SDK chain {p['total'] - p['irq']} (deeper than any "
                  f"chain through the RNG hook) + interrupts {p['irq']}")


def stack_of():
    """size.py --stack-of ELF --map MAP --dirs DIR,... NAME...: the one-call stack of each NAME
    in an image that links the port RNG (tests/cross/test_cm_stack.sh's painted image), as make
    size computes the tuple builds'. Prints the parts, then "with_rng N" and "sdk_only N" for
    the first NAME (without the interrupt allowance: the image takes no interrupts) and
    "NAME N" for each NAME."""
    ap = argparse.ArgumentParser(prog="size.py --stack-of")
    ap.add_argument("--stack-of", dest="elf", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--dirs", required=True)
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    rng = {"hooks": RNG_HOOKS, "callers": RNG_CALLERS, "irq": IRQ_ALLOWANCE}
    _, _, notes = analyse("image", args.elf, args.map, None, args.dirs.split(","), args.names, rng)
    r = notes["rng_hook"]
    missing = [n for n in args.names if n not in notes["one_call_stack"]]
    if missing:
        sys.exit(f"size.py: not in the image: {', '.join(missing)}")
    print_rng(r, "")
    first = r["one_call_parts"][args.names[0]]
    print(f"with_rng {first['total'] - first['irq']}")
    print(f"sdk_only {first['sdk_only']}")
    for n in args.names:
        print(f"{n} {notes['one_call_stack'][n] - r['irq_bytes']}")


def kb(n):
    return f"{n / 1024:.1f} KB"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--stack-of":
        return stack_of()
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--arena-log", required=True, help="the device profile's arena (default+tls)")
    ap.add_argument("--lean-arena-log", help="the lean profile's arena (default+lean_tls)")
    ap.add_argument("--build", action="append", required=True)
    ap.add_argument("--one-call", default="", help="report calls whose own stack is printed")
    ap.add_argument("--rng-builds", default="",
                    help="builds (comma-separated) whose stack includes the port RNG hook and interrupts")
    args = ap.parse_args()
    rng_builds = set(filter(None, args.rng_builds.split(",")))
    # tests/README.md §Results files: modules (here those of the largest build, default+tls,
    # whose SDK rows equal the default build's) and totals; every build's rows and the analysis
    # notes besides.
    report = {"target": "cortex-m4", "flags": "-mcpu=cortex-m4 -mthumb -Os, soft float, newlib-nano",
              "modules": [], "totals": {}, "builds": {}, "notes": {}}
    arena_logs = {"default+tls": args.arena_log, "default+lean_tls": args.lean_arena_log}
    failed, unmeasured = [], []
    for spec in args.build:
        name, elf, mapfile, state_obj, dirs, *rng_image = spec.split(":")
        rows, total, notes = analyse(name, elf, mapfile, state_obj, dirs.split(","),
                                     args.one_call.split())
        if name in rng_builds:
            # Flash and RAM are the SDK image's; the stack is that of the same image with the
            # port's production RNG linked (RNG_ELF:RNG_MAP), its hook charged at rng->fill.
            if len(rng_image) != 2:
                sys.exit(f"make size: {name}: --rng-builds needs the image with the RNG (:ELF:MAP)")
            rng = {"hooks": RNG_HOOKS, "callers": RNG_CALLERS, "irq": IRQ_ALLOWANCE}
            r_rows, r_total, r_notes = analyse(name, rng_image[0], rng_image[1], state_obj,
                                               dirs.split(","), args.one_call.split(), rng)
            notes["stack_sdk_alone"] = total["stack"]  # the figure before: hooks as in the SDK image
            r_stack = {r["name"]: r for r in r_rows}
            for r in rows:
                if r["name"] in r_stack:
                    r["stack"], r["deepest"] = r_stack[r["name"]]["stack"], r_stack[r["name"]]["deepest"]
            total["stack"] = r_total["stack"]
            for k in ("one_call_stack", "rng_hook", "recursion", "dynamic_frames",
                      "indirect_callers_in_sdk", "indirect_call_cost", "indirect_call_deepest_target"):
                notes[k] = r_notes[k]
        if arena_logs.get(name):
            arena = arena_from_log(arena_logs[name])
            if arena:
                total["arena"] = max(v[0] for v in arena.values())
                notes["arena_measured_on"] = sorted({v[1] for v in arena.values()})
                notes["arena_per_version"] = {k: v[0] for k, v in arena.items()}
            else:
                total["arena"] = None
                unmeasured.append(f"the TLS arena of {name} (see {arena_logs[name]})")
        if name in DAP_BUILDS:  # list them before default+tls: modules stay default+tls's
            notes["flash_added_over"] = "default+tls"
        report["totals"][name] = total
        report["notes"][name] = notes
        report["builds"][name] = rows
        report["modules"] = [{k: r[k] for k in ("name", "flash", "ram", "stack")} for r in rows]
        print(f"\n{name}: Cortex-M4, -Os Thumb-2 (bytes; ram = static data + caller-owned state)")
        print(f"  {'module':16} {'flash':>8} {'ram':>7} {'(state)':>8} {'stack':>6}  deepest public function")
        for r in rows:
            print(f"  {r['name']:16} {r['flash']:8} {r['ram']:7} {r['state']:8} {r['stack']:6}  {r['deepest']}")
        line = f"  {'total':16} {total['flash']:8} {total['ram']:7} {'':8} {total['stack']:6}"
        if "arena" in total and total["arena"] is not None:
            line += f"  + TLS arena {total['arena']} ({', '.join(f'TLS {k}: {v}' for k, v in sorted(notes['arena_per_version'].items()))}; measured on {', '.join(notes['arena_measured_on'])})"
        print(line)
        ind = notes["indirect_call_cost"]
        print(f"  function-pointer calls from the SDK: counted as {ind} bytes (the deepest hook they can reach: "
              f"{notes['indirect_call_deepest_target']}); made by "
              f"{', '.join(notes['indirect_callers_in_sdk']) or 'none'}")
        if name == "default+tls":
            print(f"  function-pointer calls inside Mbed TLS: counted as {notes['indirect_call_cost_mbedtls']} bytes "
                  f"(the deepest of the {notes['address_taken']} address-taken functions it can reach: "
                  f"{notes['indirect_call_deepest_target_mbedtls']})")
        print("  one call (worst-case stack): " + ", ".join(f"{k} {v}" for k, v in notes["one_call_stack"].items() if v))
        if notes.get("rng_hook"):
            print(f"  stack {total['stack']}: the image with the port RNG linked (its hook at the "
                  f"rng->fill call) + interrupts; the SDK image alone: {notes['stack_sdk_alone']}")
            print_rng(notes["rng_hook"], "  ")
        print(f"  recursion: {', '.join(notes['recursion']) or 'none'}; "
              f"dynamic frames: {', '.join(notes['dynamic_frames']) or 'none'}")
        for metric, limit in TARGETS.get(name, {}).items():
            got = total.get(metric)
            if got is None:
                continue
            if got <= limit:
                print(f"  target {metric} <= {kb(limit)}: met ({got} bytes, {limit - got} to spare)")
            else:
                if metric == "flash":
                    hint = ", ".join(f"{f} {n}" for f, n in notes["largest_files"][:6])
                elif metric == "arena":
                    hint = "the Mbed TLS record buffers (MBEDTLS_SSL_IN_CONTENT_LEN 16384) and the peer chain"
                else:
                    big = sorted(rows, key=lambda r: -r[metric])[:3]
                    hint = ", ".join(f"{r['name']} {r[metric]}" + (f" ({r['deepest']})" if metric == "stack" else "")
                                     for r in big)
                print(f"  target {metric} <= {kb(limit)}: MISSED by {got - limit} bytes "
                      f"({100.0 * (got - limit) / limit:.0f}%); largest: {hint}")
                failed.append(f"MISSED cortex-m4 {name} {metric}: {got} bytes, budget {limit} "
                              f"({kb(limit)}), over by {got - limit} "
                              f"({100.0 * (got - limit) / limit:.0f}%)")
    # What the two-aggregator mode adds to a firmware that already has the TLS client.
    tls = report["totals"].get("default+tls")
    for name in DAP_BUILDS:
        dap = report["totals"].get(name)
        if dap is None:
            continue
        if tls is None:
            unmeasured.append(f"the flash {name} adds (no default+tls build)")
            continue
        added = dap["flash"] - tls["flash"]
        dap["flash_added"] = added
        limit = TARGETS.get(name, {}).get("flash_added")
        per_module = {r["name"]: r["flash"] for r in report["builds"][name]}
        base = {r["name"]: r["flash"] for r in report["builds"]["default+tls"]}
        grew = sorted(((m, n - base.get(m, 0)) for m, n in per_module.items()
                       if n != base.get(m, 0)), key=lambda kv: -kv[1])
        detail = ", ".join(f"{m} {d:+d}" for m, d in grew)
        if limit is None:
            print(f"\n{name} adds {added} bytes of flash to default+tls: reported only ({detail})")
        elif added <= limit:
            print(f"\n{name} adds {added} bytes of flash to default+tls: target <= "
                  f"{kb(limit)} met ({detail})")
        else:
            print(f"\n{name} adds {added} bytes of flash to default+tls: target <= "
                  f"{kb(limit)} MISSED by {added - limit} bytes ({detail})")
            failed.append(f"MISSED cortex-m4 {name} flash_added: {added} bytes, budget "
                          f"{limit} ({kb(limit)}), over by {added - limit}")
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwrote {args.out}; targets missed: {len(failed)}")
    for line in failed:
        print(line)
    if unmeasured:
        sys.exit("make size: could not measure " + ", ".join(unmeasured))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
