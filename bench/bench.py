#!/usr/bin/python3
"""The ddup-check benchmark (`make bench`).

Starts a real nginx on loopback serving N health endpoints, each on its
own address (127.100.x.y, one port), and a local BIND as the rfc2136
provider; writes the INI (N endpoints over N/10 domains); warms up once;
then measures steady-state runs of ddup-check interleaved with
  floor    bench/floor.c: libcurl multi, the same GETs, the same
           concurrency limit and timeouts, answers thrown away;
  curl-par `curl --parallel --parallel-max 256` over the same URLs;
  curl-seq a shell loop of curl calls over a sample, scaled up to N.
Reports the median wall time, the median CPU time (user + sys) and the
peak RSS of each (from wait4() of the child, descendants included), and
the ratios to the floor.  Plus the slow case (200 endpoints answering
after 1 s each), the number of DNS UPDATE messages a steady-state run
sends (BIND statistics; must be 0), the state file size after many
runs, and the PostgreSQL row: three checkers sharing one state in a real
PostgreSQL (bench_pg.py).

Everything it starts is stopped at the end; all traffic stays on
loopback.  It is a measurement, not a test: only a broken setup (a check
failing, an UPDATE in steady state) makes it exit non-zero.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from dnsfix import BindServer  # noqa: E402
import bench_pg  # noqa: E402

ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
TIMEOUT_MS = 3000       # the domains' check timeout, and the floor's
SLOW_TIMEOUT_MS = 5000
PARALLEL = 256


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def addr(block, i):
    """The i-th endpoint address of a block: 127.<block>.x.y, y in 1..250."""
    return f"127.{block}.{i // 250}.{i % 250 + 1}"


class Nginx:
    """nginx with one `listen` per endpoint address, all on one port."""

    def __init__(self, d, addrs, slow):
        self.dir = d
        self.addrs = addrs
        self.slow = slow
        self.proc = None
        self.port = None

    def _conf(self):
        n = len(self.addrs)
        listens = "".join(f"        listen {a}:{self.port};\n" for a in self.addrs)
        # Each listening socket takes a connection slot and a descriptor
        # in every worker; 256 clients come on top.
        if self.slow:
            loc = "        location / { echo_sleep 1; echo ok; }\n"
        else:
            loc = '        location / { return 200 "ok\\n"; }\n'
        mod = f"load_module {ECHO_MODULE};\n" if self.slow else ""
        d = self.dir
        return (f"{mod}daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\n"
                f"error_log {d}/error.log warn;\nworker_rlimit_nofile {n + 4096};\n"
                f"events {{ worker_connections {n + 2048}; }}\n"
                "http {\n    access_log off;\n"
                f"    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n"
                f"    fastcgi_temp_path {d}/fcgi;\n    uwsgi_temp_path {d}/uwsgi;\n"
                f"    scgi_temp_path {d}/scgi;\n    keepalive_requests 1000;\n"
                f"    server {{\n{listens}{loc}    }}\n}}\n")

    def start(self):
        for _ in range(20):
            self.port = random.randint(20000, 60000)
            conf = os.path.join(self.dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(self._conf())
            logf = open(os.path.join(self.dir, "nginx.out"), "wb")
            self.proc = subprocess.Popen(["nginx", "-p", self.dir, "-c", conf, "-e",
                                          os.path.join(self.dir, "error.log")],
                                         stdout=logf, stderr=subprocess.STDOUT,
                                         start_new_session=True)
            logf.close()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if all(self._answers(a) for a in (self.addrs[0], self.addrs[-1])):
                    return self
                time.sleep(0.1)
            self.stop()
            with open(os.path.join(self.dir, "error.log"), errors="replace") as f:
                err = f.read()
            if "Address already in use" not in err:
                raise RuntimeError("nginx did not start:\n" + err[-3000:])
        raise RuntimeError("nginx: no free port")

    def _answers(self, a):
        try:
            with socket.create_connection((a, self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None

    def url(self, a):
        return f"http://{a}:{self.port}/health"


def write_ini(path, state, bind, nginx, ndomains, timeout_ms, history="7d", extra=()):
    per = len(nginx.addrs) // ndomains
    lines = [f"state = {state}", f"maxParallel = {PARALLEL}", f"history = {history}",
             f"timeout = {timeout_ms}ms", *extra, "",
             "[provider bind]", "type = rfc2136", f"server = 127.0.0.1:{bind.port}",
             f"zone = {bind.zone}", f"keyName = {bind.key_name}",
             f"keySecret = {bind.key_secret}", ""]
    for k in range(ndomains):
        lines += [f"[domain d{k}.{bind.zone}]", "provider = bind", "ttl = 60", ""]
        for a in nginx.addrs[k * per:(k + 1) * per]:
            lines += ["[endpoint]", f"url = {nginx.url(a)}", f"ip = {a}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    os.chmod(path, 0o600)


def spawn_measured(argv, out, err):
    """Runs argv; returns (wall s, cpu s, peak RSS KiB, exit status).

    Through /usr/bin/time: a child of this Python process would count
    Python's own resident size as its peak (Linux keeps the high-water
    mark across exec).  CPU time comes from wait4() on time, which
    includes its waited-for descendants, at microsecond resolution.
    """
    rssf = err + ".rss"
    argv = ["/usr/bin/time", "-q", "-f", "%M", "-o", rssf] + argv
    fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
          (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
          (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    t0 = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    with open(rssf) as f:
        rss = int(f.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss, os.waitstatus_to_exitcode(status)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


class Case:
    """One setup (nginx + INI) and its four contenders."""

    def __init__(self, work, name, ddup, floor, bind, nginx, ndomains, timeout_ms, sample):
        self.name = name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.ddup = ddup
        self.floor = floor
        self.bind = bind
        self.nginx = nginx
        self.n = len(nginx.addrs)
        self.ndomains = ndomains
        self.timeout_ms = timeout_ms
        self.ini = os.path.join(self.dir, "ddup.ini")
        self.state = os.path.join(self.dir, "state", "ddup.db")
        write_ini(self.ini, self.state, bind, nginx, ndomains, timeout_ms)
        urls = [nginx.url(a) for a in nginx.addrs]
        self.urlfile = os.path.join(self.dir, "urls")
        with open(self.urlfile, "w") as f:
            f.write("".join(u + "\n" for u in urls))
        self.curlcfg = os.path.join(self.dir, "curl.cfg")
        with open(self.curlcfg, "w") as f:
            for u in urls:
                f.write(f'url = "{u}"\noutput = "/dev/null"\n')
        # The sequential loop runs over an evenly spread sample.
        step = max(1, self.n // sample)
        self.sample = urls[::step][:sample]
        self.samplefile = os.path.join(self.dir, "sample")
        with open(self.samplefile, "w") as f:
            f.write("".join(u + "\n" for u in self.sample))
        self.scale = self.n / len(self.sample)
        self.out = os.path.join(self.dir, "out")
        self.err = os.path.join(self.dir, "err")
        tmo = f"{timeout_ms / 1000:g}"
        self.argv = {
            "ddup-check": [ddup, "-c", self.ini],
            "floor": [floor, self.urlfile, str(timeout_ms), str(PARALLEL)],
            "curl-par": ["curl", "--parallel", "--parallel-max", str(PARALLEL), "-s",
                         "--noproxy", "*", "--max-time", tmo, "-w", "%{http_code}\\n",
                         "-K", self.curlcfg],
            "curl-seq": ["sh", "-c", 'while read -r u; do curl -s --noproxy "*" -o /dev/null '
                         f'--max-time {tmo} -w "%{{http_code}}\\n" "$u"; done < "$1"',
                         "sh", self.samplefile],
        }

    def run(self, who, warm=False):
        """One measured run of who; checks that it did its job."""
        wall, cpu, rss, rc = spawn_measured(self.argv[who], self.out, self.err)
        out, err = read(self.out), read(self.err)
        if who == "ddup-check":
            if rc != 0 or (err.strip() and not warm):
                raise RuntimeError(f"{self.name}: ddup-check exited {rc}:\n{err[-2000:]}")
        elif who == "floor":
            if rc != 0 or err.strip() != f"ok {self.n} failed 0":
                raise RuntimeError(f"{self.name}: floor exited {rc}: {err[-2000:]}")
        else:
            codes = out.split()
            want = len(self.sample) if who == "curl-seq" else self.n
            if codes.count("200") != want:
                raise RuntimeError(f"{self.name}: {who}: {codes.count('200')} of {want} "
                                   f"answered 200 (exit {rc}):\n{err[-2000:]}")
        if who == "curl-seq":
            wall *= self.scale
            cpu *= self.scale
        return wall, cpu, rss

    def db_writes(self):
        """Rows changed and pages written by one more steady run (its -v line)."""
        p = subprocess.run([self.ddup, "-c", self.ini, "-v"], capture_output=True,
                           text=True, timeout=600)
        m = re.search(r"state saved: (\d+) rows changed, (\d+) pages written", p.stderr)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"{self.name}: -v run exited {p.returncode}: {p.stderr[-2000:]}")
        return int(m.group(1)), int(m.group(2))

    def ddup_status_ok(self):
        """Every endpoint's last check passed and every domain is healthy."""
        p = subprocess.run([self.ddup, "-c", self.ini, "--status", "--json"],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"{self.name}: --status exited {p.returncode}: {p.stderr}")
        doms = json.loads(p.stdout)["domains"]
        bad = [(d["name"], e["name"], e["lastResult"]) for d in doms for e in d["endpoints"]
               if e["lastResult"] != "ok" or not e["published"]]
        if len(doms) != self.ndomains or bad:
            raise RuntimeError(f"{self.name}: {len(doms)} domains; not ok: {bad[:5]}")


WHO = ("ddup-check", "floor", "curl-par", "curl-seq")


def measure(case, runs):
    """Warm-up, then `runs` interleaved rounds; returns {who: [(wall, cpu, rss)]}."""
    before = case.bind.update_count()
    log(f"[{case.name}] warm-up")
    for who in WHO:
        case.run(who, warm=True)
    published = case.bind.update_count() - before
    # The first run publishes every domain: the counter does count.
    if published != case.ndomains:
        raise RuntimeError(f"{case.name}: warm-up sent {published} UPDATEs, "
                           f"expected {case.ndomains}")
    case.ddup_status_ok()
    before = case.bind.update_count()
    res = {w: [] for w in WHO}
    for r in range(runs):
        order = WHO[r % len(WHO):] + WHO[:r % len(WHO)]
        for who in order:
            res[who].append(case.run(who))
        log(f"[{case.name}] round {r + 1}/{runs}: " + "  ".join(
            f"{w} {res[w][-1][0]:.3f}s" for w in WHO))
    updates = case.bind.update_count() - before
    case.ddup_status_ok()
    if updates != 0:
        raise RuntimeError(f"{case.name}: {updates} UPDATE messages in steady state")
    case.writes = case.db_writes()
    return res, updates


def summarize(case, res, updates):
    med = {w: (statistics.median(x[0] for x in res[w]), statistics.median(x[1] for x in res[w]),
               max(x[2] for x in res[w])) for w in WHO}
    fw, fc, _ = med["floor"]
    rows = []
    for w in WHO:
        wall, cpu, rss = med[w]
        rows.append({"case": case.name, "n": case.n, "who": w, "wall": wall, "cpu": cpu,
                     "rss_kib": rss, "wall_ratio": wall / fw, "cpu_ratio": cpu / fc,
                     "cpu_us_per_check": cpu / case.n * 1e6,
                     "updates": updates if w == "ddup-check" else None,
                     "db_writes": getattr(case, "writes", None) if w == "ddup-check" else None,
                     "runs": len(res[w])})
    return rows


def print_table(rows, out=sys.stdout):
    print("| case | tool | wall (median) | x floor | CPU user+sys (median) | x floor "
          "| CPU/check | peak RSS |", file=out)
    print("|---|---|---:|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        print(f"| {r['case']} | {r['who']} | {r['wall']:.3f} s | {r['wall_ratio']:.2f} "
              f"| {r['cpu']:.3f} s | {r['cpu_ratio']:.2f} | {r['cpu_us_per_check']:.0f} us "
              f"| {r['rss_kib'] / 1024:.1f} MB |", file=out)
    out.flush()


def state_growth(work, ddup, bind, nginx, runs):
    """Runs ddup-check `runs` times on a fresh state file; its size after."""
    d = os.path.join(work, "state-growth")
    os.makedirs(d, exist_ok=True)
    ini = os.path.join(d, "ddup.ini")
    state = os.path.join(d, "state", "ddup.db")
    n = len(nginx.addrs)
    write_ini(ini, state, bind, nginx, max(1, n // 10), TIMEOUT_MS)
    walls, writes = [], []
    log(f"[state] {runs} runs at N={n}")
    for i in range(runs):
        wall, _, _, rc = spawn_measured([ddup, "-c", ini, "-v"], os.path.join(d, "out"),
                                        os.path.join(d, "err"))
        err = read(os.path.join(d, "err"))
        m = re.search(r"state saved: (\d+) rows changed, (\d+) pages written", err)
        if rc != 0 or not m:
            raise RuntimeError(f"state run {i}: exit {rc}: {err[-2000:]}")
        walls.append(wall)
        if i > 0:
            writes.append((int(m.group(1)), int(m.group(2))))
        if (i + 1) % 100 == 0:
            log(f"[state] {i + 1} runs, last {wall:.3f}s, "
                f"{os.path.getsize(state) / 1e6:.1f} MB, last wrote {writes[-1]}")
    size = sum(os.path.getsize(p) for p in (state, state + "-wal") if os.path.exists(p))
    con = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT count(*) FROM streaks").fetchone()[0]
        checks = con.execute("SELECT sum(checks) FROM history").fetchone()[0]
        dbstat = dict(con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
                      .fetchall()) if _has_dbstat(con) else {}
    finally:
        con.close()
    k = min(10, runs)
    return {"n": n, "runs": runs, "bytes": size, "streak_rows": rows, "checks": checks,
            "bytes_per_row": size / rows if rows else 0,
            "expected_checks": n * runs, "by_table": dbstat,
            "first_wall": statistics.median(walls[:k]), "last_wall": statistics.median(walls[-k:]),
            "rows_per_run": statistics.mean(w[0] for w in writes) if writes else 0,
            "pages_per_run": statistics.mean(w[1] for w in writes) if writes else 0}


def _has_dbstat(con):
    try:
        con.execute("SELECT 1 FROM dbstat LIMIT 1")
        return True
    except sqlite3.Error:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ddup", default=os.path.join(ROOT, "build", "bench", "ddup-check"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "bench", "floor"))
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sample", type=int, default=100, help="URLs of the sequential loop")
    ap.add_argument("--no-slow", action="store_true")
    ap.add_argument("--state-runs", type=int, default=1000)
    ap.add_argument("--state-n", type=int, default=1000)
    ap.add_argument("--pg-sizes", default="1000",
                    help="N of the PostgreSQL row (three checkers); empty: none")
    ap.add_argument("--pg-runs", type=int, default=7, help="measured slots of that row")
    ap.add_argument("--hold", type=int, default=0, metavar="N",
                    help="set up N endpoints, warm up, print the command and wait "
                         "(for profiling); Ctrl-C stops everything")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    for prog in ("nginx", "named", "curl", a.ddup, a.floor):
        if shutil.which(prog) is None:
            sys.exit(f"bench: {prog} not found")

    work = tempfile.mkdtemp(prefix="ddup-bench-")
    os.chmod(work, 0o755)       # nginx workers run as nobody
    servers = []
    rows = []
    report = {"load_before": os.getloadavg(), "nproc": os.cpu_count()}
    try:
        bdir = os.path.join(work, "bind")
        os.makedirs(bdir)
        bind = BindServer(bdir)
        servers.append(bind)
        bind.start()

        def setup(name, n, block, slow, timeout_ms, sample):
            d = os.path.join(work, name + "-nginx")
            os.makedirs(d)
            os.chmod(d, 0o755)
            ng = Nginx(d, [addr(block + i // 62500, i % 62500) for i in range(n)], slow)
            servers.append(ng)
            ng.start()
            return ng, Case(work, name, a.ddup, a.floor, bind, ng, max(1, n // 10),
                            timeout_ms, sample)

        if a.hold:
            ng, case = setup(f"n{a.hold}", a.hold, 100, False, TIMEOUT_MS, a.sample)
            case.run("ddup-check", warm=True)
            print(" ".join(case.argv["ddup-check"]), flush=True)
            print(" ".join(case.argv["floor"]), flush=True)
            def stop(signum, frame):
                raise KeyboardInterrupt
            # A background job ignores SIGINT: SIGTERM stops it too.
            signal.signal(signal.SIGINT, stop)
            signal.signal(signal.SIGTERM, stop)
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
            return 0

        block = 100
        for n in [int(s) for s in a.sizes.split(",") if s]:
            ng, case = setup(f"N={n}", n, block, False, TIMEOUT_MS, min(n, a.sample))
            block += 1
            res, upd = measure(case, a.runs)
            rows += summarize(case, res, upd)
            print_table(rows[-len(WHO):], sys.stderr)
            if n != a.state_n:
                servers.remove(ng)
                ng.stop()
            else:
                state_ng = ng
        if not a.no_slow:
            ng, case = setup("slow", 200, 120, True, SLOW_TIMEOUT_MS, 10)
            res, upd = measure(case, a.runs)
            rows += summarize(case, res, upd)
            servers.remove(ng)
            ng.stop()
        pg_sizes = [int(s) for s in a.pg_sizes.split(",") if s]
        if pg_sizes:
            why = bench_pg.seam_missing()
            if why:
                log(f"[pg] no PostgreSQL row: {why}")
                report["pg_skipped"] = why
            else:
                srv = bench_pg.start_server()
                servers.append(srv)
                report["pg"] = []
                for n in pg_sizes:
                    ng, _ = setup(f"pg-{n}", n, 140 + len(report["pg"]), False, TIMEOUT_MS, 10)
                    srv.reset()
                    case = bench_pg.PgCase(work, f"PostgreSQL N={n}", sys.modules[__name__],
                                           a.ddup, a.floor, srv, bind, ng, max(1, n // 10),
                                           TIMEOUT_MS)
                    res = bench_pg.measure(case, a.pg_runs, log)
                    report["pg"].append(bench_pg.summarize(case, res))
                    bench_pg.print_table(report["pg"][-1:], sys.stderr)
                    servers.remove(ng)
                    ng.stop()
        if a.state_runs > 0:
            if a.state_n not in [int(s) for s in a.sizes.split(",") if s]:
                state_ng, _ = setup(f"state-{a.state_n}", a.state_n, 130, False,
                                    TIMEOUT_MS, 10)
            report["state"] = state_growth(work, a.ddup, bind, state_ng, a.state_runs)

        report["load_after"] = os.getloadavg()
        report["rows"] = rows
        print()
        print(f"ddup-check benchmark, {os.cpu_count()} CPUs, load average "
              f"{report['load_before'][0]:.2f} before, {report['load_after'][0]:.2f} after; "
              f"medians of {a.runs} interleaved runs (peak RSS: the largest); "
              f"curl-seq: {a.sample} URLs (slow: 10), scaled to N")
        print()
        if rows:
            print_table(rows)
            print()
        for r in rows:
            if r["who"] == "ddup-check":
                print(f"{r['case']}: DNS UPDATE messages in {r['runs']} steady-state runs: "
                      f"{r['updates']}; state file writes of one more steady run: "
                      f"{r['db_writes'][0]} rows changed, {r['db_writes'][1]} pages")
        st = report.get("state")
        if st:
            print(f"state file after {st['runs']} runs at N={st['n']} (history 7d keeps all): "
                  f"{st['bytes'] / 1e6:.2f} MB, {st['streak_rows']} streak rows holding "
                  f"{st['checks']} checks (expected {st['expected_checks']}); "
                  f"run wall time {st['first_wall']:.3f} s at first, {st['last_wall']:.3f} s "
                  f"at the end; each run after the first changed {st['rows_per_run']:.1f} rows "
                  f"and wrote {st['pages_per_run']:.1f} pages (mean)")
            for t, b in sorted(st["by_table"].items(), key=lambda x: -x[1])[:6]:
                print(f"    {t}: {b / 1e6:.1f} MB")
        if report.get("pg"):
            print()
            print(f"PostgreSQL, three checkers (quorum 2 of 3), medians of {a.pg_runs} slots "
                  "(each slot: the deciding run, then two reporting runs):")
            print()
            bench_pg.print_table(report["pg"], sys.stdout)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=1)
        return 0
    finally:
        for s in reversed(servers):
            try:
                # A PostgreSQL server goes with its folder.
                getattr(s, "destroy", s.stop)()
            except Exception as e:     # keep stopping the others
                log(f"stopping {s}: {e}")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
