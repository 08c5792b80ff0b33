"""The shared DNS servers (dnsfix.py): what one test leaves, the next one
does not see.  Each test here plays two tests in a row by asking the
session's server for a fresh zone twice."""

import subprocess

import pytest

ZONE = "example.test"


def nsupdate(bind, *lines):
    script = f"server 127.0.0.1 {bind.port}\nzone {ZONE}\n" + "\n".join(lines) + "\nsend\n"
    p = subprocess.run(["nsupdate", "-y", f"{bind.key_alg}:{bind.key_name}:{bind.key_secret}"],
                       input=script, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p


def test_bind_zone_is_new_for_each_test(bind_server, _bind_shared):
    nsupdate(bind_server, "update add app.example.test 60 A 192.0.2.1",
             "update add app.example.test 60 AAAA 2001:db8::1",
             f"update add {ZONE} 60 TXT \"left over\"",
             "update add ns1.example.test 60 A 192.0.2.53")
    assert bind_server.update_count() == 1
    serial, port = bind_server.serial(), bind_server.port
    again = _bind_shared.get()
    assert again is bind_server and again.port == port
    assert again.query("app.example.test", "A") == []
    assert again.query("app.example.test", "AAAA") == []
    assert again.query("ns1.example.test", "A") == ["127.0.0.1"]
    assert again.query(ZONE, "TXT") == []
    assert again.update_count() == 0
    assert again.serial() > serial


def test_bind_left_stopped_is_started_again(bind_server, _bind_shared):
    port = bind_server.port
    nsupdate(bind_server, "update add app.example.test 60 A 192.0.2.1")
    bind_server.stop()
    again = _bind_shared.get()
    assert again.running() and again.port == port
    assert again.query("app.example.test", "A") == []
    assert again.update_count() == 0


def test_pdns_zones_are_new_for_each_test(pdns_server, _pdns_shared):
    api = "/api/v1/servers/localhost/zones"
    st, _ = pdns_server.api("PATCH", f"{api}/{ZONE}.", {"rrsets": [
        {"name": f"app.{ZONE}.", "type": "A", "ttl": 60, "changetype": "REPLACE",
         "records": [{"content": "192.0.2.1", "disabled": False}]}]})
    assert st == 204
    st, _ = pdns_server.api("POST", api, {"name": "other.test.", "kind": "Native",
                                          "nameservers": ["ns1.other.test."]})
    assert st == 201
    port = pdns_server.port
    again = _pdns_shared.get()
    assert again is pdns_server and again.port == port
    assert again.query(f"app.{ZONE}", "A") == []
    st, zones = again.api("GET", api)
    assert st == 200 and [z["name"] for z in zones] == [f"{ZONE}."]
    again.stop()
    assert _pdns_shared.get().running()


def test_pg_database_is_new_for_each_test(pg_server, _pg_shared):
    pg_server.psql("CREATE TABLE left_over (x int)", user="ddup")
    pg_server.psql("INSERT INTO left_over VALUES (1)", user="ddup")
    assert pg_server.psql("SELECT count(*) FROM left_over") == [["1"]]
    port = pg_server.port
    again = _pg_shared.get()
    assert again is pg_server and again.port == port
    assert again.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'left_over'") == [["0"]]
    assert again.psql("SELECT pg_get_userbyid(datdba) FROM pg_database "
                      "WHERE datname = 'ddup'") == [["ddup"]]


def test_pg_listens_on_its_socket_and_on_loopback(pg_server):
    import os
    import socket
    assert os.path.exists(os.path.join(pg_server.sock, f".s.PGSQL.{pg_server.port}"))
    with socket.create_connection(("127.0.0.1", pg_server.port), timeout=5):
        pass
    # Over TCP the role needs its password; the socket trusts it.
    env = dict(os.environ, PGPASSWORD="wrong")
    p = subprocess.run(["psql", "-X", "-At", "-c", "SELECT current_user",
                        f"postgresql://ddup@127.0.0.1:{pg_server.port}/ddup"],
                       capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode != 0 and "password authentication failed" in p.stderr, p
    for uri in (pg_server.uri(), pg_server.uri(socket=True)):
        p = subprocess.run(["psql", "-X", "-At", "-c", "SELECT current_user", uri],
                           capture_output=True, text=True, timeout=30)
        assert (p.returncode, p.stdout.strip()) == (0, "ddup"), (uri, p)


def test_pg_left_stopped_is_started_again(pg_server, _pg_shared):
    pg_server.psql("CREATE TABLE kept (x int)", user="ddup")
    pg_server.stop()
    assert not pg_server.running()
    again = _pg_shared.get()
    assert again is pg_server and again.running()
    assert again.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'kept'") == [["0"]]


def test_pg_stopped_and_started_by_a_test_keeps_its_data(pg_server):
    pg_server.psql("CREATE TABLE kept (x int)", user="ddup")
    pg_server.psql("INSERT INTO kept VALUES (7)", user="ddup")
    pg_server.advance(90)
    pg_server.stop()
    assert not pg_server.running()
    assert pg_server.start() is pg_server and pg_server.running()
    assert pg_server.psql("SELECT x FROM kept") == [["7"]]
    assert pg_server.clock_offset() == 90


def test_pg_socket_reached_from_a_network_namespace(pg_server, http_server):
    """What a checker cut off from the servers keeps (test_fleet.py): the
    Unix socket of PostgreSQL, and nothing on the host's loopback."""
    srv = http_server()
    for up in ("ip link set lo up && ", ""):
        p = subprocess.run(["unshare", "-n", "--", "/bin/sh", "-c",
                            up + 'psql -X -At -c "SELECT current_user" "$1"; '
                            'curl -sS -m 5 -o /dev/null "$2"; echo "curl $?"',
                            "sh", pg_server.uri(socket=True), srv.url],
                           capture_output=True, text=True, timeout=60)
        lines = p.stdout.split()
        assert lines[0] == "ddup", p
        assert lines[-2] == "curl" and lines[-1] != "0", p
        rc = subprocess.run(["psql", "-X", "-At", "-c", "SELECT 1", pg_server.uri()],
                            capture_output=True, text=True, timeout=30).returncode
        assert rc == 0
    assert srv.requests == []


def _as_ddup(uri, sql):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql, uri],
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout.strip(), p.stderr


def _shift(uri):
    """How far an unqualified now() is from pg_catalog.now() in a session of uri, in seconds."""
    rc, out, err = _as_ddup(uri, "SELECT extract(epoch FROM now() - pg_catalog.now())")
    assert rc == 0, err
    return float(out)


def test_pg_clock_seam_shifts_now_for_ddup(pg_server, _pg_shared):
    assert pg_server.clock_offset() == 0
    for uri in (pg_server.uri(), pg_server.uri(socket=True)):
        assert _shift(uri) == 0, uri
    pg_server.advance(86400)
    pg_server.advance(1.5)
    assert pg_server.clock_offset() == 86401.5
    for uri in (pg_server.uri(), pg_server.uri(socket=True)):
        assert _shift(uri) == 86401.5, uri
        assert _as_ddup(uri, "SHOW search_path")[:2] == (0, "public, ddup_test, pg_catalog")
    # Other roles see the real clock.
    real = pg_server.psql("SELECT extract(epoch FROM now() - pg_catalog.now())")
    assert float(real[0][0]) == 0
    with pytest.raises(ValueError):
        pg_server.advance(-1)

    # ddup's tables go to public; ddup can neither create in the seam nor move its clock.
    uri = pg_server.uri()
    assert _as_ddup(uri, "CREATE TABLE mine (x int)")[0] == 0
    assert pg_server.psql("SELECT schemaname FROM pg_tables WHERE tablename = 'mine'") \
        == [["public"]]
    rc, _, err = _as_ddup(uri, "CREATE TABLE ddup_test.mine (x int)")
    assert rc != 0 and "permission denied for schema ddup_test" in err, err
    rc, _, err = _as_ddup(uri, "UPDATE ddup_test.clock SET shift = interval '0'")
    assert rc != 0 and "permission denied for table clock" in err, err
    rc, _, err = _as_ddup(uri, "CREATE FUNCTION ddup_test.f() RETURNS int "
                          "LANGUAGE sql AS 'SELECT 1'")
    assert rc != 0 and "permission denied for schema ddup_test" in err, err

    # The next test's database has the seam again, at 0.
    again = _pg_shared.get()
    assert again is pg_server and again.clock_offset() == 0
    assert _shift(again.uri()) == 0
    again.advance(60)
    assert _shift(again.uri(socket=True)) == 60


def _db_oid(pg):
    return pg.psql("SELECT oid FROM pg_database WHERE datname = 'ddup'")[0][0]


def test_pg_reset_ends_other_sessions_and_their_locks(pg_server, _pg_shared):
    holder = subprocess.Popen(["psql", "-X", "-q", "-At", pg_server.uri(socket=True)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        holder.stdin.write("SELECT pg_advisory_lock(42);\nSELECT 'held';\n")
        holder.stdin.flush()
        while holder.stdout.readline().strip() != "held":
            pass
        assert pg_server.psql("SELECT pg_try_advisory_lock(42)") == [["f"]]
        oid = _db_oid(pg_server)
        again = _pg_shared.get()
        assert again is pg_server and _db_oid(again) == oid     # emptied, not made again
        assert again.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'ddup' "
                          "AND pid <> pg_backend_pid()") == [["0"]]
        assert again.psql("SELECT pg_try_advisory_lock(42)") == [["t"]]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_pg_schema_of_a_test_own_is_gone_with_its_database(pg_server, _pg_shared):
    pg_server.psql("CREATE SCHEMA mine AUTHORIZATION ddup")
    pg_server.psql("CREATE TABLE mine.t (x int)", user="ddup")
    pg_server.advance(3600)
    oid = _db_oid(pg_server)
    again = _pg_shared.get()
    assert again is pg_server and _db_oid(again) != oid     # made again
    assert again.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'mine'") == [["0"]]
    assert again.clock_offset() == 0 and _shift(again.uri()) == 0
    again.psql("CREATE TABLE after (x int)", user="ddup")
    assert again.psql("SELECT schemaname FROM pg_tables WHERE tablename = 'after'") \
        == [["public"]]


def test_pg_rows_keep_types_order_and_names_twice(pg_server):
    assert pg_server.rows("SELECT 1 AS a, 'x' AS b, NULL AS c, true AS d, 1.5 AS e, "
                          "2 AS same, 3 AS same") == [(1, "x", None, True, 1.5, 2, 3)]
    assert pg_server.rows("SELECT 1 WHERE false") == []
