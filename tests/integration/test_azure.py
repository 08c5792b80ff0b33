"""The azure provider through the built ddup-check, against the Azure
DNS fake (azurefix.py) behind Prism, which checks each record-set request
and answer against Azure's own Swagger document (azure/dns.json): token,
read, PUT with conditions, DELETE, CNAME tiers, the error classes, and no
secret anywhere ddup writes."""

import http.client
import json
import os
import urllib.parse

import pytest

from providertest import (ZONE, assert_config_error, assert_nowhere, assert_outside_zone,
                          configure, outputs_of_every_kind, quiet_ok, state_error)


def azure_section(az, secret=None, extra=""):
    """az: the `azure` fixture (baseUrl through Prism), or the fake alone."""
    fake = getattr(az, "fake", az)
    return f"""
[provider dns]
type = azure
subscriptionId = {fake.subscription}
resourceGroupName = {fake.group}
zoneName = {fake.zone}
tenantId = {fake.tenant}
clientId = {fake.client_id}
clientSecret = {secret or fake.client_secret}
baseUrl = {az.url}
authorityUrl = {fake.url}
timeout = 5s
{extra}"""


def write_config(ddup, section, eps):
    """eps: (endpoint name, http server, ip or None for the CNAME, priority)."""
    text = "interval = 30s\n" + section
    text += f"\n[domain app.{ZONE}]\nprovider = dns\nttl = 60\nattempts = 1\n"
    for ep, srv, ip, prio in eps:
        value = f"ip = {ip}" if ip else "cname = Backup.Example.NET."
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\n{value}\npriority = {prio}\n"
    ddup.write(text)


def cname_config(ddup, azure, a, b, c):
    """Two addresses at priority 0, a CNAME tier at priority 1."""
    write_config(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0),
                                              ("b", b, "2001:db8::1", 0), ("c", c, None, 1)])


def assert_never_both(fake):
    """No write left the name with a CNAME beside another record set."""
    states = [types for name, types in fake.history if name == "app"]
    assert states, fake.history
    for types in states:
        assert "CNAME" not in types or types == ["CNAME"], fake.history


def arm_path(q):
    """(method, type) of a record-set call."""
    return q.method, q.path.split("?")[0].split("/")[-2]


def test_first_run_reads_then_writes_then_nothing(ddup, azure, azure_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, azure_section(azure), [("v4", a, "192.0.2.1", 0),
                                                 ("v6", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])
    assert azure_fake.get("AAAA", "app") == (60, ["2001:db8::1"])
    # One token, a GET per type, then a PUT per type made only if absent.
    assert azure_fake.token_calls() == 1
    assert azure_fake.count("GET") == 2
    puts = [q for q in azure_fake.requests if q.method == "PUT"]
    assert len(puts) == 2 and all(q.header("If-None-Match") == "*" for q in puts)
    assert all(q.query["api-version"] == ["2018-05-01"] for q in azure_fake.requests
               if "/subscriptions/" in q.path)
    # Nothing changed: no call at all, not even a token.
    azure_fake.reset_log()
    quiet_ok(ddup.run())
    assert azure_fake.requests == []
    # The IPv6 endpoint fails: AAAA is deleted, A left alone.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("AAAA", "app") is None
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])
    assert [q.method for q in azure_fake.writes()] == ["PUT", "DELETE"]


def test_first_run_finds_the_right_set(ddup, azure, azure_fake, http_server):
    azure_fake.set_records("A", "app", ["192.0.2.2", "192.0.2.1"], ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0),
                                                 ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.count("GET") == 1
    assert azure_fake.writes() == []


def test_first_run_replaces_with_if_match(ddup, azure, azure_fake, http_server):
    azure_fake.set_records("A", "app", ["203.0.113.9"], ttl=300, metadata={"owner": "x"})
    etag = azure_fake.records[("A", "app")]["etag"]
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])
    put = azure_fake.writes()[0]
    assert put.header("If-Match") == etag and put.header("If-None-Match") is None
    assert put.json() == {"properties": {"TTL": 60, "ARecords": [{"ipv4Address": "192.0.2.1"}]}}
    # The AAAA type is not managed: never asked for, never touched.
    assert not any("/AAAA/" in q.path for q in azure_fake.requests)


def test_changed_meanwhile_fails_then_heals(ddup, azure, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.set_records("A", "app", ["203.0.113.9"], ttl=60)
    # Someone changes the set between ddup's GET and its PUT.
    orig = azure_fake.route

    def racing(req):
        out = orig(req)
        if req.method == "GET" and "/A/app" in req.path:
            azure_fake.set_records("A", "app", ["203.0.113.10"], ttl=60)
        return out

    azure_fake.route = racing
    r = ddup.run()
    assert r.rc == 1, r
    assert "412" in r.err and "temporary failure" in r.err, r
    assert azure_fake.get("A", "app") == (60, ["203.0.113.10"])
    azure_fake.route = orig
    # The next run reads again (the domain is unsure) and writes.
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])


def test_apex_is_at_sign(ddup, azure, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)], name=ZONE)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "@") == (60, ["192.0.2.1"])
    # "@" as Azure's own clients send it, not escaped.
    paths = [q.path.split("?")[0] for q in azure_fake.requests if "/subscriptions/" in q.path]
    assert paths and all(p.endswith("/A/@") for p in paths), paths


@pytest.mark.parametrize("what,words,cls", [
    ("secret", ["401", "invalid_client", "AADSTS7000215", "clientSecret"], "authentication failed"),
    ("tenant", ["400", "invalid_request", "AADSTS90002"], "authentication failed"),
    ("reader", ["403", "AuthorizationFailed", "DNS Zone Contributor"], "authentication failed"),
    ("group", ["404", "ResourceGroupNotFound"], "not found"),
    ("zone", ["404", "ParentResourceNotFound"], "not found"),
])
def test_error_classes(ddup, azure, azure_fake, http_server, what, words, cls):
    a = http_server()
    wrong = "cs~" + "w" * 30
    text = azure_section(azure, secret=wrong if what == "secret" else None)
    if what == "tenant":
        text = text.replace(f"tenantId = {azure_fake.tenant}", "tenantId = other-tenant")
    if what == "group":
        text = text.replace(f"resourceGroupName = {azure_fake.group}",
                            "resourceGroupName = other-rg")
    if what == "zone":
        azure_fake.zone = "other.test"
    if what == "reader":
        azure_fake.role = "reader"
    configure(ddup, text, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls, "provider dns"]:
        assert w in r.err, (w, r)
    st = ddup.status()["domains"][0]
    assert cls in st["lastError"], st
    assert cls in state_error(ddup)
    text_status = ddup.run("--status")
    assert cls in text_status.out, text_status
    for s in (azure_fake.client_secret, wrong, *azure_fake.issued):
        assert s not in r.err + r.out + st["lastError"] + text_status.out
    assert azure_fake.get("A", "app") is None


@pytest.mark.parametrize("status,cls,words", [
    (429, "rate limited", ["429", "retry after 600s"]),
    (503, "temporary failure", ["503"]),
    (500, "temporary failure", ["500"]),
])
def test_server_refusals_on_write(ddup, azure, azure_fake, http_server, status, cls, words):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(status, method="PUT", retry_after=600 if status == 429 else None)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + [cls]:
        assert w in r.err, (w, r)
    assert cls in ddup.status()["domains"][0]["lastError"]
    assert azure_fake.get("A", "app") is None
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])


def test_token_refused_by_a_throttled_login(ddup, azure, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(429, path="/oauth2/", retry_after=600)
    r = ddup.run()
    assert r.rc == 1, r
    assert "rate limited" in r.err and "Azure login" in r.err, r
    assert azure_fake.count(path="/subscriptions/") == 0


def test_rate_limit_waited_out_within_timeout(ddup, azure, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(429, method="PUT", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.count(method="PUT") == 2
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])


def test_unreachable(ddup, azure, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.stop()
    r = ddup.run()
    assert r.rc == 1, r
    assert "unreachable" in r.err, r
    assert "unreachable" in ddup.status()["domains"][0]["lastError"]


@pytest.mark.parametrize("body,words", [
    ('{"token_type": "Bearer"}', ["no Bearer access_token"]),
    ('{"token_type": "Bearer", "access_token": "a\\nb"}', ["line break"]),
    ("<html>", ["not JSON"]),
])
def test_bad_token_answer(ddup, azure, azure_fake, http_server, body, words):
    a = http_server()
    configure(ddup, azure_section(azure), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(200, path="/oauth2/", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["rejected as invalid"]:
        assert w in r.err, (w, r)


@pytest.mark.parametrize("body,words,prism", [
    # Outside dns.json (TTL is an integer there): Prism would answer 500
    # in its place, so this one goes to the fake directly.
    ({"etag": "x", "properties": {"TTL": "60"}}, ["TTL"], False),
    # Within the schema, which has no rule on their values.
    ({"etag": "x", "properties": {"TTL": 60, "ARecords": [{"ipv4Address": "2001:db8::1"}]}},
     ["not {\"ipv4Address\""], True),
    ({"etag": "x\r\nEvil: 1", "properties": {"TTL": 60}}, ["etag"], True),
    ({"etag": "x", "properties": {"TTL": 60, "CNAMERecord": {"cname": "a b"}}}, ["host name"],
     True),
])
def test_bad_record_set_answer_writes_nothing(ddup, azure, azure_fake, http_server, body, words,
                                              prism):
    a = http_server()
    eps = [("a", a, "192.0.2.1", 0)]
    if "CNAMERecord" in body["properties"]:
        eps.append(("c", http_server(), None, 1))
    write_config(ddup, azure_section(azure if prism else azure_fake), eps)
    path = "/CNAME/app" if "CNAMERecord" in body["properties"] else "/A/app"
    azure_fake.fail(200, method="GET", path=path, body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["unexpected answer"]:
        assert w in r.err, (w, r)
    assert azure_fake.writes() == []


@pytest.mark.parametrize("line,words", [
    ("subscriptionId = a/b", ["subscriptionId"]),
    ("baseUrl = ftp://x", ["baseUrl"]),
    ("authorityUrl = https://u:p@login.example", ["authorityUrl"]),
    ("timeout = soon", ["timeout"]),
])
def test_bad_values_are_config_errors(ddup, azure_fake, http_server, line, words):
    assert_config_error(ddup, azure_fake, azure_section(azure_fake), line, words, http_server())


def test_no_secret_anywhere(ddup, azure, azure_fake, http_server):
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "secret.txt")
    with open(path, "w") as f:
        f.write(azure_fake.client_secret + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, azure_section(azure, secret=f"!file {path}"), eps, top=top), flip=b)
    azure_fake.revoke_tokens()
    azure_fake.fail(401, method="PUT")
    r = ddup.run("-v")
    assert r.rc == 1 and "401" in r.err, r
    outs.append(r.out + r.err)
    outs.append(ddup.run("--status", "--json").out)
    with open(path, "w") as f:
        f.write("cs~wrong-wrong-wrong-wrong\n")
    r = ddup.run("-v")
    assert r.rc == 1 and "invalid_client" in r.err, r
    outs.append(r.out + r.err)
    assert len(azure_fake.issued) >= 2
    assert_nowhere(ddup, outs, [azure_fake.client_secret, "cs~wrong-wrong-wrong-wrong",
                                *azure_fake.issued])


def test_domain_outside_zone_name_is_a_config_error(ddup, azure_fake, http_server):
    assert_outside_zone(ddup, azure_fake, azure_section(azure_fake), http_server())


def test_refused_login_is_asked_once_per_run(ddup, azure, azure_fake, http_server):
    a = http_server()
    text = "interval = 30s\n" + azure_section(azure, secret="cs~wrong")
    for name in ("app.example.test", "www.example.test", "api.example.test"):
        text += f"\n[domain {name}]\nprovider = dns\nttl = 60\n\n[endpoint a]\nurl = {a.url}\n" \
                "ip = 192.0.2.1\n"
    ddup.write(text)
    r = ddup.run()
    assert r.rc == 1, r
    assert r.err.count("invalid_client") == 3, r
    assert azure_fake.token_calls() == 1


def test_cname_tier_and_back(ddup, azure, azure_fake, http_server):
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, azure, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.types_at("app") == ["A", "AAAA"]
    # Both addresses down: the CNAME tier.  A and AAAA go first, the
    # CNAME is put after (Azure refuses it beside them).
    a.set(status=503)
    b.set(status=503)
    azure_fake.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.types_at("app") == ["CNAME"]
    assert azure_fake.get("CNAME", "app") == (60, "backup.example.net")
    w = azure_fake.writes()
    assert [arm_path(q) for q in w] == [("DELETE", "A"), ("DELETE", "AAAA"), ("PUT", "CNAME")]
    assert w[2].json() == {"properties": {"TTL": 60,
                                          "CNAMERecord": {"cname": "backup.example.net"}}}
    assert_never_both(azure_fake)
    # The CNAME unchanged: nothing at all.
    azure_fake.reset_log()
    quiet_ok(ddup.run())
    assert azure_fake.requests == []
    # And back: the CNAME goes first, then the addresses.
    a.set(status=200)
    b.set(status=200)
    azure_fake.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.types_at("app") == ["A", "AAAA"]
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])
    assert [arm_path(q) for q in azure_fake.writes()] == [
        ("DELETE", "CNAME"), ("PUT", "A"), ("PUT", "AAAA")]
    assert_never_both(azure_fake)


def test_cname_read_back_on_a_first_run_writes_nothing(ddup, azure, azure_fake, http_server):
    """The CNAME already there (another case, a final dot) is the one wanted."""
    azure_fake.set_cname("app", "Backup.Example.NET.", ttl=60)
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, azure, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    assert sorted(arm_path(q)[1] for q in azure_fake.requests if "/subscriptions/" in q.path) \
        == ["A", "AAAA", "CNAME"]
    assert azure_fake.writes() == []


def test_cname_to_addresses_on_a_first_run_is_conditional(ddup, azure, azure_fake,
                                                          http_server):
    azure_fake.set_cname("app", "old.example.net", ttl=60)
    etag = azure_fake.records[("CNAME", "app")]["etag"]
    a, b, c = http_server(), http_server(status=503), http_server()
    cname_config(ddup, azure, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    w = azure_fake.writes()
    # AAAA was read absent and stays so: no call for it.
    assert [arm_path(q) for q in w] == [("DELETE", "CNAME"), ("PUT", "A")]
    assert w[0].header("If-Match") == etag
    assert w[1].header("If-None-Match") == "*"
    assert azure_fake.types_at("app") == ["A"]


def test_cname_retargeted_in_place(ddup, azure, azure_fake, http_server):
    azure_fake.set_cname("app", "old.example.net", ttl=60)
    etag = azure_fake.records[("CNAME", "app")]["etag"]
    a, b, c = http_server(status=503), http_server(status=503), http_server()
    cname_config(ddup, azure, a, b, c)
    r = ddup.run()
    assert r.rc == 0, r
    w = azure_fake.writes()
    assert [arm_path(q) for q in w] == [("PUT", "CNAME")]
    assert w[0].header("If-Match") == etag
    assert azure_fake.get("CNAME", "app") == (60, "backup.example.net")


def test_cname_put_failing_after_the_deletes_fails_then_heals(ddup, azure, azure_fake,
                                                              http_server):
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, azure, a, b, c)
    assert ddup.run().rc == 0
    a.set(status=503)
    b.set(status=503)
    azure_fake.fail(503, method="PUT", path="/CNAME/")
    r = ddup.run()
    assert r.rc == 1, r
    assert "temporary failure" in r.err and "503" in r.err, r
    # The addresses are gone, the CNAME did not come: the name is empty.
    assert azure_fake.types_at("app") == []
    # The next run reads again and puts the CNAME, only if still absent.
    azure_fake.reset_log()
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("CNAME", "app") == (60, "backup.example.net")
    w = azure_fake.writes()
    assert [arm_path(q) for q in w] == [("PUT", "CNAME")]
    assert w[0].header("If-None-Match") == "*"
    assert_never_both(azure_fake)


def test_cname_beside_a_record_set_ddup_does_not_manage(ddup, azure, azure_fake, http_server):
    """Azure's 409: the addresses are deleted, the CNAME refused (the
    update fails and says why)."""
    azure_fake.set_records("TXT", "app", [])
    a, b, c = http_server(), http_server(), http_server()
    cname_config(ddup, azure, a, b, c)
    assert ddup.run().rc == 0
    a.set(status=503)
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 1, r
    for w in ("409", "Conflict", "another record with the same name",
              "a CNAME cannot share its name", "rejected as invalid"):
        assert w in r.err, (w, r)
    assert azure_fake.types_at("app") == ["TXT"]


def arm(azure, method, rtype, name, body=None, headers=None):
    """One record-set call through Prism with a token: (status, document)."""
    fake = azure.fake
    tok = "tok-" + rtype
    fake.tokens.add(tok)
    u = urllib.parse.urlsplit(azure.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    h = {"Authorization": f"Bearer {tok}", "Accept": "application/json", **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body)
        h["Content-Type"] = "application/json"
    c.request(method, f"/subscriptions/{fake.subscription}/resourceGroups/{fake.group}/"
              f"providers/Microsoft.Network/dnsZones/{fake.zone}/{rtype}/{name}"
              "?api-version=2018-05-01", body=data, headers=h)
    r = c.getresponse()
    out = r.read()
    c.close()
    return r.status, json.loads(out) if out else None


def test_fake_keeps_a_cname_alone_at_its_name(azure, azure_fake):
    cname = {"properties": {"TTL": 60, "CNAMERecord": {"cname": "backup.example.net"}}}
    addr = {"properties": {"TTL": 60, "ARecords": [{"ipv4Address": "192.0.2.1"}]}}
    assert arm(azure, "PUT", "A", "app", addr)[0] == 201
    status, doc = arm(azure, "PUT", "CNAME", "app", cname)
    assert (status, doc["code"]) == (409, "Conflict"), doc
    assert arm(azure, "DELETE", "A", "app")[0] == 200
    status, doc = arm(azure, "PUT", "CNAME", "app", cname)
    assert status == 201 and doc["properties"]["CNAMERecord"] == {"cname": "backup.example.net"}
    status, doc = arm(azure, "PUT", "A", "app", addr)
    assert (status, doc["code"]) == (409, "Conflict"), doc
    # One CNAME record set, one record: a PUT replaces it.
    other = {"properties": {"TTL": 60, "CNAMERecord": {"cname": "other.example.net"}}}
    assert arm(azure, "PUT", "CNAME", "app", other)[0] == 200
    assert azure_fake.get("CNAME", "app") == (60, "other.example.net")
    # The apex holds NS and SOA: no CNAME there.
    assert arm(azure, "PUT", "CNAME", "@", cname)[0] == 409
    bad = {"properties": {"TTL": 60, "CNAMERecord": {"cname": "not a name"}}}
    status, doc = arm(azure, "PUT", "CNAME", "www", bad)
    assert (status, doc["code"]) == (400, "BadRequest") and "is invalid" in doc["message"]
    assert azure_fake.types_at("app") == ["CNAME"] and azure_fake.types_at("www") == []


def test_prism_refuses_what_breaks_azures_schema(azure, azure_fake):
    """Prism is in the way: a body outside dns.json never reaches the fake."""
    status, doc = arm(azure, "PUT", "A", "app", {"properties": {"TTL": "60"}})
    assert status == 422, doc
    status, doc = arm(azure, "PUT", "MX2", "app", {"properties": {"TTL": 60}})
    assert status in (404, 422), doc
    assert azure_fake.count("PUT") == 0
    assert len(azure.take_violations()) == 2
