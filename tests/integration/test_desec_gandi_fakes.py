"""The deSEC and Gandi LiveDNS fakes refuse what the real APIs refuse
(their documentation, desecfix.py and gandifix.py): asked directly over
HTTP, without ddup-check, so a fake that accepts a malformed request
cannot hide a provider's bug."""

import json
import urllib.error
import urllib.request

import pytest

from desecfix import desec_fake  # noqa: F401  (fixture)
from gandifix import gandi_fake  # noqa: F401  (fixture)


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


RRSETS = "/api/v1/domains/example.test/rrsets/"


def test_desec_fake_accepts_what_the_provider_sends(desec_fake):
    tok = "Token " + desec_fake.token
    good = [{"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 3600},
            {"subname": "app", "type": "AAAA", "records": []}]
    assert call(desec_fake, "PATCH", RRSETS, good, tok)[0] == 200
    assert desec_fake.get("app", "A") == (3600, ["192.0.2.1"])
    put = {"subname": "app", "type": "A", "records": ["192.0.2.2"], "ttl": 3600}
    assert call(desec_fake, "PUT", RRSETS + "app/A/", put, tok)[0] == 200
    status, doc = call(desec_fake, "GET", RRSETS + "?subname=app", auth=tok)
    assert status == 200 and [d["records"] for d in doc] == [["192.0.2.2"]]


@pytest.mark.parametrize("method,path,body,auth,status,key", [
    ("GET", RRSETS, None, None, 401, "detail"),
    ("GET", RRSETS, None, "Token wrong", 401, "detail"),
    ("GET", RRSETS, None, "Bearer {tok}", 401, "detail"),
    ("GET", "/api/v1/domains/other.test/rrsets/", None, "Token {tok}", 404, "detail"),
    ("PUT", RRSETS + "app/A", {}, "Token {tok}", 404, "detail"),
    ("PUT", RRSETS + "new/A/", {"subname": "new", "type": "A", "records": ["192.0.2.1"],
                                "ttl": 3600}, "Token {tok}", 404, "detail"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 60}],
     "Token {tok}", 400, "ttl"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": ["192.0.2.1"],
                        "ttl": 86401}], "Token {tok}", 400, "ttl"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": ["2001:db8::1"],
                        "ttl": 3600}], "Token {tok}", 400, "records"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": ["192.0.2.1", "192.0.2.1"],
                        "ttl": 3600}], "Token {tok}", 400, "records"),
    ("PATCH", RRSETS, [{"subname": "@", "type": "A", "records": ["192.0.2.1"], "ttl": 3600}],
     "Token {tok}", 400, "subname"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": []},
                       {"subname": "app", "type": "A", "records": []}],
     "Token {tok}", 400, "non_field_errors"),
    ("PATCH", RRSETS, [{"subname": "app", "type": "A", "records": ["192.0.2.1"]}],
     "Token {tok}", 400, "ttl"),
    ("PATCH", RRSETS, {"subname": "app", "type": "A"}, "Token {tok}", 400,
     "non_field_errors"),
    ("PUT", RRSETS + "old/A/", {"type": "A", "records": ["192.0.2.1"], "ttl": 3600},
     "Token {tok}", 400, "subname"),
])
def test_desec_fake_refuses(desec_fake, method, path, body, auth, status, key):
    desec_fake.set_rrset("old", "A", ["203.0.113.9"])
    before = dict(desec_fake.rrsets)
    got, doc = call(desec_fake, method, path, body,
                    None if auth is None else auth.format(tok=desec_fake.token))
    assert got == status, doc
    first = doc[[bool(x) for x in doc].index(True)] if isinstance(doc, list) else doc
    assert key in first, doc
    assert desec_fake.rrsets == before


def test_desec_fake_refuses_other_media_and_bad_json(desec_fake):
    tok = "Token " + desec_fake.token
    assert call(desec_fake, "PATCH", RRSETS, b"[]", tok, ctype="text/plain")[0] == 415
    assert call(desec_fake, "PATCH", RRSETS, b"[{", tok)[0] == 400


def test_desec_fake_bulk_is_all_or_nothing(desec_fake):
    tok = "Token " + desec_fake.token
    body = [{"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 3600},
            {"subname": "app", "type": "AAAA", "records": ["192.0.2.1"], "ttl": 3600}]
    status, doc = call(desec_fake, "PATCH", RRSETS, body, tok)
    assert status == 400 and doc[0] == {} and "records" in doc[1], doc
    assert desec_fake.get("app", "A") is None


def test_desec_fake_cname_alone_at_its_name(desec_fake):
    tok = "Token " + desec_fake.token
    cname = {"subname": "app", "type": "CNAME", "records": ["backup.example.net."],
             "ttl": 3600}
    a = {"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 3600}
    # A CNAME beside an A, in one request or against the stored A: refused.
    status, doc = call(desec_fake, "PATCH", RRSETS, [a, cname], tok)
    assert status == 400 and "conflicting type" in doc[0]["non_field_errors"][0], doc
    assert desec_fake.rrsets == {}
    assert call(desec_fake, "PATCH", RRSETS, [a], tok)[0] == 200
    status, doc = call(desec_fake, "PATCH", RRSETS, [cname], tok)
    assert status == 400 and "alongside CNAME" in doc[0]["non_field_errors"][0], doc
    assert desec_fake.types_at("app") == ["A"]
    # Emptied in the same request, the A makes room: deletions first.
    desec_fake.history.clear()
    gone = {"subname": "app", "type": "A", "records": []}
    assert call(desec_fake, "PATCH", RRSETS, [cname, gone], tok)[0] == 200
    assert desec_fake.get("app", "CNAME") == (3600, ["backup.example.net."])
    assert desec_fake.history == [("app", ["CNAME"])]
    # An A created beside the CNAME: refused; the CNAME's own PUT is not.
    status, doc = call(desec_fake, "POST", RRSETS, a, tok)
    assert status == 400 and "alongside CNAME" in doc[0]["non_field_errors"][0], doc
    assert call(desec_fake, "PUT", RRSETS + "app/CNAME/", dict(cname), tok)[0] == 200
    assert desec_fake.types_at("app") == ["CNAME"]


@pytest.mark.parametrize("records", [
    ["backup.example.net"],                       # no final dot
    ["backup.example.net.", "other.example.net."],  # a CNAME is one record
    ["192.0.2.1"],
    ["bad name.example.net."],
])
def test_desec_fake_refuses_bad_cname(desec_fake, records):
    tok = "Token " + desec_fake.token
    body = [{"subname": "app", "type": "CNAME", "records": records, "ttl": 3600}]
    status, doc = call(desec_fake, "PATCH", RRSETS, body, tok)
    assert status == 400 and "records" in doc[0], doc
    assert desec_fake.rrsets == {}


def test_desec_fake_write_refused_by_policy(desec_fake):
    desec_fake.write_allowed = False
    tok = "Token " + desec_fake.token
    assert call(desec_fake, "GET", RRSETS, auth=tok)[0] == 200
    body = [{"subname": "app", "type": "A", "records": ["192.0.2.1"], "ttl": 3600}]
    assert call(desec_fake, "PATCH", RRSETS, body, tok)[0] == 403


LIVEDNS = "/v5/livedns/domains/example.test"


def test_gandi_fake_accepts_what_the_provider_sends(gandi_fake):
    tok = "Bearer " + gandi_fake.token
    assert call(gandi_fake, "GET", LIVEDNS + "/records/app", auth=tok)[0] == 404
    assert call(gandi_fake, "GET", LIVEDNS, auth=tok)[0] == 200
    body = {"rrset_values": ["192.0.2.1"], "rrset_ttl": 300}
    assert call(gandi_fake, "PUT", LIVEDNS + "/records/app/A", body, tok) == \
        (201, {"message": "DNS Record Created"})
    status, doc = call(gandi_fake, "GET", LIVEDNS + "/records/app", auth=tok)
    assert status == 200 and doc[0]["rrset_values"] == ["192.0.2.1"], doc
    assert call(gandi_fake, "DELETE", LIVEDNS + "/records/app/A", auth=tok)[0] == 204
    assert call(gandi_fake, "DELETE", LIVEDNS + "/records/app/A", auth=tok)[0] == 404


@pytest.mark.parametrize("method,path,body,auth,status,field", [
    ("GET", LIVEDNS, None, None, 401, None),
    ("GET", LIVEDNS, None, "Apikey {tok}", 401, None),
    ("GET", LIVEDNS, None, "Bearer pat_wrong", 401, None),
    ("GET", "/v5/livedns/domains/other.test", None, "Bearer {tok}", 404, None),
    ("PUT", LIVEDNS + "/records/app/A", {"rrset_values": ["192.0.2.1"], "rrset_ttl": 299},
     "Bearer {tok}", 400, "rrset_ttl"),
    ("PUT", LIVEDNS + "/records/app/A", {"rrset_values": ["192.0.2.1"],
                                          "rrset_ttl": 2592001}, "Bearer {tok}", 400,
     "rrset_ttl"),
    ("PUT", LIVEDNS + "/records/app/A", {"rrset_values": ["2001:db8::1"], "rrset_ttl": 300},
     "Bearer {tok}", 400, "rrset_values"),
    ("PUT", LIVEDNS + "/records/app/A", {"rrset_values": [], "rrset_ttl": 300},
     "Bearer {tok}", 400, "rrset_values"),
    ("PUT", LIVEDNS + "/records/app/A", {"rrset_values": ["192.0.2.1"], "rrset_ttl": 300,
                                          "rrset_name": "app"}, "Bearer {tok}", 400,
     "rrset_name"),
    ("PUT", LIVEDNS + "/records/app.example.test/A", {"rrset_values": ["192.0.2.1"]},
     "Bearer {tok}", 400, "rrset_name"),
    ("PUT", LIVEDNS + "/records/app/a", {"rrset_values": ["192.0.2.1"]}, "Bearer {tok}",
     400, "rrset_type"),
])
def test_gandi_fake_refuses(gandi_fake, method, path, body, auth, status, field):
    gandi_fake.set_records("old", "A", ["203.0.113.9"])
    before = dict(gandi_fake.records)
    got, doc = call(gandi_fake, method, path, body,
                    None if auth is None else auth.format(tok=gandi_fake.token))
    assert got == status and doc["code"] == status and doc["cause"], doc
    if field is not None:
        assert doc["errors"][0]["name"] == field, doc
    assert gandi_fake.records == before


def test_gandi_fake_refuses_other_media_and_writes_without_permission(gandi_fake):
    tok = "Bearer " + gandi_fake.token
    path = LIVEDNS + "/records/app/A"
    assert call(gandi_fake, "PUT", path, b"{}", tok, ctype="text/plain")[0] == 415
    gandi_fake.can_write = False
    body = {"rrset_values": ["192.0.2.1"], "rrset_ttl": 300}
    assert call(gandi_fake, "PUT", path, body, tok)[0] == 403
    assert call(gandi_fake, "GET", LIVEDNS, auth=tok)[0] == 200


def test_gandi_fake_cname_alone_at_its_name(gandi_fake):
    tok = "Bearer " + gandi_fake.token
    cname = {"rrset_values": ["backup.example.net."], "rrset_ttl": 300}
    a = {"rrset_values": ["192.0.2.1"], "rrset_ttl": 300}
    assert call(gandi_fake, "PUT", LIVEDNS + "/records/app/A", a, tok)[0] == 201
    # A CNAME beside the A, type by type: refused, nothing changed.
    status, doc = call(gandi_fake, "PUT", LIVEDNS + "/records/app/CNAME", cname, tok)
    assert status == 400 and "coexist" in doc["errors"][0]["description"], doc
    assert gandi_fake.types_at("app") == ["A"]
    # In one PUT of the name, beside an A: refused too.
    both = {"items": [dict(a, rrset_type="A"), dict(cname, rrset_type="CNAME")]}
    status, doc = call(gandi_fake, "PUT", LIVEDNS + "/records/app", both, tok)
    assert status == 400 and "coexist" in doc["errors"][0]["description"], doc
    assert gandi_fake.types_at("app") == ["A"]
    # The name's PUT replaces every type at once: one state, the CNAME.
    gandi_fake.history.clear()
    one = {"items": [dict(cname, rrset_type="CNAME")]}
    assert call(gandi_fake, "PUT", LIVEDNS + "/records/app", one, tok)[0] == 201
    assert gandi_fake.history == [("app", ["CNAME"])]
    assert gandi_fake.get("app", "CNAME") == (300, ["backup.example.net."])
    # An A beside the CNAME, type by type: refused.
    status, doc = call(gandi_fake, "PUT", LIVEDNS + "/records/app/A", a, tok)
    assert status == 400, doc
    # A relative target is taken as it is (LiveDNS reads it in the zone).
    rel = {"rrset_values": ["backup"], "rrset_ttl": 300}
    assert call(gandi_fake, "PUT", LIVEDNS + "/records/www/CNAME", rel, tok)[0] == 201
    assert call(gandi_fake, "DELETE", LIVEDNS + "/records/app", auth=tok)[0] == 204
    assert gandi_fake.types_at("app") == []
    assert call(gandi_fake, "DELETE", LIVEDNS + "/records/app", auth=tok)[0] == 404


@pytest.mark.parametrize("path,body", [
    ("/records/app/CNAME", {"rrset_values": ["a.example.net.", "b.example.net."],
                            "rrset_ttl": 300}),
    ("/records/app/CNAME", {"rrset_values": ["bad name.example.net."], "rrset_ttl": 300}),
    ("/records/app/CNAME", {"rrset_values": ["a..example.net."], "rrset_ttl": 300}),
    ("/records/app", {"items": [{"rrset_type": "CNAME", "rrset_values": ["x.example."],
                                 "rrset_ttl": 299}]}),
    ("/records/app", {"items": [{"rrset_type": "A", "rrset_values": ["192.0.2.1"],
                                 "rrset_ttl": 300, "rrset_name": "app"}]}),
    ("/records/app", {"items": [{"rrset_type": "A", "rrset_values": ["192.0.2.1"]},
                                {"rrset_type": "A", "rrset_values": ["192.0.2.2"]}]}),
    ("/records/app", [{"rrset_type": "A", "rrset_values": ["192.0.2.1"]}]),
])
def test_gandi_fake_refuses_bad_cname_and_name_put(gandi_fake, path, body):
    tok = "Bearer " + gandi_fake.token
    gandi_fake.set_records("app", "TXT", ['"keep"'])
    before = dict(gandi_fake.records)
    status, doc = call(gandi_fake, "PUT", LIVEDNS + path, body, tok)
    assert status == 400 and doc["errors"], doc
    assert gandi_fake.records == before
