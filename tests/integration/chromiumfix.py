"""Debian's headless Chromium, driven over --remote-debugging-pipe.

One start serves a whole test: it loads a page, reads what a person
would read (document.body.innerText, and the DOM), and takes screenshots
at phone and desktop sizes, through the DevTools protocol on two pipes
(no port, no websocket library).  Chromium calls update and sign-in
servers by itself: every request goes to a proxy on loopback that
accepts connections and never answers, loopback included
(--proxy-bypass-list=<-loopback> drops its implicit bypass),
so that no packet leaves the machine.  Every Chromium process (they
share one process group) is killed at teardown, and the browser dies
with the pytest that started it (procfix.py) if there is no teardown.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import TIME_SCALE
from procfix import die_with_parent

CHROMIUM = "/usr/bin/chromium"

# Where the screenshots are kept: build/artefacts/ (out of git).
ARTEFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "build", "artefacts")


class Chromium:
    def __init__(self, tmp_path):
        self.tmp = tmp_path / "chromium"
        self.tmp.mkdir()
        # The proxy: a listening socket nobody accepts on.
        self.proxy = socket.socket()
        self.proxy.bind(("127.0.0.1", 0))
        self.proxy.listen(64)
        to_r, self._to_w = os.pipe()        # we write, Chromium reads on 3
        self._from_r, from_w = os.pipe()    # Chromium writes on 4
        # Above 4, so that moving them onto 3 and 4 overwrites neither.
        to_r, from_w = self._high(to_r), self._high(from_w)
        args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--disable-sync", "--disable-component-update",
                "--disable-extensions", "--disable-background-networking",
                f"--proxy-server=http://127.0.0.1:{self.proxy.getsockname()[1]}",
                "--proxy-bypass-list=<-loopback>",
                f"--user-data-dir={self.tmp / 'profile'}",
                "--remote-debugging-pipe", "--hide-scrollbars", "about:blank"]
        # The pipes on 3 and 4, where --remote-debugging-pipe wants them
        # (bash: dash takes no descriptor above 9).
        sh = f'exec 3<&{to_r} 4>&{from_w} {to_r}<&- {from_w}>&- "$@"'
        self.proc = subprocess.Popen(["bash", "-c", sh, "bash"] + args,
                                     pass_fds=(to_r, from_w), start_new_session=True,
                                     preexec_fn=die_with_parent,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.tmp / "stderr", "w"))
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.session = None

    @staticmethod
    def _high(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        return high

    # ---------------------------------------------------------- protocol

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer")
            r, _, _ = select.select([self._from_r], [], [], left)
            if r:
                chunk = os.read(self._from_r, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed its pipe: " + self.stderr())
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=True, timeout=60, **params):
        """Sends one command and returns its result; events are kept."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session and self.session is not None:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout * TIME_SCALE
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout * TIME_SCALE
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    # ---------------------------------------------------------- pages

    def open(self, path, width, height, mobile=False):
        """Loads a file in a tab of width x height CSS pixels."""
        if self.session is None:
            target = self.call("Target.createTarget", session=False, url="about:blank")
            att = self.call("Target.attachToTarget", session=False,
                            targetId=target["targetId"], flatten=True)
            self.session = att["sessionId"]
            self.call("Page.enable")
            self.call("Network.enable")
            self.call("Log.enable")
            self.call("Runtime.enable")
        self.resize(width, height, mobile)
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", url="file://" + os.path.abspath(path))
        self.wait_event("Page.loadEventFired")

    def resize(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, name):
        """The whole page as a PNG in build/artefacts/; returns its path."""
        h = self.js("document.documentElement.scrollHeight")
        w = self.js("document.documentElement.clientWidth")
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})
        os.makedirs(ARTEFACTS, exist_ok=True)
        path = os.path.join(ARTEFACTS, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path

    def requests(self):
        """The URLs the pages asked for."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def log_entries(self):
        """Console and browser log lines (a Content-Security-Policy refusal is one)."""
        out = [e["params"]["entry"]["text"] for e in self.events
               if e.get("method") == "Log.entryAdded"]
        out += [" ".join(str(a.get("value")) for a in e["params"]["args"])
                for e in self.events if e.get("method") == "Runtime.consoleAPICalled"]
        out += [str(e["params"]["exceptionDetails"]) for e in self.events
                if e.get("method") == "Runtime.exceptionThrown"]
        return out

    def stderr(self):
        try:
            return (self.tmp / "stderr").read_text()[-2000:]
        except OSError:
            return ""

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(30)
        os.close(self._to_w)
        os.close(self._from_r)
        self.proxy.close()


def chromium_processes(profile):
    """The pids of processes started with this profile folder."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(profile).encode() in f.read():
                    out.append(int(pid))
        except OSError:
            pass
    return out


@pytest.fixture
def chromium(tmp_path):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("chromium is not installed (make check-deps installs it)")
    c = Chromium(tmp_path)
    yield c
    c.close()
    # SIGKILL takes a moment to land everywhere; give it a few seconds.
    deadline = time.monotonic() + 10 * TIME_SCALE
    left = chromium_processes(c.tmp / "profile")
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = chromium_processes(c.tmp / "profile")
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"Chromium processes outlived the test: {left}"
    shutil.rmtree(c.tmp, ignore_errors=True)
