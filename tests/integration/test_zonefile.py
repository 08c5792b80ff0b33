"""The zonefile provider (ddup.ini(5), type = zonefile) through the built
ddup-check, against a real NSD (the template form, reloaded with
nsd-control) and a real Knot (the $INCLUDE form, reloaded with knotc), each
on a loopback port of its own: dig shows what they serve after every run.
A wrapper script as `reload` counts reloads and can fail.
"""

import os
import re
import stat
import time

import pytest

from dnsfix import dig

NAME = "www.example.test"
OTHER = "api.example.test"

WRAPPER = """#!/bin/sh
echo "$@" >> {log}
if [ -e {fail} ]; then
    printf 'zone \\033[31mlocked\\nsecond line\\n' >&2
    exit 3
fi
{then}
"""


class Reload:
    """A `reload` that logs each call, fails while `failing`, and then runs
    the server's own reload (or nothing)."""

    def __init__(self, folder, then=""):
        self.path = os.path.join(folder, "reload.sh")
        self.log = os.path.join(folder, "reloads.log")
        self.fail = os.path.join(folder, "reload.fail")
        with open(self.path, "w") as f:
            f.write(WRAPPER.format(log=self.log, fail=self.fail,
                                   then=f"exec {then}" if then else "exit 0"))
        os.chmod(self.path, stat.S_IRWXU)

    def count(self):
        try:
            with open(self.log) as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    def failing(self, on):
        if on:
            open(self.fail, "w").close()
        elif os.path.exists(self.fail):
            os.unlink(self.fail)


def configure(ddup, file, domains, template=None, reload=None):
    """domains: {name: [(endpoint name, server, ip, priority, extra)]}."""
    text = f"""interval = 30s
[provider zf]
type = zonefile
file = {file}
zone = example.test
"""
    if template:
        text += f"template = {template}\n"
    if reload:
        text += f"reload = {reload}\n"
    for name, eps in domains.items():
        text += f"\n[domain {name}]\nprovider = zf\nttl = 60\nattempts = 1\n"
        for ep, srv, ip, prio, extra in eps:
            text += f"\n[endpoint {ep}]\nurl = {srv.url}\n"
            text += (f"ip = {ip}\n" if ip else "") + f"priority = {prio}\n{extra}\n"
    ddup.write(text)


def records(path):
    """The record lines of ddup's block in path."""
    with open(path) as f:
        text = f.read()
    block = text.split("; ddup-check records: begin", 1)[1].split(
        "; ddup-check records: end", 1)[0]
    return [line for line in block.splitlines()[1:] if not line.startswith(";")]


def serial_line(path):
    with open(path) as f:
        return int(re.search(r"^; ddup-check serial (\d+)$", f.read(), re.M).group(1))


def test_failover_nsd_template(ddup, nsd_server, http_server):
    srv = nsd_server
    a, b = http_server(), http_server()
    configure(ddup, srv.zone_file,
              {NAME: [("a", a, "192.0.2.1", 0, ""), ("b", b, "192.0.2.2", 10, "")]},
              template=srv.template, reload=srv.reload)
    t0 = int(time.time())
    r = ddup.run()
    assert r.rc == 0, r
    assert srv.query(NAME) == ["192.0.2.1"]
    s1 = srv.serial()
    # {serial}: the Unix time on a first write (no serial before).
    assert t0 <= s1 <= int(time.time()), s1
    assert s1 == serial_line(srv.zone_file)
    assert stat.S_IMODE(os.stat(srv.zone_file).st_mode) == 0o644
    # The template's text is kept around the records.
    with open(srv.zone_file) as f:
        assert "ns1 IN A   127.0.0.1" in f.read()
    a.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert srv.query(NAME) == ["192.0.2.2"], srv.log_text()
    assert srv.serial() > s1
    # No temporary file left beside it.
    assert [n for n in os.listdir(srv.dir) if n.startswith(".")] == []


def test_failover_knot_include(ddup, knot_server, http_server):
    srv = knot_server
    a, b = http_server(), http_server()
    configure(ddup, srv.include_file,
              {NAME: [("a", a, "192.0.2.1", 0, ""), ("a6", a, "2001:db8::1", 0, ""),
                      ("b", b, "192.0.2.2", 10, "")]},
              reload=srv.reload)
    r = ddup.run()
    assert r.rc == 0, r
    assert srv.query(NAME, "A") == ["192.0.2.1"], srv.log_text()
    assert srv.query(NAME, "AAAA") == ["2001:db8::1"]
    # Only ddup's records: the SOA stays the operator's.
    assert sorted(records(srv.include_file)) == [
        "www.example.test. 60 IN A 192.0.2.1", "www.example.test. 60 IN AAAA 2001:db8::1"]
    with open(srv.include_file) as f:
        assert "SOA" not in f.read()
    a.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert srv.query(NAME, "A") == ["192.0.2.2"], srv.log_text()
    assert srv.query(NAME, "AAAA") == []


def test_change_only(ddup, knot_server, http_server, tmp_path):
    srv = knot_server
    rl = Reload(str(tmp_path), then=srv.reload)
    a = http_server()
    configure(ddup, srv.include_file, {NAME: [("a", a, "192.0.2.1", 0, "")]},
              reload=rl.path)
    assert ddup.run().rc == 0
    assert rl.count() == 1
    assert srv.query(NAME) == ["192.0.2.1"]
    before = os.stat(srv.include_file)
    # A steady run neither writes nor reloads.
    r = ddup.run()
    assert (r.rc, r.out, r.err) == (0, "", ""), r
    assert rl.count() == 1
    after = os.stat(srv.include_file)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_reload_failing_is_a_failed_update(ddup, nsd_server, http_server, tmp_path):
    srv = nsd_server
    rl = Reload(str(tmp_path), then=srv.reload)
    a = http_server()
    configure(ddup, srv.zone_file, {NAME: [("a", a, "192.0.2.1", 0, "")]},
              template=srv.template, reload=rl.path)
    rl.failing(True)
    r = ddup.run()
    assert r.rc == 1, r
    assert "zone ?[31mlocked" in r.err and "second line" not in r.err, r
    assert "\x1b" not in r.err
    assert "exit status 3" in r.err
    st = ddup.status()["domains"][0]
    assert "locked" in st["lastError"]
    # The file is written; the server never took it.
    assert records(srv.zone_file) == ["www.example.test. 60 IN A 192.0.2.1"]
    assert srv.query(NAME) == []
    # Still failing: tried again, although the file holds the records.
    assert ddup.run().rc == 1
    assert rl.count() == 2
    # The reload works again: the next run writes and reloads.
    rl.failing(False)
    r = ddup.run()
    assert r.rc == 0, r
    assert rl.count() == 3
    assert srv.query(NAME) == ["192.0.2.1"]
    # Then nothing more.
    assert ddup.run().rc == 0
    assert rl.count() == 3


def test_template_serial_increases(ddup, nsd_server, http_server):
    srv = nsd_server
    a, b = http_server(), http_server()
    # A last serial ahead of the clock: each write is last + 1.
    ahead = 4000000000
    with open(srv.zone_file, "w") as f:
        f.write(f"; ddup-check records: begin\n; ddup-check serial {ahead}\n"
                "; ddup-check records: end\n")
    configure(ddup, srv.zone_file,
              {NAME: [("a", a, "192.0.2.1", 0, ""), ("b", b, "192.0.2.2", 10, "")]},
              template=srv.template, reload=srv.reload)
    assert ddup.run().rc == 0
    assert srv.serial() == ahead + 1
    a.set(status=503)
    assert ddup.run().rc == 0
    assert srv.serial() == ahead + 2
    assert srv.query(NAME) == ["192.0.2.2"]
    a.set(status=200)
    assert ddup.run().rc == 0
    assert srv.serial() == ahead + 3 == serial_line(srv.zone_file)
    assert srv.query(NAME) == ["192.0.2.1"]


def test_two_domains_in_one_file(ddup, knot_server, http_server):
    srv = knot_server
    a, b, c = http_server(), http_server(), http_server()
    configure(ddup, srv.include_file,
              {NAME: [("a", a, "192.0.2.1", 0, ""), ("b", b, "192.0.2.2", 10, "")],
               OTHER: [("c", c, "198.51.100.7", 0, "")]},
              reload=srv.reload)
    assert ddup.run().rc == 0
    assert srv.query(NAME) == ["192.0.2.1"]
    assert srv.query(OTHER) == ["198.51.100.7"]
    assert records(srv.include_file) == [
        "api.example.test. 60 IN A 198.51.100.7", "www.example.test. 60 IN A 192.0.2.1"]
    # One domain fails over: the other's records stay.
    a.set(status=503)
    assert ddup.run().rc == 0
    assert srv.query(NAME) == ["192.0.2.2"]
    assert srv.query(OTHER) == ["198.51.100.7"]
    assert records(srv.include_file) == [
        "api.example.test. 60 IN A 198.51.100.7", "www.example.test. 60 IN A 192.0.2.2"]


def test_first_run_writes_whatever_the_file_holds(ddup, knot_server, http_server, tmp_path):
    srv = knot_server
    rl = Reload(str(tmp_path), then=srv.reload)
    # The file already holds the right records (a reload lost, a state
    # file lost): the server does not serve them yet.
    with open(srv.include_file, "w") as f:
        f.write("; ddup-check records: begin\n; ddup-check serial 7\n"
                f"{NAME}. 60 IN A 192.0.2.1\n; ddup-check records: end\n")
    assert srv.query(NAME) == []
    a = http_server()
    configure(ddup, srv.include_file, {NAME: [("a", a, "192.0.2.1", 0, "")]},
              reload=rl.path)
    r = ddup.run("--dry-run")
    assert r.rc == 0, r
    assert "records would be written whatever they are" in r.out, r
    assert rl.count() == 0
    r = ddup.run()
    assert r.rc == 0, r
    assert rl.count() == 1, "the first run did not write and reload"
    assert srv.query(NAME) == ["192.0.2.1"]
    assert serial_line(srv.include_file) > 7
    assert ddup.run().rc == 0
    assert rl.count() == 1


def test_cname(ddup, knot_server, http_server):
    srv = knot_server
    lb, b = http_server(), http_server()
    configure(ddup, srv.include_file,
              {NAME: [("lb", lb, None, 0, "cname = lb.example.net"),
                      ("b", b, "192.0.2.2", 10, "")]},
              reload=srv.reload)
    assert ddup.run().rc == 0, srv.log_text()
    assert records(srv.include_file) == ["www.example.test. 60 IN CNAME lb.example.net."]
    assert dig(srv.port, NAME, "CNAME") == ["lb.example.net."]
    lb.set(status=503)
    assert ddup.run().rc == 0
    assert records(srv.include_file) == ["www.example.test. 60 IN A 192.0.2.2"]
    assert dig(srv.port, NAME, "CNAME") == []
    assert srv.query(NAME) == ["192.0.2.2"]


def test_not_ddups_file_left_alone(ddup, http_server, tmp_path):
    zone = tmp_path / "example.test.zone"
    text = "$TTL 60\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n"
    zone.write_text(text)
    rl = Reload(str(tmp_path))
    configure(ddup, str(zone), {NAME: [("a", http_server(), "192.0.2.1", 0, "")]},
              reload=rl.path)
    r = ddup.run()
    assert r.rc == 1, r
    assert "no ddup-check records block" in r.err, r
    assert zone.read_text() == text
    assert rl.count() == 0


def test_junk_in_the_block_fails_the_domain(ddup, http_server, tmp_path):
    zone = tmp_path / "ddup.zone"
    text = ("; ddup-check records: begin\n"
            f"{NAME}. 60 IN MX 10 mail.example.test.\n; ddup-check records: end\n")
    zone.write_text(text)
    configure(ddup, str(zone), {NAME: [("a", http_server(), "192.0.2.1", 0, "")]})
    r = ddup.run()
    assert r.rc == 1, r
    assert "line 2: not a record ddup-check writes" in r.err, r
    assert zone.read_text() == text


def test_write_failure_leaves_the_old_file(ddup, http_server, tmp_path):
    d = tmp_path / "zones"
    d.mkdir()
    zone = d / "ddup.zone"
    configure(ddup, str(zone), {NAME: [("a", http_server(), "192.0.2.1", 0, "")]})
    if os.geteuid() == 0:
        # root writes anywhere: a folder that does not exist instead.
        configure(ddup, str(tmp_path / "missing" / "ddup.zone"),
                  {NAME: [("a", http_server(), "192.0.2.1", 0, "")]})
        r = ddup.run()
        assert r.rc == 1, r
        assert "cannot create a temporary file" in r.err, r
        return
    zone.write_text("")
    os.chmod(d, 0o555)
    try:
        r = ddup.run()
    finally:
        os.chmod(d, 0o755)
    assert r.rc == 1, r
    assert zone.read_text() == ""


@pytest.mark.parametrize("keys,key,words", [
    ("file = relative.zone\n", "file", "not an absolute path"),
    ("file = /x/ddup.zone\nreload = nsd-control reload\n", "reload",
     "does not begin with an absolute path"),
    ("file = /x/ddup.zone\ntemplate = t.tmpl\n", "template", "not an absolute path"),
    ("file = /x/ddup.zone\nzone = bad..zone\n", "zone", "not a DNS zone name"),
])
def test_bad_keys(ddup, keys, key, words):
    ddup.write(f"""[provider zf]
type = zonefile
{keys}
[domain {NAME}]
provider = zf

[endpoint a]
url = http://127.0.0.1:1/
ip = 192.0.2.1
""")
    r = ddup.run("-n")
    assert r.rc != 0, r
    assert words in r.err, r
    # file:line of the key at fault.
    line = next(i for i, t in enumerate(open(ddup.config).read().splitlines(), 1)
                if t.startswith(key + " "))
    assert f"ddup.ini:{line}" in r.err, r


def test_template_without_records_fails(ddup, http_server, tmp_path):
    tmpl = tmp_path / "t.tmpl"
    tmpl.write_text("@ SOA ns1 hostmaster {serial} 1 1 1 1\n")
    zone = tmp_path / "z.zone"
    old = "$TTL 60\n@ SOA ns1 hostmaster 1 1 1 1 1\n"
    zone.write_text(old)
    configure(ddup, str(zone), {NAME: [("a", http_server(), "192.0.2.1", 0, "")]},
              template=str(tmpl))
    r = ddup.run()
    assert r.rc == 1, r
    assert "{records} appears 0 times" in r.err, r
    # A failed update leaves the old file as it was.
    assert zone.read_text() == old


def test_readme_configuration_passes_check(ddup):
    """The README's minimal zonefile section is a valid configuration."""
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme) as f:
        text = f.read()
    m = re.search(r"^    \[provider nsd\]\n((?:    .+\n)+)", text, re.M)
    assert m, "README.md: no [provider nsd] block"
    section = "[provider nsd]\n" + "".join(line[4:] + "\n" for line in m.group(1).splitlines())
    assert "type = zonefile" in section
    ddup.write(section + f"""
[domain www.example.com]
provider = nsd

[endpoint a]
url = http://127.0.0.1:1/
ip = 192.0.2.1
""")
    r = ddup.run("-n")
    assert r.rc == 0, r
    assert "configuration OK" in r.out, r
