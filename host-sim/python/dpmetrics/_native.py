# SPDX-License-Identifier: Apache-2.0
"""libdpmsim.so through ctypes: dpm-sim's C core in this process (host-sim/sim/lib/dpmsim.h).

The library is looked for, in order, at $DPMETRICS_LIB, beside this module (an installed
package carries its own copy) and in the source tree's build/host/lib/ (`make` builds it).
"""
import ctypes
import os
import tempfile
import threading
from pathlib import Path

API_VERSION = 1  # DPMSIM_API_VERSION of the header this module was written for
MAX_DEVICES = 16  # DPMSIM_MAX_DEVICES
OK, CHECK, USAGE = 0, 1, 2  # the statuses: dpm-sim's exit statuses

_HERE = Path(__file__).resolve().parent
# host-sim/python/dpmetrics -> the repository root
TREE_BUILD = _HERE.parents[2] / "build" / "host"  # `make`'s programs in the source tree
_TREE_LIB = TREE_BUILD / "lib" / "libdpmsim.so"


class DpmError(Exception):
    """A refusal or failure of dpm-sim's core, with its message (what is wrong and where)."""


class RunOpts(ctypes.Structure):
    _fields_ = [
        ("mode", ctypes.c_int),
        ("threads", ctypes.c_uint32),
        ("runs", ctypes.c_uint32),
        ("seed_set", ctypes.c_uint32),
        ("seed", ctypes.c_uint64),
        ("ndevices", ctypes.c_uint32),
        ("devices", ctypes.c_uint64 * MAX_DEVICES),
    ]


def _candidates():
    env = os.environ.get("DPMETRICS_LIB")
    if env:
        return [Path(env)]
    return [_HERE / "_lib" / "libdpmsim.so", _TREE_LIB]


_lib = None
_lock = threading.Lock()  # loading the library
_capture_lock = threading.Lock()  # file descriptors 1 and 2 are the process's: one capture


def lib():
    """The loaded library (loaded once), or DpmError saying how to get one."""
    global _lib  # the one module-level cache: a library is loaded once per process
    with _lock:
        if _lib is None:
            tried = _candidates()
            path = next((p for p in tried if p.is_file()), None)
            if path is None:
                raise DpmError(
                    "libdpmsim.so not found (looked at: " + ", ".join(str(p) for p in tried)
                    + "): run `make pylib` in the dpmetrics repository, or set DPMETRICS_LIB "
                    "to the library's path")
            handle = ctypes.CDLL(str(path))
            handle.dpmsim_api_version.restype = ctypes.c_int
            handle.dpmsim_version.restype = ctypes.c_char_p
            handle.dpmsim_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                          ctypes.POINTER(RunOpts), ctypes.c_char_p,
                                          ctypes.c_size_t]
            handle.dpmsim_run.restype = ctypes.c_int
            handle.dpmsim_plan.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
            handle.dpmsim_plan.restype = ctypes.c_int
            got = handle.dpmsim_api_version()
            if got != API_VERSION:
                raise DpmError(f"{path} has C API version {got}, this package speaks "
                               f"{API_VERSION}: rebuild it (`make pylib`) from the same tree")
            _lib = handle
        return _lib


def version():
    return lib().dpmsim_version().decode()


def run(scenario, out_dir, mode=0, threads=0, runs=0, seed=None, devices=()):
    """dpmsim_run: the scenario file run into out_dir. Raises DpmError with its message."""
    o = RunOpts()
    o.mode, o.threads, o.runs = mode, threads, runs
    if seed is not None:
        o.seed_set, o.seed = 1, seed
    if len(devices) > MAX_DEVICES:
        raise DpmError(f"devices: at most {MAX_DEVICES} sizes in a sweep, got {len(devices)}")
    o.ndevices = len(devices)
    for i, k in enumerate(devices):
        o.devices[i] = k
    err = ctypes.create_string_buffer(1024)
    status = lib().dpmsim_run(os.fsencode(scenario), os.fsencode(out_dir), ctypes.byref(o), err,
                              len(err))
    if status != OK:
        raise DpmError(err.value.decode(errors="replace"))


class _Captured:
    """The C side's standard output and error (file descriptors 1 and 2) during a call."""

    def __enter__(self):
        import sys
        for f in (sys.stdout, sys.stderr):
            f.flush()
        self.files = [tempfile.TemporaryFile() for _ in range(2)]
        self.saved = [os.dup(1), os.dup(2)]
        for fd, f in zip((1, 2), self.files):
            os.dup2(f.fileno(), fd)
        return self

    def __exit__(self, *exc):
        libc = ctypes.CDLL(None)
        libc.fflush(None)  # C's stdio buffers reach the files before they are put back
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        texts = []
        for f in self.files:
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
            f.close()
        self.out, self.err = texts
        return False


def plan(args):
    """dpmsim_plan with these arguments: (status, its standard output, its standard error)."""
    argv = (ctypes.c_char_p * len(args))(*[a.encode() for a in args])
    handle = lib()
    with _capture_lock:
        with _Captured() as cap:
            status = handle.dpmsim_plan(len(args), argv)
    return status, cap.out, cap.err
