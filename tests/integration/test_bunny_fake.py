"""The bunny.net fake refuses what bunny.net's DNS API refuses (its API
reference, bunnyfix.py): asked directly over HTTP, without ddup-check,
so a fake that accepts a malformed request cannot hide a provider's
bug.  A refused request leaves the records as they were."""

import json
import urllib.error
import urllib.request

import pytest


def call(fake, method, path, body=None, key=True, media="application/json"):
    """(status, decoded JSON answer or None)."""
    data = None if body is None else body if isinstance(body, bytes) else \
        json.dumps(body).encode()
    req = urllib.request.Request(fake.url + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", media)
    if key:
        req.add_header("AccessKey", fake.apikey if key is True else key)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    return status, json.loads(raw) if raw else None


def test_accepts_what_the_provider_sends(bunny):
    bn = bunny
    z = f"/dnszone/{bn.zone_id}"
    st, doc = call(bn, "GET", "/dnszone?search=example.test&page=1&perPage=1000")
    assert st == 200 and [i["Id"] for i in doc["Items"]] == [bn.zone_id], doc
    assert doc["HasMoreItems"] is False
    st, doc = call(bn, "PUT", z + "/records", {"Type": 0, "Name": "app",
                                                "Value": "192.0.2.1", "Ttl": 60})
    assert st == 201 and doc["Value"] == "192.0.2.1", doc
    rid = doc["Id"]
    st, doc = call(bn, "GET", z)
    assert st == 200 and doc["Domain"] == "example.test"
    assert [(r["Id"], r["Type"], r["Name"], r["Ttl"]) for r in doc["Records"]] == [
        (rid, 0, "app", 60)]
    assert call(bn, "POST", f"{z}/records/{rid}", {"Type": 0, "Name": "app",
                                                    "Value": "192.0.2.1", "Ttl": 900}) == \
        (204, None)
    assert bn.get("A", "app") == [("192.0.2.1", 900)]
    assert call(bn, "DELETE", f"{z}/records/{rid}") == (204, None)
    assert bn.records == {}


def test_search_is_paged(bunny):
    bn = bunny
    bn.others = [f"z{i}.test" for i in range(12)]
    seen = []
    for page in (1, 2, 3):
        st, doc = call(bn, "GET", f"/dnszone?search=test&page={page}&perPage=5")
        assert st == 200
        seen += [i["Domain"] for i in doc["Items"]]
        assert doc["HasMoreItems"] == (page < 3), doc
    assert len(seen) == 13 and "example.test" in seen


Z = "/dnszone/48213"
REC = Z + "/records"


@pytest.mark.parametrize("method,path,body,status,words", [
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Ttl": 60}, 401, "missing"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Ttl": 60}, 401, "wrong"),
    ("GET", "/dnszone/77", None, 404, "could not be found"),
    ("PUT", "/dnszone/77/records", {"Type": 0, "Name": "app", "Value": "192.0.2.9"}, 404,
     "could not be found"),
    ("DELETE", REC + "/1", None, 404, "record could not be found"),
    ("POST", REC + "/x", {"Type": 0}, 404, "record could not be found"),
    ("PUT", REC, b"{not json", 400, "not valid JSON"),
    ("PUT", REC, [], 400, "not valid JSON"),
    ("PUT", REC, {"Type": 99, "Name": "app", "Value": "192.0.2.9"}, 400, "type"),
    ("PUT", REC, {"Type": "A", "Name": "app", "Value": "192.0.2.9"}, 400, "type"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Ttl": 14}, 400, "TTL"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Ttl": 2 ** 31}, 400,
     "TTL"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Ttl": "60"}, 400, "TTL"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "2001:db8::1"}, 400, "IP"),
    ("PUT", REC, {"Type": 1, "Name": "app", "Value": "192.0.2.9"}, 400, "IP"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "app.example.net"}, 400, "IP"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": ""}, 400, "required"),
    ("PUT", REC, {"Type": 0, "Name": "app.example.test", "Value": "192.0.2.9"}, 400,
     "relative"),
    ("PUT", REC, {"Type": 2, "Name": "app", "Value": "b.example.net"}, 400, "coexist"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9", "Proxied": True}, 400,
     "Unknown field"),
    ("PUT", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9"}, 415, "media type"),
    ("PATCH", REC, {"Type": 0, "Name": "app", "Value": "192.0.2.9"}, 405, "support"),
    ("GET", "/dnszone?page=0", None, 400, "perPage"),
    ("GET", "/dnszone?perPage=5000", None, 400, "perPage"),
])
def test_refuses_what_bunny_refuses(bunny, method, path, body, status, words):
    bn = bunny
    bn.add("A", "app", "192.0.2.1")
    before = {k: dict(v) for k, v in bn.records.items()}
    key = None if words == "missing" else "0" * 36 if words == "wrong" else True
    media = "text/plain" if words == "media type" else "application/json"
    st, doc = call(bn, method, path, body, key=key, media=media)
    assert st == status, doc
    if status == 401:
        assert "denied" in doc["Message"]
    else:
        assert set(doc) == {"ErrorKey", "Field", "Message"}, doc
        assert words.lower() in doc["Message"].lower(), doc
    assert bn.records == before
