"""Several checkers (SPEC 11): the fleet's keys through the built binary.

With a SQLite state, checkers, checker and quorum are validated and
ignored: a run is exactly what it is without them.  A PostgreSQL state
is a secret, whose password no output shows.
"""

import os

from test_failover import NAME, write_config

PASSWORD = "pg-s3cret-Zq9"


def test_sqlite_fleet_keys_validated_and_ignored(ddup, bind_server, http_server):
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    with open(ddup.config) as f:
        text = f.read()
    with open(ddup.config, "w") as f:
        f.write("checkers = east, west, north\nchecker = west\nquorum = 2\n" + text)
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME) == ["192.0.2.1"]
    p.set(status=503)
    r = ddup.run()       # attempts 2: one failure of one checker is one failure
    assert r.rc == 0, r
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["state"], st["failures"]) == ("failing", 1)


def test_bad_fleet_exit_2_naming_lines(ddup, bind_server, http_server):
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    with open(ddup.config) as f:
        text = f.read()
    with open(ddup.config, "w") as f:
        f.write("checkers = a, b, a\nchecker = z\nquorum = 9\n" + text)
    for args in (["-n"], []):
        r = ddup.run(*args)
        assert r.rc == 2, r
        assert f"{ddup.config}:1: 'checkers': 'a' listed twice" in r.err
        assert f"{ddup.config}:2: 'checker': 'z' is not one of 'checkers' (line 1)" in r.err
        assert f"{ddup.config}:3: 'quorum': expected majority or a number from 1 to 2" in r.err
    assert not os.path.exists(ddup.state)


def pg_config(ddup, bind_server, http_server, state):
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    with open(ddup.config) as f:
        text = f.read().split("\n", 1)[1]       # without the SQLite state line
    with open(ddup.config, "w") as f:
        f.write(f"state = {state}\ncheckers = a, b, c\nchecker = b\n" + text)


def test_postgresql_state_needs_checkers(ddup, bind_server, http_server):
    pg_config(ddup, bind_server, http_server, "postgresql://ddup@127.0.0.1:9/ddup")
    with open(ddup.config) as f:
        text = f.read().replace("checkers = a, b, c\nchecker = b\n", "")
    with open(ddup.config, "w") as f:
        f.write(text)
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert (f"{ddup.config}:1: a PostgreSQL state needs 'checkers': the names of every "
            "checker of this configuration, comma-separated") in r.err


def test_postgresql_password_never_shown(ddup, bind_server, http_server):
    serial = bind_server.serial()
    for state, env in ((f"postgresql://ddup:{PASSWORD}@127.0.0.1:9/ddup", None),
                       (f"postgres://ddup@127.0.0.1:9/ddup?password={PASSWORD}", None),
                       ("!env DDUP_PG", {"DDUP_PG": f"postgresql://ddup:{PASSWORD}@127.0.0.1:9/x"})):
        pg_config(ddup, bind_server, http_server, state)
        r = ddup.run("-n", env=env)
        assert r.rc == 0, r
        for args in ([], ["--status"], ["--status", "--json"], ["--dry-run"],
                     ["--failback", NAME]):
            r = ddup.run(*args, env=env)
            assert r.rc == 4, (args, r)
            assert PASSWORD not in r.out + r.err, (args, r)
            assert "ddup:***@" in r.err or "password=***" in r.err, (args, r)
    assert bind_server.serial() == serial
