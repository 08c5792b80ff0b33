"""make install and make uninstall into a DESTDIR: every file where
PREFIX and SYSCONFDIR put it, the units naming the installed binary and
configuration, an operator's configuration never overwritten, and
uninstall leaving nothing of ours but an edited configuration."""

import grp
import os
import pwd
import shutil
import stat
import subprocess

import pytest

from conftest import ROOT, read


def make(*args):
    r = subprocess.run(["make", "-C", ROOT, "--no-print-directory"] + list(args),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def files(top):
    out = set()
    for d, _, fs in os.walk(top):
        out |= {os.path.relpath(os.path.join(d, f), top) for f in fs}
    return out


def test_install_and_uninstall(tmp_path):
    dest = tmp_path / "dest"
    make("install", "DESTDIR=%s" % dest, "PREFIX=/opt/ddup",
         "SYSCONFDIR=/opt/etc")
    assert files(dest) == {
        "opt/ddup/bin/ddup-check",
        "opt/ddup/share/man/man8/ddup-check.8",
        "opt/ddup/share/man/man5/ddup.ini.5",
        "opt/ddup/share/doc/ddup/examples/ddup.ini.example",
        "opt/ddup/share/doc/ddup/examples/cron.example",
        "opt/ddup/lib/systemd/system/ddup-check.service",
        "opt/ddup/lib/systemd/system/ddup-check.timer",
        "opt/ddup/share/bash-completion/completions/ddup-check",
        "opt/etc/sysusers.d/ddup.conf", "opt/etc/tmpfiles.d/ddup.conf",
        "opt/etc/ddup/ddup.ini",
    }
    assert os.access(dest / "opt/ddup/bin/ddup-check", os.X_OK)
    assert (dest / "opt/etc/ddup/ddup.ini").read_text() == read("ddup.ini.example")
    assert os.stat(dest / "opt/etc/ddup/ddup.ini").st_mode & 0o777 == 0o640
    unit = (dest / "opt/ddup/lib/systemd/system/ddup-check.service").read_text()
    assert "ExecStart=/opt/ddup/bin/ddup-check -c /opt/etc/ddup/ddup.ini\n" in unit
    assert "ConditionPathExists=/opt/etc/ddup/ddup.ini\n" in unit
    assert "EnvironmentFile=-/opt/etc/ddup/ddup.env\n" in unit
    settings = "".join(l for l in unit.splitlines(True) if not l.startswith("#"))
    assert "/usr/local" not in settings
    assert "/etc/ddup" not in settings.replace("/opt/etc/ddup", "")
    cron = (dest / "opt/ddup/share/doc/ddup/examples/cron.example").read_text()
    assert "/opt/ddup/bin/ddup-check -q -c /opt/etc/ddup/ddup.ini" in cron
    r = subprocess.run([str(dest / "opt/ddup/bin/ddup-check"), "--version"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("ddup-check ")

    # A second install leaves the operator's configuration alone.
    (dest / "opt/etc/ddup/ddup.ini").write_text("; mine\n")
    out = make("install", "DESTDIR=%s" % dest, "PREFIX=/opt/ddup",
               "SYSCONFDIR=/opt/etc")
    assert "left as it is" in out
    assert (dest / "opt/etc/ddup/ddup.ini").read_text() == "; mine\n"

    # Uninstall: the edited configuration stays, nothing else of ours.
    out = make("uninstall", "DESTDIR=%s" % dest, "PREFIX=/opt/ddup",
               "SYSCONFDIR=/opt/etc")
    assert "was edited: kept" in out
    assert files(dest) == {"opt/etc/ddup/ddup.ini"}


def test_unchanged_example_goes_with_uninstall(tmp_path):
    dest = tmp_path / "dest"
    make("install", "DESTDIR=%s" % dest)
    assert "etc/ddup/ddup.ini" in files(dest)
    assert "usr/local/bin/ddup-check" in files(dest)
    unit = (dest / "usr/local/lib/systemd/system/ddup-check.service").read_text()
    assert "ExecStart=/usr/local/bin/ddup-check -c /etc/ddup/ddup.ini\n" in unit
    make("uninstall", "DESTDIR=%s" % dest)
    assert files(dest) == set()
    assert not (dest / "etc/ddup").exists()


def test_install_config_no(tmp_path):
    dest = tmp_path / "dest"
    make("install", "DESTDIR=%s" % dest, "INSTALL_CONFIG=no")
    assert "etc/ddup/ddup.ini" not in files(dest)
    assert (dest / "etc/ddup").is_dir()


def test_install_without_destdir_creates_the_user(tmp_path):
    """Without DESTDIR (as root), install creates the ddup user and its
    folder and gives the configuration to its group; PREFIX and SYSCONFDIR
    in a temporary folder keep the rest out of the system.  Only on a
    machine without a ddup user: what it creates is removed after."""
    if os.geteuid() != 0 or shutil.which("systemd-sysusers") is None:
        pytest.skip("needs root and systemd-sysusers")
    try:
        pwd.getpwnam("ddup")
        pytest.skip("a ddup user exists on this machine: not touched")
    except KeyError:
        pass
    if os.path.lexists("/var/lib/ddup"):
        pytest.skip("/var/lib/ddup exists on this machine: not touched")
    prefix, etc = tmp_path / "prefix", tmp_path / "etc"
    try:
        make("install", "PREFIX=%s" % prefix, "SYSCONFDIR=%s" % etc)
        user = pwd.getpwnam("ddup")
        st = os.stat("/var/lib/ddup")
        assert st.st_uid == user.pw_uid and stat.S_IMODE(st.st_mode) == 0o700
        cfg = os.stat(etc / "ddup/ddup.ini")
        assert grp.getgrgid(cfg.st_gid).gr_name == "ddup"
        assert stat.S_IMODE(cfg.st_mode) == 0o640
        make("uninstall", "PREFIX=%s" % prefix, "SYSCONFDIR=%s" % etc)
        assert not (etc / "ddup/ddup.ini").exists()
        assert not (prefix / "bin/ddup-check").exists()
    finally:
        shutil.rmtree("/var/lib/ddup", ignore_errors=True)
        subprocess.run(["userdel", "ddup"], capture_output=True)
        subprocess.run(["groupdel", "ddup"], capture_output=True)
