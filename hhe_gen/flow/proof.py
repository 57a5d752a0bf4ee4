"""Proof records: what a proof states, the decorator that registers it, and the runner of one proof.

Every core family registers its proofs with :func:`proof` in ``hhe_gen.formal.<family>.proofs``;
``hhe-gen prove`` (:mod:`hhe_gen.apps.prove`) finds those modules, selects and runs them.  A proof
function receives a :class:`ProofContext` plus the keyword parameters given at registration and
returns a :class:`ProofResult`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Proof", "ProofContext", "ProofResult", "proof", "run_proof", "registered", "STATUSES"]

#: Verdicts a proof can report.  PASS: proven (or cover reached); FAIL: refuted (counterexample);
#: UNKNOWN: the engine gave up (induction did not close, solver incomplete); TIMEOUT; ERROR: the
#: harness or the tool broke (an exception, a tool error); SKIP: a precondition is missing (e.g.
#: the core under proof does not exist yet).
STATUSES = ("PASS", "FAIL", "UNKNOWN", "TIMEOUT", "ERROR", "SKIP")

@dataclass
class ProofResult:
    """What one proof function returns.

    Members
    -------
    status : str        one of ``STATUSES``
    depth : int | None  the BMC / induction / cover depth used (sby engines)
    checks : int        how many solver queries the proof consists of (e.g. one per prime)
    detail : str        a counterexample, the reason for UNKNOWN/SKIP/ERROR, or a short note
    workdir : str | None  where the tool's files are (traces of a FAIL are there)
    """
    status: str
    depth: int | None = None
    checks: int = 1
    detail: str = ""
    workdir: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")


@dataclass
class ProofContext:
    """Passed to every proof function.

    Members
    -------
    workdir : Path        an empty directory for this proof's files (harness, .sby, traces)
    timeout : float | None   seconds a single tool run may take (None: no limit)
    quick : bool          the run is the quick (CI) selection: use the small variant of the data
    """
    workdir: Path
    timeout: float | None = None
    quick: bool = False


@dataclass(frozen=True)
class Proof:
    """One registered proof.

    Members
    -------
    group : str      the ``hhe-gen prove GROUP`` it belongs to ("arith", "common", ...)
    name : str       unique within the group
    fn : callable    ``fn(ctx: ProofContext, **params) -> ProofResult``
    what : str       the statement proven, in words
    size : str       the size it is proven at (widths, primes, depth)
    engine : str     "z3", "sby-prove", "sby-bmc", "sby-cover" or "python"
    quick : bool     part of the quick selection (``--quick``, the default test run)
    expect : str     "PASS", or "FAIL" for a deliberately broken design that must be refuted,
                     or "UNKNOWN" for a control run that must not close (e.g. k-induction
                     without the invariant that makes it inductive)
    params : dict    keyword arguments passed to ``fn``
    """
    group: str
    name: str
    fn: object
    what: str
    size: str
    engine: str
    quick: bool = True
    expect: str = "PASS"
    params: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.group}/{self.name}"


_REGISTRY: dict[tuple[str, str], Proof] = {}
_ENGINES = ("z3", "sby-prove", "sby-bmc", "sby-cover", "python")


def proof(group: str, name: str, *, what: str, size: str, engine: str, quick: bool = True,
          expect: str = "PASS", **params):
    """Decorator registering ``fn`` as proof ``group/name`` (see the module docstring).

    Parameters
    ----------
    group, name : str   identification (``name`` unique within ``group``)
    what : str          the statement proven
    size : str          the size it is proven at
    engine : str        one of "z3", "sby-prove", "sby-bmc", "sby-cover", "python"
    quick : bool        include in the quick selection
    expect : str        "PASS" (default), "FAIL" (a mutant that must be refuted) or
                        "UNKNOWN" (a control that must not close)
    **params            passed to ``fn`` after the context
    """
    if engine not in _ENGINES:
        raise ValueError(f"engine {engine!r} is not one of {_ENGINES}")
    if expect not in ("PASS", "FAIL", "UNKNOWN"):
        raise ValueError(f"expect {expect!r} is not 'PASS', 'FAIL' or 'UNKNOWN'")

    def register(fn):
        key = (group, name)
        if key in _REGISTRY:
            raise ValueError(f"proof {group}/{name} is registered twice")
        _REGISTRY[key] = Proof(group, name, fn, what, size, engine, quick, expect, dict(params))
        return fn
    return register


def registered() -> list[Proof]:
    """Every proof registered so far, in registration order."""
    return list(_REGISTRY.values())


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def run_proof(p: Proof, workdir=None, *, timeout: float | None = None,
              quick: bool = False) -> dict:
    """Run one proof and return its record (never raises for a failing or broken proof).

    Parameters
    ----------
    p : Proof
    workdir : path | None   parent folder for the proof's files (default: a new temporary one);
                            the proof gets ``<workdir>/<group>/<name>``
    timeout : float | None  per tool run, seconds
    quick : bool            passed on in the context

    Returns
    -------
    dict  with keys group, name, what, size, engine, depth, status, expect, ok, seconds,
          checks, detail, workdir
    """
    import shutil
    import tempfile

    if workdir is None:
        workdir = tempfile.mkdtemp(prefix="hhe-gen-prove-")
    own = Path(workdir).resolve() / _safe_name(p.group) / _safe_name(p.name)
    if own.exists():
        shutil.rmtree(own)
    own.mkdir(parents=True)
    ctx = ProofContext(own, timeout, quick)
    t0 = time.perf_counter()
    try:
        result = p.fn(ctx, **p.params)
        if not isinstance(result, ProofResult):
            raise TypeError(f"proof {p.key} returned {type(result).__name__}, not ProofResult")
    except Exception as exc:  # a broken harness must not hide the other proofs' results
        from hhe_gen.flow.tools import ToolError, ToolMissing
        if isinstance(exc, ToolError) and exc.returncode is None:
            result = ProofResult("TIMEOUT", detail=str(exc).splitlines()[0])
        elif isinstance(exc, ToolMissing):
            result = ProofResult("SKIP", detail=str(exc))
        else:
            result = ProofResult("ERROR", detail=f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - t0
    return {
        "group": p.group, "name": p.name, "what": p.what, "size": p.size, "engine": p.engine,
        "depth": result.depth, "status": result.status, "expect": p.expect,
        "ok": result.status == p.expect, "seconds": round(seconds, 3), "checks": result.checks,
        "detail": result.detail, "workdir": result.workdir or str(own),
    }
