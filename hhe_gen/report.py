"""Tables, JSON and plots for benchmarks and reports."""

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

__all__ = ["console", "table", "print_table", "write_json", "bench_tables", "fail"]

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


def bench_tables(results: list[dict]) -> list[Table]:
    """One table per benchmark kind (group and measuring function): a row per case, a column per metric."""
    out = []
    for group, kind in dict.fromkeys((r["group"], r.get("kind", "")) for r in results):
        rows = [r for r in results if r["group"] == group and r.get("kind", "") == kind]
        metrics = list(dict.fromkeys(k for r in rows for k in r["metrics"]))
        t = Table(title=f"hhe-gen bench {group}: {kind}", title_justify="left")
        t.add_column("case", no_wrap=True)
        t.add_column("params")
        for m in metrics:
            t.add_column(m, justify="right")
        t.add_column("wall s", justify="right")
        for r in rows:
            params = " ".join(f"{k}={v}" for k, v in r["params"].items())
            cells = [_fmt(r["metrics"].get(m, "")) for m in metrics] if "error" not in r else \
                [r["error"]] + [""] * (len(metrics) - 1)
            t.add_row(r["name"], params, *cells, f"{r['wall_s']:.2f}")
        out.append(t)
    return out


def fail(message: str, code: int = 2):
    err_console.print(f"[bold red]error:[/] {message}")
    sys.exit(code)
