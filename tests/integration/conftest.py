"""Shared fixtures for the integration tests.

The tests run the built ddup-check (path in $DDUP_CHECK) against real
servers on loopback: HTTP(S) health endpoints (httpfix.py) and BIND /
PowerDNS (dnsfix.py), PostgreSQL (pgfix.py), and fakes of APIs that cannot run here (azurefix.py,
ovhfix.py, route53fix.py). Every server a test starts is stopped by it.
"""

import json
import os
import subprocess
import textwrap

import pytest

from httpfix import *  # noqa: F401,F403  (fixtures)
from dnsfix import *  # noqa: F401,F403  (fixtures)
from cloudflarefix import *  # noqa: F401,F403  (fixtures)
from azurefix import *  # noqa: F401,F403  (fixtures)
from ovhfix import *  # noqa: F401,F403  (fixtures)
from pgfix import *  # noqa: F401,F403  (fixtures)
from hetznerfix import *  # noqa: F401,F403  (fixtures)
from digitaloceanfix import *  # noqa: F401,F403  (fixtures)
from hookfix import *  # noqa: F401,F403  (fixtures)
from route53fix import *  # noqa: F401,F403  (fixtures)

def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: bounds its own wall time or needs the machine to itself; "
        "make integration runs these one at a time after the others (tests/pytest-passes)")


# Wall-time bounds in tests are multiplied by this: the valgrind pass of
# make check runs every ddup-check many times slower.
TIME_SCALE = float(os.environ.get("DDUP_TIME_SCALE", "1"))

DDUP = os.environ.get("DDUP_CHECK", os.path.join(os.path.dirname(__file__), "..", "..", "ddup-check"))


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"<rc={self.rc} out={self.out!r} err={self.err!r}>"


class Ddup:
    """Writes a configuration into a temporary folder and runs ddup-check on it."""

    def __init__(self, tmp_path):
        self.dir = tmp_path
        self.config = str(tmp_path / "ddup.ini")
        self.state = str(tmp_path / "state" / "ddup.db")

    def write(self, text, state=True):
        text = textwrap.dedent(text).lstrip()
        if state:
            text = f"state = {self.state}\n" + text
        with open(self.config, "w") as f:
            f.write(text)
        os.chmod(self.config, 0o600)     # it holds secrets, as a real one would
        return self.config

    def run(self, *args, env=None, timeout=60, config=True):
        timeout *= TIME_SCALE
        cmd = [DDUP]
        if config:
            cmd += ["-c", self.config]
        cmd += list(args)
        e = dict(os.environ)
        if env:
            e.update(env)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
        return Result(proc)

    def status(self):
        r = self.run("--status", "--json")
        assert r.rc == 0, r
        return r.json()


@pytest.fixture
def ddup(tmp_path):
    return Ddup(tmp_path)
