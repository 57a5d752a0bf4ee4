"""The proofs of ``hhe-gen prove keccak`` (registered with :func:`hhe_gen.flow.proof.proof`).

Each proof builds one harness of this package at one core configuration and runs its ``.sby``
tasks (``round``: the combinational equivalence; ``sponge``: ``prove`` (k-induction) and
``cover``, PASS needs both).  The mutants (``expect="FAIL"``) run the proof on a deliberately
broken core (:mod:`.mutants`): it must be refuted.  ``quick`` proofs are the default test run's;
the others are the further configurations (``hhe-gen prove keccak`` runs them all).
"""

from __future__ import annotations

from hhe_gen.formal.common.sby import tasks_result
from hhe_gen.flow.proof import proof

from . import TASKS, mutants

GROUP = "keccak"


def _run(ctx, name, tasks, **params):
    from . import prove

    results = prove(name, ctx.workdir, tasks=tasks, timeout=ctx.timeout, **params)
    return tasks_result(results, ctx.workdir / f"{name}.sby")


def _register(name, harness_name, what, size, *, quick=True, expect="PASS", **params):
    tasks = ("prove",) if expect == "FAIL" else TASKS[harness_name]
    engine = "sby-bmc" if harness_name == "round" else "sby-prove"

    @proof(GROUP, name, what=what, size=size, engine=engine, quick=quick, expect=expect)
    def _fn(ctx):
        return _run(ctx, harness_name, tasks, **params)
    return _fn


# -- the round function ------------------------------------------------------------------------
_ROUND_WHAT = ("KeccakRounds(k) == the golden model's keccak_round (run on symbolic lanes) for every "
               "1600-bit state and round group, bit for bit")
_register("round-k1-groups-0-1-23", "round", _ROUND_WHAT,
          "full 1600-bit state, rounds 0, 1, 23 (run-time constant selection), BMC depth 1",
          rounds_per_cycle=1, steps=(0, 1, 23))
_register("round-k1-all", "round", _ROUND_WHAT,
          "full 1600-bit state, all 24 rounds (every iota constant), BMC depth 1",
          quick=False, rounds_per_cycle=1)
_register("round-k2-groups-0-11", "round", _ROUND_WHAT,
          "full state, two chained rounds, groups 0 (rounds 0-1) and 11 (rounds 22-23)",
          quick=False, rounds_per_cycle=2, steps=(0, 11))
# (the whole permutation as one block, k = 24, is not registered: building the model's 24
# chained rounds on symbolic lanes took over 6 GB and 15 minutes in the RTLIL conversion alone)
_register("mutant-round-wrong-rotation", "round", "a rho step with one wrong rotation is refuted",
          "full state, round 0", expect="FAIL", rounds_per_cycle=1, steps=(0,),
          core=mutants.WrongRotationRounds)
_register("mutant-round-wrong-constant", "round", "a wrong iota constant (round 23) is refuted",
          "full state, rounds 0 and 23", quick=False, expect="FAIL", rounds_per_cycle=1,
          steps=(0, 23), core=mutants.WrongConstantRounds)

# -- the sponge ----------------------------------------------------------------------------------
_SPONGE_WHAT = ("ShakeXof: no output before the last beat was absorbed, padded and permuted; no "
                "input after it; restart resets every register (state zero); stream rules; covers")
for variant, w, k, quick in [("both", 8, 12, True), (256, 8, 24, False), (128, 8, 1, False),
                             (256, 1, 24, False), ("both", 2, 3, False), (128, 4, 6, False),
                             (256, 8, 4, False)]:
    _register(f"sponge-{variant}-w{w}-k{k}", "sponge", _SPONGE_WHAT,
              f"SHAKE{variant if variant != 'both' else '128/256 (run time)'}, W = {w}, "
              f"k = {k}, 1600-bit state, round logic cut (free), k-induction depth {24 // k + 4}",
              quick=quick, variant=variant, beat_bytes=w, rounds_per_cycle=k)
for variant, w, p, quick in [(256, 8, 2, False), ("both", 8, 3, False)]:
    _register(f"sponge-{variant}-w{w}-p{p}", "sponge", _SPONGE_WHAT,
              f"SHAKE{variant if variant != 'both' else '128/256 (run time)'}, W = {w}, {p} planes per "
              f"cycle, 1600-bit state, the planes' logic cut (free), k-induction depth {24 * (-(-5 // p)) + 4}",
              quick=quick, variant=variant, beat_bytes=w, rounds_per_cycle=1, planes_per_cycle=p)
for variant, w, k, quick in [(256, 8, 12, True), (128, 8, 4, False)]:
    _register(f"sponge-{variant}-w{w}-k{k}-ring", "sponge", _SPONGE_WHAT,
              f"SHAKE{variant}, W = {w}, k = {k}, the rate's slots a ring (ring=True), 1600-bit state, round logic "
              f"cut (free), k-induction depth {24 // k + 4}",
              quick=quick, variant=variant, beat_bytes=w, rounds_per_cycle=k, ring=True)
for tag, mutant, what, quick in [
        ("dirty-restart", mutants.DirtyRestartXof,
         "a restart that keeps the state register is refuted", True),
        ("early-output", mutants.EarlyOutputXof,
         "output offered one cycle before the permutation ends is refuted", True),
        ("unstable-output", mutants.UnstableOutputXof,
         "an output beat changed under back-pressure is refuted", False)]:
    _register(f"mutant-sponge-{tag}", "sponge", what,
              "SHAKE256, W = 8, k = 12", quick=quick, expect="FAIL", variant=256, beat_bytes=8,
              rounds_per_cycle=12, core=mutant)
