"""The manual pages and --help agree with the code.

The options come from the code's own table (the longopts[] table and the
getopt string of ddup-check.c), the exit statuses from run.h; --help is
the built binary's.  A flag added without its line in --help and its
entry in doc/ddup-check.8, or one documented that the code does not
have, fails here.  (The configuration keys are checked against the
reader's tables by tests/unit/test_doc.c.)
"""

import os
import re
import sqlite3
import subprocess
import time

from conftest import DDUP

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGES = [os.path.join(ROOT, "doc", p) for p in ("ddup-check.8", "ddup.ini.5")]


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def code_options():
    """{long name: short letter or None} from ddup-check.c."""
    src = read("ddup-check.c")
    table = re.search(r"longopts\[\] = \{(.*?)\n\t\};", src, re.S)
    assert table, "longopts[] not found in ddup-check.c"
    opts = {}
    for name, arg, val in re.findall(
            r'\{\s*"([a-z-]+)",\s*(no_argument|required_argument),\s*NULL,\s*\'(.)\'',
            table.group(1)):
        opts[name] = val
    shorts = re.search(r'getopt_long\(argc, argv, "([^"]*)"', src)
    assert shorts, "getopt string not found"
    letters = set(shorts.group(1).replace(":", ""))
    out = {n: (v if v in letters else None) for n, v in opts.items()}
    # Every short option of the getopt string belongs to a long one.
    assert letters == {v for v in out.values() if v}, (letters, out)
    return out


def test_code_table_is_read():
    opts = code_options()
    assert len(opts) >= 13
    assert opts["config"] == "c" and opts["dry-run"] is None


def help_text():
    r = subprocess.run([DDUP, "--help"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return r.stdout


def test_help_lists_every_option_and_only_those():
    opts = code_options()
    text = help_text()
    longs = set(re.findall(r"(?<![\w-])--([a-z][a-z-]*)", text))
    assert longs == set(opts), (
        "in --help, not in the code: %s; in the code, not in --help: %s"
        % (sorted(longs - set(opts)), sorted(set(opts) - longs)))
    # A short option is shown as "-c, --config".
    for name, short in opts.items():
        if short:
            assert re.search(r"-%s, --%s\b" % (short, name), text), name
    shorts = set(re.findall(r"(?<![\w-])-([a-zA-Z])\b", text))
    assert shorts == {s for s in opts.values() if s}, shorts


def man_items(page):
    """The option names of the .It lines of a page: longs and shorts."""
    longs, shorts = set(), set()
    for line in page.splitlines():
        if not line.startswith(".It Fl"):
            continue
        longs |= set(re.findall(r"Fl \\-([a-z][a-z-]*)", line))
        shorts |= set(re.findall(r"Fl ([a-zA-Z])\b", line))
    return longs, shorts


def test_manual_documents_every_option_and_only_those():
    opts = code_options()
    page = read("doc", "ddup-check.8")
    longs, shorts = man_items(page)
    assert longs == set(opts), (
        "documented, not in the code: %s; in the code, undocumented: %s"
        % (sorted(longs - set(opts)), sorted(set(opts) - longs)))
    assert shorts == {s for s in opts.values() if s}
    # Each short letter sits on the same .It line as its long name.
    for name, short in opts.items():
        if short:
            assert re.search(r"^\.It Fl %s .*Fl \\-%s\b" % (short, name),
                             page, re.M), name
    # Every flag named anywhere in the page exists.
    named = set(re.findall(r"Fl \\-([a-z][a-z-]*)", page))
    assert named <= set(opts), sorted(named - set(opts))


def exit_codes():
    codes = set(int(v) for v in
                re.findall(r"#define RUN_[A-Z]+\s+(\d+)", read("run.h")))
    assert codes == {0, 1, 2, 3, 4, 5}
    return codes


def test_exit_statuses_agree():
    codes = exit_codes()
    page = read("doc", "ddup-check.8")
    section = page.split("\n.Sh EXIT STATUS\n", 1)[1].split("\n.Sh ", 1)[0]
    documented = set(int(n) for n in re.findall(r"^\.It (\d+)$", section, re.M))
    assert documented == codes
    tail = help_text().split("exit status:", 1)[1]
    assert set(int(n) for n in re.findall(r"(?<!\w)(\d) ", tail)) == codes


def test_mandoc_lint_clean():
    r = subprocess.run(["mandoc", "-T", "lint", "-W", "warning"] + PAGES,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", \
        r.stdout + r.stderr


def test_pages_render():
    for p in PAGES:
        r = subprocess.run(["mandoc", "-T", "utf8", "-O", "width=78", p], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out = re.sub(".\x08", "", r.stdout)  # no overstrike
        assert "EXAMPLES" in out and "SEE ALSO" in out


def test_manual_sections():
    eight = read("doc", "ddup-check.8")
    for sh in ("SYNOPSIS", "DESCRIPTION", "FAILOVER RULES", "STATE FILE",
               "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        assert "\n.Sh %s\n" % sh in eight, sh
    five = read("doc", "ddup.ini.5")
    for sh in ("TOP-LEVEL KEYS", "PROVIDERS", "DOMAINS", "ENDPOINTS",
               "NOTIFICATIONS", "POLICIES", "FILES", "EXAMPLES", "SEE ALSO"):
        assert "\n.Sh %s\n" % sh in five, sh


def test_state_file_tables_and_views_documented(tmp_path):
    """Every table and view of a state file the binary creates is named in
    STATE FILE, each view with a query."""
    cfg = tmp_path / "ddup.ini"
    cfg.write_text("state = %s\n[provider p]\ntype = exec\ncommand = /bin/true\n"
                   "[domain app.example.com]\nprovider = p\n[endpoint a]\n"
                   "url = http://127.0.0.1:9/\nip = 127.0.0.1\n"
                   % (tmp_path / "state.db"))
    r = subprocess.run([DDUP, "-c", str(cfg), "--failback", "app.example.com"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    db = sqlite3.connect("file:%s?mode=ro" % (tmp_path / "state.db"), uri=True)
    rows = db.execute("SELECT type, name FROM sqlite_master WHERE type IN "
                      "('table', 'view') AND name NOT LIKE 'sqlite_%'").fetchall()
    db.close()
    section = read("doc", "ddup-check.8").split("\n.Sh STATE FILE\n", 1)[1] \
        .split("\n.Sh ", 1)[0]
    assert len(rows) >= 10
    for kind, name in rows:
        if kind == "table":
            assert re.search(r"^\.Cm %s\b" % name, section, re.M), name
        else:
            assert re.search(r"FROM %s\b" % name, section), name


def test_readme_points_at_the_pages():
    readme = read("README.md")
    assert "doc/ddup-check.8" in readme and "doc/ddup.ini.5" in readme
    assert "make demo" in readme and "make check" in readme


def key_items(page):
    """(line number, key, text) of every ".It Cm KEY" of a page, the text
    running to the next item, list end or section."""
    lines = page.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"^\.It Cm (\w+)", line)
        if not m:
            continue
        body = [line]
        for nxt in lines[i + 1:]:
            if nxt.startswith((".It ", ".El", ".Sh", ".Ss")):
                break
            body.append(nxt)
        out.append((i + 1, m.group(1), "\n".join(body)))
    return out


def test_every_key_states_its_default():
    """ddup.ini(5) gives each key's default, or says it is required (the
    `type` of a provider's list is the list's own name)."""
    items = key_items(read("doc", "ddup.ini.5"))
    assert len(items) > 60
    silent = ["line %d: %s" % (n, key) for n, key, text in items
              if key != "type"
              and not re.search(r"\b([Dd]efault|[Rr]equired)\b", text)]
    assert silent == [], "ddup.ini.5: no default and not required: %s" % silent


def test_example_passes_check_config():
    """ddup.ini.example, installed by make install and the package, is a
    valid configuration once the secrets it reads with !env are set (the
    package test runs it too, installed; a !file secret would need a file
    in /etc)."""
    env = dict(os.environ, DDUP_TSIG_SECRET="c2VjcmV0", PDNS_API_KEY="k",
               CLOUDFLARE_API_TOKEN="t", DDUP_HOOK_AUTH="Bearer x")
    r = subprocess.run([DDUP, "-n", "-c", os.path.join(ROOT, "ddup.ini.example")],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stderr
    assert "configuration OK" in r.stdout


def readme_sql():
    """The README's SQL block for the database role of several checkers."""
    blocks = re.findall(r"```sql\n(.*?)```", read("README.md"), re.S)
    assert len(blocks) == 1, "README.md: expected one sql block"
    return blocks[0]


def test_readme_role_privileges_block(ddup, bind_server, http_server, pg_server):
    """The README's SQL block, run as it stands on a real PostgreSQL (its names
    changed, so as not to meet the fixture's database and role ddup): a run of
    the checkers' role cannot make the schema, the owner's run does, and then
    three checkers with their rows only run rounds, change DNS and answer
    --status and the requests."""
    from test_failover import NAME, write_config
    sql = re.sub(r"\bddup\b", "docddup", readme_sql().replace("ddup_owner", "docowner"))
    pw = dict(re.findall(r"CREATE ROLE (\w+) LOGIN PASSWORD '([^']*)'", sql))
    assert set(pw) == {"docowner", "docddup"}, pw
    p = http_server()
    write_config(ddup, bind_server, [("a", p, "192.0.2.1", 0)])
    body = ddup.without_state().replace("interval = 30s\n", "")

    def config(role, checker):
        uri = f"postgresql://{role}:{pw[role]}@127.0.0.1:{pg_server.port}/docddup"
        ddup.write(f"state = {uri}\ninterval = 1s\ntimeout = 800ms\n"
                   f"checkers = a, b, c\nchecker = {checker}\n" + body, state=False)

    def psql_script(text):
        return subprocess.run([os.path.join(pg_server.bin, "psql"), "-X", "-q",
                               "-v", "ON_ERROR_STOP=1", "-h", pg_server.sock,
                               "-p", str(pg_server.port), "-U", "postgres", "-d", "postgres"],
                              input=text, capture_output=True, text=True, timeout=60)

    try:
        r = psql_script(sql)
        assert r.returncode == 0, r.stderr
        config("docddup", "a")
        r = ddup.run()
        assert r.rc == 4, r
        assert "cannot upgrade the schema: ERROR:  permission denied for schema docddup" \
            in r.err, r
        config("docowner", "a")
        r = ddup.run()
        assert r.rc == 0, r
        # The database's real clock: slots of a second, a few of them.
        for _ in range(10):
            time.sleep(1.05 - time.time() % 1)
            for c in "abc":
                config("docddup", c)
                r = ddup.run()
                assert r.rc == 0, r
            if bind_server.query(NAME) == ["192.0.2.1"]:
                break
        assert bind_server.query(NAME) == ["192.0.2.1"]
        st = ddup.status()
        assert st["fleet"]["outOfStep"] == [], st["fleet"]
        for args in (["--drain", f"{NAME}/a"], ["--undrain", f"{NAME}/a"],
                     ["--failback", NAME]):
            r = ddup.run(*args)
            assert r.rc == 0, r
        owners = pg_server.psql("SELECT DISTINCT schemaname, tableowner FROM pg_tables "
                                "WHERE tablename LIKE 'ddup%'", db="docddup")
        assert owners == [["docddup", "docowner"]], owners
    finally:
        psql_script("DROP DATABASE IF EXISTS docddup WITH (FORCE);\n"
                    "DROP ROLE IF EXISTS docowner, docddup;\n")
