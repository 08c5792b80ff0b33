"""The options of HTTP(S) checks (ddup.ini(5), DOMAINS: header, userAgent,
maxLatency), end to end through ddup-check against the suite's HTTP
servers (httpfix.py): what the server receives, a header's secret kept
out of every output, and a slow answer failed with its reason.

Most runs are dry runs (`--dry-run --json`, ddup-check(8)), which never
contact the provider; the one that writes state uses an `exec` provider
that accepts every change (/bin/true).
"""

import re
import time

import pytest

from conftest import TIME_SCALE

T = TIME_SCALE
ZONE = "example.test"
SECRET = "s3cr3t-Hdr-7f1c9a0b"
TOKEN = "tok-5e2d81aa94c3"


def config(domains, top=""):
    """INI text: domains is a list of (keys, [server, ...]); domain i is
    d{i}.example.test, its endpoints e{i}{j} (ips 192.0.2.x in order)."""
    out = [top, "", "[provider dns]", "type = exec", "command = /bin/true"]
    n = 0
    for i, (keys, servers) in enumerate(domains):
        out += ["", f"[domain d{i}.{ZONE}]", "provider = dns", keys]
        for j, srv in enumerate(servers):
            n += 1
            out += ["", f"[endpoint e{i}{j}]", f"url = {srv.url}", f"ip = 192.0.2.{n}"]
    return "\n".join(out) + "\n"


def dry(ddup, text, env=None):
    """The endpoints of a dry run, by name."""
    ddup.write(text)
    r = ddup.run("--dry-run", "--json", env=env)
    assert r.rc == 0, r
    return {e["name"]: e for d in r.json()["domains"] for e in d["endpoints"]}


def headers(req):
    return {k.lower(): v for k, v in req.headers.items()}


def test_headers_and_user_agent_reach_the_server(ddup, http_server):
    """The top's header and userAgent are every domain's; a domain's own
    header lines replace the top's; !env gives a whole line or a value."""
    top_srv, own_srv = http_server(), http_server()
    text = config([
        ("", [top_srv]),
        ("header = !env DDUP_TEST_WHOLE\n"
         "header = Authorization: !env DDUP_TEST_VALUE\n"
         "header = X-Plain:   spaced value\n"
         "userAgent = probe/2 (ops; +https://ops.example.test/)", [own_srv]),
    ], top="header = X-Top: top-value\nuserAgent = ddup-fleet/7")
    env = {"DDUP_TEST_WHOLE": f"X-Api-Key: {SECRET}", "DDUP_TEST_VALUE": f"Bearer {TOKEN}"}
    eps = dry(ddup, text, env)
    assert eps["e00"]["lastResult"] == "ok" and eps["e10"]["lastResult"] == "ok", eps

    (req,) = top_srv.requests
    h = headers(req)
    assert h["x-top"] == "top-value"
    assert req.user_agent == "ddup-fleet/7"
    assert "x-api-key" not in h and "authorization" not in h

    (req,) = own_srv.requests
    h = headers(req)
    assert h["x-api-key"] == SECRET
    assert h["authorization"] == f"Bearer {TOKEN}"
    assert h["x-plain"] == "spaced value"
    assert "x-top" not in h, "a domain's headers replace the top's"
    assert req.user_agent == "probe/2 (ops; +https://ops.example.test/)"


def test_default_user_agent_and_no_extra_header(ddup, http_server):
    srv = http_server()
    eps = dry(ddup, config([("", [srv])]))
    assert eps["e00"]["lastResult"] == "ok", eps
    (req,) = srv.requests
    assert req.user_agent == "ddup/1.0"
    assert not {"x-top", "x-api-key", "authorization"} & set(headers(req))


def test_headers_on_head_and_every_check(ddup, http_server):
    """method = HEAD carries them too, and every endpoint gets its own
    copy (the slots' lists are not shared or left over)."""
    servers = [http_server() for _ in range(5)]
    plain = http_server()
    text = config([("method = HEAD\nheader = X-One: 1\nheader = X-Two: 2", servers),
                   ("", [plain])], top="maxParallel = 2")
    eps = dry(ddup, text)
    assert all(e["lastResult"] == "ok" for e in eps.values()), eps
    for srv in servers:
        (req,) = srv.requests
        assert req.method == "HEAD"
        h = headers(req)
        assert h["x-one"] == "1" and h["x-two"] == "2"
    (req,) = plain.requests
    assert "x-one" not in headers(req), "a header was left over for the next check"


def test_header_secret_stays_out_of_every_output(ddup, http_server):
    """A header from !env is sent, and never shown: not in the log of a
    run (-v, passing and failing), --status --json, the state file, the
    dashboard or the metrics."""
    good, bad = http_server(), http_server(status=503, body=SECRET)
    html = str(ddup.dir / "status.html")
    metrics = str(ddup.dir / "metrics.prom")
    text = config([("header = !env DDUP_TEST_WHOLE\n"
                    "header = Authorization: !env DDUP_TEST_VALUE", [good, bad])],
                  top=f"statusHtml = {html}\nmetricsFile = {metrics}")
    env = {"DDUP_TEST_WHOLE": f"X-Api-Key: {SECRET}", "DDUP_TEST_VALUE": f"Bearer {TOKEN}"}
    ddup.write(text)
    outputs = []
    for _ in range(2):
        r = ddup.run("-v", env=env)
        assert r.rc == 0, r
        outputs += [r.out, r.err]
    assert headers(good.requests[-1])["x-api-key"] == SECRET
    st = ddup.run("--status", "--json", env=env)
    assert st.rc == 0, st
    eps = {e["name"]: e for d in st.json()["domains"] for e in d["endpoints"]}
    assert eps["e00"]["lastResult"] == "ok" and eps["e01"]["lastResult"] == "HTTP 503", eps
    outputs += [st.out, st.err, ddup.run("--status", env=env).out, ddup.state_dump()]
    for path in (html, metrics):
        with open(path) as f:
            outputs.append(f.read())
    for text in outputs:
        assert SECRET not in text and TOKEN not in text, text


@pytest.mark.serial
def test_max_latency_fails_a_slow_answer(ddup, http_server):
    """maxLatency (ddup.ini(5)): an answer that passes but comes later
    fails with `slow: N ms > M ms`; a fast one passes."""
    slow, fast = http_server(delay=0.6), http_server()
    t0 = time.monotonic()
    eps = dry(ddup, config([("maxLatency = 200ms\ntimeout = 3s", [slow, fast])]))
    wall = time.monotonic() - t0
    m = re.fullmatch(r"slow: (\d+) ms > 200 ms", eps["e00"]["lastResult"])
    assert m, eps["e00"]
    assert eps["e00"]["healthy"] is False
    assert 550 <= int(m.group(1)) < 600 + 1000 * T, eps["e00"]
    assert eps["e00"]["latencyMs"] == int(m.group(1))
    assert eps["e01"]["lastResult"] == "ok", eps["e01"]
    # The whole answer is waited for: not cut at maxLatency, nor at timeout.
    assert wall < 3 * T + 1, wall
    assert len(slow.requests) == 1


def test_max_latency_from_the_top_and_a_failure_first(ddup, http_server):
    """maxLatency at the top is every domain's; a check that fails for
    another reason keeps that reason."""
    slow = http_server(delay=0.4)
    down = http_server(status=503, delay=0.4)
    eps = dry(ddup, config([("", [slow, down])], top="maxLatency = 100ms"))
    assert re.fullmatch(r"slow: \d+ ms > 100 ms", eps["e00"]["lastResult"]), eps
    assert eps["e01"]["lastResult"] == "HTTP 503", eps
