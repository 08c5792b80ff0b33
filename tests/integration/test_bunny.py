"""The bunny provider through the built ddup-check, against the fake of
bunny.net's DNS API (bunnyfix.py): the first run writes only the
difference, a steady run writes nothing, a failover adds before it
deletes (the name never empty), records of other names and types never
touched, IPv6, the apex, the zone looked up by name once, a CNAME
endpoint both ways (never beside addresses), a refused key as an
authentication failure, TTL limits at configuration time, and the key
nowhere ddup writes.  Every test but those that need the fake itself
(bunny_direct) runs through Prism, which checks each request and answer
against bunny.net's published OpenAPI document (bunny/README.md)."""

import os

import pytest

from bunnyfix import BN_TYPES
from conftest import TIME_SCALE
from prismfix import prism_fixture
from providertest import (NAME, assert_config_error, assert_nowhere, configure,
                          outputs_of_every_kind, quiet_ok, state_error)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bunny",
                      "bunny-dns-openapi.json")
_bunny_prism_session, bunny_prism = prism_fixture("bunny_direct", SCHEMA, "bunny_prism",
                                                  "bunny.net")


@pytest.fixture
def bunny(bunny_prism):
    """The fake behind Prism: the client's base URL is Prism's."""
    bunny_prism.fake.public = bunny_prism.url
    bunny_prism.fake.prism = bunny_prism
    return bunny_prism.fake


def take_undocumented_status(fake, status):
    """The document lists no 429 or 503 (bunny.net answers them all the
    same): Prism's only complaint is that status."""
    if status in (429, 503):
        bad = fake.prism.take_violations()
        assert bad and all("status code" in v for v in bad), bad


def section(fake, apikey=None, zone=True, extra=f"timeout = {5 * TIME_SCALE:g}s\n"):
    where = f"zone = {fake.zone}\n" if zone else f"zoneId = {fake.zone_id}\n"
    return f"""
[provider dns]
type = bunny
apiKey = {apikey or fake.apikey}
{where}baseUrl = {getattr(fake, 'public', None) or fake.url}
{extra}"""


def ops(fake):
    """(method, last path piece) of every write."""
    return [(q.method, q.path.split("/")[-1]) for q in fake.writes()]


def test_first_run_adds_then_writes_nothing(ddup, bunny, http_server):
    bn = bunny
    a, b = http_server(), http_server()
    configure(ddup, section(bn), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    assert bn.get("AAAA", "app") == [("2001:db8::1", 60)]
    assert all(q.header("AccessKey") == bn.apikey for q in bn.requests)
    # The zone looked up by its name once in the run.
    # One read of the zone for the read, one for the replace: not one per type.
    assert [q.path for q in bn.requests if q.method == "GET"][1:] == \
        [f"/dnszone/{bn.zone_id}"] * 2
    assert sum(1 for q in bn.requests if q.path == "/dnszone") == 1
    assert bn.requests[0].query["search"] == ["example.test"]
    assert [q.json() for q in bn.writes()] == [
        {"Type": 0, "Name": "app", "Value": "192.0.2.1", "Ttl": 60},
        {"Type": 1, "Name": "app", "Value": "2001:db8::1", "Ttl": 60}]
    assert all(q.method == "PUT" and q.path == f"/dnszone/{bn.zone_id}/records"
               for q in bn.writes())
    bn.reset_log()
    quiet_ok(ddup.run())
    assert bn.requests == []
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("AAAA", "app") == []
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    assert [q.method for q in bn.writes()] == ["DELETE"]


def test_steady_state_writes_nothing_and_others_untouched(ddup, bunny, http_server):
    bn = bunny
    bn.add("A", "app", "192.0.2.2", ttl=60)
    bn.add("A", "app", "192.0.2.1", ttl=60)
    bn.add("TXT", "app", "v=spf1 -all")
    bn.add("MX", "app", "mail.example.test")
    bn.add("A", "www", "198.51.100.1")
    before = {k: dict(v) for k, v in bn.records.items()}
    a, b = http_server(), http_server()
    configure(ddup, section(bn, zone=False), [("a", a, "192.0.2.1", 0),
                                              ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    # zoneId given: no lookup, one read of the zone.
    assert [q.path for q in bn.requests] == [f"/dnszone/{bn.zone_id}"]
    assert bn.writes() == []
    assert bn.records == before


def test_failover_and_back_adds_before_deleting(ddup, bunny, http_server):
    bn = bunny
    other = bn.add("A", "www", "198.51.100.1")
    txt = bn.add("TXT", "app", "hello")
    a, b = http_server(), http_server()
    configure(ddup, section(bn), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 1)])
    assert ddup.run().rc == 0
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    a.set(status=503)
    bn.reset_log()
    bn.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.2", 60)]
    assert [m for m, _ in ops(bn)] == ["PUT", "DELETE"]
    assert all(h["A"] > 0 for h in bn.history), bn.history
    a.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    assert all(h["A"] > 0 for h in bn.history), bn.history
    assert bn.records[other] == {"Type": 0, "Name": "www", "Value": "198.51.100.1",
                                 "Ttl": 300}
    assert bn.records[txt]["Value"] == "hello"


def test_ttl_updated_in_place_and_extras_deleted(ddup, bunny, http_server):
    bn = bunny
    keep = bn.add("A", "app", "192.0.2.1", ttl=3600)
    bn.add("A", "app", "203.0.113.9")
    a = http_server()
    configure(ddup, section(bn), [("a", a, "192.0.2.1", 0)], ttl=900)
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.1", 900)]
    w = bn.writes()
    assert [q.method for q in w] == ["POST", "DELETE"]
    assert w[0].path.endswith(f"/records/{keep}")
    assert w[0].json() == {"Type": 0, "Name": "app", "Value": "192.0.2.1", "Ttl": 900}


def test_apex_is_the_empty_name(ddup, bunny, http_server):
    bn = bunny
    bn.add("A", "", "203.0.113.9")
    a = http_server()
    configure(ddup, section(bn, zone=False), [("a", a, "192.0.2.1", 0)],
              name="example.test")
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "") == [("192.0.2.1", 60)]
    assert bn.writes()[0].json()["Name"] == ""


def test_ipv6_failover(ddup, bunny, http_server):
    bn = bunny
    a, b = http_server(), http_server()
    configure(ddup, section(bn), [("a", a, "2001:db8::1", 0), ("b", b, "2001:DB8:0::2", 1)])
    assert ddup.run().rc == 0
    a.set(status=503)
    assert ddup.run().rc == 0
    assert bn.get("AAAA", "app") == [("2001:db8::2", 60)]
    bn.reset_log()
    quiet_ok(ddup.run())
    assert bn.writes() == []


def test_cname_endpoint_both_ways(ddup, bunny, http_server):
    bn = bunny
    bn.add("TXT", "www", "hello")
    a, b, c = http_server(), http_server(), http_server()
    text = "interval = 30s\n" + section(bn)
    text += f"\n[domain {NAME}]\nprovider = dns\nttl = 60\nattempts = 1\n"
    text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    text += f"\n[endpoint b]\nurl = {b.url}\nip = 2001:db8::1\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)
    assert ddup.run().rc == 0
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    a.set(status=503)
    b.set(status=503)
    bn.reset_log()
    bn.history.clear()
    r = ddup.run()
    assert r.rc == 0, r.err
    assert bn.get("CNAME", "app") == [("backup.example.net", 60)]
    assert bn.get("A", "app") == [] and bn.get("AAAA", "app") == []
    assert [m for m, _ in ops(bn)] == ["DELETE", "DELETE", "PUT"]
    assert bn.writes()[-1].json()["Type"] == BN_TYPES["CNAME"]
    for h in bn.history:
        assert h["CNAME"] == 0 or h["A"] + h["AAAA"] == 0, bn.history
    bn.reset_log()
    quiet_ok(ddup.run())
    assert bn.writes() == []
    a.set(status=200)
    b.set(status=200)
    bn.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.1", 60)]
    assert bn.get("AAAA", "app") == [("2001:db8::1", 60)]
    assert bn.get("CNAME", "app") == []
    assert [m for m, _ in ops(bn)] == ["DELETE", "PUT", "PUT"]
    for h in bn.history:
        assert h["CNAME"] == 0 or h["A"] + h["AAAA"] == 0, bn.history
    assert bn.get("TXT", "www") == [("hello", 300)]


def test_wrong_key_is_an_authentication_failure(ddup, bunny, http_server):
    bn = bunny
    a = http_server()
    wrong = "0" * 36
    configure(ddup, section(bn, apikey=wrong), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    for w in ["authentication failed", "401", "provider dns", "apiKey"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert "authentication failed" in st["lastError"], st
    assert "authentication failed" in state_error(ddup)
    assert bn.writes() == []
    for s in (bn.apikey, wrong):
        assert s not in r.err + r.out + st["lastError"]


@pytest.mark.parametrize("zone_id,words", [(False, "no zone example.test"),
                                           (True, "404")])
def test_unknown_zone(ddup, bunny, http_server, zone_id, words):
    bn = bunny
    a = http_server()
    configure(ddup, section(bn, zone=not zone_id), [("a", a, "192.0.2.1", 0)])
    # The account holds other zones only (or the id is another's).
    bn.zone, bn.zone_id = "elsewhere.test", 77
    r = ddup.run()
    assert r.rc == 1, r
    assert words in r.err, r
    assert bn.writes() == []


@pytest.mark.parametrize("status,cls", [
    (400, "rejected as invalid"),
    (429, "rate limited"),
    (500, "temporary failure"),
    (503, "temporary failure"),
])
def test_server_refusals_on_write(ddup, bunny, http_server, status, cls):
    bn = bunny
    a = http_server()
    configure(ddup, section(bn), [("a", a, "192.0.2.1", 0)])
    bn.fail(status, method="PUT", retry_after=600 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    take_undocumented_status(bn, status)
    assert cls in r.err and str(status) in r.err, r
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert cls in state_error(ddup)
    assert bn.get("A", "app") == []
    r = ddup.run()
    assert r.rc == 0, r
    assert bn.get("A", "app") == [("192.0.2.1", 60)]


def test_rate_limit_waited_out_within_timeout(ddup, bunny, http_server):
    bn = bunny
    a = http_server()
    configure(ddup, section(bn), [("a", a, "192.0.2.1", 0)])
    bn.fail(429, method="PUT", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    take_undocumented_status(bn, 429)
    assert bn.count("PUT") == 2
    assert bn.get("A", "app") == [("192.0.2.1", 60)]


@pytest.mark.parametrize("body,words", [
    ("<html>", ["not JSON"]),
    ('{"Id": 48213, "Domain": "example.test", "Records": [{"Id": 1, "Type": 0, '
     '"Name": "app", "Value": "::1", "Ttl": 60}]}', ["not an A address"]),
    ('{"Id": 48213, "Domain": "example.test", "Records": [{"Id": "x", "Type": 0, '
     '"Name": "app", "Value": "192.0.2.1", "Ttl": 60}]}', ["Id or Ttl"]),
    ('{"Id": 48213, "Domain": "example.test"}', ["no Records array"]),
    ('{"Id": 48213, "Records": []}', ["no Domain"]),
])
def test_bad_read_answer_writes_nothing(ddup, bunny_direct, http_server, body, words):
    bunny = bunny_direct      # answers that break the document on purpose: no Prism between
    a = http_server()
    configure(ddup, section(bunny, zone=False), [("a", a, "192.0.2.1", 0)])
    bunny.fail(200, path="/dnszone/48213", method="GET", body=body, times=5)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer"]:
        assert w in r.err, (w, r)
    assert bunny.writes() == []


def test_unreachable(ddup, bunny_direct, http_server):
    bunny = bunny_direct      # the fake stopped: no Prism between
    a = http_server()
    configure(ddup, section(bunny), [("a", a, "192.0.2.1", 0)])
    bunny.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r


@pytest.mark.parametrize("ttl,ok", [(14, False), (15, True), (2147483647, True)])
def test_ttl_limits_are_config_errors(ddup, bunny, http_server, ttl, ok):
    a = http_server()
    configure(ddup, section(bunny), [("a", a, "192.0.2.1", 0)], ttl=ttl)
    r = ddup.run("-n")
    if ok:
        assert r.rc == 0, r
        return
    assert r.rc == 2, r
    assert "15..2147483647" in r.err, r
    assert bunny.requests == []


@pytest.mark.parametrize("line,words", [
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("zone = a/b", ["zone"]),
    ("zoneId = abc", ["zoneId"]),
    ("timeout = soon", ["timeout"]),
    ("apiKey =", ["apiKey"]),
])
def test_bad_values_are_config_errors(ddup, bunny, http_server, line, words):
    assert_config_error(ddup, bunny, section(bunny), line, words, http_server())


def test_key_nowhere(ddup, bunny, http_server):
    bn = bunny
    a, b = http_server(), http_server()
    env = {"DDUP_TEST_BN_KEY": bn.apikey}
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(bn, apikey="!env DDUP_TEST_BN_KEY"), eps, top=top), flip=b, env=env)
    assert ddup.run(env=env).rc == 0
    assert len(bn.get("A", "app")) == 2
    bn.fail(400, times=10, method="DELETE",
            body={"ErrorKey": "x", "Message": f"key {bn.apikey} refused"})
    b.set(status=503)
    r = ddup.run("-v", env=env)
    assert r.rc == 1 and "400" in r.err, r.err
    outs += [r.out + r.err, ddup.run("--status", "--json", env=env).out]
    assert_nowhere(ddup, outs, [bn.apikey])


def test_key_from_file(ddup, bunny, http_server):
    bn = bunny
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "bunny.key")
    with open(path, "w") as f:
        f.write(bn.apikey + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(bn, apikey=f"!file {path}"), eps, top=top), flip=b)
    assert bn.writes()
    assert all(q.header("AccessKey") == bn.apikey for q in bn.requests)
    assert_nowhere(ddup, outs, [bn.apikey])
