"""The ``Multiplier`` generator with DSP tiles scaled down (:func:`multiplier_structure`,
:func:`reduced_tiles`); see :mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

import contextlib

from hhe_gen.cores.unused import mark_unused
from hhe_gen.flow.proof import ProofResult, proof

from ..common.contract import pipeline_contract
from ..common.sby import run_harness
from .rtl_common import GROUP, arith_cores, proof_result, skip_without_cores

@contextlib.contextmanager
def reduced_tiles(target: str, dims):
    """Build ``Multiplier``/``MulPlan`` objects for ``target`` with DSP tiles of ``dims`` bits
    instead of the real 18x18 / 24x17, so that operand splitting, Karatsuba, LUT rows, part
    truncation and the adder tree are all exercised at widths a bit-level proof can handle.
    The plan is computed in the constructor; the patch is undone on exit."""
    from hhe_gen.cores.arith import multiplier
    saved = multiplier.TILE_DIMS[target]
    multiplier.TILE_DIMS[target] = dims
    try:
        yield
    finally:
        multiplier.TILE_DIMS[target] = saved


def _product_spec(a_width, b_width, part, part_bits, is_signed):
    def spec(m, ops):
        a, b = ops["a"], ops["b"]
        prod = (a.as_signed() * b.as_signed()) if is_signed else (a * b)
        full = a_width + b_width
        if part == "low":
            return prod[:part_bits]
        if part == "high":
            return prod[full - part_bits:full]
        return prod[:full]
    return spec


def multiplier_structure(ctx, a_width: int, b_width: int, *, target: str = "ecp5", tile=(3, 3),
                         karatsuba: bool = False, part: str = "full", part_bits=None,
                         signed: bool = False, lut_bits: int = 1, extra_latency: int = 0,
                         mutate_tile=None) -> ProofResult:
    """The Multiplier generator equals a*b (or its part) for all operands (BMC, one checked step).

    ``mutate_tile`` builds the unit with other tile dimensions than ``tile`` - harmless (it must
    still PASS: the result does not depend on the tiling) - kept for experiments; mutants of the
    arithmetic are built by the caller.
    """
    if (skip := skip_without_cores()) is not None:
        return skip
    arith = arith_cores()
    with reduced_tiles(target, tile if mutate_tile is None else mutate_tile):
        probe = arith.Multiplier(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                                 part_bits=part_bits, signed=signed, lut_bits=lut_bits)
        mark_unused(probe)
        dut = arith.Multiplier(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                               part_bits=part_bits, signed=signed, lut_bits=lut_bits,
                               latency=probe.min_latency + extra_latency)
    harness = pipeline_contract(dut, _product_spec(a_width, b_width, part, part_bits, signed),
                                stalls=False, issue="first", covers=False)
    run = run_harness(harness, ctx.workdir, "mul", mode="bmc", depth=dut.latency + 1,
                      timeout=ctx.timeout)
    return proof_result(run, f"{dut.tiles} tiles, {dut.lut_rows} LUT rows, latency {dut.latency}")


# Bit-level multiplier equivalence is the hardest kind of SAT problem: measured (2-core machine
# under load) 6x6 with 3x3 tiles 3 s, 8x8 45-60 s, 12x12 > 15 min.  The real tiles are 18x18 /
# 24x17, so the generator is proven with tiles scaled down to 3x3 (4x3 for the asymmetric
# Xilinx shape): 2-3 limbs per operand, the same planning and adder-tree code.
_MUL_VARIANTS = [
    # name, a_width, b_width, kwargs, quick
    ("school-6", 6, 6, dict(tile=(3, 3)), True),
    ("karatsuba-6", 6, 6, dict(tile=(3, 3), karatsuba=True), True),
    ("school-8", 8, 8, dict(tile=(3, 3)), False),
    ("karatsuba-8", 8, 8, dict(tile=(3, 3), karatsuba=True), False),
    ("low-8", 8, 8, dict(tile=(3, 3), part="low", part_bits=9), False),
    ("high-8", 8, 8, dict(tile=(3, 3), part="high", part_bits=9), False),
    ("karatsuba-high-8", 8, 8, dict(tile=(3, 3), karatsuba=True, part="high", part_bits=9), False),
    ("signed-7", 7, 7, dict(tile=(3, 3), signed=True), False),
    ("xilinx-asym-8x7", 8, 7, dict(target="xilinx", tile=(4, 3)), False),
    ("school-8-lat+2", 8, 8, dict(tile=(3, 3), extra_latency=2), False),
    ("lut-rows-8", 8, 8, dict(tile=(3, 3), lut_bits=2), False),
]
for _name, _aw, _bw, _kw, _quick in _MUL_VARIANTS:
    _tile = _kw["tile"]
    proof(GROUP, f"rtl-multiplier-{_name}", engine="sby-bmc", quick=_quick, a_width=_aw,
          b_width=_bw, **_kw,
          what=f"Multiplier generator ({_name}): p == "
               + {"full": "a*b", "low": "low bits of a*b", "high": "high bits of a*b"}[
                   _kw.get("part", "full")] + " for all operands; splitting, "
               + ("Karatsuba, " if _kw.get("karatsuba") else "") + "LUT rows, adder tree",
          size=f"{_aw}x{_bw} bits with {_tile[0]}x{_tile[1]} tiles (the real 18x18 / 24x17 "
               f"scaled down), lut_bits {_kw.get('lut_bits', 1)}")(multiplier_structure)
