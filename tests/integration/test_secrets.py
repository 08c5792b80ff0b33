"""Secrets: private state files, a warning for a world-readable secret,
and no TSIG keySecret or PowerDNS apiKey anywhere ddup writes.

Against a real BIND and a real PowerDNS.  Each secret is given
literally, through !env and through !file; every output of every mode
(run with -v and -q, text and JSON logs, --status, --status --json,
--dry-run, --dry-run --json, -n, the error of an update with a wrong
key) and the raw bytes of the state file and its -wal and -shm are
searched for the secret, its base64 and its decoded forms.
"""

import base64
import os
import sqlite3
import stat
import subprocess
import time

import pytest

from conftest import DDUP
from test_hostile_providers import pdns_fake  # noqa: F401  (fixture)

ZONE = "example.test"
NAME = "app.example.test"


def forms(secret):
    """Ways a secret could show: as given, base64, hex, and for a base64
    secret (TSIG) its decoded bytes in raw, hex and other base64 forms."""
    s = secret.encode()
    out = [s, base64.b64encode(s), s.hex().encode(), base64.urlsafe_b64encode(s)]
    try:
        raw = base64.b64decode(secret, validate=True)
    except ValueError:
        raw = None
    if raw and len(raw) >= 16:
        out += [raw, raw.hex().encode(), raw.hex().upper().encode(),
                base64.b64encode(raw).rstrip(b"="), base64.urlsafe_b64encode(raw).rstrip(b"=")]
    return out


def assert_clean(where, data, secrets):
    if isinstance(data, str):
        data = data.encode(errors="surrogateescape")
    for sec in secrets:
        for f in forms(sec):
            assert f not in data, f"{where}: holds a form of a secret ({f[:6]!r}...)"


class Setup:
    """A provider section whose secret is given literally, via !env or !file."""

    def __init__(self, ddup, kind, how, server):
        self.ddup, self.kind, self.how, self.server = ddup, kind, how, server
        self.env = {}

    @property
    def secret(self):
        return self.server.key_secret if self.kind == "bind" else self.server.api_key

    def wrong(self):
        if self.kind == "bind":
            return base64.b64encode(b"not-the-key-not-the-key-0123456!").decode()
        return "wrong-" + self.server.api_key

    def value(self, secret):
        if self.how == "literal":
            return secret
        if self.how == "env":
            self.env["DDUP_TEST_SECRET"] = secret
            return "!env DDUP_TEST_SECRET"
        path = os.path.join(str(self.ddup.dir), "secret.txt")
        with open(path, "w") as f:
            f.write(secret + "\n")
        os.chmod(path, 0o600)
        return f"!file {path}"

    def write(self, eps, secret=None, top=""):
        secret = self.secret if secret is None else secret
        s = self.server
        if self.kind == "bind":
            prov = (f"[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:{s.port}\nzone = {ZONE}\n"
                    f"keyName = {s.key_name}\nkeyAlgorithm = {s.key_alg}\n"
                    f"keySecret = {self.value(secret)}\ntimeout = 3s\n")
        else:
            prov = (f"[provider dns]\ntype = powerdns\nbaseUrl = {s.api_url}\n"
                    f"apiKey = {self.value(secret)}\nzone = {ZONE}\ntimeout = 5s\n")
        text = f"interval = 30s\n{top}\n{prov}\n[domain {NAME}]\nprovider = dns\nttl = 60\nattempts = 1\n"
        for name, srv, ip in eps:
            text += f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\n"
        self.ddup.write(text)

    def run(self, *args):
        return self.ddup.run(*args, env=self.env)


@pytest.fixture(params=["bind", "pdns"])
def server(request):
    return request.getfixturevalue("bind_server" if request.param == "bind" else "pdns_server")


def state_files(ddup):
    out = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = ddup.state + suffix
        if os.path.exists(p):
            with open(p, "rb") as f:
                out[suffix or "db"] = f.read()
    return out


@pytest.mark.parametrize("how", ["literal", "env", "file"])
def test_no_secret_anywhere(ddup, server, http_server, how):
    kind = "bind" if hasattr(server, "key_secret") else "pdns"
    st = Setup(ddup, kind, how, server)
    a, b = http_server(), http_server()
    eps = [("a", a, "192.0.2.1"), ("b", b, "192.0.2.2")]
    outputs = []

    def collect(tag, r, rc=None):
        if rc is not None:
            assert r.rc == rc, (tag, r)
        outputs.append((tag, r.out + r.err))
        return r

    # Text logs, every mode.
    st.write(eps)
    collect("-n", st.run("-n"), 0)
    collect("dry-run before first run", st.run("--dry-run"), 0)
    collect("run -v", st.run("-v"), 0)
    assert server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    collect("status", st.run("--status"), 0)
    collect("status json", st.run("--status", "--json"), 0)
    collect("dry-run", st.run("--dry-run"), 0)
    collect("dry-run json", st.run("--dry-run", "--json"), 0)
    b.set(status=503)
    collect("run -v change", st.run("-v"), 0)
    collect("run -q", st.run("-q"), 0)

    # JSON logs.
    st.write(eps, top="logFormat = json\n")
    b.set(status=200)
    collect("json run -v", st.run("-v"), 0)
    collect("json -n", st.run("-n"), 0)
    collect("json status", st.run("--status", "--json"), 0)

    # A wrong key: the update fails; neither key may show in the error.
    wrong = st.wrong()
    st.write(eps, secret=wrong)
    b.set(status=503)
    files = {}
    if ddup.on_pg():
        r = collect("wrong key run -v", st.run("-v"), 1)
    else:
        # A reader holds the database open, so the run's -wal stays on disk
        # after it exits and can be searched too.
        con = sqlite3.connect(ddup.state)
        try:
            con.execute("BEGIN")
            con.execute("SELECT count(*) FROM sqlite_master").fetchall()
            r = collect("wrong key run -v", st.run("-v"), 1)
            files = state_files(ddup)
        finally:
            con.close()
        assert "-wal" in files and len(files["-wal"]) > 0, sorted(files)
    assert ("NOTAUTH" in r.err) if kind == "bind" else ("401" in r.err), r
    st.write(eps, secret=wrong, top="logFormat = json\n")
    collect("wrong key json", st.run(), 1)
    r = collect("wrong key status", st.run("--status", "--json"), 0)
    assert r.json()["domains"][0]["lastError"], r
    collect("wrong key status text", st.run("--status"), 0)

    for tag, text in outputs:
        assert_clean(tag, text, [st.secret, wrong])
    for name, data in files.items():
        assert_clean("state " + name, data, [st.secret, wrong])
    if not ddup.on_pg():
        for name, data in state_files(ddup).items():
            assert_clean("state after " + name, data, [st.secret, wrong])
    # Every row of the state, decoded (sqlite3's dump or pg_dump's).
    dump = ddup.state_dump()
    assert_clean("state dump", dump, [st.secret, wrong])
    # The test looked where the error is: the failed change was recorded.
    assert "NOTAUTH" in dump or "401" in dump


def test_bad_secret_values_never_echoed(ddup, bind_server, pdns_server, http_server):
    """Secrets that fail validation are named by key, never shown."""
    a = http_server()
    st = Setup(ddup, "bind", "literal", bind_server)
    for bad in ("sec*ret*not*base64", "c2VjcmV0=c2Vj", "A" * 5000 + "="):
        st.write([("a", a, "192.0.2.1")], secret=bad)
        r = st.run("-n")
        assert r.rc == 2 and "keySecret" in r.err, r
        assert bad not in r.out + r.err
    st = Setup(ddup, "pdns", "literal", pdns_server)
    st.write([("a", a, "192.0.2.1")], secret="")
    r = st.run("-n")
    assert r.rc == 2 and "apiKey" in r.err, r


@pytest.mark.parametrize("mode,warns", [(0o600, False), (0o640, True), (0o604, True),
                                        (0o644, True), (0o400, False)])
def test_world_readable_literal_secret_warns(ddup, bind_server, http_server, mode, warns):
    a = http_server()
    st = Setup(ddup, "bind", "literal", bind_server)
    st.write([("a", a, "192.0.2.1")])
    os.chmod(ddup.config, mode)
    r = st.run("-n")
    assert r.rc == 0, r
    has = "warning" in r.err and "keySecret" in r.err
    assert has == warns, r
    assert bind_server.key_secret not in r.out + r.err
    if warns:
        assert ddup.config in r.err, r


@pytest.mark.parametrize("how", ["env", "file"])
def test_readable_file_without_literal_secret_does_not_warn(ddup, bind_server, http_server, how):
    a = http_server()
    st = Setup(ddup, "bind", how, bind_server)
    st.write([("a", a, "192.0.2.1")])
    if ddup.on_pg():
        # The state's URI holds a password too: given the same way.
        uri = ddup.pg.uri()
        if how == "env":
            st.env["DDUP_TEST_STATE_URI"] = uri
            line = "state = !env DDUP_TEST_STATE_URI"
        else:
            path = str(ddup.dir / "state-uri")
            with open(path, "w") as f:
                f.write(uri)
            os.chmod(path, 0o600)
            line = f"state = !file {path}"
        text = open(ddup.config).read().replace(f"state = {uri}", line)
        with open(ddup.config, "w") as f:
            f.write(text)
    os.chmod(ddup.config, 0o644)
    r = st.run("-n")
    assert r.rc == 0, r
    assert "warning" not in r.err, r


def test_pdns_literal_api_key_readable_warns(ddup, pdns_server, http_server):
    a = http_server()
    st = Setup(ddup, "pdns", "literal", pdns_server)
    st.write([("a", a, "192.0.2.1")])
    os.chmod(ddup.config, 0o644)
    r = st.run("-n")
    assert r.rc == 0 and "warning" in r.err and "apiKey" in r.err, r
    assert pdns_server.api_key not in r.out + r.err


def _modes(path):
    out = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            out[suffix] = stat.S_IMODE(os.stat(path + suffix).st_mode)
        except FileNotFoundError:
            pass
    return out


@pytest.mark.sqlite_file
def test_state_modes_under_umask_000(ddup, bind_server, http_server):
    """The folder (created) is 0700, the file and its -wal and -shm 0600,
    whatever the umask; the journal files are looked at while the run
    has them open."""
    a = http_server(delay=1.5)
    ddup.state = str(ddup.dir / "new" / "ddup.db")
    st = Setup(ddup, "bind", "literal", bind_server)
    st.write([("a", a, "192.0.2.1")])
    seen = {}
    for _ in range(2):       # the first run creates; the second reopens
        p = subprocess.Popen([DDUP, "-c", ddup.config], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=lambda: os.umask(0))
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            for k, v in _modes(ddup.state).items():
                seen.setdefault(k, set()).add(v)
            time.sleep(0.01)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert stat.S_IMODE(os.stat(os.path.dirname(ddup.state)).st_mode) == 0o700
    assert "-wal" in seen and "-shm" in seen, seen
    assert all(v == {0o600} for v in seen.values()), seen
    assert _modes(ddup.state)[""] == 0o600


# ---------------------------------------------------------------- echoed secrets
#
# A server that echoes a secret in its error (an API key in a 422's body,
# a header in an error page, cut short or whole): every secret of the
# configuration is hidden from that text before it is shown, stored or
# sent.  Searched: the run's stderr, a run with JSON logs, --status and
# --status --json, every row of the state, the dashboard, the metrics and
# the notification the run sent.  A part of a secret counts: its first
# 8 characters must show nowhere (a cut text must not keep half a key).


def _parts(secret):
    return [secret, secret[:8], secret[-8:]]


def watched(ddup, hook, provider, eps, top="", notify=None):
    """The configuration with a dashboard, a metrics file and a notifier
    (by default hook's, for failed updates)."""
    html, prom = ddup.dir / "status.html", ddup.dir / "ddup.prom"
    if notify is None:
        notify = f"url = {hook.url}\nevents = dns_update_failed\n"
    text = (f"interval = 30s\nstatusHtml = {html}\nmetricsFile = {prom}\n{top}\n{provider}\n"
            f"[notify hook]\n{notify}attempts = 1\n"
            f"\n[domain {NAME}]\nprovider = dns\nttl = 60\nattempts = 1\n")
    for name, srv, ip in eps:
        text += f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\n"
    ddup.write(text)
    return html, prom


def assert_hidden_everywhere(ddup, runs, secrets, hook, html, prom, env=None):
    """runs: the failed runs' results; each must have shown <secret>."""
    blobs = {}
    for i, r in enumerate(runs):
        assert "<secret>" in r.err, r
        blobs[f"run {i}"] = r.out + r.err
    st = ddup.run("--status", env=env)
    blobs["--status"] = st.out + st.err
    js = ddup.run("--status", "--json", env=env)
    blobs["--status --json"] = js.out + js.err
    last = js.json()["domains"][0]["lastError"]
    assert last and "<secret>" in last, last
    blobs["state"] = ddup.state_dump()
    assert "<secret>" in blobs["state"]
    blobs["dashboard"] = html.read_text()
    blobs["metrics"] = prom.read_text()
    events = [e for e in hook.events() if e["event"] == "dns_update_failed"]
    assert events and all("<secret>" in e["error"] for e in events), events
    blobs["notifications"] = "\n".join(r["body"].decode() for r in hook.requests)
    for where, blob in blobs.items():
        for s in secrets:
            for part in _parts(s):
                assert part not in blob, f"{where}: holds {part[:4]!r}...: {blob[:2000]}"


@pytest.mark.parametrize("kind", ["json", "cut", "text"])
def test_api_key_echoed_by_the_api_is_hidden_everywhere(ddup, pdns_fake, http_server,
                                                          receiver, kind):
    key = pdns_fake.real.api_key
    hook = receiver().up(status=204)
    a, b = http_server(), http_server()
    eps = [("a", a, "192.0.2.1"), ("b", b, "192.0.2.2")]
    prov = (f"[provider dns]\ntype = powerdns\nbaseUrl = {pdns_fake.url}\napiKey = {key}\n"
            f"zone = {ZONE}\ntimeout = 5s\n")
    html, prom = watched(ddup, hook, prov, eps)
    assert ddup.run().rc == 0
    # The update fails with an answer that quotes the key: twice, with
    # text and with JSON logs.
    pdns_fake.modes = {"PATCH": "echo-" + kind}
    b.set(status=503)
    r1 = ddup.run()
    assert r1.rc == 1, r1
    html, prom = watched(ddup, hook, prov, eps, top="logFormat = json\n")
    r2 = ddup.run()
    assert r2.rc == 1, r2
    assert [m for m, *_ in pdns_fake.requests].count("PATCH") == 3
    assert_hidden_everywhere(ddup, [r1, r2], [key], hook, html, prom)


def test_token_in_a_failed_action_is_hidden_everywhere(ddup, hetzner, http_server, receiver):
    hook = receiver().up(status=204)
    a = http_server()
    prov = (f"[provider dns]\ntype = hetzner\napiToken = {hetzner.token}\nzone = {hetzner.zone}\n"
            f"baseUrl = {hetzner.url}/v1\ntimeout = 5s\n")
    html, prom = watched(ddup, hook, prov, [("a", a, "192.0.2.1")])
    hetzner.action_error = f"token {hetzner.token} may not change this zone"
    r = ddup.run()
    assert r.rc == 1, r
    assert "action_failed" in r.err, r
    assert_hidden_everywhere(ddup, [r], [hetzner.token], hook, html, prom)


def test_session_token_echoed_and_cut_by_route53_is_hidden_everywhere(ddup, route53_fake,
                                                                        http_server, receiver):
    """Route 53 quotes the request's headers in a 400; ddup keeps 160 bytes
    of the message, which end in the middle of the token."""
    token = "IQoJb3JpZ2luX2VjE" + "Ab1" * 40
    route53_fake.token = token
    hook = receiver().up(status=204)
    a = http_server()
    prov = (f"[provider dns]\ntype = route53\naccessKeyId = {route53_fake.access_key}\n"
            f"secretAccessKey = !env DDUP_R53_SECRET\nsessionToken = !env DDUP_R53_TOKEN\n"
            f"hostedZoneId = {route53_fake.zone_id}\nbaseUrl = {route53_fake.url}\n"
            f"timeout = 5s\n")
    env = {"DDUP_R53_SECRET": route53_fake.secret_key, "DDUP_R53_TOKEN": token}
    html, prom = watched(ddup, hook, prov, [("a", a, "192.0.2.1")])

    def echo(req):
        from route53fix import error_xml
        return error_xml("InvalidInput", "Invalid header X-Amz-Security-Token: " +
                         req.header("X-Amz-Security-Token") + " with secret " +
                         route53_fake.secret_key)

    route53_fake.fail(400, times=10, body=echo)
    r = ddup.run(env=env)
    assert r.rc == 1, r
    assert "InvalidInput" in r.err, r
    assert route53_fake.requests[0].header("X-Amz-Security-Token") == token
    assert_hidden_everywhere(ddup, [r], [token, route53_fake.secret_key], hook, html, prom,
                             env=env)


def test_webhook_header_and_url_echoed_by_the_receiver_are_hidden(ddup, pdns_server,
                                                                   http_server, receiver):
    """A receiver's error page quotes the request: its Authorization header
    and its secret url (a chat service's token in the path)."""
    hook = receiver()
    hook.echo = True
    hook.up(status=500)
    bearer = "hook-" + "Zq7" * 12
    path_token = "T0KEN" + "x9" * 12
    url = hook.url + "/" + path_token
    a = http_server()
    watched(ddup, hook, f"[provider dns]\ntype = powerdns\nbaseUrl = {pdns_server.api_url}\n"
            f"apiKey = {pdns_server.api_key}\nzone = {ZONE}\n", [("a", a, "192.0.2.1")],
            notify=f"url = !env DDUP_HOOK_URL\nheader = Authorization: Bearer {bearer}\n"
            f"events = dns_updated\n")
    env = {"DDUP_HOOK_URL": url}
    r = ddup.run("-v", env=env)
    assert r.rc == 0, r
    assert len(hook.requests) == 1 and path_token in hook.requests[0]["path"]
    assert hook.requests[0]["headers"]["Authorization"] == "Bearer " + bearer
    assert "notify 'hook'" in r.err and "<secret>" in r.err, r
    st = ddup.run("--status", env=env)
    js = ddup.run("--status", "--json", env=env)
    dump = ddup.state_dump()
    assert "500" in dump
    for where, blob in (("run", r.err), ("--status", st.out), ("--status --json", js.out),
                        ("state", dump)):
        assert url not in blob, where
        for s in (bearer, path_token):
            for part in _parts(s):
                assert part not in blob, f"{where}: holds {part[:4]!r}...: {blob[:2000]}"
