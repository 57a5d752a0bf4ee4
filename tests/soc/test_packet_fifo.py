"""PacketFifo (the receive FIFO in front of the accelerator's i_udp) in Migen's simulator, with random
back-pressure and overflow: a packet leaves whole or not at all, in order, and is dropped only when
it did not fit; a flush (the abort) forgets everything held and the rest of the packet arriving."""

import random

import pytest

migen = pytest.importorskip("migen")

from migen import run_simulation  # noqa: E402
from liteeth.common import eth_udp_user_description  # noqa: E402

from hhe_gen.soc.packet_fifo import PacketFifo  # noqa: E402

PARAMS = ("ip_address", "src_port", "dst_port", "length")
FIELDS = ("data", "last", "last_be") + PARAMS


def _packets(rng, count, longest):
    out = []
    for _ in range(count):
        n = rng.choice([1, 2, longest, rng.randint(1, longest)])
        params = {"ip_address": rng.getrandbits(32), "src_port": rng.getrandbits(16),
                  "dst_port": rng.getrandbits(16), "length": 4 * n}
        out.append([dict(params, data=rng.getrandbits(32), last=int(i == n - 1),
                         last_be=rng.choice([1, 2, 4, 8]) if i == n - 1 else 0) for i in range(n)])
    return out


def _simulate(depth, packets, *, seed, gaps=0.2, stalls=0.5, flush_in=None, after=(), stall_until=0):
    """``packets`` into the FIFO (no back-pressure on its sink: LiteEth's port), the source read with
    random stalls.  ``flush_in = (k, i)``: flush with beat i of packet k (then ``after`` is sent).
    Returns the beats read, each packet's free room at its first beat, the packets dropped
    (``state`` also keeps the level once everything was sent)."""
    rng = random.Random(seed)
    dut = PacketFifo(eth_udp_user_description(32), depth)
    stream_out, room, done = [], [], [False]
    state = {}

    def producer():
        unseen = 0               # the beat set before the last clock edge is taken at the next one
        for k, packet in enumerate(list(packets) + list(after)):
            for i, beat in enumerate(packet):
                while rng.random() < gaps:
                    yield dut.sink.valid.eq(0)
                    yield
                    unseen = 0
                if i == 0:
                    room.append(depth - (yield dut.level) + (yield dut.source.valid) - unseen)   # the output beat takes no slot
                for name in FIELDS:
                    yield getattr(dut.sink, name).eq(beat[name])
                yield dut.sink.valid.eq(1)
                yield dut.flush.eq(flush_in == (k, i))
                yield
                unseen = 1
        yield dut.sink.valid.eq(0)
        yield dut.flush.eq(0)
        for _ in range(4):
            yield
        state["level"] = yield dut.level
        done[0] = True

    def consumer():
        cycle = 0
        while True:
            ready = cycle >= stall_until and rng.random() >= stalls
            yield dut.source.ready.eq(ready)
            yield
            cycle += 1
            if (yield dut.source.valid) and ready:
                beat = {}
                for name in FIELDS:
                    beat[name] = yield getattr(dut.source, name)
                stream_out.append(beat)
            elif done[0] and cycle > stall_until and not (yield dut.source.valid) and (yield dut.level) == 0:
                state["dropped"] = yield dut.dropped
                return

    run_simulation(dut, [producer(), consumer()])
    _simulate.level = state["level"]
    return stream_out, room, state["dropped"]


def _split(beats):
    out, current = [], []
    for b in beats:
        current.append(b)
        if b["last"]:
            out.append(current)
            current = []
    assert current == [], "the stream ends inside a packet"
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_packets_leave_whole_or_not_at_all_under_overflow(seed):
    depth = 32
    packets = _packets(random.Random(seed), 60, 40)        # some longer than the FIFO: never fit
    beats, room, dropped = _simulate(depth, packets, seed=seed, gaps=0.1, stalls=0.6)
    got = _split(beats)
    # in order, each one whole: a subsequence of what was sent
    it = iter(range(len(packets)))
    kept = []
    for packet in got:
        k = next((k for k in it if packets[k] == packet), None)
        assert k is not None, "a packet left cut, merged or out of order"
        kept.append(k)
    lost = sorted(set(range(len(packets))) - set(kept))
    assert lost and kept, "the test must overflow the FIFO and still deliver"
    assert dropped == len(lost)
    for k in lost:       # dropped only when it did not fit in the room there was at its first beat
        assert len(packets[k]) > room[k], (k, len(packets[k]), room[k])
    assert any(len(packets[k]) > depth for k in lost) and any(len(packets[k]) <= depth for k in lost)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_flush_forgets_what_is_held_and_the_packet_arriving(seed):
    rng = random.Random(seed)
    depth = 64
    before = _packets(rng, 8, 12)
    after = _packets(rng, 4, 12)
    k = rng.randrange(2, len(before))
    i = rng.randrange(1, len(before[k])) if len(before[k]) > 1 else 0
    later = before[k + 1:] + after                # what arrives after the flush
    # the reader stalled until after the flush: only the packets sent after it come out
    beats, _, _ = _simulate(depth, before, seed=seed, stalls=0.3, flush_in=(k, i), after=after, stall_until=400)
    assert _split(beats) == later
    assert _simulate.level == sum(len(p) for p in later)     # every beat held counts, the one at the output too
    # the reader busy while it flushes (maybe inside a packet: the engine's abort forgets that part):
    # what comes out is a prefix of the stream before, then the packets after, whole
    beats, _, _ = _simulate(depth, before, seed=seed, stalls=0.3, flush_in=(k, i), after=after)
    flat_later = [b for p in later for b in p]
    flat_before = [b for p in before[:k + 1] for b in p]
    assert beats[len(beats) - len(flat_later):] == flat_later
    head = beats[:len(beats) - len(flat_later)]
    assert head == flat_before[:len(head)] and len(head) < len(flat_before)   # packet k never leaves

def test_depth_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        PacketFifo(eth_udp_user_description(32), 48)
