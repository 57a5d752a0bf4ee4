"""The CKKS client programs of the engine, generated for any parameter set's N and primes.

Each function returns a :class:`Program`: the assembly text (commented), its words (assembled for
the given :class:`~hhe_gen.cores.engine.isa.EngineShape`) and the :class:`MemoryMap` it uses.  Row i
of a level-``l`` program (rows = l + 1) works modulo q_i in prime slot i (bound by the program's
own ``cfg.prime`` lines), so the engine's shape needs slots >= rows and the parameter set's primes
built in.  With the same seed, keys and slots the programs reproduce :mod:`hhe_gen.models.ckks`
bit for bit (the plaintext is the fixed-point encoding, ``ckks.encode(..., fmt=fmt)``):

- ``key_setup`` (runs once per key pair, not counted in the encryption cost): the keys of the
  interchange form (``sk`` signed coefficients, ``pk0`` / ``pk1`` rows in coefficient form) ->
  ``sk_ntt``, ``pk0_ntt``, ``pk1_ntt`` (NTT form per prime);
- ``encrypt_pk``: slots -> ``encode ..., signed`` -> m (signed integers, lifted per prime on
  read); e0 (Gaussian, ERROR0, nonce 0) added to m once as signed integers (``add ..., integer``,
  :func:`noise_added_once`; else sampled and added mod q_i for every prime); v (ternary, domain
  EPHEMERAL) and e1 (Gaussian, ERROR1), nonce 0, sampled once or again for every prime (the same
  values) and lifted; c0_i = NTT(v)*pk0_i + NTT(m_i + e0), c1_i = NTT(v)*pk1_i + NTT(e1), NTT
  form (:func:`hhe_gen.models.ckks.encrypt_pk`);
- ``encrypt_sk``: slots -> ``encode ..., signed`` -> m; e (Gaussian, ERROR0, nonce 0) added to m
  once as above; a_i uniform mod q_i sampled in the NTT domain (domain UNIFORM_A, nonce i);
  c0_i = NTT(m_i + e) - a_i*s_i (``msub``), c1_i = a_i (:func:`hhe_gen.models.ckks.encrypt_sk`);
- ``decrypt``: m_i = INTT(c0_i + c1_i*s_i) (``mac``), ``decode`` over the rows, slots stored
  (:func:`hhe_gen.models.ckks.decrypt` then :func:`hhe_gen.models.ckks_fixed.decode_fixed`).

Near-network: given a :class:`NetworkTarget`, the encryptions send each row of c0 and c1 as UDP
packets (``send``, the network unit; docs/wire.md) as soon as it is ready, instead of storing it
for a CPU to send: the program starts with the ``cfg.net.*`` lines of the target, and its packets
are numbered in the order the rows are ready (a receiver reassembles any order).

Buffers
-------
A program's buffers come from :func:`allocate`: first its shared buffers (the signed message
every prime reads, the key and ``a`` buffers, or the block of consecutive buffers ``decode``
reads), then as many per-prime working sets as fit (at most one per row), and with buffers left
over one partial set (its first buffers its own, the others set 0's: ``encrypt_sk`` puts t first,
so a second NTT(m + e) can run while the first row's c0 is made); row i uses working set i mod k.  With B >= :func:`min_buffers` + (rows - 1) * working-set size every prime has its own
buffers, so the work of different primes is independent and an out-of-order engine can overlap
it; with fewer the primes share sets (and run one after another, the scoreboard orders them).
Fewer buffers than :func:`min_buffers` raise ParameterError naming ``buffers``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hhe_gen.cores.engine.isa import MAX_SEGMENT, EngineShape, SampleKind, Unit
from hhe_gen.models.sampler import Domain
from hhe_gen.params.checks import check_int
from hhe_gen.params.ckks import CKKSParams
from hhe_gen.params.errors import ParameterError

from . import asm
from .memory_map import MemoryMap

__all__ = ["Allocation", "allocate", "Program", "ProgramInfo", "NetworkTarget", "PROGRAMS", "CLIENT_PROGRAMS",
           "client_buffers",
           "min_buffers", "decode_rows", "noise_added_once",
           "key_setup", "encrypt_pk", "encrypt_sk", "decrypt", "markdown_table"]


# -- buffer allocation ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Allocation:
    """The buffers of one program.

    Members
    -------
    shared : dict[str, int]          first buffer of each shared block
    sets : tuple[dict[str, int]]     the per-prime working sets (1 .. rows of them)
    used : int                       buffers used (the highest index + 1)
    """
    shared: dict
    sets: tuple
    used: int

    def work(self, row: int) -> dict[str, int]:
        """The working set of row ``row``."""
        return self.sets[row % len(self.sets)]


def allocate(buffers: int, program: str, rows: int, shared, working) -> Allocation:
    """Shared blocks ``shared`` ((name, count) pairs) from b0 up, then min(rows, what fits)
    working sets of the buffers named in ``working``; when fewer than ``rows`` fit and buffers are
    left, one more set that owns as many of its buffers as are left (the first names of
    ``working``) and shares the others with set 0."""
    need = sum(count for _, count in shared) + len(working)
    if buffers < need:
        raise ParameterError("buffers", buffers,
                             f"at least {need} buffers for {program} with {rows} rows "
                             f"({need - len(working)} shared + a working set of {len(working)})")
    shared_map, index = {}, 0
    for name, count in shared:
        shared_map[name] = index
        index += count
    k = min(rows, (buffers - index) // len(working))
    sets = [{name: index + j * len(working) + t for t, name in enumerate(working)} for j in range(k)]
    used = index + k * len(working)
    spare = buffers - used
    if k < rows and spare:
        # one more set owning its first `spare` buffers and sharing the rest with set 0
        sets.append({name: (used + t if t < spare else sets[0][name]) for t, name in enumerate(working)})
        used += spare
    return Allocation(shared_map, tuple(sets), used)


# -- the program text -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Program:
    """An assembled program.

    Members
    -------
    name : str              key_setup, encrypt_pk, encrypt_sk or decrypt
    text : str              the assembly source (commented)
    words : tuple[int]      the instruction words
    layout : MemoryMap      where it reads and writes
    rows : int              primes it works on (level + 1)
    min_buffers : int       fewest buffers it can run with at these rows
    allocation : Allocation the buffers it uses
    notify : int            the code of its final ``notify``
    """
    name: str
    text: str
    words: tuple
    layout: MemoryMap
    rows: int
    min_buffers: int
    allocation: Allocation
    notify: int


@dataclass(frozen=True)
class NetworkTarget:
    """Where an encryption sends its ciphertext itself (near-network) instead of storing it.

    Members
    -------
    ip : str             destination IPv4 address, dotted ("10.0.0.100")
    dst_port, src_port : int   UDP ports, 0 .. 65535
    segment : int        coefficients per packet, 1 .. 180 (a payload of at most 1472 bytes)
    message : int        the message id every packet of the ciphertext carries, 0 .. 2^32-1
    """
    ip: str = "10.0.0.100"
    dst_port: int = 4791
    src_port: int = 4791
    segment: int = MAX_SEGMENT
    message: int = 0

    def __post_init__(self):
        parts = str(self.ip).split(".")
        if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
            raise ParameterError("ip", self.ip, "a dotted IPv4 address a.b.c.d")
        check_int("dst_port", self.dst_port, 0, 0xFFFF)
        check_int("src_port", self.src_port, 0, 0xFFFF)
        check_int("segment", self.segment, 1, MAX_SEGMENT, f"coefficients per packet, 1 .. {MAX_SEGMENT}")
        check_int("message", self.message, 0, (1 << 32) - 1)

    def lines(self) -> list[tuple[str, str]]:
        """The configuration instructions (code, comment) of this target."""
        return [(f"cfg.net.ip {self.ip}", "destination"),
                (f"cfg.net.ports {self.src_port}, {self.dst_port}", "UDP source, destination port"),
                (f"cfg.net.segment {self.segment}", "coefficients per packet"),
                (f"cfg.net.message {self.message}", "message id; packets numbered from 0")]


class _Writer:
    def __init__(self, title: str):
        self.lines = [f"; {title}"]

    def __call__(self, code: str, comment: str = ""):
        self.lines.append(f"{code:<40} ; {comment}" if comment else code)

    def note(self, text: str):
        self.lines.append(f"; {text}")

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass(frozen=True)
class ProgramInfo:
    """One row of the programs table.

    Members
    -------
    notify : int            code of the program's final ``notify``
    shared : Callable       rows -> ((name, count), ...) shared blocks
    working : tuple[str]    names of a working set's buffers
    units : frozenset       units the program needs
    summary : str
    samples : tuple[str]    samples every prime reads: given buffers for them beside one working
                            set per row (:meth:`sampled_once_buffers`) they are sampled once into
                            shared buffers; with fewer, again for every prime into the working set
    """
    notify: int
    shared: Callable
    working: tuple
    units: frozenset
    summary: str
    samples: tuple = ()

    def min_buffers(self, rows: int) -> int:
        return sum(c for _, c in self.shared(rows)) + len(self.working)

    def sampled_once_buffers(self, rows: int) -> int:
        """The fewest buffers with which the samples are drawn once (0: the program has none)."""
        return self.min_buffers(rows) + len(self.samples) + (rows - 1) * len(self.working) if self.samples else 0


_BASIC = frozenset({Unit.MEMORY, Unit.NTT, Unit.POINTWISE})
PROGRAMS: dict[str, ProgramInfo] = {
    "key_setup": ProgramInfo(1, lambda rows: (("sk", 1),), ("s_hat", "pk", "pk_hat"), _BASIC,
                             "keys (interchange form) -> sk_ntt, pk0_ntt, pk1_ntt; runs once per key pair, "
                             "not counted"),
    "encrypt_pk": ProgramInfo(2, lambda rows: (("m", 1),),
                              ("c0", "c1", "v_hat", "pk"), _BASIC | {Unit.SAMPLER, Unit.CODEC},
                              "slots_in, seed, pk0_ntt, pk1_ntt -> c0, c1 (public-key encryption)",
                              ("v", "e1")),
    "encrypt_sk": ProgramInfo(3, lambda rows: (("m", 1),), ("t", "a", "s_hat"),
                              _BASIC | {Unit.SAMPLER, Unit.CODEC},
                              "slots_in, seed, sk_ntt -> c0, c1 (secret-key encryption)"),
    "decrypt": ProgramInfo(4, lambda rows: (("d", rows - 1),), ("c1", "c0", "s_hat"), _BASIC | {Unit.CODEC},
                           "c0, c1, sk_ntt -> slots_out"),
}


CLIENT_PROGRAMS = ("encrypt_pk", "encrypt_sk", "decrypt")


def client_buffers(rows: int, parallel: bool = False) -> int:
    """Buffers an engine needs to run every client program (:data:`CLIENT_PROGRAMS`; key_setup
    needs fewer) at ``rows`` primes: the fewest (one working set, samples drawn per prime), or with
    ``parallel`` one working set per prime and the samples drawn once."""
    if not parallel:
        return max(min_buffers(p, rows) for p in CLIENT_PROGRAMS)
    info = [PROGRAMS[p] for p in CLIENT_PROGRAMS]
    return max(i.sampled_once_buffers(rows) or i.min_buffers(rows) + (rows - 1) * len(i.working) for i in info)


def min_buffers(program: str, rows: int) -> int:
    """The fewest buffers ``program`` runs with at ``rows`` primes."""
    if program not in PROGRAMS:
        raise ParameterError("program", program, "one of " + ", ".join(PROGRAMS))
    return PROGRAMS[program].min_buffers(rows)


def _setup(name: str, params: CKKSParams, shape: EngineShape, level, layout, scale: bool,
           network: NetworkTarget | None = None):
    """Checks shared by every program; returns (rows, layout, allocation, writer)."""
    if not isinstance(params, CKKSParams):
        raise ParameterError("params", params, "a hhe_gen.params.CKKSParams")
    if not isinstance(shape, EngineShape):
        raise ParameterError("shape", shape, "an hhe_gen.cores.engine.isa.EngineShape")
    info = PROGRAMS[name]
    rows = params.check_level(level) + 1
    missing = info.units - shape.units
    if missing:
        raise ParameterError("units", sorted(u.name for u in shape.units),
                             f"{name} needs the units " + ", ".join(sorted(u.name for u in info.units)))
    if network is not None:
        if not isinstance(network, NetworkTarget):
            raise ParameterError("network", network, "None or an hhe_gen.engine.programs.NetworkTarget")
        if Unit.NETWORK not in shape.units:
            raise ParameterError("units", sorted(u.name for u in shape.units),
                                 f"{name} with a network target needs the NETWORK unit")
    if rows > shape.slots:
        raise ParameterError("slots", shape.slots, f">= {rows}: {name} binds one prime slot per row")
    for q in params.moduli[:rows]:
        if q not in shape.primes:
            raise ParameterError("primes", shape.primes, f"the engine's built-in primes must include {q}")
    if scale and shape.log_scale != params.log_scale:
        raise ParameterError("log_scale", shape.log_scale,
                             f"{params.log_scale}: the codec must be built for the parameters' scale")
    layout = layout or MemoryMap.for_params(params)
    if layout.n != params.n or layout.primes != len(params.moduli):
        raise ParameterError("layout", layout, f"a MemoryMap for N = {params.n} and {len(params.moduli)} primes")
    shared = info.shared(rows)
    if info.samples and shape.buffers >= info.sampled_once_buffers(rows):
        shared = shared + tuple((name, 1) for name in info.samples)
    alloc = allocate(shape.buffers, name, rows, shared, info.working)
    w = _Writer(f"{name}: N = {params.n}, {rows} rows, {shape.buffers} buffers "
                f"({len(alloc.sets)} working set{'s' if len(alloc.sets) > 1 else ''})")
    for i in range(rows):
        w(f"cfg.prime s{i}, p{shape.primes.index(params.moduli[i])}", f"slot {i} <- q_{i} = {params.moduli[i]}")
    if scale:
        w(f"cfg.scale {params.log_scale}", "Delta = 2^log_scale")
    for code, comment in (network.lines() if network is not None else ()):
        w(code, comment)
    return rows, layout, alloc, w


def _output(w, layout, network, buffer: int, name: str, row: int, rows: int):
    """Row ``row`` of ciphertext part ``name`` (c0 / c1, NTT form) out of ``buffer``: stored, or
    sent as packets with a network target."""
    if network is None:
        w(f"store b{buffer}, {layout.address(name, row):#x}", f"{name}[{row}]")
    else:
        w(f"send b{buffer}, s{row}, {name}, rows=1, of={rows}, ntt", f"{name}[{row}] -> packets")


def _finish(name, w, shape, layout, rows, alloc) -> Program:
    info = PROGRAMS[name]
    w(f"notify {info.notify}", f"{name} done")
    return Program(name, w.text, tuple(asm.assemble(w.text, shape)), layout, rows,
                   info.min_buffers(rows), alloc, info.notify)


def _sample(dst: int, kind: SampleKind, domain: Domain, nonce: int = 0, slot: int | None = None) -> str:
    where = f", s{slot}" if slot is not None else ""
    return f"sample b{dst}{where}, {kind.name.lower()}, domain={int(domain)}, nonce={nonce}"


def key_setup(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
              layout: MemoryMap | None = None) -> Program:
    """Keys from the interchange form to the NTT form the other programs read (rows 0 .. level,
    default every prime).  Runs once per key pair; not part of the encryption cost."""
    rows, layout, alloc, w = _setup("key_setup", params, shape, level, layout, scale=False)
    sk = alloc.shared["sk"]
    w(f"load b{sk}, {layout.address('sk'):#x}", "s (signed coefficients)")
    for i in range(rows):
        b = alloc.work(i)
        w.note(f"row {i}")
        w(f"ntt b{b['s_hat']}, b{sk}, s{i}, lift=a", f"NTT(s mod q_{i})")
        w(f"store b{b['s_hat']}, {layout.address('sk_ntt', i):#x}", f"sk_ntt[{i}]")
        for key in ("pk0", "pk1"):
            w(f"load b{b['pk']}, s{i}, {layout.address(key, i):#x}, check", f"{key}[{i}]")
            w(f"ntt b{b['pk_hat']}, b{b['pk']}, s{i}", f"NTT({key}[{i}])")
            w(f"store b{b['pk_hat']}, {layout.address(key + '_ntt', i):#x}", f"{key}_ntt[{i}]")
    return _finish("key_setup", w, shape, layout, rows, alloc)


def _encode_signed(w, layout, m):
    w(f"load b{m}, {layout.address('slots_in'):#x}", "slots (fixed point)")
    w(f"encode b{m}, b{m}, s0, rows=1, signed", "m = round(Delta * IFFT(slots)), signed, in place")


class _Samples:
    """Where a program's samples come from: shared buffers sampled once (those the allocation has)
    or the working buffer, sampled again for every prime just before it is read."""

    def __init__(self, w, alloc, kinds: dict):
        self.w, self.alloc, self.kinds = w, alloc, kinds

    def draw_shared(self, *names):
        """The shared samples among ``names`` (nothing for those drawn per prime)."""
        for name in names:
            if name in self.alloc.shared:
                self.w(_sample(self.alloc.shared[name], *self.kinds[name]), f"{name}, sampled once for every prime")

    def source(self, name: str, dst: int) -> int:
        """The buffer holding sample ``name`` for the next instruction: the shared one, or ``dst``
        after sampling into it."""
        if name in self.alloc.shared:
            return self.alloc.shared[name]
        self.w(_sample(dst, *self.kinds[name]), f"{name} (the same for every prime)")
        return dst


def noise_added_once(params: CKKSParams, shape: EngineShape, rows: int) -> bool:
    """Whether the encryptions add their Gaussian noise e to the signed message m once (``add ...,
    integer``, then every prime lifts m + e) instead of sampling e and adding it mod q_i for every
    prime: when the engine tells the message's bound (``shape.message_bound``) and
    |m + e| <= message_bound + the Gaussian's bound stays below 2^(b-1), b the bit length of the
    smallest prime of the rows (a signed word below every prime, as the lift needs)."""
    if shape.message_bound is None:
        return False
    smallest = min(params.moduli[:rows])
    return shape.message_bound + params.error.bound < 1 << (smallest.bit_length() - 1)


def _encode_with_noise(w, layout, m: int, once: bool, tmp: int, name: str, domain: Domain):
    """m <- the signed message; with ``once`` its noise ``name`` (sampled into ``tmp`` while the
    slots load and encode) added as signed integers."""
    if once:
        w(_sample(tmp, SampleKind.GAUSSIAN, domain), f"{name}, sampled once")
    _encode_signed(w, layout, m)
    if once:
        w(f"add b{m}, b{m}, b{tmp}, s0, integer", f"m + {name}: signed integers, once for every prime")


def encrypt_pk(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
               layout: MemoryMap | None = None, network: NetworkTarget | None = None) -> Program:
    """Encode and public-key encrypt ``slots_in`` with ``seed`` at ``level`` (default top).

    Buffers: the message m is encoded once as signed integers (lifted to each prime on read), and
    e0 is added to it once (:func:`noise_added_once`; else e0 is sampled and added again for every
    prime).  v and e1 are sampled once into buffers of their own when the engine has them beside
    one working set per row (:meth:`ProgramInfo.sampled_once_buffers`), else again for every prime,
    straight into the buffer that transforms them (the same seed, domain and nonce give the same
    samples), so a row needs only its c0, c1, NTT(v) and key buffers besides m.  Order: the NTT unit
    is the bottleneck at 2 lanes (3 transforms per row), so NTT(v) of row 0 starts while the slots
    load and encode, and every later row starts with NTT(m + e0), whose buffer is free once the
    previous c0 is stored, while the previous row's products still read NTT(v).  With ``network``
    each row of c0 and c1 is sent as packets instead of stored (module docstring)."""
    rows, layout, alloc, w = _setup("encrypt_pk", params, shape, level, layout, scale=True, network=network)
    m = alloc.shared["m"]
    samples = _Samples(w, alloc, {"v": (SampleKind.TERNARY, Domain.EPHEMERAL),
                                  "e0": (SampleKind.GAUSSIAN, Domain.ERROR0),
                                  "e1": (SampleKind.GAUSSIAN, Domain.ERROR1)})
    once = noise_added_once(params, shape, rows)
    w(f"ldseed {layout.address('seed'):#x}", "seed")

    def ntt_v(b, i):
        v = samples.source("v", b["v_hat"])
        w(f"ntt b{b['v_hat']}, b{v}, s{i}, lift=a", "NTT(v)")

    samples.draw_shared("v")
    ntt_v(alloc.work(0), 0)
    _encode_with_noise(w, layout, m, once, alloc.work(0)["c0"], "e0", Domain.ERROR0)
    samples.draw_shared("e1")
    for i in range(rows):
        b = alloc.work(i)
        c0, c1, v_hat, pk = b["c0"], b["c1"], b["v_hat"], b["pk"]
        w.note(f"row {i}")
        if once:
            w(f"ntt b{c0}, b{m}, s{i}, lift=a", "NTT(m + e0)")
        else:
            w(f"add b{c0}, b{m}, b{samples.source('e0', c0)}, s{i}, lift=ab", "m + e0")
            w(f"ntt b{c0}, b{c0}, s{i}", "NTT(m + e0)")
        if i:
            ntt_v(b, i)
        w(f"load b{pk}, s{i}, {layout.address('pk0_ntt', i):#x}, check", f"pk0_ntt[{i}]")
        w(f"mac b{c0}, b{v_hat}, b{pk}, b{c0}, s{i}", "c0 = NTT(v)*pk0 + NTT(m + e0)")
        _output(w, layout, network, c0, "c0", i, rows)
        w(f"ntt b{c1}, b{samples.source('e1', c1)}, s{i}, lift=a", "NTT(e1)")
        w(f"load b{pk}, s{i}, {layout.address('pk1_ntt', i):#x}, check", f"pk1_ntt[{i}]")
        w(f"mac b{c1}, b{v_hat}, b{pk}, b{c1}, s{i}", "c1 = NTT(v)*pk1 + NTT(e1)")
        _output(w, layout, network, c1, "c1", i, rows)
    return _finish("encrypt_pk", w, shape, layout, rows, alloc)


def encrypt_sk(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
               layout: MemoryMap | None = None, network: NetworkTarget | None = None) -> Program:
    """Encode and secret-key encrypt ``slots_in`` with ``seed`` at ``level`` (default top).

    Buffers: m encoded once as signed integers and e added to it once (:func:`noise_added_once`;
    else e is sampled again for every prime into the row's working buffer t and added mod q_i);
    a row's t = NTT(m + e), then c0, beside its a and s.  Order: with k working sets the first k
    rows' NTT(m + e) run back to back on the NTT unit; each a_i is stored as soon as it is sampled,
    and a row's t is refilled as soon as its c0 is stored.  With ``network`` each row of c1 and c0
    is sent as packets instead of stored (module docstring)."""
    rows, layout, alloc, w = _setup("encrypt_sk", params, shape, level, layout, scale=True, network=network)
    m = alloc.shared["m"]
    samples = _Samples(w, alloc, {"e": (SampleKind.GAUSSIAN, Domain.ERROR0)})
    once = noise_added_once(params, shape, rows)
    w(f"ldseed {layout.address('seed'):#x}", "seed")
    _encode_with_noise(w, layout, m, once, alloc.work(0)["t"], "e", Domain.ERROR0)

    def prepare(i):
        t = alloc.work(i)["t"]
        w.note(f"row {i}: NTT(m + e)")
        if once:
            w(f"ntt b{t}, b{m}, s{i}, lift=a", "NTT(m + e)")
        else:
            w(f"add b{t}, b{m}, b{samples.source('e', t)}, s{i}, lift=ab", f"m + e mod q_{i}")
            w(f"ntt b{t}, b{t}, s{i}", "NTT(m + e)")

    k = len(alloc.sets)
    for i in range(min(k, rows)):
        prepare(i)
    for i in range(rows):
        t, a, s_hat = (alloc.work(i)[k] for k in ("t", "a", "s_hat"))
        w.note(f"row {i}: c1 = a, c0 = NTT(m + e) - a*s")
        w(_sample(a, SampleKind.UNIFORM, Domain.UNIFORM_A, i, slot=i), "a, uniform in the NTT domain")
        _output(w, layout, network, a, "c1", i, rows)
        w(f"load b{s_hat}, s{i}, {layout.address('sk_ntt', i):#x}, check", f"sk_ntt[{i}]")
        w(f"msub b{t}, b{a}, b{s_hat}, b{t}, s{i}", "c0 = NTT(m + e) - a*s")
        _output(w, layout, network, t, "c0", i, rows)
        if i + k < rows:
            prepare(i + k)
    return _finish("encrypt_sk", w, shape, layout, rows, alloc)


def decode_rows(params: CKKSParams, shape: EngineShape, rows: int) -> int:
    """The rows ``decrypt`` decodes at ``rows`` primes on an engine of ``shape``: all of them if its
    decoder takes that count, else one (prime q_0 alone: the same slots whenever the message's
    coefficients lie within +-q_0/2, which :meth:`hhe_gen.engine.config.AcceleratorConfig.resolve`
    checks before it builds a one-row decoder)."""
    if shape.decode_rows is None or rows in shape.decode_rows:
        return rows
    if 1 in shape.decode_rows:
        return 1
    raise ParameterError("decode_rows", sorted(shape.decode_rows), f"a decoder for {rows} rows or for 1")


def decrypt(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
            layout: MemoryMap | None = None, network: bool = False) -> Program:
    """Decrypt the ciphertext in ``c0`` / ``c1`` at ``level`` (default top) and decode it into
    ``slots_out``; on an engine whose decoder takes one row only (:func:`decode_rows`), only the
    row of q_0 is decrypted and decoded.  With ``network`` the ciphertext is not loaded: ``recv``
    takes it from the network unit into b0 .. b(2R-1) (c0 rows, then c1 rows; 2R + 1 buffers
    needed), the cloud -> ct-to-m path without memory."""
    rows, layout, alloc, w = _setup("decrypt", params, shape, level, layout, scale=True)
    used = decode_rows(params, shape, rows)
    if network:
        return _decrypt_received(w, params, shape, layout, rows, used, alloc)
    d = alloc.shared["d"]
    sets = len(alloc.sets)
    if used < rows:
        w.note(f"the decoder takes {used} row: q_0's row alone (|m| < q_0 / 2)")
    for i in range(used):
        b = alloc.sets[(used - 1 - i) % sets]       # the last row works in set 0, right after d
        c0, c1, s_hat = b["c0"], b["c1"], b["s_hat"]
        w.note(f"row {i}")
        w(f"load b{c0}, s{i}, {layout.address('c0', i):#x}, check", f"c0[{i}]")
        w(f"load b{c1}, s{i}, {layout.address('c1', i):#x}, check", f"c1[{i}]")
        w(f"load b{s_hat}, s{i}, {layout.address('sk_ntt', i):#x}, check", f"sk_ntt[{i}]")
        w(f"mac b{c0}, b{c1}, b{s_hat}, b{c0}, s{i}", "c0 + c1*s")
        # rows 0 .. R-2 into d's block; the last into set 0's c1 (read by the mac before), which
        # follows d: the R rows decode reads are consecutive
        w(f"intt b{d + i if i < used - 1 else c1}, b{c0}, s{i}", f"m mod q_{i}")
    first = d if used > 1 else alloc.sets[0]["c1"]
    out = alloc.sets[0]["c0"]
    w(f"decode b{out}, b{first}, s0, rows={used}", "slots")
    w(f"store b{out}, {layout.address('slots_out'):#x}", "slots_out")
    return _finish("decrypt", w, shape, layout, rows, alloc)


def _decrypt_received(w, params, shape, layout, rows, used, alloc) -> Program:
    """``decrypt`` with the ciphertext taken from the network (see :func:`decrypt`)."""
    if Unit.NETWORK not in shape.units:
        raise ParameterError("units", sorted(u.name for u in shape.units), "decrypt from the network needs the NETWORK unit")
    s_hat = 2 * rows
    if s_hat + 1 > shape.buffers:
        raise ParameterError("buffers", shape.buffers, f">= {s_hat + 1}: decrypt from the network at {rows} rows "
                                                       f"receives 2R = {2 * rows} buffers and loads the key beside them")
    w(f"recv b0, rows={2 * rows}", f"the ciphertext from the network: c0 rows in b0 .., c1 rows in b{rows} ..")
    if used < rows:
        w.note(f"the decoder takes {used} row: q_0's row alone (|m| < q_0 / 2)")
    for i in range(used):
        w.note(f"row {i}")
        w(f"load b{s_hat}, s{i}, {layout.address('sk_ntt', i):#x}, check", f"sk_ntt[{i}]")
        w(f"mac b{i}, b{rows + i}, b{s_hat}, b{i}, s{i}", "c0 + c1*s")
        w(f"intt b{rows + i}, b{i}, s{i}", f"m mod q_{i}, the rows decode reads consecutive")
    w(f"decode b0, b{rows}, s0, rows={used}", "slots")
    w(f"store b0, {layout.address('slots_out'):#x}", "slots_out")
    return _finish("decrypt", w, shape, layout, rows, alloc)


def _linear(a: int, b: int) -> str:
    """a*R + b as text."""
    r = "" if a == 0 else ("R" if a == 1 else f"{a}R")
    if not r:
        return str(b)
    return f"{r} + {b}" if b > 0 else (f"{r} - {-b}" if b < 0 else r)


def markdown_table() -> list[str]:
    """The programs table of docs/isa.md (R = rows = level + 1)."""
    out = ["| program | notify | buffers needed | buffers for one working set per row | shared buffers "
           "| working set | what it does |", "|---|---|---|---|---|---|---|"]
    for name, info in PROGRAMS.items():
        w = len(info.working)
        a = info.min_buffers(2) - info.min_buffers(1)
        b = info.min_buffers(1) - a
        one, two = dict(info.shared(1)), dict(info.shared(2))
        shared = ", ".join(f"{n} ({_linear(two[n] - one[n], 2 * one[n] - two[n])})" for n in one)
        out.append(f"| `{name}` | {info.notify} | {_linear(a, b)} | {_linear(a + w, b - w)} | {shared} "
                   f"| {', '.join(info.working)} | {info.summary} |")
    return out
