"""Health checks (ddup-check(8), HEALTH CHECKS), end to end through ddup-check.

Each test starts real HTTP(S) servers on loopback, writes a configuration
whose endpoints point at them, and reads every check's result from
`ddup-check --dry-run --json` (ddup-check(8), STATUS JSON). A dry run never contacts
the DNS provider, so the rfc2136 provider points at a closed port.
"""

import time

import pytest

from conftest import TIME_SCALE
from httpfix import free_port, has_ipv6

# Bounds on time are scaled (valgrind: DDUP_TIME_SCALE=4), and the tests
# that have them run in the serial pass, each between the time it should
# take and the time the bug it guards against would.
T = TIME_SCALE

ZONE = "example.test"


def config(endpoints, top=None, **domain):
    """INI text: one domain, endpoints e0, e1, ... in the given order.

    endpoints: HttpServer objects, URL strings, or dicts with url/host.
    top: top-level keys; domain: keys of the [domain] section."""
    lines = [f"{k} = {v}" for k, v in (top or {}).items()]
    lines += ["", "[provider dns]", "type = rfc2136", "server = 127.0.0.1:9", f"zone = {ZONE}",
              "", f"[domain app.{ZONE}]", "provider = dns"]
    lines += [f"{k} = {v}" for k, v in domain.items()]
    for i, ep in enumerate(endpoints):
        if not isinstance(ep, dict):
            ep = {"url": ep if isinstance(ep, str) else ep.url}
        lines += ["", f"[endpoint e{i}]", f"url = {ep['url']}", f"ip = 192.0.2.{i + 1}"]
        if ep.get("host"):
            lines.append(f"host = {ep['host']}")
    return "\n".join(lines) + "\n"


def check(ddup, endpoints, top=None, env=None, **domain):
    """Runs the checks; returns (endpoint results in order, wall seconds)."""
    domain.setdefault("timeout", "3s")
    ddup.write(config(endpoints, top, **domain))
    t0 = time.monotonic()
    r = ddup.run("--dry-run", "--json", env=env)
    wall = time.monotonic() - t0
    assert r.rc == 0, r
    doc = r.json()
    (dom,) = [d for d in doc["domains"] if d["name"].rstrip(".") == f"app.{ZONE}"]
    by_name = {e["name"]: e for e in dom["endpoints"]}
    eps = [by_name[f"e{i}"] for i in range(len(endpoints))]
    return eps, wall


def check_one(ddup, endpoint, top=None, env=None, **domain):
    eps, _ = check(ddup, [endpoint], top, env, **domain)
    return eps[0]


def assert_ok(ep):
    assert ep["lastResult"] == "ok", ep
    assert ep["healthy"] is True, ep


def assert_fail(ep, reason):
    assert ep["lastResult"] == reason, ep
    assert ep["healthy"] is False, ep


# ---------------------------------------------------------------- status codes

@pytest.mark.serial
def test_200_passes_and_503_fails(ddup, http_server):
    good = http_server()
    bad = http_server(status=503, body="maintenance")
    eps, _ = check(ddup, [good, bad])
    assert_ok(eps[0])
    assert_fail(eps[1], "HTTP 503")
    assert isinstance(eps[0]["latencyMs"], int) and 0 <= eps[0]["latencyMs"] < 2000 * T
    assert len(good.requests) == 1 and len(bad.requests) == 1


def test_status_change_between_runs(ddup, http_server):
    srv = http_server()
    assert_ok(check_one(ddup, srv))
    srv.set(status=500)
    assert_fail(check_one(ddup, srv), "HTTP 500")
    srv.set(status=204, body="")
    assert_ok(check_one(ddup, srv))


def test_expect_status_list(ddup, http_server):
    s204 = http_server(status=204, body="")
    s202 = http_server(status=202)
    s200 = http_server()
    eps, _ = check(ddup, [s204, s202, s200], expectStatus="200, 204")
    assert_ok(eps[0])
    assert_fail(eps[1], "HTTP 202")
    assert_ok(eps[2])


def test_expect_status_exact_code(ddup, http_server):
    eps, _ = check(ddup, [http_server(status=200), http_server(status=418)], expectStatus="418")
    assert_fail(eps[0], "HTTP 200")
    assert_ok(eps[1])


def test_redirect_not_followed(ddup, http_server):
    target = http_server()
    redir = http_server(status=302, headers={"Location": target.url})
    assert_fail(check_one(ddup, redir), "HTTP 302")
    assert target.requests == [], "the redirect was followed"
    assert len(redir.requests) == 1


def test_redirect_passes_when_expected(ddup, http_server):
    target = http_server()
    redir = http_server(status=301, headers={"Location": target.url})
    assert_ok(check_one(ddup, redir, expectStatus="3xx"))
    assert target.requests == []


# ---------------------------------------------------------------- connection failures

def test_refused_port(ddup):
    assert_fail(check_one(ddup, f"http://127.0.0.1:{free_port()}/health"), "connection refused")


def test_server_goes_down_and_comes_back(ddup, http_server):
    srv = http_server()
    port = srv.port
    assert_ok(check_one(ddup, srv))
    srv.stop()
    assert_fail(check_one(ddup, srv), "connection refused")
    srv.start()
    assert srv.port == port
    assert_ok(check_one(ddup, srv))


def test_connection_reset(ddup, http_server):
    srv = http_server(reset=True)
    assert_fail(check_one(ddup, srv), "connection reset")
    assert len(srv.requests) == 1


@pytest.mark.serial
def test_timeout(ddup, http_server):
    srv = http_server(delay=3)
    ep, wall = check(ddup, [srv], timeout="500ms")
    assert_fail(ep[0], "timeout")
    # The server would answer after 3s.
    assert 400 <= ep[0]["latencyMs"] < 500 + 1000 * T, ep
    assert wall < 0.5 + 2 * T, f"a 500ms timeout took {wall:.1f}s"


def test_slow_answer_within_timeout(ddup, http_server):
    ep = check_one(ddup, http_server(delay=0.3), timeout="3s")
    assert_ok(ep)
    assert ep["latencyMs"] >= 250, ep


@pytest.mark.serial
def test_checks_run_in_parallel(ddup, http_server):
    servers = [http_server(delay=2) for _ in range(20)]
    eps, wall = check(ddup, servers, timeout="1s")
    for ep in eps:
        assert_fail(ep, "timeout")
    # One after the other they would take 20s.
    assert wall < 1 + 2 * T, f"20 checks with a 1s timeout took {wall:.1f}s: not in parallel"
    assert all(len(s.requests) == 1 for s in servers)


def test_max_parallel_caps_checks_in_flight(ddup, http_server):
    servers = [http_server(delay=0.4) for _ in range(6)]
    eps, wall = check(ddup, servers, top={"maxParallel": 2}, timeout="3s")
    for ep in eps:
        assert_ok(ep)
    # Three rounds of two; all at once would take ~0.4s.
    assert wall >= 1.15, f"maxParallel = 2 ran 6 checks of 0.4s in {wall:.2f}s"


def test_proxy_environment_ignored(ddup, http_server):
    srv = http_server()
    dead = f"http://127.0.0.1:{free_port()}"
    env = {"http_proxy": dead, "HTTP_PROXY": dead, "https_proxy": dead, "ALL_PROXY": dead,
           "no_proxy": "", "NO_PROXY": ""}
    assert_ok(check_one(ddup, srv, env=env))
    assert len(srv.requests) == 1


# ---------------------------------------------------------------- request shape

def test_get_with_user_agent(ddup, http_server):
    srv = http_server(path="/health?deep=1")
    assert_ok(check_one(ddup, srv))
    (req,) = srv.requests
    assert req.method == "GET"
    assert req.path == "/health?deep=1"
    assert req.user_agent == "ddup/1.0"
    assert req.host == f"127.0.0.1:{srv.port}"


def test_head_sends_head(ddup, http_server):
    srv = http_server(body="x" * 1000)
    assert_ok(check_one(ddup, srv, method="HEAD"))
    (req,) = srv.requests
    assert req.method == "HEAD"
    assert req.user_agent == "ddup/1.0"


def test_head_failing_status(ddup, http_server):
    assert_fail(check_one(ddup, http_server(status=503), method="HEAD"), "HTTP 503")


# ---------------------------------------------------------------- expectBody

def test_expect_body_found_and_missing(ddup, http_server):
    has = http_server(body="status: READY\n")
    lacks = http_server(body="status: STARTING\n")
    eps, _ = check(ddup, [has, lacks], expectBody="READY")
    assert_ok(eps[0])
    assert_fail(eps[1], "HTTP 200: expected text not found")


def test_expect_body_with_bad_status(ddup, http_server):
    # The status is judged first: the reason names it.
    assert_fail(check_one(ddup, http_server(status=503, body="READY"), expectBody="READY"),
                "HTTP 503")


def test_expect_body_near_the_64k_limit(ddup, http_server):
    # Sent in two pieces: the text straddles two reads and ends just
    # inside 64 KiB.
    inside = http_server(body=[b"x" * (65536 - 20) + b"MARKER-01", b"23456789" + b"y" * 50000])
    # This one starts just past 64 KiB: it is not looked for.
    outside = http_server(body=b"x" * 65536 + b"MARKER-0123456789")
    # Straddles two reads early in the body.
    straddle = http_server(body=[b"x" * 1000 + b"MARKER-", b"0123456789\n"])
    eps, _ = check(ddup, [inside, outside, straddle], expectBody="MARKER-0123456789")
    assert_ok(eps[0])
    assert_fail(eps[1], "HTTP 200: expected text not found")
    assert_ok(eps[2])


@pytest.mark.serial
def test_endless_body_is_cut_at_64k(ddup, http_server):
    plain = http_server(endless=True)
    # Without the cap the check would read until its timeout, and fail.
    eps, wall = check(ddup, [plain], timeout=f"{5 * T:g}s")
    assert_ok(eps[0])
    assert eps[0]["latencyMs"] < 2000 * T, eps[0]
    assert wall < 4 * T


@pytest.mark.serial
def test_endless_body_expect_body(ddup, http_server):
    found = http_server(endless=True, body="READY ")
    missing = http_server(endless=True, body="BOOTING ")
    eps, wall = check(ddup, [found, missing], timeout=f"{5 * T:g}s", expectBody="READY")
    assert_ok(eps[0])
    assert_fail(eps[1], "HTTP 200: expected text not found")
    assert max(e["latencyMs"] for e in eps) < 2000 * T, eps
    assert wall < 4 * T


# ---------------------------------------------------------------- HTTPS

def test_https_valid_with_ca_file(ddup, http_server, certs):
    srv = http_server(tls=True)
    assert srv.url.startswith("https://127.0.0.1:")
    assert_ok(check_one(ddup, srv, top={"caFile": certs.ca}))
    assert srv.requests[0].user_agent == "ddup/1.0"


def test_each_https_check_makes_its_own_handshake(ddup, http_server, certs):
    # One check at a time, so every check runs on the same libcurl handle:
    # none may resume the TLS session of the check before it, or reuse its
    # connection, even to the same server and name.
    srv = http_server(tls=True)
    urls = [srv.url + f"/{i}" for i in range(4)]
    eps, _ = check(ddup, urls, top={"caFile": certs.ca, "maxParallel": 1})
    for ep in eps:
        assert_ok(ep)
    assert sorted(r.path for r in srv.requests) == sorted(f"/health/{i}" for i in range(4))
    assert srv.handshakes == [False] * 4, srv.handshakes


def test_https_our_ca_is_not_in_system_store(ddup, http_server):
    ep = check_one(ddup, http_server(tls=True))
    assert ep["lastResult"].startswith("TLS: "), ep
    assert ep["healthy"] is False


def test_https_self_signed_fails(ddup, http_server, certs):
    ep = check_one(ddup, http_server(tls=True, cert="selfsigned"), top={"caFile": certs.ca})
    assert ep["lastResult"].startswith("TLS: "), ep
    assert "self" in ep["lastResult"].lower(), ep
    assert ep["healthy"] is False


def test_https_expired_fails(ddup, http_server, certs):
    ep = check_one(ddup, http_server(tls=True, cert="expired"), top={"caFile": certs.ca})
    assert ep["lastResult"].startswith("TLS: "), ep
    assert "expired" in ep["lastResult"], ep
    assert ep["healthy"] is False


def test_https_wrong_name_fails(ddup, http_server, certs):
    # other.test's certificate, reached as 127.0.0.1.
    srv = http_server(tls=True, cert="other")
    ep = check_one(ddup, srv, top={"caFile": certs.ca})
    assert ep["lastResult"].startswith("TLS: "), ep
    assert ep["healthy"] is False
    assert srv.requests == []


def test_https_host_verifies_against_host(ddup, http_server, certs):
    srv = http_server(tls=True, cert="other")
    ep = check_one(ddup, {"url": srv.url, "host": "other.test"}, top={"caFile": certs.ca})
    assert_ok(ep)
    (req,) = srv.requests
    assert req.host == f"other.test:{srv.port}"
    assert req.path == "/health"


def test_https_host_mismatch_fails(ddup, http_server, certs):
    # The certificate is valid for 127.0.0.1, but `host` asks for other.test.
    srv = http_server(tls=True, cert="localhost")
    ep = check_one(ddup, {"url": srv.url, "host": "other.test"}, top={"caFile": certs.ca})
    assert ep["lastResult"].startswith("TLS: "), ep
    assert srv.requests == []


def test_http_host_header(ddup, http_server):
    srv = http_server(path="/ping?x=1")
    assert_ok(check_one(ddup, {"url": srv.url, "host": "app.example.test"}))
    (req,) = srv.requests
    assert req.host == f"app.example.test:{srv.port}"
    assert req.path == "/ping?x=1"


# ---------------------------------------------------------------- IPv6

ipv6 = pytest.mark.skipif(not has_ipv6(), reason="no IPv6 loopback")


@ipv6
def test_ipv6_literal_url(ddup, http_server):
    srv = http_server(family=6)
    assert srv.url.startswith("http://[::1]:")
    assert_ok(check_one(ddup, srv))
    assert srv.requests[0].host == f"[::1]:{srv.port}"


@ipv6
def test_ipv6_refused(ddup):
    assert_fail(check_one(ddup, f"http://[::1]:{free_port(6)}/"), "connection refused")


@ipv6
def test_ipv6_https_with_host(ddup, http_server, certs):
    srv = http_server(family=6, tls=True, cert="other")
    ep = check_one(ddup, {"url": srv.url, "host": "other.test"}, top={"caFile": certs.ca})
    assert_ok(ep)
    assert srv.requests[0].host == f"other.test:{srv.port}"


@ipv6
def test_ipv6_https_ip_san(ddup, http_server, certs):
    assert_ok(check_one(ddup, http_server(family=6, tls=True), top={"caFile": certs.ca}))
