"""Running the mutants: the tests of each mutant's family, the unmutated baseline, time limits and
parallel workspaces."""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .mutants import Mutant, find_root
from .workspace import Workspace


def select_tests(root, mutant_file: str, tests=None) -> list[str]:
    """Test files (repository-relative) for mutants of ``mutant_file``: ``tests`` if given, else the
    family's ``tests/cores/<family>/test_*.py``; the family's ``test_boundaries.py`` goes first, then
    the files that name the module or one of its public classes / functions (they kill fastest
    with ``-x``), then the rest."""
    root = Path(root)
    if tests:
        files = [root / t for t in tests]
    else:
        files = sorted((root / "tests" / "cores" / mutant_file.split("/")[1]).glob("test_*.py"))
    module = Path(mutant_file).stem
    try:
        tree = ast.parse((root / mutant_file).read_bytes())
        names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))
                 and not n.name.startswith("_")}
    except (OSError, SyntaxError):
        names = set()
    words = {module} | names

    def related(p):
        try:
            text = p.read_text(errors="replace")
        except OSError:
            return False
        return any(re.search(rf"\b{re.escape(w)}\b", text) for w in words)
    first = [p for p in files if p.name == "test_boundaries.py"]          # small and aimed at the mutants
    rest = [p for p in files if p not in first]
    ranked = first + [p for p in rest if related(p)] + [p for p in rest if not related(p)]
    return [(p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)) for p in ranked]


_SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$", re.M)


def _failures(output: str) -> list[str]:
    """Node ids (or files) pytest's -rfE summary lists as FAILED / ERROR."""
    return [m.group(2) for m in _SUMMARY_LINE.finditer(output)]


@dataclass
class FamilyBaseline:
    """The unmutated run of one test selection."""
    tests: list
    seconds: float
    returncode: int | None
    failures: list = field(default_factory=list)     # node ids deselected for the mutants
    dropped: list = field(default_factory=list)      # test files that do not even collect
    timeout: float = 0.0


def run_baseline(ws: Workspace, tests, timeout: float | None) -> FamilyBaseline:
    rc, secs, out = ws.pytest(tests, timeout=timeout, first_failure=False)
    fails = _failures(out)
    dropped = [f for f in fails if "::" not in f]
    base = FamilyBaseline(list(tests), secs, rc, [f for f in fails if "::" in f], dropped)
    base.tests = [t for t in tests if t not in dropped]
    if rc not in (0, 1) and not fails:
        raise RuntimeError(f"the unmutated tests do not run (pytest exit {rc}):\n{out[-3000:]}")
    return base


@dataclass
class MutantResult:
    """A mutant and what the tests did with it (status "killed" | "timeout" | "survived")."""
    mutant: Mutant
    status: str
    seconds: float
    detail: str = ""          # the first failing test, or why the mutant was killed

    def record(self) -> dict:
        m = self.mutant
        return {"id": m.id, "family": m.family, "file": m.file, "line": m.line, "col": m.col,
                "operator": m.operator, "original": m.original, "mutant": m.mutant, "function": m.function,
                "context": m.context, "text": m.text, "status": self.status, "seconds": round(self.seconds, 3),
                "detail": self.detail}


def _run_one(ws: Workspace, mutant: Mutant, tests, base: FamilyBaseline, timeout: float) -> MutantResult:
    path = ws.path(mutant.file)
    original = path.read_bytes()
    mutated = mutant.apply(original)
    try:
        ast.parse(mutated)
    except SyntaxError as exc:
        return MutantResult(mutant, "killed", 0.0, f"does not parse: {exc}")
    try:
        path.write_bytes(mutated)
        rc, secs, out = ws.pytest([t for t in tests if t not in base.dropped], deselect=base.failures,
                                  timeout=timeout)
    finally:
        path.write_bytes(original)
    if rc is None:
        return MutantResult(mutant, "timeout", secs, f"no result within {timeout:.0f} s")
    if rc == 0:
        return MutantResult(mutant, "survived", secs)
    fails = _failures(out)
    if fails:
        return MutantResult(mutant, "killed", secs, fails[0])
    tail = [ln for ln in out.strip().splitlines() if ln.strip()][-1:] or [""]
    return MutantResult(mutant, "killed", secs, f"pytest exit {rc}: {tail[0][:200]}")


def run_mutants(root, mutants, *, tests=None, timeout: float | None = None, jobs: int = 1, keep: bool = False,
                progress=None, workdir=None):
    """Run every mutant; returns ``(results, baselines)``.

    tests : test files to run for every mutant (default: per family, :func:`select_tests`)
    timeout : seconds per mutant (default: 2.5 x the selection's baseline time + 30, at least 60)
    jobs : parallel workers, each with its own copy of the tree
    progress : optional callable(event, **info), events "baseline", "start", "done"
    """
    root = find_root(root)
    mutants = list(mutants)
    jobs = max(1, min(int(jobs), len(mutants) or 1))
    note = progress or (lambda *a, **k: None)
    spaces = [Workspace(root, keep=keep, parent=workdir) for _ in range(jobs)]
    try:
        selections = {m.file: tuple(select_tests(root, m.file, tests)) for m in mutants}
        baselines: dict[frozenset, FamilyBaseline] = {}      # one unmutated run per set of test files
        for key in dict.fromkeys(frozenset(sel) for sel in selections.values()):
            sel = tuple(sorted(key))
            note("baseline", tests=sel)
            limit = None if timeout is None else max(timeout * 10, 600)
            base = run_baseline(spaces[0], sel, limit)
            base.timeout = timeout if timeout is not None else max(60.0, 2.5 * base.seconds + 30)
            baselines[key] = base
            note("baseline_done", tests=sel, baseline=base)
        results: list[MutantResult | None] = [None] * len(mutants)
        queue = list(range(len(mutants)))
        lock = threading.Lock()

        def worker(ws):
            while True:
                with lock:
                    if not queue:
                        return
                    i = queue.pop(0)
                m = mutants[i]
                note("start", mutant=m, index=i)
                sel = selections[m.file]
                base = baselines[frozenset(sel)]
                try:
                    res = _run_one(ws, m, sel, base, base.timeout)
                except ValueError as exc:               # the mutant no longer matches the copy
                    res = MutantResult(m, "killed", 0.0, f"not applied: {exc}")
                results[i] = res
                note("done", result=res, index=i)

        threads = [threading.Thread(target=worker, args=(ws,), daemon=True) for ws in spaces]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results, baselines
    finally:
        for ws in spaces:
            ws.close()
