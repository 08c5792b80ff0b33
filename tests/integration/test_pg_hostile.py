"""A hostile PostgreSQL under a fleet: slow, stingy or too new.

The three checkers of fleetfix.py on pgfix.py's server, a domain whose
primary has failed for everyone, so that the next round would fail it
over: each case must leave DNS as it is and the state as it was (but
for what the run committed before the fault), exit 4 with a message that
says what went wrong, and let the fleet go on once the fault is gone.
"""

import time

import pytest

from conftest import TIME_SCALE
from fleetfix import NAME
from pgfix import PG_PASSWORD
from test_fleet import B, P, eps, fleet, pair, settle, run_while_locked  # noqa: F401 (fixtures)

LOCK_TIMEOUT = 5
SLACK = 3 * TIME_SCALE


def about_to_fail_over(f, primary):
    """The primary failed for every checker in the slot before: the first
    run of the next slot fails it over."""
    settle(f)
    primary.set(status=503)
    f.next_slot()
    f.round()
    assert f.dns() == [P]
    return f.next_slot()


def without(tables, *names):
    return {k: v for k, v in tables.items() if k not in names}


@pytest.mark.serial
@pytest.mark.parametrize("where", ["open", "round"])
def test_lock_held_longer_than_a_run(fleet, pair, pg_server, bind_server, where):
    """Another session holds ddup's tables; a run waits lock_timeout for
    them, not for ever: at its open (every table held) or at its round
    (all but the schema's version and the reports)."""
    f = fleet(eps(pair), attempts=1)
    slot = about_to_fail_over(f, pair[0])
    serial, before = bind_server.serial(), f.tables()
    but = () if where == "open" else ("ddup_meta", "ddup_report")
    r, took = run_while_locked(f, pg_server, "a", but=but)
    assert r.rc == 4, r
    assert "canceling statement due to lock timeout" in r.err and PG_PASSWORD not in r.err, r
    assert LOCK_TIMEOUT - 0.5 <= took <= LOCK_TIMEOUT + SLACK, took
    print(f"lock held at the {where}: a exited 4 after {took:.2f} s")
    assert bind_server.serial() == serial and f.dns() == [P]
    after = f.tables()
    if where == "open":
        assert after == before
    else:       # the report goes in on its own, before the round
        assert without(after, "ddup_report", "sequence ddup_report_seq_seq") == \
            without(before, "ddup_report", "sequence ddup_report_seq_seq")
    f.round("bca")              # the slot was nobody's: b takes it
    assert f.dns() == [B]
    rd = f.status("a")["domains"][0]["round"]
    assert rd["checker"] == "b" and rd["slot"] == slot, rd


def test_statement_timeout(fleet, pair, pg_server, bind_server, tmp_path):
    """A database that answers slowly (its now() takes 2 s: every statement
    of ddup that asks for the time); the URI's options set a 1 s
    statement_timeout, in place of ddup's own."""
    f = fleet(eps(pair), attempts=1)
    about_to_fail_over(f, pair[0])
    uri = pg_server.uri()
    text = f.text("a").replace(uri, uri + "?options=-c%20statement_timeout%3D1s")
    assert "statement_timeout" in text
    with open(f.config("a"), "w") as fh:
        fh.write(text)
    serial, before = bind_server.serial(), f.tables()
    pg_server.psql("CREATE OR REPLACE FUNCTION ddup_test.now() RETURNS timestamptz "
                   "LANGUAGE sql STABLE AS 'SELECT pg_catalog.now() + shift FROM "
                   "ddup_test.clock, pg_sleep(2)'")
    t = time.monotonic()
    r = f.run("a")
    took = time.monotonic() - t
    assert r.rc == 4, r
    assert "cannot record the report: ERROR:  canceling statement due to statement timeout" \
        in r.err and PG_PASSWORD not in r.err, r
    assert took <= 1 + SLACK, took
    pg_server.psql("CREATE OR REPLACE FUNCTION ddup_test.now() RETURNS timestamptz "
                   "LANGUAGE sql STABLE AS 'SELECT pg_catalog.now() + shift FROM "
                   "ddup_test.clock'")
    # Nothing but the report's sequence moved (nextval() is never rolled back).
    assert without(f.tables(), "sequence ddup_report_seq_seq") == \
        without(before, "sequence ddup_report_seq_seq")
    assert bind_server.serial() == serial
    f.round("abc")
    assert f.dns() == [B]


# What the README's role needs, each taken away in turn: the statement that
# needs it, and what the message names.
GRANTS = [
    ("INSERT ON ddup_report", "cannot record the report", "table ddup_report"),
    ("USAGE, UPDATE ON SEQUENCE ddup_report_seq_seq", "cannot record the report",
     "sequence ddup_report_seq_seq"),
    ("SELECT ON ddup_vote", "cannot read the endpoints", "table ddup_vote"),
    ("UPDATE ON ddup_round", "cannot record the round", "table ddup_round"),
    ("DELETE ON ddup_report", "cannot drop old reports", "table ddup_report"),
]


@pytest.mark.parametrize("grant,what,named", GRANTS, ids=["insert", "sequence", "select",
                                                          "update", "delete"])
def test_role_without_a_grant(fleet, pair, pg_server, bind_server, grant, what, named):
    f = fleet(eps(pair), attempts=1)
    slot = about_to_fail_over(f, pair[0])
    serial, before = bind_server.serial(), f.tables()
    # The owner gives up a privilege of its own, as a role never granted it would lack it.
    pg_server.psql(f"REVOKE {grant} FROM ddup")
    try:
        r = f.run("a")
    finally:
        pg_server.psql(f"GRANT {grant} TO ddup")
    assert r.rc == 4, r
    assert f"{what}: ERROR:  permission denied for {named}" in r.err, r
    assert PG_PASSWORD not in r.out + r.err, r
    assert bind_server.serial() == serial and f.dns() == [P]
    assert without(f.tables(), "ddup_report", "sequence ddup_report_seq_seq") == \
        without(before, "ddup_report", "sequence ddup_report_seq_seq")
    r = f.run("a")              # granted again: the round is a's
    assert r.rc == 0, r
    assert f.dns() == [B]
    assert f.status("b")["domains"][0]["round"]["slot"] == slot


def test_newer_schema_refused_and_nothing_changed(fleet, pair, pg_server, bind_server):
    f = fleet(eps(pair), attempts=1)
    about_to_fail_over(f, pair[0])
    pg_server.psql("UPDATE ddup_meta SET value = '99' WHERE key = 'schema_version'")
    serial, before = bind_server.serial(), f.tables()
    for args in ([], ["--status"], ["--dry-run"], ["--drain", f"{NAME}/backup"],
                 ["--failback", NAME]):
        r = f.run("a", *args)
        assert r.rc == 4, (args, r)
        assert "schema version 99" in r.err and PG_PASSWORD not in r.err, (args, r)
    for n in "bc":
        assert f.run(n).rc == 4
    assert f.tables() == before
    assert bind_server.serial() == serial and f.dns() == [P]


@pytest.mark.serial
def test_the_roles_own_lock_timeout_wins(fleet, pair, pg_server, bind_server):
    """ddup's limits go only where nothing set one: a role's lock_timeout
    of 1 s is the one a run waits."""
    f = fleet(eps(pair), attempts=1)
    about_to_fail_over(f, pair[0])
    pg_server.psql("ALTER ROLE ddup IN DATABASE ddup SET lock_timeout = '1s'", db="postgres")
    try:
        r, took = run_while_locked(f, pg_server, "a")
    finally:
        pg_server.psql("ALTER ROLE ddup IN DATABASE ddup RESET lock_timeout", db="postgres")
    assert r.rc == 4, r
    assert "canceling statement due to lock timeout" in r.err, r
    assert 0.5 <= took <= 1 + SLACK and took < LOCK_TIMEOUT - 1, took
    assert f.dns() == [P]
    f.round("bca")
    assert f.dns() == [B]
