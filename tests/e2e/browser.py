# SPDX-License-Identifier: Apache-2.0
"""Headless Chromium (Debian's `chromium`) driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes on file descriptors 3 and 4), from
Python's standard library only. Used by tests/e2e/test_console.py; not a test itself.

Chromium runs as root here, so it needs --no-sandbox; on a machine without network the other
flags keep it from trying to reach any service at start-up (it would hang), and a fresh
--user-data-dir keeps every run independent. The collector's self-signed certificate is trusted
by its public key only (--ignore-certificate-errors-spki-list), not by ignoring every error."""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio",
         "--remote-debugging-pipe"]


def find_chromium():
    """The chromium binary, or None (a caller must fail then: `make deps` installs it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def spki_sha256_b64(cert_path):
    """base64(SHA-256(SubjectPublicKeyInfo)) of a PEM certificate, as Chromium's
    --ignore-certificate-errors-spki-list wants it."""
    pub = subprocess.run(["openssl", "x509", "-in", cert_path, "-pubkey", "-noout"],
                         capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub,
                         capture_output=True, check=True).stdout
    import hashlib
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


class CdpError(Exception):
    pass


class Browser:
    """One headless Chromium and one page (tab). Events are kept in self.events; console errors
    (exceptions, console.error, error log entries) in self.errors."""

    def __init__(self, trust_cert=None, width=1200, height=900, timeout=30):
        exe = find_chromium()
        if exe is None:
            raise CdpError("chromium is not installed (make deps installs Debian's chromium)")
        self.profile = tempfile.mkdtemp(prefix="dpm-chromium.")
        flags = FLAGS + [f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        if trust_cert:
            flags.append(f"--ignore-certificate-errors-spki-list={spki_sha256_b64(trust_cert)}")
        to_r, to_w = os.pipe()      # we write commands, Chromium reads fd 3
        from_r, from_w = os.pipe()  # Chromium writes fd 4, we read
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")

        def fds():
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)
        self.proc = subprocess.Popen([exe, *flags, "about:blank"], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     close_fds=False, preexec_fn=fds)
        os.close(to_r)
        os.close(from_w)
        self.w, self.r = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        self.auth_prompts = 0
        self.credentials = None
        self.timeout = timeout
        self.session = None
        t = self.call("Target.createTarget", {"url": "about:blank"})
        a = self.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})
        self.session = a["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                          "deviceScaleFactor": 1, "mobile": False})

    # ---- the protocol ------------------------------------------------------------------------
    def _send(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self.w, data)
            data = data[n:]

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("chromium did not answer in time")
            r, _, _ = select.select([self.r], [], [], left)
            if r:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise CdpError("chromium closed the pipe (crashed?)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _event(self, m):
        self.events.append(m)
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console." + p["type"] + ": " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append(f"log ({e.get('source')}): {e.get('text')} {e.get('url', '')}")
        elif method == "Fetch.requestPaused":
            self._send({"id": self._id(), "method": "Fetch.continueRequest", "sessionId": self.session,
                        "params": {"requestId": p["requestId"]}})
        elif method == "Fetch.authRequired":
            self.auth_prompts += 1
            user, pw = self.credentials or ("", "")
            resp = {"response": "ProvideCredentials", "username": user, "password": pw} \
                if self.credentials else {"response": "CancelAuth"}
            self._send({"id": self._id(), "method": "Fetch.continueWithAuth", "sessionId": self.session,
                        "params": {"requestId": p["requestId"], "authChallengeResponse": resp}})

    def _id(self):
        self.next_id += 1
        return self.next_id

    def call(self, method, params=None, timeout=None):
        i = self._id()
        msg = {"id": i, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            m = self._read(deadline)
            if m.get("id") == i:
                if "error" in m:
                    raise CdpError(f"{method}: {m['error'].get('message')}")
                return m.get("result", {})
            if "method" in m:
                self._event(m)

    def pump(self, seconds):
        """Handle events for a while (answers auth prompts, paused requests)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._event(self._read(deadline))
        except CdpError as e:
            if "in time" not in str(e):
                raise

    # ---- what a test does ----------------------------------------------------------------------
    def sign_in_with(self, user, password):
        """Answer the browser's sign-in prompt (HTTP Basic) with these, as a person would type
        them: the Fetch domain pauses the requests that get a 401 and asks."""
        self.credentials = (user, password)
        self.call("Fetch.enable", {"handleAuthRequests": True, "patterns": [{"urlPattern": "*"}]})

    def goto(self, url, ready=None, timeout=None):
        """Load url and wait until the expression `ready` is truthy. By default: the page at url
        (not the one before it) has drawn, body.dataset.ready "1", or "error" when it shows one;
        the console sets "0" while it draws, a string JavaScript also finds truthy. Returns its
        value, or None on time-out."""
        if ready is None:
            ready = (f"location.href === {json.dumps(url)} && document.body && "
                     "['1', 'error'].includes(document.body.dataset.ready) && "
                     "document.body.dataset.ready")
        self.call("Page.navigate", {"url": url})
        return self.wait_for(ready, timeout or self.timeout)

    def wait_for(self, expr, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                v = self.eval(expr)
            except CdpError:
                v = None
            if v:
                return v
            self.pump(0.1)
        return None

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CdpError("evaluate: " + json.dumps(r["exceptionDetails"])[:300])
        return r.get("result", {}).get("value")

    def screenshot(self, path, full=True):
        """The page (full: all of it, up to 6000 px) as PNG, or JPEG (quality 80) when path
        ends in .jpg."""
        params = {"format": "jpeg", "quality": 80} if path.endswith(".jpg") else {"format": "png"}
        if full:
            m = self.call("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m.get("contentSize")
            params.update({"captureBeyondViewport": True, "clip": {
                "x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000),
                "scale": 1}})
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self._send({"id": self._id(), "method": "Browser.close", "params": {}})
            self.proc.wait(5)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
