"""The benchmark harness behind ``hhe-gen bench``.

Cases are registered in code with :func:`bench_case`; every core family adds its own module of
cases to this package (``hhe_gen/apps/bench/<family>.py``), found automatically.  A case is a function returning a dict of metrics (numbers or short strings); the
harness times it, adds the wall time, and ``hhe-gen bench`` prints a table and adds the results to
its JSON file (:func:`hhe_gen.apps.report.write_results`: the row of a case run again replaces its
earlier row, the rows of the other cases stay).

Example::

    @bench_case("models", "ntt-n8192", n=8192)
    def _ntt_8192(n):
        ...
        return {"us_per_ntt": 1234.0}
"""

import importlib
import time
from dataclasses import dataclass, field

__all__ = ["BenchCase", "bench_case", "bench_summary", "cases", "groups", "run_case", "summarise", "CASE_MODULES"]

def _case_modules() -> list[str]:
    """Every module of this package registers cases on import (one module per core family)."""
    import pkgutil
    return [f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


CASE_MODULES = _case_modules()


@dataclass(frozen=True)
class BenchCase:
    """One registered benchmark.

    Members
    -------
    group : the ``hhe-gen bench GROUP`` it belongs to (e.g. "models", "arith", "ntt").
    name : unique within the group.
    fn : callable(**params) -> dict of metrics.
    params : keyword arguments passed to ``fn`` (and recorded in the results).
    quick : whether the case runs under ``--quick`` (the CI-sized subset).
    """
    group: str
    name: str
    fn: object
    params: dict = field(default_factory=dict)
    quick: bool = True


_REGISTRY: dict[tuple[str, str], BenchCase] = {}


def bench_case(group: str, name: str, *, quick: bool = True, **params):
    """Decorator registering ``fn`` as benchmark ``group/name`` called with ``params``."""
    def register(fn):
        key = (group, name)
        if key in _REGISTRY:
            raise ValueError(f"benchmark {group}/{name} is registered twice")
        _REGISTRY[key] = BenchCase(group, name, fn, dict(params), quick)
        return fn
    return register


_SUMMARIES: dict[str, object] = {}


def bench_summary(group: str):
    """Decorator registering ``fn(results, out_dir) -> list of paths`` for ``group``: run by
    ``hhe-gen bench`` after the cases, with the results of the group's cases (errors included), to
    draw what a table does not show (plots); it writes under ``out_dir``."""
    def register(fn):
        _SUMMARIES[group] = fn
        return fn
    return register


def summarise(results: list[dict], out_dir) -> list[str]:
    """The registered summaries of the groups present in ``results``; the files they wrote."""
    _load()
    written = []
    for group, fn in _SUMMARIES.items():
        mine = [r for r in results if r["group"] == group]
        if mine:
            written += [str(p) for p in fn(mine, out_dir)]
    return written


def _load():
    for mod in CASE_MODULES:
        importlib.import_module(mod)


def cases(selected_groups=None, quick: bool = False, names=None) -> list[BenchCase]:
    """The registered cases of ``selected_groups`` (all when None), in registration order; with
    ``names``, only the cases of those names (``name`` or ``group/name``), quick or not.

    Raises
    ------
    ParameterError   for a group without cases ("group"), for a name that is not a case of the
                     chosen groups ("--only", listing their cases)
    """
    from hhe_gen.params.errors import ParameterError
    _load()
    unknown = set(selected_groups or ()) - set(groups())
    if unknown:
        raise ParameterError("group", sorted(unknown)[0], "one of " + ", ".join(groups()))
    chosen = [c for c in _REGISTRY.values() if not selected_groups or c.group in selected_groups]
    if names:
        wanted = set(names)
        missing = wanted - {c.name for c in chosen} - {f"{c.group}/{c.name}" for c in chosen}
        if missing:
            where = "the groups " + ", ".join(selected_groups) if selected_groups else "all groups"
            raise ParameterError("--only", sorted(missing)[0], f"a case of {where}, one of "
                                 + (", ".join(dict.fromkeys(c.name for c in chosen)) or "(none)"))
        return [c for c in chosen if c.name in wanted or f"{c.group}/{c.name}" in wanted]
    return [c for c in chosen if c.quick or not quick]


def groups() -> list[str]:
    _load()
    return sorted({g for g, _ in _REGISTRY})


def run_case(case: BenchCase) -> dict:
    """Run one case; return {"group", "kind", "name", "params", "metrics", "wall_s"} (errors recorded,
    not raised; "kind" is the measuring function's name, cases of one kind share their metrics)."""
    t0 = time.perf_counter()
    try:
        metrics, error = case.fn(**case.params), None
    except Exception as exc:  # a failing case must not hide the others' results
        metrics, error = {}, f"{type(exc).__name__}: {exc}"
    out = {"group": case.group, "kind": getattr(case.fn, "__name__", ""), "name": case.name,
           "params": case.params, "metrics": metrics,
           "wall_s": round(time.perf_counter() - t0, 4)}
    if error:
        out["error"] = error
    return out
