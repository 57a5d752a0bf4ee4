"""Tables, JSON and plots for benchmarks and reports."""

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

__all__ = ["console", "table", "print_table", "write_json", "bench_table"]

console = Console(stderr=False, highlight=False)
err_console = Console(stderr=True, highlight=False)


def table(title: str, columns, rows) -> Table:
    t = Table(title=title, title_justify="left")
    rows = list(rows)
    for i, c in enumerate(columns):
        numeric = all(isinstance(r[i], (int, float)) for r in rows)
        t.add_column(str(c), justify="right" if numeric else "left")
    for r in rows:
        t.add_row(*[_fmt(x) for x in r])
    return t


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.4g}" if abs(x) < 1e6 else f"{x:.3e}"
    if isinstance(x, (list, tuple)):
        return ", ".join(_fmt(v) for v in x)
    return str(x)


def print_table(title, columns, rows):
    console.print(table(title, columns, rows))


def write_json(path, data) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")
    return path


def bench_table(results: list[dict]) -> Table:
    """One row per case: group, name, parameters, metrics, wall time."""
    t = Table(title="hhe-gen bench", title_justify="left")
    for c in ("group", "case", "params", "metrics", "wall s"):
        t.add_column(c)
    for r in results:
        metrics = r.get("error") or "  ".join(f"{k}={_fmt(v)}" for k, v in r["metrics"].items())
        params = " ".join(f"{k}={v}" for k, v in r["params"].items())
        t.add_row(r["group"], r["name"], params, metrics, f"{r['wall_s']:.2f}")
    return t


def fail(message: str, code: int = 2):
    err_console.print(f"[bold red]error:[/] {message}")
    sys.exit(code)
