"""The state file's views for the common questions (ddup-check(8), STATE FILE; README), after real
runs against real HTTP servers and BIND: an endpoint's uptime over the
day before the last run, flapping endpoints, a domain's DNS changes."""

import sqlite3

import pytest

from test_failover import NAME, write_config

# The file's views: SQLite only.
pytestmark = pytest.mark.sqlite_file


def q(path, sql, *args):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def test_flapping_uptime_changes(ddup, bind_server, http_server):
    """flappy passes and fails in turn over 7 runs (6 flips), then passes
    twice more; steady passes 7 times, then fails with HTTP 500 and 503
    (one flip: a change of reason among failures is none)."""
    flappy, steady = http_server(), http_server()
    write_config(ddup, bind_server, [("flappy", flappy, "192.0.2.1", 0),
                                     ("steady", steady, "192.0.2.2", 0)],
                 "attempts = 1\n")
    for i in range(7):
        flappy.set(status=200 if i % 2 == 0 else 503)
        assert ddup.run().rc == 0
    steady.set(status=500)
    assert ddup.run().rc == 0
    steady.set(status=503)
    assert ddup.run().rc == 0

    assert q(ddup.state, "SELECT domain, endpoint, flips FROM flapping") == \
        [(NAME, "flappy", 6)]
    # 9 runs: flappy passed at runs 1, 3, 5, 7, 8 and 9.
    assert q(ddup.state, "SELECT endpoint, checks, passed FROM uptime_24h"
             " ORDER BY endpoint") == [("flappy", 9, 6), ("steady", 9, 7)]
    assert q(ddup.state, "SELECT endpoint, published FROM current"
             " ORDER BY endpoint") == [("flappy", 1), ("steady", 0)]
    # Every DNS change of the domain, newest first: the pair published,
    # flappy out and back three times, then steady out.
    changes = q(ddup.state, "SELECT old, new, result FROM last_changes"
                " WHERE domain = ?", NAME)
    assert changes[0] == ("192.0.2.1 192.0.2.2", "192.0.2.1", "ok"), changes
    assert changes[-1] == ("", "192.0.2.1 192.0.2.2", "ok"), changes
    assert len(changes) == 8, changes
