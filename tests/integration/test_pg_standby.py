"""A fleet on a primary and a streaming standby: the primary lost mid-slot, the standby promoted.

Two real PostgreSQL servers on loopback (pgnetfix.py): the primary, and a
standby made from it with pg_basebackup that streams from it
synchronously (a commit returns once the standby has it, as the README
advises).  The checkers' URI names both hosts with
target_session_attrs=read-write, as the README's does.  One pair per
module: the test that promotes the standby uses it up.
"""

import subprocess

import pytest

from conftest import DDUP, TIME_SCALE, Result
from fleetfix import Fleet
from pgfix import PG_PASSWORD, _bindir
from pgnetfix import Current, Primary, Standby
from test_fleet import B, P, settle

pytestmark = pytest.mark.skipif(_bindir() is None, reason="not installed: postgresql")


@pytest.fixture(scope="module")
def pg_pair():
    """A primary and its synchronous standby, both stopped and removed after."""
    primary, standby = Primary(), None
    try:
        primary.start()
        standby = Standby(primary)
        standby.start()
        primary.sync_with()
        yield primary, standby
    finally:
        for s in (standby, primary):
            if s is not None:
                s.destroy()


def uri(*servers, attrs="?target_session_attrs=read-write"):
    hosts = ",".join(f"127.0.0.1:{s.port}" for s in servers)
    return f"postgresql://ddup:{PG_PASSWORD}@{hosts}/ddup{attrs}"


def data(f):
    """Every row of ddup's tables (sequences left out: a promoted standby's
    run ahead by their cached values, as PostgreSQL documents)."""
    return {k: v for k, v in f.tables().items() if not k.startswith("sequence ")}


def run_with(tmp_path, text):
    """A run of a configuration of the fleet's with another state URI."""
    path = tmp_path / "other.ini"
    path.write_text(text)
    path.chmod(0o600)
    return Result(subprocess.run([DDUP, "-c", str(path)], capture_output=True, text=True,
                                 timeout=60 * TIME_SCALE))


def test_primary_stopped_mid_slot_standby_promoted(tmp_path, pg_pair, bind_server,
                                                  http_server):
    primary, standby = pg_pair
    srv = (http_server(), http_server())
    cur = Current(primary, uri(primary, standby))
    f = Fleet(tmp_path, cur, bind_server,
              [("primary", srv[0], P, 0), ("backup", srv[1], B, 10)], attempts=1, socket=())
    settle(f)
    srv[0].set(status=503)
    f.next_slot()
    f.round()                   # a outvoted by the slot before; b and c report the failure
    assert f.dns() == [P]
    slot = f.next_slot()
    r = f.run("a")              # takes the slot's round: the primary fails over
    assert r.rc == 0, r
    assert f.dns() == [B]
    updates = bind_server.update_count()
    before = data(f)
    assert before["ddup_round"] and f"{slot}" in before["ddup_round"][0][0], before["ddup_round"]

    # Mid-slot, b and c still to run: the primary crashes.
    primary.stop(mode="immediate")
    r = f.run("b")              # the standby is read-only: no server takes writes
    assert r.rc == 4, r
    assert "cannot connect" in r.err and "ddup:***@" in r.err and PG_PASSWORD not in r.err, r
    # Why each host was passed over, in one line.
    assert f'port {primary.port} failed: Connection refused' in r.err, r
    assert f'port {standby.port} failed: session is read-only' in r.err, r
    assert len(r.err.strip().splitlines()) == 1, r
    print(f"during the failover: {r.err.strip()}")
    standby.promote()
    cur.server = standby
    assert data(f) == before    # every commit of a's run is on the new primary

    # The slot was a's: b and c only report, DNS is written once.
    assert f.slot() == slot
    f.round("bc")
    assert bind_server.update_count() == updates
    rd = f.status("b")["domains"][0]
    assert rd["round"]["checker"] == "a" and rd["round"]["slot"] == slot, rd["round"]
    assert rd["published"] == [B] and rd["lastError"] is None, rd

    # The next slot's round goes on from the new primary, whoever takes it.
    f.next_slot()
    f.round("bca")
    assert f.dns() == [B]
    assert bind_server.update_count() == updates
    st = f.status("c")
    d = st["domains"][0]
    assert d["round"]["checker"] == "b" and d["round"]["slot"] == slot + 1, d["round"]
    assert d["published"] == [B] and d["lastError"] is None, d
    assert {c["name"]: c["slot"] for c in st["fleet"]["checkers"]} == \
        {"a": slot + 1, "b": slot + 1, "c": slot + 1}

    # The hosts as query parameters, libpq's other form: the same primary.
    query = (f"postgresql://ddup:{PG_PASSWORD}@/ddup?host=127.0.0.1,127.0.0.1&"
             f"port={primary.port},{standby.port}&target_session_attrs=read-write")
    r = run_with(tmp_path, f.text("b").replace(uri(primary, standby), query))
    assert r.rc == 0, r
    assert {c["name"]: c["slot"] for c in f.status("a")["fleet"]["checkers"]}["b"] == slot + 1

    # A checker whose URI reaches only the old primary: exit 4, nothing changed.
    before = data(f)
    r = run_with(tmp_path, f.text("c").replace(uri(primary, standby), uri(primary, attrs="")))
    assert r.rc == 4, r
    assert "cannot connect" in r.err and PG_PASSWORD not in r.out + r.err, r
    assert data(f) == before and f.dns() == [B]
    assert bind_server.update_count() == updates
