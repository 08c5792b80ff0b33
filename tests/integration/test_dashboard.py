"""statusHtml (ddup.ini(5), TOP-LEVEL KEYS): the dashboard page, through the built ddup-check
with real HTTP servers and a real BIND, read in headless Chromium.

The page is checked for what a person reads after a failover (counts,
the new published address, the failed endpoint's reason, hostile names
shown as text), for being self-contained (no request but the page, no
script but its own, which the page's policy allows by hash), and it is
kept as phone- and desktop-sized screenshots in build/artefacts/.
When it is written and when not is checked without a browser.
"""

import os
import re
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
