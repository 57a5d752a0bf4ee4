"""The engine's codec unit: ``encode`` (slots -> residue rows) and ``decode`` (residue rows -> slots)
through the CKKS encoder's IFFT and residue stage and the decoder's CRT, scaling and special FFT
(:mod:`hhe_gen.cores.ckks`), with ONE FFT core for both transforms.

One FFT: the unit runs one task at a time, so encode and decode never transform at the same time.
The encoder's special IFFT (passes = 2L) and the decoder's special FFT (split load) are one
:class:`~hhe_gen.cores.fft.IterativeFft` with ``inverse="both"``, ``passes=(2L, 1)``,
``split_load=(False, True)``: one set of banks and one twiddle ROM per lane (at N = 2^13, P = 2,
38/36: 38 DP16KD instead of 76).  ``encode`` runs it as the IFFT (its ``inverse`` port = 1) and
feeds its output through the encoder's :class:`~hhe_gen.cores.ckks.encoder.ResidueStage`;
``decode`` runs it as the FFT.  Each direction takes exactly the cycles of the one-direction core
it replaces, so the task cycles are those of the unit with two FFTs.

Slots sit in a buffer as the ISA says: Re z_k at word k, Im z_k at word N/2 + k, two's complement;
``encode`` reads the low W bits of each (W = the fixed-point format's width), ``decode`` writes
them sign-extended to ``word_bits``.

encode dst, a, slot, rows=R
    Buffer ``a``'s slots go into the IFFT (a beat of P slots takes two buffer reads: the real
    and the imaginary row); the residue stage gives the residue rows of every built-in prime,
    prime by prime.
    Prime p's row is written to buffer ``dst + r`` for every r < R with slot ``slot + r`` bound to
    p (a row no slot wants is dropped; a prime bound to two slots is written twice, one cycle per
    copy); so any binding of the slots to the built-in primes encodes as the ISA model does.
encode dst, a, slot, rows=1, signed
    The same transform; the residue stage passes the rounded integers themselves (prime 0's
    passes), written to ``dst`` sign-extended to ``word_bits``; the task ends with that row (the
    FFT and the residue stage are reset then, instead of streaming the other primes' passes).
decode dst, a, slot, rows=R
    Buffers ``a .. a+R-1`` are read together (R read ports) and combined by the CRT of the primes
    0 .. R-1, scaled down and transformed; each output beat of P slots is written as a real row and
    an imaginary row of ``dst``.  The decoder is built for the row counts ``decode_rows`` over
    prefixes of the built-in primes: a ``decode`` whose R is not one of them, or whose slots
    ``slot .. slot+R-1`` are not bound to the primes 0 .. R-1 in order, is refused at once with
    the unit's ``error`` (the task manager records DATA_RANGE at its position) and touches nothing.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width, primes : the engine's sizes
fmt : FixedPointFormat      the slots' format (the encoder's and the FFT's; frac_bits <= width - 2
                            or another format with conjugate-exact twiddles, see IterativeFft)
log_scale : int             Delta = 2^log_scale
decode_rows : tuple         the R a ``decode`` may have (default: 1 and all the primes)
target : str                DSP tile size of the FFT butterflies
bf_latency : int or None    the FFT butterflies' latency (None: a complex butterfly's default)
butterflies : str           "own" (the FFT's P complex butterflies) or "external": the FFT's
                            ``lanes_port`` is the unit's (the crypto unit's shared array)

Members
-------
port : In(UnitPort(tag_width))
rd : Out(read port)                        the slots (encode)
rd_rows : list of Out(read port)           decode's rows, max(decode_rows) of them
wr : Out(write port)
slot_prime : In(ArrayLayout(5, S))
lanes_port : Out(butterfly lanes of ``fft.butterfly_plan``)   external butterflies only
fft : the IterativeFft (inverse="both"), residues : the encoder's ResidueStage,
crts {R: CrtCentre}, scales {R: ScaleDownStage} : the cores

Latency
-------
encode: N/P cycles to read the slots (two reads per beat) overlapping the FFT's input (IFFT mode),
the IFFT, then the residue stage's L*N/P output beats (one per cycle, more for a prime bound to
several slots; N/P with ``signed``): fft.timing(True) and one register, as the standalone
:class:`~hhe_gen.cores.ckks.Encoder`.
decode: N/P input beats at one per cycle, the FFT (fft.timing(False)), then two cycles per output
beat (N/(2P) beats).
Nothing depends on the data.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.ckks.crt import CrtCentre
from hhe_gen.cores.ckks.decoder import ScaleDownStage
from hhe_gen.cores.ckks.encoder import ResidueStage
from hhe_gen.cores.fft import IterativeFft
from hhe_gen.cores.unused import mark_unused, quiet_on_error
from hhe_gen.models import ckks_fixed
from hhe_gen.params.errors import ParameterError

from . import isa
from .buffers import read_port_signature, write_port_signature
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["CodecUnit"]


class CodecUnit(wiring.Component):
    """encode / decode between buffers (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, fmt, log_scale: int, decode_rows=None, target: str = "ecp5", bf_latency=None,
                 butterflies: str = "own"):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, n_low=16, lanes_high=n // 8)
        self.fmt, self.log_scale = fmt, log_scale
        if fmt.width > word_bits:
            raise ParameterError("word_bits", word_bits, f">= {fmt.width} (the slot format's width)")
        self.decode_rows = tuple(sorted(set(decode_rows or {1, min(len(self.primes), slots)})))
        for r in self.decode_rows:
            if not 1 <= r <= min(len(self.primes), slots, ckks_fixed.MAX_DECODER_PRIMES):
                raise ParameterError("decode_rows", decode_rows, f"row counts 1 .. "
                                     f"{min(len(self.primes), slots, ckks_fixed.MAX_DECODER_PRIMES)}")
        moduli = ckks_fixed.check_codec_params(n, fmt, log_scale, list(self.primes))
        if len(moduli) > 128:
            raise ParameterError("primes", f"<{len(moduli)} primes>", "1 .. 128 primes (the IFFT's 2L passes)")
        # one FFT for both tasks: IFFT (encode, read 2L times) and FFT (decode, split load)
        self.fft = IterativeFft(n // 2, lanes, fmt, inverse="both", passes=(2 * len(moduli), 1),
                                split_load=(False, True), target=target, bf_latency=bf_latency,
                                butterflies=butterflies)
        self.residues = ResidueStage(n // 2, lanes, fmt, log_scale, moduli)
        self.crts = {r: CrtCentre(self.primes[:r], lanes) for r in self.decode_rows}
        for r in self.decode_rows:
            ckks_fixed.check_decoder_params(n, fmt, log_scale, self.primes[:r])
        self.scales = {r: ScaleDownStage(lanes, fmt, log_scale, c.cbits) for r, c in self.crts.items()}
        mark_unused(self.fft, self.residues, *self.crts.values(), *self.scales.values())
        rd = read_port_signature(buffers, self.rows, lanes, word_bits)
        self.row_ports = max(self.decode_rows)
        members = {"port": In(UnitPort(tag_width)), "rd": Out(rd),
                   "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
                   "slot_prime": In(data.ArrayLayout(5, slots))}
        members.update({f"rd_row{r}": Out(rd) for r in range(self.row_ports)})
        if butterflies == "external":
            members["lanes_port"] = self.fft.signature.members["lanes_port"]
        super().__init__(members)

    def rd_row(self, r):
        return getattr(self, f"rd_row{r}")

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`): the slots' read port, then decode's rows."""
        return UnitDeclaration(isa.Unit.CODEC, reads=("rd", *(f"rd_row{r}" for r in range(self.row_ports))),
                               writes=("wr",))

    def elaborate(self, platform):
        m = Module()
        p, wb, rows, fmt = self.lanes, self.word_bits, self.rows, self.fmt
        w = fmt.width
        half = rows // 2                     # buffer rows per half (real / imaginary parts)
        task, abort = self.port.task, self.port.abort
        cut = Signal()                           # a signed encode has its row: the rest is dropped
        m.submodules.fft = ResetInserter(abort | cut)(self.fft)
        m.submodules.residues = ResetInserter(abort | cut)(self.residues)
        fft, res = self.fft, self.residues
        if self.fft.butterflies == "external":
            wiring.connect(m, fft.lanes_port, wiring.flipped(self.lanes_port))
        signed_enc = Signal()                    # the encode in progress is ``signed``
        m.d.comb += res.signed_out.eq(signed_enc)
        for r in self.decode_rows:
            m.submodules[f"crt{r}"] = ResetInserter(abort)(self.crts[r])
            m.submodules[f"scale{r}"] = ResetInserter(abort)(self.scales[r])
        fifo = SyncFIFO(width=p * 2 * w, depth=2)
        m.submodules.slot_beats = ResetInserter(abort)(fifo)
        row_fifo = SyncFIFO(width=self.row_ports * p * wb, depth=3)
        m.submodules.row_beats = ResetInserter(abort)(row_fifo)

        busy, decoding = Signal(), Signal()
        dst, src, base, nrows = Signal(isa.BUFFER_BITS), Signal(isa.BUFFER_BITS), Signal(isa.SLOT_BITS), Signal(4)
        prime_of = Array(self.slot_prime[s] for s in range(self.slots))
        n_primes = len(self.primes)
        # encode: which rows want each built-in prime
        wants = [Signal(isa.MAX_SLOTS, name=f"wants{pid}") for pid in range(n_primes)]
        refuse = Signal()
        start = task.valid & task.ready
        m.d.comb += task.ready.eq(~busy & ~abort)
        pl = task.payload
        with m.If(abort):
            m.d.sync += [busy.eq(0), refuse.eq(0)]
        with m.Elif(start):
            r_count = pl.imm[:4]
            signed_now = (pl.opcode == isa.Opcode.ENCODE) & pl.flags[0]
            m.d.sync += [busy.eq(1), dst.eq(pl.dst), src.eq(pl.a), base.eq(pl.slot), nrows.eq(r_count),
                         decoding.eq(pl.opcode == isa.Opcode.DECODE), signed_enc.eq(signed_now)]
            for pid in range(n_primes):
                bits = []
                for r in range(isa.MAX_SLOTS):
                    s = pl.slot + r
                    bits.append((r < r_count) & (s < self.slots) & (prime_of[s[:isa.SLOT_BITS]] == pid))
                # signed (rows = 1): prime 0's pass carries the integers, into dst
                m.d.sync += wants[pid].eq(Mux(signed_now, int(pid == 0), Cat(*bits)))
            # decode: R must be built and the slots bound to primes 0 .. R-1 in order
            ok_r = Const(0)
            for r in self.decode_rows:
                ok_r = ok_r | (r_count == r)
            ok_bind = Const(1)
            for r in range(max(self.decode_rows)):
                s = pl.slot + r
                ok_bind = ok_bind & ((r >= r_count) | ((s < self.slots) & (prime_of[s[:isa.SLOT_BITS]] == r)))
            m.d.sync += refuse.eq((pl.opcode == isa.Opcode.DECODE) & ~(ok_r & ok_bind))

        done, err = Signal(), Signal()
        m.d.comb += [self.port.done.eq(done & ~abort), self.port.error.eq(err & done & ~abort)]
        with m.If(done & ~abort):
            m.d.sync += [busy.eq(0), refuse.eq(0)]
        run_enc = busy & ~decoding & ~abort
        run_dec = busy & decoding & ~refuse & ~abort
        m.d.comb += fft.inverse.eq(~decoding)          # sampled by the FFT with a task's first beat
        with m.If(busy & refuse):
            m.d.comb += [done.eq(1), err.eq(1)]

        # -- encode: slots -> FFT (IFFT mode) -> residue stage ----------------------------------------
        s_issue = Signal(range(rows + 1))        # reads issued: 2 per beat (re row b, im row half + b)
        s_inflight = Signal()
        s_phase = Signal()                       # the read in flight is the imaginary row
        re_hold = Signal(data.ArrayLayout(wb, p))
        room = fifo.level + s_inflight < 2
        reading = run_enc & (s_issue < rows) & (room | (s_issue[0] == 1))
        b = s_issue >> 1
        m.d.comb += [self.rd.sel.eq(src), self.rd.en.eq(reading),
                     self.rd.addr.eq(Mux(s_issue[0], half + b, b))]
        with m.If(abort | start):
            m.d.sync += [s_issue.eq(0), s_inflight.eq(0)]
        with m.Else():
            m.d.sync += [s_inflight.eq(reading), s_phase.eq(s_issue[0])]
            with m.If(reading):
                m.d.sync += s_issue.eq(s_issue + 1)
        with m.If(s_inflight & ~s_phase):
            m.d.sync += re_hold.eq(self.rd.data)
        packed = []
        for j in range(p):
            packed.append(Cat(re_hold[j][:w], self.rd.data[j][:w]))
        m.d.comb += [fifo.w_data.eq(Cat(*packed)), fifo.w_en.eq(s_inflight & s_phase)]
        enc_payload = [fifo.r_data[j * 2 * w:(j + 1) * 2 * w] for j in range(p)]
        m.d.comb += fifo.r_en.eq(fft.i_stream.ready & run_enc)
        fo = fft.o_stream
        m.d.comb += [res.i_stream.valid.eq(fo.valid & run_enc), res.i_stream.payload.eq(fo.payload)]

        # residue rows -> every buffer that wants them
        e_beat = Signal(range(n_primes * rows + 1))
        e_prime = Signal(range(max(n_primes, 2)))
        e_row = Signal(range(rows))
        used = Signal(isa.MAX_SLOTS)
        want_now = Signal(isa.MAX_SLOTS)
        m.d.comb += want_now.eq(Array(wants)[e_prime] & ~used)
        first = Signal(range(isa.MAX_SLOTS))
        for r in reversed(range(isa.MAX_SLOTS)):
            with m.If(want_now[r]):
                m.d.comb += first.eq(r)
        single = (want_now & (want_now - 1)) == 0          # at most one row left for this beat
        out = res.o_stream
        m.d.comb += out.ready.eq(run_enc & single)
        writing_enc = run_enc & out.valid & (want_now != 0)
        with m.If(abort | start):
            m.d.sync += [e_beat.eq(0), e_prime.eq(0), e_row.eq(0), used.eq(0)]
        with m.Elif(out.valid & out.ready):
            m.d.sync += [e_beat.eq(e_beat + 1), used.eq(0),
                         e_row.eq(Mux(e_row == rows - 1, 0, e_row + 1)),
                         e_prime.eq(Mux(e_row == rows - 1, e_prime + 1, e_prime))]
        with m.Elif(writing_enc):
            m.d.sync += used.eq(used | (1 << first))
        with m.If(out.valid & out.ready & (e_beat == n_primes * rows - 1)):
            m.d.comb += done.eq(1)
        # signed: prime 0's passes are the row; the IFFT's other passes are not streamed out, the
        # FFT and the residue stage restart empty with the task's end
        with m.If(signed_enc & out.valid & out.ready & (e_beat == rows - 1)):
            m.d.comb += [done.eq(1), cut.eq(~abort)]

        # -- decode: rows -> CRT -> scale -> FFT -> slots ---------------------------------------------
        d_issue = Signal(range(rows + 1))
        d_inflight = Signal()
        d_reading = run_dec & (d_issue < rows) & (row_fifo.level + d_inflight < 3)
        for r in range(self.row_ports):
            port = self.rd_row(r)
            m.d.comb += [port.sel.eq(src + r), port.addr.eq(d_issue), port.en.eq(d_reading & (r < nrows))]
        with m.If(abort | start):
            m.d.sync += [d_issue.eq(0), d_inflight.eq(0)]
        with m.Else():
            m.d.sync += d_inflight.eq(d_reading)
            with m.If(d_reading):
                m.d.sync += d_issue.eq(d_issue + 1)
        m.d.comb += [row_fifo.w_data.eq(Cat(*(self.rd_row(r).data.as_value() for r in range(self.row_ports)))),
                     row_fifo.w_en.eq(d_inflight)]
        fft_in_valid = Signal()
        fft_in_payload = Signal.like(fft.i_stream.payload)
        for r in self.decode_rows:
            crt, scale = self.crts[r], self.scales[r]
            sel = nrows == r
            qb = crt.qbits
            for j in range(p):
                m.d.comb += crt.i_stream.payload[j].eq(Cat(*(
                    row_fifo.r_data[(i * p + j) * wb:(i * p + j) * wb + qb] for i in range(r))))
            m.d.comb += [crt.i_stream.valid.eq(row_fifo.r_rdy & run_dec & sel)]
            with m.If(sel):
                m.d.comb += row_fifo.r_en.eq(crt.i_stream.ready & run_dec)
            wiring.connect(m, crt.o_stream, scale.i_stream)
            m.d.comb += scale.o_stream.ready.eq(fft.i_stream.ready & sel & run_dec)
            with m.If(sel):
                m.d.comb += [fft_in_valid.eq(scale.o_stream.valid & run_dec), fft_in_payload.eq(scale.o_stream.payload)]
        # the FFT's input: encode's slot beats or decode's scaled coefficients
        m.d.comb += fft.i_stream.valid.eq(Mux(run_enc, fifo.r_rdy, fft_in_valid))
        for j in range(p):
            m.d.comb += fft.i_stream.payload[j].eq(Mux(run_enc, enc_payload[j], fft_in_payload[j]))

        # FFT beats -> a real row and an imaginary row of dst
        f_beat = Signal(range(half + 1))
        f_im = Signal()                                    # the real row of this beat is written
        m.d.comb += fo.ready.eq(Mux(run_enc, res.i_stream.ready, run_dec & f_im))
        writing_dec = run_dec & fo.valid
        with m.If(abort | start):
            m.d.sync += [f_beat.eq(0), f_im.eq(0)]
        with m.Elif(writing_dec):
            m.d.sync += f_im.eq(~f_im)
            with m.If(f_im):
                m.d.sync += f_beat.eq(f_beat + 1)
        with m.If(writing_dec & f_im & (f_beat == half - 1)):
            m.d.comb += done.eq(1)

        # the write port: encode's residue rows or decode's slot rows
        with m.If(writing_enc):
            m.d.comb += [self.wr.sel.eq(dst + first), self.wr.addr.eq(e_row),
                         self.wr.lanes.eq((1 << p) - 1)]
            for j in range(p):      # a signed integer sign-extended to word_bits, a residue as it is
                m.d.comb += self.wr.data[j].eq(Mux(signed_enc, out.payload[j].as_signed(), out.payload[j]))
        with m.Elif(writing_dec):
            m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(Mux(f_im, half + f_beat, f_beat)),
                         self.wr.lanes.eq((1 << p) - 1)]
            for j in range(p):
                part = Mux(f_im, fo.payload[j][w:2 * w], fo.payload[j][:w])
                m.d.comb += self.wr.data[j].eq(part.as_signed())      # sign-extended to word_bits
        return m

