"""The engine's codec unit: ``encode`` (slots -> residue rows) and ``decode`` (residue rows -> slots)
through the CKKS encoder and the decoder's CRT, scaling and special FFT (:mod:`hhe_gen.cores.ckks`).

Slots sit in a buffer as the ISA says: Re z_k at word k, Im z_k at word N/2 + k, two's complement;
``encode`` reads the low W bits of each (W = the fixed-point format's width), ``decode`` writes
them sign-extended to ``word_bits``.

encode dst, a, slot, rows=R
    Buffer ``a``'s slots go into the encoder (a beat of P slots takes two buffer reads: the real
    and the imaginary row), which gives the residue rows of every built-in prime, prime by prime.
    Prime p's row is written to buffer ``dst + r`` for every r < R with slot ``slot + r`` bound to
    p (a row no slot wants is dropped; a prime bound to two slots is written twice, one cycle per
    copy); so any binding of the slots to the built-in primes encodes as the ISA model does.
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
fmt : FixedPointFormat      the slots' format (the encoder's and the FFT's)
log_scale : int             Delta = 2^log_scale
decode_rows : tuple         the R a ``decode`` may have (default: 1 and all the primes)
target : str                DSP tile size of the FFT butterflies

Members
-------
port : In(UnitPort(tag_width))
rd : Out(read port)                        the slots (encode)
rd_rows : list of Out(read port)           decode's rows, max(decode_rows) of them
wr : Out(write port)
slot_prime : In(ArrayLayout(5, S))
encoder, fft, crts {R: CrtCentre}, scales {R: ScaleDownStage} : the cores

Latency
-------
encode: N/P cycles to read the slots (two reads per beat) overlapping the encoder's IFFT input,
then the encoder's L*N/P output beats (one per cycle, more for a prime bound to several slots).
decode: N/P input beats at one per cycle, the FFT, then two cycles per output beat (N/(2P) beats).
Nothing depends on the data.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.ckks import Encoder
from hhe_gen.cores.ckks.crt import CrtCentre
from hhe_gen.cores.ckks.decoder import ScaleDownStage
from hhe_gen.cores.fft import SpecialFft
from hhe_gen.cores.unused import mark_unused, quiet_on_error
from hhe_gen.models import ckks_fixed
from hhe_gen.params.errors import ParameterError

from . import isa
from .buffers import read_port_signature, write_port_signature
from .units import UnitPort, check_unit_sizes

__all__ = ["CodecUnit"]


class CodecUnit(wiring.Component):
    """encode / decode between buffers (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, fmt, log_scale: int, decode_rows=None, target: str = "ecp5"):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, n_low=16, lanes_high=n // 8)
        self.fmt, self.log_scale = fmt, log_scale
        if fmt.width > word_bits:
            raise ParameterError("word_bits", word_bits, f">= {fmt.width} (the slot format's width)")
        self.decode_rows = tuple(sorted(set(decode_rows or {1, min(len(self.primes), slots)})))
        for r in self.decode_rows:
            if not 1 <= r <= min(len(self.primes), slots, ckks_fixed.MAX_DECODER_PRIMES):
                raise ParameterError("decode_rows", decode_rows, f"row counts 1 .. "
                                     f"{min(len(self.primes), slots, ckks_fixed.MAX_DECODER_PRIMES)}")
        self.encoder = Encoder(n, lanes, fmt, log_scale, list(self.primes), target=target)
        self.fft = SpecialFft(n // 2, lanes, fmt, split_load=True, target=target)
        self.crts = {r: CrtCentre(self.primes[:r], lanes) for r in self.decode_rows}
        for r in self.decode_rows:
            ckks_fixed.check_decoder_params(n, fmt, log_scale, self.primes[:r])
        self.scales = {r: ScaleDownStage(lanes, fmt, log_scale, c.cbits) for r, c in self.crts.items()}
        mark_unused(self.encoder, self.fft, *self.crts.values(), *self.scales.values())
        rd = read_port_signature(buffers, self.rows, lanes, word_bits)
        self.row_ports = max(self.decode_rows)
        members = {"port": In(UnitPort(tag_width)), "rd": Out(rd),
                   "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
                   "slot_prime": In(data.ArrayLayout(5, slots))}
        members.update({f"rd_row{r}": Out(rd) for r in range(self.row_ports)})
        super().__init__(members)

    def rd_row(self, r):
        return getattr(self, f"rd_row{r}")

    def elaborate(self, platform):
        m = Module()
        p, wb, rows, fmt = self.lanes, self.word_bits, self.rows, self.fmt
        w = fmt.width
        half = rows // 2                     # buffer rows per half (real / imaginary parts)
        task, abort = self.port.task, self.port.abort
        enc = ResetInserter(abort)(self.encoder)
        fft = ResetInserter(abort)(self.fft)
        m.submodules.encoder, m.submodules.fft = enc, fft
        enc, fft = self.encoder, self.fft
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
            m.d.sync += [busy.eq(1), dst.eq(pl.dst), src.eq(pl.a), base.eq(pl.slot), nrows.eq(r_count),
                         decoding.eq(pl.opcode == isa.Opcode.DECODE)]
            for pid in range(n_primes):
                bits = []
                for r in range(isa.MAX_SLOTS):
                    s = pl.slot + r
                    bits.append((r < r_count) & (s < self.slots) & (prime_of[s[:isa.SLOT_BITS]] == pid))
                m.d.sync += wants[pid].eq(Cat(*bits))
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
        with m.If(busy & refuse):
            m.d.comb += [done.eq(1), err.eq(1)]

        # -- encode: slots -> encoder ---------------------------------------------------------------
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
        for j in range(p):
            m.d.comb += enc.i_stream.payload[j].eq(fifo.r_data[j * 2 * w:(j + 1) * 2 * w])
        m.d.comb += [enc.i_stream.valid.eq(fifo.r_rdy & run_enc), fifo.r_en.eq(enc.i_stream.ready & run_enc)]

        # encoder rows -> every buffer that wants them
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
        out = enc.o_stream
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
        m.d.comb += [fft.i_stream.valid.eq(fft_in_valid), fft.i_stream.payload.eq(fft_in_payload)]

        # FFT beats -> a real row and an imaginary row of dst
        f_beat = Signal(range(half + 1))
        f_im = Signal()                                    # the real row of this beat is written
        fo = fft.o_stream
        m.d.comb += fo.ready.eq(run_dec & f_im)
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
            for j in range(p):
                m.d.comb += self.wr.data[j].eq(out.payload[j])
        with m.Elif(writing_dec):
            m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(Mux(f_im, half + f_beat, f_beat)),
                         self.wr.lanes.eq((1 << p) - 1)]
            for j in range(p):
                part = Mux(f_im, fo.payload[j][w:2 * w], fo.payload[j][:w])
                m.d.comb += self.wr.data[j].eq(part.as_signed())      # sign-extended to word_bits
        return m

