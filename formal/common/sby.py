"""Turn an Amaranth formal harness into RTLIL + a ``.sby`` file and run SymbiYosys on it.

A *harness* is an ordinary Amaranth ``Elaboratable`` (usually a ``Module``) that contains the
design under proof as a submodule and ``Assert`` / ``Assume`` / ``Cover`` statements from
``amaranth.hdl`` (free inputs: ``AnyConst`` / ``AnySeq`` from ``amaranth.asserts``).  It uses the
``sync`` domain; :func:`formal_module` creates a module that defines that domain with its reset
tied low and its clock exported as the only port, which is what SymbiYosys needs in the default
single-clock mode (``multiclock off``: every flip-flop steps once per solver step; a clock that is
not a port would be a constant and Yosys would freeze every register).

Modes (the ``.sby`` ``mode`` option):

* ``prove`` - k-induction with ``depth`` steps (basecase BMC + induction);
* ``bmc``   - bounded model check of ``depth`` steps from the initial state;
* ``cover`` - reach every ``Cover`` within ``depth`` steps.

The ``.sby`` file comes from the template ``harness.sby`` next to this module (installed with
the package); :func:`write_sby` fills it in, :func:`run_harness` writes harness and ``.sby`` into
a work directory and runs :func:`hhe_gen.flow.sby.run_sby` there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from amaranth.hdl import ClockDomain, Fragment, Module, Signal

__all__ = ["formal_module", "find_signal", "write_sby", "run_harness", "HarnessRun", "MODES",
           "sby_template", "tasks_result"]

MODES = ("prove", "bmc", "cover")


def formal_module():
    """A ``Module`` with a ``sync`` domain for a formal harness.

    Returns
    -------
    (Module, ClockDomain)   the reset of the domain is driven 0 inside the module; pass
                            ``[cd.clk]`` as the ports (``run_harness`` does that).
    """
    m = Module()
    m.domains.sync = cd = ClockDomain("sync")
    m.d.comb += cd.rst.eq(0)
    m._formal_clock = cd.clk            # found by run_harness
    return m, cd


def find_signal(fragment: Fragment, name: str, *, domain: str | None = "sync", path=()) -> Signal:
    """A signal assigned inside an elaborated design, found by name.

    Harnesses use it to tie their bookkeeping (in-flight counters) to a design's internal state,
    which is what lets k-induction close.  ``fragment`` is ``Fragment.get(design, None)``; add
    that fragment (not the design) to the harness so the same signals are used.

    Parameters
    ----------
    fragment : Fragment     the elaborated design
    name : str              the signal's name
    domain : str | None     only look at statements of this domain (None: every domain)
    path : tuple of str     submodule names to descend into first

    Raises
    ------
    LookupError   when there is no such signal, or several
    """
    for part in path:
        for sub, sub_name, *_ in fragment.subfragments:
            if sub_name == part:
                fragment = sub
                break
        else:
            raise LookupError(f"no submodule {part!r} on the path {path}")
    found = {}

    def walk(stmts):
        for s in stmts:
            lhs = getattr(s, "lhs", None)
            if lhs is not None:
                for sig in lhs._lhs_signals():
                    if sig.name == name:
                        found[id(sig)] = sig
            cases = getattr(s, "cases", ())
            for case in (cases.values() if isinstance(cases, dict) else cases):
                # Amaranth 0.5: a tuple of (patterns, statements, src_loc); older: a dict
                walk(case[1] if isinstance(case, tuple) else case)

    for dom, stmts in fragment.statements.items():
        if domain is None or dom == domain:
            walk(stmts)
    if len(found) != 1:
        raise LookupError(f"{len(found)} signals named {name!r} assigned in domain {domain!r} "
                          f"(expected exactly one)")
    return next(iter(found.values()))


def sby_template() -> str:
    """The text of ``harness.sby`` (the template every generated ``.sby`` file comes from)."""
    return resources.files(__package__).joinpath("harness.sby").read_text()


#: Script lines of prove mode: k-induction's step case starts from ANY state, and a read-only
#: memory's contents are state to Yosys' SMT-LIB back end (its init value binds only the base
#: case), so a ROM - including the ones ``proc_rom`` makes of a ``Switch`` or an ``Array`` of
#: constants, such as a core's stage-start table - would be free in the step case and induction
#: fail on tables no run can hold.  Mapping ROMs to logic makes them constants again (measured:
#: the NTT schedule at N = 128, P = 1 went from an induction counterexample in 1 s to PASS in 8 s).
PROVE_ROM_LINES = "memory_map -rom-only"


def write_sby(path, *, mode: str, depth: int, il_file: str, top: str = "top",
              engine: str = "smtbmc yices", options: str = "") -> Path:
    """Write a ``.sby`` file from the template.

    Parameters
    ----------
    path : path             the .sby file to write
    mode : str              "prove", "bmc" or "cover"
    depth : int             steps
    il_file : str           the RTLIL file (relative to the .sby file's folder)
    top : str               the top module's name in it
    engine : str            the engine line (default "smtbmc yices")
    options : str           extra lines for the [options] section
    """
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {MODES}")
    text = sby_template().format(mode=mode, depth=int(depth), il_file=il_file, top=top,
                                 engine=engine, options=options,
                                 rom_lines=PROVE_ROM_LINES if mode == "prove" else "")
    path = Path(path)
    path.write_text(text)
    return path


@dataclass
class HarnessRun:
    """Outcome of :func:`run_harness`.

    Members
    -------
    status : str       PASS, FAIL, UNKNOWN, TIMEOUT (from sby)
    mode : str, depth : int
    seconds : float    wall time of the sby run
    workdir : Path     sby's work directory (``engine_*/trace*.vcd`` for a FAIL or a cover)
    log : str          sby's output
    """
    status: str
    mode: str
    depth: int
    seconds: float
    workdir: Path
    log: str

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def summary(self) -> str:
        """The lines of sby's log that say why (failed assertions, unreached covers, traces)."""
        keys = ("Assert failed", "failed assertion", "Unreached cover", "unreached cover",
                "Reached cover", "trace", "Induction step failed", "summary: engine",
                "Status:")
        lines = [ln.split("] ", 1)[-1] for ln in self.log.splitlines()
                 if any(k in ln for k in keys)]
        return "\n".join(dict.fromkeys(lines))[-2000:]


def run_harness(harness, workdir, name: str, *, mode: str, depth: int, ports=None,
                timeout: float | None = None, engine: str = "smtbmc yices",
                options: str = "") -> HarnessRun:
    """Export ``harness`` to RTLIL, write ``<name>.il`` and ``<name>_<mode>.sby`` into
    ``workdir`` and run SymbiYosys.

    Parameters
    ----------
    harness : Elaboratable   built on :func:`formal_module` (or with its own sync domain)
    workdir : path           folder for the files (created)
    name : str               base name of the files
    mode, depth              see :func:`write_sby`
    ports : list | None      top-level ports (default: the ``sync`` clock, found by name)
    timeout : float | None   seconds
    engine, options          see :func:`write_sby`

    Returns
    -------
    HarnessRun

    Raises
    ------
    hhe_gen.flow.tools.ToolError   when sby errors out or times out (a TIMEOUT: returncode None)
    """
    from amaranth.back import rtlil

    from hhe_gen.flow.sby import run_sby

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if ports is None:
        ports = _clock_ports(harness)
    il_name = f"{name}.il"
    (workdir / il_name).write_text(rtlil.convert(harness, name="top", ports=ports))
    sby = write_sby(workdir / f"{name}_{mode}.sby", mode=mode, depth=depth, il_file=il_name,
                    engine=engine, options=options)
    t0 = time.perf_counter()
    result = run_sby(sby, timeout=timeout)
    return HarnessRun(result.status, mode, depth, time.perf_counter() - t0, result.workdir,
                      result.log)


def _clock_ports(harness):
    clk = getattr(harness, "_formal_clock", None)       # set by formal_module
    if clk is None:
        raise ValueError("pass ports=[clock] (the harness was not built by formal_module)")
    return [clk]


def tasks_result(results: dict, sby_file):
    """One :class:`hhe_gen.flow.proof.ProofResult` for the ``.sby`` tasks of one harness run.

    ``results`` maps task name -> result (``.passed``, ``.status``, ``.log``, ``.workdir``), as a
    family's ``prove(name, workdir, tasks=...)`` returns them; ``sby_file`` is the ``.sby`` that ran
    (its ``prove: depth N`` line gives the reported depth).  PASS needs every task to pass; the
    first task that did not gives the status and the tail of its log."""
    import re

    from hhe_gen.flow.proof import ProofResult

    found = re.search(r"^prove: depth (\d+)$", Path(sby_file).read_text(), re.M)
    depth = int(found.group(1)) if found else None
    for task, res in results.items():
        if not res.passed:
            tail = "\n".join(res.log.splitlines()[-6:])
            return ProofResult(res.status, depth=depth, checks=len(results),
                               detail=f"{task}: {res.status}\n{tail}", workdir=str(res.workdir))
    return ProofResult("PASS", depth=depth, checks=len(results), detail=" + ".join(results))
