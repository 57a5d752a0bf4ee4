"""Summaries, JSON and tables of a mutation run."""

from __future__ import annotations


def summarize(results) -> dict:
    """Per family: mutants, killed (including timeouts), timeout, survived, seconds."""
    out: dict[str, dict] = {}
    for r in results:
        fam = out.setdefault(r.mutant.family or "?", {"mutants": 0, "killed": 0, "timeout": 0, "survived": 0,
                                                      "seconds": 0.0})
        fam["mutants"] += 1
        fam["seconds"] = round(fam["seconds"] + r.seconds, 3)
        if r.status == "survived":
            fam["survived"] += 1
        else:
            fam["killed"] += 1
            fam["timeout"] += r.status == "timeout"
    return out


def to_json(results, baselines=None, **extra) -> dict:
    data = {"summary": summarize(results), "mutants": [r.record() for r in results]}
    if baselines is not None:
        data["baselines"] = [{"tests": list(b.tests), "seconds": round(b.seconds, 2), "returncode": b.returncode,
                              "baseline_failures": b.failures, "dropped_files": b.dropped,
                              "timeout_per_mutant": round(b.timeout, 1)} for b in baselines.values()]
    data.update(extra)
    return data


def results_table(results, title: str = "hhe-gen mutate"):
    """A rich Table of every result, survivors first."""
    from rich.table import Table
    order = {"survived": 0, "timeout": 1, "killed": 2}
    t = Table(title=title, title_justify="left")
    for col, just in (("status", "left"), ("file:line", "left"), ("op", "left"), ("original", "left"),
                      ("mutant", "left"), ("function", "left"), ("s", "right"), ("killed by", "left")):
        t.add_column(col, justify=just, overflow="fold")
    style = {"survived": "bold red", "timeout": "yellow", "killed": "green"}
    for r in sorted(results, key=lambda r: (order[r.status], r.mutant.file, r.mutant.start)):
        m = r.mutant
        t.add_row(f"[{style[r.status]}]{r.status}[/]", f"{m.file}:{m.line}", m.operator, m.original, m.mutant,
                  m.function, f"{r.seconds:.1f}", r.detail)
    return t


def mutants_table(mutants, title: str = "mutants"):
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    for col in ("file:line:col", "op", "original", "mutant", "function", "context"):
        t.add_column(col, overflow="fold")
    for m in mutants:
        t.add_row(f"{m.file}:{m.line}:{m.col}", m.operator, m.original, m.mutant, m.function, m.context)
    return t
