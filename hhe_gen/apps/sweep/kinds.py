"""The cores a sweep can measure: their parameters (defaults and allowed values), how each is built
and its cycle figures.

A :class:`CoreKind` names its parameters with their defaults and a shallow check each (type and
range, naming the parameter); the core's own constructor does the deep checks (e.g. lanes <= N/2,
a latency below the reducer's minimum) when :mod:`.spec` builds every point before anything is
submitted.  The constructions are the benchmarks' and the generator's (``hhe_gen.apps.bench.arith.build``,
``hhe_gen.apps.bench.butterfly.build``, ``hhe_gen.apps.generate.ntt_primes_for``), so a sweep
measures the same cores as ``hhe-gen bench`` and ``hhe-gen generate``.

Cycle figures (:meth:`CoreKind.figures`): ``cycles`` is what one item costs at full rate (the
multiplier's and the butterfly's latency, the NTT's command cycles from one ``cmd`` to the next
including load and unload, the XOF's cycles per squeezed block), ``per_cycle`` the items per
cycle in the steady state (``throughput_unit`` says what an item is), so that with a clock of
f MHz one item takes ``cycles / f`` microseconds and the core delivers ``per_cycle * f * 1e6``
items per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.errors import ParameterError

__all__ = ["Param", "CoreKind", "KINDS", "target_of"]

REDUCERS = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")
BUTTERFLY_FIELDS = ("zq", "zt", "complex")


def target_of(device: str) -> str:
    """The generator's target for a sweep device: "xilinx" for a Yosys ``synth_xilinx`` family, else "ecp5"."""
    from hhe_gen.flow.synth import XILINX_FAMILIES
    return "xilinx" if device in XILINX_FAMILIES else "ecp5"


@dataclass(frozen=True)
class Param:
    """One parameter of a core kind.

    Members
    -------
    default : object      the value when the spec does not give one
    check : callable      ``check(name, value) -> value``: the shallow check (raises ParameterError)
    text : str            what is allowed, for the documentation
    """
    default: object
    check: Callable
    text: str


def _one_of(*choices):
    def check(name, value):
        if isinstance(value, bool) or value not in choices:
            raise ParameterError(name, value, "one of " + ", ".join(map(repr, choices)))
        return value
    return check


def _int(low, high):
    return lambda name, value: check_int(name, value, low, high)


def _power_of_two(low, high):
    return lambda name, value: check_power_of_two(name, value, low, high)


def _optional(check):
    return lambda name, value: None if value is None else check(name, value)


def _bool(name, value):
    if not isinstance(value, bool):
        raise ParameterError(name, value, "true or false")
    return value


def _positive_number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ParameterError(name, value, "a number > 0")
    return value


def _fields(name, value):
    parts = value.split("+") if isinstance(value, str) else None
    if not parts or any(p not in BUTTERFLY_FIELDS for p in parts) or len(set(parts)) != len(parts):
        raise ParameterError(name, value, "fields joined by '+', each one of " + ", ".join(BUTTERFLY_FIELDS)
                             + " (e.g. 'zq+zt')")
    return value


@dataclass(frozen=True)
class CoreKind:
    """A core a sweep can measure.

    Members
    -------
    name : str             the spec's ``core``
    params : dict          parameter name -> :class:`Param`
    make : callable        ``make(params, target) -> wiring.Component`` (params complete and checked)
    cycle_figures : callable   ``cycle_figures(component, params) -> dict`` (see :meth:`figures`)
    help : str             one line for the documentation
    """
    name: str
    params: dict
    make: Callable
    cycle_figures: Callable
    help: str

    def complete(self, given: dict, where: str = "") -> dict:
        """The parameters with defaults filled in, each checked; an unknown name raises ParameterError."""
        out = {}
        for name, value in given.items():
            if name not in self.params:
                raise ParameterError(f"{where}{name}", value, f"a parameter of the {self.name!r} core: "
                                     + ", ".join(self.params))
            out[name] = self.params[name].check(f"{where}{name}", value)
        return {name: out.get(name, p.default) for name, p in self.params.items()}

    def build(self, params: dict, target: str):
        """The component of one point (``params`` as :meth:`complete` returns them)."""
        return self.make(params, target)

    def figures(self, component, params: dict) -> dict:
        """``cycles`` (per item at full rate), ``per_cycle`` (items per cycle), ``throughput_unit``
        (what an item is) and the kind's own cycle figures."""
        return self.cycle_figures(component, params)


# -- modular multiplier ------------------------------------------------------------------------------------
def _modmul(params, target):
    from hhe_gen.apps.bench.arith import build
    return build(params["reducer"], params["width"], params["latency"], target, params["variant"])


def _modmul_figures(unit, params):
    return {"cycles": unit.latency, "per_cycle": 1 / getattr(unit, "ii", 1), "throughput_unit": "mul",
            "latency": unit.latency, "tiles": getattr(unit, "tiles", None)}


def _variant(name, value):
    from hhe_gen.apps.bench.arith import VARIANTS
    return _one_of(*VARIANTS)(name, value)


# -- butterfly -------------------------------------------------------------------------------------------
def _butterfly(params, target):
    from hhe_gen.apps.bench.butterfly import build
    return build(tuple(params["fields"].split("+")), target=target, share=params["share"],
                 latency=params["latency"], max_stage_ns=params["max_stage_ns"])


def _butterfly_figures(bf, params):
    return {"cycles": bf.latency, "per_cycle": 1.0, "throughput_unit": "butterfly", "latency": bf.latency,
            "tiles": bf.tiles}


# -- NTT -------------------------------------------------------------------------------------------------
def _ntt(params, target):
    from hhe_gen.apps.generate import ntt_reducer_params, ntt_primes_for
    from hhe_gen.cores.ntt import IterativeNtt
    n, bits, reducer = params["n"], params["bits"], params["reducer"]
    primes = ntt_primes_for(reducer, n, bits, params["count"])
    return IterativeNtt(n, params["lanes"], primes, kind=reducer, latency=params["latency"], target=target,
                        twiddles=params["twiddles"], banking=params["banking"],
                        **ntt_reducer_params(reducer, bits, n))


def _ntt_figures(core, params):
    command = core.command_cycles(False)
    return {"cycles": command, "per_cycle": 1 / command, "throughput_unit": "NTT",
            "transform_cycles": core.transform_cycles(False), "bound": core.bound,
            "butterfly_latency": core.butterfly_latency}


# -- Keccak / SHAKE XOF ----------------------------------------------------------------------------------
def _keccak(params, target):
    from hhe_gen.cores.keccak import ShakeXof
    return ShakeXof(params["variant"], beat_bytes=params["beat_bytes"], rounds_per_cycle=params["rounds_per_cycle"])


def _keccak_figures(xof, params):
    from hhe_gen.cores.keccak import RATES, squeeze_bytes_per_cycle
    variant = 256 if params["variant"] == "both" else params["variant"]
    rate = squeeze_bytes_per_cycle(variant, params["beat_bytes"], params["rounds_per_cycle"])
    return {"cycles": round(RATES[variant] / rate, 3), "per_cycle": rate, "throughput_unit": "B",
            "perm_cycles": xof.perm_cycles}


KINDS = {
    "modmul": CoreKind("modmul", {
        "reducer": Param("barrett", _one_of(*REDUCERS), " | ".join(REDUCERS)),
        "width": Param(36, _int(16, 64), "bits 16 .. 64 (three primes of the reducer's form, N = 2^13)"),
        "latency": Param(None, _optional(_int(1, 64)), "register stages, null = the unit's minimum"),
        "variant": Param("", _variant, "'' (inferred DSPs), 'prim', 'prim-nok-bndluts', 'nok-bndluts'"),
    }, _modmul, _modmul_figures, "a pipelined modular multiplier (hhe-gen bench arith's units)"),
    "butterfly": CoreKind("butterfly", {
        "fields": Param("zq", _fields, "'zq', 'zt', 'complex' joined by '+' (DNA-HHE's 54-bit Z_q, Rubato's Z_t, "
                        "29-bit complex)"),
        "share": Param(True, _bool, "share the multipliers between the fields"),
        "latency": Param(None, _optional(_int(1, 64)), "multiplier section latency, null = minimum"),
        "max_stage_ns": Param(None, _optional(_positive_number), "bound on a sharing stage's delay (ns), or null"),
    }, _butterfly, _butterfly_figures, "the multi-field butterfly (hhe-gen bench butterfly's configuration)"),
    "ntt": CoreKind("ntt", {
        "n": Param(1024, _power_of_two(8, 1 << 16), "N, a power of two 8 .. 65536"),
        "lanes": Param(2, _power_of_two(1, 1 << 15), "P butterfly lanes, a power of two 1 .. N/2"),
        "bits": Param(30, _int(16, 64), "prime width"),
        "count": Param(1, _int(1, 8), "RNS primes"),
        "reducer": Param("barrett", _one_of(*REDUCERS), " | ".join(REDUCERS)),
        "banking": Param("dual", _one_of("dual", "single"), "dual | single"),
        "twiddles": Param("rom", _one_of("rom", "otf"), "rom | otf"),
        "latency": Param(None, _optional(_int(1, 64)), "butterfly latency, null = default"),
    }, _ntt, _ntt_figures, "the iterative NTT core (hhe-gen generate ntt's)"),
    "keccak": CoreKind("keccak", {
        "variant": Param(256, _one_of(128, 256, "both"), "128 | 256 | both"),
        "beat_bytes": Param(8, _one_of(1, 2, 4, 8), "bytes per stream beat"),
        "rounds_per_cycle": Param(1, _one_of(1, 2, 3, 4, 6, 8, 12, 24), "a divisor of 24"),
    }, _keccak, _keccak_figures, "the SHAKE XOF (hhe-gen bench keccak's)"),
}
"""Core kinds by the spec's ``core`` name."""

