"""The best result of each design of a sweep with place and route: ``DIR/best.json`` and ``DIR/best/<design>/``
(the timing-closure flow of docs/sweep.md).

A design is a point without its seed, nextpnr option set and synth option set: the same core
parameters and device (the records' ``design``).  Its best is its ``ok`` placed and routed record
with the highest post-route Fmax (:func:`select_best`; on a tie the earlier one in the spec's
order).  Both files are rewritten after each result (whole-file writes), so an interrupted sweep
keeps the best so far::

    best.json  {"format": 1, "name": ..., "updated": ..., "designs": [
                 {"design": "width=20 25k", "points": 8, "best": {the record} | null,
                  "fmax": {"count": 8, "min": .., "median": .., "max": ..},
                  "runs": [{"label", "nextpnr_set", "synth_set", "seed", "fmax_mhz"}, ...],   # best first
                  "folder": "best/width=20_25k", "reports": "best/width=20_25k" | null}, ...]}

``points`` counts the design's placed and routed points, ``fmax`` and ``runs`` its ``ok`` ones;
``reports`` is the folder when it holds the best record's reports (null when the best came from an
earlier run whose reports were not kept).  ``best/<design>/`` (the design label as a file name,
:func:`folder_names`) holds ``record.json`` (the best record; written last, it says whose reports
these are), ``timing.json`` (nextpnr's Fmax per clock and the critical path as the flow reads
them, the cells and utilisation, the run's cache key) and ``nextpnr_tail.log`` (the end of
nextpnr's log) - what the job brought back (:func:`~.jobs.run_reports`).
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from pathlib import Path

from hhe_gen.apps.report import write_atomic

from .records import is_number

__all__ = ["BestFiles", "select_best", "folder_names", "BEST_FILE", "BEST_DIR", "REPORT_FILES"]

BEST_FILE = "best.json"
BEST_DIR = "best"
#: the files of a best result's folder (record.json last: it marks the folder complete)
REPORT_FILES = ("timing.json", "nextpnr_tail.log", "record.json")
FORMAT = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def _fmax(record) -> float | None:
    """The record's post-route Fmax when it is an ok placed and routed run, else None."""
    fmax = record.get("fmax_mhz")
    return fmax if record.get("status") == "ok" and record.get("place_and_route") and is_number(fmax) \
        and fmax > 0 else None


def select_best(records) -> list[dict]:
    """The best record of each placed and routed design and the distribution of its Fmax.

    Parameters
    ----------
    records : iterable of dict   sweep records (:func:`~.records.make_record`), in the spec's order

    Returns
    -------
    list of dict   one per design with a placed and routed record, in order of first appearance:
                   ``design``, ``points`` (its placed and routed records), ``best`` (the ok record of
                   the highest Fmax, the earlier on a tie; None while none is ok), ``fmax`` (``count``,
                   ``min``, ``median``, ``max`` over its ok runs; None figures without any) and ``runs``
                   (``label``, ``nextpnr_set``, ``synth_set``, ``seed``, ``fmax_mhz`` of each ok run,
                   highest Fmax first)
    """
    designs = {}
    for r in records:
        if r.get("place_and_route"):
            designs.setdefault(r["design"], []).append(r)
    out = []
    for design, mine in designs.items():
        ok = sorted((r for r in mine if _fmax(r) is not None), key=lambda r: -_fmax(r))   # stable: spec order
        values = [_fmax(r) for r in ok]
        out.append({
            "design": design, "points": len(mine), "best": ok[0] if ok else None,
            "fmax": {"count": len(values), "min": min(values, default=None),
                     "median": round(statistics.median(values), 2) if values else None,
                     "max": max(values, default=None)},
            "runs": [{k: r.get(k) for k in ("label", "nextpnr_set", "synth_set", "seed", "fmax_mhz")} for r in ok]})
    return out


def folder_names(designs) -> dict:
    """A file name per design label: the label with every run of characters other than letters, digits and
    ``._=+-`` made one ``_`` (``width=20 25k`` -> ``width=20_25k``); a name already taken by an earlier
    design gets ``-`` and 8 hex digits of a hash of the label appended.

    Parameters
    ----------
    designs : iterable of str   design labels, in a fixed order

    Returns
    -------
    dict   label -> file name
    """
    out, taken = {}, set()
    for design in designs:
        name = _UNSAFE.sub("_", design).strip("._") or "design"
        if name in taken:
            name += "-" + hashlib.sha256(design.encode()).hexdigest()[:8]
        taken.add(name)
        out[design] = name
    return out


class BestFiles:
    """``DIR/best.json`` and ``DIR/best/<design>/`` of one sweep.

    Parameters
    ----------
    out_dir : path   the sweep's folder

    Members
    -------
    path : Path   best.json
    dir : Path    the folder of the reports folders
    """

    def __init__(self, out_dir):
        self.path = Path(out_dir) / BEST_FILE
        self.dir = Path(out_dir) / BEST_DIR
        self._held = {}                 # design -> id of the record whose reports its folder holds
        for record_file in self.dir.glob(f"*/{REPORT_FILES[-1]}") if self.dir.is_dir() else ():
            try:
                held = json.loads(record_file.read_text())
                self._held[held["design"]] = held["id"]
            except (OSError, ValueError, KeyError, TypeError):
                continue                # an unreadable folder is overwritten by the next best

    def offer(self, records, record: dict, reports: dict):
        """Write ``record``'s reports to its design's folder if it is that design's best.

        Parameters
        ----------
        records : iterable of dict   every record of the sweep (``record`` among them)
        record : dict                a new result
        reports : dict               its job's report artefacts (:func:`~.jobs.run_reports`)
        """
        records = list(records)
        best = select_best(r for r in records if r["design"] == record["design"])
        if not best or best[0]["best"] is None or best[0]["best"]["id"] != record["id"]:
            return
        folder = self.dir / folder_names(dict.fromkeys(r["design"] for r in records))[record["design"]]
        texts = {"timing.json": json.dumps(reports.get("timing"), indent=1) + "\n",
                 "nextpnr_tail.log": reports.get("nextpnr_log_tail") or "",
                 "record.json": json.dumps(record, indent=1) + "\n"}
        for name in REPORT_FILES:
            write_atomic(folder / name, texts[name])
        self._held[record["design"]] = record["id"]

    def designs(self, records) -> list[dict]:
        """:func:`select_best` of ``records``, each entry with its ``folder`` and ``reports`` (the folder when
        it holds the best record's reports, else None).

        Parameters
        ----------
        records : iterable of dict   every record of the sweep

        Returns
        -------
        list of dict   the entries of best.json's ``designs``
        """
        records = list(records)
        designs = select_best(records)
        names = folder_names(dict.fromkeys(r["design"] for r in records))
        for d in designs:
            folder = f"{BEST_DIR}/{names[d['design']]}"
            held = d["best"] is not None and self._held.get(d["design"]) == d["best"]["id"]
            d.update(folder=folder, reports=folder if held else None)
        return designs

    def write(self, records, name: str = "", updated: str = ""):
        """Rewrite best.json whole from ``records``.

        Parameters
        ----------
        records : iterable of dict   every record of the sweep
        name : str                   the sweep's name
        updated : str                the time stamp of the write
        """
        write_atomic(self.path, json.dumps({"format": FORMAT, "name": name, "updated": updated,
                                            "designs": self.designs(records)}, indent=1) + "\n")
