"""metricsFile (ddup.ini(5), TOP-LEVEL KEYS): the Prometheus text file, through the built
ddup-check with real HTTP servers and a real BIND on loopback.

After a failover the values are read back sample by sample, the file is
checked with Debian's promtool, and its counters are followed across
runs (also across the pruning of the history they are counted from).
When it is written and when not is checked too.
"""

import os
import re
import stat
import subprocess
import time

from scenefix import APP, DOWN, ODD, scene_servers, unwritable_output, write_scene
from scenefix import failover as scene_failover

# Quotes and a backslash, which a label value must escape.
HOSTILE_EP = 'odd "one" \\ <b>'
PROMTOOL = "/usr/bin/promtool"

def config(ddup, bind, primary, backup, down, odd, path, extra=""):
    """The scene of scenefix.py, its metrics written to path."""
    write_scene(ddup, bind, (primary, backup, down, odd),
                f"metricsFile = {path}\n{extra}", HOSTILE_EP, "no such zone")


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse(text):
    """{(name, frozenset(labels)): value}, and the HELP/TYPE of each name."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = frozenset((k, unescape(v)) for k, v in LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in samples, line
        samples[key] = float(m.group(3))
    return samples, types


def val(samples, name, **labels):
    return samples[(name, frozenset(labels.items()))]


def promtool(path):
    with open(path, "rb") as f:
        p = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f,
                           capture_output=True, text=True, timeout=60)
    return p


def failover(ddup, bind_server, http_server, path, extra=""):
    servers = scene_servers(http_server)
    config(ddup, bind_server, *servers, path, extra)
    return scene_failover(ddup, bind_server, servers)[1]


def test_values_after_failover(ddup, bind_server, http_server):
    path = os.path.join(ddup.dir, "textfile", "ddup.prom")
    os.mkdir(os.path.dirname(path))
    before = failover(ddup, bind_server, http_server, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    text = open(path, encoding="utf-8").read()
    p = promtool(path)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p
    s, types = parse(text)

    for name, kind in types.items():
        assert name.startswith("ddup_"), name
        assert name.endswith("_total") == (kind == "counter"), name
        assert f"# HELP {name} " in text, name
    # The endpoints: the primary failed and was removed, the backup took over.
    ep = dict(domain=APP, endpoint="primary")
    assert val(s, "ddup_endpoint_up", **ep) == 0
    assert val(s, "ddup_endpoint_healthy", **ep) == 0
    assert val(s, "ddup_endpoint_published", **ep) == 0
    assert val(s, "ddup_endpoint_state", state="down", **ep) == 1
    assert val(s, "ddup_endpoint_state", state="active", **ep) == 0
    assert val(s, "ddup_endpoint_checks_total", result="pass", **ep) == 1
    assert val(s, "ddup_endpoint_checks_total", result="fail", **ep) == 1
    bk = dict(domain=APP, endpoint="backup")
    assert val(s, "ddup_endpoint_up", **bk) == 1
    assert val(s, "ddup_endpoint_published", **bk) == 1
    assert val(s, "ddup_endpoint_state", state="active", **bk) == 1
    assert sum(v for (n, lab), v in s.items() if n == "ddup_endpoint_state"
               and dict(lab)["endpoint"] == "backup") == 1
    assert val(s, "ddup_endpoint_checks_total", result="pass", **bk) == 2
    assert 0 <= val(s, "ddup_endpoint_latency_seconds", **bk) < 60
    lonely = dict(domain=DOWN, endpoint="lonely")
    assert val(s, "ddup_endpoint_checks_total", result="fail", **lonely) == 2
    assert val(s, "ddup_endpoint_state", state="down", **lonely) == 1
    # The hostile name comes back whole from its escaped label.
    assert val(s, "ddup_endpoint_up", domain=ODD, endpoint=HOSTILE_EP) == 1
    assert 'endpoint="odd \\"one\\" \\\\ <b>"' in text
    # The domains.
    assert val(s, "ddup_domain_published_addresses", domain=APP) == 1
    assert val(s, "ddup_domain_tier", domain=APP) == 10
    assert val(s, "ddup_domain_status", domain=APP, status="warning") == 1
    assert val(s, "ddup_domain_status", domain=APP, status="healthy") == 0
    assert val(s, "ddup_domain_status", domain=DOWN, status="unhealthy") == 1
    assert ("ddup_domain_tier", frozenset({("domain", DOWN)})) not in s
    assert val(s, "ddup_dns_updates_total", domain=APP, outcome="success") == 2
    assert val(s, "ddup_dns_updates_total", domain=APP, outcome="failure") == 0
    assert val(s, "ddup_dns_updates_total", domain=ODD, outcome="failure") == 2
    assert val(s, "ddup_dns_updates_total", domain=DOWN, outcome="success") == 0
    # The run.
    assert val(s, "ddup_last_run_exit_status") == 1
    assert before - 1 <= val(s, "ddup_last_run_timestamp_seconds") <= time.time()
    assert 0 <= val(s, "ddup_last_run_duration_seconds") < 60
    assert val(s, "ddup_interval_seconds") == 30
    # No secret of the provider in it.
    assert bind_server.key_secret not in text


def test_counters_outlive_history(ddup, bind_server, http_server):
    """history = 1s: the primary's passing streak is pruned, its check
    stays counted; the counters only grow, run after run."""
    path = os.path.join(ddup.dir, "ddup.prom")
    failover(ddup, bind_server, http_server, path, extra="history = 1s")
    time.sleep(1.5)
    assert ddup.run().rc == 1
    oks = ddup.state_rows(f"SELECT ok FROM history WHERE domain = '{APP}'"
                          " AND endpoint = 'primary'",
                          f"SELECT ok::int FROM ddup_streak WHERE domain = '{APP}'"
                          " AND endpoint = 'primary'")
    assert oks == [(0,)], oks                # the passing streak is gone
    s, _ = parse(open(path, encoding="utf-8").read())
    ep = dict(domain=APP, endpoint="primary")
    assert val(s, "ddup_endpoint_checks_total", result="pass", **ep) == 1
    assert val(s, "ddup_endpoint_checks_total", result="fail", **ep) == 2
    assert val(s, "ddup_endpoint_checks_total", result="pass", domain=APP,
               endpoint="backup") == 3
    assert val(s, "ddup_dns_updates_total", domain=ODD, outcome="failure") == 3
    assert promtool(path).returncode == 0


def test_written_only_by_runs(ddup, bind_server, http_server):
    """After every run, never by --status, --dry-run or a configuration
    error; replaced whole, nothing left beside it."""
    path = os.path.join(ddup.dir, "ddup.prom")
    p, b, d, o = http_server(), http_server(), http_server(status=503), http_server()
    config(ddup, bind_server, p, b, d, o, path)
    ddup.run("--dry-run")
    ddup.run("--status")
    assert not os.path.exists(path)
    assert ddup.run().rc == 1
    assert os.path.exists(path)
    os.unlink(path)
    ddup.run("--status")
    ddup.run("--dry-run")
    assert not os.path.exists(path)
    config(ddup, bind_server, p, b, d, o, path, extra="maxParallel = 0")
    assert ddup.run().rc == 2
    assert not os.path.exists(path)
    config(ddup, bind_server, p, b, d, o, path)
    assert ddup.run().rc == 1
    assert [f for f in os.listdir(ddup.dir) if "ddup.prom" in f] == ["ddup.prom"]


def test_missing_folder_is_made(ddup, bind_server, http_server):
    """A missing folder is made, 0755 for node_exporter; the file is
    written and nothing about it is logged."""
    path = os.path.join(ddup.dir, "missing", "ddup.prom")
    p, b, d, o = http_server(), http_server(), http_server(status=503), http_server()
    config(ddup, bind_server, p, b, d, o, path)
    r = ddup.run()
    assert r.rc == 1, r                 # the odd domain's provider fails
    assert bind_server.query(APP, "A") == ["192.0.2.1"]
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o755
    assert "ddup_last_run_exit_status 1" in open(path).read()
    assert path not in r.err, r.err


def test_unwritable_file_fails_the_run(ddup, http_server):
    unwritable_output(ddup, http_server, "metricsFile")


def test_bad_key(ddup):
    ddup.write("""
metricsFile = /tmp/
[provider p]
type = exec
command = /bin/true
[domain a.example.test]
provider = p
[endpoint e]
url = http://127.0.0.1:1/
ip = 192.0.2.1
""")
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert "metricsFile: expected the path of a file, not '/tmp/'" in r.err, r.err
