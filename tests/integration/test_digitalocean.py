"""The digitalocean provider through the built ddup-check, against the
fake of DigitalOcean's domain records API (digitaloceanfix.py) behind
Prism, which validates every request and answer against DigitalOcean's
published OpenAPI document: the first
run reads and writes only the difference, nothing is written when nothing
changed, additions before deletions (the name never empty), TTLs patched
in place, paging, the error classes, TTL limits at configuration time, and
no token anywhere ddup writes."""

import pytest

from conftest import TIME_SCALE
from providertest import (NAME, assert_config_error, assert_nowhere, configure,
                          outputs_of_every_kind, quiet_ok, state_error)


def section(fake, token=None, extra=f"timeout = {5 * TIME_SCALE:g}s\n"):
    return f"""
[provider dns]
type = digitalocean
apiToken = {token or fake.token}
zone = {fake.zone}
baseUrl = {fake.url}
{extra}"""


def test_first_run_creates_then_writes_nothing(ddup, digitalocean, http_server):
    do = digitalocean
    a, b = http_server(), http_server()
    configure(ddup, section(do), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60)]
    assert do.get("AAAA", "app") == [("2001:db8::1", 60)]
    gets = [q for q in do.requests if q.method == "GET"]
    # Read (one list per type), then one list per type before writing.
    assert len(gets) == 4
    assert gets[0].query == {"name": [NAME], "type": ["A"], "per_page": ["200"],
                             "page": ["1"]}, gets[0]
    posts = [q.json() for q in do.writes()]
    assert posts == [{"type": "A", "name": "app", "data": "192.0.2.1", "ttl": 60},
                     {"type": "AAAA", "name": "app", "data": "2001:db8::1", "ttl": 60}]
    do.reset_log()
    quiet_ok(ddup.run())
    assert do.requests == []
    # The IPv6 endpoint fails: its record is deleted, A left alone.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("AAAA", "app") == []
    assert do.get("A", "app") == [("192.0.2.1", 60)]
    assert [q.method for q in do.writes()] == ["DELETE"]


def test_first_run_finds_the_right_set_and_writes_nothing(ddup, digitalocean, http_server):
    do = digitalocean
    do.add("A", "app", "192.0.2.2", ttl=60)
    do.add("A", "app", "192.0.2.1", ttl=60)
    do.add("TXT", "app", "v=spf1 -all", ttl=60)
    do.add("A", "www", "198.51.100.1", ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert do.count("GET") == 1
    assert do.writes() == []


def test_failover_adds_before_it_deletes(ddup, digitalocean, http_server):
    do = digitalocean
    a, b = http_server(), http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 1)])
    assert ddup.run().rc == 0
    kept = [rid for rid, rec in do.records.items() if rec["data"] == "192.0.2.1"]
    a.set(status=503)
    do.reset_log()
    do.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.2", 60)]
    assert [q.method for q in do.writes()] == ["POST", "DELETE"]
    assert do.writes()[1].path.endswith(f"/records/{kept[0]}")
    assert all(h["A"] > 0 for h in do.history), do.history
    # And back: the other record stays, a new one for .1 comes first.
    a.set(status=200)
    do.history.clear()
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60)]
    assert all(h["A"] > 0 for h in do.history), do.history


def test_ttl_patched_in_place_and_unwanted_deleted(ddup, digitalocean, http_server):
    do = digitalocean
    keep = do.add("A", "app", "192.0.2.1", ttl=1800)
    do.add("A", "app", "203.0.113.9", ttl=60)
    do.add("A", "app", "192.0.2.1", ttl=60)          # a duplicate
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60)]
    assert [q.method for q in do.writes()] == ["PATCH", "DELETE", "DELETE"]
    assert do.writes()[0].path.endswith(f"/records/{keep}")
    assert do.writes()[0].json() == {"type": "A", "ttl": 60}
    assert keep in do.records


def test_records_listed_page_after_page(ddup, digitalocean, http_server):
    do = digitalocean
    do.max_per_page = 2
    for i in range(1, 6):
        do.add("A", "app", f"192.0.2.{i}", ttl=60)
    eps = [(f"e{i}", http_server(), f"192.0.2.{i}", 0) for i in range(1, 6)]
    configure(ddup, section(do), eps)
    r = ddup.run()
    assert r.rc == 0, r
    assert [q.query["page"] for q in do.requests] == [["1"], ["2"], ["3"]]
    assert do.writes() == []


def test_apex_is_at_sign(ddup, digitalocean, http_server):
    do = digitalocean
    do.add("A", "@", "203.0.113.9", ttl=60)
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)], name="example.test")
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "@") == [("192.0.2.1", 60)]
    assert do.requests[0].query["name"] == ["example.test"]
    assert [q.method for q in do.writes()] == ["POST", "DELETE"]


@pytest.mark.parametrize("what,status,words,cls", [
    ("token", 401, ["Unauthorized", "Unable to authenticate you"], "authentication failed"),
    ("readonly", 403, ["Forbidden"], "authentication failed"),
    ("zone", 404, ["not_found"], "not found"),
])
def test_error_classes(ddup, digitalocean, http_server, what, status, words, cls):
    do = digitalocean
    a = http_server()
    wrong = "dop_v1_" + "0" * 64
    if what == "zone":
        do.zone = "other.test"
    do.readonly = what == "readonly"
    text = section(do, token=wrong if what == "token" else None)
    text = text.replace("zone = other.test", "zone = example.test")
    configure(ddup, text, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, str(status), "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    assert cls in state_error(ddup)
    out = ddup.run("--status")
    assert cls in out.out, out
    for s in (do.token, wrong):
        assert s not in r.err + r.out + st["lastError"] + out.out


@pytest.mark.parametrize("status,cls,words", [
    (422, "rejected as invalid", ["422", "unprocessable_entity"]),
    (429, "rate limited", ["429", "too_many_requests", "retry after 600s"]),
    (500, "temporary failure", ["500"]),
    (503, "temporary failure", ["503"]),
])
def test_server_refusals_on_write(ddup, digitalocean, http_server, status, cls, words):
    do = digitalocean
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)])
    do.fail(status, method="POST", retry_after=600 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert cls in state_error(ddup)
    assert do.get("A", "app") == []
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60)]


def test_rate_limit_waited_out_within_timeout(ddup, digitalocean, http_server):
    do = digitalocean
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)])
    do.fail(429, method="POST", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert do.count("POST") == 2
    assert do.get("A", "app") == [("192.0.2.1", 60)]


def test_failed_delete_leaves_the_new_record_and_heals(ddup, digitalocean, http_server):
    do = digitalocean
    do.add("A", "app", "203.0.113.9", ttl=60)
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)])
    do.fail(500, method="DELETE")
    r = ddup.run()
    assert r.rc == 1, r
    assert do.get("A", "app") == [("192.0.2.1", 60), ("203.0.113.9", 60)]
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60)]


# The bare fake (digitalocean_fake), not behind Prism: an API that does not
# answer, and answers that break DigitalOcean's document, which Prism would
# replace with its own.
def test_unreachable(ddup, digitalocean_fake, http_server):
    a = http_server()
    configure(ddup, section(digitalocean_fake), [("a", a, "192.0.2.1", 0)])
    digitalocean_fake.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r


@pytest.mark.parametrize("body,words", [
    ("<html>", ["not JSON"]),
    ('{"domain_records": [{"id": 1, "type": "A", "name": "app", "data": "::1", "ttl": 60}]}',
     ["not an A address"]),
    ('{"domain_records": [{"id": "1", "type": "A", "name": "app", "data": "192.0.2.1", '
     '"ttl": 60}]}', ["lacks id"]),
    ('{"records": []}', ["no domain_records array"]),
])
def test_bad_list_answer_writes_nothing(ddup, digitalocean_fake, http_server, body, words):
    do = digitalocean_fake
    a = http_server()
    configure(ddup, section(do), [("a", a, "192.0.2.1", 0)])
    do.fail(200, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert do.writes() == []


@pytest.mark.parametrize("ttl,ok", [(29, False), (30, True), (2147483647, True)])
def test_ttl_limits_are_config_errors_naming_the_line(ddup, digitalocean, http_server, ttl,
                                                      ok):
    a = http_server()
    configure(ddup, section(digitalocean), [("a", a, "192.0.2.1", 0)], ttl=ttl)
    r = ddup.run("-n")
    if ok:
        assert r.rc == 0, r
        return
    assert r.rc == 2, r
    line = open(ddup.config).read().splitlines().index(f"ttl = {ttl}") + 1
    assert f"ddup.ini:{line}: " in r.err and "30..2147483647" in r.err, r
    assert digitalocean.requests == []


@pytest.mark.parametrize("line,words", [
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("baseUrl = https://u:p@api.example", ["baseUrl", "user name"]),
    ("zone = a/b", ["zone"]),
    ("timeout = soon", ["timeout"]),
    ("apiToken =", ["apiToken"]),
])
def test_bad_values_are_config_errors(ddup, digitalocean, http_server, line, words):
    assert_config_error(ddup, digitalocean, section(digitalocean), line, words, http_server())


def test_no_token_anywhere(ddup, digitalocean, http_server):
    do = digitalocean
    a, b = http_server(), http_server()
    env = {"DDUP_TEST_DO_TOKEN": do.token}
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, section(do, token="!env DDUP_TEST_DO_TOKEN"), eps, top=top), flip=b, env=env)
    do.fail(401, method="POST")
    r = ddup.run("-v", env=env)
    assert r.rc == 1 and "401" in r.err, r
    outs += [r.out + r.err, ddup.run("--status", "--json", env=env).out]
    assert all(q.header("Authorization") == "Bearer " + do.token for q in do.requests)
    assert_nowhere(ddup, outs, [do.token])


# ------------------------------------------------------------ CNAME tiers

LB = "lb.example.net"


def cname_config(ddup, fake, lb, b1, b2):
    """Tier 0 a CNAME to LB, tier 10 an A and an AAAA."""
    ddup.write(f"""interval = 30s
{section(fake)}
[domain {NAME}]
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
    through, (A, AAAA, CNAME) counts after each write."""
    seen = [(h["A"], h["AAAA"], h["CNAME"]) for h in fake.history]
    for a, aaaa, cname in seen:
        assert not (cname and (a or aaaa)), seen
    return seen


def test_cname_tier_and_back(ddup, digitalocean, http_server):
    do = digitalocean
    do.add("A", "app", "192.0.2.8", ttl=60)
    do.add("A", "app", "192.0.2.9", ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, do, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("CNAME", "app") == [(LB, 60)]
    assert do.get("A", "app") == [] and do.get("AAAA", "app") == []
    # No update changes a type: the addresses go first, empty between.
    assert never_both(do) == [(1, 0, 0), (0, 0, 0), (0, 0, 1)]
    post = [q.json() for q in do.writes() if q.method == "POST"]
    assert post == [{"type": "CNAME", "name": "app", "data": LB + ".", "ttl": 60}]
    assert ddup.status()["domains"][0]["published"] == [LB]

    do.reset_log()
    quiet_ok(ddup.run())
    assert do.writes() == []

    # Back to addresses: the CNAME is deleted before they are created.
    do.history.clear()
    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert do.get("CNAME", "app") == []
    assert do.get("A", "app") == [("192.0.2.2", 60)]
    assert do.get("AAAA", "app") == [("2001:db8::2", 60)]
    assert never_both(do) == [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
    do.reset_log()
    quiet_ok(ddup.run())
    assert do.writes() == []

    do.history.clear()
    lb.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert never_both(do) == [(0, 1, 0), (0, 0, 0), (0, 0, 1)]
    assert do.get("CNAME", "app") == [(LB, 60)]


@pytest.mark.parametrize("data", [LB, LB + ".", "LB.Example.NET."])
def test_cname_read_back_on_a_first_run(ddup, digitalocean, http_server, data):
    """A CNAME already there, in either form the list may give, is found
    the same: nothing is written."""
    do = digitalocean
    do.add("CNAME", "app", data, ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, do, lb, b1, b2)
    quiet_ok(ddup.run())
    assert do.writes() == []


def test_cname_retargeted_in_place(ddup, digitalocean, http_server):
    do = digitalocean
    rid = do.add("CNAME", "app", "old.example.net", ttl=300)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, do, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    w = do.writes()
    assert [(q.method, q.path) for q in w] == [("PATCH", f"/v2/domains/{do.zone}/records/{rid}")]
    assert w[0].json() == {"type": "CNAME", "data": LB + ".", "ttl": 60}
    assert do.get("CNAME", "app") == [(LB, 60)]


def test_cname_answer_that_is_no_host_is_refused(ddup, digitalocean, http_server):
    do = digitalocean
    do.add("CNAME", "app", "a b", ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    cname_config(ddup, do, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 1, r
    assert "is not a host name" in r.err, r
    assert do.writes() == []
