"""The stream handshake of ``StreamPipeline`` (:func:`stream_handshake`); see
:mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness
from .rtl_addsub import addsub_expr, primes64
from .rtl_common import GROUP, arith_cores, operands_below_q, proof_result, skip_without_cores


def _stream_unit(unit: str, latency: int):
    arith = arith_cores()
    if unit == "modadd":
        return arith.ModAdd(primes64(), 64, latency=latency)
    if unit == "special-barrett-54":
        from hhe_gen.params import dna_hhe_primes
        qs = [p.q for p in dna_hhe_primes(54, 1 << 13, 10, count=2)]
        return arith.SpecialBarrettMul(qs, 54, 13, latency)
    raise ValueError(unit)


def stream_handshake(ctx, unit: str, latency: int, mode: str, scoreboard: bool = False,
                     tie: bool = True) -> ProofResult:
    """StreamPipeline(unit) under the stream harness of ``formal/common/stream.py``.

    mode "prove": k-induction of the handshake rules and the in-flight counter (tied to the
    popcount of the wrapper's ``valid`` shift register unless ``tie`` is False - then induction
    is expected not to close); "bmc" with ``scoreboard``: one item is followed and must come out
    as (a + b) mod q (ModAdd only); "cover": a result comes out, back-pressure, full pipeline,
    transfer after back-pressure.
    """
    if (skip := skip_without_cores()) is not None:
        return skip
    from ..common.sby import find_signal
    from ..common.stream import popcount, stream_harness
    arith = arith_cores()
    inner = _stream_unit(unit, latency)
    dut = arith.StreamPipeline(inner)
    occupancy = None
    if tie and latency > 0:
        occupancy = lambda frag: popcount(find_signal(frag, "valid"))   # noqa: E731
    spec = None
    moduli = inner.moduli
    if scoreboard:
        add = addsub_expr("add", moduli, 64)
        spec = lambda p: add({"a": p.a, "b": p.b, "sel": p.sel})            # noqa: E731
    assumption = lambda p: operands_below_q(moduli, inner.width)(            # noqa: E731
        {"a": p.a, "b": p.b, "sel": p.sel})
    harness = stream_harness(dut, capacity=latency, occupancy=occupancy, spec=spec,
                             passthrough=latency == 0, input_assumption=assumption)
    depth = {"prove": latency + 2, "bmc": 2 * latency + 6, "cover": 2 * latency + 6}[mode]
    run = run_harness(harness, ctx.workdir, f"stream_{unit}", mode=mode, depth=depth,
                      timeout=ctx.timeout)
    return proof_result(run, f"{unit}, latency {latency}")


for _unit, _lat, _quick in (("modadd", 0, True), ("modadd", 1, True),
                            ("special-barrett-54", 3, False), ("special-barrett-54", 6, False)):
    proof(GROUP, f"rtl-stream-{_unit}-lat{_lat}-prove", engine="sby-prove", quick=_quick,
          unit=_unit, latency=_lat, mode="prove",
          what="StreamPipeline: valid held and payload stable until taken (asserted on o_stream, "
               "assumed on i_stream), in-flight count <= latency, = popcount(valid), 0 => no "
               "output valid (k-induction)",
          size=f"{_unit} ({'64' if _unit == 'modadd' else '54'} bits), latency {_lat}")(
        stream_handshake)
proof(GROUP, "rtl-stream-modadd-scoreboard", engine="sby-bmc", quick=False, unit="modadd",
      latency=1, mode="bmc", scoreboard=True,
      what="StreamPipeline(ModAdd): a followed item leaves in order as (a + b) mod q, with "
           "random valid gaps and back-pressure (BMC)",
      size="64 bits, latency 1, depth 8")(stream_handshake)
proof(GROUP, "rtl-stream-modadd-cover", engine="sby-cover", unit="modadd", latency=1,
      mode="cover", scoreboard=True,
      what="StreamPipeline covers: a result comes out, back-pressure, full, transfer after "
           "back-pressure, the followed item arrives", size="64 bits, latency 1")(stream_handshake)
proof(GROUP, "control-rtl-stream-modadd-untied", engine="sby-prove", expect="UNKNOWN", quick=False,
      unit="modadd", latency=1, mode="prove", tie=False,
      what="CONTROL: the same handshake proof without the counter tied to the pipeline state "
           "(k-induction must not close: UNKNOWN)", size="64 bits, latency 1")(
    stream_handshake)
