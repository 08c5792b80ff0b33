"""The Debian package (make deb): lintian, its contents, a scratch
install with dpkg -x where ddup-check -n and --version run, and, as root on
a machine without ddup installed (the CI machine), a real dpkg -i and
dpkg --purge: the ddup user, /var/lib/ddup owned by it, the timer not
enabled, everything gone again after the purge."""

import glob
import grp
import os
import pwd
import re
import shutil
import stat
import subprocess

import pytest

from conftest import ROOT, read, make_vars

# The example's secrets (ddup.ini.example reads them with !env).
EXAMPLE_ENV = {"DDUP_TSIG_SECRET": "c2VjcmV0", "PDNS_API_KEY": "k",
               "CLOUDFLARE_API_TOKEN": "t", "DDUP_HOOK_AUTH": "Bearer x"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          **kw)


def version():
    return re.search(r'#define DDUP_VERSION\s+"([^"]+)"',
                     read("ddup-check.c")).group(1)


def test_build_depends_match_the_makefile():
    control = read("debian", "control")
    field = re.search(r"^Build-Depends:(.*?)^\S", control, re.S | re.M).group(1)
    deps = {re.sub(r"\s*\(.*\)", "", d).strip()
            for d in re.sub(r"^#.*$", "", field, flags=re.M).split(",")}
    deps.discard("")
    build_debs = set(make_vars()["BUILD_DEBS"].split())
    # build-essential is always there for a package build (lintian refuses
    # it in Build-Depends); clang is the project's second compiler.
    assert deps - {"debhelper-compat"} == build_debs - {"build-essential", "clang"}


def test_version_matches_the_changelog():
    first = read("debian", "changelog").splitlines()[0]
    assert first.startswith("ddup (%s) " % version()), first


def test_lintian_clean(debdir):
    changes = glob.glob(os.path.join(debdir, "*.changes"))
    assert len(changes) == 1
    r = run(["lintian", "--fail-on", "error,warning", changes[0]])
    tags = [l for l in r.stdout.splitlines() if re.match(r"^[EW]: ", l)]
    assert r.returncode == 0 and tags == [], r.stdout + r.stderr


def contents(deb):
    r = run(["dpkg-deb", "-c", deb])
    assert r.returncode == 0, r.stderr
    return {l.split()[-1].lstrip(".") for l in r.stdout.splitlines()}


def test_contents(deb):
    files = contents(deb)
    for f in ("/usr/bin/ddup-check", "/usr/share/man/man8/ddup-check.8.gz",
              "/usr/share/man/man5/ddup.ini.5.gz",
              "/usr/share/doc/ddup/examples/ddup.ini.example",
              "/usr/share/doc/ddup/copyright",
              "/lib/systemd/system/ddup-check.service",
              "/lib/systemd/system/ddup-check.timer",
              "/usr/lib/sysusers.d/ddup.conf", "/usr/lib/tmpfiles.d/ddup.conf",
              "/usr/share/bash-completion/completions/ddup-check", "/etc/ddup/"):
        assert f in files, f
    # No configuration: the service's condition keeps it idle until the
    # operator writes one.
    assert "/etc/ddup/ddup.ini" not in files


def test_maintainer_scripts_do_not_enable_the_timer(deb, tmp_path):
    assert run(["dpkg-deb", "-e", deb, str(tmp_path / "ctl")]).returncode == 0
    postinst = (tmp_path / "ctl" / "postinst").read_text()
    assert "systemd-sysusers" in postinst and "systemd-tmpfiles" in postinst
    assert postinst.index("systemd-sysusers") < postinst.index("systemd-tmpfiles")
    # Enabled again only if it was enabled before (an upgrade), never started.
    assert "was-enabled 'ddup-check.timer'" in postinst
    assert "deb-systemd-invoke start" not in postinst
    assert "rm -rf /var/lib/ddup" in (tmp_path / "ctl" / "postrm").read_text()


@pytest.fixture
def scratch(deb, tmp_path):
    root = tmp_path / "root"
    r = run(["dpkg", "-x", deb, str(root)])
    assert r.returncode == 0, r.stderr
    yield root
    shutil.rmtree(root)
    assert not root.exists()


def test_scratch_install_runs(scratch):
    bin_ = str(scratch / "usr/bin/ddup-check")
    r = run([bin_, "--version"])
    assert r.returncode == 0 and r.stdout == "ddup-check %s\n" % version()
    example = scratch / "usr/share/doc/ddup/examples/ddup.ini.example"
    env = dict(os.environ, **EXAMPLE_ENV)
    r = run([bin_, "-n", "-c", str(example)], env=env)
    assert r.returncode == 0, r.stderr
    assert "configuration OK" in r.stdout
    # Without the secrets it names, the example is refused (exit 2).
    r = run([bin_, "-n", "-c", str(example)],
            env={k: v for k, v in os.environ.items() if k not in EXAMPLE_ENV})
    assert r.returncode == 2
    unit = (scratch / "lib/systemd/system/ddup-check.service").read_text()
    assert "ExecStart=/usr/bin/ddup-check -c /etc/ddup/ddup.ini\n" in unit
    assert "ConditionPathExists=/etc/ddup/ddup.ini\n" in unit
    assert "User=ddup\n" in unit
    for page, head in (("man8/ddup-check.8.gz", "EXIT STATUS"),
                       ("man5/ddup.ini.5.gz", "TOP-LEVEL KEYS")):
        man = run(["mandoc", "-T", "utf8", str(scratch / "usr/share/man" / page)])
        assert man.returncode == 0, man.stderr
        assert head in re.sub(".\x08", "", man.stdout), page


def test_units_verify_and_exposure(scratch, tmp_path):
    """systemd accepts every line of the installed units, and the
    service's exposure is the README's figure."""
    units = tmp_path / "units"
    units.mkdir()
    for u in ("ddup-check.service", "ddup-check.timer"):
        text = (scratch / "lib/systemd/system" / u).read_text()
        # The binary where dpkg -x put it, so that verify finds it.
        (units / u).write_text(text.replace(
            "ExecStart=/usr/bin/", "ExecStart=%s/usr/bin/" % scratch))
    r = run(["systemd-analyze", "verify", "--man=no",
             str(units / "ddup-check.service"), str(units / "ddup-check.timer")])
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.stdout + r.stderr
    r = run(["systemd-analyze", "security", "--offline=yes", "--no-pager",
             str(units / "ddup-check.service")])
    got = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
    assert got, r.stdout + r.stderr
    readme = re.search(r"rates its\s+exposure \*\*([0-9.]+) ", read("README.md"))
    assert readme and got.group(1) == readme.group(1), (got.group(1), readme)


def installed(pkg):
    r = run(["dpkg-query", "-W", "-f=${Status}", pkg])
    return r.returncode == 0 and "installed" in r.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="a real install needs root")
def test_install_and_purge(deb, tmp_path):
    if installed("ddup") or os.path.exists("/usr/bin/ddup-check"):
        pytest.skip("ddup is installed on this machine: not touched")
    had_user = True
    try:
        pwd.getpwnam("ddup")
    except KeyError:
        had_user = False
    wants = "/etc/systemd/system/timers.target.wants/ddup-check.timer"
    try:
        r = run(["dpkg", "-i", deb])
        assert r.returncode == 0, r.stdout + r.stderr
        user = pwd.getpwnam("ddup")
        assert user.pw_dir == "/var/lib/ddup"
        assert grp.getgrgid(user.pw_gid).gr_name == "ddup"
        st = os.stat("/var/lib/ddup")
        assert st.st_uid == user.pw_uid and stat.S_IMODE(st.st_mode) == 0o700
        assert not os.path.lexists(wants)
        env = dict(os.environ, **EXAMPLE_ENV)
        r = run(["runuser", "-u", "ddup", "--", "/usr/bin/ddup-check", "-n",
                 "-c", "/usr/share/doc/ddup/examples/ddup.ini.example"],
                env=env, cwd="/")
        assert r.returncode == 0, r.stderr
        assert run(["/usr/bin/ddup-check", "--version"]).returncode == 0
    finally:
        r = run(["dpkg", "--purge", "ddup"])
        if not had_user:
            run(["userdel", "ddup"])
            run(["groupdel", "ddup"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert not installed("ddup")
    for p in ("/usr/bin/ddup-check", "/var/lib/ddup",
              "/lib/systemd/system/ddup-check.timer", wants):
        assert not os.path.lexists(p), p
