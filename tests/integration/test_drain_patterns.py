"""--drain and --undrain of a pattern or a location (ddup-check(8),
DESCRIPTION), run by run against a real BIND.

Two domains in one zone, each endpoint a real HTTP server on loopback: a
pattern ('*/web1', 'app.example.test/*', 'web?') or location=NAME is
matched against the configuration, every endpoint matched is recorded in
one transaction and printed, and the next run publishes the others (dig
says so).  A target that matches nothing is exit 2 with the state as it
was.  The drain log's times are the checker's clock on both backends.
"""

import time

APP = "app.example.test"
WWW = "www.example.test"
# domain, endpoint, location, address
EPS = [(APP, "web1", "austin", "192.0.2.1"), (APP, "web2", "london", "192.0.2.2"),
       (WWW, "web1", "austin", "192.0.2.11"), (WWW, "web2", "london", "192.0.2.12"),
       (WWW, "web3", "london", "192.0.2.13")]


def provider(bind):
    return (f"[provider bind]\ntype = rfc2136\nserver = 127.0.0.1:{bind.port}\n"
            f"zone = example.test\nkeyName = {bind.key_name}\n"
            f"keyAlgorithm = {bind.key_alg}\nkeySecret = {bind.key_secret}\n")


def write(ddup, bind, srv, eps=EPS, top=""):
    text = "interval = 30s\nattempts = 1\n" + top + provider(bind)
    for dom in dict.fromkeys(d for d, _, _, _ in eps):
        text += f"\n[domain {dom}]\nprovider = bind\nttl = 60\n"
        for (d, name, loc, ip) in eps:
            if d == dom:
                text += (f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\n"
                         f"location = {loc}\n")
    ddup.write(text)


def published(bind):
    return {d: bind.query(d) for d in (APP, WWW)}


def addrs(*names):
    """The addresses of (domain, endpoint) pairs, by domain, sorted."""
    out = {APP: [], WWW: []}
    for d, n, _, ip in EPS:
        if (d, n) in names:
            out[d].append(ip)
    return {d: sorted(v) for d, v in out.items()}


def run_ok(ddup):
    r = ddup.run()
    assert r.rc == 0, r
    return r


def drains(ddup):
    return ddup.state_rows(
        "SELECT domain, endpoint, CAST(round((julianday(until) - 2440587.5)"
        " * 86400000) AS INTEGER) FROM drains ORDER BY 1, 2",
        "SELECT domain, endpoint, (extract(epoch FROM until) * 1000)::bigint"
        " FROM ddup_drain ORDER BY 1, 2")


def ended(ddup):
    """The drain log: domain, endpoint, seconds from since to until, until."""
    return ddup.state_rows(
        "SELECT domain, endpoint, (julianday(until) - julianday(since)) * 86400,"
        " until FROM drain_log ORDER BY 1, 2, 4",
        "SELECT domain, endpoint, extract(epoch FROM until - since)::float,"
        " to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
        " FROM ddup_drain_log ORDER BY 1, 2, 4")


ALL = [(d, n) for d, n, _, _ in EPS]


def test_star_endpoint_across_domains(ddup, bind_server, http_server):
    srv = http_server()
    write(ddup, bind_server, srv)
    run_ok(ddup)
    assert published(bind_server) == addrs(*ALL)
    serial = bind_server.serial()
    r = ddup.run("--drain", "*/web1")
    assert r.rc == 0, r
    assert r.out == f"{APP}/web1\n{WWW}/web1\n", r
    assert [(d, n) for d, n, _ in drains(ddup)] == [(APP, "web1"), (WWW, "web1")]
    assert all(u is None for _, _, u in drains(ddup))
    # Recorded only: DNS changes at the next run, in both domains.
    assert bind_server.serial() == serial
    run_ok(ddup)
    assert published(bind_server) == addrs((APP, "web2"), (WWW, "web2"), (WWW, "web3"))
    r = ddup.run("--undrain", "*/WEB1")
    assert r.rc == 0, r
    assert r.out == f"{APP}/web1\n{WWW}/web1\n", r
    assert drains(ddup) == []
    run_ok(ddup)
    assert published(bind_server) == addrs(*ALL)


def test_domain_star_and_question_mark_with_for(ddup, bind_server, http_server):
    """--for gives every endpoint matched the same expiry; '?' is one character."""
    srv = http_server()
    write(ddup, bind_server, srv)
    run_ok(ddup)
    before = int(time.time() * 1000)
    r = ddup.run("--drain", "APP.example.test./*", "--for", "1h")
    after = int(time.time() * 1000)
    assert r.rc == 0, r
    assert r.out == f"{APP}/web1\n{APP}/web2\n", r
    st = ddup.status()
    until = {(d["name"], e["name"]): e["drainedUntil"] for d in st["domains"]
             for e in d["endpoints"]}
    assert until[(APP, "web1")] is not None and until[(APP, "web1")] == until[(APP, "web2")]
    assert [until[(WWW, n)] for n in ("web1", "web2", "web3")] == [None] * 3
    rows = drains(ddup)
    assert [r[:2] for r in rows] == [(APP, "web1"), (APP, "web2")]
    assert rows[0][2] == rows[1][2], rows
    assert before + 3600_000 - 2 <= rows[0][2] <= after + 3600_000 + 2, rows
    r = ddup.run("--drain", "www.example.test/web?")
    assert r.rc == 0, r
    assert r.out == f"{WWW}/web1\n{WWW}/web2\n{WWW}/web3\n", r
    # The last of a domain drained: DNS keeps the last set; app has none left.
    run_ok(ddup)
    assert published(bind_server) == addrs(*ALL)
    r = ddup.run("--undrain", "www.example.test/*3")
    assert r.out == f"{WWW}/web3\n", r
    run_ok(ddup)
    assert published(bind_server) == addrs(*ALL[:2], (WWW, "web3"))


def test_location_drains_a_site(ddup, bind_server, http_server):
    """location=NAME: every endpoint of that location in every domain; the next
    run publishes the others, and --undrain brings them back."""
    srv = http_server()
    write(ddup, bind_server, srv)
    run_ok(ddup)
    r = ddup.run("--drain", "location=austin")
    assert r.rc == 0, r
    assert r.out == f"{APP}/web1\n{WWW}/web1\n", r
    assert "location=austin: 2 endpoints drained until --undrain" in r.err, r
    run_ok(ddup)
    assert published(bind_server) == addrs((APP, "web2"), (WWW, "web2"), (WWW, "web3"))
    st = ddup.status()
    assert [e["state"] for d in st["domains"] for e in d["endpoints"]] == \
        ["drained", "active", "drained", "active", "active"]
    r = ddup.run("--undrain", "location=Austin")
    assert r.rc == 0, r
    assert r.out == f"{APP}/web1\n{WWW}/web1\n", r
    run_ok(ddup)
    assert published(bind_server) == addrs(*ALL)


def test_exact_name_prints_it_and_logs_as_before(ddup, bind_server, http_server):
    srv = http_server()
    write(ddup, bind_server, srv)
    r = ddup.run("--drain", f"{APP.upper()}./WEB2")
    assert r.rc == 0, r
    assert r.out == f"{APP}/web2\n"
    assert r.err == f"ddup-check: {APP}: web2: drained until --undrain, from the next run on\n"


def test_no_match_is_exit_2_and_nothing_recorded(ddup, bind_server, http_server):
    srv = http_server()
    write(ddup, bind_server, srv)
    misses = ["*/nope", "nope.*/web1", "location=mars", f"{APP}/web?x", "location="]
    for what in ("--drain", "--undrain"):
        for t in misses:
            r = ddup.run(what, t)
            assert r.rc == 2, (what, t, r)
            assert r.err == f"ddup-check: error: no endpoint matches '{t}' in {ddup.config}\n", r
            assert r.out == "", r
    # The state was not even opened.
    assert not ddup.state_made()
    run_ok(ddup)
    assert ddup.run("--drain", f"{APP}/web1", "--for", "1h").rc == 0
    rows, snap = drains(ddup), ddup.state_snapshot()
    for t in misses:
        assert ddup.run("--drain", t, "--for", "2h").rc == 2
        assert ddup.run("--undrain", t).rc == 2
    assert drains(ddup) == rows
    assert ddup.state_snapshot() == snap


PG_REFUSE = ("CREATE TRIGGER refuse BEFORE INSERT OR DELETE ON ddup_drain"
             " FOR EACH ROW EXECUTE FUNCTION ddup_refuse()")


def test_all_or_nothing(ddup, bind_server, http_server):
    """One endpoint of a pattern refused by the store: none is recorded."""
    srv = http_server()
    write(ddup, bind_server, srv)
    run_ok(ddup)
    ddup.state_exec("CREATE TRIGGER refuse BEFORE INSERT ON drains WHEN"
                    f" new.domain = '{WWW}' BEGIN SELECT RAISE(ABORT, 'refused');"
                    " END",
                    "CREATE FUNCTION ddup_refuse() RETURNS trigger LANGUAGE plpgsql"
                    " AS $$ BEGIN IF (CASE TG_OP WHEN 'DELETE' THEN OLD.domain"
                    f" ELSE NEW.domain END) = '{WWW}' THEN RAISE EXCEPTION"
                    " 'refused'; END IF; RETURN coalesce(NEW, OLD); END $$")
    if ddup.on_pg():
        ddup.state_exec("", PG_REFUSE)
    r = ddup.run("--drain", "*/web1")
    assert r.rc == 4, r
    assert "refused" in r.err and r.out == "", r
    assert drains(ddup) == []
    # An undrain of several is as much one transaction.
    ddup.state_exec("DROP TRIGGER refuse", "DROP TRIGGER refuse ON ddup_drain")
    assert ddup.run("--drain", "*/web1").rc == 0
    ddup.state_exec("CREATE TRIGGER refuse BEFORE DELETE ON drains WHEN"
                    f" old.domain = '{WWW}' BEGIN SELECT RAISE(ABORT, 'refused');"
                    " END",
                    PG_REFUSE)
    r = ddup.run("--undrain", "location=austin")
    assert r.rc == 4, r
    assert [r[:2] for r in drains(ddup)] == [(APP, "web1"), (WWW, "web1")]
    assert ended(ddup) == []


def test_drain_log_keeps_the_checkers_clock(ddup, bind_server, http_server):
    """An undrain ends a drain at the checker's time (the database's clock moves
    a day at each run on PostgreSQL), a drain run out at its own expiry, one no
    longer configured at the run's time."""
    srv = http_server()
    write(ddup, bind_server, srv)
    run_ok(ddup)
    assert ddup.run("--drain", "*/web1").rc == 0
    assert ddup.run("--undrain", "*/web1").rc == 0
    log = ended(ddup)
    assert [r[:2] for r in log] == [(APP, "web1"), (WWW, "web1")]
    assert all(0 <= r[2] < 600 for r in log), log
    # Run out: its until is its own.
    assert ddup.run("--drain", f"{APP}/web2", "--for", "1h").rc == 0
    # (As an hour would pass: its end moved back to its beginning, which is not
    # older than `history`.)
    ddup.state_exec("UPDATE drains SET until = since", "UPDATE ddup_drain SET until = since")
    run_ok(ddup)
    assert drains(ddup) == []
    web2 = [r for r in ended(ddup) if r[1] == "web2"]
    assert len(web2) == 1 and web2[0][2] == 0, web2
    # No longer configured: ended by the run that drops it.
    assert ddup.run("--drain", f"{WWW}/web3").rc == 0
    write(ddup, bind_server, srv, eps=[e for e in EPS if e[1] != "web3"])
    run_ok(ddup)
    assert drains(ddup) == []
    gone = [r for r in ended(ddup) if r[:2] == (WWW, "web3")]
    assert len(gone) == 1 and 0 <= gone[0][2] < 600, gone


def test_hostile_names_are_printed_printable(ddup, bind_server, http_server):
    """A name of the configuration is printable already (it is checked so), and
    printed as it is; a pattern from the command line is made printable in the
    error."""
    srv = http_server()
    odd = 'r\u00e9ck/7 "x" <b>&amp; $(id)'
    eps = EPS[:2] + [(WWW, odd, "paris", "192.0.2.99")]
    write(ddup, bind_server, srv, eps=eps)
    r = ddup.run("--drain", "*/r?ck/*")
    assert r.rc == 0, r
    assert r.out == f"{WWW}/{odd}\n", r
    r = ddup.run("--undrain", "location=paris")
    assert r.rc == 0 and r.out == f"{WWW}/{odd}\n", r
    t = "*/\x1b[2Jx\u202e\r\nddup-check: forged"
    r = ddup.run("--drain", t)
    assert r.rc == 2, r
    assert r.err.count("\n") == 1 and "\x1b" not in r.err and "\u202e" not in r.err, r
    assert "no endpoint matches '*/?[2Jx???" in r.err, r


def test_what_each_pattern_matches(ddup, bind_server, http_server):
    """'*' any run (backtracking past a false start), '?' exactly one character,
    either part, any case, the domain with a trailing dot or not."""
    srv = http_server()
    write(ddup, bind_server, srv)
    for pattern, want in [
            ("*/*", ALL),
            ("*.EXAMPLE.test./W*2", [(APP, "web2"), (WWW, "web2")]),
            ("*/*b*3", [(WWW, "web3")]),
            ("*/w*e*b*1*", [(APP, "web1"), (WWW, "web1")]),
            ("?pp.example.test/*", [(APP, "web1"), (APP, "web2")]),
            ("*/web??", []),
            ("*/?eb", []),
            ("www*/web*", [(WWW, "web1"), (WWW, "web2"), (WWW, "web3")]),
            ("location=LONDON", [(APP, "web2"), (WWW, "web2"), (WWW, "web3")]),
    ]:
        r = ddup.run("--drain", pattern)
        assert r.rc == (0 if want else 2), (pattern, r)
        assert r.out == "".join(f"{d}/{n}\n" for d, n in want), (pattern, r)
        if want:
            assert [x[:2] for x in drains(ddup)] == want, pattern
            assert ddup.run("--undrain", pattern).rc == 0
            assert drains(ddup) == []
