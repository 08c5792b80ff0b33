"""The failover rules (ddup-check(8), FAILOVER RULES) case by case, run step
by step against a real BIND.

Each endpoint is a real HTTP server on loopback; the address it stands
for in DNS is a documentation address. Every step sets which servers
answer 200, runs ddup-check once, and asks BIND what it serves.
"""

import subprocess

ZONE = "example.test"
NAME = "app.example.test"


def nsupdate(bind, *lines):
    """Changes the zone behind ddup's back, as an operator would."""
    script = f"server 127.0.0.1 {bind.port}\nzone {ZONE}\n" + "\n".join(lines) + "\nsend\n"
    subprocess.run(["nsupdate", "-y", f"{bind.key_alg}:{bind.key_name}:{bind.key_secret}"],
                   input=script, text=True, check=True, timeout=30)


def provider_section(bind, name="bind"):
    return f"""
[provider {name}]
type = rfc2136
server = 127.0.0.1:{bind.port}
zone = {ZONE}
keyName = {bind.key_name}
keyAlgorithm = {bind.key_alg}
keySecret = {bind.key_secret}
"""


def write_config(ddup, bind, eps, domain_keys=""):
    """eps: list of (name, server, ip, priority)."""
    text = "interval = 30s\n" + provider_section(bind)
    text += f"\n[domain {NAME}]\nprovider = bind\nttl = 60\n{domain_keys}\n"
    for name, srv, ip, prio in eps:
        text += f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    ddup.write(text)


def play(ddup, bind, servers, steps):
    """steps: (up, want_a, want_aaaa, rc, states); up is a string of 1/0
    per server; states (optional) the endpoints' states after the run."""
    for i, (up, want_a, want_aaaa, states) in enumerate(steps, 1):
        for srv, u in zip(servers, up):
            srv.set(status=200 if u == "1" else 503)
        r = ddup.run()
        assert r.rc == 0, f"step {i}: {r}"
        assert bind.query(NAME, "A") == sorted(want_a), f"step {i}: {r}"
        if want_aaaa is not None:
            assert bind.query(NAME, "AAAA") == sorted(want_aaaa), f"step {i}"
        if states is not None:
            st = ddup.status()["domains"][0]
            got = " ".join(e["state"] for e in st["endpoints"])
            assert got == states, f"step {i}: {got!r} != {states!r}"


def test_primary_backup_recover_after_3(ddup, bind_server, http_server):
    p, b = http_server(), http_server()
    write_config(ddup, bind_server, [("primary", p, "192.0.2.1", 0),
                                     ("backup", b, "192.0.2.2", 10)],
                 "recoverAfter = 3\n")
    play(ddup, bind_server, [p, b], [
        ("11", ["192.0.2.1"], None, "active standby"),
        ("01", ["192.0.2.1"], None, "failing standby"),
        ("01", ["192.0.2.2"], None, "down active"),
        ("11", ["192.0.2.2"], None, "recovering active"),
        ("11", ["192.0.2.2"], None, "recovering active"),
        ("11", ["192.0.2.1"], None, "active standby"),
    ])
    st = ddup.status()["domains"][0]
    assert st["status"] == "healthy"
    assert st["tier"] == 0
    assert st["published"] == ["192.0.2.1"]


def test_primary_stopped_and_started(ddup, bind_server, http_server):
    """Connection refused (server gone), not only a bad status."""
    p, b = http_server(), http_server()
    write_config(ddup, bind_server, [("primary", p, "192.0.2.1", 0),
                                     ("backup", b, "192.0.2.2", 1)],
                 "attempts = 1\n")
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    p.stop()
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    ep = ddup.status()["domains"][0]["endpoints"][0]
    assert ep["lastResult"] == "connection refused"
    assert ep["state"] == "down" and not ep["published"]
    p.start()
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]


def test_two_locations_two_servers_each(ddup, bind_server, http_server):
    s = [http_server() for _ in range(4)]
    write_config(ddup, bind_server, [
        ("a1", s[0], "192.0.2.11", 0), ("a2", s[1], "192.0.2.12", 0),
        ("b1", s[2], "198.51.100.21", 10), ("b2", s[3], "198.51.100.22", 10)])
    play(ddup, bind_server, s, [
        ("1111", ["192.0.2.11", "192.0.2.12"], None, "active active standby standby"),
        ("0111", ["192.0.2.11", "192.0.2.12"], None, "failing active standby standby"),
        ("0111", ["192.0.2.12"], None, "down active standby standby"),
        ("0011", ["192.0.2.12"], None, "down failing standby standby"),
        ("0011", ["198.51.100.21", "198.51.100.22"], None, "down down active active"),
        ("1011", ["192.0.2.11"], None, "active down standby standby"),
        ("1111", ["192.0.2.11", "192.0.2.12"], None, "active active standby standby"),
    ])


def test_three_levels(ddup, bind_server, http_server):
    s = [http_server() for _ in range(3)]
    write_config(ddup, bind_server, [("l0", s[0], "192.0.2.1", 0),
                                     ("l10", s[1], "192.0.2.2", 10),
                                     ("l100", s[2], "192.0.2.3", 100)],
                 "attempts = 1\n")
    play(ddup, bind_server, s, [
        ("111", ["192.0.2.1"], None, None),
        ("011", ["192.0.2.2"], None, "down active standby"),
        ("001", ["192.0.2.3"], None, "down down active"),
        ("011", ["192.0.2.2"], None, "down active standby"),
        ("111", ["192.0.2.1"], None, "active standby standby"),
    ])


def test_all_endpoints_down_leaves_dns(ddup, bind_server, http_server):
    s = [http_server(), http_server()]
    write_config(ddup, bind_server, [("p", s[0], "192.0.2.1", 0),
                                     ("b", s[1], "192.0.2.2", 10)],
                 "attempts = 1\n")
    assert ddup.run().rc == 0
    serial = bind_server.serial()
    for srv in s:
        srv.set(status=500)
    r = ddup.run()
    assert r.rc == 0, r
    assert "no healthy endpoint" in r.err
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.serial() == serial
    st = ddup.status()["domains"][0]
    assert st["status"] == "unhealthy"
    assert st["published"] == ["192.0.2.1"]
    assert [e["state"] for e in st["endpoints"]] == ["down", "down"]
    assert st["endpoints"][0]["published"] is True
    # Said once, not on every run while it stays so.
    r = ddup.run()
    assert r.rc == 0 and r.err == "", r
    assert bind_server.serial() == serial
    # The backup comes back first.
    s[1].set(status=200)
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]


def test_round_robin_without_priorities(ddup, bind_server, http_server):
    s = [http_server() for _ in range(3)]
    write_config(ddup, bind_server, [(f"rr{i}", s[i], f"192.0.2.{i + 1}", 0)
                                     for i in range(3)])
    play(ddup, bind_server, s, [
        ("111", ["192.0.2.1", "192.0.2.2", "192.0.2.3"], None, "active active active"),
        ("101", ["192.0.2.1", "192.0.2.2", "192.0.2.3"], None, "active failing active"),
        ("101", ["192.0.2.1", "192.0.2.3"], None, "active down active"),
        ("111", ["192.0.2.1", "192.0.2.2", "192.0.2.3"], None, "active active active"),
    ])


def test_first_run(ddup, bind_server, http_server):
    """A first failing check is not healthy; the next pass is."""
    s = [http_server(), http_server()]
    write_config(ddup, bind_server, [("p", s[0], "192.0.2.1", 0),
                                     ("b", s[1], "192.0.2.2", 10)])
    play(ddup, bind_server, s, [
        ("01", ["192.0.2.2"], None, "down active"),
        ("11", ["192.0.2.1"], None, "active standby"),
    ])


def test_mixed_families_failover_empties_aaaa(ddup, bind_server, http_server):
    s = [http_server() for _ in range(3)]
    write_config(ddup, bind_server, [("v4", s[0], "192.0.2.1", 0),
                                     ("v6", s[1], "2001:db8::1", 0),
                                     ("backup", s[2], "198.51.100.7", 10)],
                 "attempts = 1\n")
    play(ddup, bind_server, s, [
        ("111", ["192.0.2.1"], ["2001:db8::1"], "active active standby"),
        ("001", ["198.51.100.7"], [], "down down active"),
        ("111", ["192.0.2.1"], ["2001:db8::1"], "active active standby"),
    ])
    st = ddup.status()["domains"][0]
    assert st["published"] == ["192.0.2.1", "2001:db8::1"]


def test_ipv4_only_domain_never_touches_aaaa(ddup, bind_server, http_server):
    nsupdate(bind_server, f"update add {NAME} 300 AAAA 2001:db8::99")
    s = [http_server()]
    write_config(ddup, bind_server, [("only", s[0], "192.0.2.1", 0)])
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.query(NAME, "AAAA") == ["2001:db8::99"]
