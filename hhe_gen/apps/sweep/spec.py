"""A sweep specification (YAML or JSON): reading it, checking every entry and expanding it into points.

Keys (every other key is an error naming it; docs/sweep.md has an example)::

    core: ntt                      # a kind of :data:`~.kinds.KINDS`: modmul, butterfly, ntt, keccak
    device: [85k, xc7]             # ECP5 sizes (nextpnr-ecp5's), or Yosys synth_xilinx families (xc7 ...)
    axes: {lanes: [1, 2, 4]}       # parameter -> list of values: the points are their cartesian product
    fixed: {n: 1024, bits: 30}     # parameter -> one value (every other parameter has its default)
    place_and_route: false         # ECP5 only: nextpnr-ecp5 after Yosys (Fmax); default false (area only)
    seeds: [1, 2, 3]               # nextpnr seeds (more than one needs place_and_route)
    nextpnr:                       # nextpnr option sets, each point is run with each
      - {placer: heap, router: router1}
      - {placer: static, router: router2, args: ["--placer-heap-beta", "0.5"], name: static-r2}
    freq_mhz: 125                  # nextpnr's target frequency
    package: CABGA381              # ECP5 package
    synth:                         # synth_ecp5 option sets (ECP5 points), each point is run with each
      - {args: [], abc9: true}
      - {args: [-nowidelut, -nodffe], abc9: false, name: lut4-abc}
    synth_args: [-nowidelut]       # or a single set: extra synth_ecp5 options (:data:`SYNTH_OPTIONS`) ...
    abc9: true                     # ... and the LUT mapping, ABC9 (false: classic abc -lut 4); not with synth
    timeout: 3600                  # seconds per job (the job is killed and recorded as timeout)
    retries: 2                     # re-runs of a job whose worker died or whose process was killed
    cache: true                    # use the synthesis cache ($HHE_GEN_CACHE/synth)
    name: my sweep                 # a title for the table and the plots

The points of an ECP5 device are the cartesian product of the axes, the synth option sets and,
with place and route, the nextpnr option sets and seeds; Xilinx points are Yosys ``synth_xilinx``
runs of the axes alone.

Everything is checked before anything runs: each key's type and range, each core parameter, and
then every distinct core of the sweep is constructed (not elaborated) once, so that the core's
own checks (lanes <= N/2, a latency below the reducer's minimum ...) stop the sweep at once; its
cycle figures (:meth:`~.kinds.CoreKind.figures`) come from that construction.  Errors are
:class:`~hhe_gen.params.errors.ParameterError` naming the key (``axes.lanes``, ``nextpnr[1].router``,
``synth[0].args``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from .kinds import KINDS, target_of

__all__ = ["SweepSpec", "NextpnrSet", "SynthSet", "SPEC_KEYS", "SYNTH_OPTIONS", "load_spec", "parse_spec",
           "check_scheduler_address", "MAX_POINTS"]

SPEC_KEYS = ("core", "device", "axes", "fixed", "place_and_route", "seeds", "nextpnr", "freq_mhz", "package",
             "synth", "synth_args", "abc9", "timeout", "retries", "cache", "name")
NEXTPNR_KEYS = ("name", "placer", "router", "args")
SYNTH_KEYS = ("name", "args", "abc9")
#: the synth_ecp5 (Yosys 0.70 ``help synth_lattice``) options a synth option set may give: those that change
#: the mapping of the same netlist (the others name files, change the flow or the design's meaning)
SYNTH_OPTIONS = {
    "-nowidelut": "no PFU muxes: LUT4s only (no wider LUTs)",
    "-nodffe": "no flip-flops with clock enable (the enable goes into LUTs)",
    "-noccu2": "no CCU2C carry cells (adders in LUTs)",
    "-nobram": "no block RAM (DP16KD)",
    "-nolutram": "no LUT RAM (DPR16X4)",
    "-nodsp": "no DSP multipliers (MULT18X18D)",
    "-cmp2softlogic": "constant comparisons in LUTs, not on the carry chain",
    "-dff": "ABC9 maps across flip-flops (abc9 -dff; only with abc9: true)",
}
PLACERS = ("heap", "sa", "static")
ROUTERS = ("router1", "router2")
MAX_POINTS = 10000
DEFAULT_TIMEOUT = 3600.0
DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class NextpnrSet:
    """One nextpnr-ecp5 option set of a sweep.

    Members
    -------
    name : str     its label in the records and plots (default ``placer/router``)
    placer : str   ``--placer`` (heap, sa, static)
    router : str   router1 | router2
    args : tuple   further nextpnr-ecp5 options
    """
    name: str
    placer: str
    router: str
    args: tuple = ()

    def to_json(self) -> dict:
        return {"name": self.name, "placer": self.placer, "router": self.router, "args": list(self.args)}


@dataclass(frozen=True)
class SynthSet:
    """One synth_ecp5 option set of a sweep.

    Members
    -------
    name : str     its label in the records and plots (default ``abc9`` or ``abc`` and the options)
    args : tuple   synth_ecp5 options (:data:`SYNTH_OPTIONS`)
    abc9 : bool    LUT mapping by ABC9 (False: the classic ``abc -lut 4``)
    """
    name: str
    args: tuple = ()
    abc9: bool = True

    def to_json(self) -> dict:
        return {"name": self.name, "args": list(self.args), "abc9": self.abc9}


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep specification (see the module docstring for the keys).

    Members
    -------
    core : str; devices : tuple of str; axes : dict name -> tuple of values; fixed : dict;
    place_and_route : bool; seeds : tuple of int; nextpnr : tuple of :class:`NextpnrSet`;
    freq_mhz : float; package : str; synth : tuple of :class:`SynthSet`; timeout : float (s);
    retries : int; cache : bool; name : str
    """
    core: str
    devices: tuple
    axes: dict
    fixed: dict
    place_and_route: bool = False
    seeds: tuple = (1,)
    nextpnr: tuple = (NextpnrSet("heap/router1", "heap", "router1"),)
    freq_mhz: float = 125
    package: str = "CABGA381"
    synth: tuple = (SynthSet("abc9"),)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    cache: bool = True
    name: str = ""

    def to_json(self) -> dict:
        """The spec as it was understood (defaults filled in), for sweep.json."""
        return {"core": self.core, "device": list(self.devices), "axes": {k: list(v) for k, v in self.axes.items()},
                "fixed": dict(self.fixed), "place_and_route": self.place_and_route, "seeds": list(self.seeds),
                "nextpnr": [s.to_json() for s in self.nextpnr], "freq_mhz": self.freq_mhz,
                "package": self.package, "synth": [s.to_json() for s in self.synth],
                "timeout": self.timeout, "retries": self.retries, "cache": self.cache, "name": self.name}

    def points(self) -> list[dict]:
        """Every point of the sweep (JSON-able dicts, in a fixed order), each core constructed once
        to check it and take its cycle figures.

        Returns
        -------
        list of dict   ``id`` (12 hex digits of a hash of what determines the result), ``label``,
                       ``design`` (the label without the option sets and seed), ``core``,
                       ``params`` (all of them), ``device``, ``target``, ``package``,
                       ``place_and_route``, ``seed``, ``nextpnr`` (a set's dict, or None without place
                       and route), ``nextpnr_set`` and ``synth_set`` (the sets' names, None where none
                       applies), ``freq_mhz``, ``synth_args``, ``abc9``, ``cache``, ``timeout``,
                       ``figures`` (:meth:`~.kinds.CoreKind.figures`); the label names the synth set
                       only when the spec has more than one

        Raises
        ------
        ParameterError   a point whose core refuses its parameters (named, with the point)
        """
        kind = KINDS[self.core]
        names = list(self.axes)
        combos = list(itertools.product(*self.axes.values()))
        figures = {}
        out = []
        for device in self.devices:
            target = target_of(device)
            routed = self.place_and_route and target == "ecp5"
            synth_sets = self.synth if target == "ecp5" else (None,)
            pnr_runs = [(s, n) for n in self.nextpnr for s in self.seeds] if routed else [(None, None)]
            runs = [(s, n, y) for y in synth_sets for s, n in pnr_runs]
            for combo in combos:
                given = {**self.fixed, **dict(zip(names, combo))}
                params = kind.complete(given)
                key = (json.dumps(params, sort_keys=True), target)
                if key not in figures:
                    figures[key] = _construct(kind, params, target, given)
                for seed, option_set, synth_set in runs:
                    out.append(self._point(kind, params, device, target, routed, seed, option_set, synth_set,
                                           combo, figures[key]))
        return out

    def _point(self, kind, params, device, target, routed, seed, option_set, synth_set, combo, figures) -> dict:
        identity = {"core": kind.name, "params": params, "device": device,
                    "package": self.package if target == "ecp5" else None, "place_and_route": routed,
                    "seed": seed, "nextpnr": None if option_set is None else
                    {"placer": option_set.placer, "router": option_set.router, "args": list(option_set.args)},
                    "freq_mhz": self.freq_mhz if routed else None,
                    "synth_args": [] if synth_set is None else list(synth_set.args),
                    "abc9": True if synth_set is None else synth_set.abc9}
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
        design = " ".join([f"{n}={v}" for n, v in zip(self.axes, combo)] + [device])
        label = " ".join([design] + ([option_set.name] if routed else [])
                         + ([synth_set.name] if synth_set is not None and len(self.synth) > 1 else [])
                         + ([f"seed={seed}"] if routed else []))
        return {"id": digest, "label": label, "design": design, **identity, "target": target,
                "nextpnr_set": None if option_set is None else option_set.name,
                "synth_set": None if synth_set is None else synth_set.name,
                "cache": self.cache, "timeout": self.timeout, "figures": figures}


def _construct(kind, params, target, given) -> dict:
    """Build one core (construction only) and return its cycle figures; its ParameterError names the point."""
    from hhe_gen.cores.unused import mark_unused
    try:
        component = kind.build(params, target)
    except ParameterError as exc:
        where = ", ".join(f"{k}={v!r}" for k, v in given.items()) or "defaults"
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (the {kind.name} core at {where}, "
                             f"target {target})") from None
    mark_unused(component, deep=True)
    return kind.figures(component, params)


# -- reading and checking --------------------------------------------------------------------------------
def load_spec(path) -> SweepSpec:
    """Read and check a spec file (``.json``; anything else is read as YAML, which includes JSON).

    Raises
    ------
    ParameterError   the file cannot be read or parsed (named ``SPEC``), or any entry is bad
    """
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ParameterError("SPEC", str(path), f"a readable YAML or JSON file ({why})") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml
            data = yaml.safe_load(text)
    except ValueError as exc:           # json.JSONDecodeError
        raise ParameterError("SPEC", str(path), f"valid JSON ({exc})") from None
    except Exception as exc:            # yaml.YAMLError and its subclasses
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParameterError("SPEC", str(path), f"valid YAML ({first})") from None
    return parse_spec(data)


def parse_spec(data) -> SweepSpec:
    """Check a spec given as a dict (the parsed file) and return it with defaults filled in.

    Raises
    ------
    ParameterError   naming the first bad key or value
    """
    from hhe_gen.flow.synth import ECP5_DEVICES, ECP5_PACKAGES, XILINX_FAMILIES
    if not isinstance(data, dict):
        raise ParameterError("SPEC", data, "a mapping of keys (" + ", ".join(SPEC_KEYS) + ")")
    for key in data:
        if key not in SPEC_KEYS:
            raise ParameterError(key, data[key], "a key of a sweep spec: " + ", ".join(SPEC_KEYS))
    core = data.get("core")
    if core not in KINDS:
        raise ParameterError("core", core, "one of " + ", ".join(KINDS))
    kind = KINDS[core]
    devices = _list(data, "device", ["85k"])
    allowed = ECP5_DEVICES + tuple(XILINX_FAMILIES)
    for i, d in enumerate(devices):
        if d not in allowed:
            raise ParameterError(f"device[{i}]", d, "an ECP5 size (" + ", ".join(ECP5_DEVICES)
                                 + ") or a Yosys synth_xilinx family (" + ", ".join(XILINX_FAMILIES) + ")")
    _unique("device", devices)
    package = data.get("package", "CABGA381")
    for d in devices:
        if d in ECP5_DEVICES and package not in ECP5_PACKAGES[d.split("-")[-1]]:
            raise ParameterError("package", package, f"one of {', '.join(ECP5_PACKAGES[d.split('-')[-1]])} "
                                 f"(device {d})")
    axes = _mapping(data, "axes")
    fixed = _mapping(data, "fixed")
    for name, values in axes.items():
        if not isinstance(values, list) or not values:
            raise ParameterError(f"axes.{name}", values, "a non-empty list of values (one value goes under fixed)")
        for v in values:
            kind.complete({name: v}, "axes.")
        _unique(f"axes.{name}", values)
    for name, value in fixed.items():
        if name in axes:
            raise ParameterError(f"fixed.{name}", value, "a parameter that is not also an axis")
        if isinstance(value, list):
            raise ParameterError(f"fixed.{name}", value, "one value (lists of values go under axes)")
    kind.complete(fixed, "fixed.")
    routed = _bool(data, "place_and_route", False)
    seeds = _list(data, "seeds", [1])
    for i, s in enumerate(seeds):
        check_int(f"seeds[{i}]", s, 0, (1 << 31) - 1, "a nextpnr seed, an integer 0 .. 2^31 - 1")
    _unique("seeds", seeds)
    option_sets = _nextpnr_sets(data.get("nextpnr"))
    if not routed and len(seeds) > 1:
        raise ParameterError("seeds", seeds, "one seed unless place_and_route is true (Yosys does not use it)")
    if not routed and len(option_sets) > 1:
        raise ParameterError("nextpnr", data.get("nextpnr"), "one option set unless place_and_route is true")
    freq = data.get("freq_mhz", 125)
    if isinstance(freq, bool) or not isinstance(freq, (int, float)) or not 1 <= freq <= 1000:
        raise ParameterError("freq_mhz", freq, "a number 1 .. 1000 (MHz)")
    synth_sets = _synth_sets(data)
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 7 * 86400:
        raise ParameterError("timeout", timeout, "seconds per job, a number > 0 (at most a week)")
    retries = check_int("retries", data.get("retries", DEFAULT_RETRIES), 0, 10)
    name = data.get("name", "")
    if not isinstance(name, str):
        raise ParameterError("name", name, "a text")
    spec = SweepSpec(core=core, devices=tuple(devices), axes={k: tuple(v) for k, v in axes.items()},
                     fixed=dict(fixed), place_and_route=routed, seeds=tuple(seeds), nextpnr=option_sets,
                     freq_mhz=freq, package=package, synth=synth_sets,
                     timeout=float(timeout), retries=retries, cache=_bool(data, "cache", True), name=name)
    count = len(devices) * len(seeds) * len(option_sets) * len(synth_sets)
    for values in axes.values():
        count *= len(values)
    if count > MAX_POINTS:
        raise ParameterError("axes", data.get("axes"), f"at most {MAX_POINTS} points in all ({count} here)")
    return spec


def _option_sets(key: str, raw, keys):
    """``(i, "key[i]", item)`` for each option set of the list ``raw`` (one mapping alone counts as a
    list of one), every item a mapping of known ``keys`` (errors name the key)."""
    shape = "{" + ", ".join(keys) + "}"
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise ParameterError(key, raw, f"a list of option sets {shape}")
    for i, item in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise ParameterError(where, item, f"a mapping {shape}")
        for name in item:
            if name not in keys:
                raise ParameterError(f"{where}.{name}", item[name], f"a key of a {key} option set: " + ", ".join(keys))
        yield i, where, item


def _nextpnr_sets(raw) -> tuple:
    if raw is None:
        return SweepSpec.nextpnr
    sets, seen = [], {}
    for i, where, item in _option_sets("nextpnr", raw, NEXTPNR_KEYS):
        placer, router = item.get("placer", "heap"), item.get("router", "router1")
        if placer not in PLACERS:
            raise ParameterError(f"{where}.placer", placer, "one of " + ", ".join(PLACERS))
        if router not in ROUTERS:
            raise ParameterError(f"{where}.router", router, "one of " + ", ".join(ROUTERS))
        args = item.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) and a for a in args):
            raise ParameterError(f"{where}.args", args, "a list of nextpnr-ecp5 option strings")
        if "--placer" in args or "--router" in args:
            raise ParameterError(f"{where}.args", args, "options other than --placer / --router (use those keys)")
        name = item.get("name", f"{placer}/{router}" + ("+" + " ".join(args) if args else ""))
        if not isinstance(name, str) or not name:
            raise ParameterError(f"{where}.name", name, "a non-empty text")
        same = seen.setdefault((placer, router, tuple(args)), i)
        if same != i:           # the same options twice would be the same points (one id)
            raise ParameterError(where, item, f"option sets listed once (nextpnr[{same}] has the same options)")
        sets.append(NextpnrSet(name, placer, router, tuple(args)))
    _unique("nextpnr (names)", [s.name for s in sets])
    return tuple(sets)


def _synth_sets(data) -> tuple:
    """The synth option sets: ``synth``, or the one set of ``synth_args`` and ``abc9`` (not both ways)."""
    if "synth" not in data:
        return (_synth_set({"args": _list(data, "synth_args", []), "abc9": data.get("abc9", True)},
                           {"args": "synth_args", "abc9": "abc9"}),)
    for key in ("synth_args", "abc9"):
        if key in data:
            raise ParameterError(key, data[key], "not with synth (give args and abc9 in each synth option set)")
    sets, seen = [], {}
    for i, where, item in _option_sets("synth", data["synth"], SYNTH_KEYS):
        synth_set = _synth_set(item, {k: f"{where}.{k}" for k in SYNTH_KEYS})
        same = seen.setdefault((frozenset(synth_set.args), synth_set.abc9), i)
        if same != i:
            raise ParameterError(f"{where}.args", item.get("args", []), f"option sets listed once (synth[{same}] "
                                 "has the same options)")
        sets.append(synth_set)
    _unique("synth (names)", [s.name for s in sets])
    return tuple(sets)


def _synth_set(item: dict, names: dict) -> SynthSet:
    """One checked synth option set from ``item`` (``args``, ``abc9``, ``name``); ``names``: key -> its
    name in the errors."""
    args = item.get("args", [])
    if isinstance(args, str):
        args = [args]
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ParameterError(names["args"], args, "a list of synth_ecp5 options: " + ", ".join(SYNTH_OPTIONS))
    for a in args:
        if a not in SYNTH_OPTIONS:
            raise ParameterError(names["args"], a, "a synth_ecp5 option of " + ", ".join(SYNTH_OPTIONS))
    _unique(names["args"], args)
    abc9 = item.get("abc9", True)
    if not isinstance(abc9, bool):
        raise ParameterError(names["abc9"], abc9, "true (ABC9) or false (classic abc -lut 4)")
    if "-dff" in args and not abc9:
        raise ParameterError(names["args"], "-dff", "options without -dff when abc9 is false (-dff is ABC9's)")
    name = item.get("name", ("abc9" if abc9 else "abc") + "".join(" " + a for a in args))
    if not isinstance(name, str) or not name:
        raise ParameterError(names.get("name", "synth.name"), name, "a non-empty text")
    return SynthSet(name, tuple(args), abc9)


def _list(data, key, default) -> list:
    value = data.get(key, default)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value and default:
        raise ParameterError(key, value, "a value or a non-empty list of values")
    return value


def _mapping(data, key) -> dict:
    value = data.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ParameterError(key, value, "a mapping parameter name -> value(s)")
    return value


def _bool(data, key, default) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ParameterError(key, value, "true or false")
    return value


def _unique(name, values):
    seen = set()
    for v in values:
        token = json.dumps(v, sort_keys=True, default=str)
        if token in seen:
            raise ParameterError(name, v, "values listed once")
        seen.add(token)


_ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$")


def check_scheduler_address(text) -> str:
    """A Dask scheduler address ``tcp://HOST:PORT`` (or ``tls://``), port 1 .. 65535; returned as given.

    Raises
    ------
    ParameterError   named ``--scheduler``
    """
    match = _ADDRESS.match(text) if isinstance(text, str) else None
    if not match or not 1 <= int(match.group(4)) <= 65535:
        raise ParameterError("--scheduler", text, "a Dask scheduler address tcp://HOST:PORT (or tls://HOST:PORT), "
                             "port 1 .. 65535, e.g. tcp://10.0.0.5:8786")
    return text

