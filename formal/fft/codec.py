"""Formal harnesses of the CKKS decoder's streaming CRT (:class:`hhe_gen.cores.ckks.CrtCentre`) at
small moduli (``hhe-gen prove fft``, registered in :mod:`.proofs`).

* **CRT equivalence** (:func:`crt_equivalence`): at full rate from the initial state, a free input
  (every residue combination with r_i < q_i, assumed) comes out after exactly ``latency`` cycles
  equal to the centred CRT value of a table built here by enumerating x in (-Q/2, Q/2]
  (independent of the model's formula and of the core's Barrett steps); BMC, one checked step.
  The pipeline has one global enable (data registers move only with their valid bits), so stalls
  do not change values: the stream proof below covers the handshakes.  (A scoreboard under free
  stalls needs cross-stage data invariants for k-induction: not stated.)
* **CRT stream rules** (:func:`crt_stream`): inputs free under the stream rules (assumed), output
  rules asserted, in-flight count <= 6 and equal to the pipeline's valid bits (k-induction).
* **Encoder / decoder stream rules** (:func:`codec_stream_bmc`): the whole core (N = 16, P = 1,
  W = 8, F = 5, moduli (97, 193), Delta = 2^4; the decoder through its CRT) with free inputs
  under the stream rules (assumed) and free back-pressure: the output rules asserted (BMC over
  cycles() + 8 steps from reset: bounded, because the encoder gives 2L*n/P beats per n/P taken
  and the decoder n/P per N/P, so the generic harness's in-flight count does not apply), and an
  output transfer covered.  Measured (slow set, loaded machine): decoder BMC PASS at 69 steps in
  606 s, decoder and encoder covers PASS (3 s each); the encoder BMC (79 steps) was stopped
  after 2 minutes unfinished and has not been run to the end.
* Moduli (3, 5, 7) (quick) and (5, 7, 11); mutant (expected FAIL): the table with one wrong
  entry.
"""

from __future__ import annotations

import math

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Signal, Value, signed

from hhe_gen.flow.proof import ProofResult

from ..common.sby import find_signal, formal_module, run_harness
from ..common.stream import popcount, stream_harness, stream_rules

__all__ = ["crt_table", "crt_equivalence", "crt_stream", "codec_stream_bmc"]


def crt_table(moduli) -> dict:
    """{(r_0, .., r_{L-1}): x} for every x in (-Q/2, Q/2] (by enumeration)."""
    big_q = math.prod(moduli)
    return {tuple(x % q for q in moduli): x for x in range(-(big_q // 2), big_q // 2 + 1)}


def _spec_rom(dut, moduli, mutant):
    table = crt_table(moduli)
    if mutant:
        key = tuple((math.prod(moduli) // 2) % q for q in moduli)
        table[key] = -table[key]
    # flat index over the packed residues (every qbits-bit field; the values >= q_i, which the
    # input assumption excludes, stay 0)
    entries = [0] * (1 << (dut.qbits * len(moduli)))
    for res, x in table.items():
        entries[sum(r << (i * dut.qbits) for i, r in enumerate(res))] = x
    return Array(Const(x, signed(dut.cbits)) for x in entries), len(table)


def _in_range(lane, moduli, qb):
    ok = Const(1, 1)
    for i, q in enumerate(moduli):
        ok = ok & (lane[i * qb:(i + 1) * qb] < q)
    return ok


def crt_equivalence(ctx, moduli, mutant: bool = False) -> ProofResult:
    """Full rate from the initial state: one free input (every residue combination with r_i < q_i)
    enters in cycle 0 and is on o_stream in cycle ``latency`` (asserted valid) equal to the table
    entry; BMC depth latency + 2."""
    from hhe_gen.cores.ckks import CrtCentre
    dut = CrtCentre(moduli, 1)
    rom, count = _spec_rom(dut, moduli, mutant)
    m, _ = formal_module()
    m.submodules.dut = dut
    x = Signal(len(Value.cast(dut.i_stream.payload)), name="x")
    m.d.comb += [x.eq(AnyConst(len(x))), Assume(_in_range(x, moduli, dut.qbits)),
                 dut.i_stream.valid.eq(1), dut.o_stream.ready.eq(1), Value.cast(dut.i_stream.payload).eq(x)]
    cycle = Signal(range(dut.latency + 2), name="cycle")
    with m.If(cycle <= dut.latency):
        m.d.sync += cycle.eq(cycle + 1)
    with m.If(cycle == dut.latency):
        m.d.comb += [Assert(dut.o_stream.valid, "output valid after the latency"),
                     Assert(Value.cast(dut.o_stream.payload[0]) == Value.cast(rom[x]), "CRT value differs")]
    run = run_harness(m, ctx.workdir, "crt_equivalence", mode="bmc", depth=dut.latency + 2, timeout=ctx.timeout)
    detail = f"moduli {tuple(moduli)}, Q = {math.prod(moduli)}, latency {dut.latency}, {count} residue combinations"
    return ProofResult(run.status, depth=run.depth, detail=detail if run.passed else run.summary(),
                       workdir=str(run.workdir))


def crt_stream(ctx, moduli, depth: int = 10) -> ProofResult:
    """Stream rules asserted on o_stream (assumed on i_stream, with r_i < q_i), in-flight count
    <= 6 and equal to the pipeline's valid bits (k-induction); covers."""
    from hhe_gen.cores.ckks import CrtCentre
    from hhe_gen.cores.ckks.crt import CRT_STAGES
    dut = CrtCentre(moduli, 1)

    def occupancy(frag):
        return popcount(Cat(*(find_signal(frag, f"valid{s + 1}") for s in range(CRT_STAGES))))[:8]

    harness = stream_harness(dut, capacity=CRT_STAGES, occupancy=occupancy,
                             input_assumption=lambda p: _in_range(Value.cast(p), moduli, dut.qbits))
    run = run_harness(harness, ctx.workdir, "crt_stream", mode="prove", depth=depth, timeout=ctx.timeout)
    return ProofResult(run.status, depth=run.depth,
                       detail=f"moduli {tuple(moduli)}" if run.passed else run.summary(), workdir=str(run.workdir))


def codec_stream_bmc(ctx, kind: str, mode: str = "bmc") -> ProofResult:
    """Stream rules of the CKKS encoder (``kind`` "encoder") or decoder at N = 16 (see the module
    docstring); ``mode`` "bmc" (rules asserted) or "cover" (an output transfer reached)."""
    from amaranth.asserts import AnySeq
    from amaranth.hdl import Cover

    from hhe_gen.cores.ckks import Decoder, Encoder
    from hhe_gen.models.fft import FixedPointFormat
    fmt = FixedPointFormat(8, 5)
    if kind == "encoder":
        dut = Encoder(16, 1, fmt, 4, (97, 193))
    else:
        dut = Decoder(16, 1, fmt, 4, (97, 193))
    m, _ = formal_module()
    m.submodules.dut = dut
    pl = Value.cast(dut.i_stream.payload)
    m.d.comb += [dut.i_stream.valid.eq(AnySeq(1)), pl.eq(AnySeq(len(pl))), dut.o_stream.ready.eq(AnySeq(1))]
    stream_rules(m, dut.i_stream, check=Assume, name="in")
    out = stream_rules(m, dut.o_stream, check=Assert, name="out")
    m.d.comb += Cover(out["transfer"])
    depth = dut.cycles() + 8
    run = run_harness(m, ctx.workdir, f"{kind}_stream_{mode}", mode=mode, depth=depth, timeout=ctx.timeout)
    return ProofResult(run.status, depth=run.depth,
                       detail=f"{kind}, N = 16, P = 1, W = 8, cycles() = {dut.cycles()}" if run.passed
                       else run.summary(), workdir=str(run.workdir))
