"""The scene the outputs of a run are tested on (statusHtml, metricsFile).

Three domains on one BIND: app (a primary and a backup, attempts 1),
down (one server that fails) and odd (a hostile endpoint name on an exec
provider that refuses every call with a message of the test's choice).
Each output's test writes it with its own top-level lines.
"""

import os
import stat
import time

ZONE = "example.test"
APP = "app.example.test"
DOWN = "down.example.test"
ODD = "odd.example.test"


def provider(bind):
    return f"""
[provider bind]
type = rfc2136
server = 127.0.0.1:{bind.port}
zone = {ZONE}
keyName = {bind.key_name}
keyAlgorithm = {bind.key_alg}
keySecret = {bind.key_secret}
"""


def write_scene(ddup, bind, servers, top, odd_name, refusal):
    """servers: the primary, backup, down and odd HTTP servers; top: the
    top-level lines after `interval = 30s`; odd_name: the odd endpoint's
    name; refusal: what the odd domain's provider says on stderr."""
    primary, backup, down, odd = servers
    prog = os.path.join(ddup.dir, "failing-dns")
    with open(prog, "w") as f:
        f.write(f"#!/bin/sh\necho '{refusal}' >&2\nexit 1\n")
    os.chmod(prog, stat.S_IRWXU)
    ddup.write(f"""
interval = 30s
{top}
{provider(bind)}
[provider failing]
type = exec
command = {prog}

[domain {APP}]
provider = bind
ttl = 60
attempts = 1

[endpoint primary]
url = {primary.url}
ip = 192.0.2.1
priority = 0

[endpoint backup]
url = {backup.url}
ip = 192.0.2.2
priority = 10

[domain {DOWN}]
provider = bind

[endpoint lonely]
url = {down.url}
ip = 192.0.2.9

[domain {ODD}]
provider = failing

[endpoint odd]
name = {odd_name}
url = {odd.url}
ip = 198.51.100.7
""")


def scene_servers(http_server):
    """The primary, backup, down (503) and odd servers, all started."""
    return (http_server(), http_server(), http_server(status=503),
            http_server())


def failover(ddup, bind_server, servers):
    """Two runs on a written scene: app on its primary, then, the primary
    stopped, on its backup.  The second run's result and the time just
    before it."""
    r = ddup.run()
    assert r.rc == 1, r                 # the odd domain's provider fails
    assert bind_server.query(APP, "A") == ["192.0.2.1"]
    servers[0].stop()
    before = time.time()
    r = ddup.run()
    assert r.rc == 1, r
    assert bind_server.query(APP, "A") == ["192.0.2.2"]
    return r, before


def unwritable_output(ddup, http_server, key):
    """key (statusHtml or metricsFile) on a healthy domain whose exec
    provider succeeds, at a path that cannot be written: the DNS update
    is made, then one error line names the path and the run exits 1
    (ddup-check(8), EXIT STATUS).  A missing folder is made (0755, every level); a FIFO and,
    as root, a device node (/dev/null's numbers, made in the test's
    folder) are refused and left as they were.  --status and --dry-run
    still write nothing and exit 0."""
    calls = os.path.join(ddup.dir, "calls")
    prog = os.path.join(ddup.dir, "dns")
    with open(prog, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> {calls}\n')
    os.chmod(prog, stat.S_IRWXU)
    srv = http_server()
    ips = iter(range(1, 10))

    def run(path):
        # A new address each time: every run has a DNS update to make.
        ip = f"192.0.2.{next(ips)}"
        ddup.write(f"""
interval = 30s
{key} = {path}
[provider x]
type = exec
command = {prog}

[domain {APP}]
provider = x

[endpoint e]
url = {srv.url}
ip = {ip}
""")
        if os.path.exists(calls):
            os.unlink(calls)
        return ddup.run(), ip

    def refused(path, why):
        r, ip = run(path)
        assert r.rc == 1, r
        with open(calls) as f:
            assert f"replace {APP} A 120 {ip}" in f.read()
        lines = [ln for ln in r.err.splitlines() if path in ln]
        assert len(lines) == 1 and why in lines[0], r.err
        return r

    # Every missing level made 0755, the file written, the run fine.
    path = os.path.join(ddup.dir, "new", "deeper", "out")
    r = run(path)[0]
    assert r.rc == 0, r
    assert os.path.isfile(path)
    for folder in (os.path.dirname(os.path.dirname(path)), os.path.dirname(path)):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755

    # A regular file where a folder must go.
    blocker = os.path.join(ddup.dir, "blocker")
    open(blocker, "w").close()
    refused(os.path.join(blocker, "sub", "out"), "Not a directory")

    # A FIFO: refused, still a FIFO (a write would have blocked on it).
    fifo = os.path.join(ddup.dir, "fifo")
    os.mkfifo(fifo)
    refused(fifo, f"{fifo}: a FIFO, not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    for args in (("--status",), ("--dry-run",)):
        r = ddup.run(*args)
        assert r.rc == 0 and fifo not in r.err, r
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    # A device node: refused, untouched.
    if os.geteuid() == 0:
        dev = os.path.join(ddup.dir, "null")
        rdev = os.stat("/dev/null").st_rdev
        os.mknod(dev, 0o600 | stat.S_IFCHR, rdev)
        refused(dev, f"{dev}: a character device, not a regular file")
        st = os.lstat(dev)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev
