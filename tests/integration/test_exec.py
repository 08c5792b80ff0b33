"""The exec provider (ddup.ini(5), type = exec) through the built ddup-check, with real
programs: small Python scripts written here that keep the records in a
JSON file beside them and log every call (argv, folder, stdin), so a test
can count reads and writes and see the exact arguments.
"""

import json
import os
import resource
import signal
import stat
import subprocess
import time

import pytest

from conftest import DDUP, TIME_SCALE

NAME = "app.example.test"

# The fake DNS service: records in records.json, every call in calls.jsonl.
SCRIPT = r'''#!/usr/bin/python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
db = os.path.join(here, "records.json")
call = {"argv": sys.argv[1:], "cwd": os.getcwd(),
        "stdin": os.readlink("/proc/self/fd/0")}
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps(call) + "\n")
recs = json.load(open(db)) if os.path.exists(db) else {}
args = sys.argv[1:]
while args and args[0] not in ("read", "replace"):
    args = args[1:]
op, name, typ = args[0], args[1], args[2]
key = name + "/" + typ
BEHAVIOUR
if op == "read":
    if key in recs:
        ttl, addrs = recs[key]
        for a in addrs:
            print(ttl, a)
else:
    ttl, addrs = int(args[3]), args[4:]
    if addrs:
        recs[key] = [ttl, addrs]
    else:
        recs.pop(key, None)
    json.dump(recs, open(db, "w"))
'''


class Program:
    def __init__(self, folder, behaviour="", name="dns-update"):
        os.makedirs(folder, exist_ok=True)
        self.dir = folder
        self.path = os.path.join(folder, name)
        with open(self.path, "w") as f:
            f.write(SCRIPT.replace("BEHAVIOUR", behaviour or "pass"))
        os.chmod(self.path, stat.S_IRWXU)

    def calls(self):
        try:
            with open(os.path.join(self.dir, "calls.jsonl")) as f:
                return [json.loads(line) for line in f]
        except FileNotFoundError:
            return []

    def ops(self):
        """['read A', 'replace A 60 192.0.2.1', ...] without the args."""
        out = []
        for c in self.calls():
            a = c["argv"]
            while a[0] not in ("read", "replace"):
                a = a[1:]
            out.append(" ".join([a[0]] + a[2:]))
        return out

    def forget_calls(self):
        try:
            os.unlink(os.path.join(self.dir, "calls.jsonl"))
        except FileNotFoundError:
            pass

    def records(self):
        try:
            with open(os.path.join(self.dir, "records.json")) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def seed(self, recs):
        with open(os.path.join(self.dir, "records.json"), "w") as f:
            json.dump(recs, f)


def configure(ddup, prog, eps, keys="", provider_keys=""):
    """eps: (endpoint name, http server, ip, priority)."""
    text = f"""interval = 30s
[provider dns]
type = exec
command = {prog.path}
timeout = {max(1, round(5 * TIME_SCALE))}s
{provider_keys}
[domain {NAME}]
provider = dns
ttl = 60
attempts = 1
{keys}
"""
    for ep, srv, ip, prio in eps:
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    ddup.write(text)


@pytest.fixture
def prog(ddup):
    return Program(str(ddup.dir / "bin"))


def test_first_run_reads_then_writes_then_nothing(ddup, prog, http_server):
    a, b = http_server(), http_server()
    prog.seed({f"{NAME}/A": [300, ["203.0.113.9"]]})
    configure(ddup, prog, [("a", a, "192.0.2.1", 0), ("b", b, "2001:db8::1", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    # Every read before any replace, A first (ddup.ini(5), type = exec).
    assert prog.ops() == ["read A", "read AAAA", "replace A 60 192.0.2.1",
                          "replace AAAA 60 2001:db8::1"], r
    assert prog.records() == {f"{NAME}/A": [60, ["192.0.2.1"]],
                              f"{NAME}/AAAA": [60, ["2001:db8::1"]]}
    call = prog.calls()[0]
    assert call["cwd"] == str(ddup.dir), "not run in the configuration's folder"
    assert call["stdin"] == "/dev/null"
    # Change-only: a run with nothing to change calls nothing.
    prog.forget_calls()
    r = ddup.run()
    assert (r.rc, r.out, r.err) == (0, "", ""), r
    assert prog.ops() == []


def test_first_run_finds_the_right_set(ddup, prog, http_server):
    a, b = http_server(), http_server()
    prog.seed({f"{NAME}/A": [60, ["192.0.2.2", "192.0.2.1"]]})
    configure(ddup, prog, [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 0)])
    r = ddup.run()
    assert r.rc == 0, r
    assert prog.ops() == ["read A"], "wrote what was already there"


def test_first_run_compares_sets_not_lists(ddup, prog, http_server):
    # Reversed, with a duplicate and another spelling of an address: the
    # same set, so nothing to write.
    eps = [(n, http_server(), ip, 0) for n, ip in
           (("a", "2001:db8::1"), ("b", "2001:db8::2"), ("c", "2001:db8::3"))]
    prog.seed({f"{NAME}/AAAA": [60, ["2001:db8::3", "2001:DB8:0::2",
                                     "2001:db8::1", "2001:db8::3"]]})
    configure(ddup, prog, eps)
    r = ddup.run()
    assert r.rc == 0, r
    assert prog.ops() == ["read AAAA"], "wrote what was already there"


def test_change_and_emptied_type(ddup, prog, http_server):
    p, b6 = http_server(), http_server()
    configure(ddup, prog, [("p", p, "192.0.2.1", 0), ("b", b6, "2001:db8::1", 10)])
    assert ddup.run().rc == 0
    assert prog.records() == {f"{NAME}/A": [60, ["192.0.2.1"]]}
    prog.forget_calls()
    p.set(status=503)
    r = ddup.run()
    assert r.rc == 0, r
    # A emptied (no address: delete), AAAA put in; A first.
    assert prog.ops() == ["replace A 60", "replace AAAA 60 2001:db8::1"]
    assert prog.records() == {f"{NAME}/AAAA": [60, ["2001:db8::1"]]}


def test_failing_program(ddup, prog, http_server):
    prog = Program(prog.dir, behaviour=(
        'if op == "replace":\n'
        '    sys.stderr.write("zone \\x1b[31mlocked\\nsecond line\\n")\n'
        '    sys.exit(3)'))
    a = http_server()
    configure(ddup, prog, [("a", a, "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "zone ?[31mlocked" in r.err and "second line" not in r.err, r
    assert "\x1b" not in r.err
    st = ddup.status()["domains"][0]
    assert "zone ?[31mlocked" in st["lastError"]
    assert prog.records() == {}
    # A failed update is tried again by the next run.
    prog.forget_calls()
    assert ddup.run().rc == 1
    assert "replace A 60 192.0.2.1" in prog.ops()


def test_failure_without_stderr_shows_the_exit_status(ddup, prog, http_server):
    prog = Program(prog.dir, behaviour='if op == "replace":\n    sys.exit(9)')
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1 and "exit status 9" in r.err, r


def test_exit_75_is_temporary(ddup, prog, http_server):
    prog = Program(prog.dir, behaviour=(
        'if op == "replace":\n'
        '    sys.stderr.write("try later\\n")\n'
        '    sys.exit(75)'))
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "temporary failure" in r.err and "try later" in r.err, r
    prog2 = Program(prog.dir, behaviour=(
        'if op == "replace":\n'
        '    sys.stderr.write("bad zone\\n")\n'
        '    sys.exit(1)'))
    r = ddup.run()
    assert r.rc == 1, r
    assert "temporary failure" not in r.err and "bad zone" in r.err, r
    assert prog2.records() == {}


def set_timeout(ddup, value):
    """The provider's timeout, in the file configure() wrote."""
    with open(ddup.config) as f:
        cfg = f.read()
    cfg = "\n".join(f"timeout = {value}" if line.startswith("timeout =") else line
                    for line in cfg.splitlines())
    with open(ddup.config, "w") as f:
        f.write(cfg + "\n")


def process_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_hanging_program_is_killed_with_its_children(ddup, prog, http_server):
    # The program starts a child that would outlive it, then hangs.
    prog = Program(prog.dir, behaviour=(
        'if op == "replace":\n'
        '    import subprocess, time\n'
        '    c = subprocess.Popen(["sleep", "1000"])\n'
        '    open(os.path.join(here, "pids"), "w").write(f"{os.getpid()} {c.pid}")\n'
        '    time.sleep(1000)'))
    a = http_server()
    configure(ddup, prog, [("a", a, "192.0.2.1", 0)])
    set_timeout(ddup, "1s")
    t0 = time.monotonic()
    r = ddup.run()
    took = time.monotonic() - t0
    assert r.rc == 1, r
    assert "timeout 1s: killed" in r.err and "unreachable" in r.err, r
    assert took < 30 * TIME_SCALE, took
    with open(os.path.join(prog.dir, "pids")) as f:
        pids = [int(p) for p in f.read().split()]
    deadline = time.monotonic() + 10 * TIME_SCALE
    while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(p) for p in pids), "left running"


def test_garbage_on_read_writes_nothing(ddup, prog, http_server):
    prog = Program(prog.dir, behaviour=(
        'if op == "read":\n'
        '    print("60 192.0.2.7")\n'
        '    print("sixty 192.0.2.8")\n'
        '    sys.exit(0)'))
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "line 2" in r.err and "sixty 192.0.2.8" in r.err, r
    assert prog.ops() == ["read A"], "wrote after a read that did not parse"


@pytest.mark.parametrize("output", [
    "60 2001:db8::1",        # the other type
    "-1 192.0.2.1",          # negative TTL
    "60",                    # no address
    "60 192.0.2.1 extra",    # a third word
    "",                      # an empty line
    "60 192.0.2.300",
    "60 192.0.2.1\x00junk",  # a NUL byte: C would see "60 192.0.2.1"
])
def test_read_lines_that_do_not_parse(ddup, prog, http_server, output):
    prog = Program(prog.dir, behaviour=(
        'if op == "read":\n'
        f'    print({output!r})\n'
        '    sys.exit(0)'))
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1 and "line 1" in r.err, r
    assert prog.ops() == ["read A"]


def test_arguments_pass_through_untouched(ddup, http_server, tmp_path):
    # A folder with a blank and shell characters; args with shell syntax.
    prog = Program(str(tmp_path / "my dns; $(x)"), name="up date*")
    args = "--zone=$(touch${IFS}pwned) a;b 'q' \"x y\" * `id` $HOME"
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)],
              provider_keys=f"args = {args}")
    r = ddup.run()
    assert r.rc == 0, r
    calls = prog.calls()
    assert [c["argv"] for c in calls] == [
        args.split() + ["read", NAME, "A"],
        args.split() + ["replace", NAME, "A", "60", "192.0.2.1"],
    ]
    assert not os.path.exists(tmp_path / "pwned")
    assert not os.path.exists(os.path.join(prog.dir, "pwned"))


@pytest.mark.parametrize("line,words", [
    ("command = bin/dns-update", "absolute path"),
    ("command = /bin/true\ntimeout = 0s", "timeout"),
])
def test_bad_values_are_config_errors(ddup, http_server, line, words):
    a = http_server()
    ddup.write(f"""[provider dns]
type = exec
{line}
[domain {NAME}]
provider = dns
[endpoint a]
url = {a.url}
ip = 192.0.2.1
""")
    r = ddup.run("-n")
    assert r.rc == 2 and words in r.err and "ddup.ini:" in r.err, r
    assert a.requests == []


def test_missing_program(ddup, http_server, tmp_path):
    prog = Program(str(tmp_path / "bin"))
    os.unlink(prog.path)
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    r = ddup.run()
    assert r.rc == 1, r
    assert "cannot execute: No such file or directory" in r.err, r
    assert "rejected as invalid" in r.err, r      # permanent, not temporary


def group_alive(pgid):
    """Whether a process of group pgid is left (a zombie is not)."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def wait_gone(alive, what, bound=10):
    deadline = time.monotonic() + bound * TIME_SCALE
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(), what


def _stop_signals_default():
    # A suite started in the background by a non-interactive shell (as
    # CI may start it) hands SIGINT down ignored, and ddup-check leaves an
    # ignored signal ignored, as nohup expects: the test wants the signal.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start(ddup):
    """ddup-check in the background, for a test that signals it."""
    ddup.next_slot()
    return subprocess.Popen([DDUP, "-c", ddup.config], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=_stop_signals_default)


def wait_file(path, p):
    """Waits for the program to write path (atomically, by rename)."""
    deadline = time.monotonic() + 30 * TIME_SCALE
    while not os.path.exists(path):
        assert time.monotonic() < deadline and p.poll() is None, p.poll()
        time.sleep(0.02)
    with open(path) as f:
        return f.read()


# While `block` exists, replace starts a child, says who it is (its
# group, itself, the child) in `blocked`, waits as many seconds as block
# says, then writes as usual: a late write.
BLOCKING = (
    'if op == "replace" and os.path.exists(os.path.join(here, "block")):\n'
    '    import subprocess, time\n'
    '    c = subprocess.Popen(["sleep", "1000"])\n'
    '    with open(os.path.join(here, "blocked.tmp"), "w") as f:\n'
    '        f.write(f"{os.getpgrp()} {os.getpid()} {c.pid}")\n'
    '    os.rename(os.path.join(here, "blocked.tmp"), os.path.join(here, "blocked"))\n'
    '    time.sleep(float(open(os.path.join(here, "block")).read()))\n')


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_kills_the_program_and_the_next_run_reads_back(ddup, prog, http_server,
                                                              sig):
    a, b = http_server(), http_server()
    prog = Program(prog.dir, behaviour=BLOCKING)
    configure(ddup, prog, [("a", a, "192.0.2.1", 0), ("b", b, "192.0.2.2", 10)])
    assert ddup.run().rc == 0
    assert prog.records() == {f"{NAME}/A": [60, ["192.0.2.1"]]}
    # a fails: the run replaces with b's address, and is stopped meanwhile.
    late = 3 * TIME_SCALE
    with open(os.path.join(prog.dir, "block"), "w") as f:
        f.write(str(late))
    a.set(status=503)
    p = start(ddup)
    pgid, pid, child = (int(w) for w in
                        wait_file(os.path.join(prog.dir, "blocked"), p).split())
    blocked_at = time.monotonic()
    assert pgid == pid, "not the leader of a group of its own"
    p.send_signal(sig)
    out, err = p.communicate(timeout=30 * TIME_SCALE)
    assert p.returncode == -sig, (p.returncode, err)
    assert f"stopped by signal {int(sig)}" in err and prog.path in err, err
    wait_gone(lambda: group_alive(pgid), "the program's group outlived ddup-check")
    assert not process_alive(child)
    ddup.after_kill()
    # a is back before the next run: DNS holds what it wants, if the
    # stopped write never lands.  The run cannot trust its state (the
    # update went out unrecorded): it reads DNS back.
    os.unlink(os.path.join(prog.dir, "block"))
    a.set(status=200)
    prog.forget_calls()
    r = ddup.run()
    assert r.rc == 0, r
    assert prog.ops() == ["read A"], r
    time.sleep(max(0, blocked_at + late + 1.5 * TIME_SCALE - time.monotonic()))
    assert prog.records() == {f"{NAME}/A": [60, ["192.0.2.1"]]}, "a late write landed"


@pytest.mark.parametrize("hang", [False, True], ids=["exits", "hangs"])
def test_child_that_left_the_group_is_killed_too(ddup, prog, http_server, hang):
    # A child in a session of its own (setsid), and one that child started
    # in yet another: neither is in the program's group.
    prog = Program(prog.dir, behaviour=(
        'if op == "replace":\n'
        '    import subprocess, time\n'
        '    c = subprocess.Popen(["sh", "-c", "setsid sleep 1000 & echo $! >'
        ' \\"$0\\"; exec sleep 1000", os.path.join(here, "deep")],'
        ' start_new_session=True)\n'
        '    while not os.path.exists(os.path.join(here, "deep")) or'
        ' not open(os.path.join(here, "deep")).read():\n'
        '        time.sleep(0.01)\n'
        '    open(os.path.join(here, "pids"), "w").write(f"{c.pid} "'
        ' + open(os.path.join(here, "deep")).read())\n'
        + ('    time.sleep(1000)\n' if hang else '')))
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    set_timeout(ddup, "2s")
    r = ddup.run()
    assert r.rc == (1 if hang else 0), r
    with open(os.path.join(prog.dir, "pids")) as f:
        pids = [int(w) for w in f.read().split()]
    assert len(pids) == 2
    wait_gone(lambda: any(process_alive(p) for p in pids), "left running")


def plain_build():
    """Neither valgrind's wrapper script nor a sanitizer build: ddup-check's
    address space is its own, and its malloc() the C library's."""
    with open(DDUP, "rb") as f:
        data = f.read()
    return not data.startswith(b"#!") and b"__asan_init" not in data


@pytest.mark.skipif(not plain_build(), reason="valgrind or a sanitizer allocates for it")
def test_out_of_memory_has_its_own_exit_status(ddup, prog, http_server):
    # read waits for `go`, then prints close to the 1 MB it may; meanwhile
    # the test takes ddup-check's address space down to what it has.
    prog = Program(prog.dir, behaviour=(
        'if op == "read":\n'
        '    import time\n'
        '    open(os.path.join(here, "reading"), "w").close()\n'
        '    while not os.path.exists(os.path.join(here, "go")):\n'
        '        time.sleep(0.01)\n'
        '    sys.stdout.write("60 192.0.2.1\\n" * 75000)\n'
        '    sys.exit(0)'))
    configure(ddup, prog, [("a", http_server(), "192.0.2.1", 0)])
    p = start(ddup)
    wait_file(os.path.join(prog.dir, "reading"), p)
    with open(f"/proc/{p.pid}/status") as f:
        vm = [int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:")][0]
    resource.prlimit(p.pid, resource.RLIMIT_AS, (vm, vm))
    open(os.path.join(prog.dir, "go"), "w").close()
    out, err = p.communicate(timeout=60 * TIME_SCALE)
    assert p.returncode == 5, (p.returncode, err)
    assert "out of memory" in err, err
    assert prog.ops() == ["read A"]
    assert prog.records() == {}


def write_cname(ddup, prog, lb, b, b6):
    ddup.write(f"""interval = 30s
[provider dns]
type = exec
command = {prog.path}
[domain {NAME}]
provider = dns
ttl = 60
attempts = 1

[endpoint lb]
url = {lb.url}
cname = lb.example.net

[endpoint b]
url = {b.url}
ip = 192.0.2.2
priority = 10

[endpoint b6]
url = {b6.url}
ip = 2001:db8::2
priority = 10
""")


def test_cname_tier_and_back_the_emptied_side_first(ddup, prog, http_server):
    """TYPE CNAME with its one host name; between a CNAME and addresses the
    type being emptied goes first, so the name never holds both."""
    lb, b, b6 = http_server(), http_server(), http_server()
    write_cname(ddup, prog, lb, b, b6)
    r = ddup.run()
    assert r.rc == 0, r
    assert prog.ops() == ["read A", "read AAAA", "read CNAME", "replace A 60",
                          "replace AAAA 60", "replace CNAME 60 lb.example.net"], r
    assert prog.records() == {f"{NAME}/CNAME": [60, ["lb.example.net"]]}
    prog.forget_calls()
    lb.set(status=503)
    assert ddup.run().rc == 0
    assert prog.ops() == ["replace CNAME 60", "replace A 60 192.0.2.2",
                          "replace AAAA 60 2001:db8::2"]
    prog.forget_calls()
    lb.set(status=200)
    assert ddup.run().rc == 0
    assert prog.ops() == ["replace A 60", "replace AAAA 60",
                          "replace CNAME 60 lb.example.net"]
    prog.forget_calls()
    assert ddup.run().rc == 0
    assert prog.ops() == [], "a steady CNAME wrote again"
    # A first run reads the CNAME back (any case, a trailing dot) as the same.
    prog.seed({f"{NAME}/CNAME": [60, ["LB.Example.NET."]]})
    prog.forget_calls()
    ddup.state = str(ddup.dir / "fresh.db")
    write_cname(ddup, prog, lb, b, b6)
    assert ddup.run().rc == 0
    assert prog.ops() == ["read A", "read AAAA", "read CNAME"]


@pytest.mark.parametrize("output", ["60 a.example.net\n60 b.example.net\n",
                                    "60 192.0.2.1\n", "60 \n", "x a.example.net\n"])
def test_cname_read_that_does_not_parse(ddup, prog, http_server, output):
    """Two CNAMEs, an address or no host where a CNAME is read: a failure,
    nothing written."""
    lb, b, b6 = http_server(), http_server(), http_server()
    prog = Program(str(ddup.dir / "bin2"), behaviour=(
        "if op == 'read' and typ == 'CNAME':\n"
        f"    sys.stdout.write({output!r}); sys.exit(0)"))
    write_cname(ddup, prog, lb, b, b6)
    r = ddup.run()
    assert r.rc == 1, r
    assert "read CNAME" in r.err and "TTL HOST" in r.err, r.err
    assert not any(o.startswith("replace") for o in prog.ops()), prog.ops()
