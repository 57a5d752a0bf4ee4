"""The records of a sweep: one per point (:func:`make_record`) and the file that holds them all,
``DIR/sweep.json`` (:class:`SweepFile`).

The file is rewritten whole after every result (a temporary file beside it, renamed when complete),
so a crash or a Ctrl-C loses no finished point, and it always lists every point of the spec
(``status`` "pending" until its result arrives).  A re-run in the same folder keeps the records
that are ``ok`` and runs only the other points; records of points that are no longer in the spec
are kept under ``earlier``.  With place and route, each write also rewrites ``DIR/best.json`` and
a new best result's ``DIR/best/<design>/`` (:mod:`.best`), so an interrupted sweep has the best so far.

File layout::

    {"format": 1, "name": ..., "spec": {...}, "spec_file": ..., "updated": "2026-...Z",
     "counts": {"ok": .., "failed": .., "timeout": .., "pending": ..}, "records": [...], "earlier": [...]}

A record: the point (``id``, ``label``, ``design``, ``core``, ``params``, ``device``, ``seed``,
``nextpnr_set``, ``synth_set``, ``synth_args``, ``abc9`` ...),
``status`` ("ok", "failed", "timeout", "pending"), ``error``, ``attempts``, ``wall_s``, ``worker``,
the measurements of :func:`hhe_gen.apps.sweep.jobs.measure` (``area``, ``lut``, ``ff``, ``dsp``,
``bram``, ``fmax_mhz`` ...), the cycle figures (``cycles``, ``per_cycle``, ``throughput_unit``
and the core's own under ``figures``) and the derived ``time_us`` = cycles / Fmax (cycles x clock
period) and ``throughput_per_s`` = per_cycle x Fmax, both None without an Fmax.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hhe_gen.apps.report import write_atomic
from hhe_gen.params.errors import ParameterError

__all__ = ["SweepFile", "make_record", "is_number", "FILE_NAME", "STATUSES"]

FILE_NAME = "sweep.json"
FORMAT = 1
STATUSES = ("ok", "failed", "timeout", "pending")
#: the measurements of a record (None until a job measured them)
MEASURES = ("lut", "ff", "dsp", "bram", "fmax_mhz", "critical_ns", "yosys_s", "nextpnr_s", "cached")
#: point keys not copied into a record (the job's settings, not its identity)
_POINT_ONLY = ("timeout", "cache", "figures")


def is_number(value) -> bool:
    """True for an int or float that is not a bool (a measurement that is there)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def make_record(point: dict, outcome: dict | None, attempts: int = 0) -> dict:
    """The record of ``point`` from the job's ``outcome`` (None: pending), with the derived figures.

    Parameters
    ----------
    point : dict           a point of :meth:`~.spec.SweepSpec.points`
    outcome : dict | None  the job's result (:func:`~.jobs.run_point`); its ``reports`` stay on the
                           record until :meth:`SweepFile.put` takes them (they are not written to sweep.json)
    attempts : int         the job's starts

    Returns
    -------
    dict   the record (see the module docstring)
    """
    figures = point["figures"]
    record = {k: v for k, v in point.items() if k not in _POINT_ONLY}
    record.update({"status": "pending", "error": None, "attempts": attempts, "wall_s": None, "worker": None,
                   "cycles": figures["cycles"], "per_cycle": figures["per_cycle"],
                   "throughput_unit": figures["throughput_unit"], "figures": figures, "area": {},
                   **dict.fromkeys(MEASURES)})
    if outcome:
        record.update({k: v for k, v in outcome.items() if k != "pid"})
    fmax = record.get("fmax_mhz")
    ok = record["status"] == "ok" and is_number(fmax) and fmax > 0
    record["time_us"] = round(figures["cycles"] / fmax, 6) if ok else None
    record["throughput_per_s"] = round(figures["per_cycle"] * fmax * 1e6, 3) if ok else None
    return record


class SweepFile:
    """``DIR/sweep.json`` of one sweep: what an earlier run left and every new result.

    Parameters
    ----------
    out_dir : path     the sweep's folder (created)
    spec : SweepSpec   the checked spec
    points : list      its points (:meth:`~.spec.SweepSpec.points`)
    spec_file : str    where the spec came from (recorded)

    Members
    -------
    path : Path          the file
    records : dict       point id -> record, in the points' order
    earlier : list       records of an earlier run's points that are not in this spec
    reused : int         points whose ``ok`` record came from the earlier run
    best : BestFiles | None   ``DIR/best.json`` and ``DIR/best/`` (:mod:`.best`) when a point is placed and routed

    Raises
    ------
    ParameterError   the folder holds a sweep.json that is not a sweep's
    """

    def __init__(self, out_dir, spec, points: list, spec_file: str = ""):
        self.path = Path(out_dir) / FILE_NAME
        self.spec, self.spec_file = spec, spec_file
        previous, earlier = self._previous()
        self.records = {}
        for p in points:
            old = previous.pop(p["id"], None)
            self.records[p["id"]] = old if old and old.get("status") == "ok" else make_record(p, None)
        self.reused = sum(r["status"] == "ok" for r in self.records.values())
        self.earlier = earlier + list(previous.values())
        from .best import BestFiles
        self.best = BestFiles(out_dir) if any(p["place_and_route"] for p in points) else None

    def _previous(self) -> tuple[dict, list]:
        if not self.path.exists():
            return {}, []
        try:
            data = json.loads(self.path.read_text())
            records = {r["id"]: r for r in data["records"]}
            return records, list(data.get("earlier", []))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ParameterError("-o", str(self.path.parent), f"a folder whose {FILE_NAME} is a sweep's, or none "
                                 f"(it cannot be read: {exc})") from None

    def pending(self) -> list[str]:
        """Ids of the points still to run (not ``ok``)."""
        return [pid for pid, r in self.records.items() if r["status"] != "ok"]

    def put(self, record: dict):
        """Store one point's record (its ``reports`` taken off it: written to ``DIR/best/<design>/`` when it
        is its design's best) and rewrite the files."""
        reports = record.pop("reports", None)
        self.records[record["id"]] = record
        if self.best is not None and reports:
            self.best.offer(self.records.values(), record, reports)
        self.write()

    def counts(self) -> dict:
        out = dict.fromkeys(STATUSES, 0)
        for r in self.records.values():
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out

    def write(self):
        """Rewrite the whole file atomically (:func:`hhe_gen.apps.report.write_atomic`), and
        ``DIR/best.json`` with place and route."""
        updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        data = {"format": FORMAT, "name": self.spec.name, "spec": self.spec.to_json(), "spec_file": self.spec_file,
                "updated": updated, "counts": self.counts(), "records": list(self.records.values()),
                "earlier": self.earlier}
        write_atomic(self.path, json.dumps(data, indent=1) + "\n")
        if self.best is not None:
            self.best.write(self.records.values(), self.spec.name, updated)
