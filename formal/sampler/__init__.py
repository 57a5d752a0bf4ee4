"""Formal harnesses of the samplers (SymbiYosys, yices via smtbmc).

What is proven, at which size (every harness's docstring says it in detail):

========================  ==================================================================
harness                   property
========================  ==================================================================
``gatherer``              ByteGatherer: every output byte is the right input byte (nothing
                          lost, reused or reordered), byte count bookkeeping, stream rules;
                          k-induction at the real sizes (W, k as configured)
========================  ==================================================================

Each harness has a ``.sby`` file next to this module (tasks ``prove`` and ``cover``) that reads
``design.il``; :func:`prove` writes the harness's RTLIL and the ``.sby`` into a work folder and
runs it with :func:`hhe_gen.toolchain.run_sby`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from amaranth.back import rtlil

from hhe_gen.params.errors import ParameterError

__all__ = ["HARNESSES", "harness", "prove"]

HERE = Path(__file__).resolve().parent


def _gatherer(in_bytes=1, word_bytes=1, variable=False):
    from .gatherer import GathererHarness
    return GathererHarness(in_bytes, word_bytes, variable)


HARNESSES = {
    "gatherer": _gatherer,
}
"""Harness name -> constructor (keyword parameters of the core configuration)."""


def harness(name: str, **params):
    """The harness Elaboratable ``name`` for the core configuration ``params``."""
    if name not in HARNESSES:
        raise ParameterError("name", name, "one of " + ", ".join(HARNESSES))
    return HARNESSES[name](**params)


def prove(name: str, workdir, *, tasks=("prove", "cover"), timeout: float | None = None, **params):
    """Build harness ``name`` with ``params``, run its ``.sby`` tasks in ``workdir``.

    Returns
    -------
    dict[str, SbyResult]   one result per task (``.passed``, ``.status``, ``.log``)
    """
    from hhe_gen.toolchain import run_sby

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    top = harness(name, **params)
    (workdir / "design.il").write_text(rtlil.convert(top, ports=[]))
    sby = workdir / f"{name}.sby"
    shutil.copyfile(HERE / f"{name}.sby", sby)
    return {task: run_sby(sby, workdir / f"{name}_{task}", timeout=timeout, tasks=[task]) for task in tasks}
