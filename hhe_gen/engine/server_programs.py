"""The server-side CKKS programs of the engine: homomorphic multiplication (the tensor product),
relinearisation by hybrid key switching, rescale, and the three in a row.

Each function takes ``(params, shape, level=None, layout=None)`` and returns a
:class:`~hhe_gen.engine.programs.Program` over a :class:`~hhe_gen.engine.server_memory.ServerMemoryMap`.
Run on :class:`~hhe_gen.engine.model.EngineModel` (or an engine) with the same inputs they give
exactly what :mod:`hhe_gen.models.ckks_eval` gives, which is Lattigo v6's evaluator residue for
residue (docs/evaluation.md).  Everything stays in NTT form except the rows that ``conv`` centres.

Prime slots: slot i holds q_i (i < L, the primes of Q) and slot L holds the key-switching prime
P, so the engine needs L + 1 slots and Q and P built in (:func:`server_shape`).  The parameters
must have exactly one key-switching prime (:func:`~hhe_gen.engine.server_memory.check_server_params`).

- ``hmult`` (rows 0 .. level): d0 = a0 b0, d1 = a0 b1 + a1 b0 (``mul`` then ``mac``), d2 = a1 b1.
- ``relinearize``: for every digit i (one per prime of the level), x = INTT(d2_i) mod q_i, then for
  every target prime m (the level's primes and P) the digit NTT_m(conv(x, q_i -> m, digit)) (for
  m = q_i the row d2_i itself), multiplied with the key's row (streamed from memory, ``load``)
  and accumulated in 2 (L + 1) accumulators (``mul`` for the first digit, then ``mac``).  ModDown:
  y = INTT(acc_P) mod P, and for every q_j: (acc_j - NTT_j(conv(y, P -> q_j, extend))) * P^-1
  (``sub``, ``mul`` by the constant row), plus d0_j / d1_j (``add``).
- ``rescale`` (from level l to l - 1): x = INTT(c_l) mod q_l, then for every i < l:
  (c_i - NTT_i(conv(x, q_l -> q_i, round))) * q_l^-1.
- ``mul_relin_rescale``: fused when the buffers hold the tensor product (3 L rows) beside the
  key switch's accumulators (:func:`fused_min_buffers`): d0, d1, d2 and c0, c1 never cross the
  memory port; else the three programs' bodies one after another, through memory, with a ``fence``
  between them (the scoreboard orders buffers, not memory words).

Buffers come from :func:`hhe_gen.engine.programs.allocate`: the shared ones first (relinearize's
accumulators and digit rows, rescale's last row), then as many working sets as fit, one per row
(hmult) or per target prime (relinearize, rescale); fewer than the minimum raise ParameterError
naming ``buffers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hhe_gen.cores.engine.isa import SERVER_UNITS, EngineShape
from hhe_gen.params.ckks import CKKSParams
from hhe_gen.params.errors import ParameterError

from . import asm
from .programs import Allocation, Program, _Writer, allocate
from .server_memory import ServerMemoryMap, check_server_params

__all__ = ["SERVER_PROGRAMS", "server_shape", "server_engine", "server_min_buffers", "fused_min_buffers", "hmult",
           "relinearize", "rescale", "mul_relin_rescale"]


@dataclass(frozen=True)
class _Info:
    notify: int
    shared: callable        # rows -> ((name, count), ...)
    working: tuple
    summary: str


SERVER_PROGRAMS = {
    "hmult": _Info(8, lambda rows: (), ("a0", "a1", "b0", "b1", "d0", "d1", "d2"),
                   "a0, a1, b0, b1 -> d0, d1, d2 (tensor product, NTT form)"),
    "relinearize": _Info(9, lambda rows: (("acc", 2 * (rows + 1)), ("x", 1), ("xc", 1)), ("t", "t_hat", "k0", "k1"),
                         "d0, d1, d2, rlk, p_inv -> c0, c1 (hybrid key switching, one P prime)"),
    "rescale": _Info(10, lambda rows: (("xc", 1),), ("x", "t", "t_hat", "k"),
                     "c0, c1, ql_inv -> r0, r1 (one level down)"),
    "mul_relin_rescale": _Info(11, lambda rows: (("d0", rows), ("d1", rows), ("d2", rows), ("acc", 2 * (rows + 1)),
                                                 ("xc", 1)), ("t", "t_hat", "k0", "k1"),
                               "a0, a1, b0, b1 -> r0, r1 (fused: d0 .. d2 and c0, c1 stay on chip; or the "
                               "three programs through memory when the buffers do not hold them)"),
}


def server_shape(params: CKKSParams, buffers: int = 32) -> EngineShape:
    """An engine for the server programs: Q and P built in (in that order), L + 1 slots, the
    units of :data:`~hhe_gen.cores.engine.isa.SERVER_UNITS`."""
    check_server_params(params)
    primes = tuple(params.moduli) + tuple(params.special_moduli)
    return EngineShape(buffers, len(primes), primes, params.log_scale, SERVER_UNITS, n=params.n)


def server_engine(params: CKKSParams, lanes: int = 2, *, buffers: int | None = None, beat_words: int = 1,
                  target: str = "ecp5"):
    """The RTL engine for the server programs (:class:`hhe_gen.cores.engine.engine.Engine`) of the
    configuration ``AcceleratorConfig(params, lanes, role="server", ...)``
    (:class:`hhe_gen.engine.config.AcceleratorConfig`): Q and P built in, a slot each, the
    basis-conversion unit; no sampler and no codec (the server programs use neither).  P may be
    wider than Q's primes (DNA-HHE's 61-bit P): the reducers scale the narrower primes
    (:class:`hhe_gen.cores.arith.barrett.BarrettMul`).  ``beat_words``: 64-bit words per memory beat
    (1 .. min(lanes, 8); 8 = a 512-bit port, as an HBM channel on a data-centre card)."""
    from hhe_gen.engine.config import AcceleratorConfig
    return AcceleratorConfig(params, lanes, role="server", buffers=buffers, beat_words=beat_words,
                             target=target).engine()


def server_min_buffers(program: str, rows: int) -> int:
    """The fewest buffers ``program`` runs with at ``rows`` primes of Q."""
    if program not in SERVER_PROGRAMS:
        raise ParameterError("program", program, "one of " + ", ".join(SERVER_PROGRAMS))
    if program == "mul_relin_rescale":          # the three through memory: the largest of their needs
        return max(server_min_buffers(p, rows) for p in ("hmult", "relinearize", "rescale"))
    info = SERVER_PROGRAMS[program]
    return sum(c for _, c in info.shared(rows)) + len(info.working)


def _setup(name: str, params: CKKSParams, shape: EngineShape, level, layout, targets=None):
    check_server_params(params)
    if not isinstance(shape, EngineShape):
        raise ParameterError("shape", shape, "an hhe_gen.cores.engine.isa.EngineShape")
    missing = SERVER_UNITS - shape.units
    if missing:
        raise ParameterError("units", sorted(u.name for u in shape.units),
                             f"{name} needs the units " + ", ".join(sorted(u.name for u in SERVER_UNITS)))
    lq = len(params.moduli)
    if shape.slots < lq + 1:
        raise ParameterError("slots", shape.slots, f">= {lq + 1}: slot i holds q_i and slot {lq} holds P")
    primes = list(params.moduli) + list(params.special_moduli)
    for q in primes:
        if q not in shape.primes:
            raise ParameterError("primes", shape.primes, f"the engine's built-in primes must include {q}")
    rows = params.check_level(level) + 1
    layout = layout or ServerMemoryMap.for_params(params)
    if not isinstance(layout, ServerMemoryMap) or layout.n != params.n or layout.primes != lq:
        raise ParameterError("layout", layout, f"a ServerMemoryMap for N = {params.n} and {lq} primes")
    info = SERVER_PROGRAMS[name]
    alloc = allocate(shape.buffers, name, targets or rows, info.shared(rows), info.working)
    w = _Writer(f"{name}: N = {params.n}, {rows} rows, {shape.buffers} buffers "
                f"({len(alloc.sets)} working set{'s' if len(alloc.sets) > 1 else ''})")
    for i, q in enumerate(primes):
        if i < rows or i == lq:
            w(f"cfg.prime s{i}, p{shape.primes.index(q)}", f"slot {i} <- {'P' if i == lq else f'q_{i}'} = {q}")
    return rows, layout, alloc, w


def _finish(name: str, w: _Writer, shape, layout, rows: int, alloc: Allocation, min_buffers: int) -> Program:
    info = SERVER_PROGRAMS[name]
    w(f"notify {info.notify}", f"{name} done")
    return Program(name, w.text, tuple(asm.assemble(w.text, shape)), layout, rows, min_buffers, alloc, info.notify)


def _tensor_row(w, layout, i, src, dst):
    """Row i of the tensor product: the operands loaded into buffers ``src`` (a0, a1, b0, b1),
    the product into buffers ``dst`` (d0, d1, d2)."""
    for name in ("a0", "a1", "b0", "b1"):
        w(f"load b{src[name]}, s{i}, {layout.address(name, i):#x}, check", f"{name}[{i}]")
    a0, a1, b0, b1 = (src[name] for name in ("a0", "a1", "b0", "b1"))
    d0, d1, d2 = (dst[name] for name in ("d0", "d1", "d2"))
    w(f"mul b{d0}, b{a0}, b{b0}, s{i}", "d0 = a0 b0")
    w(f"mul b{d1}, b{a1}, b{b0}, s{i}", "a1 b0")
    w(f"mac b{d1}, b{a0}, b{b1}, b{d1}, s{i}", "d1 = a0 b1 + a1 b0")
    w(f"mul b{d2}, b{a1}, b{b1}, s{i}", "d2 = a1 b1")


def _hmult_body(w, layout, alloc, rows):
    for i in range(rows):
        b = alloc.work(i)
        w.note(f"row {i}")
        _tensor_row(w, layout, i, b, b)
        for name in ("d0", "d1", "d2"):
            w(f"store b{b[name]}, {layout.address(name, i):#x}", f"{name}[{i}]")


def _relinearize_body(w, layout, alloc, rows, lq, on_chip=None):
    """The key switch; ``on_chip``: buffers {"d0", "d1", "d2"} (first of ``rows`` each) holding the
    tensor product, which then is not loaded, and c0, c1 are left in d0, d1 instead of stored."""
    acc, xc = alloc.shared["acc"], alloc.shared["xc"]
    targets = list(range(rows)) + [lq]                 # the level's primes, then P (slot L)

    def acc_of(part, t):
        return acc + part * (rows + 1) + t

    for i in range(rows):
        w.note(f"digit {i}: d2 mod q_{i}, centred, into every prime")
        if on_chip is None:
            x = alloc.shared["x"]
            w(f"load b{x}, s{i}, {layout.address('d2', i):#x}, check", f"d2[{i}] (NTT)")
        else:
            x = on_chip["d2"] + i
        w(f"intt b{xc}, b{x}, s{i}", f"d2[{i}] in coefficients mod q_{i}")
        for t, slot in enumerate(targets):
            b = alloc.work(t)
            name = "P" if slot == lq else f"q_{slot}"
            if slot == i:
                digit = x
            else:
                w(f"conv b{b['t']}, b{xc}, s{i}, digit, to=s{slot}", f"digit {i} mod {name}")
                w(f"ntt b{b['t_hat']}, b{b['t']}, s{slot}", "NTT")
                digit = b["t_hat"]
            for part in (0, 1):
                key = b[f"k{part}"]
                w(f"load b{key}, s{slot}, {layout.rlk_address(i, part, slot if slot < lq else lq):#x}, check",
                  f"rlk digit {i} {'ba'[part]} mod {name}")
                if i == 0:
                    w(f"mul b{acc_of(part, t)}, b{digit}, b{key}, s{slot}", f"acc{part} mod {name}")
                else:
                    w(f"mac b{acc_of(part, t)}, b{digit}, b{key}, b{acc_of(part, t)}, s{slot}",
                      f"acc{part} mod {name} +=")
    for part in (0, 1):
        w.note(f"ModDown of acc{part}: (acc - [acc]_P) / P, plus d{part}")
        w(f"intt b{xc}, b{acc_of(part, rows)}, s{lq}", f"acc{part} mod P in coefficients")
        for j in range(rows):
            b = alloc.work(j)
            w(f"conv b{b['t']}, b{xc}, s{lq}, extend, to=s{j}", f"[acc{part}]_P mod q_{j}")
            w(f"ntt b{b['t_hat']}, b{b['t']}, s{j}", "NTT")
            w(f"sub b{b['t']}, b{acc_of(part, j)}, b{b['t_hat']}, s{j}", "acc - [acc]_P")
            w(f"load b{b['k0']}, s{j}, {layout.address('p_inv', j):#x}, check", f"P^-1 mod q_{j}")
            w(f"mul b{b['t_hat']}, b{b['t']}, b{b['k0']}, s{j}", "/ P")
            if on_chip is None:
                w(f"load b{b['k1']}, s{j}, {layout.address(f'd{part}', j):#x}, check", f"d{part}[{j}]")
                w(f"add b{b['t']}, b{b['t_hat']}, b{b['k1']}, s{j}", f"c{part}[{j}]")
                w(f"store b{b['t']}, {layout.address(f'c{part}', j):#x}", f"c{part}[{j}]")
            else:
                d = on_chip[f"d{part}"] + j
                w(f"add b{d}, b{b['t_hat']}, b{d}, s{j}", f"c{part}[{j}], in d{part}'s buffer")


def _rescale_body(w, layout, alloc, rows, on_chip=None):
    """The rescale of c0, c1; ``on_chip``: buffers {"d0", "d1"} holding c0, c1 (the fused program),
    which then are not loaded."""
    last = rows - 1
    xc = alloc.shared["xc"]
    for part in (0, 1):
        w.note(f"c{part}: divide by q_{last}, rounded")
        if on_chip is None:
            src = alloc.work(0)["x"]
            w(f"load b{src}, s{last}, {layout.address(f'c{part}', last):#x}, check", f"c{part}[{last}]")
        else:
            src = on_chip[f"d{part}"] + last
        w(f"intt b{xc}, b{src}, s{last}", f"c{part}[{last}] in coefficients")
        for i in range(last):
            b = alloc.work(i)
            key = b["k"] if "k" in b else b["k0"]
            w(f"conv b{b['t']}, b{xc}, s{last}, round, to=s{i}", f"[c{part}]_q{last} mod q_{i}")
            w(f"ntt b{b['t_hat']}, b{b['t']}, s{i}", "NTT")
            if on_chip is None:
                c = b["x"]
                w(f"load b{c}, s{i}, {layout.address(f'c{part}', i):#x}, check", f"c{part}[{i}]")
            else:
                c = on_chip[f"d{part}"] + i
            w(f"sub b{b['t']}, b{c}, b{b['t_hat']}, s{i}", "c - t")
            w(f"load b{key}, s{i}, {layout.ql_inv_address(last, i):#x}, check", f"q_{last}^-1 mod q_{i}")
            w(f"mul b{b['t_hat']}, b{b['t']}, b{key}, s{i}", f"/ q_{last}")
            w(f"store b{b['t_hat']}, {layout.address(f'r{part}', i):#x}", f"r{part}[{i}]")


def _fused_hmult_body(w, layout, alloc, rows, on_chip):
    """The tensor product into the buffers ``on_chip`` (the operands through a working set)."""
    for i in range(rows):
        b = alloc.work(i)
        w.note(f"row {i}: the tensor product, kept on chip")
        src = {"a0": b["t"], "a1": b["t_hat"], "b0": b["k0"], "b1": b["k1"]}
        _tensor_row(w, layout, i, src, {name: on_chip[name] + i for name in ("d0", "d1", "d2")})


def _rescalable_rows(params: CKKSParams, level) -> int:
    rows = check_server_params(params).check_level(level) + 1
    if rows < 2:
        raise ParameterError("level", level, ">= 1: level 0 has no prime left to divide by")
    return rows


def hmult(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
          layout: ServerMemoryMap | None = None) -> Program:
    """The tensor product of a and b (regions a0 .. b1) into d0, d1, d2, rows 0 .. level."""
    rows, layout, alloc, w = _setup("hmult", params, shape, level, layout)
    _hmult_body(w, layout, alloc, rows)
    return _finish("hmult", w, shape, layout, rows, alloc, server_min_buffers("hmult", rows))


def relinearize(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
                layout: ServerMemoryMap | None = None) -> Program:
    """d0, d1, d2 relinearised with the key in ``rlk`` into c0, c1, rows 0 .. level."""
    rows = check_server_params(params).check_level(level) + 1
    rows, layout, alloc, w = _setup("relinearize", params, shape, level, layout, targets=rows + 1)
    _relinearize_body(w, layout, alloc, rows, len(params.moduli))
    return _finish("relinearize", w, shape, layout, rows, alloc, server_min_buffers("relinearize", rows))


def rescale(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
            layout: ServerMemoryMap | None = None) -> Program:
    """c0, c1 at ``level`` (>= 1) divided by q_level into r0, r1 (rows 0 .. level - 1)."""
    rows = _rescalable_rows(params, level)
    rows, layout, alloc, w = _setup("rescale", params, shape, level, layout, targets=rows - 1)
    _rescale_body(w, layout, alloc, rows)
    return _finish("rescale", w, shape, layout, rows, alloc, server_min_buffers("rescale", rows))


def fused_min_buffers(rows: int) -> int:
    """The buffers the fused mul_relin_rescale needs at ``rows`` primes (3 rows, 2 (rows + 1)
    accumulators, a coefficient row and a working set of 4)."""
    info = SERVER_PROGRAMS["mul_relin_rescale"]
    return sum(c for _, c in info.shared(rows)) + len(info.working)


def mul_relin_rescale(params: CKKSParams, shape: EngineShape, *, level: int | None = None,
                      layout: ServerMemoryMap | None = None, fused: bool | None = None) -> Program:
    """hmult, relinearize and rescale in one program: a, b at ``level`` (>= 1) -> r0, r1.

    ``fused`` True: the tensor product and the relinearised ciphertext stay in buffers (only the
    operands, the key, the constants and r0, r1 cross the memory port; :func:`fused_min_buffers`);
    False: the three programs one after another through memory, a ``fence`` between them; None
    (default): fused when the engine's buffers allow it."""
    rows = _rescalable_rows(params, level)
    if fused is None:
        fused = shape.buffers >= fused_min_buffers(rows)
    if fused:
        rows, layout, alloc, w = _setup("mul_relin_rescale", params, shape, level, layout, targets=rows + 1)
        on_chip = {name: alloc.shared[name] for name in ("d0", "d1", "d2")}
        _fused_hmult_body(w, layout, alloc, rows, on_chip)
        _relinearize_body(w, layout, alloc, rows, len(params.moduli), on_chip)
        _rescale_body(w, layout, alloc, rows, on_chip)
        return _finish("mul_relin_rescale", w, shape, layout, rows, alloc, fused_min_buffers(rows))
    parts = [hmult(params, shape, level=level, layout=layout), relinearize(params, shape, level=level, layout=layout),
             rescale(params, shape, level=level, layout=layout)]
    lines = [f"; mul_relin_rescale: N = {params.n}, {rows} rows, {shape.buffers} buffers (through memory)"]
    for program in parts:
        body = [line for line in program.text.splitlines()
                if not line.startswith(("cfg.prime", "notify")) and line != program.text.splitlines()[0]]
        if program is parts[0]:
            lines += [line for line in program.text.splitlines() if line.startswith("cfg.prime")]
            lines += body
        else:
            lines.append(f"{'fence':<40} ; {program.name} reads what the step before stored")
            lines += body
    info = SERVER_PROGRAMS["mul_relin_rescale"]
    lines.append(f"{f'notify {info.notify}':<40} ; mul_relin_rescale done")
    text = "\n".join(lines) + "\n"
    return Program("mul_relin_rescale", text, tuple(asm.assemble(text, shape)), parts[0].layout, rows,
                   server_min_buffers("mul_relin_rescale", rows), parts[1].allocation, info.notify)
