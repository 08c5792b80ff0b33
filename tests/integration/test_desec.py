"""The desec provider through the built ddup-check, against the deSEC
fake (desecfix.py): one read per name, an RRset PUT (or DELETE) for one
type, one bulk PATCH for both, the minimum TTL, the error classes, and
no token anywhere ddup writes."""

import os

import pytest

from desecfix import desec_fake  # noqa: F401  (fixture)
from providertest import (ZONE, assert_config_error, assert_nowhere, assert_outside_zone,
                          configure, outputs_of_every_kind, quiet_ok, state_error)

TTL = 3600        # the least the provider takes; providertest's default is below it


def desec_section(fake, token=None, extra=""):
    return f"""
[provider dns]
type = desec
apiToken = {token or fake.token}
zone = {fake.zone}
baseUrl = {fake.url}/api/v1
timeout = 5s
{extra}"""


def test_both_types_one_read_one_bulk_then_nothing(ddup, desec_fake, http_server):
    a, b = http_server(), http_server()
    desec_fake.set_rrset("app", "MX", ["10 mx.example.test."])
    configure(ddup, desec_section(desec_fake),
              [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    assert desec_fake.get("app", "AAAA") == (3600, ["2001:db8::1"])
    assert desec_fake.get("app", "MX") == (3600, ["10 mx.example.test."])
    # One GET of the name's RRsets, one bulk PATCH of both types.
    gets = [q for q in desec_fake.requests if q.method == "GET"]
    assert len(gets) == 1 and gets[0].path == "/api/v1/domains/example.test/rrsets/"
    assert gets[0].query == {"subname": ["app"]}
    w = desec_fake.writes()
    assert [(q.method, q.path) for q in w] == [("PATCH", "/api/v1/domains/example.test/rrsets/")]
    assert sorted(w[0].json(), key=lambda x: x["type"]) == [
        {"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 3600},
        {"subname": "app", "type": "AAAA", "records": ["2001:db8::1"], "ttl": 3600}]
    # Nothing changed: no call at all.
    desec_fake.reset_log()
    quiet_ok(ddup.run())
    assert desec_fake.requests == []
    # The IPv6 endpoint fails: AAAA goes in the same bulk with no record.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "AAAA") is None
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    w = desec_fake.writes()
    assert [q.method for q in w] == ["PATCH"]
    assert {"subname": "app", "type": "AAAA", "records": []} in w[0].json()


def test_one_type_rrset_put_and_delete(ddup, desec_fake, http_server):
    desec_fake.set_rrset("app", "A", ["203.0.113.9"], ttl=7200)
    a, b = http_server(), http_server()
    configure(ddup, desec_section(desec_fake),
              [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1", "192.0.2.2"])
    w = desec_fake.writes()
    assert [(q.method, q.path) for q in w] == [
        ("PUT", "/api/v1/domains/example.test/rrsets/app/A/")]
    assert w[0].json()["subname"] == "app" and w[0].json()["ttl"] == 3600
    # Both fail: keep-last-set rules aside, one failing leaves one.
    desec_fake.reset_log()
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    assert [q.method for q in desec_fake.writes()] == ["PUT"]


def test_new_rrset_is_created_through_the_collection(ddup, desec_fake, http_server):
    a = http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    # The name had no A RRset: a PUT of the RRset is answered 404 and a
    # PATCH of the collection creates it.
    w = desec_fake.writes()
    assert [(q.method, q.path) for q in w] == [
        ("PUT", "/api/v1/domains/example.test/rrsets/app/A/"),
        ("PATCH", "/api/v1/domains/example.test/rrsets/")]
    assert w[1].json() == [{"subname": "app", "type": "A", "records": ["192.0.2.1"],
                            "ttl": 3600}]


def test_first_run_finds_the_right_set(ddup, desec_fake, http_server):
    desec_fake.set_rrset("app", "A", ["192.0.2.2", "192.0.2.1"], ttl=3600)
    a, b = http_server(), http_server()
    configure(ddup, desec_section(desec_fake),
              [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.count("GET") == 1
    assert desec_fake.writes() == []


def test_apex(ddup, desec_fake, http_server):
    desec_fake.set_rrset("", "A", ["203.0.113.9"])
    a = http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0)], name=ZONE, ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("", "A") == (3600, ["192.0.2.1"])
    assert desec_fake.requests[0].query == {"subname": [""]}
    assert [q.path for q in desec_fake.writes()] == ["/api/v1/domains/example.test/rrsets/@/A/"]
    assert desec_fake.writes()[0].json()["subname"] == ""


def test_lower_minimum_ttl(ddup, desec_fake, http_server):
    desec_fake.minimum_ttl = 60
    a = http_server()
    configure(ddup, desec_section(desec_fake, extra="minimumTtl = 60\n"),
              [("a", a, "192.0.2.1", 0)], ttl=60)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (60, ["192.0.2.1"])


def line_of(ddup, start):
    with open(ddup.config) as f:
        return next(i for i, ln in enumerate(f, 1) if ln.startswith(start))


def without_ttl(ddup):
    """The domain takes the default ttl (120)."""
    with open(ddup.config) as f:
        text = "".join(ln for ln in f if not ln.startswith("ttl = "))
    ddup.write(text, state=False)


@pytest.mark.parametrize("extra,ttl,at,words", [
    ("", 300, "ttl", ["ttl 300", "3600..86400"]),
    ("", None, "[domain", ["ttl 120", "3600..86400"]),
    ("minimumTtl = 600\n", 300, "ttl", ["ttl 300", "600..86400"]),
    ("", 86401, "ttl", ["ttl 86401"]),
    ("minimumTtl = 0\n", 3600, "minimumTtl", ["minimumTtl", "'0'"]),
    ("minimumTtl = soon\n", 3600, "minimumTtl", ["minimumTtl"]),
])
def test_ttl_limits_are_config_errors(ddup, desec_fake, http_server, extra, ttl, at, words):
    a = http_server()
    configure(ddup, desec_section(desec_fake, extra=extra),
              [("a", a, "192.0.2.1", 0)], ttl=ttl or TTL)
    if ttl is None:
        without_ttl(ddup)
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert f"ddup.ini:{line_of(ddup, at)}: " in r.err, r
    for w in words:
        assert w in r.err, (w, r)
    assert desec_fake.requests == []


@pytest.mark.parametrize("line,words", [
    ("zone = a/b", ["zone"]),
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("baseUrl = https://u:p@desec.example", ["baseUrl"]),
    ("timeout = soon", ["timeout"]),
])
def test_bad_values_are_config_errors(ddup, desec_fake, http_server, line, words):
    assert_config_error(ddup, desec_fake, desec_section(desec_fake), line, words, http_server())


def test_domain_outside_zone_is_a_config_error(ddup, desec_fake, http_server):
    assert_outside_zone(ddup, desec_fake, desec_section(desec_fake), http_server())


@pytest.mark.parametrize("what,words,cls", [
    ("token", ["401", "check apiToken"], "authentication failed"),
    ("policy", ["403", "perm_write"], "authentication failed"),
    ("zone", ["404", "no such domain"], "not found"),
    ("minimum", ["400", "ttl: Ensure this value is greater than or equal to 7200"],
     "rejected as invalid"),
])
def test_error_classes(ddup, desec_fake, http_server, what, words, cls):
    a, b = http_server(), http_server()
    wrong = "w" * 28
    desec_fake.set_rrset("app", "A", ["203.0.113.9"])
    if what == "policy":
        desec_fake.write_allowed = False
    if what == "minimum":
        desec_fake.minimum_ttl = 7200
    configure(ddup, desec_section(desec_fake, token=wrong if what == "token" else None),
              [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)], ttl=TTL)
    if what == "zone":
        desec_fake.zone = "other.test"
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    assert cls in state_error(ddup)
    text_status = ddup.run("--status")
    assert cls in text_status.out, text_status
    for s in (desec_fake.token, wrong):
        assert s not in r.err + r.out + st["lastError"] + text_status.out
    assert desec_fake.get("app", "A") == (3600, ["203.0.113.9"])
    assert desec_fake.get("app", "AAAA") is None
    assert desec_fake.writes() == [] if what in ("token", "zone") else \
        len(desec_fake.writes()) == 1


@pytest.mark.parametrize("status,cls,words", [
    (429, "rate limited", ["429", "Request was throttled", "retry after 7s"]),
    (400, "rejected as invalid", ["400", "records: injected 400"]),
    (503, "temporary failure", ["503"]),
    (500, "temporary failure", ["500"]),
])
def test_server_refusals_on_write(ddup, desec_fake, http_server, status, cls, words):
    a, b = http_server(), http_server()
    configure(ddup, desec_section(desec_fake),
              [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)], ttl=TTL)
    desec_fake.fail(status, method="PATCH", retry_after=7 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert cls in state_error(ddup)
    # All or nothing: neither type was written.
    assert desec_fake.get("app", "A") is None and desec_fake.get("app", "AAAA") is None
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    assert desec_fake.get("app", "AAAA") == (3600, ["2001:db8::1"])


def test_throttled_read(ddup, desec_fake, http_server):
    a = http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    desec_fake.fail(429, method="GET", retry_after=30)
    r = ddup.run()
    assert r.rc == 1, r
    assert "rate limited" in r.err and "reading current records" in r.err, r
    assert desec_fake.writes() == []


def test_rate_limit_waited_out_within_timeout(ddup, desec_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)], ttl=TTL)
    desec_fake.fail(429, method="PATCH", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.count(method="PATCH") == 2
    assert desec_fake.get("app", "A") == (TTL, ["192.0.2.1"])


def test_unreachable(ddup, desec_fake, http_server):
    a = http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    desec_fake.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r
    assert "unreachable" in ddup.status()["domains"][0]["lastError"]


@pytest.mark.parametrize("body,words", [
    ('{"type": "A"}', ["not an array"]),
    ('[{"type": "A", "ttl": 3600, "records": ["2001:db8::1"]}]', ["not an IPv4 address"]),
    ('[{"type": "A", "ttl": "3600", "records": ["192.0.2.1"]}]', ["no ttl"]),
    ('[{"type": "A", "ttl": 3600, "records": ["192.0.2.1"]},'
     ' {"type": "A", "ttl": 3600, "records": ["192.0.2.2"]}]', ["second one"]),
    ("<html>", ["not JSON"]),
])
def test_bad_read_answer_writes_nothing(ddup, desec_fake, http_server, body, words):
    a = http_server()
    configure(ddup, desec_section(desec_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    desec_fake.fail(200, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert desec_fake.writes() == []


def test_no_token_anywhere(ddup, desec_fake, http_server):
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "token.txt")
    with open(path, "w") as f:
        f.write(desec_fake.token + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, desec_section(desec_fake, token=f"!file {path}"), eps, top=top, ttl=TTL), flip=b)
    assert len(desec_fake.writes()) >= 2
    desec_fake.fail(401, method="PUT")
    r = ddup.run("-v")
    assert r.rc == 1 and "401" in r.err, r
    outs.append(r.out + r.err)
    outs.append(ddup.run("--status", "--json").out)
    assert_nowhere(ddup, outs, [desec_fake.token])


def cname_config(ddup, fake, a, b, c):
    """Two addresses at priority 0, a CNAME tier at priority 1."""
    text = "interval = 30s\n" + desec_section(fake)
    text += f"\n[domain app.{ZONE}]\nprovider = dns\nttl = {TTL}\nattempts = 1\n"
    text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    text += f"\n[endpoint b]\nurl = {b.url}\nip = 2001:db8::1\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)


def assert_never_both_nor_neither(fake):
    states = [types for sub, types in fake.history if sub == "app"]
    assert states, fake.history
    for types in states:
        assert types, fake.history
        assert "CNAME" not in types or types == ["CNAME"], fake.history


def test_cname_tier_and_back_in_one_bulk_each(ddup, desec_fake, http_server):
    desec_fake.set_rrset("www", "TXT", ['"hello"'])
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, desec_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.types_at("app") == ["A", "AAAA"]
    # Both addresses down: the CNAME tier, in one bulk request that
    # empties A and AAAA and creates the CNAME with its final dot.
    a.set(status=503)
    b.set(status=503)
    desec_fake.reset_log()
    desec_fake.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.types_at("app") == ["CNAME"]
    assert desec_fake.get("app", "CNAME") == (3600, ["backup.example.net."])
    w = desec_fake.writes()
    assert [(q.method, q.path) for q in w] == [("PATCH", "/api/v1/domains/example.test/rrsets/")]
    assert sorted(w[0].json(), key=lambda x: x["type"]) == [
        {"subname": "app", "type": "A", "records": []},
        {"subname": "app", "type": "AAAA", "records": []},
        {"subname": "app", "type": "CNAME", "records": ["backup.example.net."], "ttl": 3600}]
    assert_never_both_nor_neither(desec_fake)
    # Change-only: the CNAME read back is the one wanted, nothing written.
    desec_fake.reset_log()
    quiet_ok(ddup.run())
    assert desec_fake.writes() == []
    # And back to the addresses, one bulk again.
    a.set(status=200)
    b.set(status=200)
    desec_fake.reset_log()
    desec_fake.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.types_at("app") == ["A", "AAAA"]
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    assert [q.method for q in desec_fake.writes()] == ["PATCH"]
    assert_never_both_nor_neither(desec_fake)
    assert desec_fake.get("www", "TXT") == (3600, ['"hello"'])


def test_cname_read_back_from_desec(ddup, desec_fake, http_server):
    """A first run finds the CNAME already there (read, not stored state)."""
    desec_fake.set_rrset("app", "CNAME", ["backup.example.NET."])
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, desec_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert desec_fake.count("GET") == 1
    assert desec_fake.writes() == []


def test_cname_refused_beside_another_type_is_invalid(ddup, desec_fake, http_server):
    """Another type the name holds (not ddup's) stops the CNAME: deSEC's 400."""
    desec_fake.set_rrset("app", "TXT", ['"mine"'])
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, desec_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 1, r
    assert "rejected as invalid" in r.err and "alongside CNAME" in r.err, r
    assert desec_fake.types_at("app") == ["TXT"]
