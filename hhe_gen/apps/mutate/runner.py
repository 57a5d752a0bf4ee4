"""Running the mutants: the tests of each mutant's family, the unmutated baseline, time limits and
parallel workspaces."""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .mutants import Mutant, find_root
from .workspace import MutationError, Workspace, _last_line


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


_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed)\b")


def _counts(output: str) -> dict:
    """The counts of pytest's final summary line ("3 passed, 1 failed in 2.0s"): passed, failed,
    error, ...; empty when there is no such line (the run did not get that far)."""
    for line in reversed(output.splitlines()):
        if re.search(r"\bin [\d.]+s\b", line) and _COUNT.search(line):
            return {k.rstrip("s") if k.startswith("error") else k: int(n) for n, k in _COUNT.findall(line)}
    return {}


def _why_not(rc, output: str, what: str) -> str:
    """One line: why a pytest run of ``what`` gave no verdict (exit status ``rc``)."""
    if "No module named pytest" in output:
        return f"pytest cannot start for {what} (No module named pytest: {Workspace.command[0]})"
    if rc is None:
        return f"pytest gave no result for {what} within its time limit"
    if rc < 0:
        return f"pytest was killed by signal {-rc} running {what}"
    return f"pytest exit {rc} without a test verdict for {what}: {_last_line(output)[:200]}"


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
    """The unmutated run of ``tests``: files that do not collect are dropped (and the rest run
    again), tests that fail are recorded for deselection.

    Raises
    ------
    MutationError   when the tests do not run: pytest cannot start, exits other than 0 / 1, finishes
                    without a passing test, or fails without naming a failed test
    """
    tests, dropped = list(tests), []
    while True:
        rc, secs, out = ws.pytest(tests, timeout=timeout, first_failure=False)
        fails = _failures(out)
        named = {(ws.dir / f).resolve() for f in fails if "::" not in f}     # paths relative to the copy
        broken = [t for t in tests if (ws.dir / t).resolve() in named]
        if not broken or rc not in (1, 2):
            break
        dropped += broken                          # collection errors: those files are left out
        tests = [t for t in tests if t not in broken]
        if not tests:
            raise MutationError(f"no test file collects unmutated ({' '.join(dropped)}): {_last_line(out)[:200]}")
    failures = [f for f in fails if "::" in f]
    what = f"the unmutated tests ({' '.join(tests)})"
    if rc not in (0, 1) or (rc == 1 and not failures):
        raise MutationError(_why_not(rc, out, what))
    if not _counts(out).get("passed"):
        raise MutationError(f"{what} pass no test: {_last_line(out)[:200]}")
    return FamilyBaseline(tests, secs, rc, failures, dropped)


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
    tests = [t for t in tests if t not in base.dropped]
    try:
        path.write_bytes(mutated)
        rc, secs, out = ws.pytest(tests, deselect=base.failures, timeout=timeout)
    finally:
        path.write_bytes(original)
    if rc is None:
        return MutantResult(mutant, "timeout", secs, f"no result within {timeout:.0f} s")
    if rc == 0 and _counts(out).get("passed"):
        return MutantResult(mutant, "survived", secs)
    fails = _failures(out)
    tested = [f for f in fails if "::" in f]
    if rc == 1 and tested:
        return MutantResult(mutant, "killed", secs, tested[0])
    broken = [f for f in fails if "::" not in f]
    if rc in (1, 2) and broken:             # a file did not collect: the mutant's doing if it does unmutated
        crc, _, cout = ws.pytest(tests, deselect=base.failures, timeout=timeout, collect_only=True)
        if crc == 0:
            return MutantResult(mutant, "killed", secs, f"{broken[0]} does not collect")
        rc, out = crc, cout
    raise MutationError(_why_not(rc, out, f"mutant {mutant.id}"))


def run_mutants(root, mutants, *, tests=None, timeout: float | None = None, jobs: int = 1, keep: bool = False,
                progress=None, workdir=None):
    """Run every mutant; returns ``(results, baselines)``.

    tests : test files to run for every mutant (default: per family, :func:`select_tests`)
    timeout : seconds per mutant (default: 2.5 x the selection's baseline time + 30, at least 60)
    jobs : parallel workers, each with its own copy of the tree
    progress : optional callable(event, **info), events "baseline", "baseline_done", "start", "done"

    A mutant is "killed" only when its tests ran and one failed or errored (pytest exit 1 naming
    it), or a test file that collects unmutated does not collect with it.

    Raises
    ------
    MutationError   when the work cannot be done: a workspace does not shadow the installed
                    package, the unmutated tests do not run or pass nothing (:func:`run_baseline`),
                    or a mutant's test run gives no verdict (pytest cannot start, exits other
                    than 0 / 1 without a collection error, dies from a signal); no results then
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
        errors: list[MutationError] = []

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
                except MutationError as exc:            # no verdict: the whole run stops
                    with lock:
                        errors.append(exc)
                        queue.clear()
                    return
                results[i] = res
                note("done", result=res, index=i)

        threads = [threading.Thread(target=worker, args=(ws,), daemon=True) for ws in spaces]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results, baselines
    finally:
        for ws in spaces:
            ws.close()
