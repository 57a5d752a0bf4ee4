"""The proofs of ``hhe-gen prove rubato`` (registered with :func:`hhe_gen.prove.proof`).

* ``datapath-q<q>-l<L>``: the datapath equals SPEC.md's layers (ARK, MixColumns, MixRows,
  Feistel) at v = 4, n = 16 and a small prime q, every committed word (:mod:`.datapath`, BMC over
  the whole sequence, plus covers; about 5 minutes each on this machine, so not quick).
  ``datapath-q31-l4-ark-mc`` (quick) stops after MixColumns, ``-linear`` after MixRows.
* ``mutant-datapath-*`` (``expect="FAIL"``): the same harness with a wrong specification for one
  layer must be refuted (the harness can fail).
"""

from __future__ import annotations

from hhe_gen.prove import ProofResult, proof

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


_WHAT = ("RubatoDatapath == SPEC.md layers (ARK with free round keys, MixColumns, MixRows, "
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
