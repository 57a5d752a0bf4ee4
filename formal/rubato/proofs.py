"""The proofs of ``hhe-gen prove rubato`` (registered with :func:`hhe_gen.flow.proof.proof`).

* ``datapath-q<q>-l<L>``: the datapath equals the layers of docs/rubato.md section 2 (ARK, MixColumns, MixRows,
  Feistel) at v = 4, n = 16 and a small prime q, every committed word (:mod:`.datapath`, BMC over
  the whole sequence, plus covers; about 5 minutes each on this machine, so not quick).
  ``datapath-q31-l4-ark-mc`` (quick) stops after MixColumns, ``-linear`` after MixRows.
* ``mutant-datapath-*`` (``expect="FAIL"``): the same harness with a wrong specification for one
  layer must be refuted (the harness can fail).
* ``round-keys-q<q>-l<L>[-butterfly|-none]``: round-constant intake never uses a rejected word - the
  core's round-key path (:class:`~hhe_gen.cores.rubato.round_keys.RoundKeySchedule`) with free
  XOF words: every round key written is key[i] * (the i-th accepted word, masked) mod q, in
  order, and no rejected word reaches the multiplier (:mod:`.round_keys`; k-induction, depth
  10, plus covers to depth 60: a block's 48 round keys all written; ``-none``: no multiplier, the
  constants themselves written and the key in L banks).  ``mutant-round-keys-*``:
  a filter that lets words q .. q'-1 through is refuted.
* ``core-streams-q31-l16``: the whole core (XOF, round keys, datapath, output) at q = 31, noise
  off: ``o_stream`` obeys the stream rules, words and commands balance (l words per accepted
  command, none without one, a command only once the previous block's words are out but the
  last), ready only when idle (:mod:`.core`; k-induction depth 3).  ``core-block-cover-q31-l16``
  (slow): BMC cover of a whole block (the last word taken) at the block's cycle count + 20 =
  151 steps; not yet seen to finish: on the loaded 2-core machine smtbmc was at step 116 after
  16 minutes (25-40 s per step and growing) when stopped.  The round-key and datapath covers
  above reach their ends (all 48 round keys written; every phase committed).
"""

from __future__ import annotations

from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness

GROUP = "rubato"


def _result(runs, note):
    for run in runs:
        if not run.passed:
            return ProofResult(run.status, depth=run.depth, detail=run.summary(), workdir=str(run.workdir))
    return ProofResult("PASS", depth=runs[0].depth, checks=len(runs), detail=note, workdir=str(runs[0].workdir))


def datapath(ctx, q: int, lanes: int, mutate=None, cover=True, layers=None):
    from .datapath import SEQUENCE, DatapathHarness

    layers = SEQUENCE if layers is None else layers
    harness = DatapathHarness(q, lanes, mutate, layers)
    name = f"datapath_q{q}_l{lanes}_{len(layers)}" + (f"_{mutate.lower()}" if mutate else "")
    runs = [run_harness(harness.build(), ctx.workdir, name, mode="bmc", depth=harness.depth, timeout=ctx.timeout)]
    if cover and runs[0].passed:
        runs.append(run_harness(DatapathHarness(q, lanes, mutate, layers).build(), ctx.workdir, name, mode="cover",
                                depth=harness.depth, timeout=ctx.timeout))
    return _result(runs, f"BMC depth {harness.depth} + covers")


_WHAT = ("RubatoDatapath == the specified layers (ARK with free round keys, MixColumns, MixRows, "
         "Feistel), every committed word; covers")
_LINEAR = ("ARK", "MIX_COLUMNS", "MIX_ROWS")
_FIRST = ("ARK", "MIX_COLUMNS")
# (q, lanes, layers, quick): the quick one stops after MixColumns (BMC cost grows fast with the
# depth: ARK+MC ~20 s, +MR ~2 min, +Feistel ~5 min on this machine)
for _q, _lanes, _layers, _quick in [(31, 4, _FIRST, True), (31, 4, _LINEAR, False), (31, 4, None, False),
                                    (31, 2, None, False),
                                    (31, 16, None, False), (127, 4, None, False), (17, 8, None, False)]:
    def _make(q=_q, lanes=_lanes, layers=_layers):
        def fn(ctx):
            return datapath(ctx, q, lanes, layers=layers)
        return fn
    _suffix = {None: "", _FIRST: "-ark-mc", _LINEAR: "-linear"}[_layers]
    proof(GROUP, f"datapath-q{_q}-l{_lanes}{_suffix}",
          what=_WHAT if not _layers else _WHAT.replace(", MixColumns, MixRows, Feistel",
                                                       ", then " + ", ".join(_layers[1:])),
          size=f"v=4, n=16, q={_q}, lanes={_lanes}", engine="sby-bmc", quick=_quick)(_make())

for _layer, _quick in (("ARK", True), ("MIX_COLUMNS", True), ("MIX_ROWS", False), ("FEISTEL", False)):
    def _make_mutant(layer=_layer):
        def fn(ctx):
            return datapath(ctx, 31, 4, mutate=layer, cover=False)
        return fn
    proof(GROUP, f"mutant-datapath-{_layer.lower().replace('_', '')}",
          what=f"a wrong {_layer} specification is refuted", size="v=4, n=16, q=31, lanes=4",
          engine="sby-bmc", quick=_quick, expect="FAIL")(_make_mutant())


def round_keys(ctx, q: int, lanes: int, multiplier: str = "barrett", mutant=None, cover=True):
    from .round_keys import RoundKeyHarness

    name = f"round_keys_q{q}_l{lanes}_{multiplier}" + (f"_{mutant}" if mutant else "")
    make = lambda: RoundKeyHarness(q, lanes, multiplier, mutant).build()  # noqa: E731
    runs = [run_harness(make(), ctx.workdir, name, mode="prove", depth=ROUND_KEYS_K, timeout=ctx.timeout)]
    if cover and runs[0].passed:
        runs.append(run_harness(make(), ctx.workdir, name, mode="cover", depth=ROUND_KEYS_COVER,
                                timeout=ctx.timeout))
    return _result(runs, f"k-induction depth {ROUND_KEYS_K} + covers to depth {ROUND_KEYS_COVER}")


ROUND_KEYS_K, ROUND_KEYS_COVER = 10, 60
_RK_WHAT = ("round-constant intake never uses a rejected word: with free XOF words, every round key "
            "written is key[J mod n] * (the J-th accepted candidate, masked) mod q, written in order "
            "to bank J mod L, address J div L; no word >= q enters the multiplier; covers")
_RK_WHAT_NONE = ("round-constant intake without a multiplier (ARK multiplies on the crypto unit's array): "
                 "with free XOF words, every word written is the J-th accepted candidate, masked, written "
                 "in order to bank J mod L, address J div L, and the key banks hold key[J mod n]; no word "
                 ">= q is written; covers")
for _q, _lanes, _mult, _quick in [(17, 2, "barrett", True), (31, 4, "butterfly", True), (17, 1, "barrett", False),
                                  (17, 16, "barrett", False), (31, 2, "butterfly", False),
                                  (127, 8, "barrett", False), (17, 2, "none", True), (31, 4, "none", False)]:
    def _make_rk(q=_q, lanes=_lanes, mult=_mult):
        def fn(ctx):
            return round_keys(ctx, q, lanes, mult)
        return fn
    proof(GROUP, f"round-keys-q{_q}-l{_lanes}" + ("" if _mult == "barrett" else f"-{_mult}"),
          what=_RK_WHAT if _mult != "none" else _RK_WHAT_NONE,
          size=f"Par-80S n=16, r=2 (48 constants), q={_q} (32-bit candidates masked to {_q.bit_length()} "
               f"bits), lanes={_lanes}, " + ("no multiplier (the constants kept)" if _mult == "none"
                                             else f"{_mult} multiplier"),
          engine="sby-prove", quick=_quick)(_make_rk())


@proof(GROUP, "mutant-round-keys-loose-filter", what="a filter that passes masked words q .. q'-1 is refuted",
       size="q=17 (filter for 19), lanes=2", engine="sby-prove", expect="FAIL")
def _mutant_round_keys(ctx):
    return round_keys(ctx, 17, 2, mutant="loose-filter", cover=False)


def core_streams(ctx, q: int, lanes: int, cover: bool):
    from .core import CoreStreamHarness

    harness = CoreStreamHarness(q, lanes)
    name = f"core_q{q}_l{lanes}"
    if cover:
        depth = harness.cover_depth()
        run = run_harness(harness.build(), ctx.workdir, name, mode="cover", depth=depth, timeout=ctx.timeout)
        return _result([run], f"cover depth {depth} (one block: {harness.dut.cycles_per_block()} cycles "
                               "without rejections)")
    run = run_harness(harness.build(covers=False), ctx.workdir, name, mode="prove", depth=CORE_K,
                      timeout=ctx.timeout)
    return _result([run], f"k-induction depth {CORE_K}")


CORE_K = 3
proof(GROUP, "core-streams-q31-l16",
      what="RubatoCore: o_stream stream rules; l words per accepted command, none without one; a "
           "command taken only when idle and at most the previous block's last word is waiting",
      size="Par-80S n=16 r=2 l=12 at q=31, lanes=16, noise off, real SHAKE256 XOF", engine="sby-prove",
      quick=True)(lambda ctx: core_streams(ctx, 31, 16, cover=False))
proof(GROUP, "core-block-cover-q31-l16", what="RubatoCore: a whole block completes (its last word is taken)",
      size="Par-80S n=16 r=2 l=12 at q=31, lanes=16, noise off, real SHAKE256 XOF", engine="sby-cover",
      quick=False)(lambda ctx: core_streams(ctx, 31, 16, cover=True))
