"""The porkbun provider through the built ddup-check, against the fake of
Porkbun's API v3 (porkbunfix.py): the first run writes only the
difference, a steady run writes nothing, a failover edits a record in
place (the name never empty), records of other names and types never
touched, IPv6, the apex, a CNAME endpoint (never beside addresses, the
name never empty), a refused key as an authentication failure, TTL
limits at configuration time, and the keys nowhere ddup writes."""

import os

import pytest

from conftest import TIME_SCALE
from providertest import (NAME, assert_config_error, assert_nowhere, configure,
                          outputs_of_every_kind, quiet_ok, state_error)


def section(fake, apikey=None, secret=None, extra=f"timeout = {5 * TIME_SCALE:g}s\n"):
    return f"""
[provider dns]
type = porkbun
apiKey = {apikey or fake.apikey}
secretApiKey = {secret or fake.secret}
zone = {fake.zone}
baseUrl = {fake.url}
{extra}"""


def paths(fake):
    return [q.path for q in fake.requests]


def test_first_run_creates_then_writes_nothing(ddup, porkbun, http_server):
    pb = porkbun
    a, b = http_server(), http_server()
    configure(ddup, section(pb), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)],
              ttl=600)
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.1", 600)]
    assert pb.get("AAAA", "app") == [("2001:db8::1", 600)]
    assert paths(pb)[0] == "/dns/retrieveByNameType/example.test/A/app"
    assert all(q.method == "POST" for q in pb.requests)
    creates = [q.json() for q in pb.writes()]
    for c in creates:
        assert (c.pop("apikey"), c.pop("secretapikey")) == (pb.apikey, pb.secret)
    assert creates == [{"name": "app", "type": "A", "content": "192.0.2.1", "ttl": "600"},
                       {"name": "app", "type": "AAAA", "content": "2001:db8::1",
                        "ttl": "600"}]
    pb.reset_log()
    quiet_ok(ddup.run())
    assert pb.requests == []
    # The IPv6 endpoint fails: its record is deleted, A left alone.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("AAAA", "app") == []
    assert pb.get("A", "app") == [("192.0.2.1", 600)]
    assert [q.path.split("/")[2] for q in pb.writes()] == ["delete"]


def test_steady_state_read_writes_nothing_and_others_untouched(ddup, porkbun, http_server):
    pb = porkbun
    pb.add("A", "app", "192.0.2.2")
    pb.add("A", "app", "192.0.2.1")
    pb.add("TXT", "app", "v=spf1 -all")
    pb.add("MX", "app", "mail.example.test")
    pb.add("A", "www", "198.51.100.1")
    before = dict(pb.records)
    a, b = http_server(), http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)],
              ttl=600)
    r = ddup.run()
    assert r.rc == 0, r
    assert paths(pb) == ["/dns/retrieveByNameType/example.test/A/app"]
    assert pb.writes() == []
    assert pb.records == before


def test_failover_and_back_edits_in_place(ddup, porkbun, http_server):
    pb = porkbun
    other = pb.add("A", "www", "198.51.100.1")
    txt = pb.add("TXT", "app", "hello")
    a, b = http_server(), http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 1)],
              ttl=600)
    assert ddup.run().rc == 0
    assert pb.get("A", "app") == [("192.0.2.1", 600)]
    rid = [k for k, v in pb.records.items() if v["content"] == "192.0.2.1"][0]
    a.set(status=503)
    pb.reset_log()
    pb.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.2", 600)]
    assert [q.path for q in pb.writes()] == [f"/dns/edit/example.test/{rid}"]
    assert all(h["A"] > 0 for h in pb.history), pb.history
    a.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.1", 600)]
    assert all(h["A"] > 0 for h in pb.history), pb.history
    assert pb.records[other] == {"type": "A", "name": "www", "content": "198.51.100.1",
                                 "ttl": 600}
    assert pb.records[txt]["content"] == "hello"


def test_ttl_edited_in_place_and_extras_deleted(ddup, porkbun, http_server):
    pb = porkbun
    keep = pb.add("A", "app", "192.0.2.1", ttl=3600)
    pb.add("A", "app", "203.0.113.9")
    a = http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0)], ttl=900)
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.1", 900)]
    w = pb.writes()
    assert [q.path.split("/")[2] for q in w] == ["edit", "delete"]
    assert w[0].path.endswith(f"/{keep}")
    assert {k: v for k, v in w[0].json().items() if "apikey" not in k} == {
        "name": "app", "type": "A", "content": "192.0.2.1", "ttl": "900"}


def test_apex_has_no_subdomain(ddup, porkbun, http_server):
    pb = porkbun
    pb.add("A", "", "203.0.113.9")
    a = http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0)], name="example.test", ttl=600)
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "") == [("192.0.2.1", 600)]
    assert paths(pb)[0] == "/dns/retrieveByNameType/example.test/A"
    assert pb.writes()[0].json()["name"] == ""


def test_ipv6_failover(ddup, porkbun, http_server):
    pb = porkbun
    a, b = http_server(), http_server()
    configure(ddup, section(pb), [("a", a, "2001:db8::1", 0), ("b", b, "2001:DB8:0::2", 1)],
              ttl=600)
    assert ddup.run().rc == 0
    a.set(status=503)
    assert ddup.run().rc == 0
    assert pb.get("AAAA", "app") == [("2001:db8::2", 600)]
    pb.reset_log()
    quiet_ok(ddup.run())
    assert pb.writes() == []


def cname_config(ddup, pb, a, b, c):
    text = f"interval = 30s\n" + section(pb)
    text += f"\n[domain {NAME}]\nprovider = dns\nttl = 600\nattempts = 1\n"
    text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    text += f"\n[endpoint b]\nurl = {b.url}\nip = 192.0.2.2\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)


def test_cname_endpoint_both_ways(ddup, porkbun, http_server):
    pb = porkbun
    pb.add("TXT", "www", "hello")
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, pb, a, b, c)
    assert ddup.run().rc == 0
    assert pb.get("A", "app") == [("192.0.2.1", 600), ("192.0.2.2", 600)]
    assert pb.get("CNAME", "app") == []
    # Both addresses down: the CNAME tier.  The name is never empty and
    # never holds the CNAME beside an address.
    a.set(status=503)
    b.set(status=503)
    pb.reset_log()
    pb.history.clear()
    r = ddup.run()
    assert r.rc == 0, r.err
    assert pb.get("CNAME", "app") == [("backup.example.net", 600)]
    assert pb.get("A", "app") == []
    assert [q.path.split("/")[2] for q in pb.writes()] == ["delete", "edit"]
    for h in pb.history:
        assert h["A"] + h["AAAA"] + h["CNAME"] > 0, pb.history
        assert h["CNAME"] == 0 or h["A"] + h["AAAA"] == 0, pb.history
    pb.reset_log()
    quiet_ok(ddup.run())
    assert pb.writes() == []
    # And back to the addresses.
    a.set(status=200)
    b.set(status=200)
    pb.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.1", 600), ("192.0.2.2", 600)]
    assert pb.get("CNAME", "app") == []
    assert [q.path.split("/")[2] for q in pb.writes()] == ["edit", "create"]
    for h in pb.history:
        assert h["A"] + h["AAAA"] + h["CNAME"] > 0, pb.history
        assert h["CNAME"] == 0 or h["A"] + h["AAAA"] == 0, pb.history
    assert pb.get("TXT", "www") == [("hello", 600)]


@pytest.mark.parametrize("what", ["apikey", "secret", "access"])
def test_refused_keys_are_an_authentication_failure(ddup, porkbun, http_server, what):
    pb = porkbun
    a = http_server()
    wrong = "pk1_" + "0" * 64
    pb.api_access = what != "access"
    configure(ddup, section(pb, apikey=wrong if what == "apikey" else None,
                            secret=wrong if what == "secret" else None),
              [("a", a, "192.0.2.1", 0)], ttl=600)
    r = ddup.run()
    assert r.rc == 1, r
    words = ["Invalid API key"] if what != "access" else ["API access"]
    for w in words + ["authentication failed", "400", "provider dns", "secretApiKey"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert "authentication failed" in st["lastError"], st
    assert "authentication failed" in state_error(ddup)
    assert pb.writes() == []
    for s in (pb.apikey, pb.secret, wrong):
        assert s not in r.err + r.out + st["lastError"]


@pytest.mark.parametrize("status,cls", [
    (400, "rejected as invalid"),
    (429, "rate limited"),
    (503, "temporary failure"),
])
def test_server_refusals_on_write(ddup, porkbun, http_server, status, cls):
    pb = porkbun
    a = http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0)], ttl=600)
    pb.fail(status, path="/dns/create")
    r = ddup.run()
    assert r.rc == 1, r
    assert cls in r.err and str(status) in r.err, r
    assert pb.get("A", "app") == []
    r = ddup.run()
    assert r.rc == 0, r
    assert pb.get("A", "app") == [("192.0.2.1", 600)]


@pytest.mark.parametrize("body,words", [
    ("<html>", ["not JSON"]),
    ('{"status": "SUCCESS", "records": [{"id": "1", "name": "app.example.test", '
     '"type": "A", "content": "::1", "ttl": "600"}]}', ["not an A address"]),
    ('{"status": "SUCCESS", "records": [{"id": "x", "name": "app.example.test", '
     '"type": "A", "content": "192.0.2.1", "ttl": "600"}]}', ["id or ttl"]),
    ('{"status": "ERROR", "message": "Something odd."}', ["Something odd."]),
    ('{"status": "SUCCESS"}', ["no records array"]),
])
def test_bad_read_answer_writes_nothing(ddup, porkbun, http_server, body, words):
    a = http_server()
    configure(ddup, section(porkbun), [("a", a, "192.0.2.1", 0)], ttl=600)
    porkbun.fail(200, path="/dns/retrieve", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert porkbun.writes() == []


def test_unreachable(ddup, porkbun, http_server):
    a = http_server()
    configure(ddup, section(porkbun), [("a", a, "192.0.2.1", 0)], ttl=600)
    porkbun.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r


@pytest.mark.parametrize("ttl,ok", [(599, False), (600, True), (2147483647, True)])
def test_ttl_limits_are_config_errors(ddup, porkbun, http_server, ttl, ok):
    a = http_server()
    configure(ddup, section(porkbun), [("a", a, "192.0.2.1", 0)], ttl=ttl)
    r = ddup.run("-n")
    if ok:
        assert r.rc == 0, r
        return
    assert r.rc == 2, r
    assert "600..2147483647" in r.err, r
    assert porkbun.requests == []


@pytest.mark.parametrize("line,words", [
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("zone = a/b", ["zone"]),
    ("timeout = soon", ["timeout"]),
    ("apiKey =", ["apiKey"]),
    ("secretApiKey = two words", ["secretApiKey"]),
])
def test_bad_values_are_config_errors(ddup, porkbun, http_server, line, words):
    assert_config_error(ddup, porkbun, section(porkbun), line, words, http_server())


def test_keys_nowhere(ddup, porkbun, http_server):
    pb = porkbun
    a, b = http_server(), http_server()
    env = {"DDUP_TEST_PB_KEY": pb.apikey, "DDUP_TEST_PB_SECRET": pb.secret}
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(pb, apikey="!env DDUP_TEST_PB_KEY",
                      secret="!env DDUP_TEST_PB_SECRET"), eps, top=top, ttl=600),
        flip=b, env=env)
    # An error answer that quotes the keys back, to a run that must write.
    assert ddup.run(env=env).rc == 0
    assert len(pb.get("A", "app")) == 2
    pb.fail(400, times=10, body={"status": "ERROR", "message":
                                 f"key {pb.apikey} secret {pb.secret} refused"})
    b.set(status=503)
    r = ddup.run("-v", env=env)
    assert r.rc == 1 and "400" in r.err and "key <secret> secret <secret>" in r.err, r.err
    outs += [r.out + r.err, ddup.run("--status", "--json", env=env).out]
    assert all(q.json()["secretapikey"] == pb.secret for q in pb.requests)
    assert_nowhere(ddup, outs, [pb.apikey, pb.secret])


def test_keys_from_files(ddup, porkbun, http_server):
    pb = porkbun
    a, b = http_server(), http_server()
    files = []
    for name, value in (("key", pb.apikey), ("secret", pb.secret)):
        path = os.path.join(str(ddup.dir), name)
        with open(path, "w") as f:
            f.write(value + "\n")
        os.chmod(path, 0o600)
        files.append(path)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(pb, apikey=f"!file {files[0]}", secret=f"!file {files[1]}"), eps,
        top=top, ttl=600), flip=b)
    assert pb.writes()
    assert all(q.json()["apikey"] == pb.apikey and q.json()["secretapikey"] == pb.secret
               for q in pb.requests)
    assert_nowhere(ddup, outs, [pb.apikey, pb.secret])


def test_more_than_1000_records_of_a_type_fail_the_read(ddup, porkbun, http_server):
    pb = porkbun
    for i in range(600):
        pb.add("A", "app", f"10.0.{i // 256}.{i % 256}")
    for i in range(500):
        pb.add("AAAA", "app", f"2001:db8::{i + 1:x}")
    a, b = http_server(), http_server()
    configure(ddup, section(pb), [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)],
              ttl=600)
    # 600 A and 500 AAAA: under the limit for each type, the update goes through.
    r = ddup.run()
    assert r.rc == 0, r.err
    assert pb.get("A", "app") == [("192.0.2.1", 600)]
    assert pb.get("AAAA", "app") == [("2001:db8::1", 600)]
    for i in range(1001):
        pb.add("A", "app", f"10.1.{i // 256}.{i % 256}")
    pb.reset_log()
    a.set(status=503)
    r = ddup.run()
    assert r.rc == 1, r
    assert "more than 1000 A records" in r.err, r.err
    assert pb.writes() == []
