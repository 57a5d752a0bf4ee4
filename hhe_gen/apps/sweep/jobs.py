"""One point of a sweep, run on a Dask worker: :func:`run_point`.

The worker does not synthesize in its own process: it starts a child Python process
(``python -m hhe_gen.apps.sweep.jobs POINT.json RESULT.json``, its own process group) that builds
the core and runs :func:`hhe_gen.flow.synth.synth_ecp5` / ``synth_xilinx_any`` with the job's
time-out as the tools' ``timeout=``; the worker waits at most the job's time-out for it and then
kills the whole group (the child, Yosys, nextpnr).  So a stuck tool or a slow elaboration ends
as a ``timeout`` record, and the worker thread is free again.  The child also watches its parent:
when the worker process dies (killed, out of memory) the child kills its group, so no synthesis
outlives the job that asked for it.

Attempts: each start logs an event on the scheduler (topic :data:`EVENT_TOPIC`, message with the
sweep, the point id, the worker address, its pid and the time), which the client counts
(:mod:`.runner`).  A child killed by a signal that is not the time-out (the OOM killer, a user)
raises :class:`JobInterrupted`, which Dask retries (``retries=`` of the submission); a worker that
dies is handled by the scheduler, which runs the job again elsewhere (``allowed-failures``).

Results are JSON-able dicts (:func:`measure`); failures of the design or the tools are results
too (``status`` "failed" with the error text), not exceptions, so they are not retried.  A placed
and routed point's result also carries its small report artefacts (:func:`run_reports`: nextpnr's
timing report as the flow reads it and the tail of nextpnr's log, read from the run's cache entry
on the worker), so that the client, which may be another machine, can keep the best run's reports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["run_point", "measure", "run_reports", "JobInterrupted", "EVENT_TOPIC", "ERROR_CHARS", "LOG_TAIL_CHARS"]

#: scheduler event topic of the job starts
EVENT_TOPIC = "hhe-gen-sweep"
#: the error text of a record is cut to this many characters (its end, where the cause is)
ERROR_CHARS = 2000
#: at most this many characters of the end of nextpnr's log go with a result (whole lines)
LOG_TAIL_CHARS = 6000
#: where nextpnr's log reports a clock's critical path (the last one: after routing)
_CRITICAL_REPORT = "Info: Critical path report for clock"
#: seconds between two looks of the child at its parent
PARENT_POLL = 0.5


class JobInterrupted(RuntimeError):
    """The job's process was killed from outside (not by its time-out): the job is run again."""


def run_point(point: dict, sweep_id: str = "") -> dict:
    """Run one point (on a Dask worker, or anywhere) and return its result.

    Parameters
    ----------
    point : dict     a point of :meth:`~.spec.SweepSpec.points`
    sweep_id : str   the sweep's id, put in the start event

    Returns
    -------
    dict   ``status`` ("ok", "failed", "timeout"), ``error`` (text or None), ``wall_s``, ``worker``
           (the Dask worker's address, or the host name), ``pid`` and, when ok, the measurements of
           :func:`measure`

    Raises
    ------
    JobInterrupted   the child process was killed by a signal that was not the time-out
    """
    worker = _log_start(point, sweep_id)
    timeout = float(point["timeout"])
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hhe-gen-sweep-") as tmp:
        point_file, result_file, log_file = (Path(tmp) / n for n in ("point.json", "result.json", "child.log"))
        point_file.write_text(json.dumps(point))
        with open(log_file, "w") as log:
            child = subprocess.Popen([sys.executable, "-m", __name__, str(point_file), str(result_file)],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
            try:
                child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(child)
                return _outcome("timeout", f"exceeded the time-out of {timeout:g} s", t0, worker)
            except BaseException:           # the worker is stopping: leave nothing running
                _kill_group(child)
                raise
        tail = log_file.read_text(errors="replace")[-ERROR_CHARS:]
        if child.returncode < 0:
            raise JobInterrupted(f"the job's process was killed by signal {-child.returncode} "
                                 f"({signal.Signals(-child.returncode).name}) on {worker}")
        if child.returncode != 0 or not result_file.is_file():
            return _outcome("failed", f"the job's process exited with status {child.returncode}: {tail}", t0, worker)
        result = json.loads(result_file.read_text())
    out = _outcome(result.pop("status"), result.pop("error", None), t0, worker)
    out.update(result)
    return out


def _outcome(status, error, t0, worker) -> dict:
    return {"status": status, "error": error, "wall_s": round(time.monotonic() - t0, 2), "worker": worker,
            "pid": os.getpid()}


def _log_start(point: dict, sweep_id: str) -> str:
    """Log the attempt's start on the scheduler (no-op outside a worker); the worker's address."""
    import socket
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return socket.gethostname()
    worker.log_event(EVENT_TOPIC, {"sweep": sweep_id, "point": point["id"], "worker": worker.address,
                                   "pid": os.getpid(), "time": time.time()})
    return worker.address


def _kill_group(child: subprocess.Popen):
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()


# -- in the child process ----------------------------------------------------------------------------------
def measure(point: dict) -> dict:
    """Build the point's core and synthesize it (in this process), with the point's time-out per tool.

    Returns
    -------
    dict   ``status`` ("ok", or "failed" / "timeout" with ``error``) and, when ok, ``area`` (the
           flow's counts: LUT4, FF, MULT18X18D, DP16KD, CCU2C ... or LUT, FF, DSP48E1, RAMB18, RAMB36,
           CARRY4 ...), ``lut``, ``ff``, ``dsp``, ``bram`` (the same across families: LUT4 / LUT,
           MULT18X18D / the family's DSP, DP16KD / RAMB18 + 2 RAMB36), ``fmax_mhz``, ``critical_ns``,
           ``yosys_s``, ``nextpnr_s``, ``cached``, ``abc9`` (the Xilinx flow that produced the result),
           ``reports`` (placed and routed points: :func:`run_reports`)
    """
    from hhe_gen.flow.tools import ToolError
    try:
        return {"status": "ok", **_synthesize(point)}
    except ToolError as exc:
        status = "timeout" if exc.returncode is None and "timed out" in str(exc) else "failed"
        return {"status": status, "error": _text(exc)}
    except Exception as exc:   # a failing design (ParameterError, Amaranth's errors...) must not stop the sweep
        return {"status": "failed", "error": _text(exc)}


def _text(exc) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= ERROR_CHARS else "..." + text[-ERROR_CHARS:]


def _synthesize(point: dict) -> dict:
    from hhe_gen.flow.synth import XILINX_FAMILIES, synth_ecp5, synth_xilinx_any
    from .kinds import KINDS
    kind, params, target = KINDS[point["core"]], point["params"], point["target"]
    name = f"sweep_{kind.name}"
    timeout = float(point["timeout"])
    if target == "xilinx":
        family = point["device"]
        res = synth_xilinx_any(lambda: kind.build(params, target), family=family, name=name, cache=point["cache"],
                               timeout=timeout)
        dsp_cell = XILINX_FAMILIES[family][0]
        area = {k: res.get(k) for k in ("LUT", "FF", dsp_cell, "RAMB18", "RAMB36", XILINX_FAMILIES[family][1],
                                        "SRL", "LUTRAM", "MUXF")}
        common = {"lut": res.get("LUT"), "ff": res.get("FF"), "dsp": res.get(dsp_cell),
                  "bram": (res.get("RAMB18") or 0) + 2 * (res.get("RAMB36") or 0)}
        return {"area": area, **common, "fmax_mhz": None, "critical_ns": None, "yosys_s": res.get("yosys_s"),
                "nextpnr_s": None, "cached": res.cached, "abc9": res.get("abc9")}
    option_set = point["nextpnr"] or {"placer": "heap", "router": "router1", "args": []}
    res = synth_ecp5(kind.build(params, target), device=point["device"], package=point["package"],
                     seed=point["seed"] if point["seed"] is not None else 1, freq_mhz=point["freq_mhz"] or 125,
                     name=name, router=option_set["router"], cache=point["cache"], timeout=timeout,
                     synth_args=tuple(point["synth_args"]),
                     nextpnr_args=("--placer", option_set["placer"], *option_set["args"]) if point["place_and_route"]
                     else (), place_and_route=point["place_and_route"], abc9=point["abc9"])
    area = {k: res.get(k) for k in ("LUT4", "FF", "MULT18X18D", "ALU54B", "DP16KD", "CCU2C", "DPR16X4")}
    common = {"lut": res.get("LUT4"), "ff": res.get("FF"), "dsp": res.get("MULT18X18D"), "bram": res.get("DP16KD")}
    crit = res.get("critical_path") or {}
    return {"area": area, **common, "fmax_mhz": res.get("fmax_mhz"), "critical_ns": crit.get("ns"),
            "yosys_s": res.get("yosys_s"), "nextpnr_s": res.get("nextpnr_s"), "cached": res.cached,
            **({"reports": run_reports(res)} if point["place_and_route"] else {})}


def run_reports(res) -> dict:
    """The small report artefacts of a placed and routed run, read from its cache entry (``res.workdir``).

    Parameters
    ----------
    res : SynthResult   a :func:`~hhe_gen.flow.synth.synth_ecp5` result with place and route

    Returns
    -------
    dict   ``timing``: ``fmax`` (nextpnr's report: achieved and constraint MHz per clock),
           ``critical_path`` (as the flow reads it: :func:`hhe_gen.flow.synth_reports.critical_path`),
           ``fmax_mhz``, ``freq_mhz``, ``cells`` and ``total`` (the DUT's and the design's cells and
           nextpnr's utilisation), ``cache_key`` and ``cache_entry`` (the run's folder on the worker);
           ``nextpnr_log_tail``: the end of nextpnr's log from its last critical path report (the
           post-route timing report: critical paths, Fmax, slack histogram), at most its last
           :data:`LOG_TAIL_CHARS` characters (whole lines), or a note when the log cannot be read
    """
    workdir = Path(res.workdir)
    try:
        fmax = json.loads((workdir / "report.json").read_text()).get("fmax", {})
    except (OSError, ValueError) as exc:
        fmax = {"error": f"report.json: {exc}"}
    try:
        log = (workdir / "nextpnr.log").read_text(errors="replace")
        start = max(log.rfind(_CRITICAL_REPORT), len(log) - LOG_TAIL_CHARS, 0)
        if start > 0 and log[start - 1] != "\n":      # a whole line first
            start = log.find("\n", start) + 1 or start
        tail = log[start:]
    except OSError as exc:
        tail = f"(nextpnr.log cannot be read: {exc})\n"
    timing = {"fmax_mhz": res.get("fmax_mhz"), "freq_mhz": res.get("freq_mhz"), "fmax": fmax,
              "critical_path": res.get("critical_path"), "cells": res.get("cells"), "total": res.get("total"),
              "cache_key": res.get("key"), "cache_entry": str(workdir)}
    return {"timing": timing, "nextpnr_log_tail": tail}


def _watch_parent():
    """Kill this process group when the parent (the Dask worker) is gone."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True, name="hhe-gen-sweep-parent-watch").start()


def _main(argv) -> int:
    point_file, result_file = argv
    _watch_parent()
    result = measure(json.loads(Path(point_file).read_text()))
    tmp = Path(result_file).with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, result_file)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
