"""The hetzner provider through the built ddup-check, against the fake of
the Hetzner Cloud DNS API (hetznerfix.py): the first run reads and writes
only what differs, nothing is written when nothing changed, the three
kinds of write (create, set_records and change_ttl, delete), actions
waited for, the error classes, TTL limits at configuration time, and no
token anywhere ddup writes."""

import os

import pytest

from conftest import TIME_SCALE
from providertest import (assert_config_error, assert_nowhere, configure,
                          outputs_of_every_kind, quiet_ok, state_error)


def section(fake, token=None, extra=f"timeout = {5 * TIME_SCALE:g}s\n"):
    return f"""
[provider dns]
type = hetzner
apiToken = {token or fake.token}
zone = {fake.zone}
baseUrl = {fake.url}/v1
{extra}"""


def writes(fake):
    return [(q.method, q.path.split("/rrsets", 1)[1]) for q in fake.writes()]


def test_first_run_creates_then_writes_nothing(ddup, hetzner, http_server):
    a, b = http_server(), http_server()
    configure(ddup, section(hetzner), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])
    assert hetzner.get("AAAA", "app") == (60, ["2001:db8::1"])
    # One list call to read, one to see what to change, one create per set.
    assert hetzner.count("GET") == 2
    assert writes(hetzner) == [("POST", ""), ("POST", "")]
    lst = hetzner.requests[0]
    assert lst.query == {"name": ["app"], "type": ["A", "AAAA"]}, lst
    assert hetzner.requests[2].json() == {"name": "app", "type": "A", "ttl": 60,
                                          "records": [{"value": "192.0.2.1"}]}
    hetzner.reset_log()
    quiet_ok(ddup.run())
    assert hetzner.requests == []
    # The IPv6 endpoint fails: AAAA is deleted, A left alone.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("AAAA", "app") is None
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])
    assert writes(hetzner) == [("DELETE", "/app/AAAA")]


def test_first_run_finds_the_right_set_and_writes_nothing(ddup, hetzner, http_server):
    hetzner.set_records("A", "app", ["192.0.2.2", "192.0.2.1"], ttl=60)
    hetzner.set_records("TXT", "app", ['"v=spf1 -all"'], ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.count("GET") == 1
    assert hetzner.writes() == []


def test_records_replaced_with_set_records_and_ttl_changed(ddup, hetzner, http_server):
    hetzner.set_records("A", "app", ["203.0.113.9", "192.0.2.1"], ttl=300)
    a, b = http_server(), http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "app") == (60, ["192.0.2.1", "192.0.2.2"])
    assert writes(hetzner) == [("POST", "/app/A/actions/set_records"),
                               ("POST", "/app/A/actions/change_ttl")]
    assert hetzner.writes()[0].json() == {"records": [{"value": "192.0.2.1"},
                                                      {"value": "192.0.2.2"}]}
    assert hetzner.writes()[1].json() == {"ttl": 60}
    # The records are right, only the TTL differs: one change_ttl.
    hetzner.set_records("A", "app", ["192.0.2.1", "192.0.2.2"], ttl=3600)
    hetzner.reset_log()
    ddup.state_exec("UPDATE domains SET unsure = 1", "UPDATE ddup_domain SET unsure = true")
    r = ddup.run()
    assert r.rc == 0, r
    assert writes(hetzner) == [("POST", "/app/A/actions/change_ttl")]


def test_zone_default_ttl_is_rewritten(ddup, hetzner, http_server):
    """A set with the zone's default TTL (null) is given ddup's TTL."""
    hetzner.set_records("A", "app", ["192.0.2.1"], ttl=None)
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])
    assert writes(hetzner) == [("POST", "/app/A/actions/change_ttl")]


def test_apex_is_at_sign(ddup, hetzner, http_server):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)], name="Example.Test")
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "@") == (60, ["192.0.2.1"])


def test_running_action_is_waited_for(ddup, hetzner, http_server):
    hetzner.action_polls = 2
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.count("GET", "/zones/actions/") == 2
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])
    hetzner.reset_log()
    assert ddup.run().rc == 0
    assert hetzner.requests == []


def test_failed_action_is_a_failed_update(ddup, hetzner, http_server):
    hetzner.action_error = True
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "action_failed" in r.err and "temporary failure" in r.err, r
    assert "temporary failure" in ddup.status()["domains"][0]["lastError"]
    hetzner.action_error = False
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])


def test_action_still_running_at_timeout_leaves_the_domain_unsure(ddup, hetzner, http_server):
    hetzner.action_polls = 1000
    a = http_server()
    configure(ddup, section(hetzner, extra=f"timeout = {2 * TIME_SCALE:g}s\n"),
              [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "still running" in r.err and "temporary failure" in r.err, r
    polls = hetzner.count("GET", "/zones/actions/")
    # One poll every 0.5 s while the timeout lasts, no more.
    assert 1 <= polls <= 4 * TIME_SCALE, polls
    # The change did happen: the next run reads it back and writes nothing.
    hetzner.action_polls = 0
    hetzner.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.writes() == []
    assert hetzner.count("GET") == 1


@pytest.mark.parametrize("what,status,words,cls", [
    ("token", 401, ["unauthorized"], "authentication failed"),
    ("readonly", 403, ["token_readonly"], "authentication failed"),
    ("zone", 404, ["not_found", "zone not found"], "not found"),
    ("secondary", 422, ["incorrect_zone_mode"], "rejected as invalid"),
])
def test_error_classes(ddup, hetzner, http_server, what, status, words, cls):
    a = http_server()
    wrong = "hz" + "w" * 40
    text = section(hetzner, token=wrong if what == "token" else None)
    if what == "zone":
        hetzner.zone = "other.test"
        text = text.replace("zone = other.test", "zone = example.test")
    hetzner.readonly = what == "readonly"
    hetzner.mode = "secondary" if what == "secondary" else "primary"
    configure(ddup, text, [("a", a, "192.0.2.1", 0)], name="app.example.test")
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, str(status), "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    assert cls in state_error(ddup)
    out = ddup.run("--status")
    assert cls in out.out, out
    for s in (hetzner.token, wrong):
        assert s not in r.err + r.out + st["lastError"] + out.out


@pytest.mark.parametrize("status,cls,words", [
    (429, "rate limited", ["429", "rate_limit_exceeded", "retry after 600s"]),
    (500, "temporary failure", ["500", "server_error"]),
    (503, "temporary failure", ["503"]),
    (423, "temporary failure", ["423", "locked"]),
])
def test_server_refusals_on_write(ddup, hetzner, http_server, status, cls, words):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    hetzner.fail(status, method="POST", retry_after=600 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert cls in state_error(ddup)
    assert hetzner.get("A", "app") is None
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])


def test_rate_limit_waited_out_within_timeout(ddup, hetzner, http_server):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    hetzner.fail(429, method="POST", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.count("POST") == 2
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])


def test_unreachable(ddup, hetzner, http_server):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    hetzner.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r


@pytest.mark.parametrize("body,words", [
    ("<html>", ["not JSON"]),
    ('{"rrsets": [{"name": "app", "type": "A", "ttl": 60, "records": [{"value": "::1"}]}]}',
     ["not an A address"]),
    ('{"rrsets": [{"name": "app", "type": "A", "ttl": "60", "records": []}]}', ["ttl"]),
    ('{"rrsets": {}}', ["no rrsets array"]),
])
def test_bad_list_answer_writes_nothing(ddup, hetzner, http_server, body, words):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    hetzner.fail(200, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert hetzner.writes() == []


def test_answer_without_action_is_a_failure(ddup, hetzner, http_server):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)])
    hetzner.fail(201, method="POST", body='{"rrset": {}}')
    r = ddup.run()
    assert r.rc == 1, r
    assert "no action in the answer" in r.err, r


@pytest.mark.parametrize("ttl,ok", [(59, False), (60, True), (2147483647, True)])
def test_ttl_limits_are_config_errors_naming_the_line(ddup, hetzner, http_server, ttl, ok):
    a = http_server()
    configure(ddup, section(hetzner), [("a", a, "192.0.2.1", 0)], ttl=ttl)
    r = ddup.run("-n")
    if ok:
        assert r.rc == 0, r
        return
    assert r.rc == 2, r
    line = open(ddup.config).read().splitlines().index(f"ttl = {ttl}") + 1
    assert f"ddup.ini:{line}: " in r.err and "60..2147483647" in r.err, r
    assert hetzner.requests == []


@pytest.mark.parametrize("line,words", [
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("baseUrl = https://u:p@api.example", ["baseUrl", "user name"]),
    ("zone = a/b", ["zone"]),
    ("timeout = soon", ["timeout"]),
    ("apiToken =", ["apiToken"]),
])
def test_bad_values_are_config_errors(ddup, hetzner, http_server, line, words):
    assert_config_error(ddup, hetzner, section(hetzner), line, words, http_server())


def test_no_token_anywhere(ddup, hetzner, http_server):
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "token")
    with open(path, "w") as f:
        f.write(hetzner.token + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(hetzner, token=f"!file {path}"), eps, top=top), flip=b)
    hetzner.fail(401, method="POST")
    r = ddup.run("-v")
    assert r.rc == 1 and "401" in r.err, r
    outs += [r.out + r.err, ddup.run("--status", "--json").out]
    assert all(q.header("Authorization") == "Bearer " + hetzner.token
               for q in hetzner.requests)
    assert_nowhere(ddup, outs, [hetzner.token])


# ------------------------------------------------------------ CNAME tiers

LB = "lb.example.net"


def cname_config(ddup, fake, lb, b1, b2):
    """Tier 0 a CNAME to LB, tier 10 an A and an AAAA."""
    ddup.write(f"""interval = 30s
{section(fake)}
[domain app.{fake.zone}]
provider = dns
ttl = 60
attempts = 1

[endpoint lb]
url = {lb.url}
cname = {LB}

[endpoint b1]
url = {b1.url}
ip = 192.0.2.2
priority = 10

[endpoint b2]
url = {b2.url}
ip = 2001:db8::2
priority = 10
""")


def never_both(fake):
    """The name never held a CNAME beside addresses; the states it went
    through (each change applied, in order)."""
    seen = [types for name, types in fake.states if name == "app"]
    for types in seen:
        assert not ("CNAME" in types and ("A" in types or "AAAA" in types)), seen
    return seen


def test_cname_tier_and_back(ddup, hetzner, http_server):
    hetzner.set_records("A", "app", ["192.0.2.9"], ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, hetzner, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    # Written absolute: a value without its dot is relative to the zone.
    assert hetzner.get("CNAME", "app") == (60, [LB + "."])
    assert hetzner.types_of("app") == ["CNAME"]
    # The address set goes first (no type change in place): empty between.
    assert never_both(hetzner) == [[], ["CNAME"]]
    assert ddup.status()["domains"][0]["published"] == [LB]
    lst = hetzner.requests[0]
    assert lst.query == {"name": ["app"], "type": ["A", "AAAA", "CNAME"]}, lst

    # Change-only: a steady run writes nothing.
    hetzner.reset_log()
    quiet_ok(ddup.run())
    assert hetzner.writes() == []

    # Back to addresses: the CNAME is deleted before they are created.
    hetzner.states.clear()
    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert hetzner.get("CNAME", "app") is None
    assert hetzner.get("A", "app") == (60, ["192.0.2.2"])
    assert hetzner.get("AAAA", "app") == (60, ["2001:db8::2"])
    assert never_both(hetzner) == [[], ["A"], ["A", "AAAA"]]
    hetzner.reset_log()
    quiet_ok(ddup.run())
    assert hetzner.writes() == []

    # And to the CNAME again, both address sets first.
    hetzner.states.clear()
    lb.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert never_both(hetzner) == [["AAAA"], [], ["CNAME"]]
    assert hetzner.get("CNAME", "app") == (60, [LB + "."])


def test_cname_read_back_on_a_first_run_and_retargeted(ddup, hetzner, http_server):
    """A CNAME already there (written by hand, any case) is found the same;
    one to another host is changed with set_records, in place."""
    hetzner.set_records("CNAME", "app", ["LB.Example.NET."], ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, hetzner, lb, b1, b2)
    quiet_ok(ddup.run())
    assert hetzner.writes() == []
    hetzner.set_records("CNAME", "app", ["old.example.net."], ttl=60)
    ddup.state = str(ddup.dir / "fresh.db")
    cname_config(ddup, hetzner, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert writes(hetzner) == [("POST", "/app/CNAME/actions/set_records")]
    assert hetzner.get("CNAME", "app") == (60, [LB + "."])


def test_cname_answer_that_is_no_host_is_refused(ddup, hetzner, http_server):
    hetzner.set_records("CNAME", "app", ["a b."], ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, hetzner, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 1, r
    assert "is not a host name" in r.err, r
    assert hetzner.writes() == []
