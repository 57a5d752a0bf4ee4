"""Tables, JSON and plots for benchmarks and reports."""

import json
import sys
from pathlib import Path
from typing import NamedTuple

from rich.console import Console
from rich.table import Table

__all__ = ["console", "table", "print_table", "show", "write_json", "write_atomic", "read_results",
           "merge_results", "write_results", "ResultsWritten", "bench_tables", "fail", "PIPE_WIDTH"]

# When the output is not a terminal (a pipe, a file, captured by a test) rich falls back to 80 columns
# (or $COLUMNS) and wraps table cells, so that a row of a table spans several lines.  The one rule:
# off a terminal the consoles are at least PIPE_WIDTH columns wide, and show() / print_table() widen
# further to a table's natural width, so that no table row is ever broken across lines.
PIPE_WIDTH = 200


def _console(stderr: bool = False) -> Console:
    c = Console(stderr=stderr, highlight=False)
    if not c.is_terminal:
        c.width = max(c.width, PIPE_WIDTH)
    return c


console = _console()
err_console = _console(stderr=True)


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
    if isinstance(x, dict):                 # a metric with parts: one line each, "name value"
        return "\n".join(f"{k} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} {_fmt(v)}"
                         for k, v in x.items())
    return str(x)


def show(renderable, out: Console | None = None):
    """Print a table (any renderable) on ``out`` (default: the stdout console).  On a terminal it fits
    the terminal; off a terminal it is printed at its natural width, never wrapped (see PIPE_WIDTH)."""
    out = out or console
    if out.is_terminal:
        out.print(renderable)
        return
    from rich.measure import Measurement
    natural = Measurement.get(out, out.options.update_width(1 << 16), renderable).maximum
    width = out.width
    out.width = max(width, PIPE_WIDTH, natural)   # print() cannot go wider than the console
    try:
        out.print(renderable)
    finally:
        out.width = width


def print_table(title, columns, rows):
    show(table(title, columns, rows))


def write_json(path, data) -> Path:
    """``data`` as indented JSON in ``path`` (:func:`write_atomic`)."""
    return write_atomic(path, json.dumps(data, indent=1, default=str) + "\n")


def write_atomic(path, content) -> Path:
    """Write ``content`` (text or bytes) to ``path`` whole or not at all: a temporary file beside it,
    renamed over it when complete (the temporary file is removed on any error, which is raised).

    Parameters
    ----------
    path : path           the file (its folder is created)
    content : str | bytes its new content
    """
    import os
    import tempfile
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                         delete=False) as f:
            tmp = f.name
            f.write(content.encode() if isinstance(content, str) else content)
        os.replace(tmp, path)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


class ResultsWritten(NamedTuple):
    """What :func:`write_results` did.

    Members
    -------
    path : Path            the results file
    kept : int             rows of the file's earlier content that were kept (not run again)
    replaced : int         rows of the earlier content replaced by a row of this run
    backup : Path | None   where an earlier content that did not parse was moved (None: no such move)
    rows : list[dict]      the file's rows now (the earlier ones and this run's)
    """
    path: Path
    kept: int
    replaced: int
    backup: Path | None
    rows: list


def read_results(path, *, key=("group", "name"), option: str = "--json") -> list[dict] | None:
    """The rows of the results file ``path`` (``{"results": [row, ...]}``, as written by
    :func:`write_results`), or None when there is no such file.

    Parameters
    ----------
    path : path     the file
    key : tuple     the fields every row must hold as strings (the rows' identity)
    option : str    the command-line option that named the file (for the error)

    Raises
    ------
    ParameterError  ``option``, when the file exists but is not such a results file (it does not
                    parse, or has another shape); the file is left as it is
    OSError         when it exists but cannot be read
    """
    from hhe_gen.params.errors import ParameterError
    path = Path(path)
    if not path.exists():
        return None
    text = path.read_text(errors="replace")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParameterError(option, str(path), f"a results file or a new file, but {path} does not parse as "
                             f"JSON ({exc}); it is left as it is: move it away or choose another {option}") \
            from None
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and all(isinstance(r.get(k), str) for k in key)
                                             for r in rows):
        raise ParameterError(option, str(path), f"a results file or a new file, but {path} is not "
                             "{\"results\": [rows with " + ", ".join(key) + "]}; it is left as it is: move it "
                             f"away or choose another {option}")
    return rows


def merge_results(earlier, rows, key=("group", "name")) -> list[dict]:
    """``earlier`` with every row of ``rows`` in place of the earlier row of the same ``key`` (at its
    position), and the rows of new keys appended in their order."""
    fresh = {_ident(r, key): r for r in rows}
    merged, placed = [], set()
    for r in earlier:
        k = _ident(r, key)
        if k not in fresh:
            merged.append(r)
        elif k not in placed:
            merged.append(fresh[k])
            placed.add(k)
    for k, r in fresh.items():
        if k not in placed:
            merged.append(r)
    return merged


def _ident(row: dict, key) -> tuple:
    return tuple(row.get(k) for k in key)


def write_results(path, rows, *, key=("group", "name"), option: str = "--json") -> ResultsWritten:
    """Add ``rows`` to the results file ``path`` ({"results": [...]}, :func:`write_atomic`): a row
    replaces the earlier row of the same ``key`` (a case or proof run again), every other earlier row
    stays.  An earlier content that does not parse as a results file (:func:`read_results`) is not
    lost: it is moved to a free ``<path>.bak`` / ``<path>.bak<N>`` first (``backup`` in the result);
    commands check the file with :func:`read_results` before their work, so this happens only when it
    was changed during the run."""
    from hhe_gen.params.errors import ParameterError
    path = Path(path)
    backup = None
    try:
        earlier = read_results(path, key=key, option=option) or []
    except ParameterError:
        backup = path.with_name(path.name + ".bak")
        n = 1
        while backup.exists():
            backup, n = path.with_name(f"{path.name}.bak{n}"), n + 1
        path.rename(backup)
        earlier = []
    merged = merge_results(earlier, rows, key)
    new = {_ident(r, key) for r in rows}
    replaced = sum(_ident(r, key) in new for r in earlier)
    write_json(path, {"results": merged})
    return ResultsWritten(path, len(earlier) - replaced, replaced, backup, merged)


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


def plot_area_vs_fmax(results, path, *, areas=("LUT4", "MULT18X18D"), group="reducer",
                      target_mhz: float | None = 125.0) -> Path:
    """Scatter plot of post-route Fmax against area, one panel per area metric (PNG, Agg backend).

    Parameters
    ----------
    results : iterable of dict   either flat dicts with ``fmax_mhz``, the ``areas`` keys, and
        optionally ``group`` (colour), ``width`` (marker) and ``latency`` (point label), or
        ``hhe-gen bench`` results (``{"params": ..., "metrics": ...}``, merged; a ``kind``
        parameter stands in for ``reducer``); entries without a numeric ``fmax_mhz`` are skipped
    path : file to write (folders are created)
    areas : metrics for the x axes (one panel each)
    group : key whose values get one colour each
    target_mhz : a dashed horizontal line at this frequency (None: none)

    Returns
    -------
    Path   the written file
    """
    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = []
    for r in results:
        p = {**r.get("params", {}), **r.get("metrics", {})} if "metrics" in r else dict(r)
        if group not in p and "kind" in p:
            p[group] = p["kind"]
        if isinstance(p.get("fmax_mhz"), (int, float)):
            points.append(p)
    groups = list(dict.fromkeys(str(p.get(group, "")) for p in points))
    widths = sorted({p.get("width") for p in points if p.get("width") is not None})
    markers = dict(zip(widths, "os^Dvp*hX"))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if len(groups) > len(colours):
        colours = [plt.get_cmap("tab20")(i) for i in range(20)]
    fig, axes = plt.subplots(1, len(areas), figsize=(6.5 * len(areas), 5), squeeze=False)
    for ax, area in zip(axes[0], areas):
        for gi, g in enumerate(groups):
            for w in widths or [None]:
                sel = [p for p in points if str(p.get(group, "")) == g and p.get("width") == w
                       and isinstance(p.get(area), (int, float))]
                if not sel:
                    continue
                label = g if w is None else f"{g} {w}b"
                ax.scatter([p[area] for p in sel], [p["fmax_mhz"] for p in sel],
                           color=colours[gi % len(colours)], marker=markers.get(w, "o"),
                           label=label, alpha=0.85)
                for p in sel:
                    if p.get("latency") is not None:
                        ax.annotate(f"L{p['latency']}", (p[area], p["fmax_mhz"]), fontsize=7,
                                    xytext=(3, 3), textcoords="offset points")
        if target_mhz is not None:
            ax.axhline(target_mhz, linestyle="--", color="grey", linewidth=1)
            ax.annotate(f"target {target_mhz:g} MHz", (0.01, target_mhz), fontsize=8,
                        xycoords=("axes fraction", "data"), xytext=(0, 3),
                        textcoords="offset points", color="grey")
        ax.set_xlabel(area)
        ax.set_ylabel("Fmax (MHz, post-route)")
        ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="center right", fontsize=8)
        fig.subplots_adjust(right=0.8)
    fig.suptitle("Fmax vs area (labels: latency in cycles)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_series(panels, path, *, title: str = "") -> Path:
    """Line plots, one panel per entry of ``panels`` (PNG, Agg backend).

    Parameters
    ----------
    panels : list of dict   each with ``series`` (dict label -> list of (x, y) points; points with
        a non-numeric y are dropped), ``xlabel``, ``ylabel``, and optionally ``logx`` / ``logy``
        (base-2 / base-10 axes: True or the base) and ``dashed`` (labels drawn dashed, e.g. bounds)
    path : file to write (folders are created)
    title : figure title

    Returns
    -------
    Path   the written file
    """
    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        dashed = set(panel.get("dashed", ()))
        for label, pts in panel["series"].items():
            pts = sorted((x, y) for x, y in pts if isinstance(y, (int, float)))
            if not pts:
                continue
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", markersize=4, label=label,
                    linestyle="--" if label in dashed else "-")
        for axis, key in (("x", "logx"), ("y", "logy")):
            base = panel.get(key)
            if base:
                getattr(ax, f"set_{axis}scale")("log", base=2 if base is True else base)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
