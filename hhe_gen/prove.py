"""The proof registry and runner behind ``hhe-gen prove``.

Proofs are registered in code with :func:`proof`, like benchmarks with
:func:`hhe_gen.benchmarks.bench_case`.  Every core family keeps its harnesses in
``formal/<family>/`` (installed as ``hhe_gen.formal.<family>``) and registers its proofs in the
module ``hhe_gen.formal.<family>.proofs``, which this module finds and imports automatically.

A proof function receives a :class:`ProofContext` (a fresh work directory, a time limit, the
``quick`` flag) plus the keyword parameters given at registration, and returns a
:class:`ProofResult`.  Engines:

- ``"z3"``: integer-arithmetic statements about an algorithm (bounds, identities) decided by z3;
- ``"sby-prove"``, ``"sby-bmc"``, ``"sby-cover"``: SymbiYosys (smtbmc + yices) on an Amaranth
  harness (k-induction, bounded model check, cover);
- ``"python"``: exhaustive enumeration (used only for tiny sizes).

Example::

    @proof("arith", "barrett-quotient", what="Q-2 <= q_est <= Q for all x < 2^2k",
           size="k = 16..64, q symbolic", engine="z3")
    def _barrett(ctx):
        ...
        return ProofResult("PASS", checks=49)

A registered proof may state ``expect="FAIL"``: it is a deliberately broken design (a mutated
constant, a missing correction) that the engine must refute; such a proof counts as OK when it
FAILs, and as a problem when it passes (the harness would then be unable to find bugs).

``run_proofs(groups, quick)`` runs the selection with a progress display and returns one record
per proof (the JSON written by ``hhe-gen prove``): group, name, what, size, engine, depth,
status, expect, ok, seconds, checks, detail, workdir.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Proof", "ProofContext", "ProofResult", "proof", "proofs", "groups", "run_proof",
    "run_proofs", "summary_table", "STATUSES", "PROOF_MODULES",
]

#: Verdicts a proof can report.  PASS: proven (or cover reached); FAIL: refuted (counterexample);
#: UNKNOWN: the engine gave up (induction did not close, solver incomplete); TIMEOUT; ERROR: the
#: harness or the tool broke (an exception, a tool error); SKIP: a precondition is missing (e.g.
#: the core under proof does not exist yet).
STATUSES = ("PASS", "FAIL", "UNKNOWN", "TIMEOUT", "ERROR", "SKIP")

#: Extra modules that register proofs (besides ``hhe_gen.formal.<family>.proofs``).
PROOF_MODULES: list[str] = []


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


def _proof_modules() -> list[str]:
    """``hhe_gen.formal.<family>.proofs`` for every family that has one, then PROOF_MODULES."""
    import pkgutil

    import hhe_gen.formal as formal
    found = []
    for info in pkgutil.iter_modules(formal.__path__):
        if not info.ispkg or info.name.startswith("_"):
            continue
        name = f"{formal.__name__}.{info.name}.proofs"
        if importlib.util.find_spec(name) is not None:
            found.append(name)
    return found + [m for m in PROOF_MODULES if m not in found]


def _load():
    for module in _proof_modules():
        importlib.import_module(module)


def groups() -> list[str]:
    """The groups that have at least one registered proof, sorted."""
    _load()
    return sorted({g for g, _ in _REGISTRY})


def proofs(selected_groups=None, quick: bool = False) -> list[Proof]:
    """The registered proofs of ``selected_groups`` (all when None or empty), in registration
    order; with ``quick`` only those marked quick.

    Raises
    ------
    ParameterError   for a group that has no proofs
    """
    _load()
    unknown = set(selected_groups or ()) - set(groups())
    if unknown:
        from .params.errors import ParameterError
        raise ParameterError("group", sorted(unknown)[0], "one of " + ", ".join(groups()))
    return [p for p in _REGISTRY.values()
            if (not selected_groups or p.group in selected_groups) and (p.quick or not quick)]


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
        from .toolchain import ToolError, ToolMissing
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


_STYLE = {"PASS": "green", "FAIL": "red", "UNKNOWN": "yellow", "TIMEOUT": "yellow",
          "ERROR": "bold red", "SKIP": "dim"}


def _status_cell(record: dict) -> str:
    status = record["status"]
    if record["expect"] != "PASS":
        note = "expected" if record["ok"] else f"expected {record['expect']}"
        style = "green" if record["ok"] else "bold red"
        return f"[{style}]{status} ({note})[/]"
    return f"[{_STYLE.get(status, '')}]{status}[/]"


def summary_table(records: list[dict], title: str = "hhe-gen prove"):
    """A rich Table: proof, what it proves, size, engine, depth, checks (solver queries or
    harness runs), status, seconds."""
    from rich.table import Table
    ok = sum(r["ok"] for r in records)
    t = Table(title=f"{title}: {ok}/{len(records)} as expected", title_justify="left")
    t.add_column("proof", no_wrap=True)
    t.add_column("what it proves")
    t.add_column("size")
    t.add_column("engine", no_wrap=True)
    t.add_column("depth", justify="right")
    t.add_column("checks", justify="right")
    t.add_column("status", no_wrap=True)
    t.add_column("seconds", justify="right")
    for r in records:
        t.add_row(f"{r['group']}/{r['name']}", r["what"], r["size"], r["engine"],
                  "" if r["depth"] is None else str(r["depth"]), str(r["checks"]),
                  _status_cell(r), f"{r['seconds']:.2f}")
    return t


def run_proofs(selected_groups=None, quick: bool = False, *, workdir=None,
               timeout: float | None = None, progress: bool = True, console=None,
               names=None) -> list[dict]:
    """Run the selected proofs one after the other, with a progress display.

    Parameters
    ----------
    selected_groups : list[str] | None   groups to run (None / empty: all)
    quick : bool             only the quick proofs, each on its quick data
    workdir : path | None    where proof files go (default: a new temporary folder)
    timeout : float | None   per tool run, seconds
    progress : bool          show a rich progress bar and one line per finished proof
    console : rich Console | None   where to print (default: hhe_gen.report.console)
    names : iterable[str] | None     run only proofs whose name is in it

    Returns
    -------
    list[dict]   one record per proof (see :func:`run_proof`), in registration order
    """
    import tempfile

    selected = proofs(selected_groups, quick=quick)
    if names is not None:
        wanted = set(names)
        selected = [p for p in selected if p.name in wanted or p.key in wanted]
    if workdir is None:
        workdir = tempfile.mkdtemp(prefix="hhe-gen-prove-")
    records = []
    if not progress:
        for p in selected:
            records.append(run_proof(p, workdir, timeout=timeout, quick=quick))
        return records
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if console is None:
        from .report import console
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("proofs", total=len(selected))
        for p in selected:
            bar.update(task, description=f"{p.key} ({p.engine})")
            record = run_proof(p, workdir, timeout=timeout, quick=quick)
            records.append(record)
            mark = "ok " if record["ok"] else "!! "
            bar.console.print(f"{mark}{_status_cell(record)} {p.key} "
                              f"[dim]{record['seconds']:.2f} s[/]")
            bar.advance(task)
    return records
