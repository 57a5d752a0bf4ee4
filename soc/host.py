"""The host's side of the SoC over Etherbone: memory images in, programs run, results out.

:class:`SocHost` speaks to any SoC built by :mod:`hhe_gen.soc` through LiteX's Etherbone client
(``litex.tools.remote.comm_udp.CommUDP``): the simulated one in its network namespace
(:mod:`.sim_run`) or a board.  What it needs of the SoC is in the build's ``soc.json``
(:meth:`.integration.HheSoC.info`: the main RAM, the key vault and its windows) and ``csr.csv``.

* :meth:`write_memory` writes an engine memory image ({word address: 64-bit value}): words in a
  secret window go to the key vault (write-only on the bus), the others to the main RAM at
  ``main_ram + 8 * address``;
* :meth:`run` pushes a program's words into the instruction FIFO as it has room, waits until the
  accelerator is idle (or stopped on an error) and returns a :class:`SocRun` (status, error cause
  and position, busy cycles, per-unit counters);
* :meth:`read_memory` reads words back from the main RAM (a vault address reads as 0: that is the
  point of the vault);
* :meth:`command` gives the firmware a mailbox command (:data:`FIRMWARE_COMMANDS`, docs/soc.md) and
  waits for its reply; :meth:`firmware_run` leaves a program in the SoC's program area and has the
  firmware run it (RUN).

:meth:`run` drives the accelerator's CSRs from the host itself, with no firmware.

Etherbone writes are not acknowledged: every :data:`SYNC_RECORDS` records a read waits for the
ones before it, so a long upload never outruns the SoC.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

__all__ = ["SocHost", "SocRun", "etherbone_client", "firmware_run_with_packets", "FirmwareReply", "FIRMWARE_COMMANDS",
           "FIRMWARE_STATUS", "MAX_RECORD", "SYNC_RECORDS"]

MAX_RECORD = 255          # 32-bit words per Etherbone record (8-bit count), at most the SoC's etherbone_record
SYNC_RECORDS = 4
ABORT, CLEAR, HOLD = 1, 2, 4   # the accel_control fields (:mod:`.accelerator`)


def firmware_run_with_packets(host, words, *, receiving, send, messages: int = 0, udp_in=(), reassembler=None,
                              timeout: float = 300.0):
    """``words`` run by the firmware (RUN) while the host listens for ``messages`` messages
    (``receiving``: a context manager like :meth:`.sim_run.SimulatedSoC.receiving`) and sends the
    ``udp_in`` payloads (``send(payloads)``) once the program is given, for its ``recv``; returns
    (the firmware's reply, the messages received)."""
    feed = (lambda: send(list(udp_in))) if udp_in else None
    if not messages:
        return host.firmware_run(words, while_waiting=feed), []
    with receiving(messages=messages, timeout=timeout, reassembler=reassembler) as rx:
        reply = host.firmware_run(words, while_waiting=feed)
    return reply, rx.messages


def etherbone_client(server: str, port: int, csr_csv, *, timeout: float = 20.0):
    """LiteX's Etherbone client (``CommUDP``) whose unanswered read raises a TimeoutError that names
    the SoC and the address (``CommUDP`` raises a bare ``socket.timeout``).  ``timeout``: seconds
    per try (10 tries); a simulated SoC runs slowly, so the default is generous."""
    import socket

    from litex.tools.remote.comm_udp import CommUDP

    class EtherboneClient(CommUDP):
        def read(self, addr, length=None, burst="incr"):
            try:
                return super().read(addr, length, burst)
            except socket.timeout:
                raise TimeoutError(f"no Etherbone answer from {server}:{port} reading {addr:#x}") from None

    return EtherboneClient(server=server, port=port, csr_csv=str(csr_csv), timeout=timeout)


@dataclass
class SocRun:
    """One program run on the SoC.

    Members
    -------
    error_cause : int           0: none (:class:`hhe_gen.cores.engine.isa.ErrorCause`)
    error_position : int
    notify_code : int
    busy_cycles : int           cycles from the first word taken to idle (the accelerator's clock)
    units : dict                unit -> {"tasks", "cycles"}
    packets_sent, packets_received, rx_dropped : int
    wall : float                seconds on the host
    """
    error_cause: int
    error_position: int
    notify_code: int
    busy_cycles: int
    units: dict = field(default_factory=dict)
    packets_sent: int = 0
    packets_received: int = 0
    rx_dropped: int = 0
    wall: float = 0.0


FIRMWARE_COMMANDS = {"ping": 1, "run": 2, "send": 3, "keycheck": 4}
"""The firmware's mailbox commands (soc/firmware/main.c)."""
FIRMWARE_STATUS = {0: "ok", 0x201: "unknown command", 0x202: "bad argument", 0x203: "time-out (aborted)",
                   0x204: "key upload truncated", 0x205: "no route to the host"}
"""The firmware's status codes; 0x100 | cause: the accelerator stopped on error ``cause``."""


@dataclass
class FirmwareReply:
    """The firmware's answer to a mailbox command: ``status`` (:data:`FIRMWARE_STATUS`), ``values``
    (four 32-bit words, per command) and the host's wall time."""
    status: int
    values: list
    wall: float

    @property
    def meaning(self) -> str:
        if 0x100 <= self.status < 0x200:
            return f"accelerator error cause {self.status & 0xFF}"
        return FIRMWARE_STATUS.get(self.status, f"status {self.status:#x}")


class SocHost:
    """Etherbone access to an hhe-gen SoC (module docstring).

    Parameters
    ----------
    comm : an opened ``CommUDP`` (or anything with ``read(addr, length)``, ``write(addr, datas)``
           and ``regs``)
    info : dict       the build's ``soc.json``
    """

    def __init__(self, comm, info: dict):
        self.comm, self.info = comm, info
        self.main_ram = info["main_ram"]
        self.windows = [(w["first"], w["words"], w["vault_address"]) for w in info["windows"]]
        self.regs = comm.regs
        self.record = min(MAX_RECORD, info.get("etherbone_record", 16))
        self.vault_words_sent = 0         # 32-bit words written into the key vault (KEYCHECK)

    # memory -------------------------------------------------------------------------------------
    def bus_address(self, word: int) -> int:
        """The bus byte address of engine word ``word`` (the vault's for a secret one)."""
        for first, words, vault in self.windows:
            if first <= word < first + words:
                return vault + 8 * (word - first)
        return self.main_ram + 8 * word

    def write_memory(self, image: dict, progress=None) -> int:
        """Write ``image`` ({engine word address: 64-bit value}); returns the 32-bit words sent.
        ``progress(sent, total)`` is called after every synchronising read."""
        runs, sent, records = [], 0, 0
        for word in sorted(image):
            value = image[word]
            if not 0 <= value < 1 << 64:
                raise ParameterError(f"memory word {word}", value, "0 .. 2^64 - 1")
            address = self.bus_address(word)
            if address != self.main_ram + 8 * word:
                self.vault_words_sent += 2
            if runs and runs[-1][0] + 4 * len(runs[-1][1]) == address:
                runs[-1][1].extend((value & 0xFFFFFFFF, value >> 32))
            else:
                runs.append([address, [value & 0xFFFFFFFF, value >> 32]])
        total = sum(len(d) for _, d in runs)
        for address, datas in runs:
            for k in range(0, len(datas), self.record):
                chunk = datas[k:k + self.record]
                self.comm.write(address + 4 * k, chunk)
                sent += len(chunk)
                records += 1
                if records % SYNC_RECORDS == 0:
                    self.regs.accel_cycle.read()
                    if progress is not None:
                        progress(sent, total)
        self.regs.accel_cycle.read()
        return sent

    def read_memory(self, first: int, count: int) -> list[int]:
        """Engine words ``first`` .. ``first + count - 1`` read over the bus."""
        out = []
        step = self.record - self.record % 2
        for k in range(0, 2 * count, step):
            n = min(step, 2 * count - k)
            datas = self.comm.read(self.main_ram + 8 * first + 4 * k, length=n)
            out.extend(datas if isinstance(datas, list) else [datas])
        return [out[2 * i] | out[2 * i + 1] << 32 for i in range(count)]

    # programs -----------------------------------------------------------------------------------
    def abort(self) -> None:
        """The engine's soft reset (clears its error, its instruction FIFO and the receive FIFO)."""
        self.regs.accel_control.write(ABORT)

    def run(self, words, *, timeout: float = 600.0, poll: float = 0.02) -> SocRun:
        """Run the program ``words`` (64-bit instruction words) and wait for the accelerator to be
        idle: :meth:`start` then :meth:`wait`."""
        t0 = time.monotonic()
        self.start(words, timeout=timeout)
        return self.wait(timeout=timeout - (time.monotonic() - t0), poll=poll, t0=t0)

    def start(self, words, *, timeout: float = 600.0) -> None:
        """Load the program into the instruction FIFO with ``hold`` set, then release it, so
        ``busy_cycles`` counts the accelerator alone (a program longer than the FIFO is fed as it
        drains); the counters are cleared first.  An error the last program stopped on is cleared
        first, as the firmware's RUN does (an abort: the engine stays stopped until one), so
        the error position counts from this program's first word."""
        regs, t0 = self.regs, time.monotonic()
        depth = self.info.get("instr_depth", 64)
        if regs.accel_status.read() & 2:
            self.abort()
            while regs.accel_status.read() & 3:
                self._check_timeout(t0, timeout)
        regs.accel_control.write(CLEAR | HOLD)
        pending = list(words)
        for word in pending[:depth]:
            regs.accel_instr.write(word)
        del pending[:depth]
        regs.accel_control.write(0)
        while pending:
            status = regs.accel_instr_status.read()
            if status >> 17 & 1:
                raise RuntimeError("the instruction FIFO overflowed: a word was lost")
            room = 0 if status >> 16 & 1 else depth - (status & 0xFFFF)
            for _ in range(min(room, len(pending))):
                regs.accel_instr.write(pending.pop(0))
            self._check_timeout(t0, timeout)

    def wait(self, *, timeout: float = 600.0, poll: float = 0.02, t0: float | None = None) -> SocRun:
        """Wait until the accelerator is idle or stopped on an error (returned with its cause, not
        raised); its status and counters."""
        regs = self.regs
        t0 = time.monotonic() if t0 is None else t0
        while True:
            status = regs.accel_status.read()
            if not status & 1 or status & 2:
                break
            self._check_timeout(t0, timeout)
            time.sleep(poll)
        units = {}
        for unit in self.info["manifest"]["interface"].get("completed_lanes", []):
            units[unit] = {"tasks": getattr(regs, f"accel_{unit}_tasks").read(),
                           "cycles": getattr(regs, f"accel_{unit}_cycles").read()}
        return SocRun(error_cause=status >> 3 & 0xF, error_position=regs.accel_error_position.read(),
                      notify_code=regs.accel_notify_code.read(), busy_cycles=regs.accel_busy_cycles.read(),
                      units=units, packets_sent=regs.accel_packets_sent.read(),
                      packets_received=regs.accel_packets_received.read(), rx_dropped=regs.accel_rx_dropped.read(),
                      wall=time.monotonic() - t0)

    # the firmware's mailbox ---------------------------------------------------------------------
    def command(self, code: int, *args: int, timeout: float = 600.0, poll: float = 0.01,
                while_waiting=None) -> FirmwareReply:
        """Send mailbox command ``code`` with up to four 32-bit ``args`` to the firmware and wait
        for its reply (:data:`FIRMWARE_COMMANDS`, :data:`FIRMWARE_STATUS`); ``while_waiting()`` is
        called once the command is given (to send the packets a ``recv`` waits for)."""
        regs = self.regs
        if len(args) > 4 or not all(0 <= a < 1 << 32 for a in args):
            raise ParameterError("mailbox arguments", args, "at most four 32-bit values")
        if not 0 <= code < 256:
            raise ParameterError("mailbox command", code, "0 .. 255")
        for k, a in enumerate(list(args) + [0] * (4 - len(args))):
            getattr(regs, f"mailbox_arg{k}").write(a)
        self._sequence = (regs.mailbox_reply.read() + 1) & 0xFFFFFF
        t0 = time.monotonic()
        regs.mailbox_command.write(self._sequence << 8 | code)
        if while_waiting is not None:
            while_waiting()
        while regs.mailbox_reply.read() != self._sequence:
            self._check_timeout(t0, timeout)
            time.sleep(poll)
        return FirmwareReply(regs.mailbox_status.read(), [getattr(regs, f"mailbox_value{k}").read() for k in range(4)],
                             time.monotonic() - t0)

    def firmware_run(self, words, *, timeout_cycles: int = 0, while_waiting=None) -> FirmwareReply:
        """The program ``words`` written into the program area and run by the firmware (RUN)."""
        area, room = self.info["program_area"], self.info["program_words"]
        words = list(words)
        if len(words) > room:
            raise ParameterError("program", len(words), f"at most {room} words (the SoC's program area)")
        self.write_memory({area + k: w for k, w in enumerate(words)})
        return self.command(FIRMWARE_COMMANDS["run"], area, len(words), timeout_cycles, while_waiting=while_waiting)

    @staticmethod
    def _check_timeout(t0: float, timeout: float) -> None:
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"the SoC did not finish (or answer) within {timeout:.0f} s")
