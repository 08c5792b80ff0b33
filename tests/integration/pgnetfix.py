"""PostgreSQL servers of a test module's own, for the fault tests of a fleet.

`Primary` is a PgServer (pgfix.py) that may also listen on an address of
a veth link the test made, that lets a standby stream from it, and whose
commits wait for that standby once `sync_with()` names it (so that a
primary stopped at any moment loses nothing that was committed).
`Standby` is a second server made from the primary with pg_basebackup,
streaming from it until `promote()`.  `Current` hands a Fleet
(fleetfix.py) whichever of them is the primary now, with the state URI
the test gives.

`NetNs` is a network namespace of the test's own, joined to the host by
a veth pair on a /30 of 198.18.0.0/15 (RFC 2544's benchmarking range,
routed nowhere): a program run in it (`argv()`) reaches the host only at
`host_addr`.  `cut(port)` drops, with nftables inside the namespace,
every packet to and from that TCP port of the host: nothing is refused,
nothing answers, as with a silent partition; `heal()` removes the rule.
Names and addresses carry the pid, so that pytest-xdist's workers do not
meet; `close()` deletes the namespace and with it its end of the pair.
"""

import os
import subprocess
import time

from pgfix import PgServer

__all__ = ["Primary", "Standby", "Current", "NetNs", "STANDBY_NAME"]

STANDBY_NAME = "ddupstandby"


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd}: {p.returncode}: {p.stdout}{p.stderr}")
    return p.stdout


class Primary(PgServer):
    """A PgServer that may listen on extra addresses and feed a standby."""

    def __init__(self, extra_addrs=()):
        super().__init__()
        self.extra_addrs = list(extra_addrs)

    def _init(self):
        super()._init()
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            # Later lines win: every address, and commits that are
            # durable on the standby once one is named (sync_with()).
            f.write(f"listen_addresses = '{','.join(['127.0.0.1'] + self.extra_addrs)}'\n"
                    "synchronous_commit = on\nwal_level = replica\nmax_wal_senders = 4\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write("local replication postgres trust\n")
            for a in self.extra_addrs:
                f.write(f"host all all {a}/30 scram-sha-256\n")

    def sync_with(self, name=STANDBY_NAME, timeout=30):
        """Commits wait for the standby name from now on; returns once it is synchronous."""
        self.psql(f"ALTER SYSTEM SET synchronous_standby_names = '{name}'", db="postgres")
        self.psql("SELECT pg_reload_conf()", db="postgres")
        deadline = time.monotonic() + timeout
        while self.psql("SELECT sync_state FROM pg_stat_replication WHERE "
                        f"application_name = '{name}'", db="postgres") != [["sync"]]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"standby {name} not synchronous:\n{self.log_text()}")
            time.sleep(0.1)


class Standby(PgServer):
    """A streaming standby of primary (pg_basebackup), on a port of its own."""

    def __init__(self, primary, name=STANDBY_NAME):
        super().__init__()
        self.primary = primary
        self.name = name
        self.started = True         # its role and database come from the primary
        self.has_db = True

    def _init(self):
        self._as_postgres([os.path.join(self.bin, "pg_basebackup"), "-D", self.data,
                           "-h", self.primary.sock, "-p", str(self.primary.port),
                           "-U", "postgres", "-X", "stream", "-c", "fast", "--no-sync"], timeout=120)
        with open(os.path.join(self.data, "standby.signal"), "w"):
            pass
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"port = {self.port}\nunix_socket_directories = '{self.sock}'\n"
                    "listen_addresses = '127.0.0.1'\n"
                    f"primary_conninfo = 'host={self.primary.sock} port={self.primary.port} "
                    f"user=postgres application_name={self.name}'\n")

    def in_recovery(self):
        return self.psql("SELECT pg_is_in_recovery()", db="postgres") == [["t"]]

    def promote(self, timeout=30):
        """The standby becomes a primary; returns once it takes writes."""
        self._as_postgres([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w",
                           "-t", str(timeout), "promote"], timeout=timeout + 30)
        deadline = time.monotonic() + timeout
        while self.in_recovery():
            if time.monotonic() > deadline:
                raise RuntimeError(f"standby not promoted:\n{self.log_text()}")
            time.sleep(0.1)


class Current:
    """The primary of now, for a Fleet: its psql and clock; uri() the test's."""

    def __init__(self, server, uri):
        self.server = server
        self._uri = uri

    def uri(self, socket=False):
        return self._uri(socket) if callable(self._uri) else self._uri

    def __getattr__(self, name):
        return getattr(self.server, name)


class NetNs:
    """A namespace of the test's own, its veth's other end on the host (see above)."""

    def __init__(self):
        pid = os.getpid()
        self.name = f"ddup-net-{pid}"
        self.host_if, self.ns_if = f"dd{pid % 100000}h", f"dd{pid % 100000}n"
        net = 198 * 2 ** 24 + 18 * 2 ** 16 + (pid % 2 ** 15) * 4     # a /30 of 198.18/15
        self.host_addr = ".".join(str((net + 1) >> s & 255) for s in (24, 16, 8, 0))
        self.ns_addr = ".".join(str((net + 2) >> s & 255) for s in (24, 16, 8, 0))
        self.made = False

    def open(self):
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=30)
        self.made = True
        _run(["ip", "netns", "add", self.name])
        _run(["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if])
        _run(["ip", "link", "set", self.ns_if, "netns", self.name])
        _run(["ip", "addr", "add", f"{self.host_addr}/30", "dev", self.host_if])
        _run(["ip", "link", "set", self.host_if, "up"])
        _run(["ip", "-n", self.name, "addr", "add", f"{self.ns_addr}/30", "dev", self.ns_if])
        _run(["ip", "-n", self.name, "link", "set", self.ns_if, "up"])
        _run(["ip", "-n", self.name, "link", "set", "lo", "up"])
        # The host's end takes a moment to accept the address for a bind().
        deadline = time.monotonic() + 10
        while "tentative" in _run(["ip", "addr", "show", "dev", self.host_if]):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        return self

    def argv(self, cmd):
        return ["ip", "netns", "exec", self.name, *cmd]

    def cut(self, port):
        """Every packet to or from the host's TCP port dropped inside the namespace."""
        rules = (f"table inet ddupcut {{\n"
                 f" chain out {{ type filter hook output priority 0; ip daddr {self.host_addr} "
                 f"tcp dport {port} counter drop; }}\n"
                 f" chain in {{ type filter hook input priority 0; ip saddr {self.host_addr} "
                 f"tcp sport {port} counter drop; }}\n}}\n")
        _run(self.argv(["nft", "-f", "-"]), input=rules)

    def heal(self):
        subprocess.run(self.argv(["nft", "delete", "table", "inet", "ddupcut"]),
                       capture_output=True, timeout=30)

    def dropped(self):
        """Packets the cut has dropped so far, both ways."""
        text = _run(self.argv(["nft", "list", "table", "inet", "ddupcut"]))
        words = text.split()
        return sum(int(words[i + 1]) for i, w in enumerate(words) if w == "packets")

    def close(self):
        if not self.made:
            return
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=30)
        self.made = False
