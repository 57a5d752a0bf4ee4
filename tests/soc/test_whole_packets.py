"""WholePackets (the store-and-forward FIFO before LiteEth's UDP port) in Migen's simulator: every
packet leaves whole, in order, with its first beat's parameters and its last beat's ``last_be``,
not before its last beat came in, and without a gap once it started."""

import random

import pytest

migen = pytest.importorskip("migen")

from migen import run_simulation  # noqa: E402
from liteeth.common import eth_udp_user_description  # noqa: E402

from hhe_gen.soc.clock_crossing import WholePackets  # noqa: E402

PARAMS = ("ip_address", "src_port", "dst_port", "length")


def _packets(rng, count, longest):
    out = []
    for _ in range(count):
        beats = rng.choice([1, 2, longest, rng.randint(1, longest)])
        params = {"ip_address": rng.getrandbits(32), "src_port": rng.getrandbits(16),
                  "dst_port": rng.getrandbits(16), "length": 4 * beats}
        data = [rng.choice([0, 0xFFFF_FFFF, rng.getrandbits(32)]) for _ in range(beats)]
        out.append((params, data, rng.choice([0b0001, 0b0010, 0b0100, 0b1000])))
    return out


def _run(packets, depth, *, seed, sink_gaps=0.3, source_stalls=0.3, packets_held=4):
    rng = random.Random(seed)
    dut = WholePackets(eth_udp_user_description(32), depth, packets_held)
    entered_last = []            # cycle each packet's last beat entered
    received, started, gaps = [], [], []

    def producer():
        cycle = 0
        for params, data, last_be in packets:
            for i, word in enumerate(data):
                while rng.random() < sink_gaps:
                    yield dut.sink.valid.eq(0)
                    yield
                    cycle += 1
                last = i == len(data) - 1
                for name in PARAMS:
                    # parameters are the first beat's: later beats carry other values
                    yield getattr(dut.sink, name).eq(params[name] if i == 0 else rng.getrandbits(16))
                yield dut.sink.data.eq(word)
                yield dut.sink.last.eq(last)
                yield dut.sink.last_be.eq(last_be if last else 0b1111)
                yield dut.sink.valid.eq(1)
                yield
                cycle += 1
                while not (yield dut.sink.ready):
                    yield
                    cycle += 1
                if last:
                    entered_last.append(cycle)
        yield dut.sink.valid.eq(0)

    def consumer():
        cycle, current, in_packet = 0, None, False
        while len(received) < len(packets):
            ready = rng.random() >= source_stalls
            yield dut.source.ready.eq(ready)
            yield
            cycle += 1
            valid = yield dut.source.valid
            if in_packet and ready and not valid:
                gaps.append(cycle)
            if valid and ready:
                if current is None:
                    started.append(cycle)
                    params = {}
                    for name in PARAMS:
                        params[name] = yield getattr(dut.source, name)
                    current = (params, [], None)
                    in_packet = True
                current[1].append((yield dut.source.data))
                last_be = yield dut.source.last_be
                if (yield dut.source.last):
                    received.append((current[0], current[1], last_be))
                    current, in_packet = None, False
                else:
                    assert last_be == 0

    run_simulation(dut, [producer(), consumer()])
    return received, entered_last, started, gaps


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_packets_leave_whole_in_order_without_gaps(seed):
    packets = _packets(random.Random(seed), 12, 20)
    received, entered_last, started, gaps = _run(packets, 32, seed=seed, source_stalls=0.0)
    assert received == packets
    assert gaps == []
    # no packet starts leaving before its last beat is in
    assert all(s > e for s, e in zip(started, entered_last))


def test_a_stalling_consumer_and_a_full_fifo_lose_nothing():
    packets = _packets(random.Random(7), 20, 30)
    received, *_ = _run(packets, 32, seed=7, sink_gaps=0.0, source_stalls=0.6, packets_held=2)
    assert received == packets


def test_bad_packet_count_is_refused():
    with pytest.raises(Exception, match="packets"):
        WholePackets(eth_udp_user_description(32), 32, 1)
