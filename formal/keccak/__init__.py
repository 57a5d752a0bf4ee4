"""Formal harnesses of the Keccak core and the SHAKE XOF (SymbiYosys, yices via smtbmc).

What is proven, at which size (each harness's docstring says it in detail):

==============  ======================================================================
harness         property
==============  ======================================================================
``round``       ``KeccakRounds(k)`` equals the golden model's ``keccak_round`` (run on
                symbolic lanes) for every 1600-bit state and every round group: full
                size, all 24 round constants (k = 1); combinational, BMC depth 1
``sponge``      ``ShakeXof``: no output before the message's last beat was absorbed,
                padded and permuted (black-box: at least n+2 cycles after that beat);
                no input taken after the last beat; a restart returns every register
                to its reset value (state register zero, FSM, position, round counter);
                stream rules on both streams; k-induction at full size (1600-bit state)
                plus covers (output, back-pressure, restart mid-squeeze, second block)
==============  ======================================================================

The proofs of ``hhe-gen prove keccak`` (configurations, and the broken cores of :mod:`.mutants`
that must be refuted) are registered in :mod:`.proofs`.

Each harness has a ``.sby`` file next to this module that reads ``design.il``; :func:`prove`
writes the harness's RTLIL and the ``.sby`` into a work folder and runs it with
:func:`hhe_gen.flow.sby.run_sby`.  A harness's ``prove_depth`` / ``cover_depth`` attributes,
when present, replace the file's depths for its configuration.
"""

from __future__ import annotations

import re
from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = ["HARNESSES", "TASKS", "harness", "prove"]

HERE = Path(__file__).resolve().parent


def _round(rounds_per_cycle=1, steps=None, core=None):
    from .round import KeccakRounds, RoundHarness
    return RoundHarness(rounds_per_cycle, steps, core or KeccakRounds)


def _sponge(variant=256, beat_bytes=8, rounds_per_cycle=24, core=None, planes_per_cycle=5, ring=False):
    from .sponge import ShakeXof, SpongeHarness
    return SpongeHarness(variant, beat_bytes, rounds_per_cycle, core or ShakeXof, planes_per_cycle, ring)


HARNESSES = {"round": _round, "sponge": _sponge}
"""Harness name -> constructor (keyword parameters of the core configuration)."""

TASKS = {"round": ("prove",), "sponge": ("prove", "cover")}
"""The ``.sby`` tasks of each harness."""


def harness(name: str, **params):
    """The harness Elaboratable ``name`` for the core configuration ``params``."""
    if name not in HARNESSES:
        raise ParameterError("name", name, "one of " + ", ".join(HARNESSES))
    return HARNESSES[name](**params)


def prove(name: str, workdir, *, tasks=None, timeout: float | None = None, **params):
    """Build harness ``name`` with ``params`` and run its ``.sby`` tasks in ``workdir``.

    Parameters
    ----------
    name : str            a key of :data:`HARNESSES`
    workdir : path        created if missing; gets ``design.il``, the ``.sby`` and sby's folders
    tasks : tuple | None  the tasks to run (default: all of the harness's, :data:`TASKS`)
    timeout : float       seconds per task
    params                the core configuration (see the harness constructors)

    Returns
    -------
    dict[str, SbyResult]   one result per task (``.passed``, ``.status``, ``.log``)
    """
    from amaranth.back import rtlil

    from hhe_gen.flow.sby import run_sby

    top = harness(name, **params)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "design.il").write_text(rtlil.convert(top, ports=[]))
    text = (HERE / f"{name}.sby").read_text()
    for task in ("prove", "cover"):
        depth = getattr(top, f"{task}_depth", None)
        if depth is not None:
            text = re.sub(rf"^{task}: depth \d+$", f"{task}: depth {int(depth)}", text, flags=re.M)
    sby = workdir / f"{name}.sby"
    sby.write_text(text)
    return {task: run_sby(sby, workdir / f"{name}_{task}", timeout=timeout, tasks=[task])
            for task in (TASKS[name] if tasks is None else tasks)}
