"""Planning of one (possibly truncated) product for the multiplier generator (:mod:`.multiplier`,
whose docstring describes the algorithm): operand limbs, DSP tiles or LUT rows per partial product,
optional Karatsuba, the rows of the adder tree (:class:`MulPlan`), and :func:`tree_plan`."""

from __future__ import annotations

from dataclasses import dataclass, field

from amaranth.hdl import Mux, signed, unsigned

from hhe_gen.params.errors import ParameterError

from .compressor import CHUNK_BITS, CompressorPlan, RowSpec, emit_trees
from .constants import check_int, check_target
from .dsp_tiles import check_dsp, tile
from .pipeline import DELAY, Pipe, Segment, Timed, add_delay, dsp_costs

__all__ = ["TILE_DIMS", "LUT_BITS", "PARTS", "Slice", "Term", "MulPlan", "tree_plan"]

TILE_DIMS = {"ecp5": (18, 18), "xilinx": (24, 17), "generic": None}
LUT_BITS = {"ecp5": 4, "xilinx": 4, "generic": 0}
PARTS = ("full", "low", "high")


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

    Parameters are those of :class:`Multiplier` plus

    extra : list of (offset, width, sign)   addends that join the adder tree (their values are
        passed to :meth:`build`); with extras the result is the low ``part_bits`` bits (part must
        be "low"), or with part "full" the caller must make sure the exact sum fits a_width +
        b_width bits
    name : str          prefixes segment names
    offset : int        the product enters the sum at bit ``offset`` (part "low" only: the result
                        is (a*b*2^offset + extras) mod 2^part_bits); default 0
    sign : int          +1, or -1 to subtract the product (part "low" only)
    carry_save : bool   stop after the compressor levels: :meth:`build` returns two values whose
                        sum modulo 2^part_bits is the result (no carry-propagate adder); part "low"
    dsp : str           how the tiles are built (``DSP_MODES``): "infer" (``*``, Yosys maps it),
                        "primitive" (ecp5: MULT18X18D instances whose input/output registers take
                        the pipeline registers right before/after the tiles) or "model" (the same
                        wiring with an Amaranth model of the primitive, for simulation)
    chunk_bits : int    the carry-propagate adder is cut into chunks of at most this many bits
                        (default ``CHUNK_BITS``); a register may go between chunks
    side_delay : float  delay of logic the caller builds in parallel with the tiles (in the
                        ``pp`` segment); the segment is at least that slow
    reduce : str        how the adder tree reduces its rows (:data:`.compressor.REDUCTIONS`):
                        "csa" (3:2 compressor levels and one chunked carry-propagate adder, the
                        default) or "adders" (levels of two-word carry-propagate adders: about
                        half the logic on ECP5, deeper)

    Members: ``terms``, ``rows``, ``tiles``, ``lut_rows``, ``sums`` (Karatsuba sums), ``tree``
    (the compressor plan: ``levels`` compressor levels, ``chunks`` of the final adder),
    ``segments``, ``width``, ``out_bits``.
    """

    def __init__(self, a_width, b_width, *, target="ecp5", karatsuba=False, part="full", part_bits=None,
                 signed=False, lut_bits=None, extra=(), name="m", offset=0, sign=1, carry_save=False,
                 dsp="infer", chunk_bits=None, side_delay=0.0, reduce="csa"):
        self.a_width = check_int("a_width", a_width, 1, 256)
        self.b_width = check_int("b_width", b_width, 1, 256)
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
        else:       # with extra addends (or an offset) a "low" result may be wider than the product
            wide = part == "low" and (extra or offset)
            part_bits = check_int("part_bits", part_bits, 1, 512 if wide else full)
        if signed not in (True, False):
            raise ParameterError("signed", signed, "True or False")
        self.offset = check_int("offset", offset, 0, 511)
        if sign not in (1, -1):
            raise ParameterError("sign", sign, "+1 or -1")
        if carry_save not in (True, False):
            raise ParameterError("carry_save", carry_save, "True or False")
        if (self.offset or sign < 0 or carry_save) and part != "low":
            raise ParameterError("part", part, "'low' with offset, sign = -1 or carry_save")
        self.dsp = check_dsp(dsp, target)
        self.chunk_bits = CHUNK_BITS if chunk_bits is None else check_int("chunk_bits", chunk_bits, 4, 512)
        self.lut_bits = LUT_BITS[target] if lut_bits is None else check_int("lut_bits", lut_bits, 0, 17)
        self.karatsuba, self.part, self.part_bits, self.signed = karatsuba, part, part_bits, signed
        self.sign, self.carry_save = sign, carry_save
        self.name = name
        self.out_bits = part_bits if part == "low" else full      # modulus of the tree arithmetic
        self.width = part_bits                                    # width of the result
        dims = TILE_DIMS[target]
        pl = _Planner(dims, self.lut_bits, max(self.out_bits - self.offset, 0))
        self.sums = []                                            # (name, src, (lo, w), (lo, w))
        a, b = Slice("a", 0, a_width), Slice("b", 0, b_width)
        if self.out_bits > self.offset:
            if karatsuba:
                self._karatsuba(pl, dims)
            else:
                pl.rect(a, b, 0)
        self.terms = pl.terms
        rows = []
        for ti, tm in enumerate(self.terms):
            for off, sg in tm.places:
                off, sg = off + self.offset, sg * sign
                if tm.kind == "tile":
                    rows.append(RowSpec(off, tm.x.width + tm.y.width, sg, ("tile", ti)))
                else:
                    narrow, wide = (tm.x, tm.y) if tm.x.width <= tm.y.width else (tm.y, tm.x)
                    for bit in range(narrow.width):
                        rows.append(RowSpec(off + bit, wide.width, sg, ("lut", ti, bit)))
        if signed:
            rows.append(RowSpec(a_width + self.offset, b_width, -sign, ("sign", "a")))
            rows.append(RowSpec(b_width + self.offset, a_width, -sign, ("sign", "b")))
        self.extra = list(extra)
        if self.extra and part == "high":
            raise ParameterError("extra", extra, "addends only with part 'full' or 'low'")
        for k, (off, wd, sg) in enumerate(self.extra):
            rows.append(RowSpec(off, wd, sg, ("extra", k)))
        self.tree = CompressorPlan(rows, self.out_bits, self.chunk_bits, carry_save=carry_save, reduce=reduce)
        self.reduce = self.tree.reduce
        self.rows = self.tree.rows
        self.levels = self.tree.levels
        self.tiles = sum(1 for t in self.terms if t.kind == "tile")
        self.lut_rows = sum(1 for r in self.rows if r.key[0] == "lut")
        segs = []
        if self.sums:
            segs.append(Segment(f"{name}.pre", add_delay(max(w for *_, w in self.sums))))
        if self.tiles:
            gate = max(DELAY["gate"] if self.lut_rows else 0.0, side_delay)
            costs = dsp_costs(self.dsp != "infer")
            segs.append(Segment(f"{name}.pp", max(costs["delay"], gate), required=True,
                                head=max(costs["head"], gate), tail=max(costs["tail"], gate),
                                alone=max(costs["alone"], gate)))
        else:
            segs.append(Segment(f"{name}.pp", max(DELAY["gate"] if self.lut_rows else 0.0, side_delay)))
        segs += self.tree.segments(name)
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
    def build(self, pipe: Pipe, a: Timed, b: Timed, extras=(), *, probe=None, probe_full=None):
        """Emit the product into ``pipe`` (its segments must be next in the pipe's plan).

        ``a``, ``b``: the operands (at most a_width / b_width bits are used); ``extras``: Timed
        values of the extra addends.  ``probe`` / ``probe_full`` name the result / the whole sum
        (before a 'high' slice) as probes of the pipe.  Returns the result (``width`` bits; signed
        for a signed 'full' or 'high' product) after the last boundary of this plan; with
        ``carry_save`` a pair of Timed values (``width`` bits each) whose sum mod 2^width is it.
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
                vals[ti] = tile(pipe, self.dsp, src[tm.x.src], src[tm.y.src], tm, f"{n}_tile{ti}")
        row_vals = []
        for r in self.tree.rows:
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
        pipe.boundary(f"{n}.pp")
        out = emit_trees(pipe, n, [self.tree], [row_vals])[0]
        if self.carry_save:
            return out
        full_w = self.out_bits
        total = pipe.wire(lambda v: v, out, shape=full_w, name=probe_full or f"{n}_full",
                          probe=probe_full is not None)                   # modulo 2^full_w
        signed_out = self.signed and self.part != "low"
        shape = signed(self.width) if signed_out else unsigned(self.width)
        lo_bit = full_w - self.part_bits if self.part == "high" else 0
        return pipe.wire(lambda v: v[lo_bit:], total, shape=shape, name=probe or f"{n}_p",
                         probe=probe is not None)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)
