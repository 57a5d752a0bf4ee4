"""Packetizer: the packets of every row equal the wire format's model
(hhe_gen.models.wire.polynomial_packets) byte for byte, rows numbered on across a polynomial, under
random input gaps and random output back-pressure; LiteEth's stream rules on every packet (the
UDP parameters and length held from the first beat, no gap in valid inside a packet, last and
last_be on the final word, at most 1472 bytes); the last word is the CRC-32 (zlib's) of the words
before it; abort mid-row leaves it idle and the next row right; exact cycles with no stalls; bad
parameters."""

import random
import zlib

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.net import Packetizer
from hhe_gen.models.wire import MAX_COUNT, MAX_PAYLOAD, Kind, parse, polynomial_packets
from hhe_gen.params import ParameterError

CFG = {"ip_address": 0xC0A80102, "src_port": 5000, "dst_port": 6000}


def _run(dut, rows, *, segment, kind=Kind.CKKS_C0, message=77, log_scale=20, ntt=True, seed=0, gaps=0.0,
         stall=0.0, abort_after=None):
    """Send every row of ``rows`` (one polynomial) through the packetizer; the packets (bytes), the
    per-packet beat records and the cycles from each command to its done."""
    rng = random.Random(seed)
    packets, beats, cycles = [], [], []

    async def bench(ctx):
        ctx.set(dut.cfg, CFG | {"segment": segment})
        if abort_after is not None:                  # a first attempt, aborted mid-row
            await send_rows(ctx, abort_after)
            packets.clear(), beats.clear(), cycles.clear()
            ctx.set(dut.abort, 1)
            ctx.set(dut.o_stream.ready, 1)
            ctx.set(dut.i_stream.valid, 0)
            await ctx.tick()
            ctx.set(dut.abort, 0)
            drained, inside = 0, bool(current_packet)
            while ctx.get(dut.busy):                 # a packet on the wire goes out whole
                *_, valid, beat = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
                assert valid or not inside, "valid dropped inside the packet being finished"
                if valid:
                    inside = not beat.last
                drained += 1
            assert not inside and drained <= 7 + 2 * 8 + 2 and ctx.get(dut.cmd.ready)
        await send_rows(ctx, None)

    current_packet = []

    async def send_rows(ctx, stop):
        sequence = 0
        for r, coefficients in enumerate(rows):
            ctx.set(dut.cmd.payload, {"kind": int(kind), "message": message, "row": r, "rows": len(rows),
                                      "log_scale": log_scale, "ntt": int(ntt), "sequence": sequence,
                                      "total": len(coefficients)})
            ctx.set(dut.cmd.valid, 1)
            await ctx.tick().until(dut.cmd.ready)
            ctx.set(dut.cmd.valid, 0)
            start = 0
            i, current, record, done = 0, [], [], False
            while not done:
                if start == stop:
                    return
                ctx.set(dut.i_stream.valid, 0)
                if i < len(coefficients) and rng.random() >= gaps:
                    ctx.set(dut.i_stream.valid, 1)
                    ctx.set(dut.i_stream.payload, coefficients[i])
                ready = rng.random() >= stall
                ctx.set(dut.o_stream.ready, ready)
                *_, took, valid, beat, d = await ctx.tick().sample(
                    dut.i_stream.ready, dut.o_stream.valid, dut.o_stream.payload, dut.done)
                start += 1
                if took and ctx.get(dut.i_stream.valid):
                    i += 1
                if valid or current:
                    record.append((valid, ready, beat.data, beat.last, beat.last_be, beat.ip_address,
                                   beat.src_port, beat.dst_port, beat.length))
                if valid and ready:
                    current.append(beat.data)
                    current_packet[:] = current
                    if beat.last:
                        current_packet.clear()
                        packets.append(b"".join(w.to_bytes(4, "little") for w in current))
                        beats.append(record)
                        current, record = [], []
                done = d
            cycles.append(start)
            sequence = ctx.get(dut.next_sequence)
        ctx.set(dut.o_stream.ready, 0)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return packets, beats, cycles


def _rows(rng, count, n):
    corner = [0, 1, (1 << 64) - 1, (1 << 54) - 33]
    return [[rng.choice(corner) if rng.random() < 0.2 else rng.randrange(1 << 64) for _ in range(n)]
            for _ in range(count)]


@pytest.mark.parametrize("max_segment,segment,n,rows,gaps,stall", [
    (4, 4, 13, 2, 0.0, 0.0), (4, 3, 12, 3, 0.3, 0.3), (8, 1, 5, 1, 0.5, 0.2), (MAX_COUNT, MAX_COUNT, 400, 2, 0.1, 0.1),
    (16, 0, 40, 1, 0.0, 0.5), (16, 99, 33, 1, 0.2, 0.0)])
def test_packets_equal_the_model(max_segment, segment, n, rows, gaps, stall):
    dut = Packetizer(max_segment)
    rng = random.Random(n * 7 + rows)
    data = _rows(rng, rows, n)
    packets, beats, _ = _run(dut, data, segment=segment, seed=n, gaps=gaps, stall=stall)
    effective = max_segment if segment == 0 or segment > max_segment else segment
    want = polynomial_packets(Kind.CKKS_C0, 77, data, segment=effective, log_scale=20, ntt=True)
    assert packets == want
    for payload, record in zip(packets, beats):
        parse(payload)
        assert len(payload) <= MAX_PAYLOAD
        assert int.from_bytes(payload[-4:], "little") == zlib.crc32(payload[:-4])   # the CRC, by zlib
        first = record[0]
        assert first[0] == 1                                             # a packet starts valid
        assert all(b[0] == 1 for b in record), "valid dropped inside a packet"
        assert {b[5:] for b in record} == {(CFG["ip_address"], CFG["src_port"], CFG["dst_port"], len(payload))}
        lasts = [(b[3], b[4]) for b in record if b[1]]                   # on accepted beats
        assert lasts[-1] == (1, 0b1000) and all(x == (0, 0) for x in lasts[:-1])   # one-hot: byte 3 last


def test_cycles_without_stalls():
    """Consumer always ready, coefficients every cycle: a row of n coefficients in packets of c takes
    the fill of its first packet (c cycles), then 2 + 7 + 2c per packet (its first word is valid two
    cycles after its buffer is full or the previous packet's last word; 6 header words, 2 per
    coefficient, the CRC word), the next packet filling meanwhile; done with the last word."""
    dut = Packetizer(8)
    data = [[k for k in range(32)]]
    _, _, cycles = _run(dut, data, segment=8)
    assert cycles == [8 + 4 * (2 + 7 + 2 * 8)]


@pytest.mark.parametrize("abort_after", [3, 11, 14])
def test_abort_mid_row_then_a_good_row(abort_after):
    """Abort while the first packet fills (3), while it is sent and the second fills (11, 14): a
    packet on the wire is finished whole (valid never drops inside it), then the packetizer is idle,
    and the same rows sent again come out right."""
    dut = Packetizer(8)
    rng = random.Random(3)
    data = _rows(rng, 2, 20)
    packets, _, _ = _run(dut, data, segment=8, abort_after=abort_after)
    assert packets == polynomial_packets(Kind.CKKS_C0, 77, data, segment=8, log_scale=20, ntt=True)


@pytest.mark.parametrize("value", [0, MAX_COUNT + 1])
def test_bad_parameters(value):
    with pytest.raises(ParameterError, match="'max_segment'"):
        Packetizer(value)
