"""The proofs of ``hhe-gen prove engine`` (registered with :func:`hhe_gen.flow.proof.proof`).

All run the harness of :mod:`.scheduler` (a TaskManager with free words, free abort and free mock
units; B = 4 buffers, S = 2 slots, the five CKKS units, window 4, no queue, unless the size says
otherwise), one SymbiYosys run each:

* quick (the default test run): each property on its own at window 4 - ``hazard-w4`` (and
  ``-inorder``, ``-exclusive``), ``serial-w4``, ``completion-w4``, ``error-w4`` (k-induction depth 2),
  ``liveness-w4`` (depth bound + 2 = 9); ``tight-retire-bound`` (the bound one lower is refuted,
  expect FAIL), ``covers-w4``, and one mutant per safety property (:mod:`.mutants`, expect FAIL);
  ``safety-w4-crypto`` and ``liveness-w4-crypto``: the same rules with NTT and POINTWISE on one
  port (the crypto unit of the shared datapath, exclusive reads);
* slow: all properties in one run, in-order liveness, L = 3 with always-ready units, window 8,
  all seven units, and all units with NTT, POINTWISE, CODEC and RUBATO on one port.

Measured on this machine (2 cores, other jobs running; wall time of the sby run): quick -
hazard-w4 8 s, hazard-w4-inorder 9 s, serial-w4 6 s, completion-w4 5 s, error-w4 5 s,
liveness-w4 31 s, tight-retire-bound 45 s (FAIL, as expected), covers-w4 4 s (all 5 reached),
mutants 5 - 6 s each (FAIL, as expected); slow - all-w4 123 s, liveness-w4-inorder 21 s,
liveness-w4-l3-s0 19 s, tight-retire-bound-l3-s0 30 s (FAIL, as expected), safety-w8 36 s,
liveness-w8 71 s, safety-w4-all-units 10 s.
"""

from __future__ import annotations

from hhe_gen.cores.engine.isa import CKKS_UNITS, Unit
from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness
from .scheduler import induction_depth, retire_bound

GROUP = "engine"
ALL_UNITS = frozenset(u for u in Unit if u != Unit.NONE)


def _result(run, note):
    if not run.passed:
        return ProofResult(run.status, depth=run.depth, detail=run.summary(), workdir=str(run.workdir))
    return ProofResult("PASS", depth=run.depth, detail=f"{note}, {run.seconds:.0f} s",
                       workdir=str(run.workdir))


def scheduler(ctx, mode="prove", mutant=None, bound_delta=0, depth=None, **params):
    """Build :class:`.scheduler.SchedulerHarness` with ``params`` and run it in ``mode``."""
    from . import mutants
    from .scheduler import SchedulerHarness
    if mutant is not None:
        params["manager"] = getattr(mutants, mutant)
    if bound_delta:
        params["bound"] = retire_bound(params.get("latency", 2), params.get("stall", 1)) + bound_delta
    h = SchedulerHarness(**params)
    depth = depth or h.depth
    run = run_harness(h.build(), ctx.workdir, "scheduler", mode=mode, depth=depth, timeout=ctx.timeout)
    return _result(run, {"prove": "k-induction", "bmc": "BMC", "cover": "covers reached"}[mode]
                   + f" depth {depth}")


_WHAT = {
    "hazard": "no task is dispatched while an older unfinished entry has a RAW / WAR / WAW hazard with it (or is "
              "serialising{inorder}); the task is the entry's word, for its unit; in every state no dispatched "
              "entry has such an older unfinished entry",
    "serial": "a serialising instruction executes only at the head with no task in flight at any unit, none taken "
              "in that cycle and no younger entry dispatched; it is never dispatched; notify and the "
              "configuration registers change only by such an execution",
    "completion": "every unit's done completes exactly the entry it holds, in the next cycle (no lost or phantom "
                  "completion); a unit holds at most that task; the head retires only when completed or "
                  "serialising",
    "error": "a malformed word offered is taken at once and latches its cause and position in the next cycle "
             "(unless a unit's data error wins); the error stays until abort; after it nothing enters the "
             "window or binds a slot",
    "liveness": "bounded liveness: the head retires within {bound} cycles of becoming the head "
                "({formula}), with free words, free abort, units answering within L and ready within S",
}
_SIZE = ("B = 4, S = 2, {units}, window {w}, {order}, no queue; mocks: done within L = {L}, ready "
         "within S = {S}; {mode} depth {depth}")


def _register(name, props, *, quick, window=4, ooo=True, latency=2, stall=1, units=CKKS_UNITS,
              exclusive_reads=False, groups=()):
    bound = retire_bound(latency, stall)
    what = "; ".join(_WHAT[p].format(inorder=", or - in order - not yet dispatched" if not ooo else "",
                                     bound=bound, formula="2L + S + 2" if stall else "2L + 1")
                     for p in props)
    size = _SIZE.format(units="the 5 CKKS units" if units == CKKS_UNITS else f"all {len(units)} units",
                        w=window, order="out of order" if ooo else "in order", L=latency, S=stall,
                        mode="k-induction", depth=induction_depth(props, bound))
    if exclusive_reads:
        what = what.replace("RAW / WAR / WAW", "RAW / WAR / WAW / RAR (exclusive_reads)")
    for group in groups:
        kinds = " + ".join(u.name for u in group)
        what += f"; {kinds} on one unit (one mock, its tasks one at a time)"
        size = size.replace("units,", f"units ({kinds} sharing one port),", 1)
    proof(GROUP, name, what=what, size=size, engine="sby-prove", quick=quick, window=window, ooo=ooo,
          latency=latency, stall=stall, properties=tuple(props), units=units,
          exclusive_reads=exclusive_reads, groups=tuple(groups))(scheduler)


# quick: each property on its own
for _p in ("hazard", "serial", "completion", "error"):
    _register(f"{_p}-w4", (_p,), quick=True)
_register("hazard-w4-inorder", ("hazard",), quick=True, ooo=False)
_register("hazard-w4-exclusive", ("hazard",), quick=True, exclusive_reads=True)
_register("liveness-w4", ("liveness",), quick=True)
proof(GROUP, "tight-retire-bound", engine="sby-bmc", expect="FAIL",
      what="the liveness bound is tight: asserting it one cycle lower (2L + S + 1 = 6) is refuted",
      size="as liveness-w4; BMC depth 12", properties=("liveness",), bound_delta=-1, mode="bmc",
      depth=12)(scheduler)
proof(GROUP, "covers-w4", engine="sby-cover",
      what="covers: window full, two units take a task in one cycle, a serialising instruction executes, "
           "a data error is latched, an offer is held",
      size="B = 4, S = 2, the 5 CKKS units, window 4; cover depth 10", properties=(), mode="cover",
      depth=10)(scheduler)
for _mutant, _prop in (("NoWarManager", "hazard"), ("LeakySerialManager", "serial"),
                       ("LostDoneManager", "completion"), ("ForgetfulErrorManager", "error")):
    proof(GROUP, f"mutant-{_mutant[:-len('Manager')].lower()}", engine="sby-bmc", expect="FAIL",
          what=f"a manager with the {_mutant} bug (formal/engine/mutants.py) is refuted by the harness "
               f"asserting the {_prop} rules (with the invariants)",
          size="B = 4, S = 2, the 5 CKKS units, window 4; BMC depth 6",
          properties=(_prop,), mutant=_mutant, mode="bmc", depth=6)(scheduler)

# the crypto unit (the shared datapath): NTT and POINTWISE on one port, the engine's exclusive reads
CRYPTO = ((Unit.NTT, Unit.POINTWISE),)
_register("safety-w4-crypto", ("hazard", "serial", "completion", "error"), quick=True, exclusive_reads=True,
          groups=CRYPTO)
_register("liveness-w4-crypto", ("liveness",), quick=True, exclusive_reads=True, groups=CRYPTO)

# slow
_register("all-w4", ("hazard", "serial", "completion", "error", "liveness"), quick=False)
_register("liveness-w4-inorder", ("liveness",), quick=False, ooo=False)
_register("liveness-w4-l3-s0", ("liveness",), quick=False, latency=3, stall=0)
proof(GROUP, "tight-retire-bound-l3-s0", engine="sby-bmc", expect="FAIL", quick=False,
      what="the liveness bound with always-ready units is tight: asserting 2L = 6 instead of 2L + 1 is refuted",
      size="as liveness-w4-l3-s0; BMC depth 14", properties=("liveness",), latency=3, stall=0,
      bound_delta=-1, mode="bmc", depth=14)(scheduler)
_register("safety-w8", ("hazard", "serial", "completion", "error"), quick=False, window=8)
_register("liveness-w8", ("liveness",), quick=False, window=8)
_register("safety-w4-all-units", ("hazard", "serial", "completion", "error"), quick=False, units=ALL_UNITS)
_register("safety-w4-all-units-one-array", ("hazard", "serial", "completion", "error"), quick=False,
          units=ALL_UNITS, exclusive_reads=True, groups=((Unit.NTT, Unit.POINTWISE, Unit.CODEC, Unit.RUBATO),))
