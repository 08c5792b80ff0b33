"""The azure provider through the built ddup-check, against the Azure
DNS fake (azurefix.py): token, read, PUT with conditions, DELETE, the
error classes, and no secret anywhere ddup writes."""

import os

import pytest

from providertest import (ZONE, assert_config_error, assert_nowhere, assert_outside_zone,
                          configure, outputs_of_every_kind, quiet_ok, state_error)


def azure_section(fake, secret=None, extra=""):
    return f"""
[provider dns]
type = azure
subscriptionId = {fake.subscription}
resourceGroupName = {fake.group}
zoneName = {fake.zone}
tenantId = {fake.tenant}
clientId = {fake.client_id}
clientSecret = {secret or fake.client_secret}
baseUrl = {fake.url}
authorityUrl = {fake.url}
timeout = 5s
{extra}"""


def test_first_run_reads_then_writes_then_nothing(ddup, azure_fake, http_server):
    a, b = http_server(), http_server()
    configure(ddup, azure_section(azure_fake), [("v4", a, "192.0.2.1", 0),
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


def test_first_run_finds_the_right_set(ddup, azure_fake, http_server):
    azure_fake.set_records("A", "app", ["192.0.2.2", "192.0.2.1"], ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0),
                                                 ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.count("GET") == 1
    assert azure_fake.writes() == []


def test_first_run_replaces_with_if_match(ddup, azure_fake, http_server):
    azure_fake.set_records("A", "app", ["203.0.113.9"], ttl=300, metadata={"owner": "x"})
    etag = azure_fake.records[("A", "app")]["etag"]
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])
    put = azure_fake.writes()[0]
    assert put.header("If-Match") == etag and put.header("If-None-Match") is None
    assert put.json() == {"properties": {"TTL": 60, "ARecords": [{"ipv4Address": "192.0.2.1"}]}}
    # The AAAA type is not managed: never asked for, never touched.
    assert not any("/AAAA/" in q.path for q in azure_fake.requests)


def test_changed_meanwhile_fails_then_heals(ddup, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
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


def test_apex_is_at_sign(ddup, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)], name=ZONE)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.get("A", "@") == (60, ["192.0.2.1"])


@pytest.mark.parametrize("what,words,cls", [
    ("secret", ["401", "invalid_client", "AADSTS7000215", "clientSecret"], "authentication failed"),
    ("tenant", ["400", "invalid_request", "AADSTS90002"], "authentication failed"),
    ("reader", ["403", "AuthorizationFailed", "DNS Zone Contributor"], "authentication failed"),
    ("group", ["404", "ResourceGroupNotFound"], "not found"),
    ("zone", ["404", "ParentResourceNotFound"], "not found"),
])
def test_error_classes(ddup, azure_fake, http_server, what, words, cls):
    a = http_server()
    wrong = "cs~" + "w" * 30
    text = azure_section(azure_fake, secret=wrong if what == "secret" else None)
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
def test_server_refusals_on_write(ddup, azure_fake, http_server, status, cls, words):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
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


def test_token_refused_by_a_throttled_login(ddup, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(429, path="/oauth2/", retry_after=600)
    r = ddup.run()
    assert r.rc == 1, r
    assert "rate limited" in r.err and "Azure login" in r.err, r
    assert azure_fake.count(path="/subscriptions/") == 0


def test_rate_limit_waited_out_within_timeout(ddup, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(429, method="PUT", retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert azure_fake.count(method="PUT") == 2
    assert azure_fake.get("A", "app") == (60, ["192.0.2.1"])


def test_unreachable(ddup, azure_fake, http_server):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
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
def test_bad_token_answer(ddup, azure_fake, http_server, body, words):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(200, path="/oauth2/", body=body)
    r = ddup.run()
    assert r.rc == 1, r
    for w in words + ["rejected as invalid"]:
        assert w in r.err, (w, r)


@pytest.mark.parametrize("body,words", [
    ('{"etag": "x", "properties": {"TTL": "60"}}', ["TTL"]),
    ('{"etag": "x", "properties": {"TTL": 60, "ARecords": [{"ipv4Address": "2001:db8::1"}]}}',
     ["not {\"ipv4Address\""]),
    ('{"etag": "x\\r\\nEvil: 1", "properties": {"TTL": 60}}', ["etag"]),
])
def test_bad_record_set_answer_writes_nothing(ddup, azure_fake, http_server, body, words):
    a = http_server()
    configure(ddup, azure_section(azure_fake), [("a", a, "192.0.2.1", 0)])
    azure_fake.fail(200, method="GET", path="/A/app", body=body)
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


def test_no_secret_anywhere(ddup, azure_fake, http_server):
    a, b = http_server(), http_server()
    path = os.path.join(str(ddup.dir), "secret.txt")
    with open(path, "w") as f:
        f.write(azure_fake.client_secret + "\n")
    os.chmod(path, 0o600)
    eps = [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)]
    outs = outputs_of_every_kind(ddup, lambda top: configure(
        ddup, azure_section(azure_fake, secret=f"!file {path}"), eps, top=top), flip=b)
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


def test_refused_login_is_asked_once_per_run(ddup, azure_fake, http_server):
    a = http_server()
    text = "interval = 30s\n" + azure_section(azure_fake, secret="cs~wrong")
    for name in ("app.example.test", "www.example.test", "api.example.test"):
        text += f"\n[domain {name}]\nprovider = dns\nttl = 60\n\n[endpoint a]\nurl = {a.url}\n" \
                "ip = 192.0.2.1\n"
    ddup.write(text)
    r = ddup.run()
    assert r.rc == 1, r
    assert r.err.count("invalid_client") == 3, r
    assert azure_fake.token_calls() == 1
