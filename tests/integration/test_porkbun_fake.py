"""The Porkbun fake refuses what Porkbun's API v3 refuses (its
documentation, porkbunfix.py): asked directly over HTTP, without
ddup-check, so a fake that accepts a malformed request cannot hide a
provider's bug.  A refused request leaves the records as they were."""

import json
import urllib.error
import urllib.request

import pytest


def call(fake, path, body, method="POST"):
    """(status, decoded JSON answer)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(fake.url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    return status, json.loads(raw)


def keys(fake, **kw):
    return dict({"apikey": fake.apikey, "secretapikey": fake.secret}, **kw)


def test_accepts_what_the_provider_sends(porkbun):
    pb = porkbun
    st, doc = call(pb, "/dns/create/example.test", keys(pb, name="app", type="A",
                                                         content="192.0.2.1", ttl="600"))
    assert st == 200 and doc["status"] == "SUCCESS", doc
    rid = doc["id"]
    st, doc = call(pb, "/dns/retrieveByNameType/example.test/A/app", keys(pb))
    assert st == 200 and doc["records"] == [
        {"id": str(rid), "name": "app.example.test", "type": "A", "content": "192.0.2.1",
         "ttl": "600", "prio": "0", "notes": ""}], doc
    st, doc = call(pb, f"/dns/edit/example.test/{rid}", keys(pb, name="app", type="CNAME",
                                                             content="b.example.net",
                                                             ttl="900"))
    assert st == 200, doc
    assert pb.get("CNAME", "app") == [("b.example.net", 900)] and pb.get("A", "app") == []
    assert call(pb, f"/dns/delete/example.test/{rid}", keys(pb))[0] == 200
    assert pb.records == {}


CREATE = "/dns/create/example.test"


@pytest.mark.parametrize("path,body,words", [
    (CREATE, {"name": "app", "type": "A", "content": "192.0.2.9"}, "Invalid API key"),
    (CREATE, {"apikey": "{key}", "secretapikey": "sk1_wrong", "name": "app", "type": "A",
              "content": "192.0.2.9"}, "Invalid API key"),
    (CREATE, {"apikey": "pk1_wrong", "secretapikey": "{secret}", "name": "app", "type": "A",
              "content": "192.0.2.9"}, "Invalid API key"),
    (CREATE, b"{not json", "Invalid JSON"),
    (CREATE, [], "Invalid JSON"),
    ("/dns/create/other.test", {"name": "app", "type": "A", "content": "192.0.2.9"},
     "Invalid domain"),
    (CREATE, {"name": "app", "type": "AXFR", "content": "192.0.2.9"}, "Invalid type"),
    (CREATE, {"name": "app", "type": "A", "content": "192.0.2.9", "ttl": "599"},
     "at least 600"),
    (CREATE, {"name": "app", "type": "A", "content": "192.0.2.9", "ttl": "soon"},
     "Invalid TTL"),
    (CREATE, {"name": "app", "type": "A", "content": "2001:db8::1"}, "Invalid IP"),
    (CREATE, {"name": "app", "type": "AAAA", "content": "192.0.2.9"}, "Invalid IP"),
    (CREATE, {"name": "app", "type": "A", "content": "app.example.net"}, "Invalid IP"),
    (CREATE, {"name": "app.example.test", "type": "A", "content": "192.0.2.9"},
     "Invalid name"),
    (CREATE, {"name": "app", "type": "CNAME", "content": "b.example.net"}, "coexist"),
    (CREATE, {"name": "app", "type": "A", "content": "192.0.2.9", "proxied": True},
     "Unknown fields"),
    (CREATE, {"name": "app", "content": "192.0.2.9"}, "required"),
    ("/dns/edit/example.test/1", {"name": "app", "type": "A", "content": "192.0.2.9"},
     "Invalid record ID"),
    ("/dns/delete/example.test/x", {}, "Invalid record ID"),
    ("/dns/retrieveByNameType/example.test/BOGUS/app", {}, "Invalid type"),
    ("/dns/frobnicate/example.test", {}, "Invalid command"),
])
def test_refuses_what_porkbun_refuses(porkbun, path, body, words):
    pb = porkbun
    pb.add("A", "app", "192.0.2.1")
    before = {k: dict(v) for k, v in pb.records.items()}
    if isinstance(body, dict):
        body = {k: v.format(key=pb.apikey, secret=pb.secret) if isinstance(v, str) else v
                for k, v in body.items()}
        if "apikey" not in body and words != "Invalid API key":
            body = keys(pb, **body)
    st, doc = call(pb, path, body)
    assert st == 400, doc
    assert doc["status"] == "ERROR" and words in doc["message"], doc
    assert pb.records == before


def test_domain_without_api_access(porkbun):
    porkbun.api_access = False
    st, doc = call(porkbun, "/dns/retrieveByNameType/example.test/A/app", keys(porkbun))
    assert (st, doc["status"]) == (400, "ERROR") and "API access" in doc["message"], doc


def test_only_post(porkbun):
    st, doc = call(porkbun, "/dns/retrieveByNameType/example.test/A/app", keys(porkbun),
                   method="PUT")
    assert st == 405 and doc["status"] == "ERROR", doc
