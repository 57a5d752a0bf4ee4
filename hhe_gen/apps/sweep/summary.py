"""The table printed at the end of a sweep: a row per point, then the errors of the points that failed."""

from __future__ import annotations

__all__ = ["print_summary", "summary_rows", "COLUMNS"]

COLUMNS = ("point", "status", "attempts", "LUT", "FF", "DSP", "BRAM", "Fmax MHz", "cycles", "time us",
           "throughput /s", "wall s", "worker")


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
