#!/usr/bin/python3
"""make bench: run the benchmark programs, add callgrind instruction counts, merge the figures
into build/bench.json (DESIGN.md §7 schema) and print them as a table.

  bench.py OUT_DIR BENCH_JSON
Metrics from other benchmarks already in BENCH_JSON are kept; ours replace same-named ones."""
import json
import os
import platform
import shutil
import subprocess
import sys

TARGETS = {  # metric -> the most its ratio to the RNG may be (issue targets)
    "noise.laplace.eps1.ratio_to_rng": 3.0,
    "noise.grr.k64.eps1.ratio_to_rng": 2.0,
    "noise.rr.eps1.ratio_to_rng": 2.0,
}
VALUE_TARGETS = {  # metric -> the most its value may be
    "report.tuple_mr.bytes": 40,
}
CALLGRIND_N = 20000


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def callgrind_instructions(binary, name, n):
    """Instructions executed by `binary --only name --n n` (Ir total)."""
    out = f"/tmp/dpm-callgrind.{os.getpid()}"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
                    "--only", name, "--n", str(n)], check=True, capture_output=True)
    total = None
    with open(out) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    os.unlink(out)
    return total


def noise_metrics(out_dir):
    binary = os.path.join(out_dir, "bench", "bench_noise")
    lines = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in lines.splitlines() if l.strip()]
    metrics = []
    have_valgrind = shutil.which("valgrind") is not None
    for row in rows:
        name = row["name"]
        if name == "noise.rng_bulk":
            metrics.append(dict(name="noise.rng_bulk.ns_per_byte", value=row["ns_per_byte"],
                                unit="ns/byte", baseline=None, ratio=None))
            continue
        ns, nbytes, rng = row["ns_per_sample"], row["bytes_per_sample"], row["ns_per_byte_rng"]
        floor = nbytes * rng
        metrics.append(dict(name=f"{name}.ns_per_sample", value=ns, unit="ns",
                            baseline="noise.rng_bulk.ns_per_byte", ratio=None))
        metrics.append(dict(name=f"{name}.bytes_per_sample", value=nbytes, unit="bytes",
                            baseline=None, ratio=None))
        metrics.append(dict(name=f"{name}.ratio_to_rng", value=ns, unit="ns",
                            baseline=f"noise.rng_bulk x {nbytes:.3f} bytes = {floor:.2f} ns",
                            ratio=ns / floor if floor > 0 else None))
        if have_valgrind:
            n = CALLGRIND_N // 10 if "fixed" in name else CALLGRIND_N
            i1 = callgrind_instructions(binary, name, n)
            i2 = callgrind_instructions(binary, name, 2 * n)
            metrics.append(dict(name=f"{name}.instructions_per_sample", value=(i2 - i1) / n,
                                unit="instructions", baseline=None, ratio=None))
    return metrics


def plain_metrics(out_dir):
    """Bench programs other than bench_noise print finished metric objects, one per line."""
    metrics = []
    bench_dir = os.path.join(out_dir, "bench")
    for name in sorted(os.listdir(bench_dir)):
        if name == "bench_noise" or not name.startswith("bench_"):
            continue
        lines = subprocess.run([os.path.join(bench_dir, name)], check=True,
                               capture_output=True, text=True).stdout
        metrics += [json.loads(l) for l in lines.splitlines() if l.strip()]
    return metrics


def main():
    out_dir, bench_json = sys.argv[1], sys.argv[2]
    metrics = noise_metrics(out_dir) + plain_metrics(out_dir)
    old = []
    if os.path.exists(bench_json):
        with open(bench_json) as f:
            old = json.load(f).get("metrics", [])
    names = {m["name"] for m in metrics}
    merged = [m for m in old if m["name"] not in names] + metrics
    with open(bench_json, "w") as f:
        json.dump({"machine": machine(), "metrics": merged}, f, indent=1)
    print(f"{'metric':52} {'value':>12} {'unit':>13} {'ratio':>8}  target")
    failed = []
    for m in metrics:
        ratio = "" if m["ratio"] is None else f"{m['ratio']:.2f}"
        target = TARGETS.get(m["name"])
        verdict = ""
        if m["name"] in VALUE_TARGETS:
            target = VALUE_TARGETS[m["name"]]
            ok = m["value"] <= target
            verdict = f"<= {target:g} {'met' if ok else 'MISSED'}"
            if not ok:
                failed.append(m["name"])
        elif target is not None and m["ratio"] is not None:
            ok = m["ratio"] <= target
            verdict = f"<= {target:g} {'met' if ok else 'MISSED'}"
            if not ok:
                failed.append(m["name"])
        print(f"{m['name']:52} {m['value']:12.3f} {m['unit']:>13} {ratio:>8}  {verdict}")
    print(f"wrote {bench_json} ({len(merged)} metrics); targets missed: {len(failed)}")


if __name__ == "__main__":
    main()
