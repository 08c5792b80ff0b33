"""Shared by the package tests: the source tree, the code's option table,
and the Debian package, built once per session (make check-package builds
it and passes its folder in $DDUP_DEB_DIR)."""

import glob
import os
import re
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def code_options():
    """{long name: short letter or None}, from ddup-check.c's longopts[]
    and getopt string."""
    src = read("ddup-check.c")
    table = re.search(r"longopts\[\] = \{(.*?)\n\t\};", src, re.S).group(1)
    letters = set(re.search(r'getopt_long\(argc, argv, "([^"]*)"', src)
                  .group(1).replace(":", ""))
    return {n: (v if v in letters else None) for n, v in re.findall(
        r'\{\s*"([a-z-]+)",\s*\w+_argument,\s*NULL,\s*\'(.)\'', table)}


def make_vars():
    """The Makefile's variables as make sees them."""
    out = subprocess.run(["make", "-C", ROOT, "-pn", "-f", "Makefile",
                          "--no-print-directory", "all"],
                         capture_output=True, text=True, timeout=120).stdout
    return dict(re.findall(r"^(\w+) :?= (.*)$", out, re.M))


@pytest.fixture(scope="session")
def debdir():
    d = os.environ.get("DDUP_DEB_DIR")
    if not d:
        subprocess.run(["make", "-C", ROOT, "deb"], check=True, timeout=1800)
        d = os.path.join(ROOT, "build", "deb")
    debs = glob.glob(os.path.join(d, "ddup_*.deb"))
    assert len(debs) == 1, debs
    return d


@pytest.fixture(scope="session")
def deb(debdir):
    return glob.glob(os.path.join(debdir, "ddup_*.deb"))[0]
