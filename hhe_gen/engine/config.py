"""The accelerator's configuration: one frozen object that decides every choice of an accelerator
(the client's, or the server engine of ``role="server"``), resolved once (as Lattigo's parameters
are), from which every part of the project builds the same hardware.

``hhe-gen generate accel``, ``accel run | plan``, :class:`hhe_gen.client.Client`, ``soc sim | build``,
the benchmarks and the tests take an :class:`AcceleratorConfig`; :meth:`AcceleratorConfig.resolve`
fills every default and records why (:meth:`AcceleratorConfig.describe`, written into the
manifest); :meth:`AcceleratorConfig.engine` builds the engine.  Two configurations that resolve
equal build the same accelerator.

Fields (None: chosen by :meth:`~AcceleratorConfig.resolve`)
-----------------------------------------------------------
role : str                    "client" (default): encode / encrypt / decrypt / decode, the sampler,
                              the codec (and Rubato, the network unit); "server": HMult,
                              relinearisation and rescale (:mod:`hhe_gen.engine.server_programs`):
                              Q and P built in, a slot each, the basis-conversion unit, no sampler,
                              codec, network or Rubato, the NTT streaming, ROM twiddles, Barrett
params : CKKSParams or str    the parameter set, or a preset name
lanes : int                   P, words per buffer row and butterflies per arithmetic unit (2)
rubato : str or None          a Rubato set ("128s", "Par-128S", ...): dual mode with the Rubato unit;
                              None: CKKS only
rubato_lanes : int            the Rubato unit's lanes (2)
network : bool                the network unit (``send`` / ``recv``: near-network) (True)
buffers : int or None         B polynomial buffers; None: every client program's need at the top level
                              (server: :data:`SERVER_BUFFERS`)
window : int or None          the task manager's window; None: 16 (client), 8 (server)
ooo : bool                    out-of-order dispatch (True)
reducer : str or None         the NTT and pointwise reducer; None: ``special-barrett`` when every
                              prime has DNA-HHE's form, else ``barrett``
twiddles : str or None        "otf" (on the fly) or "rom"; None: otf (client), rom (server)
ntt_in_place : bool or None   the NTT in the banked buffers (True) or streaming through its own
                              banks (False); None: in place when that costs no more block RAM
datapath : str or None        "shared": the NTT and the pointwise ops on one array of P butterflies
                              (the crypto unit, :class:`~hhe_gen.cores.engine.crypto_unit.CryptoUnit`);
                              "separate": a unit each, with P butterflies each; None: separate
                              (client), the server's is always separate
slot_format : (W, F) or None  the slots' fixed point; None: :data:`SLOT_FORMAT`
slot_rounding : str or None   how the codec's right shifts round (:data:`~hhe_gen.models.fft.ROUNDING_MODES`);
                              None: :data:`SLOT_ROUNDING`
decode_rows : frozenset or None   the row counts decode is built for; None: {1} when q_0 alone
                              decodes every message the slot format holds, else 1 and every prime
beat_words : int              64-bit words per memory beat, 1 .. min(P, 8) (1: a SoC's 64-bit port)
target : str                  "ecp5" (default) | "xilinx" | "generic"
device : str                  the part the block-RAM plan is counted against ("LFE5UM5G-85F")

A refusal is a :class:`~hhe_gen.params.errors.ParameterError` naming the field the user set (or
the one whose choice made the default impossible), never an internal name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from hhe_gen.cores.engine import isa
from hhe_gen.models.fft import ROUNDING_MODES, FixedPointFormat
from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.ckks import CKKSParams
from hhe_gen.params.errors import ParameterError

__all__ = ["SLOT_FORMAT", "SLOT_ROUNDING", "DATAPATHS", "REDUCERS", "TARGETS", "ROLES", "SERVER_BUFFERS", "AcceleratorConfig"]

SLOT_FORMAT = (38, 36)
"""The slot format (W, F) of a client accelerator: the narrowest whose precision at N = 2^13 meets
the demo's 30-bit bar (precision by format: ``hhe-gen bench fft``, docs/engine.md)."""
SLOT_ROUNDING = "half-even"
"""The client's rounding of the codec's shifts: ties to even, so the IFFT's halving steps carry no
bias (half-up's +1/4 LSB per halving gathers into one slot, the worst; :mod:`hhe_gen.models.fft`)."""
DATAPATHS = ("separate", "shared")
REDUCERS = ("barrett", "special-barrett")
"""The reducers a client accelerator's NTT and pointwise units are built with."""
TARGETS = ("ecp5", "xilinx", "generic")
ROLES = ("client", "server")
SERVER_BUFFERS = 24
"""The server engine's buffers by default: the key switch at DNA-HHE's three primes and the
fused HMult + relinearise + rescale (:func:`~hhe_gen.engine.server_programs.server_min_buffers`)."""

_ENGINE_NAMES = {"kind": "reducer", "fmt": "slot_format", "in_place": "ntt_in_place", "params": "rubato"}
"""Names the engine's parts give their parameters -> the configuration's field."""


def _special_form(params: CKKSParams) -> bool:
    """Whether every prime has DNA-HHE's form q = 2^k - 2N*bnd + 1 (one k, 1 <= bnd < 2^10)."""
    from hhe_gen.params.primes import dna_hhe_primes
    k = max(q.bit_length() for q in params.moduli)
    return set(params.moduli) <= {p.q for p in dna_hhe_primes(k, params.n)}


def _q0_decodes(params: CKKSParams, fmt) -> bool:
    """Whether every message the slot format holds decodes the same from q_0 alone:
    |coefficients| <= sqrt(2) * 2^(W-1-F) * Delta, below q_0 / 2 when 2^(W-F+log_scale+1) <= q_0."""
    w, f = fmt
    return 1 << (w - f + params.log_scale + 1) <= params.moduli[0]


def _in_place_saves(n: int, lanes: int, buffers: int, word_bits: int, qbits: int) -> tuple[bool, int, int]:
    """(in place costs no more DP16KD, banked blocks, streamed blocks): B * 2P banks of N/2P words
    against B buffers of N/P rows of P words plus the NTT core's 2P banks."""
    from hhe_gen.cores.engine.memory_plan import dp16kd_blocks
    p2 = 2 * lanes
    banked = buffers * p2 * dp16kd_blocks(n // p2, word_bits)
    streamed = buffers * dp16kd_blocks(n // lanes, lanes * word_bits) + p2 * dp16kd_blocks(n // p2, qbits)
    return banked <= streamed, banked, streamed


@dataclass(frozen=True)
class AcceleratorConfig:
    """Every choice of an accelerator (module docstring)."""
    params: CKKSParams | str = "dna-hhe"
    lanes: int = 2
    rubato: str | None = None
    rubato_lanes: int = 2
    network: bool = True
    buffers: int | None = None
    window: int | None = None
    ooo: bool = True
    reducer: str | None = None
    twiddles: str | None = None
    ntt_in_place: bool | None = None
    datapath: str | None = None
    slot_format: tuple | None = None
    slot_rounding: str | None = None
    decode_rows: frozenset | None = None
    beat_words: int = 1
    target: str = "ecp5"
    device: str = "LFE5UM5G-85F"
    role: str = "client"
    reasons: tuple = field(default=(), compare=False, repr=False)
    """(field, why) of every default :meth:`resolve` chose."""

    # -- resolution ------------------------------------------------------------------------------
    @property
    def resolved(self) -> bool:
        return isinstance(self.params, CKKSParams) and None not in (
            self.buffers, self.window, self.reducer, self.twiddles, self.ntt_in_place, self.datapath,
            self.slot_format, self.slot_rounding) and \
            self.decode_rows is not None

    def resolve(self) -> "AcceleratorConfig":
        """This configuration with every default filled (and ``reasons`` saying why); checks every
        field.  Idempotent: a resolved configuration resolves to itself."""
        if self.resolved:
            return self
        from hhe_gen.cores.engine.memory_plan import DEVICES
        from hhe_gen.engine.programs import client_buffers
        from hhe_gen.params.presets import preset
        from hhe_gen.params.rubato import rubato_params
        reasons = []
        params = self.params
        if isinstance(params, str):
            try:
                params = preset(params)
            except ParameterError as exc:
                raise ParameterError("params", params, exc.allowed) from None
        if not isinstance(params, CKKSParams):
            raise ParameterError("params", params, "a preset name or a hhe_gen.params.CKKSParams")
        lanes = check_power_of_two("lanes", self.lanes, 1, params.n // 2)
        try:
            rubato = None if self.rubato is None else rubato_params(self.rubato).name
        except ParameterError as exc:
            raise ParameterError("rubato", self.rubato, exc.allowed) from None
        check_int("beat_words", self.beat_words, 1, min(lanes, 8))
        if self.target not in TARGETS:
            raise ParameterError("target", self.target, "one of " + ", ".join(TARGETS))
        if self.device not in DEVICES:
            raise ParameterError("device", self.device, "one of " + ", ".join(DEVICES))
        if self.twiddles not in (None, "otf", "rom"):
            raise ParameterError("twiddles", self.twiddles, "otf or rom")
        if self.role not in ROLES:
            raise ParameterError("role", self.role, "one of " + ", ".join(ROLES))
        if self.window is not None:
            check_power_of_two("window", self.window, 2, 16)
        if self.slot_rounding not in (None, *ROUNDING_MODES):
            raise ParameterError("slot_rounding", self.slot_rounding, "one of " + ", ".join(ROUNDING_MODES))
        if self.datapath not in (None, *DATAPATHS):
            raise ParameterError("datapath", self.datapath, "one of " + ", ".join(DATAPATHS))
        if self.role == "server":
            return self._resolve_server(params, lanes)
        if self.window is None:
            reasons.append(("window", "16: the most the scoreboard holds, so the out-of-order dispatch sees "
                            "furthest ahead"))
        rows = len(params.moduli)

        buffers = self.buffers
        if buffers is None:
            parallel = lanes > 2
            buffers = client_buffers(rows, parallel=parallel)
            if buffers > isa.MAX_BUFFERS:
                fewest = client_buffers(rows)
                raise ParameterError("lanes", lanes, f"at most 2 for {params.name or 'these parameters'} "
                                     f"({rows} primes; one working set, {fewest} buffers), or buffers given "
                                     f"({fewest} .. {isa.MAX_BUFFERS}): from 4 lanes on the accelerator keeps "
                                     f"one working set per prime, {buffers} buffers, more than the engine's "
                                     f"{isa.MAX_BUFFERS}")
            reasons.append(("buffers", f"{buffers}: every client program at {rows} primes"
                            + (", one working set per prime and the samples drawn once (from 4 lanes on the "
                               "sampler and the memory port bound the time)" if parallel else
                               ", one working set (at 1 - 2 lanes the NTT bounds the time)")))
        else:
            check_int("buffers", buffers, 1, isa.MAX_BUFFERS)

        # a signed encode's integers, up to 2^(W-1-F+log_scale), stay below the smallest prime
        integer_bits = min(params.moduli).bit_length() - 1 - params.log_scale      # W - 1 - F at most
        fmt = self.slot_format
        if fmt is None:
            width = SLOT_FORMAT[0]
            fmt = (width, max(SLOT_FORMAT[1], width - 1 - integer_bits))
            reasons.append(("slot_format", f"{fmt[0]} / {fmt[1]}: the client format (precision by format: hhe-gen bench fft)" +
                            ("" if fmt == SLOT_FORMAT else f"; {fmt[0] - 1 - fmt[1]} integer bits, as the smallest "
                             f"prime leaves at Delta = 2^{params.log_scale}")))
        else:
            fmt = tuple(fmt)
            if len(fmt) != 2:
                raise ParameterError("slot_format", fmt, "(width, frac_bits)")
            FixedPointFormat(*fmt)                  # its own range checks
        if integer_bits < 0 or fmt[0] - 1 - fmt[1] > integer_bits:
            raise ParameterError("slot_format", f"{fmt[0]} / {fmt[1]}", f"W - 1 - F <= {integer_bits}: the "
                                 f"integers of a signed encode, up to 2^(W-1-F+log_scale), must stay below the "
                                 f"smallest prime (2^{min(params.moduli).bit_length() - 1} < q)"
                                 if integer_bits >= 0 else "no format: Delta = 2^log_scale is not below the "
                                 "smallest prime")

        reducer = self.reducer
        if reducer is None:
            special = _special_form(params)
            reducer = "special-barrett" if special else "barrett"
            reasons.append(("reducer", "special-barrett: every prime is 2^k - 2N*bnd + 1 (shifts and adds)" if special
                            else "barrett: not every prime has DNA-HHE's special form"))
        elif reducer not in REDUCERS:
            raise ParameterError("reducer", reducer, "one of " + ", ".join(REDUCERS))
        elif reducer == "special-barrett" and not _special_form(params):
            raise ParameterError("reducer", reducer, "barrett: special-barrett needs every prime of the form "
                                 "2^k - 2N*bnd + 1")

        decode_rows = self.decode_rows
        if decode_rows is None:
            if _q0_decodes(params, fmt):
                decode_rows = frozenset({1})
                reasons.append(("decode_rows", "{1}: q_0 alone decodes every message the slot format holds"))
            else:
                decode_rows = frozenset({1, min(rows, isa.MAX_SLOTS)})
                reasons.append(("decode_rows", "1 and every prime: q_0 alone is too small for the slot format"))
        else:
            decode_rows = frozenset(decode_rows)

        twiddles = self.twiddles
        if twiddles is None:
            twiddles = "otf"
            reasons.append(("twiddles", "otf: two small tables and a multiplier per lane instead of a ROM per prime"))
        in_place = self.ntt_in_place
        if in_place is None:
            qbits = max(q.bit_length() for q in params.moduli)
            in_place, banked, streamed = _in_place_saves(params.n, lanes, buffers, max(qbits, fmt[0]), qbits)
            reasons.append(("ntt_in_place", f"{in_place}: in place {banked} DP16KD, streaming {streamed} (in place "
                            "also saves the load and unload)"))
        rounding = self.slot_rounding
        if rounding is None:
            rounding = SLOT_ROUNDING
            reasons.append(("slot_rounding", f"{rounding}: the IFFT's halving steps unbiased (half-up's bias "
                            "gathers into the worst slot)"))
        datapath = self.datapath
        if datapath is None:
            datapath = "separate"
            reasons.append(("datapath", "separate: the NTT and the pointwise ops overlap on units of their own "
                            "(shared: one butterfly array for both, fewer multipliers)"))
        return dataclasses.replace(self, params=params, lanes=lanes, rubato=rubato, buffers=buffers,
                                   window=16 if self.window is None else self.window, datapath=datapath,
                                   slot_rounding=rounding,
                                   slot_format=fmt, reducer=reducer, decode_rows=decode_rows, twiddles=twiddles,
                                   ntt_in_place=bool(in_place), reasons=tuple(self.reasons) + tuple(reasons))

    def _resolve_server(self, params, lanes) -> "AcceleratorConfig":
        """:meth:`resolve` of ``role="server"``: the fields a server engine has, its defaults; the
        client's parts (Rubato, the network unit, the codec's format and rows) refused if set."""
        from hhe_gen.engine.server_memory import check_server_params
        check_server_params(params)
        if self.rubato is not None:
            raise ParameterError("rubato", self.rubato, "none: the server engine has no Rubato unit")
        fixed = {"reducer": "barrett", "twiddles": "rom", "ntt_in_place": False, "datapath": "separate"}
        for name, value in fixed.items():
            if getattr(self, name) not in (None, value):
                raise ParameterError(name, getattr(self, name), f"{value} (the server engine's)")
        reasons = [] if self.buffers is not None else [
            ("buffers", f"{SERVER_BUFFERS}: the key switch and the fused HMult + relinearise + rescale")]
        buffers = check_int("buffers", SERVER_BUFFERS if self.buffers is None else self.buffers, 1, isa.MAX_BUFFERS)
        reasons += [(name, f"{value}: the server engine's") for name, value in fixed.items()
                    if getattr(self, name) is None]
        if self.window is None:
            reasons.append(("window", "8: the server programs' tasks are long, a short window keeps them busy"))
        return dataclasses.replace(self, params=params, lanes=lanes, network=False, buffers=buffers,
                                   window=8 if self.window is None else self.window,
                                   slot_format=self.slot_format or SLOT_FORMAT,
                                   slot_rounding=self.slot_rounding or SLOT_ROUNDING, decode_rows=frozenset(),
                                   **fixed, reasons=tuple(self.reasons) + tuple(reasons))

    # -- what it builds --------------------------------------------------------------------------
    @property
    def fmt(self) -> FixedPointFormat:
        """The slot format as a :class:`~hhe_gen.models.fft.FixedPointFormat`."""
        c = self.resolve()
        return FixedPointFormat(*c.slot_format, rounding=c.slot_rounding)

    @property
    def shape(self) -> isa.EngineShape:
        """The :class:`~hhe_gen.cores.engine.isa.EngineShape` programs are assembled for, without
        building the engine (equal to ``self.engine().shape``)."""
        from hhe_gen.cores.engine.engine import ENGINE_UNITS
        c = self.resolve()
        if c.role == "server":
            from hhe_gen.engine.server_programs import server_shape
            return server_shape(c.params, c.buffers)
        p, fmt = c.params, c.slot_format
        units = ENGINE_UNITS | {isa.Unit.CODEC}
        units |= {isa.Unit.NETWORK} if c.network else set()
        units |= {isa.Unit.RUBATO} if c.rubato else set()
        return isa.EngineShape(c.buffers, min(len(p.moduli), isa.MAX_SLOTS), tuple(p.moduli), p.log_scale,
                               frozenset(units), decode_rows=c.decode_rows,
                               message_bound=1 << (fmt[0] - 1 - fmt[1] + p.log_scale), n=p.n,
                               rubato_set=isa.RUBATO_SET_IDS.index(c.rubato) if c.rubato else None)

    @property
    def word_bits(self) -> int:
        """Bits of a buffer word: the widest prime, at least the slot format's width (and a Rubato
        key block's half words in dual mode)."""
        c = self.resolve()
        if c.role == "server":
            return max(q.bit_length() for q in tuple(c.params.moduli) + tuple(c.params.special_moduli))
        return max([q.bit_length() for q in c.params.moduli] + [c.slot_format[0]]
                   + ([isa.RUBATO_HALF_BITS] if c.rubato else []))

    def engine(self):
        """The accelerator's engine (:class:`hhe_gen.cores.engine.engine.Engine`), built afresh."""
        from hhe_gen.cores.engine.engine import Engine
        c = self.resolve()
        if c.role == "server":
            moduli = tuple(c.params.moduli) + tuple(c.params.special_moduli)
            return Engine(c.params.n, moduli, lanes=c.lanes, buffers=c.buffers, slots=len(moduli), sampler=False,
                          codec=False, basis=True, log_scale=c.params.log_scale, window=c.window, ooo=c.ooo,
                          beat_words=c.beat_words, target=c.target)
        codec = {"fmt": c.fmt, "decode_rows": c.decode_rows}
        try:
            return Engine.for_params(c.params, lanes=c.lanes, buffers=c.buffers, window=c.window, ooo=c.ooo,
                                     target=c.target, beat_words=c.beat_words,
                                     ntt=dict(kind=c.reducer, twiddles=c.twiddles, in_place=c.ntt_in_place),
                                     pointwise=dict(kind=c.reducer), datapath=c.datapath, codec=codec,
                                     net=dict() if c.network else None,
                                     rubato=None if c.rubato is None else dict(params=c.rubato,
                                                                               rubato_lanes=c.rubato_lanes))
        except ParameterError as exc:
            name = _ENGINE_NAMES.get(exc.name, exc.name)
            if name == exc.name:
                raise
            raise ParameterError(name, exc.value, exc.allowed) from None

    def model(self, **kw):
        """The ISA golden model (:class:`hhe_gen.engine.model.EngineModel`) of this accelerator."""
        from hhe_gen.engine.model import EngineModel
        c = self.resolve()
        if c.role == "server":
            return EngineModel(c.shape, c.params.n, **kw)
        return EngineModel(c.shape, c.params.n, fmt=c.fmt, **kw)

    def with_(self, **changes) -> "AcceleratorConfig":
        """A copy with ``changes`` applied, resolved afresh from the fields the user set (a default
        chosen for the old values is chosen again)."""
        return dataclasses.replace(self.unresolved(), **changes)

    def unresolved(self) -> "AcceleratorConfig":
        """The fields as given before :meth:`resolve` chose defaults."""
        chosen = {name for name, _ in self.reasons}
        return dataclasses.replace(self, reasons=(), **{name: None for name in chosen})

    def image_about(self) -> dict:
        """What a program image assembled for this accelerator says of it (the header of
        :func:`hhe_gen.engine.asm.image_hex`): enough to build the same shape again."""
        c = self.resolve()
        return {"preset": c.params.name, "n": c.params.n, "lanes": c.lanes, "buffers": c.buffers,
                "rubato": c.rubato, "network": c.network}

    def describe(self) -> dict:
        """Every field's value (JSON-ready) and, for the defaults chosen, why (the manifest's
        ``configuration`` section)."""
        c = self.resolve()
        values = {
            "role": c.role, "preset": c.params.name, "n": c.params.n, "lanes": c.lanes, "rubato": c.rubato,
            "rubato_lanes": c.rubato_lanes if c.rubato else None, "network": c.network, "buffers": c.buffers,
            "window": c.window, "dispatch": "out-of-order" if c.ooo else "in-order", "reducer": c.reducer,
            "twiddles": c.twiddles, "ntt": "in place" if c.ntt_in_place else "streaming", "datapath": c.datapath,
            "slot_format": {"width": c.slot_format[0], "frac_bits": c.slot_format[1], "rounding": c.slot_rounding},
            "decode_rows": sorted(c.decode_rows), "beat_words": c.beat_words, "word_bits": c.word_bits,
            "target": c.target, "device": c.device,
        }
        return {"values": values, "chosen": dict(c.reasons)}
