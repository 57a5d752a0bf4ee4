"""Run a built SoC in Verilator with Ethernet, without sudo: the simulator in a network namespace of
its own, the host's sockets opened inside it.

    with SimulatedSoC(build) as soc:
        soc.host.write_memory(image)              # Etherbone (hhe_gen.soc.host.SocHost)
        with soc.receiving(messages=1) as rx:     # the host's UDP socket, in the namespace
            run = soc.host.run(program_words)
        messages = rx.messages                    # reassembled wire-format messages
        soc.send(payloads)                        # packets to the accelerator's UDP port

The simulator is LiteX's (``obj_dir/Vsim`` with its ``ethernet`` module: a TAP device ``tap0`` with
the host's address); its console (the BIOS on the UART) is kept in ``console``.  Leaving the block
stops the simulator and deletes the namespace; nothing stays on the machine.
"""

from __future__ import annotations

import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .host import SocHost, etherbone_client
from .netns import NetworkNamespace

__all__ = ["SimulatedSoC"]


class _Receiver:
    """Messages reassembled from the host's UDP port while the block runs."""

    def __init__(self):
        self.messages, self.error = [], None


class SimulatedSoC:
    """A running simulated SoC (module docstring).

    Parameters
    ----------
    build : :class:`.sim_build.SimBuild`
    start_timeout : float     seconds to wait for the TAP device and the first Etherbone answer
    timeout : float           seconds an Etherbone read may wait (per try; the simulation is slow)

    Members
    -------
    host : :class:`.host.SocHost`   (inside the block)
    namespace : :class:`.netns.NetworkNamespace`
    console : str                   the UART's output so far (kept after the block)
    """

    def __init__(self, build, *, start_timeout: float = 120.0, timeout: float = 30.0):
        self.build, self.start_timeout, self.timeout = build, start_timeout, timeout
        self.info = build.info
        self.namespace = NetworkNamespace()
        self._proc = None
        self._log = None
        self._console = ""
        self.host = None

    @property
    def console(self) -> str:
        if self._log is None:
            return self._console
        return Path(self._log.name).read_text(errors="replace")

    def __enter__(self):
        import tempfile

        self.namespace.__enter__()
        try:
            self._log = tempfile.NamedTemporaryFile("w+b", prefix="hhe-soc-console-", delete=False)
            self._proc = subprocess.Popen(self.namespace.command([self.build.binary]), cwd=self.build.gateware,
                                          stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT)
            t0 = time.monotonic()
            while not self.namespace.has_address("tap0", self.info["remote_ip"]):
                self._alive()
                if time.monotonic() - t0 > self.start_timeout:
                    raise TimeoutError("the simulator did not bring up its TAP device")
                time.sleep(0.05)
            comm = etherbone_client(self.info["ip"], self.info["etherbone_port"], self.build.csr_csv,
                                    timeout=self.timeout)
            with self.namespace.entered():
                comm.open(probe=False)
            comm.socket.settimeout(2.0)
            while True:
                self._alive()
                try:
                    comm.probe(self.info["ip"], self.info["etherbone_port"])
                    break
                except Exception:
                    if time.monotonic() - t0 > self.start_timeout:
                        raise TimeoutError("the simulated SoC does not answer Etherbone") from None
            comm.socket.settimeout(self.timeout)
            self.host = SocHost(comm, self.info)
            return self
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def _alive(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            raise RuntimeError(f"the simulator stopped (exit code {self._proc.returncode}):\n{self.console[-2000:]}")

    def __exit__(self, *exc):
        if self.host is not None:
            self.host.comm.close()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self.namespace.__exit__(*exc)
        if self._log is not None:                   # the console stays readable, its file goes
            self._console = self.console
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None

    @contextmanager
    def receiving(self, *, messages: int = 1, timeout: float = 120.0, reassembler=None):
        """The host's UDP receiver on its address and the accelerator's destination port, in the
        namespace, for the length of the block; its ``messages`` after it."""
        from hhe_gen.net.udp import receive

        rx, bound = _Receiver(), threading.Event()

        def listen():
            try:
                with self.namespace.entered():
                    rx.messages = receive(self.info["udp_port"], host=self.info["remote_ip"], messages=messages,
                                          timeout=timeout, reassembler=reassembler, ready=lambda port: bound.set())
            except BaseException as exc:       # reported after the block
                rx.error = exc
                bound.set()

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        bound.wait(10)
        yield rx
        thread.join(timeout + 5)
        if rx.error is not None:
            raise rx.error

    def send(self, payloads, *, gap: float = 0.0) -> int:
        """UDP payloads from the host to the accelerator's port (the way back)."""
        from hhe_gen.net.udp import send
        with self.namespace.entered():
            return send(payloads, self.info["ip"], self.info["udp_port"], gap=gap)
