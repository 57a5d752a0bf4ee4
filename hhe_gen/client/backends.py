"""The backends: where an accelerator's programs run, for :class:`hhe_gen.client.Client`, the
``accel run`` command, the demo and the benchmarks alike.

Each backend is built from an :class:`hhe_gen.engine.config.AcceleratorConfig` (the accelerator it
runs), holds that accelerator's memory and runs programs on it with the same four calls:

* ``write(image)``: {engine word address: 64-bit value} into the memory (secret words where the
  backend keeps secrets: the SoC's key vault); the SoC backends return the 32-bit words sent and
  take ``progress(done, total)``;
* ``run(words, messages=0, udp_in=())`` -> :class:`BackendRun`: the program run to its end; the
  ``messages`` it sends are reassembled (wire format); ``udp_in`` are payloads it may receive;
* ``read(first, count)``: words of the memory;
* ``close()``.

=============  ===================================================================================
``model``      :class:`hhe_gen.engine.model.EngineModel`, the ISA-level golden model (no cycles)
``amaranth``   the accelerator's RTL in Amaranth's simulator (:func:`hhe_gen.sim.engine.run_engine`:
               small rings; a fresh engine per program)
``rtl``        the accelerator's RTL in Verilator (:class:`hhe_gen.sim.engine_verilator.VerilatedEngine`,
               built once and cached: any ring); ``verilator`` is the same backend
``soc-sim``    the whole SoC in Verilator with Ethernet (:mod:`hhe_gen.soc.sim_run`): programs run by
               the firmware, ciphertexts over UDP; ``soc=`` a started :class:`SimulatedSoC` to run on
``board``      a board over Etherbone / UDP (``ip=``, ``csr_csv=``, ``info=`` of its build): the same
               calls as ``soc-sim`` on real hardware
=============  ===================================================================================

The RTL backends (``amaranth``, ``rtl``) give the same cycles; every backend's memory and packets
after a program equal the ISA model's (:mod:`hhe_gen.client.compare` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Backend", "BackendRun", "ModelBackend", "AmaranthBackend", "RtlBackend", "SocSimBackend",
           "BoardBackend", "BACKENDS", "backend_for"]


@dataclass
class BackendRun:
    """A program's end: ``error`` (0: none, else the engine's cause or the firmware's status),
    ``cycles`` (None on the model), the reassembled ``messages``; ``position`` the failing
    instruction's index in the program (None: no error, or not known: the SoC backends),
    ``notify`` the notify codes raised, ``packets`` every payload the program sent, in order,
    ``tasks`` the RTL's per-task records (:class:`hhe_gen.sim.engine.EngineRun`'s; empty elsewhere),
    ``record`` the backend's own account of the run (the RTL's :class:`~hhe_gen.sim.engine.EngineRun`:
    packet timing, memory writes; the SoC's :class:`~hhe_gen.soc.host.FirmwareReply`: interrupts;
    None on the model)."""
    error: int
    cycles: int | None
    messages: list = field(default_factory=list)
    meaning: str = "ok"
    position: int | None = None
    notify: tuple = ()
    packets: list = field(default_factory=list)
    tasks: list = field(default_factory=list)
    record: object = None

    def busy_cycles(self) -> dict:
        """Cycles each unit was busy with a task (:func:`hhe_gen.sim.engine.busy_cycles`; RTL runs)."""
        from hhe_gen.sim.engine import busy_cycles
        return busy_cycles(self.tasks)


def _reassembler(config, kinds=None):
    """The receiver of a backend's messages: CKKS ciphertexts (``kinds`` None) checked against the
    accelerator's primes (a residue >= its prime fails the message), or messages of ``kinds``."""
    from hhe_gen.models.wire import Reassembler
    return Reassembler(moduli=list(config.params.moduli)) if kinds is None else Reassembler(kinds=kinds)


def _messages(payloads, count: int, kinds=None, config=None) -> list:
    from hhe_gen.models.wire import Reassembler
    rx = _reassembler(config, kinds) if config is not None else (
        Reassembler() if kinds is None else Reassembler(kinds=kinds))
    out = [m for m in (rx.feed(p) for p in payloads) if m is not None]
    return out[:count] if count else out


class Backend:
    """The calls every backend has (module docstring); ``config`` is the resolved configuration
    of the accelerator it runs; ``sees_packets``: its runs give every payload sent (``packets``)."""
    name = "?"
    sees_packets = False

    def __init__(self, config):
        self.config = config.resolve()

    def write(self, image: dict) -> None:
        raise NotImplementedError

    def run(self, words, *, messages: int = 0, udp_in=(), kinds=None) -> BackendRun:
        raise NotImplementedError

    def read(self, first: int, count: int) -> list[int]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class ModelBackend(Backend):
    """The ISA model."""
    name = "model"
    sees_packets = True

    def __init__(self, config):
        super().__init__(config)
        self.model = self.config.model()

    def write(self, image):
        self.model.memory.update(image)

    def run(self, words, *, messages=0, udp_in=(), kinds=None):
        before, events = len(self.model.packets), len(self.model.events)
        self.model.incoming.extend(udp_in)
        cause = self.model.run(words)
        payloads = [pk.payload for pk in self.model.packets[before:]]
        got = _messages(payloads, messages, kinds, self.config) if messages else []
        position = self.model.error_position if cause else None
        notify = tuple(self.model.events[events:])
        self.model.soft_reset()             # the next program starts afresh, as on the RTL
        return BackendRun(int(cause), None, got, "ok" if not cause else f"engine error cause {int(cause)}",
                          position, notify, payloads)

    def read(self, first, count):
        return [self.model.memory.get(first + k, 0) for k in range(count)]


class _RtlRuns(Backend):
    """What the RTL backends share: a memory of their own (:class:`hhe_gen.sim.memory.MemoryModel`:
    the first beat ``latency`` cycles after a command, then one beat every ``cycles_per_beat``) and
    the engine's run read back."""
    sees_packets = True

    def __init__(self, config, *, latency: int | None = None, cycles_per_beat: int | None = None):
        super().__init__(config)
        self.memory: dict = {}
        self.timing = {k: v for k, v in (("latency", latency), ("cycles_per_beat", cycles_per_beat)) if v is not None}

    def write(self, image):
        self.memory.update(image)

    def _simulate(self, words, memory, udp_in):
        raise NotImplementedError

    def run(self, words, *, messages=0, udp_in=(), kinds=None):
        from hhe_gen.sim.memory import MemoryModel
        run = self._simulate(list(words), MemoryModel(self.memory, **self.timing), list(udp_in))
        self.memory = dict(run.memory.words)
        payloads = [pk.payload for pk in run.packets]
        got = _messages(payloads, messages, kinds, self.config) if messages else []
        cause = int(run.error_cause)
        return BackendRun(cause, run.cycles, got, "ok" if not cause else f"engine error cause {cause}",
                          run.error_position if cause else None, tuple(c for _, c in run.notifies), payloads,
                          list(run.tasks), run)

    def read(self, first, count):
        return [self.memory.get(first + k, 0) for k in range(count)]


class AmaranthBackend(_RtlRuns):
    """The accelerator's RTL in Amaranth's simulator (a fresh engine for every program)."""
    name = "amaranth"

    def _simulate(self, words, memory, udp_in):
        from hhe_gen.sim.engine import run_engine
        return run_engine(self.config.engine(), words, memory, udp_in=udp_in)


class RtlBackend(_RtlRuns):
    """The accelerator's RTL in Verilator (built once, cached)."""
    name = "rtl"

    def __init__(self, config, *, progress: str = "verilator build of the accelerator", **timing):
        from hhe_gen.sim.engine_verilator import VerilatedEngine
        super().__init__(config, **timing)
        self.rtl = VerilatedEngine(self.config.engine(), progress=progress)

    def _simulate(self, words, memory, udp_in):
        return self.rtl.run(words, memory, udp_in=udp_in)


class _SocBackend(Backend):
    """A SoC over Etherbone, programs run by its firmware (shared by soc-sim and board): a run's
    ``error`` is the engine's cause when the accelerator stopped on one (the firmware's status
    0x100 | cause, ``position`` its word), else the firmware's status (0x2xx: no engine cause);
    ``cycles`` the accelerator's busy cycles; ``timeout`` seconds to wait for a program's messages."""
    timeout = 300.0

    def _run_on(self, host, words, messages, udp_in, kinds, receiving, send):
        from hhe_gen.soc.host import firmware_run_with_packets
        reply, got = firmware_run_with_packets(
            host, words, receiving=receiving, send=send, messages=messages, udp_in=udp_in,
            reassembler=_reassembler(self.config, kinds), timeout=self.timeout)
        engine = 0x100 <= reply.status < 0x200
        return BackendRun(reply.status & 0xFF if engine else reply.status, reply.values[0], got, reply.meaning,
                          reply.values[1] if engine else None, record=reply)

    def write(self, image, *, progress=None):
        return self.host.write_memory(image, progress=progress)

    def read(self, first, count):
        return self.host.read_memory(first, count)


class SocSimBackend(_SocBackend):
    """The simulated SoC (built once, cached), started for the backend's lifetime; or ``soc``, a
    :class:`~hhe_gen.soc.sim_run.SimulatedSoC` already started (``soc sim``'s), which ``close``
    leaves running."""
    name = "soc-sim"

    def __init__(self, config, *, soc=None, timeout: float | None = None):
        super().__init__(config)
        if timeout is not None:
            self.timeout = timeout
        self.owned = soc is None
        if soc is None:
            from hhe_gen.soc.sim_build import build_sim_soc
            from hhe_gen.soc.sim_run import SimulatedSoC
            c = self.config
            soc = SimulatedSoC(build_sim_soc(c.params, c.lanes, rubato=c.rubato)).__enter__()
        self.soc, self.host = soc, soc.host
        self.host.command(1)                               # PING: the firmware learns the host's address

    def run(self, words, *, messages=0, udp_in=(), kinds=None):
        return self._run_on(self.host, words, messages, udp_in, kinds, self.soc.receiving, self.soc.send)

    def close(self):
        if self.owned:
            self.soc.__exit__(None, None, None)


class BoardBackend(_SocBackend):
    """A board running the SoC: Etherbone to ``ip``, ciphertexts on the UDP port of its ``info``
    (the build's ``soc.json``) and ``csr_csv``; or all three from ``folder``, the build's folder
    (``hhe-gen soc build -o DIR``).  A build for other parameters is refused before anything is sent."""
    name = "board"

    def __init__(self, config, *, folder=None, ip: str | None = None, csr_csv=None, info: dict | None = None,
                 host_ip: str = "0.0.0.0"):
        import json
        from pathlib import Path

        from hhe_gen.params.errors import ParameterError
        from hhe_gen.soc.host import SocHost, etherbone_client
        if folder is not None:
            folder = Path(folder)
            if not (folder / "soc.json").exists() or not (folder / "csr.csv").exists():
                raise ParameterError("board folder", str(folder), "a board build with soc.json and csr.csv "
                                     "(hhe-gen soc build -o DIR)")
            info = info or json.loads((folder / "soc.json").read_text())
            csr_csv = csr_csv or folder / "csr.csv"
        if info is None or csr_csv is None:
            raise ParameterError("board", None, "folder=... or ip=..., csr_csv=..., info=...")
        config = config.resolve()
        if info.get("params") not in (None, config.params.name):
            raise ParameterError("board", info.get("params"), f"a SoC built for {config.params.name!r}")
        ip = ip or info["ip"]
        super().__init__(config)
        comm = etherbone_client(ip, info.get("etherbone_port", 1234), csr_csv, timeout=1.0)
        comm.open()
        self.info, self.host_ip = dict(info, ip=ip), host_ip
        self.host = SocHost(comm, self.info)
        self.host.command(1)

    def _receiving(self, **kw):
        from contextlib import contextmanager

        from hhe_gen.net.udp import receive

        @contextmanager
        def block():
            import threading
            box = type("Rx", (), {"messages": []})()
            thread = threading.Thread(target=lambda: setattr(box, "messages", receive(
                self.info["udp_port"], host=self.host_ip, messages=kw["messages"], timeout=kw["timeout"],
                reassembler=kw["reassembler"])), daemon=True)
            thread.start()
            yield box
            thread.join(kw["timeout"] + 5)
        return block()

    def run(self, words, *, messages=0, udp_in=(), kinds=None):
        from hhe_gen.net.udp import send
        return self._run_on(self.host, words, messages, udp_in, kinds, self._receiving,
                            lambda payloads: send(payloads, self.info["ip"], self.info["udp_port"]))

    def close(self):
        self.host.comm.close()


def server_runner(params, backend: str, lanes: int):
    """Where ``Client.mul_relin_rescale`` runs: the server engine's model or RTL, the backend of the
    configuration ``AcceleratorConfig(params, lanes, role="server")`` (``config.shape``: the
    programs' engine)."""
    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.params.errors import ParameterError
    if backend not in ("model", "rtl", "verilator"):
        raise ParameterError("backend", backend, "model or rtl for server-side CKKS: "
                             + soc_server_refusal(params, lanes))
    config = AcceleratorConfig(params, lanes, role="server")
    if backend == "model":
        return ModelBackend(config)
    return RtlBackend(config, progress="verilator build of the server engine")


def soc_server_refusal(params, lanes: int) -> str:
    """Why the SoC backends do not run server-side CKKS, in figures: the SoC is the client device
    (an ECPIX-5's LFE5UM5G-85F), and the key switch's buffers alone exceed its block RAM."""
    from hhe_gen.cores.engine.memory_plan import DEVICES, dp16kd_blocks
    from hhe_gen.engine.server_programs import server_min_buffers
    buffers = server_min_buffers("relinearize", len(params.moduli))
    bits = max(q.bit_length() for q in tuple(params.moduli) + tuple(params.special_moduli))
    blocks = buffers * dp16kd_blocks(params.n // lanes, lanes * bits)
    why = "the SoC is the client device, built without the basis-conversion unit"
    if blocks > DEVICES["LFE5UM5G-85F"]["blocks"]:
        why += (f"; the key switch of {params.name} needs {buffers} buffers = {blocks} DP16KD at {lanes} lanes, "
                f"the SoC's LFE5UM5G-85F has {DEVICES['LFE5UM5G-85F']['blocks']}")
    return why


BACKENDS = {"model": ModelBackend, "amaranth": AmaranthBackend, "rtl": RtlBackend, "verilator": RtlBackend,
            "soc-sim": SocSimBackend, "board": BoardBackend}
"""Backend name -> class (``verilator`` is ``rtl``)."""


def backend_for(name: str, config, **options) -> Backend:
    """The backend ``name`` (:data:`BACKENDS`) running the accelerator of ``config``; ``options``
    go to its constructor (the board's ``folder`` / ``ip`` / ...)."""
    from hhe_gen.params.errors import ParameterError
    if name not in BACKENDS:
        raise ParameterError("backend", name, "one of " + ", ".join(BACKENDS))
    return BACKENDS[name](config, **options)
