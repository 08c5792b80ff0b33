"""What the tests of every API provider (test_azure.py, test_ovh.py, ...)
do alike: write a configuration of one provider, one domain and its
endpoints; swap one line of the provider's section for a bad one; run
ddup-check every way that prints something and look for secrets in all
of it and in the state file.

    configure(ddup, section, [("a", srv, "192.0.2.1", 0)])
    assert_config_error(ddup, fake, section, "baseUrl = ftp://x", ["baseUrl"], [srv])
    outs = outputs_of_every_kind(ddup, lambda top: configure(ddup, ..., top=top), flip=srv)
    assert_nowhere(ddup, outs, [fake.secret])
"""

import os

__all__ = ["NAME", "ZONE", "configure", "quiet_ok", "state_error", "with_line",
           "assert_config_error", "assert_outside_zone", "outputs_of_every_kind",
           "assert_nowhere"]

ZONE = "example.test"
NAME = "app.example.test"


def configure(ddup, provider, eps, name=NAME, top="", ttl=60):
    """eps: (endpoint name, http server, ip, priority)."""
    text = f"interval = 30s\n{top}\n" + provider
    text += f"\n[domain {name}]\nprovider = dns\nttl = {ttl}\nattempts = 1\n"
    for ep, srv, ip, prio in eps:
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    ddup.write(text)


def quiet_ok(r):
    assert (r.rc, r.out, r.err) == (0, "", ""), r


def state_error(ddup):
    return ddup.state_rows("SELECT last_error FROM domains",
                           "SELECT last_error FROM ddup_domain")[0][0]


def with_line(section, line):
    """The section with line in place of the line of the same key."""
    key = line.split(" ")[0]
    text = "\n".join(ln for ln in section.splitlines() if not ln.startswith(key + " "))
    return text + "\n" + line + "\n"


def assert_config_error(ddup, fake, section, line, words, srv):
    """section with line is refused (exit 2) naming words, before any call."""
    configure(ddup, with_line(section, line), [("a", srv, "192.0.2.1", 0)])
    r = ddup.run("-n")
    assert r.rc == 2, r
    for w in words:
        assert w in r.err, (w, r)
    assert fake.requests == []


def assert_outside_zone(ddup, fake, section, srv):
    """A domain outside the provider's zone is a configuration error."""
    configure(ddup, section, [("a", srv, "192.0.2.1", 0)], name="app.other.test")
    r = ddup.run("-n")
    assert r.rc == 2, r
    assert "app.other.test" in r.err and ZONE in r.err, r
    assert fake.requests == []


def outputs_of_every_kind(ddup, write, flip, env=None):
    """Runs -v, --status (text and JSON) and --dry-run --json, with text
    and JSON logs, flipping the health of endpoint server flip between
    the two so that both runs change something; write(top) writes the
    configuration with top among its first lines.  Returns what was
    printed."""
    outs = []
    for top in ("", "logFormat = json\n"):
        write(top)
        for args in (("-v",), ("--status",), ("--status", "--json"), ("--dry-run", "--json")):
            r = ddup.run(*args, env=env)
            assert r.rc == 0, r
            outs.append(r.out + r.err)
        flip.set(status=503 if flip.behaviour["status"] == 200 else 200)
    flip.set(status=200)
    return outs


def assert_nowhere(ddup, outs, secrets):
    """No secret in outs, the state (every row; with SQLite, the file and its journal)."""
    blobs = outs + [ddup.state_dump()]
    if not ddup.on_pg():
        blobs += [open(ddup.state + s, "rb").read().decode("latin-1")
                  for s in ("", "-wal") if os.path.exists(ddup.state + s)]
    for s in secrets:
        assert s
        for blob in blobs:
            assert s not in blob
