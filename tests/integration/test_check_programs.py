"""Check programs (ddup.ini(5), CHECK TYPES), end to end through ddup-check.

Debian's monitoring plugins for real (check_tcp against a listener of
the test's own, check_http against the suite's HTTP server, check_dig
against the suite's BIND), and shell scripts the tests write for every
exit status, a signal, a hang with a child that keeps stdout open, a
flood of output, the placeholders and environment, and maxExec. Each
run is `ddup-check --dry-run --json`; the provider points at a closed
port, as in test_checks.py.
"""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import DDUP, TIME_SCALE
from httpfix import free_port
from progfix import *  # noqa: F401,F403  (fixtures)
from progfix import pid_gone
from test_checks import ZONE, config as http_config

T = TIME_SCALE
PLUGINS = "/usr/lib/nagios/plugins"


def config(endpoints, top=None, **domain):
    """INI text: one domain, endpoints e0, e1, ... in order; each a
    command (str) or a dict of endpoint keys (command or url, ip, host)."""
    lines = [http_config([], top, **domain).rstrip("\n")]
    for i, ep in enumerate(endpoints):
        if not isinstance(ep, dict):
            ep = {"command": ep}
        ep = dict(ep)
        ep.setdefault("ip", f"192.0.2.{i + 1}")
        lines += ["", f"[endpoint e{i}]"] + [f"{k} = {v}" for k, v in ep.items()]
    return "\n".join(lines) + "\n"


def check(ddup, endpoints, top=None, env=None, **domain):
    """Runs the checks (a dry run); returns (endpoint results in order, wall seconds)."""
    ddup.write(config(endpoints, top, **dict({"timeout": "5s"}, **domain)))
    t0 = time.monotonic()
    r = ddup.run("--dry-run", "--json", env=env)
    wall = time.monotonic() - t0
    assert r.rc == 0, r
    got = {e["name"]: e for d in r.json()["domains"] for e in d["endpoints"]}
    return [got[ep.get("name", f"e{i}") if isinstance(ep, dict) else f"e{i}"]
            for i, ep in enumerate(endpoints)], wall


def passes(ep, result):
    assert (ep["lastResult"], ep["healthy"]) == (result, True), ep


def fails(ep, result):
    assert (ep["lastResult"], ep["healthy"]) == (result, False), ep


def plugin(name):
    path = os.path.join(PLUGINS, name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"not installed: {path} (monitoring-plugins)")
    return path


# ---------------------------------------------------------------- exit statuses

def test_exit_statuses(ddup, programs):
    bodies = [
        ("echo 'PROG OK - all fine | time=0.01s;1;2'; echo second line", "PROG OK - all fine"),
        ("exit 0", "ok"),
        ("echo 'PROG WARNING - slow'; exit 1", "warning: PROG WARNING - slow"),
        ("exit 1", "warning"),
        ("echo 'PROG CRITICAL - down|x=1'; exit 2", "PROG CRITICAL - down"),
        ("echo 'PROG UNKNOWN - bad arguments'; exit 3", "PROG UNKNOWN - bad arguments"),
        ("exit 3", "exit status 3"),
        ("exit 42", "exit status 42"),
        ("kill -SEGV $$", "killed by signal 11"),
        ("printf '  \\033[31mred\\033[0m\\tand\\001 more  \\n'; exit 2", "?[31mred?[0m?and? more"),
    ]
    eps, _ = check(ddup, [programs(b).path for b, _ in bodies])
    for ep, (_, want) in zip(eps, bodies):
        if want in ("PROG OK - all fine", "ok") or want.startswith("warning"):
            passes(ep, want)
        else:
            fails(ep, want)
        assert isinstance(ep["latencyMs"], int) and 0 <= ep["latencyMs"] < 5000 * T, ep


def test_line_cut_at_200_bytes(ddup, programs):
    eps, _ = check(ddup, [programs("printf '%0300d' 7; exit 1").path,
                          programs("printf 'caf\\303\\251%.0s' $(seq 80); exit 2").path])
    passes(eps[0], "warning: " + "0" * 200)
    # 5 bytes a time: the cut at 200 falls on a character's end.
    fails(eps[1], "caf\u00e9" * 40)


def test_cannot_run(ddup, programs, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\nexit 0\n")
    junk = programs("", name="junk")
    with open(junk.path, "w") as f:
        f.write("\x7fELF not really\n")
    missing = str(tmp_path / "no-such-program")
    eps, _ = check(ddup, [missing + " -H {ip}", str(plain), junk.path])
    fails(eps[0], f"cannot run {missing}: No such file or directory")
    fails(eps[1], f"cannot run {plain}: Permission denied")
    fails(eps[2], f"cannot run {junk.path}: Exec format error")


# valgrind's forked child dies of an execve that fails past its own checks.
@pytest.mark.skipif("DDUP_VALGRIND_BIN" in os.environ, reason="valgrind: exit 101")
def test_missing_interpreter(ddup, programs):
    p = programs("", name="badinterp")
    with open(p.path, "w") as f:
        f.write("#!/nonexistent/interpreter\nexit 0\n")
    eps, _ = check(ddup, [p.path])
    fails(eps[0], f"cannot run {p.path}: No such file or directory")


# ---------------------------------------------------------------- placeholders, environment

def test_placeholders_environment_folder(ddup, programs):
    record = programs(r'''
n=0
for a in "$@"; do n=$((n+1)); printf '%s\n' "$a" > "$HERE/arg$n"; done
printf '%s\n' "$n" > "$HERE/argc"
env > "$HERE/env"
pwd > "$HERE/cwd"
readlink /proc/self/fd/0 > "$HERE/stdin"
readlink /proc/self/fd/2 > "$HERE/stderr"
echo "OK - $DDUP_ENDPOINT"
''')
    eps, _ = check(ddup, [
        {"command": record.path + " -H {ip} --host={host} {name}/{domain} {{ip} x{ip}y{ip}z",
         "ip": "192.0.2.10", "name": "web one"},
    ], env={"DDUP_RUN_MARK": "seen-by-the-program", "DDUP_IP": "from-outside"})
    passes(eps[0], "OK - web one")
    args = [record.read(f"arg{i}").rstrip("\n") for i in range(1, int(record.read("argc")) + 1)]
    assert args == ["-H", "192.0.2.10", "--host=192.0.2.10", f"web one/app.{ZONE}", "{192.0.2.10",
                    "x192.0.2.10y192.0.2.10z"]
    env = dict(line.split("=", 1) for line in record.read("env").splitlines() if "=" in line)
    assert env["DDUP_DOMAIN"] == f"app.{ZONE}"
    assert env["DDUP_ENDPOINT"] == "web one"
    assert env["DDUP_IP"] == "192.0.2.10"          # ours, not the one from outside
    assert env["DDUP_RUN_MARK"] == "seen-by-the-program"
    assert record.read("cwd").strip() == str(ddup.dir)
    assert record.read("stdin").strip() == "/dev/null"
    assert record.read("stderr").strip() == "/dev/null"


def test_host_placeholder(ddup, programs):
    p = programs('echo "OK - $1 $2"')
    eps, _ = check(ddup, [{"command": p.path + " {host} {ip}", "ip": "192.0.2.20",
                           "host": "www.example.test"}])
    passes(eps[0], "OK - www.example.test 192.0.2.20")


def test_output_past_stdout_is_not_the_result(ddup, programs):
    """stderr goes nowhere, and is never the result."""
    p = programs("echo 'on stderr' >&2; exit 2")
    eps, _ = check(ddup, [p.path])
    fails(eps[0], "exit status 2")


# ---------------------------------------------------------------- hangs, children, floods

@pytest.mark.serial
def test_hang_killed_at_timeout_with_its_child(ddup, programs):
    p = programs('sleep 300 & echo $! >> "$HERE/pids"; echo $$ >> "$HERE/pids"; '
                 'echo "still checking"; sleep 300')
    eps, wall = check(ddup, [p.path], timeout="1s")
    fails(eps[0], "timeout")
    assert 1000 <= eps[0]["latencyMs"] < 2500 * T, eps[0]
    assert wall < 6 * T, wall
    pids = p.pids()
    assert len(pids) == 2
    for pid in pids:
        assert pid_gone(pid), f"process {pid} outlived its check"


@pytest.mark.serial
def test_child_holding_stdout_holds_nothing_up(ddup, programs):
    """The program exits; its child keeps the pipe open and sleeps: the check
    ends with the program, and the child is gone after the run, even one in a
    session of its own (setsid)."""
    p = programs('sleep 300 & echo $! >> "$HERE/pids"; '
                 'setsid sh -c \'echo $$ >> "$0/pids"; exec sleep 300\' "$HERE" & '
                 'while [ $(wc -l < "$HERE/pids") -lt 2 ]; do sleep 0.01; done; '
                 'echo "OK - done"; exit 0')
    eps, wall = check(ddup, [p.path], timeout="10s")
    passes(eps[0], "OK - done")
    assert eps[0]["latencyMs"] < 2000 * T, eps[0]
    assert wall < 8 * T, wall
    for pid in p.pids():
        assert pid_gone(pid), f"process {pid} outlived its check"


@pytest.mark.serial
def test_flood_of_output(ddup, programs):
    flood = programs('echo "FLOOD OK - first line|perf=1"; head -c 5000000 /dev/urandom; '
                     'echo done > "$HERE/finished"; exit 0')
    one_line = programs("head -c 3000000 /dev/zero | tr '\\0' y; exit 2")
    eps, wall = check(ddup, [flood.path, one_line.path], timeout="20s")
    passes(eps[0], "FLOOD OK - first line")
    fails(eps[1], "y" * 200)
    # It wrote everything (read and thrown away), not stopped by a full pipe.
    assert flood.read("finished") == "done\n"
    assert wall < 15 * T, wall


@pytest.mark.serial
def test_many_programs_none_waits_for_its_timeout(ddup, programs):
    """40 quick programs, 16 at a time: each one's end is seen at once (SIGCHLD
    for all of them through one descriptor), none waits for its timeout."""
    progs = [programs('echo "OK - %d"' % i) for i in range(40)]
    eps, wall = check(ddup, [p.path for p in progs], timeout="10s")
    for i, ep in enumerate(eps):
        passes(ep, f"OK - {i}")
        assert ep["latencyMs"] < 2000 * T, ep
    assert wall < 8 * T, wall


def _stop_signals_default():
    # A suite started in the background may hand SIGINT down ignored, and
    # ddup-check leaves an ignored signal ignored (nohup): the test wants it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_kills_the_programs(ddup, programs, sig):
    """Stopped while two programs hang and a third waits for maxExec: both are
    killed with their children, the third never starts, and ddup-check dies
    of the signal."""
    progs = [programs('echo $$ >> "$HERE/pids"; sleep 300 & echo $! >> "$HERE/pids"; wait')
             for _ in range(3)]
    ddup.write(config([p.path for p in progs], {"maxExec": 2}, timeout="20s"))
    ddup.next_slot()
    p = subprocess.Popen([DDUP, "-c", ddup.config], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=_stop_signals_default)
    try:
        deadline = time.monotonic() + 10 * T
        while sum(len(q.pids()) for q in progs) < 4:
            assert time.monotonic() < deadline and p.poll() is None, p.poll()
            time.sleep(0.02)
        t0 = time.monotonic()
        p.send_signal(sig)
        _, err = p.communicate(timeout=20 * T)
    finally:
        # Whatever went wrong, nothing of the test's is left running.
        if p.poll() is None:
            p.kill()
            p.wait()
        left = [pid for q in progs for pid in q.pids() if not pid_gone(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert p.returncode == -sig, (p.returncode, err)
    assert time.monotonic() - t0 < 3 * T
    assert f"stopped by signal {int(sig)}" in err, err
    assert left == [], "processes outlived ddup-check"
    started = [q for q in progs if q.pids()]
    assert len(started) == 2, "a third program started past maxExec or after the signal"
    ddup.after_kill()


# ---------------------------------------------------------------- maxExec

@pytest.mark.serial
def test_max_exec(ddup, programs, http_server):
    """maxExec = 2 with 6 programs of 0.4 s: never more than 2 at once, all 6
    run, and the HTTP checks after them in the file are not held up."""
    progs = [programs('date +%%s.%%N > "$HERE/start"; sleep 0.4; '
                      'date +%%s.%%N > "$HERE/end"; echo "OK - %d"' % i) for i in range(6)]
    servers = [http_server(), http_server()]

    class Stamped(list):
        def append(self, x):
            x.at = time.time()
            super().append(x)

    for s in servers:
        s.requests = Stamped()
    t0 = time.time()
    eps, wall = check(ddup, [p.path for p in progs] + [{"url": s.url} for s in servers],
                      top={"maxExec": 2})
    for i, ep in enumerate(eps[:6]):
        passes(ep, f"OK - {i}")
    passes(eps[6], "ok")
    passes(eps[7], "ok")
    spans = [(float(p.read("start")), float(p.read("end"))) for p in progs]
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans],
                    key=lambda x: (x[0], x[1]))
    at_once = most = 0
    for _, d in events:
        at_once += d
        most = max(most, at_once)
    assert most == 2, spans
    # Three rounds of two: at least 3 x 0.4 s.
    assert wall >= 1.2, wall
    first_end = min(e for _, e in spans)
    for s in servers:
        assert len(s.requests) == 1
        assert t0 <= s.requests[0].at < first_end, (s.requests[0].at - t0, first_end - t0)


# ---------------------------------------------------------------- monitoring-plugins

def test_check_tcp(ddup, tcp_listener):
    check_tcp = plugin("check_tcp")
    up = tcp_listener("127.0.0.1")
    closed = free_port()
    eps, _ = check(ddup, [
        {"command": f"{check_tcp} -H {{ip}} -p {up.port}", "ip": "127.0.0.1"},
        {"command": f"{check_tcp} -H 127.0.0.1 -p {closed} -t 3", "ip": "192.0.2.2"},
    ])
    assert eps[0]["healthy"] is True, eps[0]
    assert eps[0]["lastResult"].startswith("TCP OK - "), eps[0]
    assert f"port {up.port}" in eps[0]["lastResult"] and "|" not in eps[0]["lastResult"]
    assert up.wait_accepted(1) >= 1
    assert eps[1]["healthy"] is False, eps[1]
    assert "Connection refused" in eps[1]["lastResult"], eps[1]


def test_check_http(ddup, http_server):
    check_http = plugin("check_http")
    good = http_server(body="all good\n")
    missing = http_server(status=404, body="nope")
    broken = http_server(status=503, body="maintenance")
    eps, _ = check(ddup, [
        f"{check_http} -I 127.0.0.1 -p {good.port} -u /health -s good",
        f"{check_http} -I 127.0.0.1 -p {missing.port} -u /health",
        f"{check_http} -I 127.0.0.1 -p {broken.port} -u /health",
    ])
    assert eps[0]["healthy"] is True and eps[0]["lastResult"].startswith("HTTP OK: "), eps[0]
    assert "200" in eps[0]["lastResult"] and "|" not in eps[0]["lastResult"]
    # 4xx is a WARNING to check_http: it passes, and says so.
    assert eps[1]["healthy"] is True, eps[1]
    assert eps[1]["lastResult"].startswith("warning: HTTP WARNING: "), eps[1]
    assert "404" in eps[1]["lastResult"]
    assert eps[2]["healthy"] is False, eps[2]
    assert eps[2]["lastResult"].startswith("HTTP CRITICAL: ") and "503" in eps[2]["lastResult"]
    assert [len(s.requests) for s in (good, missing, broken)] == [1, 1, 1]
    assert good.requests[0].path == "/health"


def test_check_dig_against_bind(ddup, bind_server):
    """check_dns asks nslookup, which cannot be given a port; check_dig, of the
    same package, can: the suite's BIND listens on a port of its own."""
    check_dig = plugin("check_dig")
    port = bind_server.port
    eps, _ = check(ddup, [
        f"{check_dig} -H 127.0.0.1 -p {port} -l ns1.{ZONE} -a 127.0.0.1 -t 5",
        f"{check_dig} -H 127.0.0.1 -p {port} -l ns1.{ZONE} -a 192.0.2.99 -t 5",
    ])
    assert eps[0]["healthy"] is True and eps[0]["lastResult"].startswith("DNS OK"), eps[0]
    assert "127.0.0.1" in eps[0]["lastResult"]
    assert eps[1]["healthy"] is True, eps[1]     # a wrong answer is a WARNING
    assert eps[1]["lastResult"].startswith("warning: DNS WARNING"), eps[1]


# ---------------------------------------------------------------- output

def test_results_in_status_and_log(ddup, programs):
    """The line is what --status shows for the endpoint, and what -v logs."""
    p = programs("echo 'PROG CRITICAL - disk full|used=99%'; exit 2")
    ddup.write(config([p.path], timeout="5s"))
    r = ddup.run("-v")
    assert "PROG CRITICAL - disk full" in r.err, r
    assert "used=99%" not in r.err, r
    st = ddup.status()
    (dom,) = st["domains"]
    assert dom["endpoints"][0]["lastResult"] == "PROG CRITICAL - disk full"
    json.dumps(st)
