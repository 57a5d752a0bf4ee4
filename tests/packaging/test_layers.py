"""The package is split by layer and imports only downward (docs/layout.md).

Every ``import`` of every module (module level or inside a function) is read with ``ast``; a module
may import from its own layer or from a lower one, never from a higher one, and nothing installed
imports pytest or another test-only package.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"hhe_gen": "hhe_gen", "cores": "hhe_gen.cores", "formal": "hhe_gen.formal",
           "soc": "hhe_gen.soc", "boards": "hhe_gen.boards"}
# bottom (0) to top
LAYERS = {
    "hhe_gen.params": 0, "hhe_gen.models": 1, "hhe_gen.flow": 2, "hhe_gen.cores": 3,
    "hhe_gen.sim": 4, "hhe_gen.formal": 4, "hhe_gen.engine": 4, "hhe_gen.host": 5, "hhe_gen.net": 5,
    "hhe_gen.soc": 6, "hhe_gen.boards": 6, "hhe_gen.apps": 7,
    "hhe_gen.client": 7, "hhe_gen.__main__": 7,
}
TEST_ONLY = {"pytest", "_pytest", "hypothesis", "build", "xdist", "testsupport"}


def _modules():
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            is_package = path.name == "__init__.py"
            yield name, is_package, path


def _layer(name: str) -> int | None:
    for prefix, rank in LAYERS.items():
        if name == prefix or name.startswith(prefix + "."):
            return rank
    return None


def _imports(name: str, is_package: bool, path: Path):
    tree = ast.parse(path.read_text(), str(path))
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if node.module is None or target == "hhe_gen":
                for alias in node.names:      # from X import submodule
                    yield node.lineno, f"{target}.{alias.name}"
            else:
                yield node.lineno, target


MODULES = list(_modules())


def test_every_module_has_a_layer():
    assert len(MODULES) > 100
    orphans = [name for name, _, _ in MODULES if _layer(name) is None and name != "hhe_gen"
               and not name.startswith("hhe_gen.data")]
    assert orphans == [], f"modules outside every layer: {orphans}"


@pytest.mark.parametrize("name,is_package,path", MODULES, ids=[m[0] for m in MODULES])
def test_imports_only_downward(name, is_package, path):
    own = _layer(name)
    if own is None:          # hhe_gen/__init__.py: imports nothing of the project
        own = -1
    upward, test_only = [], []
    for line, target in _imports(name, is_package, path):
        top = target.split(".")[0]
        if top in TEST_ONLY:
            test_only.append(f"{path.name}:{line} imports {target}")
        if top == "hhe_gen":
            rank = _layer(target)
            if rank is not None and rank > own:
                upward.append(f"{path.name}:{line} imports {target} (layer {rank} > {own})")
    assert test_only == [], test_only
    assert upward == [], upward


def test_the_layer_rule_catches_an_upward_import(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from hhe_gen.apps.cli import main\n")
    assert [t for _, t in _imports("hhe_gen.models.x", False, bad)] == ["hhe_gen.apps.cli"]
    assert _layer("hhe_gen.apps.cli") > _layer("hhe_gen.models.x")
    rel = tmp_path / "y.py"
    rel.write_text("from ..flow import synth\n")
    assert [t for _, t in _imports("hhe_gen.models.y", False, rel)] == ["hhe_gen.flow"]
