"""Reads of many records, through the built ddup-check against the fakes of
DigitalOcean, Hetzner, Cloudflare and an exec program: records of other names and
types (a zone of 100,000 records, an API that does not filter) are passed
over as they arrive and never touched; more than RRSET_READ_MAX (1000)
records of the name and a managed type fail the read with one short line
that names the limit, exit 1 and nothing written; and either takes
seconds, not the minutes of a set built by insertion.

The CPU bound is generous (the machine may be loaded): what it catches is
the quadratic read, which took minutes."""

import ipaddress
import random
import resource
import time

from conftest import TIME_SCALE
from providertest import NAME, configure, state_error
from test_cloudflare import cf_provider
from test_cloudflare import configure as cf_configure
from test_digitalocean import section as do_section
from test_exec import Program
from test_exec import configure as exec_configure
from test_hetzner import section as hz_section

CPU_MAX = 30 * TIME_SCALE       # seconds of ddup-check's CPU for one run
WALL_MAX = 120 * TIME_SCALE     # the fakes' Python too, on a loaded machine
LINE_MAX = 1000                 # a log line or stored error, in bytes
# A provider's timeout bounds its whole read: here as long as the run may
# take, since what these tests bound is CPU, not the fakes' answers under
# a loaded machine and a sanitizer.
TIMEOUT = f"timeout = {WALL_MAX:g}s\n"


def timed_run(ddup):
    """The run, its CPU seconds and its wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = ddup.run(timeout=2 * WALL_MAX / TIME_SCALE)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"ddup-check: {cpu:.2f}s CPU, {wall:.2f}s wall")
    return r, cpu, wall


def addresses(n, seed=1):
    """n distinct IPv4 addresses of 10/8, in no order."""
    rnd = random.Random(seed)
    return [str(ipaddress.IPv4Address(0x0A000000 + i))
            for i in rnd.sample(range(1, 1 << 24), n)]


def assert_short(r, ddup):
    for line in r.err.splitlines():
        assert len(line) < LINE_MAX, line[:200]
    err = state_error(ddup)
    assert err is None or len(err) < LINE_MAX, err[:200]


def assert_over_limit(r, ddup):
    assert r.rc == 1, r
    assert "more than 1000 A records" in r.err, r
    assert "provider dns" in r.err, r
    assert "more than 1000 A records" in state_error(ddup)
    assert_short(r, ddup)


# ------------------------------------------------------------ DigitalOcean

def test_digitalocean_zone_of_100000_other_records(ddup, digitalocean, http_server):
    do = digitalocean
    # The API lists the whole zone, 20,000 a page: other names, and the
    # name's own records of types ddup does not manage here.
    do.unfiltered = True
    do.page_size = 20000
    others = [("A", f"h{i}", a, 300) for i, a in enumerate(addresses(99000))]
    others += [("TXT", "app", f"v=spf1 ip4:10.0.0.{i % 250} -all", 300) for i in range(500)]
    others += [("AAAA", "app", f"2001:db8::{i + 1:x}", 300) for i in range(500)]
    do.add_many(others)
    do.add("A", "app", "192.0.2.1", ttl=60)
    stale = do.add("A", "app", "203.0.113.9", ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, do_section(do, extra=TIMEOUT), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r, cpu, wall = timed_run(ddup)
    assert r.rc == 0, r
    assert do.get("A", "app") == [("192.0.2.1", 60), ("192.0.2.2", 60)]
    # Only the name's A records changed: not one call for the others.
    assert [(q.method, q.path.rsplit("/", 1)[-1]) for q in do.writes()] == [
        ("POST", "records"), ("DELETE", str(stale))]
    assert len(do.records) == 100000 + 2
    assert len(do.get("AAAA", "app")) == 500
    assert cpu < CPU_MAX and wall < WALL_MAX, (cpu, wall)
    assert_short(r, ddup)


def test_digitalocean_too_many_records_of_the_name(ddup, digitalocean, http_server):
    do = digitalocean
    do.add_many([("A", "app", ip, 60) for ip in addresses(1001)])
    a = http_server()
    configure(ddup, do_section(do, extra=TIMEOUT), [("a", a, "192.0.2.1", 0)])
    r, cpu, wall = timed_run(ddup)
    assert_over_limit(r, ddup)
    assert do.writes() == []
    assert len(do.get("A", "app")) == 1001


def test_digitalocean_huge_pages_of_the_name_fail_fast(ddup, digitalocean, http_server):
    do = digitalocean
    # Three pages of 20,000 records of the name, in no order: the read
    # stops at the limit instead of sorting them in one by one.
    do.page_size = 20000
    do.add_many([("A", "app", ip, 60) for ip in addresses(60000)])
    a = http_server()
    configure(ddup, do_section(do, extra=TIMEOUT), [("a", a, "192.0.2.1", 0)])
    r, cpu, wall = timed_run(ddup)
    assert_over_limit(r, ddup)
    assert do.writes() == []
    assert cpu < CPU_MAX and wall < WALL_MAX, (cpu, wall)


# ------------------------------------------------------------ Hetzner

def test_hetzner_answer_of_many_other_rrsets(ddup, hetzner, http_server):
    hz = hetzner
    # One answer of the whole zone, whatever the client filters on.
    hz.unfiltered = True
    for i, ip in enumerate(addresses(15000)):
        hz.records[(f"h{i}", "A")] = {"ttl": 300, "values": [ip]}
    hz.set_records("TXT", "app", ['"v=spf1 -all"'], ttl=300)
    hz.set_records("A", "app", ["203.0.113.9", "192.0.2.1"], ttl=60)
    a, b = http_server(), http_server()
    configure(ddup, hz_section(hz, extra=TIMEOUT), [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r, cpu, wall = timed_run(ddup)
    assert r.rc == 0, r
    assert hz.get("A", "app") == (60, ["192.0.2.1", "192.0.2.2"])
    assert [(q.method, q.path.split("/rrsets", 1)[1]) for q in hz.writes()] == [
        ("POST", "/app/A/actions/set_records")]
    assert len(hz.records) == 15000 + 2
    assert cpu < CPU_MAX and wall < WALL_MAX, (cpu, wall)
    assert_short(r, ddup)


def test_hetzner_answer_of_50000_records_of_the_name(ddup, hetzner, http_server):
    hz = hetzner
    hz.set_records("A", "app", addresses(50000), ttl=60)
    a = http_server()
    configure(ddup, hz_section(hz, extra=TIMEOUT), [("a", a, "192.0.2.1", 0)])
    r, cpu, wall = timed_run(ddup)
    assert_over_limit(r, ddup)
    assert hz.writes() == []
    assert len(hz.get("A", "app")[1]) == 50000
    assert cpu < CPU_MAX and wall < WALL_MAX, (cpu, wall)


# ------------------------------------------------------------ Cloudflare

def test_cloudflare_many_records_of_a_type_not_managed(ddup, cloudflare, http_server):
    cf = cloudflare()
    # IPv4 endpoints only: the name's 1001 AAAA records are not ddup's,
    # neither counted nor touched.
    for i in range(1001):
        cf.add(NAME, "AAAA", f"2001:db8::{i + 1:x}", ttl=300)
    cf.add(NAME, "A", "203.0.113.9", ttl=60)
    cf_configure(ddup, cf_provider(cf, timeout=f"{WALL_MAX:g}s"), [("a", http_server(), "192.0.2.1", 0)])
    r, cpu, wall = timed_run(ddup)
    assert r.rc == 0, r
    assert cf.contents(NAME, "A") == ["192.0.2.1"]
    assert len(cf.contents(NAME, "AAAA")) == 1001
    assert_short(r, ddup)


def test_cloudflare_too_many_records_of_the_name(ddup, cloudflare, http_server):
    cf = cloudflare()
    for ip in addresses(1001):
        cf.add(NAME, "A", ip, ttl=60)
    cf_configure(ddup, cf_provider(cf, timeout=f"{WALL_MAX:g}s"), [("a", http_server(), "192.0.2.1", 0)])
    r, cpu, wall = timed_run(ddup)
    assert r.rc == 1, r
    assert "more than 1000 A records" in r.err and "provider cf" in r.err, r
    assert cf.writes() == 0
    assert len(cf.contents(NAME, "A")) == 1001
    assert_short(r, ddup)


# ------------------------------------------------------------ exec

def exec_run(ddup, http_server, n):
    """A run of a program whose read prints n records of the name."""
    prog = Program(str(ddup.dir / "bin"))
    prog.seed({f"{NAME}/A": [60, addresses(n)]})
    exec_configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    return prog, *timed_run(ddup)


def test_exec_read_of_many_records_fails_fast(ddup, http_server):
    prog, r, cpu, wall = exec_run(ddup, http_server, 60000)
    assert_over_limit(r, ddup)
    assert prog.ops() == ["read A"]
    assert cpu < CPU_MAX and wall < WALL_MAX, (cpu, wall)


def test_exec_read_at_the_limit_is_taken(ddup, http_server):
    prog, r, cpu, wall = exec_run(ddup, http_server, 1000)
    assert r.rc == 0, r
    assert prog.records() == {f"{NAME}/A": [60, ["192.0.2.1"]]}
    # The log line of the change lists a few of the 1000, and counts them.
    assert "... (1000 records)" in r.err, r
    assert_short(r, ddup)
