"""The proofs of ``hhe-gen prove net`` (registered with :func:`hhe_gen.flow.proof.proof`).

The packetizer harness (:mod:`.packetizer`) at ``max_segment`` = 2, rows of 0 .. 5 coefficients:
bounded model checking from reset (``bmc``: every property in every cycle up to the depth, with
every mix of input gaps, back-pressure and abort: depth 16 holds the first whole packet when
nothing waits, depth 30 two), the covers (all reached by depth 30),
and a mutant (a packetizer that drops ``valid`` for a cycle inside a packet) that must be refuted.
"""

from __future__ import annotations

from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness

GROUP = "net"
_WHAT = ("Packetizer toward LiteEth's UDP port: handshake rules, no valid gap inside a packet (abort "
         "included), length held and within 24 + 8 + 4 .. 24 + 8 x max_segment + 4 bytes, last and last_be on word "
         "length / 4, the header's first two words")


def _run(ctx, mode, depth, **params):
    from .packetizer import PacketizerHarness
    run = run_harness(PacketizerHarness(**params).build(), ctx.workdir, "packetizer", mode=mode, depth=depth,
                      timeout=ctx.timeout)
    if not run.passed:
        return ProofResult(run.status, depth=run.depth, detail=run.summary(), workdir=str(run.workdir))
    return ProofResult("PASS", depth=run.depth, detail=f"{mode} depth {depth}, {run.seconds:.0f} s",
                       workdir=str(run.workdir))


@proof(GROUP, "packetizer-s2", what=_WHAT, size="max_segment 2, rows of 0 .. 5 coefficients, BMC depth 16",
       engine="sby-bmc", quick=True)
def packetizer_bmc(ctx):
    return _run(ctx, "bmc", 16)


@proof(GROUP, "packetizer-s2-d30", what=_WHAT, size="max_segment 2, rows of 0 .. 5 coefficients, BMC depth 30",
       engine="sby-bmc", quick=False)
def packetizer_bmc_30(ctx):
    return _run(ctx, "bmc", 30)


@proof(GROUP, "packetizer-s2-covers", what="a packet, two packets, a packet finished after abort, a stall inside "
       "a packet are reached", size="max_segment 2", engine="sby-cover", quick=True)
def packetizer_covers(ctx):
    return _run(ctx, "cover", 30)


@proof(GROUP, "packetizer-s3-deep", what=_WHAT, size="max_segment 3, rows of 0 .. 7 coefficients, BMC depth 60",
       engine="sby-bmc", quick=False)
def packetizer_deep(ctx):
    return _run(ctx, "bmc", 60, max_segment=3, max_total=7)


@proof(GROUP, "mutant-packetizer-valid-gap", what="a packetizer that drops valid for one cycle inside a packet "
       "is refuted", size="max_segment 2", engine="sby-bmc", quick=True, expect="FAIL")
def packetizer_mutant(ctx):
    from .mutants import GappyPacketizer
    return _run(ctx, "bmc", 16, core=GappyPacketizer)
