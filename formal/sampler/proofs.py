"""The proofs of ``hhe-gen prove sampler`` (registered with :func:`hhe_gen.flow.proof.proof`).

Each proof builds one harness of this package at one core configuration and runs its ``.sby``
tasks: ``prove`` (k-induction) and ``cover`` (every cover reached); PASS needs both.  The
mutants (``expect="FAIL"``) run ``prove`` on a deliberately broken core (:mod:`.mutants`): the
base case must find a counterexample.  ``quick`` proofs are the default test run's; the others
are the further sizes (``hhe-gen prove sampler`` runs them all).
"""

from __future__ import annotations

from hhe_gen.formal.common.sby import tasks_result
from hhe_gen.flow.proof import proof

from hhe_gen.cores.sampler.bytes import choose_structure

from . import mutants

GROUP = "sampler"

_RUBATO_128ML = (523776498, 1392759815, 1888801005, 2083648537, 2147483647, 2146112362, 2147366230,
                 2147476666, 2147483359, 2147483638, 2147483647)


def _run(ctx, name, tasks=("prove", "cover"), **params):
    from . import prove

    results = prove(name, ctx.workdir, tasks=tasks, timeout=ctx.timeout, **params)
    return tasks_result(results, ctx.workdir / f"{name}.sby")


def _register(name, harness_name, what, size, *, quick=True, expect="PASS", **params):
    tasks = ("prove",) if expect == "FAIL" else ("prove", "cover")
    engine = "sby-prove"

    @proof(GROUP, name, what=what, size=size, engine=engine, quick=quick, expect=expect)
    def _fn(ctx):
        return _run(ctx, harness_name, tasks=tasks, **params)
    return _fn


# -- byte gatherer ---------------------------------------------------------------------------------
_GATHER_WHAT = ("ByteGatherer: every output byte is the right input byte (nothing lost, reused or "
                "reordered), count bookkeeping, stream rules; covers")
for w, k, variable, structure, quick in [
        (1, 4, False, None, True), (2, 5, False, None, True), (8, 8, False, None, False),  # shift, window, beat
        (8, 7, False, None, False), (8, 3, False, None, False), (8, 2, True, None, False),
        (8, 1, False, None, False), (1, 3, True, None, False), (4, 8, True, None, False),
        (2, 8, False, None, False), (1, 1, False, None, False),
        (2, 5, False, "buffer", False), (8, 7, False, "buffer", False), (8, 2, True, "buffer", False)]:
    kind, _ = choose_structure(w, k, variable, structure)
    _register(f"gatherer-w{w}-k{k}{'-variable' if variable else ''}{'-' + structure if structure else ''}",
              "gatherer", _GATHER_WHAT,
              f"W = {w}, k = {k}{' (variable take)' if variable else ''}, {kind} structure, "
              f"first 64 stream bytes", quick=quick, in_bytes=w, word_bytes=k, variable=variable,
              structure=structure)
_register("mutant-gatherer-corrupt-byte", "gatherer", "a gatherer that alters byte 0x5a is refuted",
          "W = 1, k = 2", expect="FAIL", in_bytes=1, word_bytes=2, core=mutants.CorruptingGatherer)

# -- Gaussian: constant time and contract ----------------------------------------------------------
_TIMING_WHAT = ("GaussianCDT: two copies fed different bytes with the same handshakes have the same "
                "ready/valid in every cycle (cycle count independent of the drawn value)")
_register("gaussian-timing-parallel-w8", "gaussian_timing", _TIMING_WHAT,
          "CKKS table (sigma 3.2, B = 20, 63-bit u), 20 comparators, W = 8", in_bytes=8)
_register("gaussian-timing-rubato128m-c3-w4", "gaussian_timing", _TIMING_WHAT,
          "Rubato Par-128M/L table (defect included, 31-bit u), 3 comparators, W = 4", quick=False,
          in_bytes=4, bits=31, table=_RUBATO_128ML, comparators=3)
_register("gaussian-timing-c7-w2-residues", "gaussian_timing", _TIMING_WHAT,
          "CKKS table, 7 comparators (3 steps), W = 2, residues mod 97 and 12289", quick=False,
          in_bytes=2, comparators=7, moduli=(97, 12289))
_register("gaussian-timing-c1-w1", "gaussian_timing", _TIMING_WHAT,
          "CKKS table, 1 comparator (20 steps), W = 1", quick=False, in_bytes=1, comparators=1)
_register("mutant-gaussian-timing-leak", "gaussian_timing",
          "a scan that holds a zero sample one cycle longer is refuted", "CKKS table, W = 8",
          expect="FAIL", in_bytes=8, core=mutants.LeakyGaussianCDT)

_CONTRACT_WHAT = ("CDTScan: the n-th output is sign ? -c : c with c = #{k : T[k] < u} of the n-th "
                  "input word, over the whole table")
_register("cdt-contract-c7", "cdt_contract", _CONTRACT_WHAT, "CKKS table (B = 20, 64-bit words), 7 comparators",
          comparators=7)
_register("cdt-contract-parallel", "cdt_contract", _CONTRACT_WHAT, "CKKS table, 20 comparators", quick=False)
_register("cdt-contract-c1", "cdt_contract", _CONTRACT_WHAT, "CKKS table, 1 comparator", quick=False,
          comparators=1)
_register("cdt-contract-rubato128m-c4", "cdt_contract", _CONTRACT_WHAT,
          "Rubato Par-128M/L table (defect included), 32-bit words, 4 comparators", quick=False,
          table=_RUBATO_128ML, word_bits=32, comparators=4)
_register("mutant-cdt-contract-less-equal", "cdt_contract", "a scan comparing T <= u is refuted",
          "CKKS table, 7 comparators", expect="FAIL", comparators=7, core=mutants.LessEqualScan)

# -- rejection -------------------------------------------------------------------------------------
_REJECT_WHAT = ("RejectionFilter: every output is < q and equals the masked word; accepted words come "
                "out once, rejected ones never; stream rules")
_register("rejection-rns54-runtime", "rejection", _REJECT_WHAT,
          "three 54/55-bit moduli selected at run time, 56-bit words", word_bits=56,
          moduli=(18014398508400641, 18014398508138497, 36028797018652673))
_register("rejection-rubato-q26", "rejection", _REJECT_WHAT, "q = 65929217 (26 bits), 32-bit words",
          quick=False, word_bits=32, moduli=(65929217,))
_register("rejection-rubato-q25", "rejection", _REJECT_WHAT, "q = 33292289 (25 bits), 32-bit words",
          quick=False, word_bits=32, moduli=(33292289,))
_register("rejection-q12289", "rejection", _REJECT_WHAT, "q = 12289 (14 bits), 16-bit words", quick=False,
          word_bits=16, moduli=(12289,))
_register("mutant-rejection-accepts-q", "rejection", "a filter accepting v <= q is refuted",
          "q = 12289, 16-bit words", expect="FAIL", word_bits=16, moduli=(12289,), core=mutants.OffByOneFilter)

# -- ternary ---------------------------------------------------------------------------------------
_register("ternary-pieces", "ternary", "PieceSelector: the n-th output is the n-th accepted 2-bit piece, "
          "mapped to {0, +1, -1}; rejected pieces never come out", "8-bit bytes, first 64 pieces")
_register("ternary-pairs", "ternary_pairs", "PiecePairSelector: the n-th value out (two a cycle, value 0 of a pair "
          "first) is the n-th accepted 2-bit piece, mapped to {0, +1, -1}; rejected pieces never come out",
          "8-bit bytes, first 64 pieces")
_register("mutant-ternary-pairs-swapped", "ternary_pairs", "a pair selector giving a pair's values in swapped "
          "order is refuted", "8-bit bytes", expect="FAIL", core=mutants.SwappingPairSelector)
_register("mutant-ternary-negated", "ternary", "a selector with +1 and -1 swapped is refuted", "8-bit bytes",
          expect="FAIL", core=mutants.NegatingSelector)
