"""The host <-> firmware mailbox: a few CSRs both sides read and write.

The host (over Etherbone) writes the arguments, then ``command`` = (sequence << 8) | code; the
firmware (``soc/firmware``) sees a new sequence number, does the command, writes ``status`` and the
values, and last ``reply`` = the sequence number, which the host polls.  CSRs, not RAM: neither
side's cache stands between them.

Members (CSRs)
--------------
command, arg0 .. arg3 : written by the host
reply, status, value0 .. value3 : written by the firmware

Latency
-------
Wires and registers only.
"""

from __future__ import annotations

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStorage

__all__ = ["Mailbox", "ARGS", "VALUES"]

ARGS, VALUES = 4, 4


class Mailbox(LiteXModule):
    """CSRs of the host <-> firmware mailbox (module docstring)."""

    def __init__(self):
        self._command = CSRStorage(32, name="command", description="(sequence << 8) | command code, written last")
        for k in range(ARGS):
            setattr(self, f"_arg{k}", CSRStorage(32, name=f"arg{k}"))
        self._reply = CSRStorage(32, name="reply", description="the sequence number of the last command done")
        self._status = CSRStorage(32, name="status", description="0: done; else the error code (docs/soc.md)")
        for k in range(VALUES):
            setattr(self, f"_value{k}", CSRStorage(32, name=f"value{k}"))
