"""The cloudflare provider through the built ddup-check.

Against the stateful fake of Cloudflare's records API (cloudflarefix.py),
with Prism in front checking every request and answer against
Cloudflare's OpenAPI schema; the fixture fails a test whose requests
broke it.  The fake counts the calls that reached it, so "nothing to
change" is checked as zero write calls.
"""

import os

import pytest

from test_secrets import assert_clean, state_files

NAME = "app.example.test"


def cf_provider(cf, key="zone", extra="", token=None, timeout="30s"):
    zone = f"zone = {cf.zone}" if key == "zone" else f"zoneId = {cf.zone_id}"
    return f"""
[provider cf]
type = cloudflare
baseUrl = {cf.base_url}
apiToken = {token or cf.token}
{zone}
timeout = {timeout}
{extra}
"""


def configure(ddup, provider, eps, name=NAME, keys="ttl = 60\n", domains=None):
    """eps: (endpoint name, http server, ip, priority[, extra lines])."""
    text = "interval = 30s\n" + provider
    for dom in domains or [name]:
        text += f"\n[domain {dom}]\nprovider = cf\nattempts = 1\n{keys}\n"
        for ep in eps:
            n, srv, ip, prio = ep[:4]
            text += f"\n[endpoint {n}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
            if len(ep) > 4:
                text += ep[4] + "\n"
    ddup.write(text)


def quiet_ok(r):
    assert (r.rc, r.out, r.err) == (0, "", ""), r


def ids(cf, name=NAME):
    return {r["content"]: r["id"] for r in cf.records(name)}


def test_first_run_finds_records_right_and_writes_nothing(ddup, cloudflare, http_server):
    cf = cloudflare()
    a, b = http_server(), http_server()
    cf.add(NAME, "A", "192.0.2.1", ttl=60, comment="made by hand")
    cf.add(NAME, "A", "192.0.2.2", ttl=60)
    before = cf.records(NAME)
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert cf.writes() == 0 and cf.count("GET", "/dns_records") == 1
    assert cf.records(NAME) == before
    # The set is now known: the next run does not even ask.
    n = cf.count()
    quiet_ok(ddup.run())
    assert cf.count() == n


def test_first_run_creates_missing_deletes_unwanted_in_one_batch(ddup, cloudflare, http_server):
    cf = cloudflare()
    a, b = http_server(), http_server()
    keep = cf.add(NAME, "A", "192.0.2.1", ttl=60, comment="keep me")
    cf.add(NAME, "A", "192.0.2.9", ttl=60)
    cf.add(NAME, "A", "192.0.2.50", ttl=60)
    txt = cf.add(NAME, "TXT", "v=spf1 -all", ttl=300)
    cf.add("other.example.test", "A", "192.0.2.9", ttl=60)
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert cf.contents(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    assert ids(cf)["192.0.2.1"] == keep and ids(cf)["v=spf1 -all"] == txt
    assert [x["comment"] for x in cf.records(NAME) if x["id"] == keep] == ["keep me"]
    assert cf.contents("other.example.test") == ["192.0.2.9"]
    assert cf.count("POST", "/batch") == 1 and cf.writes() == 1
    assert "DNS updated" in r.err, r


def test_failover_sends_only_the_difference(ddup, cloudflare, http_server):
    cf = cloudflare()
    p, s = http_server(), http_server()
    configure(ddup, cf_provider(cf), [("p", p, "192.0.2.1", 0), ("s", s, "2001:db8::2", 10)])
    assert ddup.run().rc == 0
    assert cf.contents(NAME) == ["192.0.2.1"]
    p.set(status=503)
    assert ddup.run().rc == 0
    assert [(x["type"], x["content"]) for x in cf.records(NAME)] == [("AAAA", "2001:db8::2")]
    batch = [body for m, path, body in cf.calls if path.endswith("/batch")][-1]
    assert len(batch["deletes"]) == 1 and len(batch["posts"]) == 1, batch
    assert "patches" not in batch and "puts" not in batch
    p.set(status=200)
    assert ddup.run().rc == 0
    assert cf.contents(NAME) == ["192.0.2.1"]


def test_without_batch_single_calls_add_before_delete(ddup, cloudflare, http_server):
    cf = cloudflare(batch=False)
    p, s = http_server(), http_server()
    configure(ddup, cf_provider(cf), [("p", p, "192.0.2.1", 0), ("s", s, "192.0.2.2", 10)])
    assert ddup.run().rc == 0
    assert cf.contents(NAME) == ["192.0.2.1"]
    cf.take_violations()        # Prism's 405 for the batch path: the API has none
    start = len(cf.calls)
    p.set(status=503)
    assert ddup.run().rc == 0
    assert cf.contents(NAME) == ["192.0.2.2"]
    writes = [m for m, _, _ in cf.calls[start:] if m != "GET"]
    assert writes == ["POST", "DELETE"], cf.calls[start:]
    cf.take_violations()


def test_ttl_changed_is_patched_in_place(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    rid = cf.add(NAME, "A", "192.0.2.1", ttl=300, comment="keep")
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0)], keys="ttl = 120\n")
    assert ddup.run().rc == 0
    (rec,) = cf.records(NAME)
    assert (rec["id"], rec["ttl"], rec["comment"]) == (rid, 120, "keep")
    assert cf.writes() == 1


def test_zone_looked_up_once_per_run(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0)],
              domains=["one.example.test", "two.example.test", "three.example.test"])
    assert ddup.run().rc == 0
    assert cf.count("GET", "/zones?") == 1
    for d in ("one", "two", "three"):
        assert cf.contents(f"{d}.example.test") == ["192.0.2.1"]


def test_zone_id_needs_no_lookup(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf, key="zoneId"), [("a", a, "192.0.2.1", 0)])
    assert ddup.run().rc == 0
    assert cf.count("GET", "/zones?") == 0 and cf.contents(NAME) == ["192.0.2.1"]


def test_records_listed_page_after_page(ddup, cloudflare, http_server):
    cf = cloudflare()
    cf.page_size(2)
    eps = [(f"e{i}", http_server(), f"192.0.2.{i}", 0) for i in range(1, 6)]
    for i in range(1, 6):
        cf.add(NAME, "A", f"192.0.2.{i}", ttl=60)
    cf.add(NAME, "A", "192.0.2.77", ttl=60)
    configure(ddup, cf_provider(cf), eps)
    assert ddup.run().rc == 0
    # 6 records, 2 a page: the read and the replace each take 3 pages.
    assert cf.count("GET", "/dns_records") == 6
    assert cf.contents(NAME) == [f"192.0.2.{i}" for i in range(1, 6)]


def test_unknown_zone_name(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    text = cf_provider(cf).replace(f"zone = {cf.zone}", "zone = other.test")
    configure(ddup, text, [("a", a, "192.0.2.1", 0)], name="app.other.test")
    r = ddup.run()
    assert r.rc == 1, r
    assert "not found" in r.err and "other.test" in r.err, r


def test_success_false_shows_cloudflares_code_and_message(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0)])
    cf.fail_next(400, 1004, "DNS Validation Error", method="POST",
                 chain=[(9021, "TTL must be between 60 and 86400 seconds, or 1 for Automatic.")])
    r = ddup.run()
    assert r.rc == 1, r
    assert "1004" in r.err and "DNS Validation Error" in r.err and "9021" in r.err, r
    assert "rejected as invalid" in r.err, r
    st = ddup.status()
    assert "1004" in st["domains"][0]["lastError"]
    r = ddup.run("--status")
    assert "1004" in r.out, r
    r = ddup.run()
    assert r.rc == 0, r
    assert cf.contents(NAME) == ["192.0.2.1"]


def test_rate_limit_waited_out_within_timeout(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf, timeout="10s"), [("a", a, "192.0.2.1", 0)])
    cf.ratelimit(1, retry_after=1)
    r = ddup.run()
    assert r.rc == 0, r
    assert cf.contents(NAME) == ["192.0.2.1"]


def test_rate_limit_longer_than_timeout_fails_at_once(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf, timeout="3s"), [("a", a, "192.0.2.1", 0)])
    cf.ratelimit(1, retry_after=600)
    r = ddup.run(timeout=30)
    assert r.rc == 1, r
    assert "rate limited" in r.err and "retry after 600s" in r.err, r
    assert cf.count() == 1
    assert "rate limited" in ddup.status()["domains"][0]["lastError"]


def test_wrong_token_and_no_secret_anywhere(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    wrong = "wrong-token-" + cf.token
    configure(ddup, cf_provider(cf, token=wrong), [("a", a, "192.0.2.1", 0)])
    outs = []
    r = ddup.run("-v")
    assert r.rc == 1, r
    assert "authentication failed" in r.err and "10000" in r.err, r
    outs += [r.out, r.err]
    for args in (("--status",), ("--status", "--json"), ("--dry-run",), ("-n",)):
        r = ddup.run(*args)
        outs += [r.out, r.err]
    st = ddup.status()
    assert "authentication failed" in st["domains"][0]["lastError"]
    assert "last error: " in outs[2] and "authentication failed" in outs[2], outs[2]
    (err,), = ddup.state_rows("SELECT last_error FROM domains",
                              "SELECT last_error FROM ddup_domain")
    assert "authentication failed" in err
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0)])
    r = ddup.run("-v")
    assert r.rc == 0, r
    outs += [r.out, r.err, cf.prism_log()]
    for i, o in enumerate(outs):
        assert_clean(f"output {i}", o, [wrong, cf.token])
    assert_clean("state", ddup.state_dump(), [wrong, cf.token])
    if not ddup.on_pg():
        for suffix, data in state_files(ddup).items():
            assert_clean("state" + suffix, data, [wrong, cf.token])


@pytest.mark.parametrize("ttl,ok", [("1", True), ("60", True), ("86400", True),
                                    ("30", False), ("59", False), ("86401", False)])
def test_ttl_checked_at_configuration_time(ddup, cloudflare, http_server, ttl, ok):
    cf = cloudflare()
    a = http_server()
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0)], keys=f"ttl = {ttl}\n")
    r = ddup.run("-n")
    if ok:
        assert r.rc == 0, r
    else:
        assert r.rc == 2, r
        line = [i for i, ln in enumerate(open(ddup.config), 1) if ln.startswith("ttl =")][0]
        assert f":{line}:" in r.err and "1 for automatic" in r.err, r
    assert cf.count() == 0


@pytest.mark.parametrize("lines,words", [
    (["zone = "], "zoneId or zone"),
    (["zoneId = not-hex"], "zoneId"),
    (["baseUrl = http://u:pw@127.0.0.1:1"], "password"),
    (["apiToken = "], "apiToken"),
])
def test_bad_values_are_config_errors(ddup, cloudflare, http_server, lines, words):
    cf = cloudflare()
    a = http_server()
    text = cf_provider(cf)
    for ln in lines:
        key = ln.split()[0]
        text = "\n".join(x for x in text.splitlines() if not x.startswith(key + " "))
        if ln.split("=", 1)[1].strip():
            text += "\n" + ln
    configure(ddup, text + "\n", [("a", a, "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert words in r.err, r
    assert "pw@" not in r.err and cf.token not in r.err


# ---------------------------------------------------------------- proxied


def test_proxied_records_get_ttl_automatic(ddup, cloudflare, http_server):
    cf = cloudflare()
    a, b = http_server(), http_server()
    configure(ddup, cf_provider(cf, extra="proxied = true"),
              [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)], keys="ttl = 300\n")
    assert ddup.run().rc == 0
    assert [(x["proxied"], x["ttl"]) for x in cf.records(NAME)] == [(True, 1), (True, 1)]
    body = [b for m, p, b in cf.calls if p.endswith("/batch")][0]
    assert all(x["proxied"] and x["ttl"] == 1 for x in body["posts"]), body
    # Read back (as after an unrecorded update): DNS holds what is wanted.
    ddup.state_exec("UPDATE domains SET unsure = 1", "UPDATE ddup_domain SET unsure = true")
    n = cf.writes()
    quiet_ok(ddup.run())
    assert cf.writes() == n and cf.count("GET", "/dns_records") == 3    # 2 + 1 read


def test_proxied_per_endpoint_patched_in_place(ddup, cloudflare, http_server):
    cf = cloudflare()
    a = http_server()
    rid = cf.add(NAME, "A", "192.0.2.1", ttl=60, comment="keep")
    configure(ddup, cf_provider(cf), [("a", a, "192.0.2.1", 0, "proxied = yes")])
    assert ddup.run().rc == 0
    (rec,) = cf.records(NAME)
    assert (rec["id"], rec["proxied"], rec["ttl"], rec["comment"]) == (rid, True, 1, "keep")
    assert cf.writes() == 1
    batch = [b for m, p, b in cf.calls if p.endswith("/batch")][0]
    assert list(batch) == ["patches"], batch


# ---------------------------------------------------------------- cname


def cname_eps(http_server, backups=("192.0.2.2", "192.0.2.3")):
    lb = http_server()
    eps = [("lb", lb, None, 0, "cname = lb.example.net")]
    eps += [(f"b{i}", http_server(), ip, 10) for i, ip in enumerate(backups)]
    return lb, eps


def configure_cname(ddup, cf, eps, keys="ttl = 60\n"):
    text = "interval = 30s\n" + cf_provider(cf)
    text += f"\n[domain {NAME}]\nprovider = cf\nattempts = 1\n{keys}\n"
    for n, srv, ip, prio, *extra in eps:
        text += f"\n[endpoint {n}]\nurl = {srv.url}\npriority = {prio}\n"
        text += (f"ip = {ip}\n" if ip else "") + "".join(x + "\n" for x in extra)
    ddup.write(text)


def never_both_never_empty(cf):
    for types in cf.resolving(NAME):
        assert types, cf.timeline
        assert "CNAME" not in types or types == {"CNAME"}, cf.timeline


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "single-calls"])
def test_cname_tier_and_back(ddup, cloudflare, http_server, batch):
    cf = cloudflare(batch=batch)
    lb, eps = cname_eps(http_server, backups=("192.0.2.2", "192.0.2.3", "2001:db8::2"))
    configure_cname(ddup, cf, eps)
    r = ddup.run()
    assert r.rc == 0, r
    assert [(x["type"], x["content"]) for x in cf.records(NAME)] == [("CNAME", "lb.example.net")]
    st = ddup.status()["domains"][0]
    assert st["published"] == ["lb.example.net"]
    assert st["endpoints"][0]["cname"] == "lb.example.net" and st["endpoints"][0]["ip"] is None
    assert st["endpoints"][0]["published"] is True
    r = ddup.run("--dry-run")
    assert r.rc == 0 and "no change: DNS holds [lb.example.net]" in r.out, r
    cid = cf.records(NAME)[0]["id"]
    # The CNAME's server fails: the addresses of the next tier, with the
    # CNAME record turned into one of them, never beside them.
    lb.set(status=503)
    start = len(cf.calls)
    assert ddup.run().rc == 0
    assert [(x["type"], x["content"]) for x in cf.records(NAME)] == [
        ("A", "192.0.2.2"), ("A", "192.0.2.3"), ("AAAA", "2001:db8::2")]
    assert cid in ids(cf).values()
    writes = [m for m, _, _ in cf.calls[start:] if m != "GET"]
    assert writes == (["POST"] if batch else ["PUT", "POST", "POST"]), cf.calls[start:]
    r = ddup.run("--status")
    assert "192.0.2.2 192.0.2.3 2001:db8::2" in r.out, r
    # And back: the addresses go, the last one becomes the CNAME.
    lb.set(status=200)
    start = len(cf.calls)
    assert ddup.run().rc == 0
    assert [(x["type"], x["content"]) for x in cf.records(NAME)] == [("CNAME", "lb.example.net")]
    writes = [m for m, _, _ in cf.calls[start:] if m != "GET"]
    assert writes == (["POST"] if batch else ["DELETE", "DELETE", "PUT"]), cf.calls[start:]
    never_both_never_empty(cf)
    n = cf.count()
    quiet_ok(ddup.run())
    assert cf.count() == n
    if not batch:
        cf.take_violations()        # Prism's 405s for the batch path


def test_cname_counters_kept_through_a_failed_control_url(ddup, cloudflare, http_server):
    """A run whose controlUrl fails keeps every endpoint's counters, a
    CNAME endpoint's too (it was once stored under an empty address,
    which the next run took for another endpoint: its failures started
    again)."""
    cf = cloudflare()
    lb, eps = cname_eps(http_server)
    control = http_server()
    text = f"interval = 30s\ncontrolUrl = {control.url}\n" + cf_provider(cf)
    text += f"\n[domain {NAME}]\nprovider = cf\nattempts = 3\nttl = 60\n"
    for n, srv, ip, prio, *extra in eps:
        text += f"\n[endpoint {n}]\nurl = {srv.url}\npriority = {prio}\n"
        text += (f"ip = {ip}\n" if ip else "") + "".join(x + "\n" for x in extra)
    ddup.write(text)
    assert ddup.run().rc == 0
    lb.set(status=503)
    assert ddup.run().rc == 0
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["name"], st["state"], st["failures"]) == ("lb", "failing", 1)
    control.set(status=503)         # this run blames its own network
    assert ddup.run().rc == 0
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["state"], st["failures"]) == ("failing", 1), st
    control.set(status=200)
    assert ddup.run().rc == 0
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["state"], st["failures"]) == ("failing", 2), st
    assert ddup.run().rc == 0       # the third counted failure removes it
    assert sorted(x["content"] for x in cf.records(NAME)) == ["192.0.2.2", "192.0.2.3"]


def test_cname_first_run_finds_it_right(ddup, cloudflare, http_server):
    cf = cloudflare()
    cf.add(NAME, "CNAME", "LB.example.net", ttl=60, comment="by hand")
    lb, eps = cname_eps(http_server)
    configure_cname(ddup, cf, eps)
    quiet_ok(ddup.run())
    assert cf.writes() == 0


def test_cname_target_changed_in_place(ddup, cloudflare, http_server):
    cf = cloudflare(batch=False)
    rid = cf.add(NAME, "CNAME", "old.example.net", ttl=60)
    lb, eps = cname_eps(http_server)
    configure_cname(ddup, cf, eps)
    assert ddup.run().rc == 0
    assert [(x["id"], x["content"]) for x in cf.records(NAME)] == [(rid, "lb.example.net")]
    assert [m for m, _, _ in cf.calls if m != "GET"] == ["PUT"]
    never_both_never_empty(cf)
    cf.take_violations()


def test_cname_refused_where_the_provider_cannot(ddup, http_server):
    a = http_server()
    ddup.write(f"""
[provider dns]
type = powerdns
baseUrl = http://127.0.0.1:1
apiKey = k
zone = example.test

[domain {NAME}]
provider = dns

[endpoint a]
url = {a.url}
cname = lb.example.net
""")
    r = ddup.run("-n")
    assert r.rc == 2, r
    line = open(ddup.config).read().splitlines().index("cname = lb.example.net") + 1
    assert f":{line}:" in r.err and "cannot publish a CNAME" in r.err, r
