"""Servers the tests start die with the test process.

Fixtures stop their servers at teardown, but a pytest killed from outside
(a CI timeout, ^C twice, SIGKILL) runs no teardown: its BIND, PowerDNS or
Prism would live on, holding ports and files.  Each server is started with
PR_SET_PDEATHSIG, so the kernel kills it when the process that started it
goes away, however that happens.
"""

import ctypes
import signal

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    """A preexec_fn for subprocess.Popen: SIGKILL when the parent dies."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
