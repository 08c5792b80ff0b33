"""Server certificates of the test CA (httpfix.py's `certs`) by how long they
are valid, for certWarn (ddup.ini(5)): `short_certs` adds "5days" and
"1year" to the CA's pairs, and `not_after(path)` is a certificate's notAfter
as `openssl x509 -enddate` prints it, in Unix seconds.
"""

import calendar
import subprocess
import time

import pytest

from httpfix import _leaf

LOCAL = "DNS:localhost, IP:127.0.0.1, IP:::1"


@pytest.fixture(scope="session")
def short_certs(certs):
    for name, days in (("5days", 5), ("1year", 365)):
        if name not in certs.pairs:
            certs.pairs[name] = _leaf(certs.dir, name, LOCAL, days=days)
    return certs


def not_after(path):
    """notAfter=Jan  2 03:04:05 2027 GMT, as Unix seconds."""
    p = subprocess.run(["openssl", "x509", "-enddate", "-noout", "-in", path],
                       capture_output=True, text=True, check=True)
    text = p.stdout.strip().split("=", 1)[1]
    return calendar.timegm(time.strptime(text, "%b %d %H:%M:%S %Y %Z"))


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
