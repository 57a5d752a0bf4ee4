"""Mutation testing of the hardware generators in ``cores/`` (``hhe-gen mutate``).

A *mutant* is one small edit of one generator source file, of the kind that moves a modular
boundary (issue 14 section 6):

- ``cmp``: a comparison operator swapped for its boundary neighbour (``<`` <-> ``<=``,
  ``>`` <-> ``>=``, ``==`` <-> ``!=``); comparisons with a string / None / bool constant
  (configuration dispatch, not a bound) are left alone;
- ``const``: an integer constant +1 and -1, only where it looks like a bound: an operand of a
  comparison, an additive offset (``w + 1``, ``q - 1``) or a bit / slice index (``d[-1]``,
  ``v[:k + 2]``);
- ``arith``: ``+`` <-> ``-`` in a modular step (both operands non-constant, and inside a ``Mux``,
  inside a datapath ``lambda``, or with a modulus-like name such as ``q`` as an operand).

Code that only validates parameters (an ``if`` whose body raises, ``assert`` / ``raise``
statements, functions named ``check_*`` / ``_check*`` / ``validat*``) is skipped unless
``checks=True``: a mutant there changes an error message, not the hardware.  f-strings (signal
names, messages) and the arguments of the estimated-delay helpers (``add_delay(w + 1)``,
``Segment(...)``: they place registers, nothing else) are skipped too.

Running a mutant: the repository's source tree (``hhe_gen/``, ``cores/``, ``formal/``, ``soc/``,
``boards/``, ``tests/``, ``setup.py``, ``pyproject.toml``) is copied ONCE into a temporary
directory laid out as an importable package (``<tmp>/hhe_gen/cores`` is the copy of ``cores/``,
``<tmp>/cores`` a symbolic link to it, likewise ``formal``, ``soc``, ``boards``); pytest runs
there with the copy first on the import path, so ``hhe_gen.cores`` is the copy (checked once per
copy) and the working tree is never touched.  For each mutant the copy's file is rewritten,
``python -m pytest -x -q -p no:cacheprovider`` runs the test files of the core's family
(``tests/cores/<family>/test_*.py``: ``test_boundaries.py`` first, then the files that name the
mutated module or its classes, then the rest) and the file is restored.  Status: ``killed`` (a
test failed or errored, or the mutant did not import), ``timeout`` (the per-mutant time limit
passed: counted as killed) or ``survived``.

Before the mutants, every family's selection runs once unmutated (the *baseline*): tests that
already fail there are deselected for the mutants (listed in the result as
``baseline_failures``), and the default time limit is derived from the baseline's time.

Cost: a killed mutant takes a few seconds (``-x`` stops at the first failure), a surviving one
the whole family selection (measured on one core: ckks ~20 s, rubato / sampler / arith ~45 s,
keccak ~60 s, fft ~70 s, ntt ~125 s).  Every operator on every family (about 2000 mutants) is
therefore a run of many hours (``--jobs``, ``--sample``); the comparisons alone (``--ops cmp``,
about 330 mutants) about two hours.

Python API::

    muts = enumerate_tree(root, ["arith"], operators=("cmp",))
    results, baselines = run_mutants(root, muts[:3])      # MutantResult list, unmutated runs
"""

from __future__ import annotations

import ast
import bisect
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FAMILIES", "OPERATORS", "STATUSES", "Mutant", "MutantResult", "FamilyBaseline", "Workspace",
           "enumerate_source", "enumerate_file", "enumerate_tree", "find_root", "core_files",
           "select_tests", "sample", "run_mutants", "summarize", "results_table", "mutants_table",
           "to_json"]

FAMILIES = ("arith", "ntt", "fft", "keccak", "sampler", "rubato", "ckks")
OPERATORS = ("cmp", "const", "arith")
STATUSES = ("killed", "timeout", "survived")

#: folders and files of the repository copied into a mutation workspace
PACKAGE_FOLDERS = ("cores", "formal", "soc", "boards")      # mapped into hhe_gen.<name> (setup.py)
COPIED_FILES = ("setup.py", "pyproject.toml")

_CMP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
        ast.Eq: ("==", "!="), ast.NotEq: ("!=", "==")}
_CHECK_FUNC = re.compile(r"^_*(check|validat)")
_TIMING_CALL = re.compile(r"delay|^Segment$")
_MODULUS_NAME = re.compile(r"^(q|qq|q\d+|q_\w+|\w+_q|big_q|qs|mod|modulus|moduli)$")


# -- mutants ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """One edit of one file: bytes ``[start, end)`` of ``file`` (``original``) become ``mutant``.

    file : str        repository-relative path with forward slashes (``cores/arith/modadd.py``)
    line, col : int   1-based line, 0-based column (UTF-8 bytes) of the edited text
    operator : str    "cmp" | "const" | "arith"
    original, mutant : str   the text replaced and its replacement
    function : str    the enclosing function (dotted, ``<module>`` at top level)
    context : str     "code", or "check" (parameter validation, only with checks=True)
    start, end : int  byte offsets of ``original`` in the file
    text : str        the source line holding the edit, stripped
    """
    file: str
    line: int
    col: int
    operator: str
    original: str
    mutant: str
    function: str
    context: str
    start: int
    end: int
    text: str = ""            # the source line, stripped (to find the mutant again after edits)

    @property
    def family(self) -> str:
        parts = self.file.split("/")
        return parts[1] if len(parts) > 2 and parts[0] == "cores" else ""

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.col} {self.original} -> {self.mutant}"

    def apply(self, source: bytes) -> bytes:
        """``source`` with this edit (ValueError if the file changed under the mutant)."""
        if source[self.start:self.end] != self.original.encode():
            raise ValueError(f"{self.id}: the file no longer holds {self.original!r} there")
        return source[:self.start] + self.mutant.encode() + source[self.end:]


class _Finder:
    """Walks one module's AST keeping the context (function, parameter check, lambda, Mux)."""

    def __init__(self, source: bytes, file: str, operators, checks: bool):
        self.src, self.file, self.ops, self.checks = source, file, set(operators), checks
        self.line_start = [0]
        for i, b in enumerate(source):
            if b == 0x0A:
                self.line_start.append(i + 1)
        self.found: list[Mutant] = []

    # byte offsets
    def off(self, line: int, col: int) -> int:
        return self.line_start[line - 1] + col

    def span(self, node) -> tuple[int, int]:
        return self.off(node.lineno, node.col_offset), self.off(node.end_lineno, node.end_col_offset)

    def add(self, operator, start, end, new, ctx):
        line = bisect.bisect_right(self.line_start, start)
        stop = self.line_start[line] - 1 if line < len(self.line_start) else len(self.src)
        text = self.src[self.line_start[line - 1]:stop].decode(errors="replace").strip()
        self.found.append(Mutant(self.file, line, start - self.line_start[line - 1], operator,
                                 self.src[start:end].decode(), new, ctx["func"],
                                 "check" if ctx["check"] else "code", start, end, text))

    def token_between(self, a, b, pattern: str):
        """The one operator token matching ``pattern`` between the end of node a and the start of
        node b (only parentheses, blanks and comments besides), as (start, end) or None."""
        lo, hi = self.span(a)[1], self.span(b)[0]
        gap = self.src[lo:hi].decode()
        code = re.sub(r"#[^\n]*", lambda c: " " * len(c.group()), gap)      # same offsets, no comments
        hits = [m for m in re.finditer(r"<<|>>|\*\*|//|<=|>=|==|!=|->|[-+*/%<>&|^@~]", code)]
        if len(hits) != 1 or not re.fullmatch(pattern, hits[0].group()):
            return None
        start = lo + len(gap[:hits[0].start()].encode())
        return start, start + len(hits[0].group().encode())

    # the walk
    def walk(self, node, ctx):
        if isinstance(node, ast.JoinedStr):
            return                                          # f-strings: names and messages
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = dict(ctx, func=node.name if ctx["func"] == "<module>" else f"{ctx['func']}.{node.name}")
            if _CHECK_FUNC.match(node.name):
                inner["check"] = True
            for stmt in node.body:                          # not decorators, defaults, annotations
                self.walk(stmt, inner)
            return
        if isinstance(node, ast.ClassDef):
            inner = dict(ctx, func=node.name if ctx["func"] == "<module>" else f"{ctx['func']}.{node.name}")
            for stmt in node.body:
                self.walk(stmt, inner)
            return
        if isinstance(node, (ast.Raise, ast.Assert)):
            ctx = dict(ctx, check=True)
        if isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body):
            self.walk(node.test, dict(ctx, check=True))
            for stmt in node.body + node.orelse:
                self.walk(stmt, ctx)
            return
        if isinstance(node, ast.Call) and _TIMING_CALL.search(_call_name(node.func)):
            return                                          # delay estimates: register placement only
        if isinstance(node, ast.Lambda):
            ctx = dict(ctx, hdl=True)
        self.visit(node, ctx)
        if isinstance(node, ast.Call) and _call_name(node.func) == "Mux":
            ctx = dict(ctx, hdl=True)
        for child in ast.iter_child_nodes(node):
            self.walk(child, ctx)

    def visit(self, node, ctx):
        if ctx["check"] and not self.checks:
            return
        if isinstance(node, ast.Compare):
            self.visit_compare(node, ctx)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            self.visit_additive(node, ctx)
        elif isinstance(node, ast.Subscript) and "const" in self.ops:
            sl = node.slice
            for part in ([sl.lower, sl.upper] if isinstance(sl, ast.Slice) else [sl]):
                if part is not None:
                    self.constant(part, ctx)

    def visit_compare(self, node, ctx):
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Constant) and (o.value is None or isinstance(o.value, (str, bool, bytes)))
               for o in operands):
            return                                          # dispatch on a name / None / flag
        if "cmp" in self.ops:
            for i, op in enumerate(node.ops):
                if type(op) not in _CMP:
                    continue                                # is, in
                old, new = _CMP[type(op)]
                where = self.token_between(operands[i], operands[i + 1], re.escape(old))
                if where:
                    self.add("cmp", *where, new, ctx)
        if "const" in self.ops and all(type(op) in _CMP for op in node.ops):
            for o in operands:
                self.constant(o, ctx)

    def visit_additive(self, node, ctx):
        if "const" in self.ops:
            self.constant(node.left, ctx)
            self.constant(node.right, ctx)
        if "arith" not in self.ops or _int_value(node.left) is not None or _int_value(node.right) is not None:
            return
        names = _names(node.left) | _names(node.right)
        if ctx["hdl"] or any(_MODULUS_NAME.match(n) for n in names):
            old, new = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
            where = self.token_between(node.left, node.right, re.escape(old))
            if where:
                self.add("arith", *where, new, ctx)

    def constant(self, node, ctx):
        value = _int_value(node)
        if value is None:
            return
        start, end = self.span(node)
        for new in (value + 1, value - 1):
            text = str(new) if new >= 0 or isinstance(node, ast.UnaryOp) else f"({new})"
            self.add("const", start, end, text, ctx)


def _int_value(node):
    """The int of a literal ``7`` or ``-7`` (not bool), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _call_name(func) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _names(node) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def enumerate_source(source, file: str = "<source>", operators=OPERATORS, checks: bool = False) -> list[Mutant]:
    """Every mutant of one Python source (str or bytes), sorted by position.

    operators : any of "cmp", "const", "arith"; checks : also mutate parameter-check code.
    """
    bad = set(operators) - set(OPERATORS)
    if bad:
        raise ValueError(f"unknown mutation operators {sorted(bad)} (known: {', '.join(OPERATORS)})")
    src = source.encode() if isinstance(source, str) else bytes(source)
    tree = ast.parse(src, file)
    finder = _Finder(src, file, operators, checks)
    for stmt in tree.body:
        finder.walk(stmt, {"func": "<module>", "check": False, "hdl": False})
    unique = {(m.start, m.end, m.mutant): m for m in finder.found}
    return sorted(unique.values(), key=lambda m: (m.start, m.end, m.operator, m.mutant))


def enumerate_file(root, path, operators=OPERATORS, checks: bool = False) -> list[Mutant]:
    """The mutants of ``root/path`` (``path`` repository-relative)."""
    root = Path(root)
    rel = Path(path).resolve().relative_to(root.resolve()) if Path(path).is_absolute() else Path(path)
    return enumerate_source((root / rel).read_bytes(), rel.as_posix(), operators, checks)


def find_root(root=None) -> Path:
    """The repository holding ``cores/``, ``hhe_gen/`` and ``tests/`` (default: the one this
    package was installed from in editable mode)."""
    candidates = [Path(root)] if root is not None else [Path(__file__).resolve().parents[2], Path.cwd()]
    for c in candidates:
        if all((c / d).is_dir() for d in ("cores", "hhe_gen", "tests")) and (c / "pyproject.toml").is_file():
            return c.resolve()
    from hhe_gen.params.errors import ParameterError
    raise ParameterError("--root", str(candidates[0]),
                         "a hhe-gen source checkout (cores/, hhe_gen/, tests/, pyproject.toml): mutation "
                         "testing needs the sources and tests, not an installed wheel")


def core_files(root, targets=None) -> list[str]:
    """Generator files selected by ``targets`` (family names or file paths; default: every
    family), repository-relative, sorted.  ``__init__.py`` files are left out of families."""
    root = Path(root)
    from hhe_gen.params.errors import ParameterError
    out = []
    for t in targets or FAMILIES:
        t = str(t)
        if t in FAMILIES:
            out += [p.relative_to(root).as_posix() for p in sorted((root / "cores" / t).glob("*.py"))
                    if p.name != "__init__.py"]
            continue
        p = Path(t)
        p = p if p.is_absolute() else root / p
        try:
            rel = p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = None
        if rel is None or not p.is_file() or not rel.startswith("cores/") or not rel.endswith(".py"):
            raise ParameterError("FAMILY", t, f"a family ({', '.join(FAMILIES)}) or a .py file under cores/")
        out.append(rel)
    return sorted(dict.fromkeys(out))


def enumerate_tree(root, targets=None, operators=OPERATORS, checks: bool = False) -> list[Mutant]:
    """Every mutant of the selected generator files (see :func:`core_files`)."""
    return [m for f in core_files(root, targets) for m in enumerate_file(root, f, operators, checks)]


def sample(mutants, k: int | None, seed: int = 0) -> list[Mutant]:
    """A random sample of ``k`` mutants (all when k is None or >= their number), in file order."""
    mutants = list(mutants)
    if k is None or k >= len(mutants):
        return mutants
    picked = set(random.Random(seed).sample(range(len(mutants)), k))
    return [m for i, m in enumerate(mutants) if i in picked]


# -- the workspace --------------------------------------------------------------------------------------
class Workspace:
    """A copy of the repository in a temporary directory, importable as ``hhe_gen`` with the copy's
    ``cores/`` as ``hhe_gen.cores`` (see the module docstring).  Use as a context manager."""

    def __init__(self, root, keep: bool = False, parent=None):
        self.root = Path(root).resolve()
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix="hhe-mutate-", dir=parent))
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info")
        shutil.copytree(self.root / "hhe_gen", self.dir / "hhe_gen", ignore=ignore, symlinks=True)
        for name in PACKAGE_FOLDERS:
            if (self.root / name).is_dir():
                shutil.copytree(self.root / name, self.dir / "hhe_gen" / name, ignore=ignore, symlinks=True)
                os.symlink(Path("hhe_gen") / name, self.dir / name)
        shutil.copytree(self.root / "tests", self.dir / "tests", ignore=ignore, symlinks=True)
        for name in COPIED_FILES:
            if (self.root / name).is_file():
                shutil.copy2(self.root / name, self.dir / name)
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join([str(self.dir)] + [p for p in
                                                 os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"       # a same-size mutant must never meet a stale .pyc
        self.check_imports()

    def path(self, rel: str) -> Path:
        """The copy of repository file ``rel`` (``cores/...`` lives in ``hhe_gen/cores/...``)."""
        first, _, rest = rel.partition("/")
        return self.dir / "hhe_gen" / first / rest if first in PACKAGE_FOLDERS else self.dir / rel

    def check_imports(self):
        """``hhe_gen`` and ``hhe_gen.cores`` must import from the copy, not from the working tree."""
        code = ("import hhe_gen, hhe_gen.cores, hhe_gen.cores.arith as a; "
                "print(hhe_gen.__file__); print(hhe_gen.cores.__file__); print(a.__file__)")
        out = subprocess.run([sys.executable, "-c", code], cwd=self.dir, env=self.env, capture_output=True,
                             text=True, timeout=120)
        files = out.stdout.split()
        if out.returncode != 0 or len(files) != 3 or not all(
                Path(f).resolve().is_relative_to(self.dir.resolve()) for f in files):
            raise RuntimeError(f"the mutation workspace {self.dir} does not shadow the installed hhe_gen: "
                               f"{out.stdout.strip()} {out.stderr.strip()[-500:]}")

    def pytest(self, tests, *, deselect=(), timeout: float | None = None, first_failure: bool = True):
        """Run pytest on ``tests`` (paths relative to the workspace); returns (returncode or None on
        timeout, seconds, output)."""
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--no-header"]
        if first_failure:
            cmd.append("-x")
        for node in deselect:
            cmd += ["--deselect", node]
        cmd += list(tests)
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            return proc.returncode, time.monotonic() - t0, out
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)         # pytest and anything it started
            except ProcessLookupError:
                pass
            out, _ = proc.communicate()
            return None, time.monotonic() - t0, out

    def close(self):
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- test selection and the baseline ------------------------------------------------------------------
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


# -- running ---------------------------------------------------------------------------------------------
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


# -- reports ---------------------------------------------------------------------------------------------
def summarize(results) -> dict:
    """Per family: mutants, killed (including timeouts), timeout, survived, seconds."""
    out: dict[str, dict] = {}
    for r in results:
        fam = out.setdefault(r.mutant.family or "?", {"mutants": 0, "killed": 0, "timeout": 0, "survived": 0,
                                                      "seconds": 0.0})
        fam["mutants"] += 1
        fam["seconds"] = round(fam["seconds"] + r.seconds, 3)
        if r.status == "survived":
            fam["survived"] += 1
        else:
            fam["killed"] += 1
            fam["timeout"] += r.status == "timeout"
    return out


def to_json(results, baselines=None, **extra) -> dict:
    data = {"summary": summarize(results), "mutants": [r.record() for r in results]}
    if baselines is not None:
        data["baselines"] = [{"tests": list(b.tests), "seconds": round(b.seconds, 2), "returncode": b.returncode,
                              "baseline_failures": b.failures, "dropped_files": b.dropped,
                              "timeout_per_mutant": round(b.timeout, 1)} for b in baselines.values()]
    data.update(extra)
    return data


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
