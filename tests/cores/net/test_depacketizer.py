"""Depacketizer: the writes and counts of hhe_gen.models.wire_in_order.InOrderReceiver (its model) for
good ciphertext packets with input gaps and back-pressure, for packets out of order, duplicated,
of other rows or row lengths, and for a fuzz of malformed payloads between good ones (damaged, or
malformed with a CRC that checks): every coefficient of the good message is written once at its
place, nothing of a malformed packet is, and nothing hangs; a packet with any one bit flipped
(header, coefficients, CRC) is a checksum drop and writes nothing, and its genuine copy after it is
taken; bad parameters."""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.net import DROP_CODES, Depacketizer
from hhe_gen.models.wire_in_order import InOrderReceiver
from hhe_gen.models.wire import Kind, parse, polynomial_packets, seal, stream_beats
from hhe_gen.params import ParameterError
from testsupport import mutate_payload


def _beats(payload):
    """The payload as LiteEth's 32-bit beats (wire.stream_beats); an empty (malformed) payload as one
    zero beat marked at its first byte."""
    return stream_beats(payload) if payload else [(0, 1)]


def _run(dut, payloads, *, rows, total, seed=0, gaps=0.0, stall=0.0, last_drop=None):
    rng = random.Random(seed)
    writes = []
    state = {}
    drops = []

    async def bench(ctx):
        ctx.set(dut.cfg, {"rows": rows, "total": total})
        stream = [(w, i == len(bs) - 1, be) for p in payloads for bs in [_beats(p)] for i, (w, be) in enumerate(bs)]
        k = 0
        idle = 0
        while k < len(stream) or idle < 400:
            offer = k < len(stream) and rng.random() >= gaps
            ctx.set(dut.i_stream.valid, offer)
            if offer:
                ctx.set(dut.i_stream.payload, {"data": stream[k][0], "last": stream[k][1], "last_be": stream[k][2]})
            ready = rng.random() >= stall
            ctx.set(dut.o_write.ready, ready)
            *_, took, valid, wr = await ctx.tick().sample(dut.i_stream.ready, dut.o_write.valid, dut.o_write.payload)
            if offer and took:
                k += 1
            if valid and ready:
                writes.append((wr.kind, wr.row, wr.index, wr.data))
                idle = 0
            elif k >= len(stream):
                idle += 1
        state.update(accepted=ctx.get(dut.accepted), dropped=ctx.get(dut.dropped), messages=ctx.get(dut.messages))
        drops.append(ctx.get(dut.last_drop))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    if last_drop is not None:
        last_drop.extend(drops)
    return writes, state


def _model(payloads, rows, total):
    rx = InOrderReceiver(rows, total)
    writes = [w for p in payloads for w in rx.feed(p)]
    return writes, {"accepted": rx.accepted, "dropped": sum(rx.dropped.values()), "messages": rx.messages}


def _message(rng, rows, total, segment, message=5):
    c0 = [[rng.randrange(1 << 64) for _ in range(total)] for _ in range(rows)]
    c1 = [[rng.randrange(1 << 64) for _ in range(total)] for _ in range(rows)]
    p0 = polynomial_packets(Kind.CKKS_C0, message, c0, segment=segment)
    return p0 + polynomial_packets(Kind.CKKS_C1, message, c1, segment=segment, first_sequence=len(p0)), c0, c1


@pytest.mark.parametrize("rows,total,segment,max_count,gaps,stall", [
    (1, 8, 4, 4, 0.0, 0.0), (2, 10, 3, 4, 0.3, 0.3), (3, 5, 5, 8, 0.1, 0.5)])
def test_good_messages_equal_the_model(rows, total, segment, max_count, gaps, stall):
    rng = random.Random(rows * total)
    payloads, c0, c1 = _message(rng, rows, total, segment)
    dut = Depacketizer(max_count)
    writes, state = _run(dut, payloads, rows=rows, total=total, seed=segment, gaps=gaps, stall=stall)
    want, counts = _model(payloads, rows, total)
    assert writes == want and state == counts and counts["messages"] == 1
    got = {(k, r, i): v for k, r, i, v in writes}
    assert all(got[(0, r, i)] == c0[r][i] and got[(1, r, i)] == c1[r][i] for r in range(rows) for i in range(total))


def test_order_duplicates_and_mismatches_are_dropped():
    rng = random.Random(2)
    payloads, _, _ = _message(rng, 1, 8, 4)
    other, _, _ = _message(rng, 2, 8, 4, message=6)            # another row count
    stream = [payloads[1], payloads[0], payloads[0], other[0], payloads[1], payloads[3], payloads[2],
              payloads[3]]
    dut = Depacketizer(4)
    writes, state = _run(dut, stream, rows=1, total=8)
    want, counts = _model(stream, 1, 8)
    assert writes == want and state == counts
    # p1 early: order; p0: a start; p0 again: a start again (the message restarts); other rows:
    # mismatch; p1; p3 early: order; p2; p3: complete
    assert counts == {"accepted": 5, "dropped": 3, "messages": 1}


def test_fuzz_malformed_between_good_packets():
    """1500 malformed payloads (mutations the wire parser refuses: half of them with their CRC
    recomputed, so that the field checks behind the CRC see them) and replays of good packets
    already taken (not the message's first: that one restarts a message) between the packets of a
    good message: the message arrives whole, the writes and counts equal the model's."""
    rng = random.Random(9)
    payloads, c0, c1 = _message(rng, 2, 8, 4)
    stream = []
    for k, p in enumerate(payloads):
        for _ in range(1500 // len(payloads)):
            if k > 1 and rng.random() < 0.2:
                stream.append(payloads[rng.randrange(1, k)])          # a replay: out of order
                continue
            while True:
                bad = mutate_payload(rng.choice(payloads), rng, grow=40, min_keep=1, reseal=rng.random() < 0.5)
                try:
                    parse(bad)
                except ValueError:
                    break
            stream.append(bad)
        stream.append(p)
    dut = Depacketizer(4)
    writes, state = _run(dut, stream, rows=2, total=8, seed=1, gaps=0.1, stall=0.1)
    want, counts = _model(stream, 2, 8)
    assert writes == want and state == counts and counts["messages"] == 1
    assert counts["accepted"] == len(payloads) and counts["dropped"] == len(stream) - len(payloads)
    final = {}
    for k, r, i, v in writes:
        final[(k, r, i)] = v
    assert all(final[(0, r, i)] == c0[r][i] and final[(1, r, i)] == c1[r][i] for r in range(2) for i in range(8))


def test_a_damaged_copy_first_then_the_genuine_packet():
    """Every packet of a message arrives first with one bit flipped (in the header, a coefficient or
    the CRC, in turn), then genuine: each damaged copy is a checksum drop that writes nothing, each
    genuine one is taken, the message is written whole and right (the scenario of issue 36)."""
    rng = random.Random(36)
    payloads, c0, c1 = _message(rng, 2, 8, 4)
    stream = []
    for k, p in enumerate(payloads):
        where = [rng.randrange(24), 24 + rng.randrange(len(p) - 28), len(p) - 4 + rng.randrange(4)][k % 3]
        bad = bytearray(p)
        bad[where] ^= 1 << rng.randrange(8)
        stream += [bytes(bad), p]
    dut = Depacketizer(4)
    drops = []
    writes, state = _run(dut, stream, rows=2, total=8, seed=3, gaps=0.2, stall=0.2, last_drop=drops)
    rx = InOrderReceiver(2, 8)
    want = [w for p in stream for w in rx.feed(p)]
    assert rx.dropped["checksum"] == len(payloads) and sum(rx.dropped.values()) == len(payloads)
    assert writes == want and state == {"accepted": len(payloads), "dropped": len(payloads), "messages": 1}
    assert len(writes) == 2 * 2 * 8                              # nothing of a damaged copy
    got = {(k, r, i): v for k, r, i, v in writes}
    assert all(got[(0, r, i)] == c0[r][i] and got[(1, r, i)] == c1[r][i] for r in range(2) for i in range(8))
    assert drops == [DROP_CODES["checksum"]]


def test_a_damaged_packet_alone_writes_nothing():
    """A message's first packet with a coefficient bit flipped: dropped as checksum, nothing
    written; resealed (the CRC recomputed over the damaged bytes) the same packet is taken."""
    rng = random.Random(4)
    payloads, _, _ = _message(rng, 1, 8, 4)
    bad = bytearray(payloads[0])
    bad[30] ^= 0x10
    dut = Depacketizer(4)
    drops = []
    writes, state = _run(dut, [bytes(bad)], rows=1, total=8, last_drop=drops)
    assert writes == [] and state == {"accepted": 0, "dropped": 1, "messages": 0}
    assert drops == [DROP_CODES["checksum"]]
    resealed = seal(bytes(bad[:-4]))
    writes, state = _run(Depacketizer(4), [resealed], rows=1, total=8)
    assert len(writes) == 4 and state["accepted"] == 1


@pytest.mark.parametrize("kw,name", [({"max_count": 0}, "max_count"), ({"kinds": (1, 1)}, "kinds"),
                                     ({"kinds": (5,)}, "kinds")])
def test_bad_parameters(kw, name):
    with pytest.raises(ParameterError, match=f"'{name}'"):
        Depacketizer(**kw)
