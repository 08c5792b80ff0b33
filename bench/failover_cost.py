"""The cost of the check types (`make bench-failover BENCH_FAILOVER_ARGS=--cost`).

A steady run of ddup-check at N = 1,000 endpoints (100 domains of 10)
served by one nginx on loopback (bench/bench.py's), in two
configurations of the same addresses:
  http   every endpoint an HTTP GET;
  mixed  the endpoints in turn http://, tcp:// (connect only), tls://
         (a handshake verified against a CA of this run's own, `host` as
         the server name) and `command = /bin/true`;
and, for the breakdown, tcp, tls and command: every endpoint of that one
type (--cost-cases picks which).
Each is warmed up once (the first run publishes), then measured runs
alternate between the two; the medians of wall time and CPU (user + sys
of ddup-check and its children, from wait4()) are printed with the
ratio mixed / http.
"""

import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile

import bench
from dnsfix import BindServer

TLS_NAME = "bench.test"


def openssl(*args, cwd):
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {p.stderr.strip()}")


def make_pki(d):
    """A CA and a leaf for TLS_NAME signed by it: (ca.pem, leaf.pem, leaf.key)."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
            "-subj", "/CN=ddup bench CA", "-addext", "basicConstraints = critical, CA:TRUE",
            "-addext", "keyUsage = critical, keyCertSign, cRLSign", cwd=d)
    with open(os.path.join(d, "leaf.ext"), "w") as f:
        f.write(f"subjectAltName = DNS:{TLS_NAME}\nbasicConstraints = critical, CA:FALSE\n"
                "keyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\n")
    openssl("req", "-new", *ec, "-keyout", "leaf.key", "-out", "leaf.csr",
            "-subj", f"/CN={TLS_NAME}", cwd=d)
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-set_serial", "1", "-days", "30", "-extfile", "leaf.ext", "-out", "leaf.pem", cwd=d)
    return tuple(os.path.join(d, x) for x in ("ca.pem", "leaf.pem", "leaf.key"))


class TlsNginx(bench.Nginx):
    """bench.Nginx, plus a TLS listener on port + 1 of every address."""

    def __init__(self, d, addrs, cert, key):
        super().__init__(d, addrs, False)
        self.cert, self.key = cert, key

    def _conf(self):
        conf = super()._conf()
        tls = "".join(f"        listen {a}:{self.port + 1} ssl;\n" for a in self.addrs)
        tls += (f"        ssl_certificate {self.cert};\n"
                f"        ssl_certificate_key {self.key};\n")
        return conf.replace("    server {\n", "    server {\n" + tls, 1)


def tls_handshake(address, port, ca):
    """The setup's own check: the TLS listener verifies against ca."""
    ctx = ssl.create_default_context(cafile=ca)
    with socket.create_connection((address, port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname=TLS_NAME):
            pass


KINDS = {"http": 0, "tcp": 1, "tls": 2, "command": 3}
LABEL = {"http": "HTTP alone", "mixed": "mixed: http, tcp://, tls://, command",
         "tcp": "tcp:// alone", "tls": "tls:// alone", "command": "command = /bin/true alone"}


def write_ini(path, state, bind, ng, ca, case, ndomains):
    per = len(ng.addrs) // ndomains
    lines = [f"state = {state}", "maxParallel = 256", "timeout = 3s", f"caFile = {ca}", "",
             "[provider bind]", "type = rfc2136", f"server = 127.0.0.1:{bind.port}",
             f"zone = {bind.zone}", f"keyName = {bind.key_name}",
             f"keySecret = {bind.key_secret}", ""]
    for k in range(ndomains):
        lines += [f"[domain c{k}.{bind.zone}]", "provider = bind", "ttl = 60", ""]
        for j, a in enumerate(ng.addrs[k * per:(k + 1) * per]):
            kind = j % 4 if case == "mixed" else KINDS[case]
            lines.append(f"[endpoint e{k * per + j}]")
            if kind == 0:
                lines.append(f"url = {ng.url(a)}")
            elif kind == 1:
                lines.append(f"url = tcp://{a}:{ng.port}")
            elif kind == 2:
                lines += [f"url = tls://{a}:{ng.port + 1}", f"host = {TLS_NAME}"]
            else:
                lines.append("command = /bin/true")
            lines += [f"ip = {a}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    os.chmod(path, 0o600)


def main(args):
    n = args.cost_n
    work = tempfile.mkdtemp(prefix="ddup-failover-cost-")
    os.chmod(work, 0o755)        # nginx workers run as nobody
    servers = []
    try:
        ca, cert, key = make_pki(work)
        os.chmod(key, 0o644)
        bind = BindServer(os.path.join(work, "bind"))
        os.makedirs(bind.dir)
        servers.append(bind)
        bind.start()
        nd = os.path.join(work, "nginx")
        os.makedirs(nd)
        os.chmod(nd, 0o755)
        ng = TlsNginx(nd, [bench.addr(130 + i // 62500, i % 62500) for i in range(n)], cert, key)
        servers.append(ng)
        ng.start()
        tls_handshake(ng.addrs[-1], ng.port + 1, ca)
        cases = {}
        for name in ["http"] + [c for c in args.cost_cases.split(",") if c and c != "http"]:
            if name not in LABEL:
                print(f"cost: unknown case {name!r} ({', '.join(LABEL)})")
                return 2
            d = os.path.join(work, name)
            os.makedirs(d)
            ini = os.path.join(d, "ddup.ini")
            write_ini(ini, os.path.join(d, "state", "ddup.db"), bind, ng, ca, name,
                      max(1, n // 10))
            p = subprocess.run([args.ddup, "-c", ini], capture_output=True, text=True,
                               timeout=600)
            if p.returncode != 0:
                first = (p.stderr.strip().splitlines() or [""])[0]
                print(f"cost: {name}: the warm-up run exited {p.returncode}: {first}")
                if name == "http":
                    return 1
                print("cost: this build lacks a check type of the mix; HTTP alone only")
                continue
            cases[name] = ([args.ddup, "-c", ini], os.path.join(d, "out"),
                           os.path.join(d, "err"), [])
        for _ in range(args.cost_runs):
            for name, (argv, out, err, res) in cases.items():
                wall, cpu, rss, rc = bench.spawn_measured(argv, out, err)
                if rc != 0 or bench.read(err).strip():
                    print(f"cost: {name}: exit {rc}: {bench.read(err)[-600:]}")
                    return 1
                res.append((wall, cpu, rss))
    finally:
        for s in reversed(servers):
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
    med = {name: tuple(statistics.median(r[i] for r in c[3]) for i in range(3))
           for name, c in cases.items()}
    print(f"cost: a steady run at N = {n} ({max(1, n // 10)} domains), median of {args.cost_runs} runs each, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"  {'checks':<36} {'wall ms':>8} {'CPU ms':>8} {'RSS MiB':>8}")
    for name, (w, c, r) in med.items():
        print(f"  {LABEL[name]:<36} {w * 1000:8.0f} {c * 1000:8.0f} {r / 1024:8.1f}")
    if "mixed" in med:
        hw, hc, _ = med["http"]
        mw, mc, _ = med["mixed"]
        print(f"  mixed / http: wall x{mw / hw:.2f}, CPU x{mc / hc:.2f}")
    print("  (CPU: user + sys of ddup-check and its children, the programs included)")
    return 0


if __name__ == "__main__":
    sys.exit("run it as bench/failover.py --cost")
