"""Carry-save compressor trees of the multiplier generator (:mod:`.multiplier`): a sum of shifted,
signed rows reduced by 3:2 compressor levels and one chunked carry-propagate adder
(:class:`CompressorPlan`, pure Python), their emission into a pipeline (:func:`emit_trees`), and
:class:`SumPlan` (lockstep trees of shift-add constant multipliers)."""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Value

from hhe_gen.params.errors import ParameterError

from .constants import check_int
from .pipeline import DELAY, Segment, Timed, add_delay, chunk_costs

__all__ = ["CHUNK_BITS", "REDUCTIONS", "RowSpec", "CompressorPlan", "SumPlan", "emit_trees", "tree_segments",
           "check_reduce"]

CHUNK_BITS = 32
#: How a tree reduces its words: ``"adders"``, levels of two-word carry-propagate adders (on ECP5 a
#: CCU2C cell adds two bits: half the logic of a 3:2 level per row removed, slower per level), or
#: ``"csa"``, levels of 3:2 compressors (two LUT4 per bit) and one chunked carry-propagate adder.
REDUCTIONS = ("adders", "csa")


@dataclass(frozen=True)
class RowSpec:
    """One addend of the tree: ``sign * value * 2^offset``, value unsigned < 2^width."""
    offset: int
    width: int
    sign: int
    key: tuple      # how to build it: ('tile', term index) | ('lut', term index, bit) | ('src', name)


class CompressorPlan:
    """Carry-save compressor tree and chunked carry-propagate adder for a sum of shifted, signed rows
    modulo 2^out_bits (pure Python, no signals).

    Every row enters with its bits (a negative row -V*2^o as its complement ~V plus the constant
    2^o - 2^(o+w); the constants are summed and enter as runs of ones).  Rows that do not overlap
    are concatenated into *words* (no logic).  Each compressor level replaces groups of three
    overlapping words by their bitwise sum and majority (a 3:2 carry-save adder: one LUT level,
    no carry chain) until at most two words remain; the two go through a carry-propagate adder
    from the first column where both have bits, cut into ``chunks`` of at most ``chunk_bits``
    bits (a register between two chunks holds the carry).  With ``carry_save`` the adder is left
    out.

    Members: ``rows`` (the rows that reach the result), ``const``, ``words`` (per initial word, its
    [lo, hi) and rows), ``plan`` (per level: (groups of three word indices, passed indices)),
    ``spans`` (per level, the [lo, hi) of every word before it, then the final ones), ``levels``,
    ``cpa_lo``, ``chunks`` ((lo, hi) column ranges of the adder).
    """

    def __init__(self, rows, out_bits: int, chunk_bits: int = 32, carry_save: bool = False,
                 reduce: str = "csa"):
        W = self.out_bits = out_bits
        self.carry_save = carry_save
        self.reduce = check_reduce(reduce)
        self.rows = [RowSpec(r.offset, min(r.width, W - r.offset), r.sign, r.key)
                     for r in rows if r.offset < W and r.width > 0]
        const = 0
        for r in self.rows:
            if r.sign < 0:
                const += (1 << r.offset) - (1 << (r.offset + r.width))
        self.const = const % (1 << W) if W else 0
        pieces = [(r.offset, r.width, ("row", i)) for i, r in enumerate(self.rows)]
        c = 0
        while c < W:                    # runs of ones of the constant
            if self.const >> c & 1:
                lo = c
                while c < W and self.const >> c & 1:
                    c += 1
                pieces.append((lo, c - lo, ("one",)))
            else:
                c += 1
        words = []                      # [lo, hi, [pieces]]
        for pc in sorted(pieces, key=lambda p: (p[0], -p[1])):
            for wd in words:
                if wd[1] <= pc[0]:
                    wd[1] = pc[0] + pc[1]
                    wd[2].append(pc)
                    break
            else:
                words.append([pc[0], pc[0] + pc[1], [pc]])
        self.words = [(lo, hi, pcs) for lo, hi, pcs in words]
        spans = [(lo, hi) for lo, hi, _ in self.words]
        self.spans = [list(spans)]
        self.plan = []
        if self.reduce == "adders":
            self._plan_adders(spans)
            return
        self.level_delays = []
        while len(spans) > 2:
            order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1], i))
            groups, passed, new = [], [], []
            k = 0
            while len(order) - k >= 3:
                g = order[k:k + 3]
                k += 3
                lo, hi, clo, chi = _csa_spans([spans[i] for i in g], W)
                groups.append(tuple(g))
                new.append((lo, hi))                          # sum
                if chi > clo:
                    new.append((clo, chi))                    # carry (shifted up by one)
            for i in order[k:]:
                passed.append(i)
                new.append(spans[i])
            self.plan.append((groups, passed))
            self.level_delays.append(DELAY["gate"])
            spans = new
            self.spans.append(list(spans))
        self.levels = len(self.plan)
        if len(spans) == 2:
            lo = max(spans[0][0], spans[1][0])
            hi = max(spans[0][1], spans[1][1])
            lo = min(lo, hi)
        else:
            lo = hi = W
        self.cpa_lo = lo
        self.chunks = []
        n = W - lo if hi > lo else 0
        if n and not carry_save:
            m = -(-n // chunk_bits)
            size = -(-n // m)
            c = lo
            while c < W:
                self.chunks.append((c, min(W, c + size)))
                c += size

    def _plan_adders(self, spans):
        """The ``"adders"`` reduction: each level adds pairs of words (lowest-starting first) with
        carry-propagate adders until one word is left (two with ``carry_save``); no final adder.
        A level's plan is (pairs, passed); a pair's sum spans [lo, hi) of the pair's hull, one
        column more when the two overlap (the carry out), at most W."""
        W, keep = self.out_bits, 2 if self.carry_save else 1
        self.level_delays = []
        while len(spans) > keep:
            order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1], i))
            n_pairs = min(len(spans) // 2, len(spans) - keep)
            pairs = [tuple(order[2 * k:2 * k + 2]) for k in range(n_pairs)]
            passed = order[2 * n_pairs:]
            new, delay = [], 0.0
            for g in pairs:
                lo, hi, ov = _adder_span([spans[i] for i in g], W)
                new.append((lo, hi))
                if hi > ov:
                    delay = max(delay, add_delay(hi - ov))
            new += [spans[i] for i in passed]
            self.plan.append((pairs, passed))
            self.level_delays.append(delay)
            spans = new
            self.spans.append(list(spans))
        self.levels = len(self.plan)
        self.cpa_lo, self.chunks = W, []

    def segments(self, name: str) -> list:
        """Segments ``{name}.c1`` .. (compressor or adder levels) and ``{name}.a1`` .. (chunks of
        the final adder of the ``"csa"`` reduction)."""
        return tree_segments(name, [self])


def check_reduce(reduce) -> str:
    """``reduce`` of a tree: one of :data:`REDUCTIONS`."""
    if reduce not in REDUCTIONS:
        raise ParameterError("reduce", reduce, "one of " + ", ".join(repr(r) for r in REDUCTIONS))
    return reduce


def _adder_span(spans, W):
    """(lo, hi, ov) of the sum of two words spanning ``spans``: their hull [lo, hi), one column
    more when they overlap (capped at W), and ``ov`` the first column where both have bits (the
    carry chain runs from ov to hi; below it the lower word's bits pass)."""
    (a1, b1), (a2, b2) = spans
    lo, ov = min(a1, a2), max(a1, a2)
    overlap = min(b1, b2) > ov
    hi = min(W, max(b1, b2) + 1) if overlap else max(b1, b2)
    return lo, hi, ov if overlap else hi


def _csa_spans(spans, W):
    """Sum and carry spans of a 3:2 adder of three words: the sum covers their hull, the carry
    (one column up) only the columns where at least two of them have bits (their hull)."""
    lo = min(a for a, _ in spans)
    hi = max(b for _, b in spans)
    pairs = [(max(a1, a2), min(b1, b2)) for i, (a1, b1) in enumerate(spans) for a2, b2 in spans[i + 1:]]
    pairs = [(a, b) for a, b in pairs if b > a]
    if not pairs:
        return lo, hi, 0, 0
    clo = min(a for a, _ in pairs) + 1
    chi = min(W, max(b for _, b in pairs) + 1)
    return lo, hi, clo, max(chi, clo)


def tree_segments(name, trees) -> list:
    segs = []
    levels = max((t.levels for t in trees), default=0)
    for k in range(levels):
        segs.append(Segment(f"{name}.c{k + 1}", max(t.level_delays[k] for t in trees if k < t.levels)))
    chunks = max((len(t.chunks) for t in trees), default=0)
    for k in range(chunks):
        costs = [chunk_costs(hi - lo, k == 0, k == len(t.chunks) - 1)
                 for t in trees if k < len(t.chunks) for lo, hi in [t.chunks[k]]]
        segs.append(Segment(f"{name}.a{k + 1}", max(c["delay"] for c in costs),
                            head=max(c["head"] for c in costs), tail=max(c["tail"] for c in costs),
                            alone=max(c["alone"] for c in costs)))
    return segs


def _fit(v, lo, hi, at_lo, at_hi):
    """Bits [at_lo, at_hi) of a word value ``v`` that spans columns [lo, hi) (zero outside)."""
    parts, pos = [], at_lo
    if lo > pos:
        parts.append(Const(0, min(lo, at_hi) - pos))
        pos = min(lo, at_hi)
    a, b = max(lo, at_lo), min(hi, at_hi)
    if b > a:
        parts.append(v[a - lo:b - lo])
        pos = b
    if at_hi > pos:
        parts.append(Const(0, at_hi - pos))
    return Cat(*parts)


def emit_trees(pipe, n, trees, row_values):
    """Emit compressor trees in lockstep (one boundary per level and per adder chunk, shared by
    all trees).  Returns per tree a Timed value of ``out_bits`` bits (the sum modulo 2^out_bits),
    or with ``carry_save`` a pair of them (their sum modulo 2^out_bits is the result)."""
    states = []
    for ti, (t, vals) in enumerate(zip(trees, row_values)):
        words = []
        for wi, (lo, hi, pcs) in enumerate(t.words):
            srcs = [vals[pc[2][1]] for pc in pcs if pc[2][0] == "row"]

            def word(*vs, lo=lo, pcs=pcs, t=t):
                it = iter(vs)
                parts, pos = [], lo
                for off, w, key in pcs:
                    if off > pos:
                        parts.append(Const(0, off - pos))
                    if key[0] == "one":
                        parts.append(Const((1 << w) - 1, w))
                    else:
                        v = Value.cast(next(it))
                        v = v[:w] if len(v) >= w else Cat(v, Const(0, w - len(v)))
                        parts.append(~v if t.rows[key[1]].sign < 0 else v)
                    pos = off + w
                return Cat(*parts)
            words.append(pipe.comb(word, *srcs, shape=hi - lo, name=f"{n}_w"))
        states.append(words)
    levels = max((t.levels for t in trees), default=0)
    for k in range(levels):
        for ti, t in enumerate(trees):
            if k >= t.levels:
                continue
            groups, passed = t.plan[k]
            spans = t.spans[k]
            W = t.out_bits
            new = []
            if t.reduce == "adders":
                for g in groups:
                    lo, hi, ov = _adder_span([spans[i] for i in g], W)

                    def add(x, y, g=g, lo=lo, hi=hi, ov=ov, spans=spans):
                        first = 0 if spans[g[0]][0] <= spans[g[1]][0] else 1     # the word starting at lo
                        i_low = g[first]
                        parts = [_fit((x, y)[first], spans[i_low][0], spans[i_low][1], lo, ov)] if ov > lo else []
                        if hi > ov:
                            u, v = [_fit(val, spans[i][0], spans[i][1], ov, hi) for val, i in zip((x, y), g)]
                            parts.append((u + v)[:hi - ov])
                        return Cat(*parts)
                    new.append(pipe.comb(add, *[states[ti][i] for i in g], shape=hi - lo, name=f"{n}_c{k + 1}"))
                new += [states[ti][i] for i in passed]
                states[ti] = new
                continue
            for g in groups:
                lo, hi, clo, chi = _csa_spans([spans[i] for i in g], W)
                tvs = [states[ti][i] for i in g]

                def csa(x, y, z, g=g, lo=lo, hi=hi, clo=clo, chi=chi, spans=spans):
                    a, b, c = [_fit(v, spans[i][0], spans[i][1], lo, hi) for v, i in zip((x, y, z), g)]
                    out = [a ^ b ^ c]
                    if chi > clo:       # carry of column j goes to column j + 1
                        out.append(((a & b) | (a & c) | (b & c))[clo - 1 - lo:chi - 1 - lo])
                    return out
                if chi > clo:
                    s_, c_ = pipe.comb_multi(csa, *tvs, shapes=[hi - lo, chi - clo], name=f"{n}_c{k + 1}")
                    new += [s_, c_]
                else:
                    new.append(pipe.comb(lambda *vs: csa(*vs)[0], *tvs, shape=hi - lo, name=f"{n}_c{k + 1}"))
            new += [states[ti][i] for i in passed]
            states[ti] = new
        pipe.boundary(f"{n}.c{k + 1}")
    # the final (at most) two words as full-width vectors
    finals = []
    for ti, t in enumerate(trees):
        W = t.out_bits
        spans = t.spans[-1]
        ws = states[ti]
        if W == 0 or not ws:
            z = Timed(Const(0, max(W, 1)), pipe.stage)
            finals.append((z, z))
            continue
        full = [pipe.wire(lambda v, sp=sp, W=W: _fit(v, sp[0], sp[1], 0, W), tv, shape=W, name=f"{n}_cs")
                for tv, sp in zip(ws, spans)]
        if len(full) == 1:
            full.append(Timed(Const(0, W), pipe.stage))
        finals.append(tuple(full))
    chunks = max((len(t.chunks) for t in trees), default=0)
    names = [f"{n}.a{k + 1}" for k in range(chunks)]
    regs_after = [pipe.registers_at(nm) for nm in names]
    sums = [[] for _ in trees]
    carry = [None for _ in trees]
    for k in range(chunks):
        for ti, t in enumerate(trees):
            if k >= len(t.chunks) or not (k == 0 or regs_after[k - 1]):
                continue
            j = k            # a group: this chunk and the following ones without a register between
            while j + 1 < len(t.chunks) and not regs_after[j]:
                j += 1
            lo, hi = t.chunks[k][0], t.chunks[j][1]
            x, y = finals[ti]
            cin = carry[ti]
            if cin is None:
                s_ = pipe.comb(lambda u, v, lo=lo, hi=hi: u[lo:hi] + v[lo:hi], x, y, shape=hi - lo + 1,
                               name=f"{n}_a{k + 1}")
            else:
                s_ = pipe.comb(lambda u, v, c, lo=lo, hi=hi: (Cat(c, u[lo:hi]) + Cat(c, v[lo:hi]))[1:],
                               x, y, cin, shape=hi - lo + 1, name=f"{n}_a{k + 1}")
            sums[ti].append((lo, hi, s_))
            carry[ti] = pipe.wire(lambda v, w=hi - lo: v[w], s_, shape=1, name=f"{n}_cy{k + 1}")
        pipe.boundary(names[k])
    out = []
    for ti, t in enumerate(trees):
        x, y = finals[ti]
        W = t.out_bits
        if t.carry_save:
            out.append((x, y))
            continue
        if W == 0:
            out.append(Timed(Const(0, 1), pipe.stage))
            continue
        lo = t.cpa_lo if sums[ti] else W

        def join(u, v, *ss, lo=lo, spans=[(a, b) for a, b, _ in sums[ti]]):
            pieces = [(u | v)[:lo]] if lo else []       # below the adder at most one word has bits
            for (a, b), sv in zip(spans, ss):
                pieces.append(sv[:b - a])
            return Cat(*pieces)
        out.append(pipe.wire(join, x, y, *[s_ for _, _, s_ in sums[ti]], shape=W, name=f"{n}_sum"))
    return out


class SumPlan:
    """Plan of one or more sums of shifted, signed rows (shift-add constant multipliers), reduced
    in lockstep compressor trees, modulo 2^out_bits.

    Parameters
    ----------
    row_sets : list of lists of (offset, width, sign): one list per tree (e.g. one per prime);
        every row of a tree is a value < 2^width passed to :meth:`build`
    out_bits : int    results are modulo 2^out_bits (exact when the true sum is in [0, 2^out_bits))
    name : str        segment names ``{name}.c1`` ... (compressor levels of the deepest tree) and
                      ``{name}.a1`` ... (chunks of the carry-propagate adders)
    chunk_bits : int  chunk size of the adders (default ``CHUNK_BITS``)
    carry_save : bool no carry-propagate adders: :meth:`build` returns per tree a pair of values
                      whose sum modulo 2^out_bits is the result
    reduce : str      "csa" (3:2 levels, then the chunked adder) or "adders" (:data:`REDUCTIONS`)
    """

    def __init__(self, row_sets, out_bits: int, name: str = "sum", chunk_bits=None, carry_save=False,
                 reduce="csa"):
        self.out_bits, self.name = out_bits, name
        self.reduce = check_reduce(reduce)
        self.chunk_bits = CHUNK_BITS if chunk_bits is None else check_int("chunk_bits", chunk_bits, 4, 512)
        if not isinstance(carry_save, bool):
            raise ParameterError("carry_save", carry_save, "True or False")
        self.carry_save = carry_save
        self.trees = []
        for specs in row_sets:
            rows = [RowSpec(o, w, s, ("src", k)) for k, (o, w, s) in enumerate(specs)]
            self.trees.append(CompressorPlan(rows, out_bits, self.chunk_bits, carry_save=carry_save, reduce=reduce))
        self.segments = tree_segments(name, self.trees)
        self.tiles = 0

    def build(self, pipe, row_values) -> list:
        """``row_values``: per tree, the Timed values of its rows (in spec order).  Returns per tree
        a Timed value of ``out_bits`` bits (the sum modulo 2^out_bits), or with ``carry_save`` a
        pair of them."""
        vals = []
        for t, rv in zip(self.trees, row_values):
            vals.append([rv[r.key[1]] for r in t.rows])
        outs = emit_trees(pipe, self.name, self.trees, vals)
        if self.carry_save:
            return outs
        return [pipe.wire(lambda v: v, tv, shape=self.out_bits, name=f"{self.name}_r") for tv in outs]
