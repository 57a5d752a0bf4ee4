"""Full functional equivalence of each reducer at small widths (:func:`equivalence`) and the
pipeline contract with stalls (:func:`contract`); see :mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

from hhe_gen.cores.unused import mark_unused
from hhe_gen.flow.proof import ProofResult, proof

from ..common.contract import pipeline_contract
from ..common.sby import run_harness
from .rtl_common import (GROUP, make_unit, operands_below_q, proof_result, skip_without_cores, small_primes,
                          unit_spec)

def equivalence(ctx, kind: str, bits: int, extra_latency: int = 0, moduli=None, primes=None) -> ProofResult:
    """Full functional equivalence of one reducer (see the module docstring).

    ``extra_latency`` registers above the unit's minimum; ``moduli`` builds the unit for other
    primes than the specification's (a mutant); ``primes`` replaces the two primes of ``bits``
    bits for both (e.g. primes of two bit lengths: the scaled Barrett).
    """
    if (skip := skip_without_cores()) is not None:
        return skip
    probe = make_unit(kind, bits, moduli=primes)
    mark_unused(probe)          # built only to read its minimum latency
    dut = make_unit(kind, bits, probe.min_latency + extra_latency, moduli=moduli or primes)
    spec_moduli = small_primes(kind, bits) if primes is None else tuple(primes)
    harness = pipeline_contract(dut, unit_spec(dut, spec_moduli),
                                operand_assumption=operands_below_q(spec_moduli, dut.width),
                                stalls=False, issue="first", covers=False)
    run = run_harness(harness, ctx.workdir, f"{kind}_{bits}", mode="bmc", depth=dut.latency + 1,
                      timeout=ctx.timeout)
    return proof_result(run, f"latency {dut.latency}, primes {list(spec_moduli)}")


def contract(ctx, kind: str, bits: int) -> ProofResult:
    """The contract with stalls and arbitrary other inputs (BMC, depth 2*latency + 3)."""
    if (skip := skip_without_cores()) is not None:
        return skip
    dut = make_unit(kind, bits)
    harness = pipeline_contract(dut, unit_spec(dut),
                                operand_assumption=operands_below_q(dut.moduli, dut.width),
                                stalls=True)
    run = run_harness(harness, ctx.workdir, f"{kind}_{bits}_stalls", mode="bmc",
                      depth=2 * dut.latency + 3, timeout=ctx.timeout)
    return proof_result(run, f"latency {dut.latency}")


# The sizes: the largest that finish in about a minute on a 2-core machine (see the table in
# the report / README of formal/arith); special-barrett cannot go below k = 16 (its form).
# Bit-level sizes (measured on the 2-core machine: Barrett 8 bits ~15 s, 10 bits ~45 s; word
# Montgomery 8 bits (two 4-bit words) 54 s, 12 bits > 10 min; NTT-friendly Montgomery 10 bits 22 s).
# The special-prime Barrett exists only for k >= 16 (its primes' form): at full widths it is
# covered by the z3 proofs, the corrections piece and simulation.
EQUIV_BITS = {"barrett": (10, (0, 1, 3)), "montgomery": (8, (0, 2)), "ntt-montgomery": (10, (0, 2))}
QUICK_BITS = {"barrett": 8}


def _register_reducers():
    variants = [(kind, bits, extra, False) for kind, (bits, extras) in EQUIV_BITS.items() for extra in extras]
    variants += [(kind, bits, 0, True) for kind, bits in QUICK_BITS.items()]
    for kind, bits, extra, quick in variants:
        proof(GROUP, f"rtl-{kind}-{bits}-equiv-lat+{extra}", engine="sby-bmc", quick=quick,
              kind=kind, bits=bits, extra_latency=extra,
              what=f"{kind}: p == a*b{'*R^-1' if 'montgomery' in kind else ''} mod q for all "
                   f"a, b < q and both primes (certificate spec), latency min+{extra}",
              size=f"{bits}-bit primes, two-prime table, port width {max(16, bits)}")(
            _equivalence_proof)


def _equivalence_proof(ctx, kind, bits, extra_latency):
    return equivalence(ctx, kind, bits, extra_latency)


#: Barrett over primes of two bit lengths (the narrower one scaled to the wider one's k bits):
#: (wider, narrower, quick).  Measured on the 2-core machine: 8 and 6 bits 60 s; 10 and 7 bits had
#: not finished after 13 minutes (the scaling's multiplexers in front of the product and behind
#: the corrections).  Above, the z3 proof of Barrett's bound for every k-bit modulus (odd or not,
#: so q * 2^s too) and simulation at the real widths cover it.
MIXED_BITS = ((8, 6, True),)


def _register_mixed():
    for hi, lo, quick in MIXED_BITS:
        proof(GROUP, f"rtl-barrett-mixed-{hi}-{lo}-equiv", engine="sby-bmc", quick=quick, hi=hi, lo=lo,
              what=f"barrett over a table of primes of {hi} and {lo} bits (the second scaled by "
                   f"2^{hi - lo}): p == a*b mod q for all a, b < q and both primes (certificate spec)",
              size=f"primes of {hi} and {lo} bits, port width 16")(_mixed_proof)


def _mixed_proof(ctx, hi, lo):
    primes = (small_primes("barrett", hi, 1)[0], small_primes("barrett", lo, 1)[0])
    return equivalence(ctx, "barrett", hi, 0, primes=primes)


_register_reducers()
_register_mixed()
