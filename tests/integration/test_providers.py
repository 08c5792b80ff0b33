"""The DNS providers through the built ddup-check, against real servers.

rfc2136 talks to a real BIND 9 (TSIG, TCP and UDP), powerdns to a real
PowerDNS Authoritative through its HTTP API; both are asked with dig what
they serve.  Health endpoints are loopback HTTP servers; the addresses
published are documentation addresses.
"""

import os
import subprocess

import pytest

ZONE = "example.test"
NAME = "app.example.test"


def bind_provider(bind, alg=None, secret=None, protocol=None, zone=ZONE, extra=""):
    alg = alg or bind.key_alg
    name, sec = bind.keys[alg]
    text = f"""
[provider dns]
type = rfc2136
server = 127.0.0.1:{bind.port}
zone = {zone}
keyName = {name}
keyAlgorithm = {alg}
keySecret = {secret or sec}
timeout = 3s
"""
    if protocol:
        text += f"protocol = {protocol}\n"
    return text + extra


def pdns_provider(pdns, key=None, zone=ZONE):
    return f"""
[provider dns]
type = powerdns
baseUrl = {pdns.api_url}
apiKey = {key or pdns.api_key}
zone = {zone}
timeout = 5s
"""


def configure(ddup, provider, eps, name=NAME, keys=""):
    """eps: (endpoint name, http server, ip, priority)."""
    text = "interval = 30s\n" + provider
    text += f"\n[domain {name}]\nprovider = dns\nttl = 60\nattempts = 1\n{keys}\n"
    for ep, srv, ip, prio in eps:
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    ddup.write(text)
    # Secrets are written literally here: keep the file private.
    os.chmod(ddup.config, 0o600)


def nsupdate(bind, *lines):
    script = f"server 127.0.0.1 {bind.port}\nzone {ZONE}\n" + "\n".join(lines) + "\nsend\n"
    subprocess.run(["nsupdate", "-y", f"{bind.key_alg}:{bind.key_name}:{bind.key_secret}"],
                   input=script, text=True, check=True, timeout=30)


def quiet_ok(r):
    assert (r.rc, r.out, r.err) == (0, "", ""), r


# ---------------------------------------------------------------- rfc2136


def test_rfc2136_first_run_writes_then_nothing(ddup, bind_server, http_server):
    a, b = http_server(), http_server()
    configure(ddup, bind_provider(bind_server), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    assert bind_server.query(NAME, "AAAA") == []
    serial, updates = bind_server.serial(), bind_server.update_count()
    assert updates == 1
    quiet_ok(ddup.run())
    assert bind_server.serial() == serial
    assert bind_server.update_count() == updates


def test_rfc2136_a_and_aaaa_in_one_update(ddup, bind_server, http_server):
    a, b = http_server(), http_server()
    configure(ddup, bind_provider(bind_server), [("v4", a, "192.0.2.1", 0), ("v6", b, "2001:db8::1", 0)])
    serial = bind_server.serial()
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.query(NAME, "AAAA") == ["2001:db8::1"]
    # One UPDATE message for both types: one serial step, one update.
    assert bind_server.update_count() == 1
    assert bind_server.serial() == serial + 1
    # The tier loses its IPv6 endpoint: AAAA is emptied, A stays.
    b.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "AAAA") == []
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.update_count() == 2


def test_rfc2136_wrong_secret_is_notauth(ddup, bind_server, http_server):
    a = http_server()
    secret = "d3Jvbmd3cm9uZ3dyb25nd3Jvbmd3cm9uZ3dyb25nMTI="
    configure(ddup, bind_provider(bind_server, secret=secret), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "NOTAUTH" in r.err and f"127.0.0.1:{bind_server.port}" in r.err, r
    assert secret not in r.out + r.err
    assert bind_server.query(NAME, "A") == []
    assert bind_server.update_count() == 0


def test_rfc2136_server_outage_then_recovery(ddup, bind_server, http_server):
    p, b = http_server(), http_server()
    configure(ddup, bind_provider(bind_server), [("p", p, "192.0.2.1", 0), ("b", b, "192.0.2.2", 10)])
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    bind_server.stop()
    p.set(status=503)
    r = ddup.run()
    assert r.rc == 1, r
    assert f"127.0.0.1:{bind_server.port}" in r.err, r
    bind_server.start()
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]


def test_rfc2136_first_run_finds_the_right_set(ddup, bind_server, http_server):
    nsupdate(bind_server, f"update add {NAME} 60 A 192.0.2.1", f"update add {NAME} 60 A 192.0.2.2")
    serial, updates = bind_server.serial(), bind_server.update_count()
    a, b = http_server(), http_server()
    configure(ddup, bind_provider(bind_server), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.serial() == serial
    assert bind_server.update_count() == updates
    assert bind_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]


def test_rfc2136_first_run_replaces_a_different_set(ddup, bind_server, http_server):
    nsupdate(bind_server, f"update add {NAME} 60 A 203.0.113.9", f"update add {NAME} 60 AAAA 2001:db8::9")
    a = http_server()
    configure(ddup, bind_provider(bind_server), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    # Only the managed type is touched: no IPv6 endpoint, AAAA left alone.
    assert bind_server.query(NAME, "AAAA") == ["2001:db8::9"]


@pytest.mark.parametrize("alg,protocol", [("hmac-sha512", None), ("hmac-sha512", "udp"),
                                          ("hmac-sha1", "tcp"), ("hmac-sha256", "udp")])
def test_rfc2136_algorithms_and_transports(ddup, bind_server, http_server, alg, protocol):
    a, b = http_server(), http_server()
    configure(ddup, bind_provider(bind_server, alg=alg, protocol=protocol),
              [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.query(NAME, "AAAA") == ["2001:db8::1"]
    serial = bind_server.serial()
    quiet_ok(ddup.run())
    assert bind_server.serial() == serial


def test_rfc2136_too_many_addresses_for_udp(ddup, bind_server, http_server):
    srv = http_server()
    eps = [(f"e{i}", srv, f"192.0.2.{i + 1}", 0) for i in range(40)]
    configure(ddup, bind_provider(bind_server, protocol="udp"), eps)
    r = ddup.run()
    assert r.rc == 1, r
    assert "protocol = tcp" in r.err, r
    assert bind_server.update_count() == 0
    # Over TCP the same set fits in one message.
    configure(ddup, bind_provider(bind_server), eps)
    r = ddup.run()
    assert r.rc == 0, r
    assert len(bind_server.query(NAME, "A")) == 40


def test_rfc2136_zone_not_served(ddup, bind_server, http_server):
    a = http_server()
    configure(ddup, bind_provider(bind_server, zone="other.test"), [("a", a, "192.0.2.1", 0)],
              name="app.other.test")
    r = ddup.run()
    assert r.rc == 1, r
    assert "other.test" in r.err and "REFUSED" in r.err, r


@pytest.mark.parametrize("key,value,words", [
    ("keyAlgorithm", "hmac-md5", "hmac-md5"),
    ("keySecret", "not*base64", "base64"),
    ("protocol", "sctp", "sctp"),
    ("timeout", "soon", "soon"),
    ("server", "[::1", "server"),
])
def test_rfc2136_bad_values_are_config_errors(ddup, bind_server, http_server, key, value, words):
    a = http_server()
    text = bind_provider(bind_server)
    lines = [ln for ln in text.splitlines() if not ln.startswith(key + " ")]
    configure(ddup, "\n".join(lines) + f"\n{key} = {value}\n", [("a", a, "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert words in r.err, r
    if key == "keySecret":
        assert value not in r.err
    r = ddup.run()
    assert r.rc == 2, r
    assert bind_server.update_count() == 0


# ---------------------------------------------------------------- powerdns


def test_powerdns_first_write_then_nothing(ddup, pdns_server, http_server):
    a, b = http_server(), http_server()
    configure(ddup, pdns_provider(pdns_server), [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)])
    serial = pdns_server.serial()
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]
    assert pdns_server.query(NAME, "AAAA") == ["2001:db8::1"]
    # One PATCH for both types: the serial moved once.
    assert pdns_server.serial() == serial + 1
    serial = pdns_server.serial()
    quiet_ok(ddup.run())
    assert pdns_server.serial() == serial
    # The IPv6 endpoint fails: AAAA is deleted, A stays.
    b.set(status=503)
    assert ddup.run().rc == 0
    assert pdns_server.query(NAME, "AAAA") == []
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]


def test_powerdns_first_run_finds_the_right_set(ddup, pdns_server, http_server):
    st, _ = pdns_server.api("PATCH", f"/api/v1/servers/localhost/zones/{ZONE}.", {"rrsets": [
        {"name": NAME + ".", "type": "A", "ttl": 60, "changetype": "REPLACE",
         "records": [{"content": "192.0.2.1", "disabled": False},
                     {"content": "192.0.2.99", "disabled": True}]}]})
    assert st == 204
    serial = pdns_server.serial()
    a = http_server()
    configure(ddup, pdns_provider(pdns_server), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_server.serial() == serial
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]


def test_powerdns_bad_api_key(ddup, pdns_server, http_server):
    a = http_server()
    key = "wrong-" + pdns_server.api_key
    configure(ddup, pdns_provider(pdns_server, key=key), [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "401" in r.err and pdns_server.api_url in r.err, r
    assert key not in r.out + r.err
    assert pdns_server.api_key not in r.out + r.err
    assert pdns_server.query(NAME, "A") == []


def test_powerdns_unknown_zone(ddup, pdns_server, http_server):
    a = http_server()
    configure(ddup, pdns_provider(pdns_server, zone="other.test"), [("a", a, "192.0.2.1", 0)],
              name="app.other.test")
    r = ddup.run()
    assert r.rc == 1, r
    assert "404" in r.err and "other.test" in r.err, r


def test_powerdns_outage_then_recovery(ddup, pdns_server, http_server):
    p, b = http_server(), http_server()
    configure(ddup, pdns_provider(pdns_server), [("p", p, "192.0.2.1", 0), ("b", b, "192.0.2.2", 10)])
    assert ddup.run().rc == 0
    pdns_server.stop()
    p.set(status=503)
    r = ddup.run()
    assert r.rc == 1, r
    assert pdns_server.api_url in r.err, r
    pdns_server.start()
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_server.query(NAME, "A") == ["192.0.2.2"]


@pytest.mark.parametrize("line,words", [
    ("baseUrl = ftp://127.0.0.1:1", "baseUrl"),
    ("baseUrl = http://user:pw@127.0.0.1:1", "password"),
    ("timeout = never", "never"),
])
def test_powerdns_bad_values_are_config_errors(ddup, http_server, line, words):
    a = http_server()
    key = line.split()[0]
    text = "\n[provider dns]\ntype = powerdns\nbaseUrl = http://127.0.0.1:1\napiKey = k\nzone = example.test\n"
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith(key + " ")) + "\n" + line + "\n"
    configure(ddup, text, [("a", a, "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert words in r.err, r
    assert "pw@" not in r.err
