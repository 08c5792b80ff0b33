"""statusHtml (ddup.ini(5), TOP-LEVEL KEYS): the dashboard page, through the built ddup-check
with real HTTP servers and a real BIND, read in headless Chromium.

The page is checked for what a person reads after a failover (counts,
the new published address, the failed endpoint's reason, hostile names
shown as text), for being self-contained (no request but the page, no
script but its own, which the page's policy allows by hash), and it is
kept as phone- and desktop-sized screenshots in build/artefacts/.
When it is written and when not is checked without a browser.
"""

import datetime
import os
import re
import shutil
import stat

import pytest

from chromiumfix import chromium  # noqa: F401  (fixture)
from scenefix import APP, provider, scene_servers, unwritable_output, write_scene
from scenefix import failover as scene_failover

HOSTILE_EP = '<script>alert("ep")</script> & \'b\''
HOSTILE_ERR = '<img src=x onerror=alert(1)> & "quoted" </td>'


def config(ddup, bind, primary, backup, down, odd, html, extra=""):
    """The scene of scenefix.py, its page written to html; the odd
    domain's provider fails hostilely."""
    write_scene(ddup, bind, (primary, backup, down, odd),
                f"statusHtml = {html}\n{extra}", HOSTILE_EP, HOSTILE_ERR)


def failover(ddup, bind_server, http_server, html):
    servers = scene_servers(http_server)
    config(ddup, bind_server, *servers, html)
    return scene_failover(ddup, bind_server, servers)[0]


def test_failover_in_chromium(ddup, bind_server, http_server, chromium):
    html = os.path.join(ddup.dir, "www", "ddup.html")
    os.mkdir(os.path.dirname(html))
    failover(ddup, bind_server, http_server, html)
    assert stat.S_IMODE(os.stat(html).st_mode) == 0o644
    src = open(html, encoding="utf-8").read()

    chromium.open(html, 1366, 900)
    text = chromium.js("document.body.innerText")
    counts = chromium.js("[...document.querySelectorAll('.count')]"
                         ".map(e => e.innerText.replace(/\\s+/g, ' ').trim())")
    assert counts == ["1 healthy", "1 warning", "1 unhealthy"], counts
    doms = chromium.js("[...document.querySelectorAll('section.card')]"
                       ".map(e => e.innerText)")
    app = next(d for d in doms if APP in d)
    assert re.search(r"Published\s+192\.0\.2\.2\s", app), app
    assert re.search(r"Tier\s+priority 10", app), app
    # The failed endpoint: down, out of DNS, with its reason.
    rows = chromium.js("[...document.querySelectorAll('tr')]"
                       ".map(e => [...e.cells].map(c => c.innerText.trim()))")
    primary = next(r for r in rows if r and r[0] == "primary")
    assert primary[3] == "down", primary
    assert primary[4] == "1 failure", primary
    assert primary[5] == "connection refused", primary
    backup = next(r for r in rows if r and r[0] == "backup")
    assert backup[3] == "active in DNS", backup
    lonely = next(r for r in rows if r and r[0] == "lonely")
    assert lonely[5] == "HTTP 503", lonely
    # The change: the newest first.
    change = next(r for r in rows if r and r[1] == APP)
    assert change[3:5] == ["192.0.2.1", "192.0.2.2"] and change[6] == "done", change
    # Hostile text is text: no element made of it.
    assert HOSTILE_EP in text
    assert HOSTILE_ERR in text
    assert chromium.js("document.scripts.length") == 1
    assert chromium.js("document.images.length") == 0
    assert '<img src=x' not in src and '<script>alert' not in src
    # Written just now: no stale warning.
    assert chromium.js("document.getElementById('stale').hidden") is True
    assert "Stale" not in text
    chromium.screenshot("dashboard-desktop.png")

    # A phone: every table row a card, nothing wider than the screen.
    chromium.resize(390, 844, mobile=True)
    chromium.call("Page.reload")
    chromium.wait_event("Page.loadEventFired")
    wide = chromium.js("document.documentElement.scrollWidth")
    assert wide <= 390, wide
    assert chromium.js("getComputedStyle(document.querySelector('td')).display") != "table-cell"
    chromium.screenshot("dashboard-phone.png")
    # Dark, as the system asks.
    bg = "getComputedStyle(document.body).backgroundColor"
    assert chromium.js(bg) == "rgb(246, 247, 249)"
    chromium.call("Emulation.setEmulatedMedia",
                  features=[{"name": "prefers-color-scheme", "value": "dark"}])
    assert chromium.js(bg) == "rgb(17, 20, 24)"
    chromium.screenshot("dashboard-phone-dark.png")
    chromium.call("Emulation.setEmulatedMedia", features=[])

    # The same page three intervals later: the warning shows.
    old = os.path.join(ddup.dir, "www", "old.html")
    with open(old, "w", encoding="utf-8") as f:
        f.write(re.sub(r'data-stale-at="\d+"', 'data-stale-at="1000"', src))
    chromium.open(old, 1366, 900)
    assert chromium.js("document.getElementById('stale').hidden") is False
    assert "is the scheduler running?" in chromium.js("document.body.innerText").lower()
    chromium.screenshot("dashboard-stale.png")

    # Nothing but the pages was asked for, and the policy refused nothing.
    assert all(u.startswith("file://") for u in chromium.requests()), chromium.requests()
    assert len(chromium.requests()) == 3
    assert not [e for e in chromium.log_entries() if "Content Security Policy" in e], \
        chromium.log_entries()


def test_written_only_by_runs(ddup, bind_server, http_server):
    """After every run (also one whose update failed), never by --status,
    --dry-run or a configuration error; replaced whole each time."""
    html = os.path.join(ddup.dir, "ddup.html")
    p, b, d, o = http_server(), http_server(), http_server(status=503), http_server()
    config(ddup, bind_server, p, b, d, o, html)
    ddup.run("--dry-run")
    assert not os.path.exists(html)
    ddup.run("--status")
    assert not os.path.exists(html)
    assert ddup.run().rc == 1
    first = open(html).read()
    assert first.startswith("<!DOCTYPE html>") and first.endswith("</html>\n")
    assert '<meta http-equiv="refresh" content="30">' in first
    assert "No DNS change yet" not in first
    os.unlink(html)
    ddup.run("--status")
    ddup.run("--dry-run")
    assert not os.path.exists(html)
    # A configuration error: nothing written, nothing touched.
    config(ddup, bind_server, p, b, d, o, html, extra="maxParallel = 0")
    assert ddup.run().rc == 2
    assert not os.path.exists(html)
    config(ddup, bind_server, p, b, d, o, html)
    assert ddup.run().rc == 1
    assert os.path.exists(html)
    # No temporary file left beside it.
    assert os.listdir(ddup.dir).count("ddup.html") == 1
    assert not [f for f in os.listdir(ddup.dir) if f.startswith("ddup.html") and f != "ddup.html"]


def test_missing_folder_is_made(ddup, bind_server, http_server):
    """A missing folder is made, 0755 for the web server; the page is
    written and nothing about it is logged."""
    html = os.path.join(ddup.dir, "missing", "ddup.html")
    p, b, d, o = http_server(), http_server(), http_server(status=503), http_server()
    config(ddup, bind_server, p, b, d, o, html)
    r = ddup.run()
    assert r.rc == 1, r                 # the odd domain's provider fails
    assert bind_server.query(APP, "A") == ["192.0.2.1"]
    assert stat.S_IMODE(os.stat(os.path.dirname(html)).st_mode) == 0o755
    assert open(html).read().startswith("<!DOCTYPE html>")
    assert html not in r.err, r.err


def test_unwritable_page_fails_the_run(ddup, http_server):
    unwritable_output(ddup, http_server, "statusHtml")


def test_streaks_and_changes_in_page(ddup, bind_server, http_server):
    """The streak against attempts while failing and recoverAfter while
    recovering, run by run, and the changes newest first."""
    html = os.path.join(ddup.dir, "ddup.html")
    a, b = http_server(), http_server()
    ddup.write(f"""
interval = 1m
statusHtml = {html}
{provider(bind_server)}
[domain {APP}]
provider = bind
attempts = 2
recoverAfter = 3

[endpoint a]
url = {a.url}
ip = 192.0.2.1

[endpoint b]
url = {b.url}
ip = 192.0.2.2
priority = 10
""")

    def row(name):
        page = open(html, encoding="utf-8").read()
        m = re.search(r'<tr data-state="(\w+)"><td data-label="Endpoint">' + name +
                      r'</td>.*?<td data-label="Streak">([^<]*)</td>', page)
        assert m, page
        return m.group(1), m.group(2)

    steps = [(200, "active", "1 pass"), (503, "failing", "1/2 failures"),
             (503, "down", "2 failures"), (200, "recovering", "1/3 passes"),
             (200, "recovering", "2/3 passes"), (200, "active", "3 passes")]
    for i, (status, state, streak) in enumerate(steps, 1):
        a.set(status=status)
        r = ddup.run()
        assert r.rc == 0, f"step {i}: {r}"
        assert row("a") == (state, streak), f"step {i}"
    assert '<meta http-equiv="refresh" content="60">' in open(html).read()
    page = open(html, encoding="utf-8").read()
    changes = re.findall(r'<td data-label="Old">(.*?)</td><td data-label="New">(.*?)</td>', page)
    assert changes == [("<code>192.0.2.2</code>", "<code>192.0.2.1</code>"),
                       ("<code>192.0.2.1</code>", "<code>192.0.2.2</code>"),
                       ('<span class="muted">none</span>', "<code>192.0.2.1</code>")], changes


# The times a test moves back to make runs seconds apart look an hour
# apart: per table of the SQLite file its columns, and PostgreSQL's name
# (its streaks and endpoints are views over the rows and each domain's
# saves, ddup_tick, whose times all move).
# drain_log goes before drains, whose trigger logs a drain whose since
# changes (the trigger is off on PostgreSQL while the times move).
SHIFTED = (("streaks", "ddup_streak_base", ("first", "last")),
           ("changes", "ddup_change", ("time",)),
           ("drain_log", "ddup_drain_log", ("since", "until")),
           ("drains", "ddup_drain", ("since", "until")),
           ("domains", "ddup_domain", ("last_change",)),
           (None, "ddup_endpoint_base", ("last_check",)), (None, "ddup_tick", ("saved",)))
ISO = "%Y-%m-%dT%H:%M:%fZ"


def shift_back(ddup, seconds):
    """Every time the state holds, seconds earlier: the clock moved on."""
    if ddup.on_pg():
        moved = "".join(f"UPDATE {pg} SET " + ", ".join(f"{c} = {c} - interval '{seconds} s'"
                                                      for c in cols) + "; "
                        for _, pg, cols in SHIFTED)
        ddup.pg.psql("BEGIN; ALTER TABLE ddup_drain DISABLE TRIGGER ddup_drain_ended; " + moved +
                     "UPDATE ddup_meta SET value = to_char((value::timestamptz - interval "
                     f"'{seconds} s') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
                     " WHERE key = 'last_run'; "
                     "ALTER TABLE ddup_drain ENABLE TRIGGER ddup_drain_ended; COMMIT")
        return
    logged = ddup.state_rows("SELECT coalesce(max(rowid), 0) FROM drain_log", None)[0][0]
    sql = []
    for table, _, cols in SHIFTED:
        if table is not None:
            sql.append(f"UPDATE {table} SET " + ", ".join(
                f"{c} = strftime('{ISO}', {c}, '-{seconds} seconds')" for c in cols))
    # The drains moved, not renewed: what the trigger logged goes.
    sql.append(f"DELETE FROM drain_log WHERE rowid > {logged}")
    sql.append(f"UPDATE meta SET value = strftime('{ISO}', value, '-{seconds} seconds')"
               " WHERE key = 'last_run'")
    for q in sql:
        ddup.state_exec(q, None)


def ms(t):
    """A time of the state in ms: SQLite's text, PostgreSQL's ms already."""
    if not isinstance(t, str):
        return t
    d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ")
    return round(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def pg_ms(c):
    return f"(extract(epoch FROM {c}) * 1000)::bigint"


def expected_rows(ddup, domain, end, interval):
    """Per endpoint the kinds of its segments, pass and fail from the streaks of view
    history, void between two that do not follow within a run and a half, and after a
    closed last one; with each pass or fail its first check (ms)."""
    d = domain.replace("'", "''")
    rows = ddup.state_rows(
        f"SELECT endpoint, ok, first, last, open FROM history WHERE domain = '{d}'"
        " ORDER BY endpoint, first",
        f"SELECT endpoint, ok, {pg_ms('first')}, {pg_ms('last')}, EXISTS (SELECT 1 FROM"
        f" ddup_endpoint e WHERE e.streak = s.id) FROM ddup_streak s WHERE domain = '{d}'"
        " ORDER BY endpoint, first")
    drains = ddup.state_rows(
        f"SELECT endpoint, since FROM drains WHERE domain = '{d}' UNION ALL"
        f" SELECT endpoint, since FROM drain_log WHERE domain = '{d}' ORDER BY 2",
        f"SELECT endpoint, {pg_ms('since')} FROM ddup_drain WHERE domain = '{d}' UNION ALL"
        f" SELECT endpoint, {pg_ms('since')} FROM ddup_drain_log WHERE domain = '{d}'"
        " ORDER BY 2")
    out = {}
    for i, (ep, ok, first, last, is_open) in enumerate(rows):
        segs = out.setdefault(ep, [])
        segs.append(("pass" if ok else "fail", ms(first)))
        nxt = rows[i + 1] if i + 1 < len(rows) and rows[i + 1][0] == ep else None
        if nxt is not None and ms(nxt[2]) > ms(last) + interval * 3 // 2:
            segs.append(("void", None))
        elif nxt is None and not is_open and ms(last) + interval < end:
            segs.append(("void", None))
    for ep, since in drains:
        out.setdefault(ep, []).append(("drained", ms(since)))
    return out


def test_last_day_in_chromium(ddup, bind_server, http_server, chromium):
    """Ten hourly runs (the state's clock moved back an hour after each):
    a fails and comes back, a run whose controlUrl fails counts nothing,
    b is drained for two runs.  The page's timeline shows each endpoint's
    streaks as the state holds them, the DNS changes as marks, the
    uptime; the hostile endpoint's name is text; the policy refuses
    nothing; screenshots at desktop and phone size, light and dark."""
    html = os.path.join(ddup.dir, "ddup.html")
    a, b, c, control = http_server(), http_server(), http_server(), http_server()
    ddup.write(f"""
interval = 1h
statusHtml = {html}
controlUrl = {control.url}
{provider(bind_server)}
[domain {APP}]
provider = bind
attempts = 2
recoverAfter = 2

[endpoint a]
url = {a.url}
ip = 192.0.2.1

[endpoint b]
url = {b.url}
ip = 192.0.2.2
priority = 10

[endpoint odd]
name = {HOSTILE_EP}
url = {c.url}
ip = 192.0.2.3
priority = 20
""")
    # Per run: a's status, controlUrl's, and what is asked before it.
    plan = [(200, 200, None), (200, 200, None), (200, 200, None), (503, 200, None),
            (503, 200, None), (503, 503, None), (200, 200, "drain"), (200, 200, None),
            (200, 200, "undrain"), (200, 200, None)]
    for i, (sa, sc, ask) in enumerate(plan):
        a.set(status=sa)
        control.set(status=sc)
        if ask == "drain":
            assert ddup.run("--drain", f"{APP}/b").rc == 0
        elif ask == "undrain":
            assert ddup.run("--undrain", f"{APP}/b").rc == 0
        r = ddup.run()
        assert r.rc == 0, f"run {i}: {r}"
        if i + 1 < len(plan):
            shift_back(ddup, 3600)
    assert bind_server.query(APP, "A") == ["192.0.2.1"]
    page = open(html, encoding="utf-8").read()
    end = int(re.search(r'data-stale-at="(\d+)"', page).group(1)) - 3 * 3600000
    want = expected_rows(ddup, APP, end, 3600000)
    # The scene is what it means to be: a failed, a void run, b drained.
    # (A failed controlUrl excuses failures: passes still count, and go on.)
    assert [k for k, _ in want["a"]] == ["pass", "fail", "void", "pass"], want
    assert [k for k, _ in want["b"]] == ["pass", "drained"], want

    chromium.open(html, 1366, 900)
    got = chromium.js("""[...document.querySelectorAll('svg.tl-svg')].map(s =>
        [...s.querySelectorAll('g.tl-row')].map(g => [g.querySelector('text.tl-name').textContent,
          [...g.querySelectorAll('rect.seg')].map(r => [r.dataset.kind, Number(r.dataset.from),
            Number(r.dataset.to)])]))""")
    assert len(got) == 1, got
    rows = dict((name, segs) for name, segs in got[0])
    assert set(rows) == {"a", "b", HOSTILE_EP}, rows
    for ep, segs in rows.items():
        kinds = [(k, f if k != "void" else None) for k, f, _ in segs]
        assert kinds == want[ep], (ep, kinds, want[ep])
        health = [s for s in segs if s[0] != "drained"]
        # Each follows the one before, without a hole, up to the end.
        assert all(x[2] == y[1] for x, y in zip(health, health[1:])), (ep, health)
        assert health[-1][2] == end, (ep, health, end)
    # The changes, on the same axis: the first set, a's failover, b drained
    # while a recovers (to the third), and back to a.
    marks = chromium.js("[...document.querySelectorAll('svg.tl-svg g.mark')]"
                        ".map(g => [Number(g.dataset.time), g.textContent])")
    changes = [ms(t) for (t,) in ddup.state_rows(
        f"SELECT time FROM changes WHERE domain = '{APP}' ORDER BY time",
        f"SELECT {pg_ms('time')} FROM ddup_change WHERE domain = '{APP}' ORDER BY time")]
    assert [t for t, _ in marks] == changes and len(changes) == 4, (marks, changes)
    assert "192.0.2.1 to 192.0.2.2" in marks[1][1], marks
    text = chromium.js("document.body.innerText")
    m = re.search(r"Uptime (\d+\.\d\d) %", text)
    assert m and float(m.group(1)) == 100.0, text
    # The hostile name is text: the row's name, the table's cell; no element of it.
    assert HOSTILE_EP in text
    assert chromium.js("document.scripts.length") == 1
    assert '<script>alert' not in page
    shots = []
    shots.append(chromium.screenshot("timeline-desktop.png"))

    chromium.resize(390, 844, mobile=True)
    chromium.call("Page.reload")
    chromium.wait_event("Page.loadEventFired")
    assert chromium.js("document.documentElement.scrollWidth") <= 390
    width = chromium.js("document.querySelector('svg.tl-svg').getBoundingClientRect().width")
    assert 300 <= width <= 390, width
    # The 3-hourly labels go on a phone; the 6-hourly stay.
    assert chromium.js("getComputedStyle(document.querySelector('.tl-minor')).display") == "none"
    shots.append(chromium.screenshot("timeline-phone.png"))
    chromium.call("Emulation.setEmulatedMedia",
                  features=[{"name": "prefers-color-scheme", "value": "dark"}])
    fill = "getComputedStyle(document.querySelector('rect.seg.pass')).fill"
    assert chromium.js(fill) == "rgb(111, 214, 143)"
    shots.append(chromium.screenshot("timeline-phone-dark.png"))
    chromium.call("Emulation.setEmulatedMedia", features=[])
    assert chromium.js(fill) == "rgb(23, 114, 58)"

    assert all(u.startswith("file://") for u in chromium.requests()), chromium.requests()
    assert not [e for e in chromium.log_entries() if "Content Security Policy" in e], \
        chromium.log_entries()
    # Kept beside the test's files too, for whoever looks at a failure.
    for s in shots:
        shutil.copy(s, ddup.dir)
