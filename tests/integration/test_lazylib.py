"""libpq and libxml2 are loaded when a run first needs them, not at start
(lazylib.h): a SQLite run maps neither, one that reads a PostgreSQL URI
loads libpq then and works as before.  glibc's LD_DEBUG=files names every
object the loader maps."""

import re
import subprocess

import pytest

from conftest import DDUP
from test_failover import write_config


def loaded(err):
    return set(re.findall(r"file=(libpq|libxml2)\.so[.\d]* \[", err))


@pytest.mark.sqlite_file
def test_a_sqlite_run_maps_neither_libpq_nor_libxml2(ddup, bind_server, http_server):
    write_config(ddup, bind_server, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run(env={"LD_DEBUG": "files"})
    assert r.rc == 0, r
    assert "DNS updated" in r.err
    assert loaded(r.err) == set(), r.err[-2000:]


def test_a_postgresql_uri_loads_libpq_when_it_is_read(tmp_path):
    cfg = tmp_path / "ddup.ini"
    base = ("checkers = a\nchecker = a\n\n[provider p]\ntype = exec\ncommand = /bin/true\n\n"
            "[domain a.example]\nprovider = p\n\n[endpoint e]\nurl = http://127.0.0.1:1/\n"
            "ip = 127.0.0.1\n")
    for uri, rc in (("postgresql://u@127.0.0.1:1/db", 0),
                    # libpq itself finds this one wrong: the forwarder reached it.
                    ("postgresql://u@127.0.0.1:1/db?nosuchoption=1", 2)):
        cfg.write_text(f"state = {uri}\n" + base)
        cfg.chmod(0o600)
        p = subprocess.run([DDUP, "-n", "-c", str(cfg)], capture_output=True, text=True,
                           env={"LD_DEBUG": "files", "PATH": "/usr/bin:/bin"}, timeout=60)
        assert p.returncode == rc, p.stderr[-2000:]
        assert loaded(p.stderr) == {"libpq"}, p.stderr[-2000:]
    assert "not a PostgreSQL URI that libpq can read: invalid URI query parameter" in p.stderr
