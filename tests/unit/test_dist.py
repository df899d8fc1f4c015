#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make dist's tarball is reproducible and holds exactly the commit (.make/dist.sh).

In a git checkout: two runs give the same sha256; the name is dpmetrics-X.Y.Z.tar.gz with HEAD's
version; gzip stores no name and no time; every entry is under dpmetrics-X.Y.Z/, owned by root,
dated at the commit, and the files are exactly HEAD's tracked files (no build outputs, no fetched
sources). Negative controls: the content check flags a doctored tarball. In an unpacked release
tarball (no git): make dist refuses with a clear message instead. (make distcheck builds and
tests the tarball.) TAP."""
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def ok(self, cond, what, diag=None):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}", flush=True)
        if not cond:
            self.failed += 1
            for line in str(diag or "").splitlines()[:20]:
                print(f"# {line}", flush=True)
        return cond

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120, **kw)


def git(*args):
    return run("git", *args).stdout


def is_checkout():
    top = run("git", "rev-parse", "--show-toplevel")
    return top.returncode == 0 and os.path.realpath(top.stdout.strip()) == os.path.realpath(ROOT)


def make_dist(out):
    """Run .make/dist.sh into out; (exit status, the tarball path or None, stderr)."""
    p = run("bash", ".make/dist.sh", out)
    tars = [f for f in os.listdir(out) if f.endswith(".tar.gz")] if os.path.isdir(out) else []
    return p.returncode, os.path.join(out, tars[0]) if len(tars) == 1 else None, p.stderr


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def problems(path, prefix, files, mtime):
    """What is wrong with the tarball at path, as a list of strings (empty: nothing)."""
    bad = []
    with tarfile.open(path, "r:gz") as tar:
        members = tar.getmembers()
    got = set()
    for m in members:
        if not (m.name == prefix or m.name.startswith(prefix + "/")):
            bad.append(f"{m.name}: outside {prefix}/")
            continue
        rel = m.name[len(prefix) + 1:]
        if m.isfile() or m.issym():
            got.add(rel)
        if m.mtime != mtime:
            bad.append(f"{m.name}: time {m.mtime}, the commit's is {mtime}")
        if m.uid != 0 or m.gid != 0:
            bad.append(f"{m.name}: owner {m.uid}:{m.gid}")
        if rel.split("/")[0] == "build":
            bad.append(f"{m.name}: a build output")
    bad += [f"extra file {f}" for f in sorted(got - files)]
    bad += [f"missing file {f}" for f in sorted(files - got)]
    return bad


def doctored(src, dst, name, mtime):
    """src with one more file, dst (gzip -n style)."""
    raw = io.BytesIO()
    with tarfile.open(src, "r:gz") as a, tarfile.open(fileobj=raw, mode="w") as b:
        for m in a.getmembers():
            b.addfile(m, a.extractfile(m) if m.isfile() else None)
        info = tarfile.TarInfo(name)
        info.size, info.mtime = 4, mtime
        b.addfile(info, io.BytesIO(b"\x7fELF"))
    with open(dst, "wb") as f:
        f.write(gzip.compress(raw.getvalue(), mtime=0))


def main():
    t = Tap()
    with tempfile.TemporaryDirectory(prefix="dpm-dist-test.") as tmp:
        if not is_checkout():
            rc, path, err = make_dist(os.path.join(tmp, "a"))
            print("# not a git checkout (an unpacked release tarball): make dist must refuse")
            t.ok(rc != 0 and path is None and "needs a git checkout" in err,
                 "make dist refuses outside a git checkout, with a clear message", err)
            return t.done()

        rc1, a, err1 = make_dist(os.path.join(tmp, "a"))
        rc2, b, err2 = make_dist(os.path.join(tmp, "b"))
        if not t.ok(rc1 == 0 and rc2 == 0 and a and b, "make dist runs twice", err1 + err2):
            return t.done()
        ha, hb = sha256(a), sha256(b)
        t.ok(ha == hb, f"reproducible: both runs give sha256 {ha[:16]}... ({hb[:16]}...)")
        # A fresh clone of the same commit elsewhere, checked out under another umask.
        clone = os.path.join(tmp, "clone")
        commit = git("rev-parse", "HEAD").strip()
        p = run("sh", "-c", f'umask 077 && git clone -q --no-checkout "{ROOT}" "{clone}" && '
                f'git -C "{clone}" checkout -q {commit} && '
                f'bash "{clone}/.make/dist.sh" "{tmp}/c"')
        c = os.path.join(tmp, "c", os.path.basename(a))
        hc = sha256(c) if os.path.exists(c) else p.stderr
        t.ok(hc == ha, f"reproducible: a fresh clone elsewhere (umask 077) gives the same bytes",
             hc)

        head_header = git("show", "HEAD:sdk/include/dpm/version.h")
        version = run("sh", ".make/version.sh", "-", input=head_header).stdout.strip()
        prefix = f"dpmetrics-{version}"
        t.ok(os.path.basename(a) == f"{prefix}.tar.gz", f"named {prefix}.tar.gz (HEAD's version)",
             a)
        with open(a, "rb") as f:
            head = f.read(10)
        t.ok(head[:3] == b"\x1f\x8b\x08" and not head[3] & 0x08 and head[4:8] == bytes(4),
             "gzip header without file name and time (gzip -n)", head.hex())

        mtime = int(git("log", "-1", "--format=%ct", "HEAD").strip())
        files = set(git("ls-tree", "-r", "--name-only", "HEAD").splitlines())
        bad = problems(a, prefix, files, mtime)
        t.ok(not bad and len(files) > 100,
             f"holds exactly HEAD's {len(files)} files under {prefix}/, root-owned, dated at the "
             "commit; no build outputs or fetched sources", "\n".join(bad))

        # Negative controls: the content check sees an extra file, a wrong time, a wrong prefix.
        d = os.path.join(tmp, "doctored.tar.gz")
        doctored(a, d, f"{prefix}/build/host/libdpm.a", mtime)
        bad = problems(d, prefix, files, mtime)
        t.ok(any("build output" in x for x in bad) and any("extra file" in x for x in bad),
             "negative control: a tarball with a build output is flagged", "\n".join(bad))
        t.ok(problems(a, prefix, files, mtime + 1) != [],
             "negative control: entries dated other than the commit are flagged")
        t.ok(problems(a, "dpmetrics-9.9.9", files, mtime) != [],
             "negative control: another prefix is flagged")
        t.ok(sha256(d) != ha, "negative control: the doctored tarball's sha256 differs")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
