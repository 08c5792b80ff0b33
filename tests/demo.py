#!/usr/bin/python3
"""make demo: a real failover on this machine, in well under a minute.

Two health endpoints (real HTTP servers on loopback), a real BIND on a
loopback port, ddup-check run as cron would run it, and dig showing the
answer move to the backup when the primary stops, and back when it
returns.  Everything runs in a temporary folder and is stopped at the end.
"""

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "integration"))

from dnsfix import BindServer  # noqa: E402
from httpfix import HttpServer  # noqa: E402

DDUP = sys.argv[1] if len(sys.argv) > 1 else "./ddup-check"
NAME = "app.example.test"


def say(text):
    print(f"\n\033[1m== {text}\033[0m", flush=True)


def sh(*cmd):
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=False)


def main():
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ddup-demo-") as d:
        bind = BindServer(d)
        primary = HttpServer(path="/healthz").start()
        backup = HttpServer(path="/healthz").start()
        try:
            bind.start()
            conf = os.path.join(d, "ddup.ini")
            with open(conf, "w") as f:
                f.write(f"""\
interval = 10s
state = {d}/state/ddup.db

[provider local-bind]
type = rfc2136
server = 127.0.0.1:{bind.port}
zone = example.test
keyName = {bind.key_name}
keySecret = !env DEMO_TSIG_SECRET

[domain {NAME}]
provider = local-bind
ttl = 60
attempts = 2
recoverAfter = 2

[endpoint primary]
url = {primary.url}
ip = 192.0.2.10
priority = 0

[endpoint backup]
url = {backup.url}
ip = 198.51.100.20
priority = 10
""")
            os.environ["DEMO_TSIG_SECRET"] = bind.key_secret
            dig = ("dig", "+short", "@127.0.0.1", "-p", str(bind.port), NAME, "A")

            say(f"BIND serves example.test on 127.0.0.1:{bind.port}; "
                f"primary health endpoint {primary.url}, backup {backup.url}")
            sh("cat", conf)
            say("first run: both endpoints healthy, the primary (priority 0) is published")
            sh(DDUP, "-c", conf)
            sh(*dig)

            say("the primary stops answering")
            primary.stop()
            say("run 2: one failure is tolerated (attempts = 2): DNS does not move")
            sh(DDUP, "-c", conf)
            sh(*dig)
            say("run 3: second failure in a row: failover to the backup")
            sh(DDUP, "-c", conf)
            sh(*dig)
            sh(DDUP, "-c", conf, "--status")

            say("the primary comes back")
            primary.start()
            say("run 4: first pass of recoverAfter = 2: still on the backup")
            sh(DDUP, "-c", conf)
            sh(*dig)
            say("run 5: second pass: back to the primary")
            sh(DDUP, "-c", conf)
            sh(*dig)
            say("run 6: nothing changed, so nothing is printed and DNS is not touched")
            sh(DDUP, "-c", conf)
            sh(DDUP, "-c", conf, "--status")
            say("the state file, with the sqlite3 CLI: the DNS changes")
            sh("sqlite3", "-box", f"{d}/state/ddup.db",
               "SELECT time, domain, type, old, new, ok FROM changes ORDER BY id")
            answer = subprocess.run(dig, capture_output=True, text=True).stdout.split()
            ok = answer == ["192.0.2.10"]
        finally:
            primary.stop()
            backup.stop()
            bind.stop()
    say(f"demo {'finished' if ok else 'FAILED'} in {time.monotonic() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
