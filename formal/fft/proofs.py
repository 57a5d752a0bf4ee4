"""The proofs of ``hhe-gen prove fft`` (registered with :func:`hhe_gen.flow.proof.proof`); the harnesses
and what they prove at which size are in :mod:`.harnesses`.  Mutants (``expect="FAIL"``) show that
each kind of proof can fail: a butterfly checked against the model of another rounding mode, and a
core whose output payload changes while stalled."""

from __future__ import annotations

from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.flow.proof import proof

from . import harnesses

GROUP = "fft"


def _bf(ctx, width, op, rounding="half-up", issue="first", mutant=False, exact=False, twiddle_n=None):
    spec_fmt = None
    if mutant:
        spec_fmt = FixedPointFormat(width, width - 3, "half-even" if rounding != "half-even" else "half-up")
    return harnesses.butterfly_equivalence(ctx, width, op, rounding, issue, spec_fmt, exact, twiddle_n)


# Bit-level equivalence with a free twiddle does not finish within 10 minutes even at W = 8
# (multiplier identities are hard for SAT; tried with the 4- and the 3-multiplier spec), so the
# twiddle is fixed to each value the FFT of n = 8 uses (7 constants, one BMC run each, about a
# minute each on this machine): the slow set.  The mutant keeps the twiddle free (a
# counterexample is found in seconds).
for _op, _rounding in (("ct", "half-up"), ("gs", "half-up"), ("gs", "half-even"), ("ct", "truncate")):
    proof(GROUP, f"butterfly-{_op}-w8-{_rounding}-twiddles-n8", engine="sby-bmc", quick=False,
          what=f"complex Butterfly op {_op} == butterfly_{_op}_fixed (x and y) for every 8-bit complex a, b "
               "and each twiddle of the n = 8 transform",
          size=f"W = 8, F = 5, {_rounding}; 7 BMC runs (operands in the first cycle, one checked step)",
          width=8, op=_op, rounding=_rounding, twiddle_n=8)(_bf)
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



def _crt(ctx, moduli, kind="equivalence", mutant=False):
    from . import codec
    if kind == "stream":
        return codec.crt_stream(ctx, moduli)
    return codec.crt_equivalence(ctx, moduli, mutant=mutant)


for _moduli, _quick in (((3, 5, 7), True), ((5, 7, 11), False)):
    _tag = "-".join(map(str, _moduli))
    proof(GROUP, f"crt-equivalence-{_tag}", engine="sby-bmc", quick=_quick,
          what="CrtCentre (the decoder's CRT) at full rate: every residue combination comes out after "
               "exactly `latency` cycles as the centred CRT value (table by enumeration)",
          size=f"moduli {_moduli}, one lane, BMC latency + 2", moduli=_moduli)(_crt)
    proof(GROUP, f"crt-stream-{_tag}", engine="sby-prove", quick=_quick,
          what="CrtCentre stream rules asserted on o_stream (assumed on i_stream), in-flight count = the "
               "pipeline's valid bits (k-induction)",
          size=f"moduli {_moduli}, one lane", moduli=_moduli, kind="stream")(_crt)
proof(GROUP, "mutant-crt-wrong-entry", engine="sby-bmc", expect="FAIL",
      what="the CRT checked against a table with one wrong entry is refuted",
      size="moduli (3, 5, 7)", moduli=(3, 5, 7), mutant=True)(_crt)


def _codec(ctx, kind, mode="bmc"):
    from . import codec
    return codec.codec_stream_bmc(ctx, kind, mode)


for _kind in ("encoder", "decoder"):
    proof(GROUP, f"stream-{_kind}-n16-bmc", engine="sby-bmc", quick=False,
          what=f"CKKS {_kind}: o_stream keeps valid and payload until taken under free input gaps and "
               "back-pressure (bounded, from reset)",
          size="N = 16, P = 1, W = 8, moduli (97, 193); BMC cycles() + 8 steps", kind=_kind)(_codec)
    proof(GROUP, f"cover-{_kind}-n16", engine="sby-cover", quick=False,
          what=f"CKKS {_kind}: an output transfer is reachable", size="N = 16, P = 1, W = 8", kind=_kind,
          mode="cover")(_codec)
