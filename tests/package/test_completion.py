"""Bash completion (completion/ddup-check): the flags are the code's, and
--drain, --undrain and --failback complete the names of the
configuration that ddup-check would read (-c, else $DDUP_CONFIG), the
first two also its endpoints' locations (location=NAME)."""

import os
import re
import subprocess

from conftest import ROOT, code_options

SCRIPT = os.path.join(ROOT, "completion", "ddup-check")


def q(w):
    return "'%s'" % w.replace("'", "'\\''")


def complete(words, env=None, cwd=None):
    """COMPREPLY for the command line `words`, the last one being
    completed, with COMP_LINE and COMP_WORDS as bash sets them (bash
    splits a word at ':' too)."""
    line = " ".join(words)
    split = []
    for w in words:
        split += [p for p in re.split(r"([:=])", w) if p != ""] or [""]
    prog = ('source %s; COMP_LINE=%s; COMP_POINT=%d; COMP_WORDS=(%s); '
            'COMP_CWORD=%d; _ddup_check; printf "%%s\\n" "${COMPREPLY[@]}"'
            % (SCRIPT, q(line), len(line), " ".join(q(w) for w in split),
               len(split) - 1))
    e = {k: v for k, v in os.environ.items() if k != "DDUP_CONFIG"}
    e.update(env or {})
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog],
                       capture_output=True, text=True, timeout=30, env=e, cwd=cwd)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [l for l in r.stdout.split("\n") if l]


CONFIG = """\
; a comment [domain commented.example]
state = /tmp/x.db
[provider p]
type = exec
command = /bin/true

[domain app.example.com.]
provider = p
[endpoint web1]
url = http://127.0.0.1:1/
ip = 127.0.0.1
[provider q]        ; an endpoint belongs to the nearest domain above
type = exec
command = /bin/true
[Endpoint web2]
url = http://127.0.0.2:1/
ip = 127.0.0.2
name = second one
[endpoint]
url = http://127.0.0.3/health
ip = 127.0.0.3

[DOMAIN api.example.org]
provider = p
[endpoint  edge ]
URL = http://127.0.0.4/
ip = 127.0.0.4
Name = Edge-1
"""


def test_shellcheck_clean():
    r = subprocess.run(["shellcheck", "-s", "bash", SCRIPT], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_flags_are_the_codes():
    opts = code_options()
    want = {"--" + n for n in opts} | {"-" + s for s in opts.values() if s}
    assert set(complete(["ddup-check", ""])) == want
    assert set(complete(["ddup-check", "--d"])) == {"--dry-run", "--drain"}


def test_drain_names_from_the_configuration(tmp_path):
    cfg = tmp_path / "ddup.ini"
    cfg.write_text(CONFIG)
    eps = ["app.example.com/web1", "app.example.com/second one",
           "app.example.com/http://127.0.0.3/health", "api.example.org/Edge-1"]
    for flag in ("--drain", "--undrain"):
        assert complete(["ddup-check", "-c", str(cfg), flag, ""]) == eps
    assert complete(["ddup-check", "--config", str(cfg), "--drain", "api"]) == \
        ["api.example.org/Edge-1"]
    assert complete(["ddup-check", "-c", str(cfg), "--failback", ""]) == \
        ["app.example.com", "api.example.org"]
    # --failback takes a domain only: no location.
    assert not [w for w in complete(["ddup-check", "-c", str(cfg), "--failback", ""])
                if "location" in w]
    # --for after --drain: durations, not names.
    assert "2h" in complete(["ddup-check", "-c", str(cfg), "--drain",
                             "api.example.org/Edge-1", "--for", ""])


LOCATED = """\
location = paris            ; the checker's own: not an endpoint's
[provider p]
type = exec
command = /bin/true
[domain app.example.com]
provider = p
failoverLocations = berlin  ; no endpoint there
[endpoint web1]
url = http://127.0.0.1:1/
ip = 127.0.0.1
location = austin
[endpoint web2]
url = http://127.0.0.2:1/
ip = 127.0.0.2
location = london
[domain api.example.org]
provider = p
[endpoint edge]
url = http://127.0.0.4/
ip = 127.0.0.4
Location = Austin           ; the same location, in another case
[endpoint plain]
url = http://127.0.0.5/
ip = 127.0.0.5
"""


def test_drain_offers_the_locations(tmp_path):
    """After --drain and --undrain, location=NAME for each location of an
    endpoint, once; bash replaces what follows the '=' (COMP_WORDBREAKS)."""
    cfg = tmp_path / "ddup.ini"
    cfg.write_text(LOCATED)
    eps = ["app.example.com/web1", "app.example.com/web2", "api.example.org/edge",
           "api.example.org/plain"]
    for flag in ("--drain", "--undrain"):
        assert complete(["ddup-check", "-c", str(cfg), flag, ""]) == \
            eps + ["location=austin", "location=london"]
    assert complete(["ddup-check", "-c", str(cfg), "--drain", "loc"]) == \
        ["location=austin", "location=london"]
    assert complete(["ddup-check", "-c", str(cfg), "--drain", "location="]) == \
        ["austin", "london"]
    assert complete(["ddup-check", "-c", str(cfg), "--undrain", "location=l"]) == \
        ["london"]
    assert complete(["ddup-check", "-c", str(cfg), "--failback", ""]) == \
        ["app.example.com", "api.example.org"]


def test_names_with_a_colon(tmp_path):
    """An endpoint named after its url: bash completes after the last ':',
    so the reply is what follows it."""
    cfg = tmp_path / "ddup.ini"
    cfg.write_text(CONFIG)
    assert complete(["ddup-check", "-c", str(cfg), "--drain",
                     "app.example.com/http:"]) == ["//127.0.0.3/health"]
    assert complete(["ddup-check", "-c", str(cfg), "--drain",
                     "app.example.com/http"]) == \
        ["app.example.com/http://127.0.0.3/health"]


def test_without_comp_line(tmp_path):
    """COMP_WORDS alone (an older caller) still works."""
    cfg = tmp_path / "ddup.ini"
    cfg.write_text(CONFIG)
    prog = ('source %s; COMP_WORDS=(ddup-check -c %s --failback ""); '
            'COMP_CWORD=4; _ddup_check; printf "%%s\\n" "${COMPREPLY[@]}"'
            % (SCRIPT, q(str(cfg))))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog],
                       capture_output=True, text=True, timeout=30)
    assert r.stdout.split() == ["app.example.com", "api.example.org"]


def test_config_from_the_environment_and_dash_c_first(tmp_path):
    cfg = tmp_path / "a.ini"
    cfg.write_text("[domain env.example.com]\nprovider = p\n")
    other = tmp_path / "b.ini"
    other.write_text("[domain file.example.com]\nprovider = p\n")
    env = {"DDUP_CONFIG": str(cfg)}
    assert complete(["ddup-check", "--failback", ""], env=env) == ["env.example.com"]
    assert complete(["ddup-check", "-c", str(other), "--failback", ""],
                    env=env) == ["file.example.com"]


def test_unreadable_or_missing_configuration_completes_nothing(tmp_path):
    assert complete(["ddup-check", "-c", str(tmp_path / "none.ini"),
                     "--drain", ""]) == []


def test_dash_c_completes_files(tmp_path):
    (tmp_path / "ddup.ini").write_text("")
    assert complete(["ddup-check", "-c", "dd"], cwd=tmp_path) == ["ddup.ini"]
