"""A CNAME tier through RFC 2136 against the real BIND (ddup.ini(5),
ENDPOINTS: cname): a load balancer's name in tier 0, addresses behind
it.  One UPDATE deletes the old type before it adds the new, so BIND
never holds a CNAME beside addresses, nor ignores the add."""

import subprocess

from test_failover import NAME, provider_section

LB = "lb.example.net"


def answer(bind, rtype):
    """[(type, data)] of BIND's answer for NAME, rtype (a CNAME answer
    to an A query shows as CNAME)."""
    p = subprocess.run(["dig", "+norec", "+noall", "+answer", "+time=2", "+tries=1",
                        "@127.0.0.1", "-p", str(bind.port), NAME, rtype],
                       capture_output=True, text=True, timeout=15, check=True)
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0] == NAME + ".":
            out.append((f[3], f[4]))
    return sorted(out)


def write(ddup, bind, lb, b1, b2):
    ddup.write(f"""interval = 30s
{provider_section(bind)}
[domain {NAME}]
provider = bind
ttl = 60
attempts = 1

[endpoint lb]
url = {lb.url}
cname = {LB}

[endpoint b1]
url = {b1.url}
ip = 192.0.2.2
priority = 10

[endpoint b2]
url = {b2.url}
ip = 2001:db8::2
priority = 10
""")


def test_cname_tier_and_back(ddup, bind_server, http_server):
    lb, b1, b2 = http_server(), http_server(), http_server()
    write(ddup, bind_server, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert answer(bind_server, "CNAME") == [("CNAME", LB + ".")]
    assert answer(bind_server, "A") == [("CNAME", LB + ".")]
    st = ddup.status()["domains"][0]
    assert st["published"] == [LB] and st["tier"] == 0

    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert answer(bind_server, "CNAME") == []
    assert answer(bind_server, "A") == [("A", "192.0.2.2")]
    assert answer(bind_server, "AAAA") == [("AAAA", "2001:db8::2")]

    updates = bind_server.update_count()
    assert ddup.run().rc == 0
    assert bind_server.update_count() == updates, "a steady run wrote DNS"

    lb.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert answer(bind_server, "A") == [("CNAME", LB + ".")]
    assert answer(bind_server, "AAAA") == [("CNAME", LB + ".")]
    assert ddup.status()["domains"][0]["published"] == [LB]


def test_cname_read_back_on_a_first_run(ddup, bind_server, http_server):
    """A first run reads what BIND holds: the CNAME already there is
    found the same, and nothing is written."""
    lb, b1, b2 = http_server(), http_server(), http_server()
    write(ddup, bind_server, lb, b1, b2)
    assert ddup.run().rc == 0
    updates = bind_server.update_count()
    ddup.state = str(ddup.dir / "fresh.db")      # a state that knows nothing
    write(ddup, bind_server, lb, b1, b2)
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.update_count() == updates, r
    assert answer(bind_server, "CNAME") == [("CNAME", LB + ".")]


def pdns_answer(pdns, rtype):
    p = subprocess.run(["dig", "+norec", "+noall", "+answer", "+time=2", "+tries=1",
                        "@127.0.0.1", "-p", str(pdns.dns_port), NAME, rtype],
                       capture_output=True, text=True, timeout=15, check=True)
    return sorted((f[3], f[4]) for f in (line.split() for line in p.stdout.splitlines())
                  if len(f) >= 5 and f[0] == NAME + ".")


def test_cname_tier_and_back_on_powerdns(ddup, pdns_server, http_server):
    """The same UPDATE messages against PowerDNS (unsigned, from loopback)."""
    lb, b1 = http_server(), http_server()
    ddup.write(f"""interval = 30s
[provider pdns]
type = rfc2136
server = 127.0.0.1:{pdns_server.dns_port}
zone = example.test

[domain {NAME}]
provider = pdns
ttl = 60
attempts = 1

[endpoint lb]
url = {lb.url}
cname = {LB}

[endpoint b1]
url = {b1.url}
ip = 192.0.2.2
priority = 10
""")
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_answer(pdns_server, "CNAME") == [("CNAME", LB + ".")]
    lb.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_answer(pdns_server, "CNAME") == []
    assert pdns_answer(pdns_server, "A") == [("A", "192.0.2.2")]
    lb.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_answer(pdns_server, "A") == [("CNAME", LB + ".")]
    assert ddup.status()["domains"][0]["published"] == [LB]
