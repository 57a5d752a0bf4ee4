"""A Linux network namespace for one simulated SoC: its TAP device, and the host's sockets, live
inside and vanish with it.

LiteX's Ethernet simulator module opens a TAP device (``tap0``) and gives it the host's address;
that needs CAP_NET_ADMIN, and LiteX's own script gets it through ``sudo``, which these machines do not
have.  As root, :class:`NetworkNamespace` creates a namespace, runs the simulator inside it
(``ip netns exec``) and lets the calling thread enter it (:meth:`NetworkNamespace.entered`, the
``setns`` system call) to open sockets there; a socket stays in the namespace it was opened in.
Several simulations therefore run at once without address or device clashes, and nothing is left
behind on the machine when the namespace is deleted.

Members
-------
name : str
"""

from __future__ import annotations

import ctypes
import itertools
import os
import subprocess
import threading
from contextlib import contextmanager

__all__ = ["NetworkNamespace", "namespace_support"]

_CLONE_NEWNET = 0x40000000
_counter = itertools.count()


def namespace_support() -> str | None:
    """None when this process can make network namespaces with TAP devices; else why not."""
    if os.geteuid() != 0:
        return "the SoC simulation's Ethernet needs root (a network namespace with a TAP device)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing (no TAP devices)"
    if subprocess.run(["ip", "-V"], capture_output=True).returncode != 0:
        return "the `ip` command (iproute2) is missing"
    return None


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class NetworkNamespace:
    """``with NetworkNamespace() as ns:`` a fresh namespace with its loopback up; deleted on exit."""

    def __init__(self, prefix: str = "hhesoc"):
        self.name = f"{prefix}{os.getpid()}x{next(_counter)}"

    def __enter__(self):
        reason = namespace_support()
        if reason is not None:
            raise OSError(reason)
        _ip("netns", "add", self.name)
        _ip("-n", self.name, "link", "set", "lo", "up")
        # no IPv6 on the TAP: its neighbour and router solicitations would fill the CPU MAC's
        # receive slots (LiteEth hands every frame not for the hardware stack to the CPU)
        subprocess.run(self.command(["sh", "-c", "for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 "
                                     "/proc/sys/net/ipv6/conf/default/disable_ipv6; do echo 1 > $f; done"]),
                       capture_output=True)
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)

    def command(self, argv) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *map(str, argv)]

    def has_address(self, device: str, address: str) -> bool:
        proc = subprocess.run(["ip", "-n", self.name, "-4", "addr", "show", "dev", device],
                              capture_output=True, text=True)
        return proc.returncode == 0 and f"inet {address}/" in proc.stdout

    @contextmanager
    def entered(self):
        """The calling thread inside the namespace (sockets opened now belong to it)."""
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
        target = os.open(f"/var/run/netns/{self.name}", os.O_RDONLY)
        try:
            if libc.setns(target, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {self.name}")
            yield self
        finally:
            libc.setns(own, _CLONE_NEWNET)
            os.close(own)
            os.close(target)
