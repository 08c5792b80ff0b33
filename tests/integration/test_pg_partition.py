"""A checker whose route to PostgreSQL drops packets instead of refusing them.

Checkers a and b run on the host; c runs in a network namespace of the
test's own (pgnetfix.py), joined to the host by a veth pair, and reaches
PostgreSQL, the health endpoints (served on the veth's host address) and
nothing else.  The cut is an nftables rule inside that namespace that
drops every packet to and from PostgreSQL's port: nothing is refused,
nothing answers.  The README's bound: connecting gives up after
connect_timeout (5 s); data sent without an answer after tcp_user_timeout
(15 s), as does a wait for an answer (keepalives capped by it).  One
server and one namespace per module.
"""

import os
import shutil
import time

import pytest

from conftest import TIME_SCALE
from fleetfix import Fleet, LockHolder, wait_for
from httpfix import HttpServer
from pgfix import PG_PASSWORD, _bindir
from pgnetfix import Current, NetNs, Primary
from test_fleet import B, P, lock_tables, settle

pytestmark = [pytest.mark.skipif(_bindir() is None, reason="not installed: postgresql"),
              pytest.mark.skipif(shutil.which("nft") is None or shutil.which("ip") is None,
                                 reason="not installed: nftables, iproute2"),
              pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root"),
              pytest.mark.serial]

CONNECT_TIMEOUT, TCP_USER_TIMEOUT = 5, 15
# The server's side of a lost session: probed after 10 s idle, given up
# 15 s after its last answer (tcp_user_timeout caps the probes).
SERVER_GIVES_UP = 10 + TCP_USER_TIMEOUT
SLACK = 3 * TIME_SCALE


@pytest.fixture(scope="module")
def net():
    ns = NetNs()
    srv = None
    try:
        ns.open()
        srv = Primary(extra_addrs=[ns.host_addr])
        srv.start()
        yield ns, srv
    finally:
        if srv is not None:
            srv.destroy()
        ns.close()


class CutFleet(Fleet):
    """Fleet whose checker c runs in the namespace, over the veth."""

    def __init__(self, *a, ns, **kw):
        self.ns = ns
        super().__init__(*a, socket=(), **kw)

    def text(self, name, **kw):
        t = super().text(name, **kw)
        if name == "c":
            t = t.replace(self.pg.uri(), self.pg.uri().replace("127.0.0.1", self.ns.host_addr))
        return t

    def argv(self, name, args, netns=None):
        cmd = super().argv(name, args)
        return self.ns.argv(cmd) if name == "c" else cmd


@pytest.fixture
def fleet(tmp_path, net, bind_server):
    ns, srv = net
    srv.reset()
    ns.heal()
    servers = []
    for _ in range(2):
        h = HttpServer()
        h.addr = ns.host_addr           # reached from the host and from c
        servers.append(h.start())
    f = CutFleet(tmp_path, Current(srv, srv.uri()), bind_server,
                 [("primary", servers[0], P, 0), ("backup", servers[1], B, 10)], attempts=1,
                 ns=ns)
    try:
        yield f, servers
    finally:
        f.stop_all()
        ns.heal()
        for h in servers:
            h.stop()


def timed(f, name):
    t = time.monotonic()
    r = f.run(name)
    return r, time.monotonic() - t


def test_cut_between_runs_the_run_ends_at_connect_timeout(fleet, net, bind_server):
    f, servers = fleet
    ns, srv = net
    settle(f)
    serial = bind_server.serial()
    ns.cut(srv.port)
    f.next_slot()
    f.round("ab")
    before = f.tables()
    r, took = timed(f, "c")
    assert r.rc == 4, r
    assert "cannot connect" in r.err and "timeout" in r.err and PG_PASSWORD not in r.err, r
    assert CONNECT_TIMEOUT - 0.5 <= took <= CONNECT_TIMEOUT + SLACK, took
    assert ns.dropped() > 0
    assert f.tables() == before and bind_server.serial() == serial
    print(f"cut before the run: c exited 4 after {took:.2f} s")
    # The fleet decides without c (cut, its reports stop): a and b fail the primary over.
    servers[0].set(status=503)
    for _ in range(2):
        f.next_slot()
        f.round("ab")
    assert f.dns() == [B]
    e = [x for x in f.status("a")["domains"][0]["endpoints"] if x["name"] == "primary"][0]
    assert e["votes"]["fail"] == 2 and e["votes"]["verdict"] == "fail", e
    ns.heal()
    assert f.run("c").rc == 0


def test_cut_mid_run_the_run_ends_at_tcp_user_timeout(fleet, net, bind_server):
    f, servers = fleet
    ns, srv = net
    settle(f)
    serial = bind_server.serial()
    slot = f.next_slot()
    # c connects, then its check of the primary hangs: the cut comes then.
    hang = 2
    servers[0].set(delay=hang)
    n = len(servers[0].requests)
    t0 = time.monotonic()
    run = f.start("c")
    wait_for("c's check of the primary", lambda: len(servers[0].requests) > n)
    ns.cut(srv.port)
    t_cut = time.monotonic()
    servers[0].set(delay=0)
    f.round("ab")               # a takes the round without c
    r = f.finish(run)
    took, since_cut = time.monotonic() - t0, time.monotonic() - t_cut
    assert r.rc == 4, r
    assert PG_PASSWORD not in r.err and "ddup:***@" in r.err, r
    assert ns.dropped() > 0
    # The report waits at most tcp_user_timeout once the check is done.
    assert since_cut <= hang + TCP_USER_TIMEOUT + SLACK, (since_cut, r)
    assert took >= TCP_USER_TIMEOUT - 0.5, (took, r)
    print(f"cut mid-run: c exited 4 {since_cut:.2f} s after the cut ({took:.2f} s in all): "
          f"{r.err.strip().splitlines()[-1]}")
    assert bind_server.serial() == serial and f.dns() == [P]
    st = f.status("a")
    d = st["domains"][0]
    assert d["round"]["checker"] == "a" and d["round"]["slot"] == slot, d["round"]
    c = [x for x in st["fleet"]["checkers"] if x["name"] == "c"][0]
    assert c["slot"] == slot - 1, c         # its report of this slot never went in
    # The server keeps the lost session, and c's lock with it, until its
    # own probes find c gone (ddup asks for them): until then c exits 3.
    ns.heal()
    t_heal = time.monotonic()
    while True:
        r = f.run("c")
        if r.rc == 0:
            break
        assert r.rc == 3 and "another run of this checker" in r.err, r
        assert time.monotonic() - t_cut <= SERVER_GIVES_UP + SLACK, time.monotonic() - t_cut
        time.sleep(0.5)
    print(f"c ran again {time.monotonic() - t_heal:.2f} s after the heal "
          f"({time.monotonic() - t_cut:.2f} s after the cut)")


def test_cut_while_the_run_waits_for_an_answer(fleet, net, bind_server):
    """c's round waits for a lock another session holds; the cut comes
    then, so the server's answer (lock_timeout's error, 5 s on) is lost:
    nothing of c's is unacknowledged, and its keepalives (10 s idle, then
    every 5 s, capped by tcp_user_timeout) end the wait."""
    f, servers = fleet
    ns, srv = net
    settle(f)
    serial = bind_server.serial()
    f.next_slot()
    holder = LockHolder(srv, lock_tables(srv, but=("ddup_meta", "ddup_report")))
    try:
        run = f.start("c")
        wait_for("c waiting to take the round", f.waiting_on_lock)
        ns.cut(srv.port)
        t_cut = time.monotonic()
        r = f.finish(run)
        since_cut = time.monotonic() - t_cut
    finally:
        holder.release()
    assert r.rc == 4, r
    assert PG_PASSWORD not in r.err, r
    assert since_cut <= TCP_USER_TIMEOUT + SLACK, (since_cut, r)
    print(f"cut while waiting: c exited 4 {since_cut:.2f} s after the cut: "
          f"{r.err.strip().splitlines()[-1]}")
    assert bind_server.serial() == serial and f.dns() == [P]
    f.round("ab")
    ns.heal()
    t_heal = time.monotonic()
    while (r := f.run("c")).rc == 3:
        assert time.monotonic() - t_cut <= SERVER_GIVES_UP + SLACK, r
        time.sleep(0.5)
    assert r.rc == 0, r
    print(f"c ran again {time.monotonic() - t_heal:.2f} s after the heal")
