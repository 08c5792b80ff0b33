"""The ovh provider through the built ddup-check, against the OVH API
fake (ovhfix.py), whose clock runs 1234 s off the machine's: signatures,
the server's time, the diff, the zone refresh, the error classes, and no
secret anywhere ddup writes.  Every test but those that need the fake
itself (ovh_direct) runs through Prism, which checks each request and
answer against OVH's own OpenAPI document (ovh/README.md)."""

import os

import pytest

from prismfix import prism_fixture

from providertest import (ZONE, assert_config_error, assert_nowhere, assert_outside_zone,
                          configure, outputs_of_every_kind, quiet_ok)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ovh",
                      "ovh-domain-zone-openapi.json")
_ovh_prism_session, ovh_prism = prism_fixture("ovh_direct", SCHEMA, "ovh_prism", "OVH")


@pytest.fixture
def ovh_fake(ovh_prism):
    """The fake behind Prism: the client's base URL is Prism's."""
    fake = ovh_prism.fake
    fake.prefix, fake.public = "", ovh_prism.url
    fake.prism = ovh_prism
    return fake


def ovh_section(fake, secret=None, ck=None, endpoint=None):
    return f"""
[provider dns]
type = ovh
endpoint = {endpoint or fake.base}
applicationKey = {fake.app_key}
applicationSecret = {secret or fake.app_secret}
consumerKey = {ck or fake.consumer_key}
zone = {fake.zone}
timeout = 5s
"""


def test_first_run_reads_then_writes_then_nothing(ddup, ovh_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, ovh_section(ovh_fake), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("app", "A") == [(60, "192.0.2.1")]
    assert ovh_fake.serving("app", "AAAA") == [(60, "2001:db8::1")]
    # The clock once, a list per type to read, a list per type to diff,
    # two creates, one refresh.
    assert ovh_fake.count("GET", "/auth/time") == 1
    assert [q.method for q in ovh_fake.writes()] == ["POST", "POST", "POST"]
    assert ovh_fake.refreshes == 1
    lists = [q for q in ovh_fake.requests if q.path.endswith("/record") and q.method == "GET"]
    assert {(q.query["fieldType"][0], q.query["subDomain"][0]) for q in lists} == \
        {("A", "app"), ("AAAA", "app")}
    # Nothing changed: no call at all.
    ovh_fake.reset_log()
    quiet_ok(ddup.run())
    assert ovh_fake.requests == []
    # The IPv6 endpoint fails: its record is deleted, A left alone.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("app", "AAAA") == []
    assert ovh_fake.serving("app", "A") == [(60, "192.0.2.1")]
    assert [q.method for q in ovh_fake.writes()] == ["DELETE", "POST"]
    assert ovh_fake.refreshes == 2


def test_first_run_finds_the_right_set(ddup, ovh_fake, http_server):
    ovh_fake.add("app", "A", "192.0.2.1", ttl=60)
    ovh_fake.add("app", "A", "192.0.2.2", ttl=60)
    ovh_fake.add("other", "A", "198.51.100.1", ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.writes() == []
    assert ovh_fake.refreshes == 0


def test_diff_keeps_what_is_right(ddup, ovh_fake, http_server):
    keep = ovh_fake.add("app", "A", "192.0.2.1", ttl=60)
    fix_ttl = ovh_fake.add("app", "A", "192.0.2.2", ttl=3600)
    gone = ovh_fake.add("app", "A", "203.0.113.9", ttl=60)
    dup = ovh_fake.add("app", "A", "192.0.2.1", ttl=60)
    other = ovh_fake.add("other", "A", "203.0.113.9", ttl=60)
    srv = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", srv, "192.0.2.1", 0), ("b", srv, "192.0.2.2", 0),
                                             ("c", srv, "192.0.2.3", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("app", "A") == [(60, "192.0.2.1"), (60, "192.0.2.2"), (60, "192.0.2.3")]
    assert keep in ovh_fake.records and fix_ttl in ovh_fake.records and other in ovh_fake.records
    assert gone not in ovh_fake.records and dup not in ovh_fake.records
    w = ovh_fake.writes()
    # Creates and corrections before deletes, one refresh at the end.
    assert [q.method for q in w] == ["PUT", "POST", "DELETE", "DELETE", "POST"], w
    assert w[0].json() == {"ttl": 60}
    assert w[1].json() == {"fieldType": "A", "subDomain": "app", "target": "192.0.2.3", "ttl": 60}
    assert w[-1].path.endswith("/refresh")


def test_server_time_is_used(ddup, ovh_fake, http_server):
    a = http_server()
    ovh_fake.skew = -86400 * 3
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    ts = [int(q.header("X-Ovh-Timestamp")) for q in ovh_fake.requests if q.header("X-Ovh-Timestamp")]
    assert ts and all(abs(t - ovh_fake.now()) < 30 for t in ts)


def test_apex(ddup, ovh_fake, http_server):
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)], name=ZONE)
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("", "A") == [(60, "192.0.2.1")]


@pytest.mark.parametrize("what,words,cls", [
    ("secret", ["400", "INVALID_SIGNATURE"], "authentication failed"),
    ("ck", ["403", "INVALID_CREDENTIAL"], "authentication failed"),
    ("rules", ["403", "NOT_GRANTED_CALL"], "authentication failed"),
    ("zone", ["404", "This service does not exist"], "not found"),
])
def test_error_classes(ddup, ovh_fake, http_server, what, words, cls):
    a = http_server()
    wrong = "wrong" + "0" * 27
    text = ovh_section(ovh_fake, secret=wrong if what == "secret" else None,
                       ck=wrong if what == "ck" else None)
    if what == "rules":
        # A consumer key that may read but not write.
        ovh_fake.rules = [r for r in ovh_fake.rules if r[0] == "GET"]
    if what == "zone":
        ovh_fake.zone = "other.test"
    configure(ddup, text, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    text_status = ddup.run("--status")
    assert cls in text_status.out
    for s in (ovh_fake.app_secret, ovh_fake.consumer_key, wrong):
        assert s not in r.err + r.out + st["lastError"] + text_status.out
    assert ovh_fake.serving("app", "A") == []


@pytest.mark.parametrize("status,cls,words", [
    (429, "rate limited", ["429", "retry after 600s"]),
    (503, "temporary failure", ["503"]),
])
def test_server_refusals(ddup, ovh_fake, http_server, status, cls, words):
    a, b = http_server(), http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    # The second create fails: the first is refreshed all the same.
    ovh_fake.fail(status, method="POST", path="/record", after=1,
                  retry_after=600 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert ovh_fake.refreshes == 1 and len(ovh_fake.serving("app", "A")) == 1
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("app", "A") == [(60, "192.0.2.1"), (60, "192.0.2.2")]


def test_rate_limit_waited_out_within_timeout(ddup, ovh_fake, http_server):
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    ovh_fake.fail(429, method="POST", path="/record", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.count(method="POST", path="/record") == 2
    assert ovh_fake.serving("app", "A") == [(60, "192.0.2.1")]


def test_unreachable(ddup, ovh_direct, http_server):
    ovh_fake = ovh_direct      # the fake stopped: no Prism between
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    ovh_fake.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err and "/auth/time" in r.err, r


@pytest.mark.parametrize("path,body,words", [
    ("/auth/time", '"soon"', ["not a time"]),
    ("/record", '{"ids": []}', ["not an array"]),
    ("/record", '[1, "2"]', ["not a non-negative integer"]),
])
def test_bad_answers_write_nothing(ddup, ovh_direct, http_server, path, body, words):
    ovh_fake = ovh_direct      # answers that break the document on purpose: no Prism between
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    ovh_fake.fail(200, method="GET", path=path, body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer", "rejected as invalid"]:
        assert w in r.err, (w, r)
    assert ovh_fake.writes() == []


def test_bad_record_answer_writes_nothing(ddup, ovh_fake, http_server):
    rid = ovh_fake.add("app", "A", "192.0.2.9", ttl=60)
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    ovh_fake.fail(200, method="GET", path=f"/record/{rid}",
                  body={"id": 1, "fieldType": "A", "subDomain": "app", "target": "1.2.3", "ttl": 0})
    r = ddup.run()
    assert r.rc == 1, r
    assert "is not an IPv4 address" in r.err and "unexpected answer" in r.err, r
    assert ovh_fake.writes() == []


def test_records_of_other_names_in_a_list_are_left_alone(ddup, ovh_fake, http_server):
    # A list whose filter did not hold: the other name's record is not ours.
    other = ovh_fake.add("www", "A", "192.0.2.9", ttl=60)
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    orig = ovh_fake._list
    ovh_fake._list = lambda req: (200, {}, sorted(ovh_fake.records))
    r = ddup.run()
    assert r.rc == 0, r
    assert other in ovh_fake.records
    assert ovh_fake.get("app", "A") == [(60, "192.0.2.1")]
    assert [q.method for q in ovh_fake.writes()] == ["POST", "POST"]
    ovh_fake._list = orig


@pytest.mark.parametrize("line,words", [
    ("endpoint = mars", ["endpoint"]),
    ("endpoint = https://u:p@eu.api.ovh.com/1.0", ["endpoint"]),
    ("zone = a/b", ["zone"]),
    ("timeout = soon", ["timeout"]),
])
def test_bad_values_are_config_errors(ddup, ovh_fake, http_server, line, words):
    assert_config_error(ddup, ovh_fake, ovh_section(ovh_fake), line, words, http_server())


def test_endpoint_and_base_url_together(ddup, ovh_fake, http_server):
    a = http_server()
    configure(ddup, ovh_section(ovh_fake) + f"baseUrl = {ovh_fake.base}\n",
              [("a", a, "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 2 and "not both" in r.err, r


def test_no_secret_anywhere(ddup, ovh_fake, http_server):
    a, b = http_server(), http_server()
    env = {"DDUP_OVH_AS": ovh_fake.app_secret, "DDUP_OVH_CK": ovh_fake.consumer_key}
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, ovh_section(ovh_fake, secret="!env DDUP_OVH_AS", ck="!env DDUP_OVH_CK"), eps,
        top=top), flip=b, env=env)
    assert ovh_fake.refreshes >= 2
    r = ddup.run("-v", env={**env, "DDUP_OVH_AS": "wrong-secret-wrong-secret"})
    assert r.rc == 1 and "INVALID_SIGNATURE" in r.err, r
    outs.append(r.out + r.err)
    outs.append(ddup.run("--status", "--json").out)
    assert_nowhere(ddup, outs, [ovh_fake.app_secret, ovh_fake.consumer_key,
                                "wrong-secret-wrong-secret"])


def test_domain_outside_zone_is_a_config_error(ddup, ovh_fake, http_server):
    assert_outside_zone(ddup, ovh_fake, ovh_section(ovh_fake), http_server())


def test_failed_refresh_fails_the_update(ddup, ovh_fake, http_server):
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)])
    ovh_fake.fail(503, method="POST", path="/refresh")
    r = ddup.run()
    assert r.rc == 1, r
    assert "/refresh" in r.err and "temporary failure" in r.err, r
    assert ovh_fake.get("app", "A") == [(60, "192.0.2.1")]
    assert ovh_fake.serving("app", "A") == []
    assert ddup.status()["domains"][0]["published"] == []


def cname_config(ddup, fake, a, b, c, top=""):
    text = f"interval = 30s\n{top}\n" + ovh_section(fake)
    text += "\n[domain app.example.test]\nprovider = dns\nttl = 60\nattempts = 1\n"
    if a is not None:
        text += f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.1\npriority = 0\n"
    if b is not None:
        text += f"\n[endpoint b]\nurl = {b.url}\nip = 2001:db8::1\npriority = 0\n"
    text += f"\n[endpoint c]\nurl = {c.url}\ncname = Backup.Example.NET.\npriority = 1\n"
    ddup.write(text)


def assert_served_one_kind(fake, sub="app"):
    """Each refresh served the name with addresses or a CNAME: never both, never neither."""
    for snap in fake.served_history:
        t = fake.types_of(snap, sub)
        assert t, fake.served_history
        assert "CNAME" not in t or sum(t.values()) == 1, fake.served_history


def test_cname_endpoint_both_ways(ddup, ovh_fake, http_server):
    ovh = ovh_fake
    ovh.add("www", "TXT", "hello", ttl=60)
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, ovh, a, b, c)
    assert ddup.run().rc == 0
    assert ovh.serving("app", "A") == [(60, "192.0.2.1")]
    assert ovh.serving("app", "AAAA") == [(60, "2001:db8::1")]
    # Both addresses down: the CNAME tier.  The old records go first,
    # the CNAME after, one refresh: the name servers go from one to the
    # other in one step.
    a.set(status=503)
    b.set(status=503)
    ovh.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh.serving("app", "CNAME") == [(60, "backup.example.net.")]
    assert ovh.serving("app", "A") == [] and ovh.serving("app", "AAAA") == []
    w = ovh.writes()
    assert [q.method for q in w] == ["DELETE", "DELETE", "POST", "POST"], w
    assert w[2].json() == {"fieldType": "CNAME", "subDomain": "app",
                           "target": "backup.example.net.", "ttl": 60}
    assert w[3].path.endswith("/refresh") and ovh.refreshes == 2
    assert_served_one_kind(ovh)
    # Unchanged: no call at all.
    ovh.reset_log()
    quiet_ok(ddup.run())
    assert ovh.requests == []
    # And back to the addresses: the CNAME goes first.
    a.set(status=200)
    b.set(status=200)
    ovh.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh.serving("app", "A") == [(60, "192.0.2.1")]
    assert ovh.serving("app", "AAAA") == [(60, "2001:db8::1")]
    assert ovh.serving("app", "CNAME") == []
    assert [q.method for q in ovh.writes()] == ["DELETE", "POST", "POST", "POST"]
    assert ovh.refreshes == 3
    assert_served_one_kind(ovh)
    assert ovh.serving("www", "TXT") == [(60, "hello")]


@pytest.mark.parametrize("target", ["backup.example.net.", "BACKUP.example.NET."])
def test_cname_already_right_is_no_write(ddup, ovh_fake, http_server, target):
    ovh_fake.add("app", "CNAME", target, ttl=60)
    cname_config(ddup, ovh_fake, None, None, http_server())
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.writes() == [] and ovh_fake.refreshes == 0


def test_cname_relative_target_is_read_in_the_zone(ddup, ovh_fake, http_server):
    # "backup" without a final dot is backup.example.test, not the
    # wanted backup.example.net: replaced.
    ovh_fake.add("app", "CNAME", "backup", ttl=60)
    cname_config(ddup, ovh_fake, None, None, http_server())
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("app", "CNAME") == [(60, "backup.example.net.")]
    assert [q.method for q in ovh_fake.writes()] == ["DELETE", "POST", "POST"]


@pytest.mark.parametrize("method,path,after", [
    ("DELETE", "/record/", 1),      # the second address
    ("POST", "/record", 0),         # the CNAME
])
def test_cname_move_cut_short_is_not_refreshed(ddup, ovh_fake, http_server, method, path, after):
    ovh = ovh_fake
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, ovh, a, b, c)
    assert ddup.run().rc == 0
    assert ovh.refreshes == 1
    a.set(status=503)
    b.set(status=503)
    ovh.fail(503, method=method, path=path, after=after)
    r = ddup.run()
    assert r.rc == 1, r
    assert "temporary failure" in r.err, r
    # The name servers still serve the addresses: no refresh.
    assert ovh.refreshes == 1
    assert ovh.serving("app", "A") == [(60, "192.0.2.1")]
    assert ovh.serving("app", "AAAA") == [(60, "2001:db8::1")]
    assert ovh.serving("app", "CNAME") == []
    # The next run finishes the move.
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh.serving("app", "CNAME") == [(60, "backup.example.net.")]
    assert ovh.serving("app", "A") == [] and ovh.serving("app", "AAAA") == []
    assert ovh.refreshes == 2
    assert_served_one_kind(ovh)


def test_apex_record_with_a_null_sub_domain(ddup, ovh_fake, http_server):
    # OVH's document lets a record's subDomain be null: the apex.
    rid = ovh_fake.add("", "A", "192.0.2.9", ttl=60)
    a = http_server()
    configure(ddup, ovh_section(ovh_fake), [("a", a, "192.0.2.1", 0)], name=ZONE)
    ovh_fake.fail(200, times=2, method="GET", path=f"/record/{rid}",
                  body={"id": rid, "zone": ovh_fake.zone, "subDomain": None, "fieldType": "A",
                        "target": "192.0.2.9", "ttl": 60})
    r = ddup.run()
    assert r.rc == 0, r
    assert ovh_fake.serving("", "A") == [(60, "192.0.2.1")]
    assert rid not in ovh_fake.records
