"""Several checkers sharing one PostgreSQL (ddup.ini(5), SEVERAL CHECKERS), for test_fleet.py.

`Fleet` writes one configuration file per checker (a.ini, b.ini, c.ini:
the same text apart from `checker = NAME`, and the `state` URI, which is
no part of the decision) and runs the built ddup-check as any of them:
on the host, or cut off from the servers in a network namespace of its
own (`unshare -n`), where it still reaches PostgreSQL through the Unix
socket of pgfix.py but no health endpoint, no DNS server and no provider.

The slots (ddup.ini(5), SEVERAL CHECKERS) follow the database's clock, which a test steps with
pg_server.advance() (pgfix.py): next_slot() moves it to just after the
start of the next slot, so the runs of one step all fall in one slot
however slow the machine (a slot is a whole `interval` of real time).

`BindExec` is an `exec` provider (ddup.ini(5), type = exec) that keeps the records in
the real BIND of dnsfix.py (dig to read, a TSIG-signed nsupdate to
replace), with gates: a fifo before or after its replace on which it
blocks until the test opens it, so that a test can kill the run that
called it at an exact moment.
"""

import json
import os
import signal
import stat
import subprocess
import time

from conftest import DDUP, TIME_SCALE, Result
from test_failover import NAME, ZONE, provider_section

__all__ = ["Fleet", "BindExec", "LockHolder", "NAME", "ZONE", "clock_shift_env", "wait_for"]

CHECKERS = ("a", "b", "c")


def wait_for(what, cond, timeout=20):
    """Polls cond() until it is true; fails naming what it waited for."""
    deadline = time.monotonic() + timeout * TIME_SCALE
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# The exec provider: replace and read go to BIND; every call is logged.
BIND_EXEC = r'''#!/usr/bin/python3
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
conf = json.load(open(os.path.join(here, "bind.json")))
args = sys.argv[1:]
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps({"argv": args, "pid": os.getpid()}) + "\n")
op, name, typ = args[0], args[1], args[2]


def gate(when):
    """Blocks on the fifo gate-WHEN, if the test made one, until opened."""
    fifo = os.path.join(here, "gate-" + when)
    if not os.path.exists(fifo):
        return
    with open(os.path.join(here, "at-" + when), "w") as f:
        f.write(str(os.getpid()))
    with open(fifo) as f:
        f.read()
    os.unlink(fifo)


if op == "read":
    p = subprocess.run(["dig", "+noall", "+answer", "+tcp", "+time=5", "+tries=1",
                        "@127.0.0.1", "-p", str(conf["port"]), name, typ],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        sys.stderr.write("dig failed: " + p.stdout + p.stderr + "\n")
        sys.exit(75)
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[3] == typ:
            print(f[1], f[4])
    sys.exit(0)
ttl, addrs = args[3], args[4:]
gate("before")
script = "server 127.0.0.1 %d\nzone %s\nupdate delete %s. %s\n" % (
    conf["port"], conf["zone"], name, typ)
for a in addrs:
    script += "update add %s. %s %s %s\n" % (name, ttl, typ, a)
script += "send\n"
p = subprocess.run(["nsupdate", "-y", conf["key"]], input=script, text=True,
                   capture_output=True, timeout=30)
if p.returncode != 0:
    sys.stderr.write("nsupdate failed: " + p.stderr.strip() + "\n")
    sys.exit(75)
with open(os.path.join(here, "done"), "a") as f:
    f.write(" ".join(addrs) + "\n")
gate("after")
'''


class BindExec:
    """The exec provider of BIND_EXEC in folder, for the BIND bind."""

    def __init__(self, folder, bind):
        os.makedirs(folder, exist_ok=True)
        self.dir = folder
        self.path = os.path.join(folder, "bind-exec")
        with open(self.path, "w") as f:
            f.write(BIND_EXEC)
        os.chmod(self.path, stat.S_IRWXU)
        with open(os.path.join(folder, "bind.json"), "w") as f:
            json.dump({"port": bind.port, "zone": ZONE,
                       "key": f"{bind.key_alg}:{bind.key_name}:{bind.key_secret}"}, f)

    def section(self, name="bind"):
        return (f"\n[provider {name}]\ntype = exec\ncommand = {self.path}\n"
                f"timeout = {max(30, round(30 * TIME_SCALE))}s\n")

    def calls(self):
        try:
            with open(os.path.join(self.dir, "calls.jsonl")) as f:
                return [json.loads(line)["argv"] for line in f]
        except FileNotFoundError:
            return []

    def replaces(self):
        return [" ".join(a[3:]) for a in self.calls() if a[0] == "replace"]

    def done(self):
        """The address lists of the replaces that reached BIND, in order."""
        try:
            with open(os.path.join(self.dir, "done")) as f:
                return [line.strip() for line in f]
        except FileNotFoundError:
            return []

    def arm(self, when):
        """Makes the next replace block before or after its update."""
        os.mkfifo(os.path.join(self.dir, "gate-" + when))

    def reached(self, when):
        """The pid of the program blocked at the gate, once it is there."""
        try:
            with open(os.path.join(self.dir, "at-" + when)) as f:
                text = f.read()
        except FileNotFoundError:
            return None
        return int(text) if text else None

    def release(self, when):
        """Lets the program blocked at the gate go on; waits until it has left."""
        pid = self.reached(when)
        with open(os.path.join(self.dir, "gate-" + when), "w") as f:
            f.write("go\n")
        os.unlink(os.path.join(self.dir, "at-" + when))
        wait_for(f"the provider program {pid} to finish", lambda: not _alive(pid), timeout=30)

    def kill_blocked(self, when):
        """Kills the program blocked at the gate (it never gets past)."""
        pid = self.reached(when)
        os.kill(pid, signal.SIGKILL)
        wait_for(f"the provider program {pid} to go", lambda: not _alive(pid), timeout=30)
        os.unlink(os.path.join(self.dir, "gate-" + when))
        os.unlink(os.path.join(self.dir, "at-" + when))


    def cleanup(self):
        """Kills whatever program a failed test left blocked at a gate."""
        for when in ("before", "after"):
            pid = self.reached(when)
            if pid is not None and _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _alive(pid):
    """pid is a process that has not ended (an orphan is reaped by init)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


# A host clock ahead or behind by DDUP_CLOCK_SHIFT seconds, for one
# process (LD_PRELOAD): the real-time clock only, the monotonic one as it is.
CLOCK_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long shift(void)
{
	const char *s = getenv("DDUP_CLOCK_SHIFT");
	return s != NULL ? atol(s) : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	int rc;

	if (real == NULL)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += shift();
	return rc;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
"""


def clock_shift_env(folder, seconds):
    """The environment of a process whose clock is seconds off (CLOCK_SHIM)."""
    src, lib = os.path.join(folder, "clock.c"), os.path.join(folder, "clock.so")
    if not os.path.exists(lib):
        with open(src, "w") as f:
            f.write(CLOCK_SHIM)
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, src, "-ldl"], check=True,
                       capture_output=True, timeout=60)
    env = {"LD_PRELOAD": lib, "DDUP_CLOCK_SHIFT": str(int(seconds))}
    asan = os.environ.get("ASAN_OPTIONS")
    if asan is not None:        # the sanitizer's runtime wants to come first
        env["ASAN_OPTIONS"] = asan + ":verify_asan_link_order=0"
    return env


class Fleet:
    """Checkers a, b, c (or names) of one configuration on pg (see the module's comment).

    eps: (endpoint name, http server, ip, priority).  provider: the text of
    the [provider bind] section (default: rfc2136 to bind).  keys: lines
    for the top of every file; domain_keys: for the domain.  socket: the
    checkers that reach PostgreSQL through its Unix socket (the others
    over TCP, with the password).
    """

    def __init__(self, tmp_path, pg, bind, eps, names=CHECKERS, interval=60, attempts=2,
                 quorum=None, keys="", domain_keys="", provider=None, socket=("c",)):
        self.dir = tmp_path
        self.pg = pg
        self.bind = bind
        self.names = tuple(names)
        self.interval = interval
        self.socket = set(socket)
        self.eps = list(eps)
        self.attempts = attempts
        self.quorum = quorum
        self.keys = keys
        self.domain_keys = domain_keys
        self.provider = provider if provider is not None else provider_section(bind)
        self.procs = []
        for n in self.names:
            self.write(n)

    def config(self, name):
        return str(self.dir / f"{name}.ini")

    def text(self, name, attempts=None):
        """The configuration of checker name; attempts overrides the fleet's."""
        state = self.pg.uri(socket=name in self.socket)
        t = f"state = {state}\ninterval = {self.interval}s\n"
        t += f"checkers = {', '.join(self.names)}\nchecker = {name}\n"
        if self.quorum is not None:
            t += f"quorum = {self.quorum}\n"
        t += self.keys + self.provider
        t += f"\n[domain {NAME}]\nprovider = bind\nttl = 60\n"
        # Long enough for a test to kill a run while its check hangs.
        t += f"timeout = {min(self.interval // 2, round(10 * TIME_SCALE))}s\n"
        t += f"attempts = {attempts if attempts is not None else self.attempts}\n"
        t += self.domain_keys
        for ep, srv, ip, prio in self.eps:
            t += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
        return t

    def write(self, name, **kw):
        with open(self.config(name), "w") as f:
            f.write(self.text(name, **kw))
        os.chmod(self.config(name), 0o600)

    def argv(self, name, args, netns=None):
        """netns: None on the host; "lo" cut off with its loopback up; "down" without."""
        cmd = [DDUP, "-c", self.config(name), *args]
        if netns is None:
            return cmd
        up = "ip link set lo up && " if netns == "lo" else ""
        return ["unshare", "-n", "--", "/bin/sh", "-c", up + 'exec "$@"', "sh", *cmd]

    def run(self, name, *args, netns=None, env=None, timeout=60):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(self.argv(name, args, netns), capture_output=True, text=True,
                           env=e, timeout=timeout * TIME_SCALE)
        return Result(p)

    def start(self, name, *args, env=None):
        """A run in the background, to be killed or waited for (finish())."""
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.Popen(self.argv(name, args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=e)
        self.procs.append(p)
        return p

    def finish(self, p, timeout=60):
        out, err = p.communicate(timeout=timeout * TIME_SCALE)
        return Result(subprocess.CompletedProcess(p.args, p.returncode, out, err))

    def kill(self, p):
        p.kill()
        p.communicate(timeout=30)
        assert p.returncode == -signal.SIGKILL, p.returncode

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=30)
        self.procs = []

    def round(self, order=None, rc=0, netns=None, env=None):
        """Runs each checker of order (a string of names) once; each must exit rc.
        netns: {name: "lo" or "down"} for the ones cut off; env: {name: environment}."""
        out = {}
        for n in (order if order is not None else self.names):
            r = self.run(n, netns=(netns or {}).get(n), env=(env or {}).get(n))
            assert r.rc == rc, f"checker {n}: {r}"
            out[n] = r
        return out

    # ------------------------------------------------------------ the clock

    def db_now(self):
        """The database's clock as role ddup sees it (the seam's now()), in seconds."""
        rows = self.pg.psql("SELECT extract(epoch FROM now())", user="ddup")
        return float(rows[0][0])

    def slot(self):
        return int(self.db_now() // self.interval)

    def next_slot(self, n=1):
        """Steps the database's clock to 1 s into the n-th slot from now; returns it."""
        now = self.db_now()
        target = (int(now // self.interval) + n) * self.interval + 1
        self.pg.advance(target - now)
        s = self.slot()
        assert s == int(target // self.interval), (s, target)
        return s

    # ------------------------------------------------------------ reading

    def status(self, name="a", netns=None):
        r = self.run(name, "--status", "--json", netns=netns)
        assert r.rc == 0, r
        return r.json()

    def status_text(self, name="a"):
        r = self.run(name, "--status")
        assert r.rc == 0, r
        return r.out

    def dns(self):
        return self.bind.query(NAME, "A")

    def tables(self):
        """Every row of every table and the value of every sequence of ddup's
        schema (public), to compare before and after something that must
        write nothing."""
        out = {}
        for (t,) in self.pg.psql("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                 "ORDER BY 1"):
            out[t] = self.pg.psql(f'SELECT t::text FROM public."{t}" t ORDER BY 1')
        for (s,) in self.pg.psql("SELECT sequencename FROM pg_sequences "
                                 "WHERE schemaname = 'public' ORDER BY 1"):
            out["sequence " + s] = self.pg.psql(f'SELECT last_value, is_called FROM public."{s}"')
        return out

    def waiting_on_lock(self):
        """Sessions of ddup-check waiting for a lock (pg_stat_activity)."""
        return self.pg.psql("SELECT pid FROM pg_stat_activity WHERE application_name = "
                            "'ddup-check' AND wait_event_type = 'Lock'")


class LockHolder:
    """A psql session of postgres that holds locks until release()."""

    def __init__(self, pg, sql):
        self.p = subprocess.Popen(
            [os.path.join(pg.bin, "psql"), "-X", "-q", "-A", "-t", "-h", pg.sock,
             "-p", str(pg.port), "-U", "postgres", "-d", "ddup"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.p.stdin.write(sql + "\nSELECT 'held';\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if line == "":
                raise AssertionError(f"psql ended before holding: {sql}")
            if line.strip() == "held":
                break

    def release(self):
        if self.p is None:
            return
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p = None
