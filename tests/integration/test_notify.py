"""Notifications (ddup.ini(5), NOTIFICATIONS) through the built ddup-check: webhooks to a
loopback receiver that the test takes down, brings up or hangs
(hookfix.py), and programs that get the event JSON on stdin. DNS is kept
by the exec provider's test program (test_exec.py).
"""

import json
import os
import signal
import stat
import subprocess
import time

import pytest

from conftest import DDUP, TIME_SCALE
from fleetfix import clock_shift_env
from test_exec import Program, group_alive, process_alive, start, wait_file, wait_gone

NAME = "app.example.test"


def configure(ddup, prog, a, b, notify, interval="500ms"):
    # Checks of loopback servers; longer under valgrind (past the
    # interval there, which is only a warning).
    ddup.write(f"""interval = {interval}
timeout = {round(300 * TIME_SCALE)}ms
attempts = 1
[provider dns]
type = exec
command = {prog.path}
[domain {NAME}]
provider = dns
ttl = 60
[endpoint a]
url = {a.url}
ip = 192.0.2.1
priority = 0
[endpoint b]
url = {b.url}
ip = 192.0.2.2
priority = 1
{notify}
""")


def deliveries(ddup):
    return ddup.state_rows(
        "SELECT e.event, d.notifier, d.attempts, d.delivered IS NOT NULL,"
        " d.given_up IS NOT NULL FROM deliveries d JOIN events e"
        " ON e.id = d.event ORDER BY e.id, d.notifier",
        "SELECT e.event, d.notifier, d.attempts, (d.delivered IS NOT NULL)::int,"
        " (d.given_up IS NOT NULL)::int FROM ddup_delivery d JOIN ddup_event e"
        " ON e.id = d.event ORDER BY e.id, d.notifier")


def assert_not_in_state(ddup, secret):
    """Not in any row of the state, nor (SQLite) in any file of its folder."""
    assert secret not in ddup.state_dump()
    if ddup.on_pg():
        return
    for f in os.listdir(os.path.dirname(ddup.state)):
        with open(os.path.join(os.path.dirname(ddup.state), f), "rb") as fh:
            assert secret.encode() not in fh.read(), f


@pytest.fixture
def prog(ddup):
    return Program(str(ddup.dir / "bin"))


def test_down_two_runs_then_up_gets_each_event_once_in_order(ddup, prog, http_server,
                                                            receiver):
    a, b = http_server(), http_server()
    hook = receiver()
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
events = dns_updated, endpoint_down, endpoint_up
""")
    # Run 1: the first write of the domain; nobody listens.
    r = ddup.run()
    assert r.rc == 0, r
    assert "notify 'ops': event 1 not delivered (attempt 1 of 5" in r.err
    assert "connection refused" in r.err.lower() or "connect" in r.err.lower(), r.err
    # Run 2, past the first gap (half an interval): a fails over to b.
    time.sleep(0.4)
    a.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    assert "attempt 2 of 5" in r.err, r.err
    assert prog.records()[f"{NAME}/A"] == [60, ["192.0.2.2"]]
    # Run 3, past the second gap (4 intervals less half of one): the receiver is up.
    time.sleep(1.9)
    hook.up(status=204)
    a.set(status=200)
    r = ddup.run()
    assert r.rc == 0, r
    got = [(e["id"], e["event"], e.get("endpoint"), e["published"]) for e in hook.events()]
    assert got == [
        (1, "dns_updated", None, ["192.0.2.1"]),
        (2, "dns_updated", None, ["192.0.2.2"]),
        (3, "endpoint_down", "a", ["192.0.2.2"]),
        (4, "dns_updated", None, ["192.0.2.1"]),
        (5, "endpoint_up", "a", ["192.0.2.1"]),
    ], got
    # A fourth run sends nothing again.
    r = ddup.run()
    assert r.rc == 0, r
    assert len(hook.requests) == 5
    assert all(d[3] == 1 for d in deliveries(ddup))
    req = hook.requests[1]
    assert req["method"] == "POST" and req["path"] == "/hook"
    assert req["headers"]["Content-Type"] == "application/json"
    ev = json.loads(req["body"])
    assert ev["domain"] == NAME and ev["previous"] == ["192.0.2.1"]
    assert ev["tier"] == 1 and ev["previousTier"] == 0 and ev["error"] is None
    assert ev["time"].endswith("Z")
    assert [(e["name"], e["ip"], e["priority"], e["healthy"], e["state"], e["lastResult"])
            for e in ev["endpoints"]] == [
        ("a", "192.0.2.1", 0, False, "down", "HTTP 503"),
        ("b", "192.0.2.2", 1, True, "active", "ok")]


# A program notifier: appends its stdin to got.jsonl; while block exists,
# it writes its pid to blocked first and waits as many seconds as block
# says (empty: to be killed).  With escape, it leaves a child behind in a
# session of its own, its pid in escaped.
NOTIFIER = r'''#!/usr/bin/python3
import os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
data = sys.stdin.read()
block = os.path.join(here, "block")
if os.path.exists(os.path.join(here, "escape")):
    c = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    with open(os.path.join(here, "escaped"), "w") as f:
        f.write(str(c.pid))
if os.path.exists(block):
    with open(os.path.join(here, "blocked.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(here, "blocked.tmp"), os.path.join(here, "blocked"))
    time.sleep(float(open(block).read() or 600))
if os.path.exists(os.path.join(here, "fail")):
    sys.stderr.write("receiver said no\nsecond line\n")
    sys.exit(3)
with open(os.path.join(here, "got.jsonl"), "a") as f:
    f.write(data.replace("\n", " ") + "\n")
'''


def test_retry_set_by_a_clock_far_ahead_is_due_at_once(ddup, prog, http_server, receiver):
    """A run whose clock is ten years ahead fails a delivery and sets its retry in
    that future; the clock set right, the next run (the receiver up) delivers at once
    rather than hold the section until then.  The interval's first gap (half an hour)
    is far from over: only the retry's impossible date makes it due."""
    a, b = http_server(), http_server()
    hook = receiver()
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
events = dns_updated
""", interval="1h")
    r = ddup.run(env=clock_shift_env(str(ddup.dir), 10 * 365 * 86400))
    assert r.rc == 0, r
    assert "notify 'ops': event 1 not delivered (attempt 1 of 5" in r.err, r.err
    hook.up(status=204)
    r = ddup.run()
    assert r.rc == 0, r
    assert [e["id"] for e in hook.events()] == [1], r
    assert [d[3] for d in deliveries(ddup)] == [1]


def notifier(folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "notify-prog")
    with open(path, "w") as f:
        f.write(NOTIFIER)
    os.chmod(path, stat.S_IRWXU)
    return path


def got(folder):
    try:
        with open(os.path.join(folder, "got.jsonl")) as f:
            return [json.loads(line) for line in f]
    except FileNotFoundError:
        return []


def with_notifier(ddup, prog, a, b, flag, content="", timeout=None):
    """A program notifier, its flag file (block, escape) holding content;
    its folder and path."""
    folder = str(ddup.dir / "hook")
    path = notifier(folder)
    with open(os.path.join(folder, flag), "w") as f:
        f.write(content)
    keys = f"timeout = {timeout}\n" if timeout else ""
    configure(ddup, prog, a, b, f"[notify prog]\ncommand = {path}\n{keys}")
    return folder, path


def test_run_killed_after_commit_delivers_at_next_run(ddup, prog, http_server):
    a, b = http_server(), http_server()
    folder, path = with_notifier(ddup, prog, a, b, "block",
                                 timeout=f"{round(60 * TIME_SCALE)}s")
    p = subprocess.Popen([DDUP, "-c", ddup.config], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    blocked = os.path.join(folder, "blocked")
    deadline = time.monotonic() + 30 * TIME_SCALE
    while not os.path.exists(blocked) or os.path.getsize(blocked) == 0:
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.02)
    # The program runs only after the commit: the event is in the file.
    assert deliveries(ddup) == [("dns_updated", "prog", 0, 0, 0)]
    p.kill()
    p.wait()
    p.stdout.close()
    p.stderr.close()
    os.kill(int(open(blocked).read()), signal.SIGKILL)
    os.unlink(os.path.join(folder, "block"))
    assert got(folder) == []
    r = ddup.run()
    assert r.rc == 0, r
    evs = got(folder)
    assert [(e["event"], e["domain"], e["published"]) for e in evs] == [
        ("dns_updated", NAME, ["192.0.2.1"])]
    assert deliveries(ddup) == [("dns_updated", "prog", 0, 1, 0)]
    # The program's failure: its first stderr line, then a retry.
    open(os.path.join(folder, "fail"), "w").close()
    a.set(status=500)
    r = ddup.run()
    assert "notify 'prog': program " + path + ": receiver said no" in r.err, r.err
    assert deliveries(ddup)[-1] == ("dns_updated", "prog", 1, 0, 0)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_kills_the_program_and_the_next_run_delivers(ddup, prog, http_server, sig):
    a, b = http_server(), http_server()
    late = 3 * TIME_SCALE
    folder, _ = with_notifier(ddup, prog, a, b, "block", str(late),
                              timeout=f"{round(60 * TIME_SCALE)}s")
    p = start(ddup)
    pid = int(wait_file(os.path.join(folder, "blocked"), p))
    blocked_at = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=30 * TIME_SCALE)
    assert p.returncode == -sig, (p.returncode, err)
    # The program leads its group: the group is gone, not only ddup-check.
    wait_gone(lambda: group_alive(pid), "the program's group outlived ddup-check")
    ddup.after_kill()
    time.sleep(max(0, blocked_at + late + 1.5 * TIME_SCALE - time.monotonic()))
    assert got(folder) == [], "a late delivery landed"
    os.unlink(os.path.join(folder, "block"))
    r = ddup.run()
    assert r.rc == 0, r
    assert [(e["event"], e["published"]) for e in got(folder)] == [
        ("dns_updated", ["192.0.2.1"])]


def test_child_that_left_the_group_is_killed_too(ddup, prog, http_server):
    folder, _ = with_notifier(ddup, prog, http_server(), http_server(), "escape")
    r = ddup.run()
    assert r.rc == 0, r
    assert len(got(folder)) == 1
    with open(os.path.join(folder, "escaped")) as f:
        pid = int(f.read())
    wait_gone(lambda: process_alive(pid), "left running")


@pytest.mark.serial
def test_receiver_that_never_answers_costs_at_most_timeout(ddup, prog, http_server, receiver):
    a, b = http_server(), http_server()
    hook = receiver().hang()
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
timeout = 1s
[notify prog]
command = /bin/true
timeout = 1s
""")
    t0 = time.monotonic()
    r = ddup.run()
    took = time.monotonic() - t0
    assert r.rc == 0, r
    assert "notify 'ops': event 1 not delivered (attempt 1 of 5" in r.err, r.err
    assert "no answer within" in r.err, r.err
    # One second for the webhook, and the rest of the run is quick.
    assert 1.0 <= took < 1.0 + 2.0 * TIME_SCALE, took
    # The program notifier is not held back by the webhook.
    assert ("dns_updated", "prog", 0, 1, 0) in deliveries(ddup)


@pytest.mark.serial
def test_slow_receiver_shares_the_timeout_and_keeps_order(ddup, prog, http_server, receiver):
    a, b = http_server(), http_server()
    hook = receiver()
    budget = 1.0 * TIME_SCALE
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
timeout = {round(budget * 1000)}ms
events = dns_updated, endpoint_down, endpoint_up
""")
    # Five events pile up while the receiver is down: its gaps pass.
    assert ddup.run().rc == 0
    a.set(status=503)
    time.sleep(0.3)
    assert ddup.run().rc == 0
    hook.up(delay=0.4 * TIME_SCALE)
    time.sleep(2.0)
    a.set(status=200)
    t0 = time.monotonic()
    r = ddup.run()
    took = time.monotonic() - t0
    assert r.rc == 0, r
    # 0.4 s each within 1 s in all: two are answered, the third is cut
    # short, not counted as an attempt, and sent again by the next run.
    assert took < budget + 2.0 * TIME_SCALE, took
    done = [d for d in deliveries(ddup) if d[3]]
    assert 1 <= len(done) <= 2, deliveries(ddup)
    assert all(d[2] == 0 for d in deliveries(ddup) if not d[3]), deliveries(ddup)
    hook.up()
    for _ in range(3):
        assert ddup.run().rc == 0
    assert [(e["event"], e.get("endpoint")) for e in hook.distinct()] == [
        ("dns_updated", None), ("dns_updated", None), ("endpoint_down", "a"),
        ("dns_updated", None), ("endpoint_up", "a")]
    assert [e["id"] for e in hook.distinct()] == [1, 2, 3, 4, 5]
    # At most the one cut short arrived twice.
    assert len(hook.requests) <= 6


def test_events_filter_and_all_unhealthy_once(ddup, prog, http_server, receiver):
    a, b = http_server(), http_server()
    ops, eps = receiver().up(), receiver().up()
    configure(ddup, prog, a, b, f"""[notify ops]
url = {ops.url}
[notify eps]
url = {eps.url}
method = PUT
events = endpoint_down endpoint_up
""")
    assert ddup.run().rc == 0
    a.set(status=503)
    b.set(status=503)
    assert ddup.run().rc == 0
    assert ddup.run().rc == 0          # still unhealthy: no second all_unhealthy
    b.set(status=200)
    assert ddup.run().rc == 0
    b.set(status=503)
    assert ddup.run().rc == 0          # lost again: a second one
    assert [e["event"] for e in ops.events()] == [
        "dns_updated", "all_unhealthy", "dns_updated", "all_unhealthy"]
    assert [(e["event"], e["endpoint"]) for e in eps.events()] == [
        ("endpoint_down", "a"), ("endpoint_down", "b"), ("endpoint_up", "b"),
        ("endpoint_down", "b")]
    assert all(r["method"] == "PUT" for r in eps.requests)
    un = ops.events()[1]
    assert un["published"] == ["192.0.2.1"] and un["tier"] == 0
    assert [e["state"] for e in un["endpoints"]] == ["down", "down"]


def test_header_secret_never_in_state_logs_or_status(ddup, prog, http_server, receiver):
    secret = "hook-s3cret-" + os.urandom(6).hex()
    a, b = http_server(), http_server()
    hook = receiver().up(status=500)
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
header = Authorization: !env HOOK_TOKEN
header = X-Team: dns
attempts = 1
""")
    env = {"HOOK_TOKEN": "Bearer " + secret}
    outs = []
    for args in (("-v",), ("--status",), ("--status", "--json"), ("-n",)):
        r = ddup.run(*args, env=env)
        outs += [r.out, r.err]
    assert hook.requests[0]["headers"]["Authorization"] == "Bearer " + secret
    assert hook.requests[0]["headers"]["X-Team"] == "dns"
    assert "given up after 1 attempts" in outs[1], outs[1]
    assert "500" in outs[1]
    for o in outs:
        assert secret not in o
    assert_not_in_state(ddup, secret)
    assert deliveries(ddup) == [("dns_updated", "ops", 1, 0, 1)]


def test_status_shows_pending_and_given_up(ddup, prog, http_server, receiver):
    a, b = http_server(), http_server()
    hook = receiver()
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
attempts = 2
[notify quiet]
command = /bin/true
""")
    st = ddup.status()
    assert st["notifications"] == [
        {"name": "ops", "kind": "webhook", "pending": 0, "givenUp": 0,
         "oldestPending": None, "lastError": None},
        {"name": "quiet", "kind": "program", "pending": 0, "givenUp": 0,
         "oldestPending": None, "lastError": None}]
    assert ddup.run().rc == 0
    st = ddup.status()
    ops = st["notifications"][0]
    assert ops["pending"] == 1 and ops["givenUp"] == 0
    assert ops["oldestPending"] == st["lastRun"]
    assert hook.url in ops["lastError"]
    assert st["notifications"][1]["pending"] == 0
    text = ddup.run("--status").out
    assert f"notify ops (webhook): 1 pending since {st['lastRun']}; last error: " in text
    assert "notify quiet (program): nothing pending\n" in text
    time.sleep(0.3)
    r = ddup.run()
    assert "notify 'ops': event 1 given up after 2 attempts" in r.err, r.err
    ops = ddup.status()["notifications"][0]
    assert (ops["pending"], ops["givenUp"]) == (0, 1)
    assert "notify ops (webhook): nothing pending, 1 given up; last error: " in \
        ddup.run("--status").out
    # A section taken out of the file: what it had pending is given up.
    hook.up()
    a.set(status=503)
    configure(ddup, prog, a, b, """[notify quiet]
command = /bin/false
""")
    assert ddup.run().rc == 0
    assert deliveries(ddup)[-1] == ("dns_updated", "quiet", 1, 0, 0)
    # The undelivered view, as the README shows it.
    rows = ddup.state_rows("SELECT id, domain, event, notifier, attempts,"
                           " given_up IS NOT NULL FROM undelivered",
                           "SELECT id, domain, event, notifier, attempts,"
                           " (given_up IS NOT NULL)::int FROM ddup_undelivered")
    assert rows == [(1, NAME, "dns_updated", "ops", 2, 1),
                    (2, NAME, "dns_updated", "quiet", 1, 0)], rows


def test_secret_url_never_shown(ddup, prog, http_server, receiver):
    token = "T0K3N" + os.urandom(6).hex()
    a, b = http_server(), http_server()
    hook = receiver().up(status=503)
    configure(ddup, prog, a, b, """[notify chat]
url = !env HOOK_URL
attempts = 1
""")
    env = {"HOOK_URL": hook.url + "/services/" + token}
    outs = []
    for args in (("-v",), ("--status",), ("--status", "--json")):
        r = ddup.run(*args, env=env)
        outs += [r.out, r.err]
    assert hook.requests[0]["path"] == "/hook/services/" + token
    assert "notify 'chat' at <secret url>: 503" in outs[1], outs[1]
    for o in outs:
        assert token not in o
    assert_not_in_state(ddup, token)
    assert deliveries(ddup) == [("dns_updated", "chat", 1, 0, 1)]


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("retry_after", ["9223372036854775808", "18000000000000000",
                                         "Fri, 31 Dec 99999 23:59:59 GMT"])
def test_huge_retry_after_costs_at_most_timeout(ddup, prog, http_server, receiver, status,
                                                retry_after):
    # 2^63 s, 1.8e16 s, a date in the year 99999: never waited, not even
    # in part; the attempt fails at once and the next run meets it again.
    a, b = http_server(), http_server()
    hook = receiver().up(status=status, headers={"Retry-After": retry_after})
    # 3 s, not 1: on a loaded machine a delivery cut short by timeout
    # is not counted, and this test wants the attempt counted.
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
timeout = 3s
""")
    for attempt in (1, 2):
        t0 = time.monotonic()
        r = ddup.run()
        took = time.monotonic() - t0
        assert r.rc == 0, r
        assert took < 3.0 + 10 * TIME_SCALE, (took, r)
        assert f"event 1 not delivered (attempt {attempt} of 5" in r.err, r.err
        assert str(status) in r.err, r.err
        if status == 429:
            assert "not waited" in r.err, r.err
        # Past the first gap (half an interval).
        time.sleep(0.4)
    # Event 1 twice; a later one (a check slow on a busy machine) waits.
    assert [e["id"] for e in hook.events()] == [1, 1]
    assert deliveries(ddup)[0] == ("dns_updated", "ops", 2, 0, 0)


def test_2xx_with_a_huge_body_is_a_delivery(ddup, prog, http_server, receiver):
    # The receiver got the event: what it says after the status is not read.
    a, b = http_server(), http_server()
    hook = receiver().up(status=200, body=b"x" * (10 << 20))
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
attempts = 2
""")
    r = ddup.run()
    assert r.rc == 0, r
    assert "not delivered" not in r.err and "given up" not in r.err, r.err
    assert deliveries(ddup)[0] == ("dns_updated", "ops", 0, 1, 0)
    time.sleep(0.4)
    assert ddup.run().rc == 0
    # Not sent again (a later event may be: a check slow on a busy machine).
    assert [e["id"] for e in hook.events()].count(1) == 1


def test_redirect_names_the_url_key(ddup, prog, http_server, receiver):
    a, b = http_server(), http_server()
    hook = receiver().up(status=302, headers={"Location": "http://127.0.0.1:9/"})
    configure(ddup, prog, a, b, f"""[notify ops]
url = {hook.url}
""")
    r = ddup.run()
    assert r.rc == 0, r
    assert "302" in r.err and "redirects are not followed (check url)" in r.err, r.err
    assert "baseUrl" not in r.err, r.err
