"""The Hetzner Cloud DNS and DigitalOcean fakes refuse what the real APIs
refuse (their references, hetznerfix.py and digitaloceanfix.py): asked
directly over HTTP, without ddup-check, so a fake that accepts a
malformed request cannot hide a provider's bug.  A refused request leaves
the records as they were."""

import json
import urllib.error
import urllib.request

import pytest


def call(fake, method, path, body=None, auth=None, ctype="application/json"):
    """(status, decoded JSON answer or None)."""
    data = None if body is None else (body if isinstance(body, bytes) else
                                      json.dumps(body).encode())
    req = urllib.request.Request(fake.url + path, data=data, method=method)
    if auth is not None:
        req.add_header("Authorization", auth)
    if data is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    return status, (json.loads(raw) if raw else None)


HZ = "/v1/zones/example.test/rrsets"


def test_hetzner_fake_accepts_what_the_provider_sends(hetzner):
    tok = "Bearer " + hetzner.token
    st, doc = call(hetzner, "POST", HZ, {"name": "app", "type": "A", "ttl": 60,
                                         "records": [{"value": "192.0.2.1"}]}, tok)
    assert st == 201 and doc["action"]["status"] == "success", doc
    st, doc = call(hetzner, "POST", HZ + "/app/A/actions/set_records",
                   {"records": [{"value": "192.0.2.1"}, {"value": "192.0.2.2"}]}, tok)
    assert st == 201, doc
    assert call(hetzner, "POST", HZ + "/app/A/actions/change_ttl", {"ttl": 300}, tok)[0] == 201
    st, doc = call(hetzner, "GET", HZ + "?name=app&type=A&type=AAAA", auth=tok)
    assert st == 200 and [r["ttl"] for r in doc["rrsets"]] == [300], doc
    assert hetzner.get("A", "app") == (300, ["192.0.2.1", "192.0.2.2"])
    assert call(hetzner, "DELETE", HZ + "/app/A", auth=tok)[0] == 201
    assert hetzner.get("A", "app") is None


def test_hetzner_fake_cname_alone_at_its_name(hetzner):
    tok = "Bearer " + hetzner.token
    st, doc = call(hetzner, "POST", HZ, {"name": "www", "type": "CNAME", "ttl": 60,
                                         "records": [{"value": "lb.example.net."}]}, tok)
    assert st == 201, doc
    assert hetzner.get("CNAME", "www") == (60, ["lb.example.net."])
    for rtype, value in (("A", "192.0.2.1"), ("AAAA", "2001:db8::1"), ("TXT", '"x"')):
        st, doc = call(hetzner, "POST", HZ, {"name": "www", "type": rtype,
                                             "records": [{"value": value}]}, tok)
        assert st == 400 and doc["error"]["code"] == "invalid_input", (rtype, st, doc)
    st, doc = call(hetzner, "POST", HZ + "/www/CNAME/actions/set_records",
                   {"records": [{"value": "lb2.example.net."}]}, tok)
    assert st == 201, doc
    st, doc = call(hetzner, "GET", HZ + "?name=www&type=CNAME", auth=tok)
    assert st == 200 and doc["rrsets"][0]["records"][0]["value"] == "lb2.example.net.", doc
    assert hetzner.types_of("www") == ["CNAME"]
    assert hetzner.states == [("www", ["CNAME"]), ("www", ["CNAME"])]


@pytest.mark.parametrize("method,path,body,auth,ctype,status,code", [
    ("GET", HZ, None, None, None, 401, "unauthorized"),
    ("GET", HZ, None, "Bearer wrong", None, 401, "unauthorized"),
    ("GET", HZ, None, "Token {tok}", None, 401, "unauthorized"),
    ("GET", "/v1/zones/other.test/rrsets", None, "Bearer {tok}", None, 404, "not_found"),
    ("GET", HZ + "?per_page=101", None, "Bearer {tok}", None, 400, "invalid_input"),
    ("GET", HZ + "?type=AXFR", None, "Bearer {tok}", None, 400, "invalid_input"),
    ("GET", HZ + "?name=App", None, "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "A", "ttl": 59, "records": [{"value": "192.0.2.9"}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "A", "records": []}, "Bearer {tok}", None, 400,
     "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "A", "records": [{"value": "2001:db8::1"}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "A", "records": [{"value": "192.0.2.9"},
                                                          {"value": "192.0.2.9"}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www.example.test", "type": "A",
                  "records": [{"value": "192.0.2.9"}]}, "Bearer {tok}", None, 400,
     "invalid_input"),
    ("POST", HZ, {"name": "www.", "type": "A", "records": [{"value": "192.0.2.9"}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "A", "records": [{"value": "192.0.2.9"}],
                  "proxied": True}, "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "app", "type": "A", "records": [{"value": "192.0.2.9"}]},
     "Bearer {tok}", None, 409, "uniqueness_error"),
    ("POST", HZ, b"{not json", "Bearer {tok}", None, 400, "json_error"),
    ("POST", HZ, {"name": "www", "type": "A", "records": [{"value": "192.0.2.9"}]},
     "Bearer {tok}", "text/plain", 400, "json_error"),
    ("POST", HZ + "/app/A/actions/set_records", {"records": []}, "Bearer {tok}", None, 400,
     "invalid_input"),
    ("POST", HZ + "/app/A/actions/set_records", {"records": [{"value": "192.0.2.9"}],
                                                 "ttl": 60}, "Bearer {tok}", None, 400,
     "invalid_input"),
    ("POST", HZ + "/new/A/actions/set_records", {"records": [{"value": "192.0.2.9"}]},
     "Bearer {tok}", None, 404, "not_found"),
    ("POST", HZ + "/app/A/actions/change_ttl", {"ttl": 2147483648}, "Bearer {tok}", None,
     400, "invalid_input"),
    ("DELETE", HZ + "/new/A", None, "Bearer {tok}", None, 404, "not_found"),
    ("GET", "/v1/zones/actions/999999", None, "Bearer {tok}", None, 404, "not_found"),
    # A CNAME beside the A set, at the apex, of two records, or not a host.
    ("POST", HZ, {"name": "app", "type": "CNAME", "records": [{"value": "lb.example.net."}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "@", "type": "CNAME", "records": [{"value": "lb.example.net."}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "CNAME", "records": [{"value": "a.example.net."},
                                                              {"value": "b.example.net."}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "CNAME", "records": [{"value": "a b.example.net."}]},
     "Bearer {tok}", None, 400, "invalid_input"),
    ("POST", HZ, {"name": "www", "type": "CNAME", "records": [{"value": "192.0.2.9/24"}]},
     "Bearer {tok}", None, 400, "invalid_input"),
])
def test_hetzner_fake_refuses(hetzner, method, path, body, auth, ctype, status, code):
    hetzner.set_records("A", "app", ["192.0.2.1"], ttl=60)
    st, doc = call(hetzner, method, path, body,
                   auth.format(tok=hetzner.token) if auth else None,
                   ctype or "application/json")
    assert st == status and doc["error"]["code"] == code, (st, doc)
    assert hetzner.get("A", "app") == (60, ["192.0.2.1"])
    assert [r for r in hetzner.records] == [("app", "A")]


def test_hetzner_fake_readonly_token_and_secondary_zone(hetzner):
    tok = "Bearer " + hetzner.token
    body = {"name": "www", "type": "A", "records": [{"value": "192.0.2.9"}]}
    hetzner.readonly = True
    assert call(hetzner, "GET", HZ, auth=tok)[0] == 200
    st, doc = call(hetzner, "POST", HZ, body, tok)
    assert st == 403 and doc["error"]["code"] == "token_readonly", doc
    hetzner.readonly = False
    hetzner.mode = "secondary"
    st, doc = call(hetzner, "POST", HZ, body, tok)
    assert st == 422 and doc["error"]["code"] == "incorrect_zone_mode", doc
    assert hetzner.records == {}


DO = "/v2/domains/example.test/records"


def test_digitalocean_fake_accepts_what_the_provider_sends(digitalocean):
    do = digitalocean
    tok = "Bearer " + do.token
    st, doc = call(do, "POST", DO, {"type": "A", "name": "app", "data": "192.0.2.1", "ttl": 60},
                   tok)
    assert st == 201, doc
    rid = doc["domain_record"]["id"]
    st, doc = call(do, "PATCH", f"{DO}/{rid}", {"type": "A", "ttl": 120}, tok)
    assert st == 200 and doc["domain_record"]["ttl"] == 120, doc
    st, doc = call(do, "PUT", f"{DO}/{rid}", {"type": "A", "ttl": 300}, tok)
    assert st == 200 and doc["domain_record"]["ttl"] == 300, doc
    st, doc = call(do, "GET", DO + "?name=app.example.test&type=A&per_page=200&page=1",
                   auth=tok)
    assert st == 200 and [r["data"] for r in doc["domain_records"]] == ["192.0.2.1"], doc
    assert "links" not in doc and doc["meta"]["total"] == 1
    assert call(do, "DELETE", f"{DO}/{rid}", auth=tok)[0] == 204
    assert do.records == {}


# The last column: Prism refuses the request itself, as breaking
# DigitalOcean's document, before the fake sees it; the fake is then asked
# directly, so that it refuses what the real API refuses whoever sends it.
@pytest.mark.parametrize("method,path,body,auth,ctype,status,eid,schema", [
    ("GET", DO, None, None, None, 401, "Unauthorized", True),
    ("GET", DO, None, "Bearer wrong", None, 401, "Unauthorized", False),
    ("GET", "/v2/domains/other.test/records", None, "Bearer {tok}", None, 404, "not_found",
     False),
    ("GET", DO + "?per_page=201", None, "Bearer {tok}", None, 400, "bad_request", True),
    ("GET", DO + "?page=0", None, "Bearer {tok}", None, 400, "bad_request", True),
    ("GET", DO + "?type=A&type=AAAA", None, "Bearer {tok}", None, 400, "bad_request", True),
    ("POST", DO, {"type": "A", "name": "www", "data": "192.0.2.9", "ttl": 29}, "Bearer {tok}",
     None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "A", "name": "www", "data": "2001:db8::1", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "A", "name": "www.example.test", "data": "192.0.2.9", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "A", "name": "www", "ttl": 60}, "Bearer {tok}", None, 422,
     "unprocessable_entity", False),
    ("POST", DO, {"type": "A", "name": "www", "data": "192.0.2.9", "ttl": 60, "priority": 10},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "A", "name": "www", "data": "192.0.2.9", "proxied": False},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, b"{not json", "Bearer {tok}", None, 400, "bad_request", True),
    ("POST", DO, {"type": "A", "name": "www", "data": "192.0.2.9"}, "Bearer {tok}",
     "application/x-www-form-urlencoded", 400, "bad_request", True),
    ("PATCH", DO + "/{rid}", {"type": "AAAA", "ttl": 60}, "Bearer {tok}", None, 422,
     "unprocessable_entity", False),
    ("PATCH", DO + "/{rid}", {"type": "A", "ttl": 10}, "Bearer {tok}", None, 422,
     "unprocessable_entity", False),
    # The document requires the type in an update's body.
    ("PATCH", DO + "/{rid}", {"ttl": 120}, "Bearer {tok}", None, 422,
     "unprocessable_entity", True),
    ("PUT", DO + "/{rid}", {"ttl": 120}, "Bearer {tok}", None, 422,
     "unprocessable_entity", True),
    ("PATCH", DO + "/1", {"type": "A", "ttl": 60}, "Bearer {tok}", None, 404, "not_found",
     False),
    ("DELETE", DO + "/1", None, "Bearer {tok}", None, 404, "not_found", False),
    # A CNAME beside the A record, at the apex, without its final dot, not
    # a host; an A record edited into a CNAME.
    ("POST", DO, {"type": "CNAME", "name": "app", "data": "lb.example.net.", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "CNAME", "name": "@", "data": "lb.example.net.", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "CNAME", "name": "www", "data": "lb.example.net", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("POST", DO, {"type": "CNAME", "name": "www", "data": "a b.example.net.", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
    ("PATCH", DO + "/{rid}", {"type": "CNAME", "data": "lb.example.net.", "ttl": 60},
     "Bearer {tok}", None, 422, "unprocessable_entity", False),
])
def test_digitalocean_fake_refuses(digitalocean, method, path, body, auth, ctype, status, eid,
                                   schema):
    do = digitalocean
    rid = do.add("A", "app", "192.0.2.1", ttl=60)
    args = (method, path.format(rid=rid), body, auth.format(tok=do.token) if auth else None,
            ctype or "application/json")
    if schema:
        # Prism logs no violation for a body that is not JSON at all, but
        # answers it itself all the same.
        st, _ = call(do, *args)
        assert 400 <= st < 500 and (do.take_violations() or body == b"{not json"), st
        assert do.requests == []
    st, doc = call(do.fake if schema else do, *args)
    assert st == status and doc["id"] == eid and doc["message"], (st, doc)
    assert do.get("A", "app") == [("192.0.2.1", 60)]
    assert list(do.records) == [rid]


def test_digitalocean_fake_cname_alone_at_its_name(digitalocean):
    do = digitalocean
    tok = "Bearer " + do.token
    st, doc = call(do, "POST", DO, {"type": "CNAME", "name": "app", "data": "lb.example.net.",
                                    "ttl": 60}, tok)
    assert st == 201, doc
    rid = doc["domain_record"]["id"]
    for rtype, data in (("A", "192.0.2.1"), ("AAAA", "2001:db8::1"),
                        ("CNAME", "lb2.example.net.")):
        st, doc = call(do, "POST", DO, {"type": rtype, "name": "app", "data": data,
                                        "ttl": 60}, tok)
        assert st == 422 and doc["id"] == "unprocessable_entity", (rtype, st, doc)
    st, doc = call(do, "PATCH", f"{DO}/{rid}", {"type": "CNAME", "data": "lb2.example.net.",
                                                 "ttl": 300}, tok)
    assert st == 200, doc
    assert call(do, "PATCH", f"{DO}/{rid}", {"type": "CNAME", "ttl": 120}, tok)[0] == 200
    st, doc = call(do, "GET", DO + "?name=app.example.test&type=CNAME", auth=tok)
    assert st == 200 and [(r["data"], r["ttl"]) for r in doc["domain_records"]] == \
        [("lb2.example.net", 120)], doc
    assert do.history[-1] == {"A": 0, "AAAA": 0, "CNAME": 1}


def test_digitalocean_fake_pages_with_links(digitalocean):
    do = digitalocean
    for i in range(1, 6):
        do.add("A", "app", f"192.0.2.{i}", ttl=60)
    tok = "Bearer " + do.token
    st, doc = call(do, "GET", DO + "?name=app.example.test&per_page=2&page=2", auth=tok)
    assert st == 200 and len(doc["domain_records"]) == 2 and doc["meta"]["total"] == 5
    pages = doc["links"]["pages"]
    assert set(pages) == {"first", "prev", "next", "last"}, pages
    assert pages["next"].endswith("page=3") and pages["last"].endswith("page=3")
    st, doc = call(do, "GET", DO + "?name=app.example.test&per_page=2&page=3", auth=tok)
    assert set(doc["links"]["pages"]) == {"first", "prev"}
    # A name that is not fully qualified in the zone matches nothing.
    st, doc = call(do, "GET", DO + "?name=app", auth=tok)
    assert st == 200 and doc["domain_records"] == []
