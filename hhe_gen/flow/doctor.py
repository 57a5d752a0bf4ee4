"""The tool table of ``hhe-gen doctor``: ``check`` reports, per tool, whether it is found, how
(YoWASP, wheel, native), its version and whether its YoWASP compile cache is filled.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from hhe_gen.flow.tools import TOOL_NAMES, ToolMissing, find_tool, recipe_of
from hhe_gen.flow.yowasp import is_warm

__all__ = ["ToolStatus", "check"]


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
    """
    name: str
    found: bool
    kind: str | None
    version: str | None
    argv: list[str]
    warm: bool | None
    detail: str = ""


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
        except ToolMissing as missing:
            statuses.append(ToolStatus(name, False, None, None, [], None, str(missing)))
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
