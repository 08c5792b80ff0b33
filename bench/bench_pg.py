"""The PostgreSQL row of the benchmark: three checkers, one shared state.

A real PostgreSQL, started the way the integration tests start theirs
(tests/integration/pgfix.py: Debian's initdb and postgres run as the
`postgres` user in a temporary folder, a Unix socket there and loopback),
but with the durability of a production server (fsync and synchronous
commit on, Debian's shared_buffers), so that a commit costs what it
costs for SQLite's synchronous=FULL.  The checkers reach it over TCP on
loopback with the role's password, as checkers in other networks would.

Three INI files, the same configuration but `checker`, share the state;
quorum is the default majority (2 of 3).  A measured slot is the three
checkers' runs one after the other in one slot of the database's clock:
the first of them takes every domain's round (the deciding run), the
other two only report.  Between slots the database's clock is stepped
to the start of the next slot with pgfix's seam (`ddup_test.now()`,
moved by PgServer.advance()), so no slot is skipped and none is waited
for; the order of the checkers turns from slot to slot.  The floor
(bench/floor.c, the same GETs) runs once per slot beside them, and so
does a SQLite run of the same endpoints (the same nginx, its own state
file and INI): the deciding run's target is a ratio to that run, and
runs minutes apart on a shared machine differ by more than the target.

Figures: wall time, CPU and peak RSS per run (medians), for the deciding
run and the reporting runs apart, and the database round trips of each
from ddup-check's debug line `postgresql: N round trips` (one more slot
with -v), and what a steady slot writes: rows inserted, updated and
deleted (pg_stat_user_tables, in the log also by table) and WAL bytes
(pg_current_wal_lsn()), over the measured slots.
"""

import json
import os
import re
import statistics
import subprocess

from pgfix import PgServer, _bindir

CHECKERS = ("c1", "c2", "c3")
INTERVAL_S = 30


class BenchPg(PgServer):
    """pgfix's server with production's durability back on."""

    def _init(self):
        super()._init()
        # Later lines of postgresql.conf win over pgfix's test settings.
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\nfsync = on\nsynchronous_commit = on\nfull_page_writes = on\n"
                    "shared_buffers = 128MB\n")

    def db_epoch(self):
        """The database's time as ddup sees it (through the seam), in seconds."""
        return float(self.psql("SELECT extract(epoch FROM ddup_test.now())")[0][0])

    def next_slot(self, interval):
        """Steps the database's clock to just after the start of the next slot."""
        t = self.db_epoch()
        self.advance(interval - t % interval + 0.05)


def seam_missing():
    """None if this row can run here, else why not."""
    if _bindir() is None:
        return "PostgreSQL is not installed (Debian's postgresql)"
    if os.geteuid() != 0:
        return "it needs root (the server runs as the postgres user)"
    if not hasattr(PgServer, "advance"):
        return "pgfix.py has no clock seam (PgServer.advance)"
    return None


class PgCase:
    """N endpoints (those of an nginx the caller started), three checkers."""

    def __init__(self, work, name, bench, ddup, floor, srv, bind, nginx, ndomains,
                 timeout_ms):
        self.name = name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.b = bench          # bench.py: write_ini, spawn_measured, read
        self.ddup = ddup
        self.srv = srv
        self.bind = bind
        self.n = len(nginx.addrs)
        self.ndomains = ndomains
        self.ini = {}
        for c in CHECKERS:
            self.ini[c] = os.path.join(self.dir, f"{c}.ini")
            bench.write_ini(self.ini[c], srv.uri(), bind, nginx, ndomains, timeout_ms,
                            extra=[f"interval = {INTERVAL_S}s",
                                   "checkers = " + ", ".join(CHECKERS), f"checker = {c}"])
        # The SQLite run beside the fleet: the same domains and endpoints, so once
        # warm it publishes nothing either.
        self.sqlite_ini = os.path.join(self.dir, "sqlite.ini")
        bench.write_ini(self.sqlite_ini, os.path.join(self.dir, "sqlite", "ddup.db"), bind,
                        nginx, ndomains, timeout_ms, extra=[f"interval = {INTERVAL_S}s"])
        self.urlfile = os.path.join(self.dir, "urls")
        with open(self.urlfile, "w") as f:
            f.write("".join(nginx.url(a) + "\n" for a in nginx.addrs))
        self.floor_argv = [floor, self.urlfile, str(timeout_ms), str(bench.PARALLEL)]
        self.out = os.path.join(self.dir, "out")
        self.err = os.path.join(self.dir, "err")

    def run(self, c, warm=False, verbose=False):
        argv = [self.ddup, "-c", self.ini[c]] + (["-v"] if verbose else [])
        wall, cpu, rss, rc = self.b.spawn_measured(argv, self.out, self.err)
        err = self.b.read(self.err)
        if rc != 0 or (err.strip() and not warm and not verbose):
            raise RuntimeError(f"{self.name}: {c} exited {rc}:\n{err[-2000:]}")
        return wall, cpu, rss, err

    def sqlite(self, warm=False):
        argv = [self.ddup, "-c", self.sqlite_ini]
        wall, cpu, rss, rc = self.b.spawn_measured(argv, self.out, self.err)
        err = self.b.read(self.err)
        if rc != 0 or (err.strip() and not warm):
            raise RuntimeError(f"{self.name}: the SQLite run exited {rc}:\n{err[-2000:]}")
        return wall, cpu, rss

    def floor(self):
        wall, cpu, rss, rc = self.b.spawn_measured(self.floor_argv, self.out, self.err)
        err = self.b.read(self.err)
        if rc != 0 or err.strip() != f"ok {self.n} failed 0":
            raise RuntimeError(f"{self.name}: floor exited {rc}: {err[-2000:]}")
        return wall, cpu, rss

    def status_ok(self):
        """Every endpoint's last check passed and is published, as c1 sees it."""
        p = subprocess.run([self.ddup, "-c", self.ini["c1"], "--status", "--json"],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"{self.name}: --status exited {p.returncode}: {p.stderr}")
        doms = json.loads(p.stdout)["domains"]
        bad = [(d["name"], e["name"], e["lastResult"]) for d in doms for e in d["endpoints"]
               if e["lastResult"] != "ok" or not e["published"]]
        return len(doms) == self.ndomains and not bad, bad[:5]

    def slot(self, order, **kw):
        self.srv.next_slot(INTERVAL_S)
        return [(c, self.run(c, **kw)) for c in order]

    def writes(self):
        """(WAL bytes, rows inserted + updated + deleted) so far; each run's server
        process flushes its table statistics when it ends."""
        lsn, at = self.srv.psql("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, "
                                "pg_current_wal_lsn()")[0]
        rows = self.srv.psql("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) "
                             "FROM pg_stat_user_tables")[0][0]
        return int(float(lsn)), int(rows), at

    def wal_kinds(self, lsn0, lsn1):
        """(record type, count, bytes) of the WAL between two LSNs, largest first
        (pg_walinspect, PostgreSQL's contrib)."""
        self.srv.psql("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        return self.srv.psql(
            "SELECT \"resource_manager/record_type\", count, record_size + fpi_size "
            f"FROM pg_get_wal_stats('{lsn0}', '{lsn1}', true) WHERE count > 0 "
            "ORDER BY 3 DESC LIMIT 8")

    def table_writes(self):
        """{table: rows inserted + updated + deleted} so far, of the tables written,
        and the server's WAL records and full-page images (pg_stat_wal)."""
        rec, fpi = self.srv.psql("SELECT wal_records, wal_fpi FROM pg_stat_wal")[0]
        hot = self.srv.psql("SELECT coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables")
        return {"WAL records": int(rec), "full-page images": int(fpi),
                "of them heap-only updates": int(hot[0][0])} | {
            t: int(k) for t, k in self.srv.psql(
            "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables "
                "WHERE n_tup_ins + n_tup_upd + n_tup_del > 0")}

    def deciders(self):
        """{checker: domains} of the rounds of the latest slot, from the database."""
        rows = self.srv.psql("SELECT checker, count(*) FROM ddup_round WHERE slot = "
                             "(SELECT max(slot) FROM ddup_round) GROUP BY checker")
        return {c: int(k) for c, k in rows}


def round_trips(err):
    m = re.search(r"postgresql: (\d+) round trips", err)
    return int(m.group(1)) if m else None


def measure(case, runs, log):
    """Warm-up slots until every domain is published, then `runs` slots."""
    load0 = os.getloadavg()[0]
    before = case.bind.update_count()
    for k in range(6):
        case.slot(CHECKERS, warm=True)
        ok, bad = case.status_ok()
        log(f"[{case.name}] warm-up slot {k + 1}: published {case.bind.update_count() - before}"
            f" of {case.ndomains} domains")
        if ok:
            break
    else:
        raise RuntimeError(f"{case.name}: not steady after 6 slots: {bad}")
    # Two more slots: every checker's streaks open, nothing left to publish.
    for _ in range(2):
        case.slot(CHECKERS, warm=True)
    published = case.bind.update_count() - before
    if published != case.ndomains:
        raise RuntimeError(f"{case.name}: warm-up sent {published} UPDATEs, "
                           f"expected {case.ndomains}")
    # The SQLite run's warm-up, once DNS holds the fleet's sets (the same ones).
    for _ in range(2):
        case.sqlite(warm=True)
    before = case.bind.update_count()
    w0 = case.writes()
    t0 = case.table_writes()
    decide, report, floor, sqlite = [], [], [], []
    for r in range(runs):
        order = CHECKERS[r % 3:] + CHECKERS[:r % 3]
        floor.append(case.floor())
        sqlite.append(case.sqlite())
        got = case.slot(order)
        # The first run of the slot took every domain's round, the others none.
        if case.deciders() != {order[0]: case.ndomains}:
            raise RuntimeError(f"{case.name}: rounds of slot {r + 1} taken by "
                               f"{case.deciders()}, not all by {order[0]}")
        decide.append(got[0][1][:3])
        report += [g[1][:3] for g in got[1:]]
        log(f"[{case.name}] slot {r + 1}/{runs}: floor {floor[-1][0]:.3f}s  "
            f"sqlite {sqlite[-1][0]:.3f}s  " + "  ".join(
            f"{c} {w[0]:.3f}s" for c, w in got))
    updates = case.bind.update_count() - before
    w1 = case.writes()
    t1 = case.table_writes()
    log(f"[{case.name}] rows written per slot by table: " + ", ".join(
        f"{t} {(k - t0.get(t, 0)) / runs:.0f}" for t, k in sorted(t1.items())
        if k != t0.get(t, 0)))
    log(f"[{case.name}] WAL per slot by record type: " + ", ".join(
        f"{kind} {int(n) / runs:.0f} ({int(b) / runs / 1024:.1f} KiB)"
        for kind, n, b in case.wal_kinds(w0[2], w1[2])))
    if updates != 0:
        raise RuntimeError(f"{case.name}: {updates} UPDATE messages in steady state")
    ok, bad = case.status_ok()
    if not ok:
        raise RuntimeError(f"{case.name}: not steady after the measured slots: {bad}")
    got = case.slot(CHECKERS, verbose=True)
    trips = [round_trips(w[3]) for _, w in got]
    if None in trips:
        raise RuntimeError(f"{case.name}: no 'postgresql: N round trips' line with -v")
    return {"decide": decide, "report": report, "floor": floor, "sqlite": sqlite,
            "trips": trips,
            "updates": updates, "load": (load0, os.getloadavg()[0]),
            "wal_per_slot": (w1[0] - w0[0]) / runs,
            "rows_per_slot": (w1[1] - w0[1]) / runs}


def summarize(case, res):
    def med(rows, i):
        return statistics.median(x[i] for x in rows)
    fw = med(res["floor"], 0)
    allruns = res["decide"] + res["report"]
    row = {"case": case.name, "n": case.n, "slots": len(res["decide"]),
           "wall": med(allruns, 0), "wall_decide": med(res["decide"], 0),
           "wall_report": med(res["report"], 0), "floor_wall": fw,
           "cpu_decide": med(res["decide"], 1), "cpu_report": med(res["report"], 1),
           "rss_kib": max(x[2] for x in allruns),
           "wall_sqlite": med(res["sqlite"], 0),
           "rss_sqlite_kib": max(x[2] for x in res["sqlite"]),
           "trips_decide": res["trips"][0], "trips_report": res["trips"][1:],
           "updates": res["updates"], "wal_per_slot": res["wal_per_slot"],
           "rows_per_slot": res["rows_per_slot"], "load": res["load"]}
    row["wall_ratio"] = row["wall"] / fw
    row["decide_ratio"] = row["wall_decide"] / row["wall_sqlite"]
    return row


def print_table(rows, out):
    print("| case | wall per run (median) | deciding run | SQLite run | ratio | reporting run "
          "| floor | CPU deciding / reporting | peak RSS PostgreSQL / SQLite "
          "| round trips deciding / reporting | rows written per slot | WAL per slot "
          "| load average |", file=out)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|", file=out)
    for r in rows:
        print(f"| {r['case']} | {r['wall']:.3f} s ({r['wall_ratio']:.2f} x floor) "
              f"| {r['wall_decide']:.3f} s | {r['wall_sqlite']:.3f} s | {r['decide_ratio']:.2f} "
              f"| {r['wall_report']:.3f} s | {r['floor_wall']:.3f} s "
              f"| {r['cpu_decide']:.3f} s / {r['cpu_report']:.3f} s "
              f"| {r['rss_kib'] / 1024:.1f} / {r['rss_sqlite_kib'] / 1024:.1f} MB "
              f"| {r['trips_decide']} / {', '.join(map(str, r['trips_report']))} "
              f"| {r['rows_per_slot']:,.0f} | {r['wal_per_slot'] / 1024:,.0f} KiB "
              f"| {r['load'][0]:.1f} to {r['load'][1]:.1f} |", file=out)
    out.flush()


def start_server():
    srv = BenchPg()
    try:
        srv.start()
    except BaseException:
        srv.destroy()
        raise
    return srv
