"""The tables printed at the end of a sweep: a row per point, then the errors of the points that failed;
with place and route, the best per design (:mod:`.best`)."""

from __future__ import annotations

__all__ = ["print_summary", "summary_rows", "print_best", "best_rows", "COLUMNS", "BEST_COLUMNS"]

COLUMNS = ("point", "status", "attempts", "LUT", "FF", "DSP", "BRAM", "Fmax MHz", "cycles", "time us",
           "throughput /s", "wall s", "worker")
BEST_COLUMNS = ("design", "best Fmax MHz", "nextpnr set", "synth set", "seed", "LUT", "min", "median", "max",
                "runs ok / points", "reports")


def _cell(value):
    return "-" if value is None else value


def summary_rows(records) -> list[tuple]:
    """One row of :data:`COLUMNS` per record."""
    rows = []
    for r in records:
        tput = r.get("throughput_per_s")
        rows.append((r["label"], r["status"], r.get("attempts", 0), _cell(r.get("lut")), _cell(r.get("ff")),
                     _cell(r.get("dsp")), _cell(r.get("bram")), _cell(r.get("fmax_mhz")), _cell(r.get("cycles")),
                     _cell(r.get("time_us")), f"{tput:.4g} {r['throughput_unit']}" if tput else "-",
                     _cell(r.get("wall_s")), _cell(r.get("worker"))))
    return rows


def print_summary(store) -> dict:
    """Print the sweep's table and, for each point not ``ok``, its error's last line; return the counts."""
    from hhe_gen.apps.report import console, print_table
    records = list(store.records.values())
    counts = store.counts()
    title = (f"hhe-gen sweep {store.spec.name or store.spec.core}: "
             + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    print_table(title, COLUMNS, summary_rows(records))
    for r in records:
        if r["status"] in ("failed", "timeout"):
            lines = [line for line in (r.get("error") or "").strip().splitlines() if line.strip()]
            console.print(f"{r['status']}: {r['label']}: {lines[-1] if lines else '(no message)'}", markup=False,
                          highlight=False)
    if store.reused:
        console.print(f"{store.reused} point(s) were already ok in {store.path} and were not run again")
    console.print(f"records: {store.path}")
    return counts


def best_rows(designs) -> list[tuple]:
    """One row of :data:`BEST_COLUMNS` per design.

    Parameters
    ----------
    designs : list of dict   :meth:`~.best.BestFiles.designs` (or :func:`~.best.select_best`'s entries)

    Returns
    -------
    list of tuple
    """
    rows = []
    for d in designs:
        b, f = d["best"] or {}, d["fmax"]
        rows.append((d["design"], _cell(b.get("fmax_mhz")), _cell(b.get("nextpnr_set")), _cell(b.get("synth_set")),
                     _cell(b.get("seed")), _cell(b.get("lut")), _cell(f["min"]), _cell(f["median"]), _cell(f["max"]),
                     f"{f['count']} / {d['points']}", _cell(d.get("reports"))))
    return rows


def print_best(store):
    """Print the best per design of a sweep with place and route (nothing without).

    Parameters
    ----------
    store : SweepFile   the sweep's records (:class:`~.records.SweepFile`)
    """
    from hhe_gen.apps.report import console, print_table
    if store.best is None:
        return
    designs = store.best.designs(store.records.values())
    print_table(f"hhe-gen sweep {store.spec.name or store.spec.core}: best per design", BEST_COLUMNS,
                best_rows(designs))
    console.print(f"best: {store.best.path}")
