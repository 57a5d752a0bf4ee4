"""The proofs of ``hhe-gen prove fft`` (registered with :func:`hhe_gen.prove.proof`); the harnesses
and what they prove at which size are in :mod:`.harnesses`.  Mutants (``expect="FAIL"``) show that
each kind of proof can fail: a butterfly checked against the model of another rounding mode, and a
core whose output payload changes while stalled."""

from __future__ import annotations

from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.prove import proof

from . import harnesses

GROUP = "fft"


def _bf(ctx, width, op, rounding="half-up", issue="first", mutant=False, exact=False, twiddle_n=None):
    spec_fmt = None
    if mutant:
        spec_fmt = FixedPointFormat(width, width - 3, "half-even" if rounding != "half-even" else "half-up")
    return harnesses.butterfly_equivalence(ctx, width, op, rounding, issue, spec_fmt, exact, twiddle_n)


# Bit-level equivalence with a free twiddle does not finish in 10 minutes even at W = 8 (multiplier
# identities are hard for SAT): these are the slow set; with the twiddle fixed to each value the
# FFT uses (n = 8: 7 constants) one check takes about a minute.
for _op in ("ct", "gs"):
    proof(GROUP, f"butterfly-{_op}-w8-twiddles-n8", engine="sby-bmc", quick=False,
          what=f"complex Butterfly op {_op} == the model for every W-bit a, b and each twiddle of the "
               "n = 8 FFT/IFFT (constant)", size="W = 8, F = 5, half-up; 7 BMC runs", width=8, op=_op,
          twiddle_n=8)(_bf)
for _w, _rounding, _quick in ((8, "half-up", False), (9, "half-up", False), (10, "half-up", False),
                              (8, "half-even", False), (8, "truncate", False), (9, "half-even", False)):
    for _op, _model in (("ct", "butterfly_ct_fixed"), ("gs", "butterfly_gs_fixed")):
        proof(GROUP, f"butterfly-{_op}-w{_w}-{_rounding}", engine="sby-bmc", quick=_quick,
              what=f"complex Butterfly op {_op} == {_model} (x and y) for every W-bit a, b, w",
              size=f"W = {_w}, F = {_w - 3}, {_rounding}; operands in the first cycle, one checked step",
              width=_w, op=_op, rounding=_rounding)(_bf)
for _op in ("ct", "gs"):
    proof(GROUP, f"butterfly-{_op}-w8-contract", engine="sby-bmc", quick=False,
          what=f"complex Butterfly op {_op}: the model's result exactly latency cycles after the operands, "
               "any inputs in the other cycles, stalls (en free)",
          size="W = 8, F = 5, half-up; BMC depth 2*latency + 3", width=8, op=_op, issue="any")(_bf)
proof(GROUP, "butterfly-ct-w8-exact-product", engine="sby-bmc", quick=False,
      what="complex Butterfly op ct == butterfly_ct_fixed with the 4-multiplier exact product in the spec "
           "(no z3 step)", size="W = 8, F = 5, half-up (slow: multiplier identities are hard at bit level)",
      width=8, op="ct", exact=True)(_bf)
proof(GROUP, "z3-three-mult", engine="z3", what="complex_mul_3mult == complex_mul_exact for all integers",
      size="a, b, c, d unbounded integers")(lambda ctx: harnesses.z3_three_mult(ctx))
proof(GROUP, "mutant-butterfly-gs-w8-wrong-rounding", engine="sby-bmc", expect="FAIL",
      what="a half-up GS butterfly checked against the half-even model is refuted",
      size="W = 8, F = 5", width=8, op="gs", mutant=True)(_bf)


def _stream(ctx, n, lanes, inverse, mode="prove", mutant=False):
    return harnesses.fft_stream(ctx, n, lanes, inverse, mode, mutant=mutant)


for _n, _p, _inv, _quick in ((8, 1, True, True), (8, 2, False, True), (16, 2, True, False), (16, 4, False, False)):
    _name = f"{'ifft' if _inv else 'fft'}-n{_n}-p{_p}"
    proof(GROUP, f"stream-{_name}", engine="sby-prove", quick=_quick,
          what="IterativeFft stream rules asserted on o_stream (assumed on i_stream), in-flight count "
               "<= n/P and equal to the core's own bookkeeping (k-induction)",
          size=f"n = {_n} slots, P = {_p}, W = 8", n=_n, lanes=_p, inverse=_inv)(_stream)
    proof(GROUP, f"cover-{_name}", engine="sby-cover", quick=_quick,
          what="IterativeFft covers: an output transfer, back-pressure, a full core, a transfer after back-pressure",
          size=f"n = {_n} slots, P = {_p}, W = 8", n=_n, lanes=_p, inverse=_inv, mode="cover")(_stream)
proof(GROUP, "mutant-stream-ifft-n8-p1-glitch", engine="sby-bmc", expect="FAIL",
      what="a core whose output payload changes while stalled is refuted",
      size="n = 8, P = 1, W = 8; BMC over one transform (cycles() + 4 steps)", n=8, lanes=1, inverse=True,
      mode="bmc", mutant=True)(_stream)


def _timing(ctx, n, lanes, inverse):
    return harnesses.fft_timing(ctx, n, lanes, inverse)


for _n, _p, _inv, _quick in ((8, 2, True, True), (16, 2, False, False)):
    proof(GROUP, f"timing-{'ifft' if _inv else 'fft'}-n{_n}-p{_p}", engine="sby-prove", quick=_quick,
          what="two IterativeFft copies with the same handshakes and different data: i_stream.ready and "
               "o_stream.valid equal in every cycle (no cycle count depends on data)",
          size=f"n = {_n} slots, P = {_p}, W = 8", n=_n, lanes=_p, inverse=_inv)(_timing)
