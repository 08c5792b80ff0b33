"""Several checkers (ddup.ini(5), SEVERAL CHECKERS): the fleet's keys through the built binary.

With a SQLite state, checkers, checker and quorum are validated and
ignored: a run is exactly what it is without them.  A PostgreSQL state
is a secret, whose password no output shows.
"""

import os
import subprocess

from conftest import DDUP
from pgfix import PG_PASSWORD
from test_failover import NAME, write_config

PASSWORD = "pg-s3cret-Zq9"


def sqlite_config(ddup, bind_server, http_server, fleet):
    """A configuration of one endpoint with a SQLite state and the keys fleet first."""
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    text = ddup.without_state()
    with open(ddup.config, "w") as f:
        f.write(fleet + f"state = {ddup.state}\n" + text)
    return p


def test_sqlite_fleet_keys_validated_and_ignored(ddup, bind_server, http_server):
    p = sqlite_config(ddup, bind_server, http_server,
                      "checkers = east, west, north\nchecker = west\nquorum = 2\n")
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME) == ["192.0.2.1"]
    p.set(status=503)
    r = ddup.run()       # attempts 2: one failure of one checker is one failure
    assert r.rc == 0, r
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["state"], st["failures"]) == ("failing", 1)


def test_bad_fleet_exit_2_naming_lines(ddup, bind_server, http_server):
    sqlite_config(ddup, bind_server, http_server, "checkers = a, b, a\nchecker = z\nquorum = 9\n")
    for args in (["-n"], []):
        r = ddup.run(*args)
        assert r.rc == 2, r
        assert f"{ddup.config}:1: 'checkers': 'a' listed twice" in r.err
        assert f"{ddup.config}:2: 'checker': 'z' is not one of 'checkers' (line 1)" in r.err
        assert f"{ddup.config}:3: 'quorum': expected majority or a number from 1 to 2" in r.err
    assert not os.path.exists(ddup.state)


def test_keyword_value_state_refused(ddup, bind_server, http_server):
    """A libpq keyword/value string is neither a path nor a URI: exit 2 at its
    line, without quoting it (its password), and no SQLite file named after it
    in the folder the run starts in."""
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    text = ddup.without_state()
    with open(ddup.config, "w") as f:
        f.write(f"state = host=127.0.0.1 password={PASSWORD} dbname=ddup\n" + text)
    serial = bind_server.serial()
    cwd = ddup.dir / "cwd"
    cwd.mkdir()
    for args in (["-n"], [], ["--status"], ["--dry-run"], ["--failback", NAME]):
        r = subprocess.run([DDUP, "-c", ddup.config] + args, cwd=cwd, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2, (args, r)
        assert (f"{ddup.config}:1: 'state': looks like a libpq keyword/value connection "
                "string; write a postgresql:// URI") in r.stderr, (args, r)
        assert PASSWORD not in r.stdout + r.stderr, (args, r)
    assert os.listdir(cwd) == []
    assert bind_server.serial() == serial
    assert p.requests == []


def pg_config(ddup, bind_server, http_server, state):
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    text = ddup.without_state()
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


# With a real PostgreSQL (pgfix.py): connecting, the schema, the
# checker's lock.  The rounds of several checkers: test_fleet.py.


def pg_ready(ddup, bind_server, http_server, pg, socket=False, checker="b"):
    pg_config(ddup, bind_server, http_server, pg.uri(socket=socket))
    if checker != "b":
        with open(ddup.config) as f:
            text = f.read().replace("checker = b\n", f"checker = {checker}\n")
        with open(ddup.config, "w") as f:
            f.write(text)


# The schema version this ddup-check makes (state/pg_schema.c).
PG_SCHEMA = "8"


def schema_version(pg):
    rows = pg.psql("SELECT to_regclass('ddup_meta') IS NOT NULL")
    if rows != [["t"]]:
        return None
    return pg.psql("SELECT value FROM ddup_meta WHERE key = 'schema_version'")[0][0]


def test_pg_schema_made_by_a_run_not_by_reads(ddup, bind_server, http_server, pg_server):
    pg_ready(ddup, bind_server, http_server, pg_server)
    serial = bind_server.serial()
    for args in (["--status"], ["--status", "--json"], ["--dry-run"]):
        r = ddup.run(*args)
        assert r.rc == 0, (args, r)         # no schema yet: an empty state
    assert schema_version(pg_server) is None       # read-only opens make nothing
    assert bind_server.serial() == serial
    for _ in range(2):                              # made once, then found right
        r = ddup.run()
        assert r.rc == 0, r
        assert PG_PASSWORD not in r.err
        assert schema_version(pg_server) == PG_SCHEMA
    # b alone of a, b, c: a majority is 2, so its rounds are void.
    assert bind_server.serial() == serial
    assert bind_server.query(NAME) == []
    st = ddup.status()
    assert st["fleet"]["quorum"] == 2
    assert [c["name"] for c in st["fleet"]["checkers"]] == ["a", "b", "c"]
    assert st["domains"][0]["round"]["void"] is True
    r = ddup.run("--failback", NAME)
    assert r.rc == 0, r


def test_pg_password_with_an_unescaped_at_never_shown(ddup, bind_server, http_server,
                                                   pg_server):
    """The role's password holds '@', written as is: libpq takes what follows
    the first '@' for the host (or, after a ':', for the port) and quotes it.
    The URI parses, so -n passes and a run exits 4 (its server cannot be
    reached); no piece of the password shows.  Percent-encoded, it connects."""
    secret, pieces = "Zq9@pg-s3cret", ("Zq9", "pg-s3cret")
    port = pg_server.port
    pg_server.psql(f"ALTER ROLE ddup PASSWORD '{secret}'", db="postgres")
    try:
        serial = bind_server.serial()
        for state in (f"postgresql://ddup:{secret}@127.0.0.1:{port}/ddup",
                      f"postgresql://ddup:Zq9@127.0.0.1:pg-s3cret@127.0.0.1:{port}/ddup"):
            pg_config(ddup, bind_server, http_server, state)
            r = ddup.run("-n")
            assert r.rc == 0, r
            for args in ([], ["--status"], ["--status", "--json"], ["--dry-run"]):
                r = ddup.run(*args)
                assert r.rc == 4, (state, args, r)
                assert "ddup:***@" in r.err, (state, args, r)
                for piece in pieces:
                    assert piece not in r.out + r.err, (state, args, piece, r)
        assert bind_server.serial() == serial
        pg_config(ddup, bind_server, http_server,
                  f"postgresql://ddup:Zq9%40pg-s3cret@127.0.0.1:{port}/ddup")
        r = ddup.run()
        assert r.rc == 0, r
        assert schema_version(pg_server) == PG_SCHEMA
    finally:
        pg_server.psql(f"ALTER ROLE ddup PASSWORD '{PG_PASSWORD}'", db="postgres")


def test_pg_newer_schema_refused(ddup, bind_server, http_server, pg_server):
    pg_ready(ddup, bind_server, http_server, pg_server)
    assert ddup.run().rc == 0
    pg_server.psql("UPDATE ddup_meta SET value = '99'", user="ddup")
    r = ddup.run()
    assert r.rc == 4, r
    assert "schema version 99 is not one this ddup-check knows (" + PG_SCHEMA + " or older)" in r.err
    assert schema_version(pg_server) == "99"


def test_pg_schema_upgraded_from_version_1(ddup, bind_server, http_server, pg_server):
    pg_ready(ddup, bind_server, http_server, pg_server)
    pg_server.psql("CREATE TABLE ddup_meta (key text PRIMARY KEY, value text NOT NULL);"
                   "INSERT INTO ddup_meta VALUES ('schema_version', '1')", user="ddup")
    ddup.run()
    assert schema_version(pg_server) == PG_SCHEMA
    # ddup_endpoint and ddup_streak are views over the rows written on change.
    tables = {r[0] for r in pg_server.psql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' UNION"
        " SELECT viewname FROM pg_views WHERE schemaname = 'public'")}
    assert {"ddup_endpoint", "ddup_streak", "ddup_domain", "ddup_published", "ddup_event",
            "ddup_delivery", "ddup_report", "ddup_round", "ddup_vote"} <= tables


def test_pg_over_the_unix_socket(ddup, bind_server, http_server, pg_server):
    pg_ready(ddup, bind_server, http_server, pg_server, socket=True)
    r = ddup.run()
    assert r.rc == 0, r
    assert schema_version(pg_server) == PG_SCHEMA


def test_pg_second_run_of_a_checker_exits_3(ddup, bind_server, http_server, pg_server):
    import subprocess
    pg_ready(ddup, bind_server, http_server, pg_server)
    # A session holding checker b's lock, as a run of b would.
    holder = subprocess.Popen(
        ["psql", "-X", "-q", "-A", "-t", pg_server.uri(socket=True)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        holder.stdin.write("SELECT pg_advisory_lock(hashtextextended("
                           "'ddup-check checker b', 0));\nSELECT 'held';\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() in ("", "held")
        while holder.stdout.readline().strip() != "held":
            pass
        r = ddup.run()
        assert r.rc == 3, r
        assert "checker b: another run of this checker holds its lock" in r.err
        assert PG_PASSWORD not in r.err
        # Another checker of the fleet is not held up.
        pg_ready(ddup, bind_server, http_server, pg_server, checker="c")
        r = ddup.run()
        assert r.rc == 0, r
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    pg_ready(ddup, bind_server, http_server, pg_server)
    r = ddup.run()
    assert r.rc == 0, r


def test_pg_down_exits_4_dns_unchanged(ddup, bind_server, http_server, pg_server):
    pg_ready(ddup, bind_server, http_server, pg_server)
    serial = bind_server.serial()
    pg_server.stop()
    r = ddup.run("-n")                  # -n does not connect
    assert r.rc == 0, r
    for args in ([], ["--status"], ["--dry-run"], ["--drain", f"{NAME}/a"]):
        r = ddup.run(*args)
        assert r.rc == 4, (args, r)
        assert "cannot connect" in r.err and PG_PASSWORD not in r.err, (args, r)
    assert bind_server.serial() == serial
    pg_server.start()
    r = ddup.run()
    assert r.rc == 0, r
