# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for dpmetrics that needs nothing from a package index.

pip calls build_wheel; it runs `make pylib` in the repository this folder sits in (so the wheel
carries the libdpmsim.so of this very tree; DPMETRICS_LIB=PATH packs that library instead) and
writes the wheel with the standard library alone: the package's modules, the library, and the
metadata (version from sdk/include/dpm/version.h, the SDK's one version).
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent  # host-sim/python
ROOT = HERE.parent.parent  # the repository
NAME = "dpmetrics"


def _version():
    text = (ROOT / "sdk" / "include" / "dpm" / "version.h").read_text()
    parts = [re.search(rf"#define DPM_VERSION_{k}\s+(\d+)", text) for k in
             ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise RuntimeError("dpmetrics: sdk/include/dpm/version.h has no DPM_VERSION_MAJOR/MINOR/"
                           "PATCH: is this a dpmetrics checkout?")
    return ".".join(m.group(1) for m in parts)


def _library():
    env = os.environ.get("DPMETRICS_LIB")
    if env:
        if not Path(env).is_file():
            raise RuntimeError(f"dpmetrics: DPMETRICS_LIB={env}: no such file")
        return Path(env)
    if not (ROOT / "Makefile").is_file():
        raise RuntimeError(f"dpmetrics: no Makefile at {ROOT}: build from the repository "
                           "(pip install host-sim/python), or set DPMETRICS_LIB to a built "
                           "libdpmsim.so")
    print("dpmetrics: make pylib (libdpmsim.so, dpm-sim's core)", file=sys.stderr)
    done = subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "pylib"],
                          stdout=sys.stderr, check=False)
    lib = ROOT / "build" / "host" / "lib" / "libdpmsim.so"
    if done.returncode != 0 or not lib.is_file():
        raise RuntimeError(f"dpmetrics: `make -C {ROOT} pylib` failed (status {done.returncode}): "
                           "run `make deps` there first (README.md, Quick start)")
    return lib


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{plat}"


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: Plan and read private on-device metric campaigns (dpm-sim's C core)\n"
            "License: Apache-2.0\nRequires-Python: >=3.9\nRequires-Dist: numpy\n"
            "Requires-Dist: pandas\n")


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = Path(metadata_directory) / f"{NAME}-{_version()}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(_version()))
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    tag = _tag()
    files = {}
    for py in sorted((HERE / NAME).glob("*.py")):
        files[f"{NAME}/{py.name}"] = py.read_bytes()
    files[f"{NAME}/_lib/libdpmsim.so"] = _library().read_bytes()
    info = f"{NAME}-{version}.dist-info"
    files[f"{info}/METADATA"] = _metadata(version).encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: dpm_backend\nRoot-Is-Purelib: "
                              f"false\nTag: {tag}\n").encode()
    files[f"{info}/top_level.txt"] = f"{NAME}\n".encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{NAME}-{version}-{tag}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            zi = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return wheel
