"""Formal harnesses of the samplers (SymbiYosys, yices via smtbmc).

What is proven, at which size (every harness's docstring says it in detail):

========================  ======================================================================
harness                   property
========================  ======================================================================
``gatherer``              ByteGatherer: every output byte is the right input byte (nothing
                          lost, reused or reordered), byte count bookkeeping, stream rules;
                          k-induction at the real sizes (W, k as configured)
``gaussian_timing``       GaussianCDT (whole sampler): miter of two copies fed different bytes
                          with the same handshakes; ready/valid identical in every cycle (the
                          cycle count never depends on the drawn value); k-induction, full size
``cdt_contract``          CDTScan: the n-th output is the CDT sample of the n-th input word
                          (whole table, full word width); k-induction
``rejection``             RejectionFilter (uniform mod q, Rubato round constants): every output
                          is < q and equals the masked word; accepted words come out once,
                          rejected ones never; k-induction at full width
``ternary``               PieceSelector: the n-th output is the n-th accepted 2-bit piece,
                          mapped to {0, +1, -1}; rejected pieces never come out; k-induction
``ternary_pairs``         PiecePairSelector (two values a cycle): the same, value 0 of a pair
                          before value 1; k-induction
========================  ======================================================================

The proofs (harness x configuration, and a deliberately broken core per harness from
:mod:`.mutants` that must be refuted) are registered in :mod:`.proofs` for ``hhe-gen prove
sampler``.

Each harness has a ``.sby`` file next to this module (tasks ``prove`` and ``cover``) that reads
``design.il``; :func:`prove` writes the harness's RTLIL and the ``.sby`` into a work folder and
runs it with :func:`hhe_gen.flow.sby.run_sby` (a harness's ``prove_depth`` / ``cover_depth``
attributes, when present, replace the file's depths for its configuration).
"""

from __future__ import annotations

import re
from pathlib import Path

from amaranth.back import rtlil

from hhe_gen.params.errors import ParameterError

__all__ = ["HARNESSES", "harness", "prove"]

HERE = Path(__file__).resolve().parent


def _gatherer(in_bytes=1, word_bytes=1, variable=False, **kw):
    from .gatherer import GathererHarness
    return GathererHarness(in_bytes, word_bytes, variable, **kw)


def _gaussian_timing(**params):
    from .gaussian import GaussianTimingHarness
    return GaussianTimingHarness(**params)


def _cdt_contract(table=None, word_bits=64, comparators=None, **kw):
    from hhe_gen.models.sampler import gaussian_cdt_table

    from .gaussian import CDTContractHarness
    return CDTContractHarness(gaussian_cdt_table() if table is None else table, word_bits, comparators, **kw)


def _rejection(word_bits=32, moduli=(65929217,), **kw):
    from .rejection import RejectionHarness
    return RejectionHarness(word_bits, moduli, **kw)


def _ternary(**kw):
    from .ternary import TernaryHarness
    return TernaryHarness(**kw)


def _ternary_pairs(**kw):
    from .ternary import PairHarness
    return PairHarness(**kw)


HARNESSES = {
    "ternary": _ternary,
    "ternary_pairs": _ternary_pairs,
    "rejection": _rejection,
    "gatherer": _gatherer,
    "gaussian_timing": _gaussian_timing,
    "cdt_contract": _cdt_contract,
}
"""Harness name -> constructor (keyword parameters of the core configuration, and ``core``: the
class under proof, replaceable by a deliberately broken one from :mod:`.mutants`)."""


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
    from hhe_gen.flow.sby import run_sby

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    top = harness(name, **params)
    (workdir / "design.il").write_text(rtlil.convert(top, ports=[]))
    sby = workdir / f"{name}.sby"
    text = (HERE / f"{name}.sby").read_text()
    for task in ("prove", "cover"):     # a harness may need more steps at its configuration
        depth = getattr(top, f"{task}_depth", None)
        if depth is not None:
            text = re.sub(rf"^{task}: depth \d+$", f"{task}: depth {int(depth)}", text, flags=re.M)
    sby.write_text(text)
    return {task: run_sby(sby, workdir / f"{name}_{task}", timeout=timeout, tasks=[task]) for task in tasks}
