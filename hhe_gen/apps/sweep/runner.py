"""Running a sweep on Dask (``dask.distributed``): the cluster, the submissions, the progress bar
and the collection of every result into ``DIR/sweep.json``.

* Cluster: by default a ``LocalCluster`` of process workers with one thread each (one synthesis
  per worker), as many as the machine has cores (``workers``) and no more than the points to run;
  its scheduler allows ``retries`` worker deaths per job (``distributed.scheduler.allowed-failures``).
  With ``scheduler`` (``tcp://HOST:PORT``) an existing cluster is used instead: its workers need
  hhe-gen and the YoWASP tools installed, and its scheduler's own allowed-failures applies.  A
  scheduler that does not answer within ``connect_timeout`` seconds is a ParameterError.
* Jobs: :func:`~.jobs.run_point` per point, submitted with ``retries=`` (a job whose process was
  killed is run again) and ``pure=False``; each attempt's start is an event on the scheduler
  (:data:`~.jobs.EVENT_TOPIC`) that the client counts as the record's ``attempts``.  The time-out
  is enforced on the worker (:mod:`.jobs`); a job that has not ended ``timeout`` + :func:`grace`
  seconds after its last start (a worker that hangs) is recorded as ``timeout`` by the client.
* Failures: a job whose workers died too often (``KilledWorker``), one interrupted more often
  than ``retries`` or any other error is recorded as ``failed`` with the error text; the sweep goes
  on.  Every result is written to sweep.json as it arrives (:class:`~.records.SweepFile`), and
  with place and route each design's best so far to best.json and best/ (:mod:`.best`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid

from hhe_gen.params.errors import ParameterError

from .jobs import EVENT_TOPIC, ERROR_CHARS, run_point
from .records import SweepFile, make_record
from .spec import check_scheduler_address

__all__ = ["run_sweep", "connect", "grace", "POLL_S", "DEFAULT_CONNECT_TIMEOUT"]

#: seconds between two looks at the jobs that have not ended (the client-side watchdog)
POLL_S = 2.0
DEFAULT_CONNECT_TIMEOUT = 10.0


def grace(timeout: float) -> float:
    """Seconds the client waits beyond a job's time-out before recording it as timed out itself."""
    return max(60.0, 0.1 * timeout)


def run_sweep(spec, out_dir, *, scheduler: str | None = None, workers: int | None = None,
              connect_timeout: float = DEFAULT_CONNECT_TIMEOUT, spec_file: str = "",
              progress: bool = True) -> SweepFile:
    """Run every point of ``spec`` that ``out_dir``'s sweep.json does not already hold as ``ok``.

    Parameters
    ----------
    spec : SweepSpec         the checked spec (:func:`~.spec.load_spec`)
    out_dir : path           the sweep's folder: sweep.json is written there as results arrive
    scheduler : str | None   ``tcp://HOST:PORT`` of an existing Dask scheduler; None: a LocalCluster
    workers : int | None     LocalCluster workers (default: the machine's cores); not with ``scheduler``
    connect_timeout : float  seconds to reach ``scheduler``
    spec_file : str          recorded in sweep.json
    progress : bool          show the progress bar (standard error)

    Returns
    -------
    SweepFile   every record (``records``), ``reused`` (points skipped as already ok)

    Raises
    ------
    ParameterError   a bad or unreachable scheduler, ``workers`` with ``scheduler`` or below 1, a bad
                     point, a folder whose sweep.json is not a sweep's
    """
    if scheduler is not None:
        check_scheduler_address(scheduler)
        if workers is not None:
            raise ParameterError("--workers", workers, "not with --scheduler (the cluster has its own workers)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError("--workers", workers, "an integer >= 1")
    if not connect_timeout > 0:
        raise ParameterError("--connect-timeout", connect_timeout, "seconds > 0")
    points = spec.points()
    store = SweepFile(out_dir, spec, points, spec_file)
    store.write()
    from hhe_gen.apps.report import console
    if store.reused:
        console.print(f"skipping {store.reused} of {len(points)} points already ok in {store.path}")
    todo = [p for p in points if p["id"] in set(store.pending())]
    if not todo:
        return store
    sweep_id = uuid.uuid4().hex[:12]
    with connect(scheduler, min(workers or os.cpu_count() or 1, len(todo)), spec.retries, connect_timeout) as client:
        _collect(client, spec, todo, store, sweep_id, len(points), progress)
    return store


@contextlib.contextmanager
def connect(scheduler: str | None, workers: int, retries: int, connect_timeout: float):
    """A ``distributed.Client`` of ``scheduler``, or of a new LocalCluster of ``workers`` process workers
    (one thread each) whose scheduler allows ``retries`` worker deaths per job; closed on exit.

    Raises
    ------
    ParameterError   ``scheduler`` did not answer within ``connect_timeout`` seconds
    """
    from hhe_gen.flow.extras import require
    require("sweep", "a design-space sweep (hhe_gen.apps.sweep)")
    import dask
    from distributed import Client, LocalCluster
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ParameterError("--scheduler", scheduler, f"a reachable Dask scheduler (none answered within "
                                 f"{connect_timeout:g} s: {why})") from None
        with client:
            yield client
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
    with cluster, Client(cluster) as client:
        yield client


def _collect(client, spec, todo, store, sweep_id, total, show_progress):
    """Submit ``todo`` and store each result as it comes, with the progress bar."""
    from distributed import wait
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from hhe_gen.apps.report import err_console
    starts, lock = {}, threading.Lock()

    def on_start(event):
        _, msg = event
        if isinstance(msg, dict) and msg.get("sweep") == sweep_id:
            with lock:   # client-side arrival time: no clock skew between machines
                starts.setdefault(msg.get("point"), []).append((time.monotonic(), msg.get("worker")))

    client.subscribe_topic(EVENT_TOPIC, on_start)
    futures = {client.submit(run_point, p, sweep_id, retries=spec.retries, pure=False,
                             key=f"hhe-gen-sweep-{p['id']}-{sweep_id}"): p for p in todo}
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), console=err_console,
                   disable=not show_progress)
    failed = 0
    try:
        with bar:
            task = bar.add_task(f"sweep {spec.name or spec.core}", total=total, completed=total - len(todo), failed=0)
            pending = set(futures)
            while pending:
                try:
                    done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
                except (TimeoutError, asyncio.TimeoutError):
                    done = set()
                with lock:
                    seen = {pid: list(v) for pid, v in starts.items()}
                for future in list(pending):
                    if _overdue(seen.get(futures[future]["id"]), spec.timeout):
                        future.cancel()
                        pending.discard(future)
                        store.put(_record(futures[future], seen, None, "timeout",
                                          f"no result {spec.timeout + grace(spec.timeout):g} s after its start "
                                          "(the worker did not answer; the job was cancelled)"))
                        failed += 1
                        bar.update(task, advance=1, failed=failed)
                for future in done:
                    record = _result(future, futures[future], seen)
                    store.put(record)
                    failed += record["status"] != "ok"
                    bar.update(task, advance=1, failed=failed)
    finally:
        client.unsubscribe_topic(EVENT_TOPIC)
        for future in futures:
            future.release()


def _overdue(starts, timeout) -> bool:
    return bool(starts) and time.monotonic() - starts[-1][0] > timeout + grace(timeout)


def _record(point, seen, outcome, status=None, error=None) -> dict:
    attempts = seen.get(point["id"], [])
    if outcome is None:
        outcome = {"status": status, "error": error, "worker": attempts[-1][1] if attempts else None}
    return make_record(point, outcome, max(len(attempts), 1))


def _result(future, point, seen) -> dict:
    """The record of a finished future: its result, or its error as a ``failed`` record."""
    from distributed import KilledWorker
    try:
        return _record(point, seen, future.result())
    except KilledWorker as exc:
        return _record(point, seen, None, "failed", f"KilledWorker: the workers running it died too often ({exc})")
    except (Exception, asyncio.CancelledError) as exc:   # JobInterrupted after its retries, a lost scheduler...
        text = f"{type(exc).__name__}: {exc}"
        return _record(point, seen, None, "failed", text[-ERROR_CHARS:])
