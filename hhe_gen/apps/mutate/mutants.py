"""The mutants: which edits of which generator sources (see the package docstring)."""

from __future__ import annotations

import ast
import bisect
import random
import re
from dataclasses import dataclass
from pathlib import Path

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
    # this file is <root>/hhe_gen/apps/mutate/mutants.py in a source checkout
    candidates = [Path(root)] if root is not None else [Path(__file__).resolve().parents[3], Path.cwd()]
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
