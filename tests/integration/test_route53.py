"""The route53 provider through the built ddup-check, against the Route 53
fake (route53fix.py), which checks every request's SigV4 signature with
botocore: list, one change batch with UPSERT and DELETE, paging, the error
classes, and no secret anywhere ddup writes."""

import pytest

from providertest import (NAME, assert_config_error, assert_nowhere, configure,
                          outputs_of_every_kind, quiet_ok, state_error)

FQDN = NAME + "."


def r53_section(fake, secret=None, token=None, extra=""):
    text = f"""
[provider dns]
type = route53
accessKeyId = {fake.access_key}
secretAccessKey = {secret or fake.secret_key}
hostedZoneId = {fake.zone_id}
baseUrl = {fake.url}
timeout = 5s
"""
    if token is not None:
        text += f"sessionToken = {token}\n"
    return text + extra


def posts(fake):
    return fake.count("POST")


def test_first_run_reads_then_writes_then_nothing(ddup, route53_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, r53_section(route53_fake), [("v4", a, "192.0.2.1", 0),
                                                ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"])
    assert route53_fake.get(NAME, "AAAA") == (60, ["2001:db8::1"])
    # A list to read, a list to see the sets exactly, one batch of both.
    assert route53_fake.count("GET") == 2 and posts(route53_fake) == 1
    assert route53_fake.changes == [[("UPSERT", FQDN, "A"), ("UPSERT", FQDN, "AAAA")]]
    assert route53_fake.bad_signatures == 0
    route53_fake.reset_log()
    quiet_ok(ddup.run())
    assert route53_fake.requests == []


def test_first_run_finds_the_right_sets(ddup, route53_fake, http_server):
    a = http_server()
    route53_fake.set(NAME, "A", ["192.0.2.1"], ttl=60)
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.count("GET") == 1 and posts(route53_fake) == 0


def test_emptied_type_is_deleted_with_its_exact_set_in_the_same_batch(ddup, route53_fake,
                                                                        http_server):
    a, b = http_server(), http_server(status=503)
    route53_fake.set(NAME, "A", ["192.0.2.9"], ttl=300)
    # Written as another tool wrote them: the DELETE must name them so.
    route53_fake.set(NAME, "AAAA", ["2001:db8::9", "2001:DB8:0::a"], ttl=123)
    route53_fake.set(NAME, "TXT", ['"keep me"'], ttl=300)
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0),
                                                ("b", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    # The DELETE first, as for every batch.
    assert route53_fake.changes == [[("DELETE", FQDN, "AAAA"), ("UPSERT", FQDN, "A")]]
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"])
    assert route53_fake.get(NAME, "AAAA") is None
    assert route53_fake.records[(FQDN, "TXT", "")]["values"] == ['"keep me"']
    # Back: one UPSERT of AAAA alone.
    b.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.changes[-1] == [("UPSERT", FQDN, "AAAA")]
    assert route53_fake.get(NAME, "AAAA") == (60, ["2001:db8::1"])


def test_a_failed_batch_changes_nothing(ddup, route53_fake, http_server):
    a, b = http_server(), http_server(status=503)
    route53_fake.set(NAME, "AAAA", ["2001:db8::9"], ttl=300)
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0),
                                                ("b", b, "2001:db8::1", 0)])
    orig, lists = route53_fake._list, []

    def stale(req):
        # Another tool changes the set between the list before the change
        # and the change: the DELETE names a TTL that is no longer the
        # set's, the whole batch is refused, the UPSERT of A with it.
        st, h, body = orig(req)
        lists.append(req)
        if len(lists) == 2:
            route53_fake.records[(FQDN, "AAAA", "")]["ttl"] = 301
        return st, h, body
    route53_fake._list = stale
    r = ddup.run()
    route53_fake._list = orig
    assert r.rc == 1, r
    assert "InvalidChangeBatch" in r.err and "do not match" in r.err, r
    assert "rejected as invalid" in r.err, r
    assert route53_fake.get(NAME, "A") is None
    assert route53_fake.get(NAME, "AAAA") == (301, ["2001:db8::9"])
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"]) and \
        route53_fake.get(NAME, "AAAA") is None


def test_sets_of_one_name_over_several_pages(ddup, route53_fake, http_server):
    a, b = http_server(), http_server()
    route53_fake.page_size = 1
    for i in range(5):
        route53_fake.set(f"a{i}.example.test", "A", [f"192.0.2.{50 + i}"])
    route53_fake.set(NAME, "A", ["192.0.2.1"], ttl=60)
    route53_fake.set(NAME, "AAAA", ["2001:db8::9"], ttl=60)
    route53_fake.set("zz.app.example.test", "A", ["192.0.2.99"])
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0),
                                                ("b", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    lists = [q for q in route53_fake.requests if q.method == "GET"]
    # Read: A, then AAAA on the next page, then the page that leaves the name.
    assert [q.query["type"] for q in lists[:2]] == [["A"], ["AAAA"]], lists
    assert all(q.query["name"] == [FQDN] for q in lists)
    assert route53_fake.changes == [[("UPSERT", FQDN, "AAAA")]]
    assert route53_fake.get(NAME, "AAAA") == (60, ["2001:db8::1"])
    assert route53_fake.get("zz.app.example.test", "A") == (300, ["192.0.2.99"])


def test_session_token_is_sent_and_signed(ddup, route53_fake, http_server):
    a = http_server()
    route53_fake.token = "FwoGZXIvYXdzE" + "x" * 40
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1 and "InvalidClientTokenId" in r.err, r
    assert "authentication failed" in r.err, r
    configure(ddup, r53_section(route53_fake, token=route53_fake.token),
              [("a", a, "192.0.2.1", 0)])
    route53_fake.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"])
    assert route53_fake.requests and all(
        "x-amz-security-token" in q.header("Authorization") for q in route53_fake.requests)


def test_region_is_signed(ddup, route53_fake, http_server):
    a = http_server()
    configure(ddup, r53_section(route53_fake, extra="region = eu-west-1\n"),
              [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1 and "eu-west-1" in r.err and "authentication failed" in r.err, r
    route53_fake.region = "eu-west-1"
    r = ddup.run()
    assert r.rc == 0, r


@pytest.mark.parametrize("what,words,cls", [
    ("secret", ["SignatureDoesNotMatch", "403", "IAM policy"],
     "authentication failed"),
    ("zone", ["NoSuchHostedZone", "404", "hostedZoneId"], "not found"),
])
def test_error_classes(ddup, route53_fake, http_server, what, words, cls):
    a = http_server()
    wrong = "wrongwrongwrongwrongwrongwrong0123456789"
    if what == "secret":
        section = r53_section(route53_fake, secret=wrong)
    else:
        section = r53_section(route53_fake).replace(route53_fake.zone_id, "ZNOSUCHZONE")
    configure(ddup, section, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in state_error(ddup)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"]
    text_status = ddup.run("--status")
    assert cls in text_status.out, text_status
    for s in (route53_fake.secret_key, wrong):
        assert s not in r.err + r.out + st["lastError"] + text_status.out
    assert posts(route53_fake) == 0


@pytest.mark.parametrize("code,cls", [
    ("Throttling", "rate limited"),
    ("PriorRequestNotComplete", "rate limited"),
])
def test_throttled(ddup, route53_fake, http_server, code, cls):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    route53_fake.throttle(code=code, method="POST")
    r = ddup.run()
    assert r.rc == 1, r
    assert code in r.err and cls in r.err, r
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert route53_fake.get(NAME, "A") is None
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"])


@pytest.mark.parametrize("status,cls", [(500, "temporary failure"), (503, "temporary failure")])
def test_server_errors(ddup, route53_fake, http_server, status, cls):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    route53_fake.fail(status, method="GET")
    r = ddup.run()
    assert r.rc == 1, r
    assert str(status) in r.err and cls in r.err, r
    assert posts(route53_fake) == 0


def test_rate_limit_with_retry_after_waited_out(ddup, route53_fake, http_server):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    route53_fake.fail(429, method="POST", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert posts(route53_fake) == 2 and route53_fake.bad_signatures == 0
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.1"])


@pytest.mark.parametrize("kind", ["alias", "weighted"])
def test_alias_or_routing_policy_is_left_alone(ddup, route53_fake, http_server, kind):
    a = http_server()
    if kind == "alias":
        route53_fake.set(NAME, "A", [], alias="lb-1.elb.amazonaws.com.")
    else:
        route53_fake.set(NAME, "A", ["192.0.2.7"], set_id="blue")
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "only simple record sets" in r.err, r
    assert posts(route53_fake) == 0


@pytest.mark.parametrize("body,words", [
    (b"<html>502</html>", ["unexpected answer", "ListResourceRecordSetsResponse"]),
    (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>'
     b'<ListResourceRecordSetsResponse>&a;</ListResourceRecordSetsResponse>',
     ["document type declaration"]),
    (b'<?xml version="1.0"?><ListResourceRecordSetsResponse><ResourceRecordSets>'
     b'<ResourceRecordSet><Name>app.example.test.</Name><Type>A</Type><TTL>60</TTL>'
     b'<ResourceRecords><ResourceRecord><Value>2001:db8::1</Value></ResourceRecord>'
     b'</ResourceRecords></ResourceRecordSet></ResourceRecordSets>'
     b'<IsTruncated>false</IsTruncated></ListResourceRecordSetsResponse>',
     ["not an IPv4 address"]),
    (b'<?xml version="1.0"?><ListResourceRecordSetsResponse><ResourceRecordSets/>'
     b'</ListResourceRecordSetsResponse>', ["IsTruncated"]),
])
def test_bad_answers_write_nothing(ddup, route53_fake, http_server, body, words):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    route53_fake.fail(200, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words:
        assert w in r.err, (w, r)
    assert posts(route53_fake) == 0


def test_an_answer_in_another_encoding_is_one_printable_line(ddup, route53_fake, http_server):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)])
    body = (b'<?xml version="1.0" encoding="Shift_JIS"?><ErrorResponse><Error><Code>X</Code>'
            b'<Message>\xf0\x00\xf0\xf0\x1b[31m</Message></Error></ErrorResponse>')
    route53_fake.fail(400, method="GET", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    # libxml2 says nothing of its own on stderr: one line, made printable.
    assert r.err.count("\n") == 1 and "conversion failed" not in r.err and "\x1b" not in r.err, r
    assert "400" in r.err and "rejected as invalid" in r.err, r


@pytest.mark.parametrize("line,words", [
    ("accessKeyId = AKIA:x", ["accessKeyId"]),
    ("hostedZoneId = Z1/../x", ["hostedZoneId"]),
    ("region = us east", ["region"]),
    ("baseUrl = https://AKIA:secret@route53.amazonaws.com", ["baseUrl"]),
    ("timeout = soon", ["timeout"]),
])
def test_bad_values_are_config_errors(ddup, route53_fake, http_server, line, words):
    assert_config_error(ddup, route53_fake, r53_section(route53_fake), line, words,
                        http_server())


def test_zone_id_with_its_prefix(ddup, route53_fake, http_server):
    a = http_server()
    section = r53_section(route53_fake).replace(f"hostedZoneId = {route53_fake.zone_id}",
                                                f"hostedZoneId = /hostedzone/"
                                                f"{route53_fake.zone_id}")
    configure(ddup, section, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r


def test_ttl_outside_the_api_is_a_config_error_naming_the_line(ddup, route53_fake,
                                                                http_server):
    a = http_server()
    configure(ddup, r53_section(route53_fake), [("a", a, "192.0.2.1", 0)], ttl=2147483648)
    r = ddup.run("-n")
    assert r.rc == 2, r
    line = next(i for i, ln in enumerate(open(ddup.config), 1) if ln.startswith("ttl ="))
    # Route 53 takes 0..2147483647: the ttl key's own range (from 1) is the bound.
    assert f"ddup.ini:{line}: 'ttl'" in r.err and "2147483648" in r.err, r
    assert route53_fake.requests == []


def test_no_secret_anywhere(ddup, route53_fake, http_server):
    a, b = http_server(), http_server()
    route53_fake.token = "FwoGZXIvYXdzEsessiontoken" + "y" * 30
    env = {"DDUP_R53_SECRET": route53_fake.secret_key, "DDUP_R53_TOKEN": route53_fake.token}
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, r53_section(route53_fake, secret="!env DDUP_R53_SECRET",
                          token="!env DDUP_R53_TOKEN"), eps, top=top), flip=b, env=env)
    assert posts(route53_fake) >= 2
    r = ddup.run("-v", env={**env, "DDUP_R53_SECRET": "wrong-secret-wrong-secret"})
    assert r.rc == 1 and "SignatureDoesNotMatch" in r.err, r
    outs.append(r.out + r.err)
    outs.append(ddup.run("--status", "--json").out)
    assert_nowhere(ddup, outs, [route53_fake.secret_key, route53_fake.token,
                                "wrong-secret-wrong-secret"])


# ------------------------------------------------------------------ CNAME

LB = "lb.example.net"


def write_cname(ddup, fake, lb, b1, b2):
    """A load balancer's name in tier 0, addresses behind it."""
    ddup.write(f"""interval = 30s
{r53_section(fake)}
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


def assert_never_both_nor_neither(fake):
    for types in fake.types_seen(NAME):
        has_cname, has_addr = "CNAME" in types, bool({"A", "AAAA"} & set(types))
        assert has_cname != has_addr, fake.types_seen(NAME)


def test_cname_tier_and_back_deletes_first_in_the_one_batch(ddup, route53_fake, http_server):
    lb, b1, b2 = http_server(status=503), http_server(), http_server()
    write_cname(ddup, route53_fake, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.answer(NAME, "A") == [("A", "192.0.2.2")]
    assert route53_fake.answer(NAME, "AAAA") == [("AAAA", "2001:db8::2")]

    lb.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    # One batch: both address sets deleted, as listed, before the CNAME.
    assert route53_fake.changes[-1] == [("DELETE", FQDN, "A"), ("DELETE", FQDN, "AAAA"),
                                        ("UPSERT", FQDN, "CNAME")]
    assert route53_fake.get(NAME, "CNAME") == (60, [LB + "."])
    assert route53_fake.answer(NAME, "A") == [("CNAME", LB + ".")]
    assert route53_fake.answer(NAME, "AAAA") == [("CNAME", LB + ".")]
    assert route53_fake.get(NAME, "A") is None and route53_fake.get(NAME, "AAAA") is None
    st = ddup.status()["domains"][0]
    assert st["published"] == [LB] and st["tier"] == 0, st

    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.changes[-1] == [("DELETE", FQDN, "CNAME"), ("UPSERT", FQDN, "A"),
                                        ("UPSERT", FQDN, "AAAA")]
    assert route53_fake.answer(NAME, "CNAME") == []
    assert route53_fake.answer(NAME, "A") == [("A", "192.0.2.2")]
    assert route53_fake.answer(NAME, "AAAA") == [("AAAA", "2001:db8::2")]
    assert len(route53_fake.changes) == 3 and route53_fake.bad_signatures == 0
    assert_never_both_nor_neither(route53_fake)


def test_cname_change_only(ddup, route53_fake, http_server):
    lb, b1, b2 = http_server(), http_server(), http_server()
    write_cname(ddup, route53_fake, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.changes == [[("UPSERT", FQDN, "CNAME")]]
    route53_fake.reset_log()
    quiet_ok(ddup.run())
    assert posts(route53_fake) == 0 and len(route53_fake.changes) == 1


def test_cname_read_back_on_a_first_run(ddup, route53_fake, http_server):
    """Written by another tool, in capitals and with the trailing dot
    Route 53 keeps: read back as the same CNAME, nothing written."""
    route53_fake.set(NAME, "CNAME", ["LB.Example.NET."], ttl=60)
    lb, b1, b2 = http_server(), http_server(), http_server()
    write_cname(ddup, route53_fake, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert posts(route53_fake) == 0 and route53_fake.changes == []
    assert ddup.status()["domains"][0]["published"] == [LB]
    # Moved back to addresses: the DELETE names the CNAME as listed.
    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert route53_fake.changes[-1][0] == ("DELETE", FQDN, "CNAME")
    assert route53_fake.answer(NAME, "A") == [("A", "192.0.2.2")]
    assert_never_both_nor_neither(route53_fake)


def test_cname_beside_other_records_is_refused_whole(ddup, route53_fake, http_server):
    """Route 53 refuses a batch that would leave a CNAME beside another
    record of the name (here a TXT ddup does not manage): nothing
    changes, and the error says why."""
    route53_fake.set(NAME, "A", ["192.0.2.9"], ttl=60)
    route53_fake.set(NAME, "TXT", ['"keep me"'], ttl=300)
    lb, b1, b2 = http_server(), http_server(), http_server()
    write_cname(ddup, route53_fake, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 1, r
    assert "InvalidChangeBatch" in r.err and "conflicts with other records" in r.err, r
    assert route53_fake.changes == []
    assert route53_fake.get(NAME, "A") == (60, ["192.0.2.9"])
    assert route53_fake.get(NAME, "CNAME") is None


def test_cname_listed_over_pages(ddup, route53_fake, http_server):
    """One set a page: the listing from (name, A) finds the CNAME (it
    sorts after AAAA) and stops at the next name."""
    route53_fake.page_size = 1
    route53_fake.set("a0.example.test", "A", ["192.0.2.50"])
    route53_fake.set(NAME, "CNAME", [LB + "."], ttl=60)
    route53_fake.set("zz.app.example.test", "A", ["192.0.2.99"])
    lb, b1, b2 = http_server(), http_server(), http_server()
    write_cname(ddup, route53_fake, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert posts(route53_fake) == 0
    lists = [q for q in route53_fake.requests if q.method == "GET"]
    assert [q.query["type"] for q in lists] == [["A"]], lists
