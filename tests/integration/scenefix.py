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
