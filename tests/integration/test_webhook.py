"""The webhook provider through the built ddup-check, against a fake
external-dns webhook provider (webhookfix.py) behind Prism, which checks
every request and answer against external-dns's OpenAPI document
(webhook/webhook.yaml): negotiation with the media type, the domain
filter refusing a name outside it, the first publication, a failover
(one POST, only when the set changed), nothing to change is no POST, a
CNAME endpoint both ways in one POST each, other names and types never
touched, 5xx retried (the POST after reading again), 4xx not retried,
and hostile servers (huge, garbage, non-printable answers) refused with
a clear error."""

import json

import pytest

from conftest import TIME_SCALE
from providertest import NAME, assert_config_error, configure, quiet_ok, state_error
from webhookfix import MEDIA


def section(url, extra=f"timeout = {5 * TIME_SCALE:g}s\n"):
    return f"""
[provider dns]
type = webhook
url = {url}
{extra}"""


def posts(wh):
    return [q.json() for q in wh.fake.posts()]


def ep(rtype, targets, ttl=60, name=NAME):
    return {"dnsName": name, "recordType": rtype, "recordTTL": ttl, "targets": targets}


def negotiations(fake):
    return [q for q in fake.requests if q.path == "/"]


def test_first_publish_then_nothing(ddup, webhook, http_server):
    wh = webhook.fake
    a, b = http_server(), http_server()
    configure(ddup, section(webhook.url), [("v4", a, "192.0.2.1", 0),
                                           ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert wh.get(NAME, "A") == (["192.0.2.1"], 60)
    assert wh.get(NAME, "AAAA") == (["2001:db8::1"], 60)
    # Negotiated once, the records read for the read and again for the write.
    assert [(q.method, q.path) for q in wh.requests] == [
        ("GET", "/"), ("GET", "/records"), ("GET", "/records"), ("POST", "/records")]
    assert all(q.header("Accept") == MEDIA for q in wh.requests)
    assert wh.posts()[0].header("Content-Type") == MEDIA
    assert posts(webhook) == [{"create": [ep("A", ["192.0.2.1"]),
                                          ep("AAAA", ["2001:db8::1"])]}]
    wh.reset_log()
    quiet_ok(ddup.run())
    # The set published is the one wanted: no call at all.
    assert wh.requests == []
    b.set(status=503)
    assert ddup.run().rc == 0
    assert posts(webhook) == [{"delete": [ep("AAAA", ["2001:db8::1"])]}]
    assert wh.get(NAME, "AAAA") is None


def test_failover_only_when_the_set_changes(ddup, webhook, http_server):
    wh = webhook.fake
    # Listed with labels and an identifier: the update names it as listed
    # and keeps them.
    old = wh.add(NAME, "A", ["203.0.113.9"], ttl=300, labels={"owner": "ddup"},
                 setIdentifier="v1")
    a, b = http_server(), http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 1)])
    assert ddup.run().rc == 0
    new = dict(old, targets=["192.0.2.1"], recordTTL=60)
    assert posts(webhook) == [{"updateOld": [old], "updateNew": [new]}]
    wh.reset_log()
    a.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert posts(webhook) == [{"updateOld": [new],
                               "updateNew": [dict(new, targets=["192.0.2.2"])]}]
    assert wh.get(NAME, "A") == (["192.0.2.2"], 60)
    wh.reset_log()
    # b still up, a still down: the same set, no POST.
    quiet_ok(ddup.run())
    assert wh.posts() == []
    a.set(status=200)
    assert ddup.run().rc == 0
    assert wh.get(NAME, "A") == (["192.0.2.1"], 60)
    assert len(wh.posts()) == 1


def test_cname_both_ways(ddup, webhook, http_server):
    wh = webhook.fake
    wh.add("www.example.test", "TXT", ['"hello"'])
    # Someone's endpoint, already right: deleted as listed, labels too.
    mine = wh.add(NAME, "A", ["192.0.2.1"], ttl=60, labels={"owner": "someone"})
    a, b, c = http_server(), http_server(), http_server()
    text = "interval = 30s\n" + section(webhook.url)
    text += f"\n[domain {NAME}]\nprovider = dns\nttl = 60\nattempts = 1\n"
    text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    text += f"\n[endpoint b]\nurl = {b.url}\nip = 2001:db8::1\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)
    assert ddup.run().rc == 0
    assert posts(webhook) == [{"create": [ep("AAAA", ["2001:db8::1"])]}]
    a.set(status=503)
    b.set(status=503)
    wh.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    # One POST: the addresses deleted, the CNAME created.
    assert posts(webhook) == [{"create": [ep("CNAME", ["backup.example.net"])],
                               "delete": [mine, ep("AAAA", ["2001:db8::1"])]}]
    assert wh.types() == ["CNAME"]
    wh.reset_log()
    quiet_ok(ddup.run())
    assert wh.posts() == []
    a.set(status=200)
    b.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert posts(webhook) == [{"create": [ep("A", ["192.0.2.1"]), ep("AAAA", ["2001:db8::1"])],
                               "delete": [ep("CNAME", ["backup.example.net"])]}]
    assert wh.types() == ["A", "AAAA"]
    assert all("CNAME" not in h or h == ["CNAME"] for h in wh.history), wh.history
    assert wh.get("www.example.test", "TXT") == (['"hello"'], 300)


def test_other_names_and_types_untouched(ddup, webhook, http_server):
    wh = webhook.fake
    wh.add(NAME, "TXT", ['"v=spf1 -all"'])
    wh.add(NAME, "MX", ["10 mail.example.test"])
    wh.add("www.example.test", "A", ["198.51.100.1"])
    wh.add("x.app.example.test", "A", ["198.51.100.2"])
    wh.add(NAME, "AAAA", ["2001:db8::9"])       # not managed: no IPv6 endpoint
    wh.add("APP.example.test.", "A", ["192.0.2.9"])      # the name, as some write it
    others = json.dumps(wh.records[:5], sort_keys=True)
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    old = {"dnsName": "APP.example.test.", "recordType": "A", "targets": ["192.0.2.9"],
           "recordTTL": 300}
    assert posts(webhook) == [{"updateOld": [old],
                               "updateNew": [dict(old, targets=["192.0.2.1"], recordTTL=60)]}]
    assert json.dumps(wh.records[:5], sort_keys=True) == others


def test_apex_and_empty_zone_as_go_writes_it(ddup, webhook_fake, http_server):
    # Go writes an empty list of endpoints as null (not in the schema:
    # no Prism here).
    wh = webhook_fake
    wh.null_when_empty = True
    a = http_server()
    configure(ddup, section(wh.url), [("a", a, "192.0.2.1", 0)], name="example.test")
    r = ddup.run()
    assert r.rc == 0, r
    assert [q.json() for q in wh.posts()] == [
        {"create": [ep("A", ["192.0.2.1"], name="example.test")]}]


@pytest.mark.parametrize("flt,words", [
    ({"include": ["example.org"]}, ["app.example.test is outside the domain filter",
                                    "include: none of its 1 domains"]),
    ({"filters": [".other.test", "test"]}, []),
    ({"include": ["example.test"], "exclude": ["app.example.test"]}, ["(excluded)"]),
    ({"regexInclude": ".*"}, ["regular expression"]),
])
def test_domain_filter_refusing_the_name(ddup, webhook, http_server, flt, words):
    wh = webhook.fake
    wh.filter = flt
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    if not words:
        # "test" takes every name under it.
        assert r.rc == 0, r
        return
    assert r.rc == 1, r
    for w in words + ["webhook at", "provider dns"]:
        assert w in r.err, (w, r)
    assert words[0] in state_error(ddup)
    assert [q.path for q in wh.requests] == ["/"]


def test_5xx_retried_then_succeeding(ddup, webhook, http_server):
    wh = webhook.fake
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    wh.fail(500, path="/", method="GET")
    wh.fail(500, path="/records", method="GET", times=2)
    wh.fail(500, path="/records", method="POST")
    r = ddup.run()
    assert r.rc == 0, r
    assert wh.get(NAME, "A") == (["192.0.2.1"], 60)
    # GET / twice; the read's GET /records three times; the write's
    # read, the POST refused, read again, the POST.
    assert [(q.method, q.path) for q in wh.requests] == (
        [("GET", "/")] * 2 + [("GET", "/records")] * 3 +
        [("GET", "/records"), ("POST", "/records")] * 2)


def test_5xx_given_up_after_three(ddup, webhook, http_server):
    wh = webhook.fake
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    wh.fail(500, path="/records", method="POST", times=3)
    r = ddup.run()
    assert r.rc == 1, r
    assert "temporary failure" in r.err and "500" in r.err, r
    assert len(wh.posts()) == 3
    assert wh.get(NAME, "A") is None
    assert ddup.run().rc == 0
    assert wh.get(NAME, "A") == (["192.0.2.1"], 60)


def test_4xx_not_retried_message_printable(ddup, webhook, http_server):
    wh = webhook.fake
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    wh.fail(400, path="/records", method="POST", body="name\x1b[31m refused\x07 by policy")
    r = ddup.run()
    assert r.rc == 1, r
    for w in ["rejected as invalid", "400", "refused", "by policy", "webhook at"]:
        assert w in r.err, (w, r)
    assert "\x1b" not in r.err and "\x07" not in r.err
    assert "by policy" in state_error(ddup)
    assert len(wh.posts()) == 1
    # Prism: a 400 is not among the document's answers (204, 500).
    bad = webhook.take_violations()
    assert bad and all("204,500" in v for v in bad), bad


def test_415_of_a_server_that_wants_another_media_type(ddup, webhook, http_server):
    # The fake checks the Content-Type: ddup's POST passes (the other
    # tests), a server that wants something else answers 415.
    wh = webhook.fake
    a = http_server()
    configure(ddup, section(webhook.url), [("a", a, "192.0.2.1", 0)])
    wh.fail(415, path="/records", method="POST", body="unsupported media type")
    r = ddup.run()
    assert r.rc == 1 and "415" in r.err and "unsupported media type" in r.err, r
    assert len(wh.posts()) == 1
    assert webhook.take_violations()


HUGE = b"HUGE"


@pytest.mark.parametrize("path,status,body,words", [
    ("/records", 200, HUGE, ["body larger than 33554432 bytes"]),
    ("/records", 200, b'[{"dnsName": "app.example.test", "recordType": "A", "targets": [',
     ["unexpected answer", "not JSON"]),
    ("/records", 200, b'{"dnsName": "app.example.test"}', ["not a list of endpoints"]),
    ("/records", 200, b'[{"dnsName": "app.example.test", "recordType": "A", '
                      b'"targets": ["\\u001b[2J\\u0007"]}]', ["target 0 is not an IPv4 address"]),
    ("/records", 200, b'[{"dnsName": "app.example.test", "recordType": "A", "targets": []},'
                      b'{"dnsName": "app.example.test", "recordType": "A", "targets": []}]',
     ["a second one of the name"]),
    ("/records", 200, b'[{"dnsName": "app.example.test", "recordType": "A", "recordTTL": -1}]',
     ["recordTTL is not in 0..2147483647"]),
    ("/", 200, b"\x00\xff\x1b[2J not json", ["negotiation answered", MEDIA]),
    ("/records", 404, b"\x1b]0;pwned\x07 no such \xff\xfe route", ["404", "no such"]),
], ids=["huge", "truncated", "object", "control", "twice", "ttl", "negotiation", "404"])
def test_hostile_server(ddup, webhook_fake, http_server, path, status, body, words):
    wh = webhook_fake
    if body == HUGE:
        body = b"[" + b" " * (32 * 1024 * 1024) + b"]"
    a = http_server()
    configure(ddup, section(wh.url), [("a", a, "192.0.2.1", 0)])
    if path == "/":
        # The first request: the negotiation, answered without the media type.
        wh.fail(status, body=body)
    else:
        wh.fail(status, path=path, method="GET", body=body, times=5)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words:
        assert w in r.err, (w, r.err[:2000])
    assert len(r.err) < 4000
    assert all(c == "\n" or 32 <= ord(c) < 127 for c in r.err), r.err[:2000]
    assert wh.posts() == []


@pytest.mark.parametrize("line,words", [
    ("url = ftp://x", ["url"]),
    ("url = http://user:pw@127.0.0.1:8888", ["url"]),
    ("timeout = soon", ["timeout"]),
    ("apiToken = x", ["apiToken"]),
])
def test_bad_values_are_config_errors(ddup, webhook_fake, http_server, line, words):
    assert_config_error(ddup, webhook_fake, section(webhook_fake.url), line, words,
                        http_server())


def test_default_url_is_valid(ddup, webhook_fake, http_server):
    configure(ddup, "\n[provider dns]\ntype = webhook\n", [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 0, r


def test_negotiated_filter_that_is_no_filter(ddup, webhook_fake, http_server):
    # The media type is right, the document is not a filter (no Prism:
    # the schema wants an object).
    wh = webhook_fake
    wh.filter = ["example.test"]
    configure(ddup, section(wh.url), [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "unexpected answer: the domain filter is not an object" in r.err, r
    assert [q.path for q in wh.requests] == ["/"]


def test_server_that_never_answers(ddup, webhook_fake, http_server):
    # No Prism: its log of the hang would come after this test is over.
    wh = webhook_fake
    configure(ddup, section(wh.url, extra=f"timeout = {1 * TIME_SCALE:g}s\n"),
              [("a", http_server(), "192.0.2.1", 0)])
    wh.hang(seconds=10 * TIME_SCALE, path="/records")
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err and "no answer within" in r.err, r
    # A timeout is no 5xx: not retried.
    assert wh.count("GET", "/records") == 1
    assert wh.posts() == []
