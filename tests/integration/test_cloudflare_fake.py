"""The Cloudflare fake and Prism in front of it, checked on their own.

The provider's tests (test_cloudflare.py) are only worth what the fake is:
these show that it keeps Cloudflare's rules and that Prism turns away
requests that break Cloudflare's schema before they reach it.
"""

import json
import urllib.error
import urllib.request


def call(cf, method, path, body=None, token=None, url=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request((url or cf.base_url) + path, data=data, method=method)
    if token is not False:
        req.add_header("Authorization", "Bearer " + (token or cf.token))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read() or b"null")


def rec(name, content, rtype="A", ttl=60, **kw):
    return dict(type=rtype, name=name, content=content, ttl=ttl, **kw)


def test_zone_lookup_create_and_paginated_list(cloudflare):
    cf = cloudflare()
    st, _, z = call(cf, "GET", "/zones?name=example.test")
    assert st == 200 and [x["id"] for x in z["result"]] == [cf.zone_id]
    st, _, z = call(cf, "GET", "/zones?name=other.test")
    assert st == 200 and z["result"] == []
    for i in range(5):
        st, _, r = call(cf, "POST", f"/zones/{cf.zone_id}/dns_records",
                        rec("app.example.test", f"192.0.2.{i + 1}"))
        assert st == 200 and r["success"], r
    cf.page_size(2)
    seen, page = [], 1
    while True:
        st, _, r = call(cf, "GET", f"/zones/{cf.zone_id}/dns_records?name=app.example.test"
                        f"&per_page=100&page={page}")
        assert st == 200
        seen += [x["content"] for x in r["result"]]
        if page >= r["result_info"]["total_pages"]:
            break
        page += 1
    assert page == 3 and sorted(seen) == [f"192.0.2.{i}" for i in range(1, 6)]
    assert cf.count("GET", "/dns_records") == 3 and cf.count("POST") == 5


def test_prism_rejects_what_breaks_the_schema(cloudflare):
    cf = cloudflare()
    path = f"/zones/{cf.zone_id}/dns_records"
    st, _, r = call(cf, "POST", path, rec("app.example.test", "192.0.2.1", ttl="60"))
    assert st == 422, r
    st, _, r = call(cf, "POST", path, {"type": "A", "name": "app.example.test"})
    assert st == 422, r
    st, _, r = call(cf, "GET", path, token=False)
    assert st == 401, r
    assert cf.count() == 0          # none of them reached the fake
    assert len(cf.take_violations()) >= 3


def test_fake_keeps_cloudflares_rules(cloudflare):
    cf = cloudflare()
    path = f"/zones/{cf.zone_id}/dns_records"
    st, _, r = call(cf, "GET", path, token="wrong")
    assert (st, r["errors"][0]["code"]) == (403, 10000)
    st, _, r = call(cf, "POST", path, rec("app.example.test", "192.0.2.1", ttl=30))
    assert (st, r["errors"][0]["error_chain"][0]["code"]) == (400, 9021)
    st, _, r = call(cf, "POST", path, rec("app.other.test", "192.0.2.1"))
    assert st == 400
    st, _, r = call(cf, "POST", path, rec("app.example.test", "2001:db8::1"))
    assert st == 422 and cf.take_violations()      # Prism: not an ipv4
    assert call(cf, "POST", path, rec("app.example.test", "192.0.2.1"))[0] == 200
    st, _, r = call(cf, "POST", path, rec("app.example.test", "192.0.2.1"))
    assert (st, r["errors"][0]["code"]) == (400, 81058)
    st, _, r = call(cf, "POST", path, rec("app.example.test", "lb.example.net", "CNAME"))
    assert (st, r["errors"][0]["code"]) == (400, 81053)
    st, _, r = call(cf, "POST", path, rec("www.example.test", "lb.example.net", "CNAME"))
    assert st == 200
    st, _, r = call(cf, "POST", path, rec("www.example.test", "192.0.2.9"))
    assert (st, r["errors"][0]["code"]) == (400, 81054)
    st, _, r = call(cf, "POST", path, rec("px.example.test", "192.0.2.7", proxied=True))
    assert st == 200 and r["result"]["ttl"] == 1
    st, _, r = call(cf, "DELETE", path + "/" + "0" * 32)
    assert (st, r["errors"][0]["code"]) == (404, 81044)
    assert cf.contents("app.example.test") == ["192.0.2.1"]


def test_put_reverts_what_it_omits_patch_keeps_it(cloudflare):
    cf = cloudflare()
    rid = cf.add("app.example.test", "A", "192.0.2.1", proxied=True, comment="keep")
    path = f"/zones/{cf.zone_id}/dns_records/{rid}"
    st, _, r = call(cf, "PATCH", path, {"content": "192.0.2.2"})
    assert st == 200 and r["result"]["comment"] == "keep" and r["result"]["proxied"]
    st, _, r = call(cf, "PUT", path, rec("app.example.test", "192.0.2.3"))
    assert st == 200 and "comment" not in r["result"] and not r["result"]["proxied"]
    st, _, r = call(cf, "PUT", path, rec("app.example.test", "lb.example.net", "CNAME"))
    assert st == 200 and cf.records("app.example.test")[0]["type"] == "CNAME"


def test_batch_in_order_all_or_nothing(cloudflare):
    cf = cloudflare()
    a = cf.add("app.example.test", "A", "192.0.2.1")
    path = f"/zones/{cf.zone_id}/dns_records/batch"
    # Deletes run before posts: the A goes, then the CNAME may come.
    st, _, r = call(cf, "POST", path, {"deletes": [{"id": a}],
                                       "posts": [rec("app.example.test", "lb.example.net", "CNAME")]})
    assert st == 200 and len(r["result"]["posts"]) == 1, r
    c = cf.records("app.example.test")[0]["id"]
    st, _, r = call(cf, "POST", path, {"deletes": [{"id": c}],
                                       "posts": [rec("app.example.test", "192.0.2.1"),
                                                 rec("app.example.test", "192.0.2.1")]})
    assert (st, r["errors"][0]["code"]) == (400, 81058)
    assert [x["type"] for x in cf.records("app.example.test")] == ["CNAME"]
    st, _, r = call(cf, "POST", path, {"posts": [rec("app.example.test", "192.0.2.1", ttl="x")]})
    assert st == 422 and cf.take_violations()


def test_without_batch_prism_answers_405(cloudflare):
    cf = cloudflare(batch=False)
    st, _, r = call(cf, "POST", f"/zones/{cf.zone_id}/dns_records/batch",
                    {"posts": [rec("app.example.test", "192.0.2.1")]})
    assert st == 405 and cf.count() == 0
    cf.take_violations()
    st, _, r = call(cf, "POST", f"/zones/{cf.zone_id}/dns_records/batch",
                    {"posts": [rec("app.example.test", "192.0.2.1")]}, url=cf.direct_url)
    assert (st, r["errors"][0]["code"]) == (404, 7000)


def test_rate_limit_and_injected_errors(cloudflare):
    cf = cloudflare()
    cf.ratelimit(1, retry_after=2)
    st, h, r = call(cf, "GET", f"/zones/{cf.zone_id}/dns_records")
    assert st == 429 and h.get("retry-after") == "2" and r["errors"][0]["code"] == 10100
    cf.fail_next(400, 1004, "DNS Validation Error", method="POST")
    st, _, r = call(cf, "GET", f"/zones/{cf.zone_id}/dns_records")
    assert st == 200
    st, _, r = call(cf, "POST", f"/zones/{cf.zone_id}/dns_records", rec("app.example.test", "192.0.2.1"))
    assert (st, r["success"], r["errors"][0]["code"]) == (400, False, 1004)
