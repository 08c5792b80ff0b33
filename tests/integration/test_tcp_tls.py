"""tcp:// and tls:// checks (ddup.ini(5), CHECK TYPES), end to end.

Listeners of the tests' own (streamfix.py: a banner, an echo, a hang, a
reset, TLS with the suite's test CA) and real services the suite runs
(PostgreSQL, BIND), each result read from `ddup-check --dry-run --json`.
"""

import time

import pytest

from certfix import iso, not_after
from conftest import TIME_SCALE
from httpfix import free_port, has_ipv6
from streamfix import *  # noqa: F401,F403  (fixtures)
from streamfix import SPLIT_S

T = TIME_SCALE
ZONE = "example.test"


def config(endpoints, top=None, **domain):
    """One domain; endpoints are urls or dicts of an endpoint's keys."""
    lines = [f"{k} = {v}" for k, v in (top or {}).items()]
    lines += ["", "[provider dns]", "type = rfc2136", "server = 127.0.0.1:9", f"zone = {ZONE}",
              "", f"[domain app.{ZONE}]", "provider = dns"]
    lines += [f"{k} = {v}" for k, v in domain.items()]
    for i, ep in enumerate(endpoints):
        if not isinstance(ep, dict):
            ep = {"url": ep}
        lines += ["", f"[endpoint e{i}]", f"ip = 192.0.2.{i % 250 + 1}" if i < 250 else
                  f"ip = 198.51.100.{i - 249}"]
        lines += [f"{k} = {v}" for k, v in ep.items()]
    return "\n".join(lines) + "\n"


def check(ddup, endpoints, top=None, **domain):
    """Runs the checks; returns (the endpoints' results in order, wall seconds)."""
    domain.setdefault("timeout", "3s")
    ddup.write(config(endpoints, top, **domain))
    t0 = time.monotonic()
    r = ddup.run("--dry-run", "--json")
    wall = time.monotonic() - t0
    assert r.rc == 0, r
    (dom,) = [d for d in r.json()["domains"] if d["name"].rstrip(".") == f"app.{ZONE}"]
    by_name = {e["name"]: e for e in dom["endpoints"]}
    return [by_name[f"e{i}"] for i in range(len(endpoints))], wall


def one(ddup, endpoint, top=None, **domain):
    eps, _ = check(ddup, [endpoint], top, **domain)
    return eps[0]


def result(ep):
    return ep["lastResult"]


def test_connect_passes_and_closes(ddup, stream_server, http_server):
    srv = stream_server("hang")
    slow = http_server()
    slow.set(delay=1.5)
    t0 = time.monotonic()
    eps, _ = check(ddup, [srv.url, slow.url])
    t_end = time.monotonic()
    assert result(eps[0]) == "ok" and eps[0]["healthy"] is True
    assert len(srv.conns) == 1 and srv.conns[0].got == b""
    # Closed once made, not when the run ends (the HTTP check holds it 1.5 s).
    deadline = time.monotonic() + 5
    while srv.conns[0].eof_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.conns[0].eof_at is not None
    assert srv.conns[0].eof_at - t0 < t_end - t0 - 0.5


def test_refused(ddup):
    assert result(one(ddup, f"tcp://127.0.0.1:{free_port()}")) == "connection refused"
    assert result(one(ddup, f"tls://127.0.0.1:{free_port()}/")) == "connection refused"


def test_unresolvable(ddup):
    ep = one(ddup, "tcp://no-such-host.invalid:25")
    assert result(ep) == "could not resolve host no-such-host.invalid"


@pytest.mark.parametrize("keys", [{"expect": "220 "}, {"send": r"PING\r\n", "expect": "+PONG"}])
def test_hang_is_timeout(ddup, stream_server, keys):
    srv = stream_server("hang")
    eps, wall = check(ddup, [dict(url=srv.url, **keys)], timeout="1s")
    assert result(eps[0]) == "timeout"
    assert 0.9 <= wall < 3 * T
    if "send" in keys:
        assert srv.conns[0].got == b"PING\r\n"


def test_banner_across_two_writes(ddup, stream_server):
    srv = stream_server("split")
    ep = one(ddup, {"url": srv.url, "expect": "220 mail ESMTP"})
    assert result(ep) == "ok"
    # The latency is until the text came, the second write SPLIT_S on.
    assert SPLIT_S * 1000 - 20 <= ep["latencyMs"] < 3000 * T


def test_banner_at_once(ddup, stream_server):
    srv = stream_server("banner")
    ep = one(ddup, {"url": srv.url, "expect": "220 "})
    assert result(ep) == "ok" and ep["latencyMs"] < 1000 * T


@pytest.mark.parametrize("mode,keys", [
    ("bye", {"expect": "+PONG"}),                               # closed without it
    ("echo", {"send": r"PONG\r\n", "expect": "+PONG"}),         # -ERR, closed
    ("chatter", {"expect": "220 "}),                            # 4 KiB without it
])
def test_expected_text_not_received(ddup, stream_server, mode, keys):
    srv = stream_server(mode)
    eps, wall = check(ddup, [dict(url=srv.url, **keys)], timeout="5s")
    assert result(eps[0]) == "expected text not received"
    # Said at once, not at the timeout.
    assert wall < 4 * T


def test_send_and_expect(ddup, stream_server):
    srv = stream_server("echo")
    ep = one(ddup, {"url": srv.url, "send": r"PING\r\n", "expect": "+PONG"})
    assert result(ep) == "ok"
    assert srv.conns[0].got == b"PING\r\n"


def test_send_alone(ddup, stream_server):
    """send's escapes reach the server byte for byte, a NUL among them."""
    srv = stream_server("hang")
    ep = one(ddup, {"url": srv.url, "send": r"QUIT\x0d\n\x00\t\\x\xff"})
    assert result(ep) == "ok"
    # The server's thread may record the connection after the run ends.
    deadline = time.monotonic() + 5
    while (not srv.conns or srv.conns[0].eof_at is None) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.conns and srv.conns[0].got == b"QUIT\r\n\x00\t\\x\xff"


def test_max_latency_counts_until_the_text(ddup, stream_server):
    srv = stream_server("split")
    limit = int(SPLIT_S * 800)      # after the first write, before the second
    ep = one(ddup, {"url": srv.url, "expect": "ESMTP"}, maxLatency=f"{limit}ms")
    assert result(ep).startswith("slow: ") and result(ep).endswith(f" ms > {limit} ms"), ep
    ep = one(ddup, {"url": srv.url, "expect": "220"}, maxLatency=f"{limit}ms")
    assert result(ep) == "ok"


def test_reset(ddup, stream_server):
    srv = stream_server("reset")
    assert result(one(ddup, {"url": srv.url, "expect": "220 "})) == "connection reset"


def test_many_wait_together(ddup, stream_server):
    """Fifty checks that wait for a banner that never comes time out together:
    the loop waits on their sockets, one check never holds up another."""
    srv = stream_server("hang")
    good = stream_server("banner")
    eps, wall = check(ddup, [{"url": srv.url, "expect": "220 "}] * 50 +
                      [{"url": good.url, "expect": "220 "}], timeout="1s")
    assert [result(e) for e in eps] == ["timeout"] * 50 + ["ok"]
    assert wall < 4 * T


# ------------------------------------------------------------------ TLS

def test_tls_good_with_cafile(ddup, stream_server, certs):
    srv = stream_server("banner", tls="localhost")
    ep = one(ddup, {"url": srv.url, "expect": "220 mail"}, top={"caFile": certs.ca})
    assert result(ep) == "ok"
    ep = one(ddup, srv.url, top={"caFile": certs.ca})
    assert result(ep) == "ok"


def test_tls_records_the_certificate(ddup, stream_server, certs):
    """certExpires: the notAfter of a tls:// server's certificate, after a
    check that failed on expect too; none for tcp://."""
    tls = stream_server("banner", tls="localhost")
    bye = stream_server("bye", tls="localhost")
    plain = stream_server("banner")
    eps, _ = check(ddup, [tls.url, {"url": bye.url, "expect": "nope"}, plain.url],
                   top={"caFile": certs.ca}, timeout=f"{int(3 * T)}s")
    want = iso(not_after(certs.cert("localhost")))
    assert [result(e) for e in eps] == ["ok", "expected text not received", "ok"]
    assert eps[0]["certExpires"] == want and eps[1]["certExpires"] == want
    assert "certExpires" not in eps[2]


def test_tls_send_over_tls(ddup, stream_server, certs):
    srv = stream_server("echo", tls="localhost")
    ep = one(ddup, {"url": srv.url, "send": r"PING\n", "expect": "+PONG"},
             top={"caFile": certs.ca})
    assert result(ep) == "ok"
    assert srv.conns[0].got == b"PING\n"


def test_tls_not_trusted_without_cafile(ddup, stream_server):
    srv = stream_server("banner", tls="localhost")
    r = result(one(ddup, srv.url))
    assert r.startswith("TLS: ") and "certificate" in r, r


@pytest.mark.parametrize("cert", ["selfsigned", "expired", "other"])
def test_tls_bad_cert(ddup, stream_server, certs, cert):
    srv = stream_server("banner", tls=cert)
    r = result(one(ddup, srv.url, top={"caFile": certs.ca}))
    assert r.startswith("TLS: "), r
    if cert == "other":
        assert "127.0.0.1" in r or "name" in r, r


def test_tls_host_is_the_name(ddup, stream_server, certs):
    """host: the name sent and verified, the connection to the url's address."""
    srv = stream_server("banner", tls="other")
    ep = one(ddup, {"url": srv.url, "host": "other.test", "expect": "220 "},
             top={"caFile": certs.ca})
    assert result(ep) == "ok"
    ep = one(ddup, {"url": srv.url, "host": "wrong.test"}, top={"caFile": certs.ca})
    assert result(ep).startswith("TLS: "), ep
    assert "wrong.test" in result(ep)


def test_tls_to_plain_tcp(ddup, stream_server, certs):
    srv = stream_server("banner")
    r = result(one(ddup, f"tls://127.0.0.1:{srv.port}", top={"caFile": certs.ca}))
    assert r.startswith("TLS: "), r


def test_tls_handshake_hangs(ddup, stream_server, certs):
    srv = stream_server("hang")     # accepts, never says a word of TLS
    eps, wall = check(ddup, [f"tls://127.0.0.1:{srv.port}"], top={"caFile": certs.ca},
                      timeout="1s")
    assert result(eps[0]) == "timeout"
    assert wall < 3 * T


# ------------------------------------------------------------------ IPv6

@pytest.mark.skipif(not has_ipv6(), reason="no IPv6 loopback")
def test_ipv6(ddup, stream_server, certs):
    plain = stream_server("banner", family=6)
    tls = stream_server("banner", tls="localhost", family=6)
    assert plain.url.startswith("tcp://[::1]:")
    eps, _ = check(ddup, [{"url": plain.url, "expect": "220 "},
                          {"url": tls.url, "expect": "220 "},
                          f"tcp://[::1]:{free_port(family=6)}"],
                   top={"caFile": certs.ca})
    assert [result(e) for e in eps] == ["ok", "ok", "connection refused"]


# ---------------------------------------------------- real services

def test_postgresql_port(ddup, pg_server):
    """The suite's PostgreSQL: its port, and its answer to an SSLRequest
    (length 8, code 80877103): one byte, N as its TLS is off.  Waiting
    for an S that never comes ends at the timeout, PostgreSQL holding the
    connection for the startup message."""
    eps, _ = check(ddup, [
        f"tcp://127.0.0.1:{pg_server.port}",
        {"url": f"tcp://127.0.0.1:{pg_server.port}", "send": r"\x00\x00\x00\x08\x04\xd2\x16\x2f",
         "expect": "N"},
        {"url": f"tcp://127.0.0.1:{pg_server.port}", "send": r"\x00\x00\x00\x08\x04\xd2\x16\x2f",
         "expect": "S"},
    ], timeout="1s")
    assert [result(e) for e in eps] == ["ok", "ok", "timeout"]


def test_bind_tcp_port(ddup, bind_server):
    eps, _ = check(ddup, [f"tcp://127.0.0.1:{bind_server.port}",
                          f"tls://127.0.0.1:{bind_server.port}"], timeout="2s")
    assert result(eps[0]) == "ok"
    assert result(eps[1]).startswith("TLS: ") or result(eps[1]) == "timeout"


# ------------------------------------------------------------ configuration

@pytest.mark.parametrize("url,msg", [
    ("tcp://127.0.0.1", "tcp:// needs a port"),
    ("tcp://127.0.0.1:0", "bad port (1-65535)"),
    ("tls://127.0.0.1:70000", "bad port (1-65535)"),
    ("tcp://127.0.0.1:25/smtp", "nothing may follow the port"),
    ("tcp://127.0.0.1:25?x", "no query or fragment"),
    ("tcp://[::1:25", "bad IPv6 address"),
])
def test_bad_url(ddup, url, msg):
    ddup.write(config([url]))
    r = ddup.run("--dry-run")
    assert r.rc == 2, r
    # The url's line as written (a PostgreSQL state adds lines above it).
    with open(ddup.config) as f:
        line = next(i for i, l in enumerate(f, 1) if l.strip() == f"url = {url}")
    assert f"ddup.ini:{line}: bad url '{url}': " in r.err and msg in r.err, r.err
