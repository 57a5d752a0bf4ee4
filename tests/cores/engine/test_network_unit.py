"""The network unit in the engine: ``send`` puts buffers on o_udp as the packets of the ISA model
(hhe_gen.engine.model, whose packets are hhe_gen.models.wire's) byte for byte, with LiteEth's
stream rules (addressing and length held over the packet, no valid gap, last_be on the last beat),
under back-pressure; sequence numbers run on across sends and restart with cfg.net.message; the
send's cycles follow the documented formula; an abort mid-packet finishes the packet on the wire and
leaves the engine idle; a malformed send is refused and sends nothing."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import Engine
from hhe_gen.engine import asm
from hhe_gen.cores.unused import mark_unused
from hhe_gen.engine.model import EngineModel
from hhe_gen.models.wire import MAX_PAYLOAD, Kind, parse, polynomial_packets
from hhe_gen.params import preset
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel
from testsupport import mutate_payload

PARAMS = preset("toy")
N = PARAMS.n
BUFFERS = 6


def _engine(lanes=2, max_segment=16):
    return Engine.for_params(PARAMS, lanes=lanes, buffers=BUFFERS, codec=False, net=dict(max_segment=max_segment))


def _memory(seed):
    rng = random.Random(seed)
    words = {}
    for b in range(4):
        q = PARAMS.moduli[b % 2]
        row = [rng.randrange(q) for _ in range(N)]
        row[:3] = [0, q - 1, 1]                       # extremes of a residue
        words.update({0x100 * b + k: x for k, x in enumerate(row)})
    return words


LOADS = "".join(f"load b{b}, 0x{0x100 * b:x}\n" for b in range(4))


def _both(src, *, lanes=2, max_segment=16, seed=0, udp_ready=None, abort_after=None):
    engine = _engine(lanes, max_segment)
    words = asm.assemble(src, engine.shape)
    mem = _memory(seed)
    model = EngineModel(engine.shape, N, max_segment=max_segment)
    model.memory = dict(mem)
    model.run(words)
    run = run_engine(engine, words, MemoryModel(mem, latency=6), udp_ready=udp_ready, abort_after=abort_after)
    return model, run


def _check_stream_rules(packets):
    for p in packets:
        assert p.steady and p.gaps == 0
        assert p.length == len(p.payload) <= MAX_PAYLOAD


@pytest.mark.parametrize("lanes, max_segment, segment, stall", [(2, 16, 10, 0.0), (4, 16, 0, 0.3), (1, 180, 180, 0.5)])
def test_send_equals_the_model(lanes, max_segment, segment, stall):
    src = LOADS + f"""cfg.net.ip 10.0.0.2
cfg.net.ports 4000, 5000
cfg.net.segment {segment}
cfg.net.message 77
send b0, c0, rows=2, ntt
send b2, c1, rows=2, ntt
send b3, s1, c0, rows=1, of=2
cfg.net.message 0xffffffff
send b3, rubato, rows=1, words=37
send b1, slots, rows=1, words=1
"""
    rng = random.Random(lanes)
    ready = None if not stall else (lambda cycle: rng.random() >= stall)
    model, run = _both(src, lanes=lanes, max_segment=max_segment, udp_ready=ready)
    assert run.error_cause == 0
    per_row = -(-N // (segment or max_segment))
    assert len(model.packets) == 5 * per_row + -(-37 // (segment or max_segment)) + 1
    assert [p.payload for p in run.packets] == [p.payload for p in model.packets]
    assert {(p.ip_address, p.src_port, p.dst_port) for p in run.packets} == {(0x0A000002, 4000, 5000)}
    _check_stream_rules(run.packets)
    headers = [parse(p.payload)[0] for p in run.packets]
    assert [h.sequence for h in headers] == list(range(5 * per_row)) + list(range(len(headers) - 5 * per_row))
    assert [h.message for h in headers[-2:]] == [0xFFFFFFFF] * 2
    fifth = headers[4 * per_row:5 * per_row]                        # b3 sent alone as row 1 of a c0 of 2
    assert {(h.kind, h.row, h.rows, h.ntt) for h in fifth} == {(1, 1, 2, False)}


def _row_cycles(words, segment):
    """A row's cycles with the consumer always ready (network_unit's Latency): the first packet
    fills, then each packet of c coefficients is 7 + 2c words (6 header words, 2 per coefficient,
    the CRC-32 word) with two idle cycles between."""
    sizes = [min(segment, words - off) for off in range(0, words, segment)]
    return sizes[0] + 5 + sum(7 + 2 * c for c in sizes) + 2 * (len(sizes) - 1)


@pytest.mark.parametrize("lanes, words, segment, rows", [(2, 0, 10, 1), (2, 0, 10, 3), (2, 0, 16, 1), (2, 7, 16, 1),
                                                         (4, 0, 16, 2), (1, 33, 8, 1)])
def test_send_cycles(lanes, words, segment, rows):
    _, run = _both(f"cfg.net.segment {segment}\nsend b0, rubato, rows={rows}, words={words}\n", lanes=lanes)
    (task,) = [t for t in run.tasks if t.unit == isa.Unit.NETWORK]
    assert task.finished - task.dispatched == rows * _row_cycles(words or N, segment)


@pytest.mark.parametrize("where", ["first packet", "third packet", "while the first fills"])
def test_abort_mid_send_finishes_the_packet_on_the_wire(where):
    src = "cfg.net.segment 16\ncfg.net.message 5\nsend b0, c0, rows=2\n"
    model, whole = _both(src)
    p0, p2 = whole.packets[0], whole.packets[2]
    abort_after = {"first packet": (p0.first + p0.last) // 2, "third packet": (p2.first + p2.last) // 2,
                   "while the first fills": p0.first - 8}[where]
    _, run = _both(src, abort_after=abort_after)
    expect = {"first packet": 1, "third packet": 3, "while the first fills": 0}[where]
    assert [p.payload for p in run.packets] == [p.payload for p in model.packets[:expect]]
    _check_stream_rules(run.packets)


def test_malformed_send_is_refused_and_sends_nothing():
    engine = _engine()
    bad = isa.encode(isa.Instruction(isa.Opcode.SEND, a=0, imm=1 | 5 << 4))          # kind 5
    words = asm.assemble("cfg.net.message 1", engine.shape) + [bad] + asm.assemble("send b0, c0, rows=1", engine.shape)
    run = run_engine(engine, words, MemoryModel({}, latency=6))
    assert (run.error_cause, run.error_position) == (isa.ErrorCause.BAD_IMMEDIATE, 1)
    assert run.packets == []


def test_an_engine_without_the_network_unit_refuses_send():
    engine = mark_unused(Engine.for_params(PARAMS, lanes=2, buffers=BUFFERS, codec=False), deep=True)
    assert not hasattr(engine, "o_udp")
    word = isa.encode(isa.Instruction(isa.Opcode.SEND, a=0, imm=1 | 1 << 4))
    assert isa.check(isa.decode(word), engine.shape, frozenset()) == isa.ErrorCause.NOT_BUILT


# -- recv: the way back -----------------------------------------------------------------------------
def _ciphertext_rows(rng):
    return [[rng.randrange(q) for _ in range(N)] for q in PARAMS.moduli]


@pytest.mark.parametrize("lanes", [1, 2])
def test_recv_takes_whole_messages_and_drops_the_rest(lanes):
    """Two messages back to back, each packet preceded by a malformed or misplaced one (a copy with a
    flipped header bit, cut, grown or moved, or a packet of the other message but its first, which
    would start that message over): the buffers get
    exactly the two ciphertexts (the model's InOrderReceiver decides the same), the junk is counted."""
    rng = random.Random(lanes)
    cts = [(_ciphertext_rows(rng), _ciphertext_rows(rng)) for _ in range(2)]
    good = [polynomial_packets(Kind.CKKS_C0, 40 + k, c0, segment=10) +
            polynomial_packets(Kind.CKKS_C1, 40 + k, c1, segment=10, first_sequence=2 * -(-N // 10))
            for k, (c0, c1) in enumerate(cts)]
    incoming = []
    for k, packets in enumerate(good):
        for packet in packets:
            incoming += [mutate_payload(packet, rng, min_keep=24), rng.choice(good[1 - k][1:]), packet]
    src = "recv b0, rows=4\n" + "".join(f"store b{b}, {0x1000 + N * b:#x}\n" for b in range(4)) + \
          "recv b1, rows=4\n" + "".join(f"store b{b}, {0x2000 + N * b:#x}\n" for b in range(1, 5))
    engine = _engine(lanes)
    words = asm.assemble(src, engine.shape)
    model = EngineModel(engine.shape, N)
    model.incoming = list(incoming)
    model.run(words)
    run = run_engine(engine, words, MemoryModel({}, latency=6), udp_in=incoming)
    assert run.error_cause == 0 and model.error == isa.ErrorCause.NONE
    for base, first, (c0, c1) in ((0x1000, 0, cts[0]), (0x2000, 1, cts[1])):
        rows = c0 + c1
        for j in range(4):
            addr = base + N * (first + j)
            assert run.memory.dump(addr, N) == rows[j] == [model.memory.get(addr + i, 0) for i in range(N)]
    assert model.received_dropped >= 2 * len(good[0])


def test_recv_waits_for_its_message_and_abort_ends_the_wait():
    rng = random.Random(9)
    c0, c1 = _ciphertext_rows(rng), _ciphertext_rows(rng)
    packets = polynomial_packets(Kind.CKKS_C0, 1, c0) + polynomial_packets(Kind.CKKS_C1, 1, c1, first_sequence=2)
    engine = _engine()
    words = asm.assemble("recv b0, rows=4\nnotify 1", engine.shape)
    run = run_engine(engine, words, MemoryModel({}, latency=6), udp_in=packets[:-1], abort_after=3000)
    assert run.notifies == [] and run.cycles < 3100          # still waiting at 3000; idle after the abort
    bad = isa.encode(isa.Instruction(isa.Opcode.RECV, dst=0, imm=3))                  # odd rows
    assert isa.check(isa.decode(bad), engine.shape, frozenset()) == isa.ErrorCause.BAD_IMMEDIATE


@pytest.mark.parametrize("level", [0, 1])
def test_decrypt_from_the_network_equals_decrypt_from_memory(level):
    """decrypt(network=True): the ciphertext's packets (hhe_gen.models.wire.ciphertext_packets) taken by
    recv give the same slots as the decrypt program loading it from memory (ISA model), bit for bit."""
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory
    from hhe_gen.models import ckks
    from hhe_gen.models.wire import ciphertext_packets

    engine = Engine.for_params(PARAMS, lanes=2, buffers=6, net=dict())
    shape, layout = engine.shape, memory_map.MemoryMap.for_params(PARAMS)
    keys = ckks.keygen(PARAMS, seed=5)
    mem = client_memory(PARAMS, shape, keys, layout=layout)
    ct = ckks.encrypt_pk(PARAMS, keys, ckks.encode(PARAMS, [0.25, -0.5j, 0.75], level=level), seed=3, form="ntt")
    stored = dict(mem)
    memory_map.write_ciphertext(stored, layout, PARAMS, ct)
    model = EngineModel(shape, N)
    model.memory = stored
    model.run(programs.decrypt(PARAMS, shape, level=level, layout=layout).words)
    words = programs.decrypt(PARAMS, shape, level=level, layout=layout, network=True).words
    run = run_engine(engine, words, MemoryModel(mem, latency=6),
                     udp_in=ciphertext_packets(ct, 8, PARAMS.log_scale, segment=16))
    out = layout.address("slots_out")
    assert run.error_cause == 0 and run.memory.dump(out, N) == [model.memory.get(out + k, 0) for k in range(N)]
