"""Place and route of a whole SoC that LiteX wrote out (``Builder(...).build(run=False)``): Yosys,
nextpnr-ecp5 and ecppack through the project's YoWASP runner, with the options LiteX's own build
script cannot pass; and Yosys ``synth_xilinx`` for Xilinx-7 boards, where the open toolchain stops
at synthesis here.  Cached like :mod:`hhe_gen.flow.synth` (``$HHE_GEN_CACHE/synth``).

    result = place_and_route_ecp5(gateware, "lambdaconcept_ecpix5", device="um5g-85k",
                                  package="CABGA554", speed=8, synth_args=("-nowidelut",))
    result["clocks"], result["utilisation"], result["bitstream"]

LiteX's ``<top>.ys`` (or Vivado's ``<top>.tcl``) names the Verilog files (the accelerator's, the
CPU's, the SoC's); they are read in that order, with the memory initialisers (``*.init``) and
constraints beside them.  The key of a
run covers all of them, the tool versions and the options.  During the long steps a line shows
what nextpnr is doing, once a minute.
"""

from __future__ import annotations

import json
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from hhe_gen.flow.congestion import HEATMAP_PREFIX, summarise_heatmaps
from hhe_gen.flow.runner import run
from hhe_gen.flow.synth_cache import cached_run, tools_fingerprint
from hhe_gen.flow.synth_reports import critical_path, ecp5_area, xilinx_area
from hhe_gen.flow.tools import ToolError, say
from hhe_gen.params.errors import ParameterError

__all__ = ["gateware_sources", "place_and_route_ecp5", "synth_xilinx_gateware", "packed_utilisation", "RouterStall",
           "ROUTER_PATIENCE", "ROUTER_TAIL"]

ROUTER_PATIENCE = 20
"""router2 iterations without fewer overused wires than its best so far, after which the flow stops
nextpnr while that best is :data:`ROUTER_TAIL` wires or more: the design does not route with these
options.  (Measured here: the 2-lane toy-ring SoC's best was 1,571 overused wires at iteration 23,
and 6,435 at iteration 42.)"""

ROUTER_TAIL = 100
"""Below this many overused wires router2 is in its tail, which is slow but converges: it is given
``4 x patience`` iterations without a new best.  (Measured here: the 1-lane toy-ring SoC went from
2 overused wires at iteration 70 to 1 at 94 and routed at 95.)"""


class RouterStall:
    """``give_up`` for :func:`hhe_gen.flow.runner.run` on nextpnr's router2: reads the log as it
    grows and, once ``patience`` iterations passed without fewer overused wires than the best so
    far, says so (the reason to stop); ``4 x patience`` iterations once that best is below
    :data:`ROUTER_TAIL`.

    Members
    -------
    iterations : list of (iteration, overused wires)   router2's progress so far
    reason : str or None                               set when it said to stop
    """

    _LINE = re.compile(r"iter=(\d+) wires=\d+ overused=(\d+)")

    def __init__(self, log: Path, patience: int = ROUTER_PATIENCE):
        if not isinstance(patience, int) or patience < 1:
            raise ParameterError("router_patience", patience, "an integer >= 1 (router2 iterations)")
        self.log, self.patience = Path(log), patience
        self.iterations: list[tuple[int, int]] = []
        self.reason: str | None = None
        self._offset, self._partial = 0, ""

    def _read(self) -> None:
        try:
            with open(self.log, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        self._offset += len(chunk)
        lines = (self._partial + chunk.decode(errors="replace")).split("\n")
        self._partial = lines.pop()
        for line in lines:
            m = self._LINE.search(line)
            if m:
                self.iterations.append((int(m.group(1)), int(m.group(2))))

    def __call__(self) -> str | None:
        self._read()
        if not self.iterations:
            return None
        best_at, best = min(self.iterations, key=lambda t: (t[1], t[0]))
        last = self.iterations[-1][0]
        patience = self.patience if best >= ROUTER_TAIL else 4 * self.patience
        if best > 0 and last - best_at >= patience:
            self.reason = (f"router2 does not converge: {best:,} overused wires at best (iteration {best_at}), "
                           f"none fewer in the {last - best_at} iterations since ({self.iterations[-1][1]:,} now)")
        return self.reason


def _router(nextpnr_args) -> str:
    """The router nextpnr-ecp5 runs with these options (its own default: router1)."""
    args = list(nextpnr_args)
    return args[args.index("--router") + 1] if "--router" in args[:-1] else "router1"


def packed_utilisation(log_text: str) -> dict[str, dict[str, int]]:
    """nextpnr's "Device utilisation" table (after packing) from its log: cell -> used, available."""
    out = {}
    table = log_text.split("Device utilisation:", 1)
    if len(table) < 2:
        return out
    for line in table[1].splitlines()[1:]:
        m = re.match(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)", line)
        if not m:
            if line.strip() in ("", "Info:"):
                break
            continue
        out[m.group(1)] = {"used": int(m.group(2)), "available": int(m.group(3))}
    return out


def gateware_sources(gateware: Path, top: str) -> list[Path]:
    """The Verilog files LiteX's build script reads, in its order: ``<top>.ys`` (Yosys flows) or
    ``<top>.tcl`` (Vivado)."""
    gateware = Path(gateware)
    for script in (gateware / f"{top}.ys", gateware / f"{top}.tcl"):
        if script.exists():
            names = re.findall(r"^read_verilog\s+(?:-\S+\s+)*\{?([^}\s]+)\}?", script.read_text(), re.M)
            files = [Path(m) for m in names]
            return [f if f.is_absolute() else gateware / f for f in files]
    raise ParameterError("gateware", str(gateware), f"a LiteX gateware folder with {top}.ys or {top}.tcl")


def _inputs(gateware: Path, top: str, extra=()) -> tuple[str, dict[str, str]]:
    """The Verilog (concatenated, in order) and the side files (``*.init`` and ``extra``) by name."""
    text = "\n".join(p.read_text() for p in gateware_sources(gateware, top))
    side = {p.name: p.read_text() for p in sorted(Path(gateware).glob("*.init"))}
    for name in extra:
        side[name] = (Path(gateware) / name).read_text()
    return text, side


def _write_script(workdir: Path, side: dict, synth: str) -> None:
    """The side files and ``synth.ys``: ``top.v`` read as LiteX's script reads its files (deferred,
    ``keep`` attributes normalised), then ``synth`` and the cell statistics."""
    for name, content in side.items():
        (workdir / name).write_text(content)
    (workdir / "synth.ys").write_text(
        "verilog_defaults -push\nverilog_defaults -add -defer\nread_verilog top.v\nverilog_defaults -pop\n"
        'attrmap -tocase keep -imap keep="true" keep=1 -imap keep="false" keep=0 -remove keep=0\n'
        f"{synth}\ntee -q -o stat.json stat -json\n")


@contextmanager
def _heartbeat(log: Path, label: str, every: float = 60.0):
    """A line every ``every`` seconds with the last ``Info:`` line of ``log``."""
    stop = threading.Event()
    t0 = time.monotonic()

    def beat():
        while not stop.wait(every):
            last = ""
            try:
                for line in log.read_text(errors="replace").splitlines()[-200:]:
                    if line.startswith("Info:") and line[5:].strip():
                        last = line[5:].strip()
            except OSError:
                pass
            say(f"{label}: {time.monotonic() - t0:.0f} s" + (f" ({last[:90]})" if last else ""))

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()


def place_and_route_ecp5(gateware, top: str, *, device: str, package: str, speed: int = 8, seed: int = 1,
                         synth_args: tuple = (), nextpnr_args: tuple = (), cache: bool = True,
                         timeout: float | None = None, router_patience: int = ROUTER_PATIENCE):
    """Yosys ``synth_ecp5``, ``nextpnr-ecp5`` (constraints from ``<top>.lpf``) and ``ecppack`` on a
    LiteX gateware folder.

    Returns
    -------
    SynthResult (a dict): ``fits`` (False: the packed design is larger than the device, nothing was
    placed), ``routed`` (False: router2 made no progress for ``router_patience`` iterations
    (:class:`RouterStall`) and was stopped; ``route_failure`` says how far it got),
    ``router_trace`` (router2's overused wires per iteration), ``congestion`` (router2's overuse
    in its last congested iteration by module, :func:`.congestion.summarise_heatmaps`; None with
    router1), ``utilisation`` (nextpnr's used / available per cell type), ``area`` (Yosys cells,
    :func:`.synth_reports.ecp5_area`), ``clocks`` (per clock: ``achieved`` and ``constraint`` MHz,
    ``met``), ``critical_paths`` (per clock: :func:`.synth_reports.critical_path`, with the modules
    it runs through), ``met`` (every clock), ``bitstream`` / ``svf`` (paths in the cache; None when it does
    not fit), ``yosys_s``, ``nextpnr_s``, ``seed``, ``synth_args``, ``nextpnr_args``.
    """
    gateware = Path(gateware)
    text, side = _inputs(gateware, top, extra=(f"{top}.lpf",))
    tools = tools_fingerprint(("yosys", "nextpnr-ecp5", "ecppack"))
    options = {"flow": "soc-ecp5", "top": top, "device": device, "package": package, "speed": speed, "seed": seed,
               "synth_args": list(synth_args), "nextpnr_args": list(nextpnr_args), "side": side,
               "router_patience": router_patience}
    RouterStall(gateware, router_patience)            # a bad patience fails here, before Yosys

    def job(workdir: Path) -> dict:
        extra = "".join(" " + a for a in synth_args)
        _write_script(workdir, side, f"synth_ecp5 -top {top}{extra} -json netlist.json")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_ecp5 {top} (the whole SoC)")
        yosys_s = time.monotonic() - t0
        t0 = time.monotonic()
        common = [f"--{device}", "--package", package, "--speed", str(speed), "--json", "netlist.json",
                  "--lpf", f"{top}.lpf"]
        # packing first: nextpnr's placers do not stop on a design larger than the device
        run("nextpnr-ecp5", [*common, "--pack-only", "-l", "pack.log", "--quiet"], cwd=workdir, timeout=timeout,
            progress="nextpnr-ecp5 --pack-only (does it fit?)")
        over = {k: v for k, v in packed_utilisation((workdir / "pack.log").read_text()).items()
                if v["used"] > v["available"]}
        if over:
            say("does not fit: " + ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in over.items()))
            (workdir / "netlist.json").unlink()
            return {"yosys_s": round(yosys_s, 1), "nextpnr_s": None, "fits": False}
        stall = RouterStall(workdir / "nextpnr.log", router_patience)
        heatmap = []
        if _router(nextpnr_args) == "router2":       # congestion by net after each iteration
            (workdir / HEATMAP_PREFIX).parent.mkdir(exist_ok=True)
            heatmap = ["--router2-heatmap", HEATMAP_PREFIX]

        def congestion() -> dict | None:
            if not heatmap:
                return None
            folder = (workdir / HEATMAP_PREFIX).parent
            summary = summarise_heatmaps(folder, Path(HEATMAP_PREFIX).name, remove=True)
            if not any(folder.iterdir()):
                folder.rmdir()
            return summary

        try:
            with _heartbeat(workdir / "nextpnr.log", "nextpnr-ecp5"):
                run("nextpnr-ecp5", [*common, "--seed", str(seed), "--textcfg", f"{top}.config",
                                     "--timing-allow-fail", "--report", "report.json", "-l", "nextpnr.log", "--quiet",
                                     *heatmap, *nextpnr_args],
                    cwd=workdir, timeout=timeout, progress=f"nextpnr-ecp5 {top} ({device} {package}, seed {seed})",
                    give_up=stall)
        except ToolError:
            if stall.reason is None:
                raise
            say(f"nextpnr-ecp5 stopped: {stall.reason}")
            (workdir / "netlist.json").unlink()
            return {"yosys_s": round(yosys_s, 1), "nextpnr_s": round(time.monotonic() - t0, 1), "fits": True,
                    "routed": False, "route_failure": stall.reason, "router_trace": stall.iterations,
                    "congestion": congestion()}
        nextpnr_s = time.monotonic() - t0
        stall()                                        # the router's last iterations into its trace
        routed_congestion = congestion()
        run("ecppack", ["--bootaddr", "0", "--compress", f"{top}.config", "--svf", f"{top}.svf", "--bit", f"{top}.bit"],
            cwd=workdir, timeout=timeout, progress="ecppack (the bitstream)")
        (workdir / "netlist.json").unlink()
        (workdir / f"{top}.config").unlink()
        return {"yosys_s": round(yosys_s, 1), "nextpnr_s": round(nextpnr_s, 1), "fits": True,
                "router_trace": stall.iterations, "congestion": routed_congestion}

    def summarize(workdir: Path, done: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        if not done.get("fits", True) or not done.get("routed", True):
            return {"fits": done["fits"], "routed": False, "route_failure": done.get("route_failure"),
                    "router_trace": done.get("router_trace", []), "congestion": done.get("congestion"),
                    "clocks": {}, "met": False, "bitstream": None,
                    "svf": None, "utilisation": packed_utilisation((workdir / "pack.log").read_text()),
                    "area": ecp5_area(stat["design"]["num_cells_by_type"]), "yosys_s": done["yosys_s"],
                    "nextpnr_s": done.get("nextpnr_s"), "device": device, "package": package, "seed": seed,
                    "synth_args": list(synth_args), "nextpnr_args": list(nextpnr_args)}
        report = json.loads((workdir / "report.json").read_text())
        clocks = {}
        for clock, f in report.get("fmax", {}).items():
            clocks[clock] = {"achieved": round(f["achieved"], 2), "constraint": round(f["constraint"], 2),
                             "met": f["achieved"] >= f["constraint"]}
        used = {k: {"used": v["used"], "available": v["available"]}
                for k, v in report.get("utilization", {}).items() if v["used"]}
        paths = {clock: critical_path(report, clock) for clock in clocks}
        bit = workdir / f"{top}.bit"
        if not bit.exists():
            raise ValueError("no bitstream")
        return {"fits": True, "routed": True, "clocks": clocks, "critical_paths": {k: v for k, v in paths.items() if v},
                "met": all(c["met"] for c in clocks.values()),
                "utilisation": used, "router_trace": done.get("router_trace", []),
                "congestion": done.get("congestion"),
                "area": ecp5_area(stat["design"]["num_cells_by_type"]), "bitstream": str(bit),
                "svf": str(workdir / f"{top}.svf"), "yosys_s": done["yosys_s"], "nextpnr_s": done["nextpnr_s"],
                "device": device, "package": package, "seed": seed, "synth_args": list(synth_args),
                "nextpnr_args": list(nextpnr_args)}

    return cached_run("soc-ecp5", top, text, tools, options, cache, job, summarize)


def synth_xilinx_gateware(gateware, top: str, *, family: str = "xc7", cache: bool = True,
                          timeout: float | None = None):
    """Yosys ``synth_xilinx`` on a LiteX gateware folder: the utilisation (``area``:
    :func:`.synth_reports.xilinx_area`), ``yosys_s``.  Place and route is left to Vivado or
    openXC7 (the build's ``<top>.tcl``)."""
    gateware = Path(gateware)
    text, side = _inputs(gateware, top)
    tools = tools_fingerprint(("yosys",))
    options = {"flow": "soc-xilinx", "top": top, "family": family, "side": side}

    def job(workdir: Path) -> dict:
        _write_script(workdir, side, f"synth_xilinx -family {family} -top {top} -flatten")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_xilinx {top} (the whole SoC)")
        return {"yosys_s": round(time.monotonic() - t0, 1)}

    def summarize(workdir: Path, done: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        return {"area": xilinx_area(stat["design"]["num_cells_by_type"], ("DSP48E1", "CARRY4")),
                "yosys_s": done["yosys_s"], "family": family}

    return cached_run("soc-xilinx", top, text, tools, options, cache, job, summarize)

