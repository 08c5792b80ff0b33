"""The gandi provider through the built ddup-check, against the Gandi
LiveDNS fake (gandifix.py): one read per name, a PUT per type, a DELETE
for an emptied type, the 404 that means "no records" told from the one
that means "no domain", the TTL limits, the error classes, and no token
anywhere ddup writes."""

import os

import pytest

from gandifix import gandi_fake  # noqa: F401  (fixture)
from providertest import (ZONE, assert_config_error, assert_nowhere, assert_outside_zone,
                          configure, outputs_of_every_kind, quiet_ok, state_error)

TTL = 300        # the least the provider takes; providertest's default is below it
RECORDS = "/v5/livedns/domains/example.test/records/"


def gandi_section(fake, token=None, extra=""):
    return f"""
[provider dns]
type = gandi
apiToken = {token or fake.token}
zone = {fake.zone}
baseUrl = {fake.url}/v5/livedns
timeout = 5s
{extra}"""


def line_of(ddup, start):
    with open(ddup.config) as f:
        return next(i for i, ln in enumerate(f, 1) if ln.startswith(start))


def without_ttl(ddup):
    """The domain takes the default ttl (120)."""
    with open(ddup.config) as f:
        text = "".join(ln for ln in f if not ln.startswith("ttl = "))
    ddup.write(text, state=False)


def test_first_run_reads_then_writes_then_nothing(ddup, gandi_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, gandi_section(gandi_fake),
              [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])
    assert gandi_fake.get("app", "AAAA") == (300, ["2001:db8::1"])
    # The name had no records (404): the domain's GET says it is served.
    assert [(q.method, q.path) for q in gandi_fake.requests] == [
        ("GET", RECORDS + "app"), ("GET", "/v5/livedns/domains/example.test"),
        ("PUT", RECORDS + "app/A"), ("PUT", RECORDS + "app/AAAA")]
    assert gandi_fake.writes()[0].json() == {"rrset_values": ["192.0.2.1"], "rrset_ttl": 300}
    # Nothing changed: no call at all.
    gandi_fake.reset_log()
    quiet_ok(ddup.run())
    assert gandi_fake.requests == []
    # The IPv6 endpoint fails: AAAA is deleted, A rewritten as it is.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "AAAA") is None
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])
    assert [(q.method, q.path) for q in gandi_fake.writes()] == [
        ("PUT", RECORDS + "app/A"), ("DELETE", RECORDS + "app/AAAA")]


def test_first_run_finds_the_right_set_among_others(ddup, gandi_fake, http_server):
    gandi_fake.set_records("app", "A", ["192.0.2.2", "192.0.2.1"], ttl=300)
    gandi_fake.set_records("app", "TXT", ['"v=spf1 -all"'])
    a, b = http_server(), http_server()
    configure(ddup, gandi_section(gandi_fake),
              [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)], ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.count("GET") == 1
    assert gandi_fake.writes() == []


def test_first_run_replaces_only_its_type(ddup, gandi_fake, http_server):
    gandi_fake.set_records("app", "A", ["203.0.113.9"], ttl=10800)
    gandi_fake.set_records("app", "MX", ["10 mx.example.test."])
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=600)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "A") == (600, ["192.0.2.1"])
    assert gandi_fake.get("app", "MX") == (10800, ["10 mx.example.test."])
    assert [(q.method, q.path) for q in gandi_fake.writes()] == [("PUT", RECORDS + "app/A")]
    assert not any("/AAAA" in q.path for q in gandi_fake.requests)


def test_emptied_type_already_gone(ddup, gandi_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, gandi_section(gandi_fake),
              [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)], ttl=TTL)
    assert ddup.run().rc == 0
    # Someone deleted AAAA by hand; then the IPv6 endpoint fails.
    del gandi_fake.records[("app", "AAAA")]
    b.set(status=503)
    gandi_fake.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert [(q.method, q.path) for q in gandi_fake.requests] == [
        ("PUT", RECORDS + "app/A"), ("DELETE", RECORDS + "app/AAAA"),
        ("GET", "/v5/livedns/domains/example.test")]


def test_apex_is_at_sign(ddup, gandi_fake, http_server):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], name=ZONE, ttl=TTL)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("@", "A") == (300, ["192.0.2.1"])


@pytest.mark.parametrize("ttl,at,words", [
    (299, "ttl", ["ttl 299", "300..2592000"]),
    (None, "[domain", ["ttl 120", "300..2592000"]),
    (2592001, "ttl", ["ttl 2592001"]),
])
def test_ttl_limits_are_config_errors(ddup, gandi_fake, http_server, ttl, at, words):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=ttl or TTL)
    if ttl is None:
        without_ttl(ddup)
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert f"ddup.ini:{line_of(ddup, at)}: " in r.err, r
    for w in words:
        assert w in r.err, (w, r)
    assert gandi_fake.requests == []


@pytest.mark.parametrize("line,words", [
    ("zone = a/b", ["zone"]),
    ("apiToken = pat with blanks", ["apiToken"]),
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("baseUrl = https://u:p@api.gandi.example", ["baseUrl"]),
    ("timeout = soon", ["timeout"]),
])
def test_bad_values_are_config_errors(ddup, gandi_fake, http_server, line, words):
    assert_config_error(ddup, gandi_fake, gandi_section(gandi_fake), line, words, http_server())


def test_domain_outside_zone_is_a_config_error(ddup, gandi_fake, http_server):
    assert_outside_zone(ddup, gandi_fake, gandi_section(gandi_fake), http_server())


@pytest.mark.parametrize("what,words,cls", [
    ("token", ["401", "check apiToken"], "authentication failed"),
    ("permission", ["403", "Manage domain name technical configurations"],
     "authentication failed"),
    ("zone", ["404", "does not serve example.test"], "not found"),
])
def test_error_classes(ddup, gandi_fake, http_server, what, words, cls):
    a = http_server()
    wrong = "pat_" + "w" * 32
    gandi_fake.set_records("app", "A", ["203.0.113.9"])
    if what == "permission":
        gandi_fake.can_write = False
    configure(ddup, gandi_section(gandi_fake, token=wrong if what == "token" else None),
              [("a", a, "192.0.2.1", 0)], ttl=TTL)
    if what == "zone":
        gandi_fake.zone = "other.test"
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    assert cls in state_error(ddup)
    text_status = ddup.run("--status")
    assert cls in text_status.out, text_status
    for s in (gandi_fake.token, wrong):
        assert s not in r.err + r.out + st["lastError"] + text_status.out
    assert gandi_fake.get("app", "A") == (10800, ["203.0.113.9"])


@pytest.mark.parametrize("status,cls,words", [
    (429, "rate limited", ["429", "injected 429", "retry after 7s"]),
    (400, "rejected as invalid", ["400", "rrset_values: injected 400"]),
    (503, "temporary failure", ["503"]),
    (500, "temporary failure", ["500"]),
])
def test_server_refusals_on_write(ddup, gandi_fake, http_server, status, cls, words):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    gandi_fake.fail(status, method="PUT", retry_after=7 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert cls in state_error(ddup)
    assert gandi_fake.get("app", "A") is None
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])


def test_failed_first_type_stops_the_update(ddup, gandi_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, gandi_section(gandi_fake),
              [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)], ttl=TTL)
    gandi_fake.fail(503, method="PUT")
    r = ddup.run()
    assert r.rc == 1 and "503" in r.err, r
    assert gandi_fake.count("PUT") == 1
    assert gandi_fake.get("app", "AAAA") is None
    # The next run reads again (the domain is unsure) and writes both.
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])
    assert gandi_fake.get("app", "AAAA") == (300, ["2001:db8::1"])


def test_rate_limit_waited_out_within_timeout(ddup, gandi_fake, http_server):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    gandi_fake.fail(429, method="PUT", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.count(method="PUT") == 2
    assert gandi_fake.get("app", "A") == (TTL, ["192.0.2.1"])


def test_unreachable(ddup, gandi_fake, http_server):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    gandi_fake.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r
    assert "unreachable" in ddup.status()["domains"][0]["lastError"]


@pytest.mark.parametrize("body,words", [
    ('{"rrset_type": "A"}', ["not an array"]),
    ('[{"rrset_type": "A", "rrset_ttl": 300, "rrset_values": ["2001:db8::1"]}]',
     ["not an IPv4 address"]),
    ('[{"rrset_type": "A", "rrset_ttl": null, "rrset_values": ["192.0.2.1"]}]', ["no rrset_ttl"]),
    ('[{"rrset_type": "A", "rrset_ttl": 300, "rrset_values": ["192.0.2.1"]},'
     ' {"rrset_type": "A", "rrset_ttl": 300, "rrset_values": ["192.0.2.2"]}]', ["second one"]),
    ("<html>", ["not JSON"]),
])
def test_bad_read_answer_writes_nothing(ddup, gandi_fake, http_server, body, words):
    a = http_server()
    configure(ddup, gandi_section(gandi_fake), [("a", a, "192.0.2.1", 0)], ttl=TTL)
    gandi_fake.fail(200, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert gandi_fake.writes() == []


def test_no_token_anywhere(ddup, gandi_fake, http_server):
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "token.txt")
    with open(path, "w") as f:
        f.write(gandi_fake.token + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, gandi_section(gandi_fake, token=f"!file {path}"), eps, top=top, ttl=TTL), flip=b)
    assert len(gandi_fake.writes()) >= 2
    gandi_fake.fail(401, method="PUT")
    r = ddup.run("-v")
    assert r.rc == 1 and "401" in r.err, r
    outs.append(r.out + r.err)
    outs.append(ddup.run("--status", "--json").out)
    assert_nowhere(ddup, outs, [gandi_fake.token])


def cname_config(ddup, fake, a, b, c):
    """Two addresses at priority 0, a CNAME tier at priority 1."""
    text = "interval = 30s\n" + gandi_section(fake)
    text += f"\n[domain app.{ZONE}]\nprovider = dns\nttl = {TTL}\nattempts = 1\n"
    text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    text += f"\n[endpoint b]\nurl = {b.url}\nip = 2001:db8::1\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)


def assert_never_both_nor_neither(fake):
    states = [types for name, types in fake.history if name == "app"]
    assert states, fake.history
    for types in states:
        assert types, fake.history
        assert "CNAME" not in types or types == ["CNAME"], fake.history


def test_cname_tier_and_back_one_put_of_the_name_each(ddup, gandi_fake, http_server):
    gandi_fake.set_records("www", "TXT", ['"hello"'])
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, gandi_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.types_at("app") == ["A", "AAAA"]
    # Both addresses down: the CNAME tier, one PUT of the whole name
    # after one GET of it; the target written absolute.
    a.set(status=503)
    b.set(status=503)
    gandi_fake.reset_log()
    gandi_fake.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.types_at("app") == ["CNAME"]
    assert gandi_fake.get("app", "CNAME") == (300, ["backup.example.net."])
    assert [(q.method, q.path) for q in gandi_fake.requests] == [
        ("GET", RECORDS + "app"), ("PUT", RECORDS + "app")]
    assert gandi_fake.writes()[0].json() == {"items": [
        {"rrset_type": "CNAME", "rrset_values": ["backup.example.net."], "rrset_ttl": 300}]}
    assert_never_both_nor_neither(gandi_fake)
    # Change-only: nothing to write.
    gandi_fake.reset_log()
    quiet_ok(ddup.run())
    assert gandi_fake.writes() == []
    # And back to the addresses, one PUT of the name again.
    a.set(status=200)
    b.set(status=200)
    gandi_fake.reset_log()
    gandi_fake.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.types_at("app") == ["A", "AAAA"]
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])
    assert [(q.method, q.path) for q in gandi_fake.writes()] == [("PUT", RECORDS + "app")]
    assert_never_both_nor_neither(gandi_fake)
    assert gandi_fake.get("www", "TXT") == (10800, ['"hello"'])


def test_cname_domain_without_a_switch_writes_types(ddup, gandi_fake, http_server):
    """Addresses to other addresses on a domain with a CNAME tier: the
    calls of the types held or wanted, not the whole name, and an
    absent CNAME is not deleted."""
    gandi_fake.set_records("app", "A", ["203.0.113.9"], ttl=300)
    gandi_fake.set_records("app", "MX", ["10 mx.example.test."])
    a, b, c = http_server(), http_server(status=503), http_server()
    cname_config(ddup, gandi_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert gandi_fake.get("app", "A") == (300, ["192.0.2.1"])
    assert gandi_fake.types_at("app") == ["A", "MX"]
    assert [(q.method, q.path) for q in gandi_fake.writes()] == [("PUT", RECORDS + "app/A")]


@pytest.mark.parametrize("stored", ["backup.example.NET.", "backup"])
def test_cname_read_back_from_gandi(ddup, gandi_fake, http_server, stored):
    """A first run finds the CNAME there; a value without a final dot is
    relative to the zone, so "backup" is backup.example.test: not ours."""
    gandi_fake.set_records("app", "CNAME", [stored], ttl=300)
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, gandi_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    if stored == "backup":
        assert [(q.method, q.path) for q in gandi_fake.writes()] == [
            ("PUT", RECORDS + "app/CNAME")]
        assert "backup.example.test" in r.out + r.err, r
        assert gandi_fake.get("app", "CNAME") == (300, ["backup.example.net."])
    else:
        assert gandi_fake.writes() == []


def test_cname_refused_beside_another_type(ddup, gandi_fake, http_server):
    """Another type at the name (not ddup's) is written back beside the
    CNAME, and LiveDNS refuses the lot: nothing changes."""
    gandi_fake.set_records("app", "A", ["192.0.2.1"], ttl=300)
    gandi_fake.set_records("app", "TXT", ['"mine"'])
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, gandi_fake, a, b, c)
    r = ddup.run()
    assert r.rc == 1, r
    assert "rejected as invalid" in r.err and "coexist" in r.err, r
    assert gandi_fake.types_at("app") == ["A", "TXT"]
    put = gandi_fake.writes()[0].json()
    assert {"rrset_type": "TXT", "rrset_values": ['"mine"'], "rrset_ttl": 10800} in put["items"]
