"""Certificates about to expire (ddup.ini(5), certWarn) through the built
ddup-check: HTTPS health servers with certificates of the test CA valid for five
days (within the default certWarn of 14 days) and for a year, and a plain HTTP one.
certExpires in --status, its text line, the metric, the one warning, the
cert_expiring event to a webhook, and the dashboard. DNS is kept by the exec
provider's test program (test_exec.py)."""

import os

import pytest

from certfix import iso, not_after, short_certs  # noqa: F401  (fixture)
from chromiumfix import chromium  # noqa: F401  (fixture)
from test_exec import Program
from test_metrics import promtool

NAME = "app.example.test"
WARN = "certificate expires"


def configure(ddup, certs, soon, later, plain, hook=None, extra=""):
    notify = f"[notify ops]\nurl = {hook.url}\nevents = cert_expiring\n" if hook else ""
    prog = Program(str(ddup.dir / "bin"))
    ddup.write(f"""interval = 1m
caFile = {certs.ca}
metricsFile = {ddup.dir}/ddup.prom
statusHtml = {ddup.dir}/status.html
{extra}[provider dns]
type = exec
command = {prog.path}
[domain {NAME}]
provider = dns
[endpoint soon]
url = {soon.url_for("localhost")}
ip = 192.0.2.1
[endpoint later]
url = {later.url_for("localhost")}
ip = 192.0.2.2
[endpoint plain]
url = {plain.url}
ip = 192.0.2.3
{notify}""")


@pytest.fixture
def three(ddup, http_server, short_certs):  # noqa: F811
    soon = http_server(tls=True, cert="5days")
    later = http_server(tls=True, cert="1year")
    plain = http_server()
    return short_certs, soon, later, plain


def endpoints(doc):
    return {e["name"]: e for e in doc["domains"][0]["endpoints"]}


def test_status_metric_warning_and_event(ddup, three, receiver):
    certs, soon, later, plain = three
    hook = receiver()
    hook.up(status=204)
    configure(ddup, certs, soon, later, plain, hook)
    r1 = ddup.run()
    assert r1.rc == 0, r1
    r2 = ddup.run()
    assert r2.rc == 0, r2

    # JSON: the notAfter of each HTTPS server's certificate; no key for http://.
    eps = endpoints(ddup.status())
    assert eps["soon"]["certExpires"] == iso(not_after(certs.cert("5days")))
    assert eps["later"]["certExpires"] == iso(not_after(certs.cert("1year")))
    assert "certExpires" not in eps["plain"]
    assert all(e["lastResult"] == "ok" for e in eps.values()), eps

    # One warning across two runs, for the five-day certificate only.
    warned = [ln for ln in (r1.err + r2.err).splitlines() if WARN in ln]
    assert len(warned) == 1, r1.err + r2.err
    assert "soon" in warned[0] and iso(not_after(certs.cert("5days"))) in warned[0]
    assert WARN in r1.err

    # The text line of --status: the five-day one only.
    r = ddup.run("--status")
    assert r.rc == 0, r
    lines = [ln.strip() for ln in r.out.splitlines() if "certificate" in ln]
    assert len(lines) == 1 and lines[0].startswith("soon: certificate expires "), r.out
    assert "within certWarn" in lines[0]

    # The metric, for both HTTPS endpoints, and promtool's blessing.
    path = os.path.join(ddup.dir, "ddup.prom")
    p = promtool(path)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p
    text = open(path, encoding="utf-8").read()
    name = "ddup_endpoint_cert_expiry_timestamp_seconds"
    assert f"# TYPE {name} gauge" in text
    for ep, cert in (("soon", "5days"), ("later", "1year")):
        line = f'{name}{{domain="{NAME}",endpoint="{ep}"}} {not_after(certs.cert(cert))}'
        assert line in text.splitlines(), text
    assert f'{name}{{domain="{NAME}",endpoint="plain"}}' not in text

    # One cert_expiring event, delivered, naming the endpoint.
    events = hook.events()
    assert [e["event"] for e in events] == ["cert_expiring"], events
    ev = events[0]
    assert ev["endpoint"] == "soon" and ev["domain"] == NAME
    by = {e["name"]: e for e in ev["endpoints"]}
    assert by["soon"]["certExpires"] == iso(not_after(certs.cert("5days")))
    assert "certExpires" not in by["plain"]


def test_renewed_certificate_warns_again_only_when_near(ddup, http_server, short_certs,  # noqa: F811
                                                        receiver):
    """The stored expiry is rewritten when the server's certificate changes: a
    five-day one after a year-long one warns; the same five-day one again does not."""
    soon = http_server(tls=True, cert="1year")
    later = http_server(tls=True, cert="1year")
    plain = http_server()
    configure(ddup, short_certs, soon, later, plain)
    r = ddup.run()
    assert r.rc == 0 and WARN not in r.err, r
    assert endpoints(ddup.status())["soon"]["certExpires"] == \
        iso(not_after(short_certs.cert("1year")))
    soon.stop()
    soon.tls_ctx.load_cert_chain(short_certs.cert("5days"), short_certs.key("5days"))
    soon.start()
    r = ddup.run()
    assert r.rc == 0 and r.err.count(WARN) == 1, r
    r = ddup.run()
    assert r.rc == 0 and WARN not in r.err, r
    assert endpoints(ddup.status())["soon"]["certExpires"] == \
        iso(not_after(short_certs.cert("5days")))


def test_cert_warn_off(ddup, three):
    """certWarn = 0: certExpires still shown, no warning, no line."""
    certs, soon, later, plain = three
    configure(ddup, certs, soon, later, plain)
    text = open(ddup.config).read().replace("provider = dns\n[endpoint soon]",
                                            "provider = dns\ncertWarn = 0\n[endpoint soon]")
    with open(ddup.config, "w") as f:
        f.write(text)
    r = ddup.run()
    assert r.rc == 0 and WARN not in r.err, r
    assert endpoints(ddup.status())["soon"]["certExpires"] is not None
    r = ddup.run("--status")
    assert "certificate" not in r.out, r


def test_dashboard_shows_it(ddup, three, chromium):  # noqa: F811
    certs, soon, later, plain = three
    configure(ddup, certs, soon, later, plain)
    assert ddup.run().rc == 0
    chromium.open(os.path.join(ddup.dir, "status.html"), 1366, 900)
    heads = chromium.js("[...document.querySelectorAll('th')].map(t => t.innerText)")
    assert "Certificate" in heads, heads
    cells = chromium.js("Object.fromEntries([...document.querySelectorAll('tbody tr')]"
                        ".filter(r => r.querySelector('[data-label=Certificate]'))"
                        ".map(r => [r.querySelector('[data-label=Endpoint]').innerText,"
                        " [r.querySelector('[data-label=Certificate]').innerText,"
                        "  r.querySelector('[data-label=Certificate]').className]]))")
    assert cells["soon"][0].startswith(iso(not_after(certs.cert("5days")))), cells
    assert "within certWarn" in cells["soon"][0] and cells["soon"][1] == "s-warning", cells
    assert cells["later"][0] == iso(not_after(certs.cert("1year"))), cells
    assert cells["later"][1] == "", cells
    assert cells["plain"][0] == "-", cells


def cert_rows(ddup):
    return sorted(tuple(r) for r in ddup.state_rows(
        "SELECT endpoint, expires FROM certs", "SELECT endpoint, expires FROM ddup_cert"))


def test_rows_written_on_change_and_dropped_with_the_endpoint(ddup, three):
    """One row per endpoint that has seen a certificate, not rewritten while it stays
    the same, and gone with the endpoint when the configuration drops it."""
    certs, soon, later, plain = three
    configure(ddup, certs, soon, later, plain)
    assert ddup.run().rc == 0
    want = [("later", not_after(certs.cert("1year"))), ("soon", not_after(certs.cert("5days")))]
    assert cert_rows(ddup) == want
    if not ddup.on_pg():
        # Every write of the table counted behind ddup's back.
        for op in ("INSERT", "UPDATE"):
            ddup.state_exec(f"CREATE TRIGGER IF NOT EXISTS count_{op} AFTER {op} ON certs"
                            " BEGIN INSERT INTO meta (key, value) VALUES ('test_writes', 1)"
                            " ON CONFLICT (key) DO UPDATE SET value = value + 1; END", "")
        assert ddup.run().rc == 0 and ddup.run().rc == 0
        assert ddup.state_rows("SELECT value FROM meta WHERE key = 'test_writes'", "") == []
        ddup.state_exec("UPDATE certs SET expires = 1 WHERE endpoint = 'soon'", "")
        assert ddup.run().rc == 0
        assert ddup.state_rows("SELECT value FROM meta WHERE key = 'test_writes'", "") \
            == [("2",)]    # the UPDATE of the test, then ddup's
        for op in ("INSERT", "UPDATE"):
            ddup.state_exec(f"DROP TRIGGER count_{op}", "")
            ddup.state_exec("DELETE FROM meta WHERE key = 'test_writes'", "")
    assert cert_rows(ddup) == want
    text = open(ddup.config).read()
    start = text.index("[endpoint later]")
    end = text.index("[endpoint plain]")
    with open(ddup.config, "w") as f:
        f.write(text[:start] + text[end:])
    assert ddup.run().rc == 0
    assert cert_rows(ddup) == want[1:]
