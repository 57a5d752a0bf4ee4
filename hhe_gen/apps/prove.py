"""The proof registry and runner behind ``hhe-gen prove``.

Proofs are registered in code with :func:`proof`, like benchmarks with
:func:`hhe_gen.apps.bench.bench_case`.  Every core family keeps its harnesses in
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
per proof: group, name, what, size, engine, depth, status, expect, ok, seconds, checks, detail,
workdir.  ``hhe-gen prove`` adds them to its results file
(:func:`hhe_gen.apps.report.write_results`): the record of a proof run again replaces its earlier
one, the records of the other proofs stay.
"""

from __future__ import annotations

import importlib
import importlib.util

from hhe_gen.flow.proof import STATUSES, Proof, ProofContext, ProofResult, proof, registered, run_proof

__all__ = [
    "Proof", "ProofContext", "ProofResult", "proof", "proofs", "groups", "run_proof",
    "run_proofs", "summary_table", "STATUSES", "PROOF_MODULES",
]

#: Extra modules that register proofs (besides ``hhe_gen.formal.<family>.proofs``).
PROOF_MODULES: list[str] = []


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
    return sorted({p.group for p in registered()})


def proofs(selected_groups=None, quick: bool = False, names=None) -> list[Proof]:
    """The registered proofs of ``selected_groups`` (all when None or empty), in registration
    order; with ``quick`` only those marked quick; with ``names`` only those named (``name`` or
    ``group/name``), every one of which must be in that selection.

    Raises
    ------
    ParameterError   for a group that has no proofs ("group"), for a name that is not a proof of
                     the selection ("--only", listing the selection's names)
    """
    from hhe_gen.params.errors import ParameterError
    _load()
    unknown = set(selected_groups or ()) - set(groups())
    if unknown:
        raise ParameterError("group", sorted(unknown)[0], "one of " + ", ".join(groups()))
    chosen = [p for p in registered()
              if (not selected_groups or p.group in selected_groups) and (p.quick or not quick)]
    if names is None:
        return chosen
    wanted = set(names)
    missing = wanted - {p.name for p in chosen} - {p.key for p in chosen}
    if missing:
        where = ("the groups " + ", ".join(selected_groups) if selected_groups else "all groups") + \
            (" under --quick" if quick else "")
        raise ParameterError("--only", sorted(missing)[0], f"a proof of {where}, one of "
                             + (", ".join(dict.fromkeys(p.name for p in chosen)) or "(none)"))
    return [p for p in chosen if p.name in wanted or p.key in wanted]


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
    console : rich Console | None   where to print (default: hhe_gen.apps.report.console)
    names : iterable[str] | None     run only these proofs (``name`` or ``group/name``; see
                                     :func:`proofs`)

    Returns
    -------
    list[dict]   one record per proof (see :func:`run_proof`), in registration order

    Raises
    ------
    ParameterError   for an unknown group or name (:func:`proofs`), before any proof runs
    """
    import tempfile

    selected = proofs(selected_groups, quick=quick, names=names)
    if workdir is None:
        workdir = tempfile.mkdtemp(prefix="hhe-gen-prove-")
    records = []
    if not progress:
        for p in selected:
            records.append(run_proof(p, workdir, timeout=timeout, quick=quick))
        return records
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if console is None:
        from hhe_gen.apps.report import console
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
