#!/usr/bin/python3
"""The failover benchmark (`make bench-failover`).

How long a dead server stays in DNS, measured from outside.  BIND on
loopback is the rfc2136 provider; N endpoint servers of this script's own
listen on 127.<block>.0.x (one, priority 0, is published; the others,
priority 1, are the standby tier); a scheduler starts ddup-check every
`interval` as a systemd timer does.  Per trial: wait until BIND answers
the primary alone, wait a moment drawn uniformly within one interval, make
the primary fail (answer 503, or accept and never answer), then ask BIND
over UDP every 50 ms until it answers the standby tier.  The figure is
the time from the failure to that answer.  The primary is then restored,
and the next trial waits for it to be published again (recoverAfter = 1).

The scheduler: start times on a fixed grid t0 + k x interval, as
ddup-check.timer's OnUnitActiveSec does (systemd counts from the service's
last start, not its end).  A tick that finds the previous run still going
is skipped: systemd merges the timer's start job into the one already
running, and the next start waits for the next elapse.  The benchmark
counts skipped ticks; with these settings a run never outlasts interval.
The timer's AccuracySec (1 s in ddup-check.timer) is left out: ticks are
on time to a millisecond or so.

`--cost` instead measures a steady run's wall time and CPU at N = 1,000
(bench/failover_cost.py).

It is a measurement, not a test; everything it starts is stopped at the
end, all traffic stays on loopback.
"""

import argparse
import os
import random
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from dnsfix import BindServer  # noqa: E402
from test_crash import query_a  # noqa: E402

POLL_S = 0.05


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def duration(text):
    """Seconds in `10s`, `1s`, `500ms`, `0`."""
    text = text.strip()
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    if text.endswith("m"):
        return float(text[:-1]) * 60
    return float(text)


def fmt_d(s):
    return "0" if s == 0 else (f"{s * 1000:g}ms" if s < 1 else f"{s:g}s")


class _Handler(socketserver.BaseRequestHandler):
    """One request: 200, 503, or (hang) held open without an answer until
    the endpoint is restored."""

    def handle(self):
        ep = self.server.endpoint
        sock = self.request
        sock.settimeout(30)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return
        mode = ep.mode
        if mode == "hang":
            ep.released.wait(120)
            return
        if mode == "503":
            body, status = b"down\n", b"503 Service Unavailable"
        else:
            body, status = b"ok\n", b"200 OK"
        try:
            sock.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                         b"Connection: close\r\n\r\n" + body)
        except OSError:
            pass


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


class Endpoint:
    """An HTTP health endpoint on its own loopback address; mode is ok,
    503 or hang (accepts, reads the request, never answers)."""

    def __init__(self, address):
        self.address = address
        self.mode = "ok"
        self.released = threading.Event()
        self.server = _TCPServer((address, 0), _Handler)
        self.server.endpoint = self
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://{self.address}:{self.port}/health"

    def fail(self, mode):
        self.released.clear()
        self.mode = mode

    def restore(self):
        self.mode = "ok"
        self.released.set()

    def stop(self):
        self.restore()
        self.server.shutdown()
        self.server.server_close()


def dns_query(port, name):
    """The sorted A addresses BIND gives for name (one UDP query, the
    crash test's), or None when it gave none."""
    try:
        return query_a(port, name)
    except (RuntimeError, AssertionError, OSError):
        return None


class Scheduler:
    """Starts ddup-check on a fixed grid of `interval`; a tick that finds
    the last run still going is skipped (as systemd does)."""

    def __init__(self, argv, interval, logpath):
        self.argv = argv
        self.interval = interval
        self.logpath = logpath
        self.stopping = threading.Event()
        self.proc = None
        self.runs = self.skipped = self.failed = 0
        self.longest = 0.0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def start(self):
        self.thread.start()

    def _loop(self):
        t0 = time.monotonic()
        k = 0
        logf = open(self.logpath, "ab")
        started = 0.0
        while not self.stopping.is_set():
            due = t0 + k * self.interval
            while True:
                now = time.monotonic()
                if self.proc is not None and self.proc.poll() is not None:
                    self._reaped(time.monotonic() - started)
                if now >= due or self.stopping.is_set():
                    break
                time.sleep(min(0.01, due - now))
            if self.stopping.is_set():
                break
            k += 1
            if self.proc is not None:
                self.skipped += 1
                continue
            logf.write(f"--- run {self.runs + 1} at {time.time():.3f}\n".encode())
            logf.flush()
            started = time.monotonic()
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=logf,
                                         stderr=logf)
            self.runs += 1
        if self.proc is not None:
            self.proc.wait()
        logf.close()

    def _reaped(self, took):
        if self.proc.returncode != 0:
            self.failed += 1
        self.longest = max(self.longest, took)
        self.proc = None

    def stop(self):
        self.stopping.set()
        self.thread.join(60)


def bounds(interval, attempts, timeout, recheck, mode):
    """The longest a dead published endpoint stays in DNS (ddup-check(8), FAILOVER RULES),
    without the update's and the poll's few milliseconds.  c is how long
    the failing check takes: a 503 comes back at once, a hang takes the
    whole timeout."""
    c = timeout if mode == "hang" else 0.0
    if recheck == 0:
        # The failure lands just after a run's check passed; the next
        # `attempts` runs each fail once; the last one's check ends c
        # after its start, and that run writes DNS.
        return attempts * interval + c, (f"attempts x interval + c = {attempts} x "
                                         f"{interval:g} + {c:g}")
    # The next run (within one interval) fails, then repeats D after each
    # failure while below attempts; each repeat takes c.
    return (interval + c + (attempts - 1) * (recheck + c),
            f"interval + c + (attempts - 1) x (recheck + c) = {interval:g} + {c:g} + "
            f"{attempts - 1} x ({recheck:g} + {c:g})")


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def run_combo(args, work, bind, block, mode, recheck):
    """One case (failure mode, recheck): its own domain, endpoints and
    state; the trials' figures."""
    name = f"f{block}-{mode}-{int(recheck * 1000)}.{bind.zone}"
    d = os.path.join(work, f"{mode}-{fmt_d(recheck)}")
    os.makedirs(d, exist_ok=True)
    eps = [Endpoint(f"127.{block}.0.{i + 1}") for i in range(args.endpoints)]
    primary, standby = eps[0], [e.address for e in eps[1:]]
    ini = os.path.join(d, "ddup.ini")
    lines = [f"state = {d}/state/ddup.db", f"interval = {fmt_d(args.interval)}",
             f"timeout = {fmt_d(args.timeout)}", f"attempts = {args.attempts}",
             "recoverAfter = 1", "",
             "[provider bind]", "type = rfc2136", f"server = 127.0.0.1:{bind.port}",
             f"zone = {bind.zone}", f"keyName = {bind.key_name}",
             f"keySecret = {bind.key_secret}", "",
             f"[domain {name}]", "provider = bind", "ttl = 5"]
    if recheck:
        lines.append(f"recheck = {fmt_d(recheck)}")
    lines.append("")
    for i, e in enumerate(eps):
        lines += [f"[endpoint e{i}]", f"url = {e.url}", f"ip = {e.address}",
                  f"priority = {0 if i == 0 else 1}", ""]
    with open(ini, "w") as f:
        f.write("\n".join(lines))
    os.chmod(ini, 0o600)
    sched = Scheduler([args.ddup, "-c", ini], args.interval, os.path.join(d, "runs.log"))
    sched.start()
    bound, formula = bounds(args.interval, args.attempts, args.timeout, recheck, mode)
    figures, lost = [], 0
    try:
        for t in range(args.trials):
            if not wait_for(bind.port, name, [primary.address], 6 * args.interval + 30):
                raise RuntimeError(f"{name}: the primary was not published; see {d}/runs.log")
            time.sleep(random.uniform(0, args.interval))
            primary.fail(mode)
            t_kill = time.monotonic()
            took = None
            limit = t_kill + 2 * bound + 30
            while time.monotonic() < limit:
                if dns_query(bind.port, name) == standby:
                    took = time.monotonic() - t_kill
                    break
                time.sleep(POLL_S)
            primary.restore()
            if took is None:
                lost += 1
                log(f"{mode} recheck={fmt_d(recheck)} trial {t + 1}: no failover within "
                    f"{limit - t_kill:.0f} s")
            else:
                figures.append(took)
                log(f"{mode} recheck={fmt_d(recheck)} trial {t + 1}: {took:.2f} s")
    finally:
        sched.stop()
        for e in eps:
            e.stop()
    return {"mode": mode, "recheck": recheck, "figures": figures, "lost": lost,
            "bound": bound, "formula": formula, "runs": sched.runs, "skipped": sched.skipped,
            "failed_runs": sched.failed, "longest_run": sched.longest}


def wait_for(port, name, want, limit):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if dns_query(port, name) == want:
            return True
        time.sleep(POLL_S)
    return False


def report(args, results, out=sys.stdout):
    p = lambda *a: print(*a, file=out, flush=True)  # noqa: E731
    p(f"failover: interval = {fmt_d(args.interval)}, attempts = {args.attempts}, "
      f"timeout = {fmt_d(args.timeout)}, {args.endpoints} endpoints (1 published, "
      f"{args.endpoints - 1} standby), {args.trials} trials per case, "
      f"DNS polled every {POLL_S * 1000:.0f} ms")
    p("  c = how long the failing check takes: 0 for a 503, timeout for a hang")
    p(f"  {'case':<6} {'recheck':>7} {'n':>3} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
      f"{'bound s':>8}  formula")
    for r in results:
        f = r["figures"]
        p(f"  {r['mode']:<6} {fmt_d(r['recheck']):>7} {len(f):>3} {pct(f, .5):7.2f} "
          f"{pct(f, .95):7.2f} {max(f) if f else float('nan'):7.2f} {r['bound']:8.1f}  "
          f"{r['formula']}")
    for r in results:
        extra = f", {r['lost']} trials without failover" if r["lost"] else ""
        p(f"  {r['mode']} recheck={fmt_d(r['recheck'])}: {r['runs']} runs, "
          f"{r['skipped']} ticks skipped, {r['failed_runs']} runs exited non-zero, "
          f"longest run {r['longest_run']:.2f} s{extra}; "
          f"figures: {' '.join(f'{x:.2f}' for x in r['figures'])}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ddup", default=os.path.join(ROOT, "build", "ddup-check"))
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--cases", default="503,hang", help="failure modes: 503, hang")
    ap.add_argument("--recheck", default="0,1s", help="recheck values, comma-separated")
    ap.add_argument("--endpoints", type=int, default=3)
    ap.add_argument("--interval", type=duration, default=10.0)
    ap.add_argument("--attempts", type=int, default=2)
    ap.add_argument("--timeout", type=duration, default=2.0)
    ap.add_argument("--block", type=int, default=77,
                    help="endpoints listen on 127.BLOCK+i.0.x (one block per case)")
    ap.add_argument("--serial", action="store_true",
                    help="run the cases one after the other (default: all at once)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the folder of the runs' logs, states and configurations")
    ap.add_argument("--cost", action="store_true",
                    help="measure a steady run's cost at N = 1,000 instead")
    ap.add_argument("--cost-n", type=int, default=1000)
    ap.add_argument("--cost-runs", type=int, default=7)
    ap.add_argument("--cost-cases", default="mixed,tcp,tls,command",
                    help="what --cost measures beside HTTP alone")
    args = ap.parse_args()
    if args.cost:
        import failover_cost
        return failover_cost.main(args)
    modes = [m for m in args.cases.split(",") if m]
    rechecks = [duration(x) for x in args.recheck.split(",") if x]
    for m in modes:
        if m not in ("503", "hang"):
            ap.error(f"unknown case {m!r} (503, hang)")
    if args.endpoints < 2:
        ap.error("--endpoints: at least 2")
    work = tempfile.mkdtemp(prefix="ddup-failover-")
    bind = BindServer(os.path.join(work, "bind"))
    os.makedirs(bind.dir)
    combos = [(m, r) for r in rechecks for m in modes]
    results = [None] * len(combos)
    errors = []

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        bind.start()

        def one(i):
            m, r = combos[i]
            try:
                results[i] = run_combo(args, work, bind, args.block + i, m, r)
            except Exception as e:  # noqa: BLE001  reported below
                errors.append(f"{m} recheck={fmt_d(r)}: {e}")

        threads = [threading.Thread(target=one, args=(i,), daemon=True)
                   for i in range(len(combos))]
        for t in threads:
            t.start()
            if args.serial:
                t.join()
        for t in threads:
            while t.is_alive():
                t.join(1)
    finally:
        bind.stop()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {open('/proc/loadavg').read().split()[0]}")
    report(args, [r for r in results if r])
    for e in errors:
        print("error:", e)
    if errors or args.keep:
        print(f"logs: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
