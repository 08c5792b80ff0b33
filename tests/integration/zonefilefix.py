"""Servers without dynamic updates for the zonefile provider: a real NSD
and a real Knot on a free loopback port each, started for one test in
its own folder (configuration, pid file, control socket, zone files) and
always stopped at its end.

Both serve example.test.  NSD reads the zone file ddup writes from a
template (`template`, `zone_file`); Knot's zone file holds the SOA and
NS and `$INCLUDE`s the file ddup writes (`include_file`).  `reload` is
the command ddup runs after a write: nsd-control and knotc over the
server's unix control socket, so no key is needed.
"""

import os
import signal

import pytest

from dnsfix import ZONE, _free_port, _Server

__all__ = ["nsd_server", "knot_server", "NsdServer", "KnotServer"]

NSD_CONTROL = "/usr/sbin/nsd-control"
KNOTC = "/usr/sbin/knotc"

HEAD = """\
$ORIGIN {zone}.
$TTL 60
@   IN SOA ns1.{zone}. hostmaster.{zone}. {serial} 3600 600 86400 60
@   IN NS  ns1.{zone}.
ns1 IN A   127.0.0.1
"""

NSD_CONF = """\
server:
  ip-address: 127.0.0.1@{port}
  port: {port}
  username: ""
  chroot: ""
  zonesdir: "{dir}"
  pidfile: "{dir}/nsd.pid"
  database: ""
  xfrdfile: "{dir}/xfrd.state"
  zonelistfile: "{dir}/zone.list"
  verbosity: 1
remote-control:
  control-enable: yes
  control-interface: {dir}/nsd.sock
zone:
  name: {zone}
  zonefile: {zone_file}
"""

KNOT_CONF = """\
server:
    rundir: "{dir}"
    listen: 127.0.0.1@{port}
    pidfile: "{dir}/knot.pid"
database:
    storage: "{dir}/db"
log:
  - target: stderr
    any: info
template:
  - id: default
    storage: "{dir}"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
zone:
  - domain: {zone}
    file: "{zone_file}"
"""


class NsdServer(_Server):
    """nsd serving example.test from zone_file, which ddup writes from
    template (the SOA's serial is {serial})."""

    def __init__(self, d):
        super().__init__(d, "nsd")
        self.zone = ZONE
        self.conf = os.path.join(self.dir, "nsd.conf")
        self.zone_file = os.path.join(self.dir, ZONE + ".zone")
        self.template = os.path.join(self.dir, ZONE + ".tmpl")
        self.reload = f"{NSD_CONTROL} -c {self.conf} reload {ZONE}"

    def start(self):
        self.port = _free_port()
        with open(self.conf, "w") as f:
            f.write(NSD_CONF.format(port=self.port, dir=self.dir, zone=ZONE,
                                    zone_file=self.zone_file))
        with open(self.template, "w") as f:
            f.write(HEAD.format(zone=ZONE, serial="{serial}") + "{records}\n")
        # Before ddup's first write: the zone with no record of ddup's.
        with open(self.zone_file, "w") as f:
            f.write(HEAD.format(zone=ZONE, serial=1))
        self._spawn(["nsd", "-d", "-c", self.conf])
        self._wait_ready()


class KnotServer(_Server):
    """knotd serving example.test; its zone file $INCLUDEs include_file,
    which ddup writes."""

    def __init__(self, d):
        super().__init__(d, "knot")
        self.zone = ZONE
        self.conf = os.path.join(self.dir, "knot.conf")
        self.zone_file = os.path.join(self.dir, ZONE + ".zone")
        self.include_file = os.path.join(self.dir, "ddup.zone")
        self.reload = f"{KNOTC} -c {self.conf} -b zone-reload {ZONE}"

    def start(self):
        self.port = _free_port()
        with open(self.conf, "w") as f:
            f.write(KNOT_CONF.format(port=self.port, dir=self.dir, zone=ZONE,
                                     zone_file=self.zone_file))
        with open(self.zone_file, "w") as f:
            f.write(HEAD.format(zone=ZONE, serial=1) +
                    f"$INCLUDE {self.include_file}\n")
        open(self.include_file, "w").close()
        self._spawn(["knotd", "-c", self.conf])
        self._wait_ready()


def _server(cls, tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    srv = cls(d)
    try:
        srv.start()
        yield srv
    finally:
        pid = srv.proc.pid if srv.proc is not None else None
        srv.stop()
        # NSD's server and xfrd children are in the leader's group.
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def nsd_server(tmp_path):
    yield from _server(NsdServer, tmp_path, "nsd")


@pytest.fixture
def knot_server(tmp_path):
    yield from _server(KnotServer, tmp_path, "knot")
