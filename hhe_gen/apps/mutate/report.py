"""Summaries, JSON, the results file and tables of a mutation run.

The results file (``hhe-gen mutate --json``, default ``mutate-results/mutate.json``) holds every
run's results, added to by each run like ``hhe-gen bench``'s::

    {"summary":   {family: {"mutants", "killed", "timeout", "survived", "seconds"}},   # of "mutants"
     "mutants":   [{"id", "family", "file", "line", "col", "operator", "original", "mutant",
                    "function", "context", "text", "status", "seconds", "detail"}, ...],
     "baselines": [{"tests", "seconds", "returncode", "baseline_failures", "dropped_files",
                    "timeout_per_mutant"}, ...],
     "runs":      [{"targets", "operators", "checks", "match", "tests", "sample", "seed", "root",
                    "total_mutants", "ran"}, ...]}

A run's mutant replaces the earlier record of the same ``id`` (file:line:col original -> mutant),
its baseline the earlier one of the same test files, its ``runs`` record the earlier one of the
same selection (:data:`RUN_KEY`); every other earlier record stays and ``summary`` is counted
again over all of them.  The one-run form written before (no ``runs``; ``root``, ``operators``,
``sample``, ``seed``, ``total_mutants`` at the top level) is read as one run.
"""

from __future__ import annotations

import json
from pathlib import Path

#: the fields of a ``runs`` record that say what was run: a run of the same selection replaces it
RUN_KEY = ("targets", "operators", "checks", "match", "tests", "sample", "seed")
#: the top-level fields of the one-run form, which became its ``runs`` record
_OLD_RUN_FIELDS = ("root", "operators", "sample", "seed", "total_mutants")


def summarize(results) -> dict:
    """Per family: mutants, killed (including timeouts), timeout, survived, seconds; of
    :class:`MutantResult` objects or their records (the results file's ``mutants``)."""
    out: dict[str, dict] = {}
    for r in results:
        rec = r if isinstance(r, dict) else {"family": r.mutant.family, "status": r.status, "seconds": r.seconds}
        fam = out.setdefault(rec.get("family") or "?", {"mutants": 0, "killed": 0, "timeout": 0, "survived": 0,
                                                        "seconds": 0.0})
        fam["mutants"] += 1
        fam["seconds"] = round(fam["seconds"] + float(rec.get("seconds") or 0.0), 3)
        if rec.get("status") == "survived":
            fam["survived"] += 1
        else:
            fam["killed"] += 1
            fam["timeout"] += rec.get("status") == "timeout"
    return out


def to_json(results, baselines=None, **run) -> dict:
    """One run's results in the results file's form (module docstring); ``run`` (the selection:
    :data:`RUN_KEY`, ``root``, ``total_mutants``), when given, is its ``runs`` record, with ``ran``:
    the number of mutants run."""
    data = {"summary": summarize(results), "mutants": [r.record() for r in results], "baselines": [], "runs": []}
    if baselines is not None:
        data["baselines"] = [{"tests": list(b.tests), "seconds": round(b.seconds, 2), "returncode": b.returncode,
                              "baseline_failures": b.failures, "dropped_files": b.dropped,
                              "timeout_per_mutant": round(b.timeout, 1)} for b in baselines.values()]
    if run:
        data["runs"] = [{**run, "ran": len(results)}]
    return data


def _refuse(path: Path, option: str, why: str):
    from hhe_gen.params.errors import ParameterError
    return ParameterError(option, str(path), f"a mutate results file or a new file, but {path} {why}; it is left "
                          f"as it is: move it away or choose another {option}")


def read_results(path, option: str = "--json") -> dict | None:
    """The results file ``path`` in the current form (module docstring; the one-run form read as
    one run), or None when there is no such file.

    Raises
    ------
    ParameterError  ``option``, when the file exists but is not such a file (it does not parse, or
                    has another shape); the file is left as it is
    OSError         when it exists but cannot be read
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(errors="replace"))
    except ValueError as exc:
        raise _refuse(path, option, f"does not parse as JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("mutants"), list) \
            or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in data["mutants"]):
        raise _refuse(path, option, 'is not {"mutants": [records with an id], ...}')
    baselines, runs = data.get("baselines", []), data.get("runs")
    if runs is None:                        # the one-run form: its run fields at the top level
        old = {k: data[k] for k in _OLD_RUN_FIELDS if k in data}
        runs = [{**old, "ran": len(data["mutants"])}] if old else []
    if not isinstance(baselines, list) or not all(isinstance(b, dict) and isinstance(b.get("tests"), list)
                                                  for b in baselines):
        raise _refuse(path, option, 'has "baselines" that are not [records with their tests]')
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise _refuse(path, option, 'has "runs" that are not [records]')
    return {"summary": summarize(data["mutants"]), "mutants": data["mutants"], "baselines": baselines,
            "runs": runs}


def _ident(part: str, rec: dict) -> str:
    if part == "mutants":
        return rec["id"]
    if part == "baselines":
        return json.dumps(sorted(map(str, rec["tests"] + list(rec.get("dropped_files") or []))))
    return json.dumps([rec.get(k) for k in RUN_KEY], default=str)


def merge(earlier: dict | None, data: dict) -> dict:
    """``earlier`` (a results file's content, :func:`read_results`; None: none) with the records of
    ``data`` (:func:`to_json`) in place of the earlier records of the same identity, the new ones
    appended, and the summary counted again (module docstring)."""
    from hhe_gen.apps.report import merge_results
    earlier = earlier or {"mutants": [], "baselines": [], "runs": []}
    out = {}
    for part in ("mutants", "baselines", "runs"):
        wrap = [[{"key": _ident(part, r), "record": r} for r in rows] for rows in (earlier[part], data[part])]
        out[part] = [w["record"] for w in merge_results(*wrap, key=("key",))]
    return {"summary": summarize(out["mutants"]), **out}


def write_results(path, data: dict, option: str = "--json"):
    """Add one run's results ``data`` (:func:`to_json`) to the results file ``path`` (:func:`merge`,
    written whole or not at all).  An earlier content that is no results file any more (the command
    checked it with :func:`read_results` before its run) is not lost: it is moved to a free
    ``<path>.bak`` / ``<path>.bak<N>`` first.

    Returns
    -------
    hhe_gen.apps.report.ResultsWritten   ``kept`` / ``replaced`` count the earlier mutants, ``rows``
                                         is the file's mutants now
    """
    from hhe_gen.apps.report import ResultsWritten, write_json
    from hhe_gen.params.errors import ParameterError
    path = Path(path)
    backup = None
    try:
        earlier = read_results(path, option)
    except ParameterError:
        backup, n = path.with_name(path.name + ".bak"), 1
        while backup.exists():
            backup, n = path.with_name(f"{path.name}.bak{n}"), n + 1
        path.rename(backup)
        earlier = None
    merged = merge(earlier, data)
    ran = {m["id"] for m in data["mutants"]}
    before = earlier["mutants"] if earlier else []
    replaced = sum(m["id"] in ran for m in before)
    write_json(path, merged)
    return ResultsWritten(path, len(before) - replaced, replaced, backup, merged["mutants"])


def results_table(results, title: str = "hhe-gen mutate"):
    """A rich Table of every result, survivors first."""
    from rich.table import Table
    order = {"survived": 0, "timeout": 1, "killed": 2}
    t = Table(title=title, title_justify="left")
    for col, just in (("status", "left"), ("file:line", "left"), ("op", "left"), ("original", "left"),
                      ("mutant", "left"), ("function", "left"), ("s", "right"), ("killed by", "left")):
        t.add_column(col, justify=just, overflow="fold")
    style = {"survived": "bold red", "timeout": "yellow", "killed": "green"}
    for r in sorted(results, key=lambda r: (order[r.status], r.mutant.file, r.mutant.start)):
        m = r.mutant
        t.add_row(f"[{style[r.status]}]{r.status}[/]", f"{m.file}:{m.line}", m.operator, m.original, m.mutant,
                  m.function, f"{r.seconds:.1f}", r.detail)
    return t


def mutants_table(mutants, title: str = "mutants"):
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    for col in ("file:line:col", "op", "original", "mutant", "function", "context"):
        t.add_column(col, overflow="fold")
    for m in mutants:
        t.add_row(f"{m.file}:{m.line}:{m.col}", m.operator, m.original, m.mutant, m.function, m.context)
    return t
