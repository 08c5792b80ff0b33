"""Health endpoints that misbehave on purpose (ddup-check(8), HEALTH CHECKS).

Each test points ddup-check at a loopback server that never answers,
answers a byte a second, never stops sending, redirects in a circle,
speaks something that is not HTTP, resets the connection, or stalls a TLS
handshake, and reads every check's result from `ddup-check --dry-run
--json`.  A check must end within its timeout with the reason HEALTH
CHECKS (ddup-check(8)) gives, and a run must last about its longest timeout, not the sum of
them, also when the process may open only 256 files.

Time bounds are generous (a busy 2-core machine, sanitizer builds): they
tell "in parallel" from "one after the other", nothing finer.  Messages
name the unscaled figures.
"""

import subprocess
import time
from collections import Counter

import pytest

from conftest import DDUP, TIME_SCALE, Result

# Every test here bounds the run's wall time: alone, after the others.
pytestmark = pytest.mark.serial

ZONE = "example.test"
# Under valgrind (DDUP_TIME_SCALE=4) every timeout configured and every
# bound on time grow alike: the same checks, in slow motion.
T = TIME_SCALE


def sec(n):
    """A timeout of n seconds, scaled, as the configuration writes it."""
    return f"{n * T:g}s"


def config(domains, top=None):
    """INI text.  domains: list of (keys, endpoints) per domain
    app0.example.test, app1..., keys a dict of [domain] keys, endpoints a
    list of URLs or dicts with url (and host).  Endpoint names are
    d<domain>e<index>; addresses are unique across the file."""
    lines = [f"{k} = {v}" for k, v in (top or {}).items()]
    lines += ["", "[provider dns]", "type = rfc2136", "server = 127.0.0.1:9", f"zone = {ZONE}"]
    n = 0
    for d, (keys, eps) in enumerate(domains):
        lines += ["", f"[domain app{d}.{ZONE}]", "provider = dns"]
        lines += [f"{k} = {v}" for k, v in keys.items()]
        for i, ep in enumerate(eps):
            if isinstance(ep, str):
                ep = {"url": ep}
            elif not isinstance(ep, dict):
                ep = {"url": ep.url}    # an HttpServer
            lines += ["", f"[endpoint d{d}e{i}]", f"url = {ep['url']}",
                      f"ip = 10.{n // 62500}.{n // 250 % 250}.{n % 250 + 1}"]
            if ep.get("host"):
                lines.append(f"host = {ep['host']}")
            n += 1
    return "\n".join(lines) + "\n"


def dry_run(ddup, domains, top=None, nofile=None, timeout=120):
    """Writes the configuration and runs the checks once, under
    prlimit --nofile=nofile when given ("256" or "SOFT:HARD").  Returns
    (list per domain of endpoint results in file order, wall seconds)."""
    ddup.write(config(domains, top))
    cmd = [DDUP, "-c", ddup.config, "--dry-run", "--json"]
    if nofile is not None:
        cmd = ["prlimit", f"--nofile={nofile}", "--"] + cmd
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    r = Result(proc)
    assert r.rc == 0, r
    by_name = {d["name"].rstrip("."): d for d in r.json()["domains"]}
    out = []
    for d, (_, eps) in enumerate(domains):
        dom = by_name[f"app{d}.{ZONE}"]
        names = {e["name"]: e for e in dom["endpoints"]}
        out.append([names[f"d{d}e{i}"] for i in range(len(eps))])
    return out, wall


def one_domain(ddup, eps, top=None, nofile=None, **keys):
    keys.setdefault("timeout", sec(3))
    res, wall = dry_run(ddup, [(keys, eps)], top, nofile)
    return res[0], wall


def assert_ok(ep):
    assert (ep["lastResult"], ep["healthy"]) == ("ok", True), ep


def assert_fail(ep, reason=None, prefix=None):
    assert ep["healthy"] is False, ep
    if reason is not None:
        assert ep["lastResult"] == reason, ep
    if prefix is not None:
        assert ep["lastResult"].startswith(prefix), ep


def assert_timed_out(ep, timeout_ms):
    """Failed for want of time, after its whole timeout and not much more."""
    assert_fail(ep, "timeout")
    timeout_ms *= T
    assert 0.9 * timeout_ms <= ep["latencyMs"] < timeout_ms + 1500 * T, ep


# ---------------------------------------------------------------- never answers

def test_accepts_and_never_answers(ddup, raw_server):
    srv = raw_server("silent", count=10)
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(1))
    for ep in eps:
        assert_timed_out(ep, 1000)
    assert srv.conns == 10
    assert wall < 4 * T, f"10 silent endpoints with a 1s timeout took {wall:.1f}s"


def test_tls_handshake_stalls(ddup, raw_server, certs):
    # The TCP connection is accepted, the ClientHello read, never answered.
    srv = raw_server("tls_stall", count=3)
    assert srv.url.startswith("https://")
    eps, wall = one_domain(ddup, srv.urls, top={"caFile": certs.ca}, timeout=sec(1))
    for ep in eps:
        assert_timed_out(ep, 1000)
    assert srv.conns == 3
    assert wall < 4 * T, f"stalled TLS handshakes with a 1s timeout took {wall:.1f}s"


# ---------------------------------------------------------------- too slow, too much

def test_drips_a_byte_a_second(ddup, raw_server):
    # The whole answer is 60 bytes: it would take a minute.
    head = raw_server("drip", count=2)
    # Status and headers at once, the 20-byte body a byte a second.
    body = raw_server("drip_body", count=2)
    eps, wall = one_domain(ddup, head.urls + body.urls, timeout=sec(2))
    for ep in eps:
        assert_timed_out(ep, 2000)
    assert wall < 6 * T, f"dripping endpoints with a 2s timeout took {wall:.1f}s"


def test_endless_body_costs_64k(ddup, raw_server):
    # No Content-Length, "x" forever: reading stops after 64 KiB.
    srv = raw_server("endless_body", count=3)
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(5))
    for ep in eps:
        assert_ok(ep)
        assert ep["latencyMs"] < 2500 * T, ep
    assert wall < 4 * T, f"endless bodies took {wall:.1f}s"


def test_endless_body_expect_body_not_found(ddup, raw_server):
    srv = raw_server("endless_body")
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(5), expectBody="READY")
    assert_fail(eps[0], "HTTP 200: expected text not found")
    assert eps[0]["latencyMs"] < 2500 * T, eps[0]
    assert wall < 4 * T


def test_endless_headers_fail_before_the_timeout(ddup, raw_server):
    srv = raw_server("endless_headers")
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(10))
    assert eps[0]["healthy"] is False, eps[0]
    assert eps[0]["lastResult"] != "timeout", eps[0]
    assert "header" in eps[0]["lastResult"].lower(), eps[0]
    assert wall < 5 * T, f"endless headers took {wall:.1f}s with a 10s timeout"


def test_header_line_too_long_says_so(ddup, raw_server):
    # libcurl calls it "Out of memory": the check result says what it is.
    srv = raw_server("long_header")
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(10))
    assert_fail(eps[0], "response header too long")
    assert wall < 5 * T, f"a 2 MiB header line took {wall:.1f}s with a 10s timeout"


# ---------------------------------------------------------------- redirects

def test_redirect_loop_not_followed(ddup, http_server):
    # To itself, and a pair pointing at each other.
    self_loop = http_server(status=302)
    self_loop.set(headers={"Location": self_loop.url})
    a, b = http_server(status=301), http_server(status=307)
    a.set(headers={"Location": b.url})
    b.set(headers={"Location": a.url})
    eps, wall = one_domain(ddup, [self_loop, a, b], timeout=sec(2))
    assert_fail(eps[0], "HTTP 302")
    assert_fail(eps[1], "HTTP 301")
    assert_fail(eps[2], "HTTP 307")
    # One request each: nothing was followed.
    assert [len(s.requests) for s in (self_loop, a, b)] == [1, 1, 1]
    assert wall < 4 * T


def test_redirect_loop_passes_when_3xx_expected(ddup, http_server):
    srv = http_server(status=302)
    srv.set(headers={"Location": srv.url})
    eps, _ = one_domain(ddup, [srv], expectStatus="3xx")
    assert_ok(eps[0])
    assert len(srv.requests) == 1


# ---------------------------------------------------------------- not HTTP, resets

def test_garbage_instead_of_http(ddup, raw_server):
    srv = raw_server("garbage", count=2)
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(5))
    for ep in eps:
        assert_fail(ep, prefix="not an HTTP answer: ")
        assert ep["latencyMs"] < 2500 * T, ep
    assert wall < 4 * T


def test_garbage_instead_of_tls(ddup, raw_server, certs):
    # An https:// URL answered with bytes that are no TLS record.
    srv = raw_server("garbage")
    url = srv.url.replace("http://", "https://")
    eps, wall = one_domain(ddup, [url], top={"caFile": certs.ca}, timeout=sec(5))
    assert_fail(eps[0], prefix="TLS: ")
    assert wall < 4 * T


def test_reset_after_the_headers(ddup, raw_server):
    # A 200 head announcing 100000 bytes, 1000 of them, then a RST.
    srv = raw_server("reset_after_headers", count=2)
    eps, wall = one_domain(ddup, srv.urls, timeout=sec(5))
    for ep in eps:
        assert_fail(ep, "connection reset")
        assert ep["latencyMs"] < 2500 * T, ep
    assert wall < 4 * T


def test_reset_after_the_headers_head_passes(ddup, raw_server):
    # HEAD needs only the status line and headers, which arrived whole.
    srv = raw_server("reset_after_headers")
    eps, _ = one_domain(ddup, srv.urls, timeout=sec(5), method="HEAD")
    assert_ok(eps[0])


# ---------------------------------------------------------------- all together

def test_every_kind_at_once_lasts_the_longest_timeout(ddup, raw_server, http_server, certs):
    silent = raw_server("silent", count=4)
    stall = raw_server("tls_stall", count=4)
    drip = raw_server("drip", count=4)
    endless = raw_server("endless_body", count=4)
    garbage = raw_server("garbage", count=4)
    reset = raw_server("reset_after_headers", count=4)
    good = [http_server() for _ in range(4)]
    loop = http_server(status=302)
    loop.set(headers={"Location": loop.url})
    domains = [
        ({"timeout": sec(1)}, silent.urls + [g.url for g in good[:2]]),
        ({"timeout": sec(2)}, stall.urls + drip.urls + [loop.url]),
        ({"timeout": sec(3)}, endless.urls + garbage.urls + reset.urls
         + [g.url for g in good[2:]]),
    ]
    (d0, d1, d2), wall = dry_run(ddup, domains, top={"caFile": certs.ca})
    for ep in d0[:4]:
        assert_timed_out(ep, 1000)
    for ep in d0[4:]:
        assert_ok(ep)
    for ep in d1[:8]:
        assert_timed_out(ep, 2000)
    assert_fail(d1[8], "HTTP 302")
    reasons = Counter(ep["lastResult"].split(":")[0] for ep in d2)
    assert reasons == Counter({"ok": 6, "not an HTTP answer": 4, "connection reset": 4}), d2
    # The sum of the timeouts is 4 * 1 + 8 * 2 = 20s; the longest, 2s.
    assert wall < 6 * T, f"a run whose longest timeout is 2s took {wall:.1f}s"


# ---------------------------------------------------------------- file limit

def test_2000_endpoints_with_256_files(ddup, raw_server):
    """2000 endpoints, 20 of which never answer, when the process may
    open 256 files (soft and hard limit): every check gets its own
    connection and its own result, none fails for want of a descriptor."""
    ok = raw_server("ok", count=20)
    silent = raw_server("silent", count=20)
    urls = []
    for i in range(1980):
        urls.append(ok.urls[i % 20].replace("/health", f"/health/{i}"))
    for i, u in enumerate(silent.urls):
        urls.insert(100 * i + 50, u)
    eps, wall = one_domain(ddup, urls, nofile="256", timeout=sec(2))
    assert len(eps) == 2000
    results = Counter(ep["lastResult"] for ep in eps)
    assert results == Counter({"ok": 1980, "timeout": 20}), results
    for ep, url in zip(eps, urls):
        if url in silent.urls:
            assert_timed_out(ep, 2000)
        else:
            assert_ok(ep)
            assert ep["latencyMs"] < 2000 * T, ep
    # Each check once, on a connection of its own.
    assert sorted(ok.paths) == sorted(f"/health/{i}" for i in range(1980))
    assert ok.conns == 1980
    assert silent.conns == 20
    print(f"2000 checks under a 256-file limit: {wall:.2f}s")
    assert wall < 12 * T, f"2000 checks, the longest timeout 2s, took {wall:.1f}s"


def test_hard_file_limit_queues_checks_each_with_its_full_timeout(ddup, raw_server):
    # 256 files hold about 64 checks in flight: 200 silent endpoints go in
    # rounds, and a check waiting for its turn does not lose time for it.
    srv = raw_server("silent", count=200)
    eps, wall = one_domain(ddup, srv.urls, nofile="256", timeout=sec(1))
    for ep in eps:
        assert_timed_out(ep, 1000)
    assert srv.conns == 200
    assert wall >= 2.5 * T, f"200 checks in {wall:.1f}s: more in flight than 256 files allow?"


@pytest.mark.skipif(T > 1, reason="valgrind keeps the soft file limit where it found it")
def test_soft_file_limit_is_raised_for_the_checks(ddup, raw_server):
    # Soft limit 256, hard 4096: ddup raises its own soft limit, and the
    # 200 checks run all at once (maxParallel 256 by default).
    srv = raw_server("silent", count=200)
    eps, wall = one_domain(ddup, srv.urls, nofile="256:4096", timeout=sec(1))
    for ep in eps:
        assert_timed_out(ep, 1000)
    assert srv.conns == 200
    assert wall < 3.5 * T, f"200 silent endpoints with a 1s timeout took {wall:.1f}s"
