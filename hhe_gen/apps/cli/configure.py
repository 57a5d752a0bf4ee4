"""The accelerator's options on the command line: one set of options for every command that
builds, plans or runs the accelerator (``generate accel``, ``accel asm | disasm | program | run |
plan``), read into one :class:`hhe_gen.engine.config.AcceleratorConfig`, and the configuration's
refusals named by the option that sets them.

For the same options every such command builds the accelerator ``generate accel`` writes.
"""

from __future__ import annotations

from hhe_gen.params import ParameterError

from .common import NTT_MEMORY, options_named

__all__ = ["OPTIONS", "add_accelerator_options", "config_from_args", "option_names"]

OPTIONS = {
    "params": "--params", "lanes": "--lanes", "rubato": "--rubato", "rubato_lanes": "--rubato-lanes",
    "network": "--no-network", "buffers": "--buffers", "window": "--window", "ooo": "--in-order",
    "reducer": "--reducer", "kind": "--reducer", "twiddles": "--twiddles", "ntt_in_place": "--ntt", "datapath": "--datapath",
    "slot_format": "--width / --frac-bits", "width": "--width", "frac_bits": "--frac-bits", "slot_rounding": "--rounding",
    "beat_words": "--beat-words", "target": "--target", "device": "--device",
}
"""A field of the configuration (or a part's own name for it) -> the option that sets it."""


def option_names():
    """Re-raise a refusal of the configuration naming the option (:data:`OPTIONS`) instead of the
    field (a context manager: :func:`.common.options_named`)."""
    return options_named(OPTIONS)


def add_accelerator_options(q, *, params_help: str | None = None) -> None:
    """The options of the accelerator (module docstring) on the sub-parser ``q``."""
    q.add_argument("--params", help=params_help or "preset name or parameters JSON file: the accelerator's "
                   "primes, N and scale (default: dna-hhe)")
    q.add_argument("--lanes", type=int, default=2, help="butterfly lanes P (default 2)")
    q.add_argument("--buffers", type=int, help="polynomial buffers, 1 .. 32 (default: what every client program "
                   "needs at the top level: 5 at 2 lanes and DNA-HHE's set)")
    q.add_argument("--rubato", metavar="SET", help="dual mode, with the Rubato unit for this set (Par-80S .. "
                   "Par-128L, or 128s ...; default: CKKS only)")
    q.add_argument("--window", type=int, default=None, help="task window entries (default 16)")
    q.add_argument("--in-order", action="store_true", help="in-order dispatch (default out-of-order)")
    q.add_argument("--no-network", action="store_true", help="without the network unit (no send / recv)")
    q.add_argument("--reducer", help="the NTT and pointwise reducer: barrett | special-barrett (default: "
                   "special-barrett when every prime has DNA-HHE's form, else barrett)")
    q.add_argument("--twiddles", default=None, choices=["otf", "rom"], help="NTT twiddles (default otf)")
    q.add_argument("--ntt", default="auto", choices=list(NTT_MEMORY), help="the NTT in place in banked buffers "
                   "or streaming through its own banks (default auto: in place when that needs no more block RAM)")
    q.add_argument("--datapath", default=None, choices=["separate", "shared"], help="the NTT and the pointwise "
                   "ops on a unit each (separate, the default) or on one butterfly array (shared)")
    q.add_argument("--width", type=int, help="the slots' fixed-point width W (default 38)")
    q.add_argument("--frac-bits", type=int, help="the slots' fraction bits F (default 36)")
    q.add_argument("--rounding", default=None, choices=["half-even", "half-up", "truncate"], help="how the "
                   "codec's shifts round (default half-even: the IFFT's halvings unbiased)")
    q.add_argument("--target", default="ecp5", help="ecp5 | xilinx | generic (DSP tile size)")
    q.add_argument("--device", default="LFE5UM5G-85F", help="the part the block-RAM plan counts against "
                   "(default LFE5UM5G-85F)")


def config_from_args(args, *, params=None):
    """The resolved :class:`~hhe_gen.engine.config.AcceleratorConfig` of the parsed options (an
    option a command lacks takes the configuration's default); ``params``: the parameters when
    the command took them from elsewhere (``accel run``: the keys)."""
    from hhe_gen.engine.config import SLOT_FORMAT, AcceleratorConfig
    from hhe_gen.host.interchange import params_from
    from hhe_gen.params import DEFAULT_PRESET
    if params is None:
        try:
            params = params_from(getattr(args, "params", None) or DEFAULT_PRESET)
        except ParameterError as exc:
            raise ParameterError("--params", getattr(args, "params", None), exc.allowed) from None
    width, frac = getattr(args, "width", None), getattr(args, "frac_bits", None)
    fmt = None if width is None and frac is None else (width if width is not None else SLOT_FORMAT[0],
                                                       frac if frac is not None else SLOT_FORMAT[1])
    config = AcceleratorConfig(
        params=params, lanes=getattr(args, "lanes", 2), rubato=getattr(args, "rubato", None),
        network=not getattr(args, "no_network", False), buffers=getattr(args, "buffers", None),
        window=getattr(args, "window", None), ooo=not getattr(args, "in_order", False),
        reducer=getattr(args, "reducer", None), twiddles=getattr(args, "twiddles", None),
        ntt_in_place=NTT_MEMORY[getattr(args, "ntt", "auto")], datapath=getattr(args, "datapath", None),
        slot_format=fmt, slot_rounding=getattr(args, "rounding", None),
        target=getattr(args, "target", "ecp5"), device=getattr(args, "device", "LFE5UM5G-85F"))
    with option_names():
        return config.resolve()
