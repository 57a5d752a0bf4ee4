"""The ISA-level model (hhe_gen.engine.model): each opcode against a direct computation with
hhe_gen.models, and the error rules (first error kept, later instructions dropped, soft reset)."""

import dataclasses
import random
import struct

import pytest

from hhe_gen.cores.engine.isa import CKKS_UNITS, EngineShape, ErrorCause, Unit
from hhe_gen.engine import asm
from hhe_gen.engine.model import DEFAULT_FORMAT, EngineModel
from hhe_gen.models import ckks_fixed, fft, sampler
from hhe_gen.models import rubato as rubato_model
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params import ParameterError, preset

TOY = preset("toy")                        # N = 64, 2 x 30-bit primes, Delta = 2^20
N = TOY.n
Q0, Q1 = TOY.moduli
WB = 30                                    # the widest prime has 30 bits, the slot format 29


def model(**kw):
    m = EngineModel.for_params(TOY, buffers=kw.pop("buffers", 8), **kw)
    return m


def run(m, text):
    m.run(asm.assemble(text, m.shape))
    return m


def signed(x):
    return x - (1 << WB) if x >= 1 << (WB - 1) else x


def rand_words(rng, small=False):
    """Buffer contents: residues below both primes, or small signed values in 30-bit two's complement."""
    if small:
        return [rng.randint(-20, 20) % (1 << WB) for _ in range(N)]
    return [rng.randrange(min(Q0, Q1)) for _ in range(N)]


def test_construction_from_params():
    m = model()
    assert m.word_bits == WB and m.n == N and m.fmt == DEFAULT_FORMAT == fft.FixedPointFormat(29, 26)
    assert m.shape.primes == (Q0, Q1) and m.shape.log_scale == 20 and m.shape.slots == 2
    assert len(m.buffers) == 8 and all(b == [0] * N for b in m.buffers)
    assert m.error == ErrorCause.NONE and m.error_position is None


def test_load_store_and_missing_memory():
    m = model()
    words = [(1 << 64) - 1 - k for k in range(N // 2)]           # wider than word_bits
    for k, w in enumerate(words):
        m.memory[0x100 + k] = w
    run(m, "load b1, 0x100\nstore b1, 0x400")
    assert m.buffers[1] == [w % (1 << WB) for w in words] + [0] * (N // 2)
    assert [m.memory[0x400 + k] for k in range(N)] == m.buffers[1]
    assert m.error == ErrorCause.NONE


def test_addresses_wrap_at_2_to_the_32():
    m = model()
    m.memory[0xFFFFFFFF] = 7
    m.memory[0] = 9
    run(m, "load b0, 0xffffffff")
    assert m.buffers[0][:2] == [7, 9]


def test_checked_load_out_of_range_completes_and_stops_the_program():
    m = model()
    for k in range(N):
        m.memory[0x200 + k] = k
    m.memory[0x200 + 5] = Q0                                      # one word >= q_0
    run(m, "cfg.prime s0, p0\nnop\nload b2, s0, 0x200, check\nstore b2, 0x800\nnotify 3")
    assert m.error == ErrorCause.DATA_RANGE and m.error_position == 2
    assert m.buffers[2][5] == Q0 and m.buffers[2][6] == 6        # the load completed
    assert 0x800 not in m.memory and m.events == []              # later instructions dropped
    assert [s.cause for s in m.trace] == [ErrorCause.NONE] * 2 + [ErrorCause.DATA_RANGE] + [ErrorCause.AFTER_ERROR] * 2


def test_checked_load_in_range_passes():
    m = model()
    for k in range(N):
        m.memory[0x200 + k] = Q1 - 1
    run(m, "cfg.prime s1, p1\nload b2, s1, 0x200, check")
    assert m.error == ErrorCause.NONE


def _seed_model(seed_bytes):
    m = model()
    for j in range(4):
        m.memory[0x40 + j] = int.from_bytes(seed_bytes[8 * j:8 * j + 8], "little")
    return run(m, "ldseed 0x40\ncfg.prime s0, p0\ncfg.prime s1, p1")


def test_ldseed_and_every_sample_kind():
    seed = bytes(range(100, 132))
    m = _seed_model(seed)
    assert m.seed == seed
    run(m, "sample b0, s1, uniform, domain=5, nonce=3\n"
           "sample b1, ternary, domain=2, nonce=0\n"
           "sample b2, hamming, domain=1, nonce=7\n"
           "sample b3, gaussian, domain=4, nonce=0x10000")
    two = 1 << WB
    assert m.buffers[0] == sampler.uniform_mod_q(sampler.seeded_xof(seed, 5, 3), Q1, N)
    assert m.buffers[1] == [v % two for v in sampler.ternary_uniform(sampler.seeded_xof(seed, 2, 0), N)]
    assert m.buffers[2] == [v % two for v in sampler.ternary_hamming(sampler.seeded_xof(seed, 1, 7), N, N // 2)]
    assert m.buffers[3] == [v % two for v in sampler.gaussian_cdt(sampler.seeded_xof(seed, 4, 0x10000), N, 3.2, 6)]
    assert m.error == ErrorCause.NONE


def test_hamming_weight_is_a_parameter():
    m = model(hamming_weight=5)
    run(m, "sample b0, hamming, domain=1, nonce=0")
    assert sum(x != 0 for x in m.buffers[0]) == 5


@pytest.mark.parametrize("lift", [False, True])
def test_ntt_and_intt(lift):
    rng = random.Random(2)
    m = model()
    src = rand_words(rng, small=lift)
    m.buffers[0] = list(src)
    run(m, f"cfg.prime s1, p1\nntt b1, b0, s1{', lift=a' if lift else ''}\nintt b2, b1, s1")
    plain = [signed(x) % Q1 for x in src] if lift else src
    assert m.buffers[1] == ntt(plain, Q1)
    assert m.buffers[2] == intt(ntt(plain, Q1), Q1) == plain


POINTWISE = {
    "add": lambda a, b, c: a + b,
    "sub": lambda a, b, c: a - b,
    "mul": lambda a, b, c: a * b,
    "mac": lambda a, b, c: a * b + c,
    "msub": lambda a, b, c: c - a * b,
}


@pytest.mark.parametrize("op,flags", [(op, flags) for op in sorted(POINTWISE)
                                      for flags in range(8 if op in ("mac", "msub") else 4)])
def test_pointwise_with_every_lift_combination(op, flags):
    three = op in ("mac", "msub")
    rng = random.Random(flags * 7 + len(op))
    m = model()
    srcs = [rand_words(rng, small=bool(flags >> k & 1)) for k in range(3)]
    for k in range(3):
        m.buffers[k + 1] = list(srcs[k])
    lift = "".join("abc"[k] for k in range(3) if flags >> k & 1)
    operands = "b1, b2, b3" if three else "b1, b2"
    run(m, f"cfg.prime s0, p0\n{op} b5, {operands}, s0{', lift=' + lift if lift else ''}")
    assert m.error == ErrorCause.NONE
    vals = [[signed(x) % Q0 if flags >> k & 1 else x for x in srcs[k]] for k in range(3)]
    assert m.buffers[5] == [POINTWISE[op](a, b, c) % Q0 for a, b, c in zip(*vals)]


def test_move_copies_or_lifts():
    m = model()
    m.buffers[0] = [(-3) % (1 << WB), 5] + [0] * (N - 2)
    run(m, "cfg.prime s1, p1\nmove b1, b0\nmove b2, b0, s1, lift=a")
    assert m.buffers[1] == m.buffers[0]
    assert m.buffers[2][:2] == [Q1 - 3, 5]


def _fixed_slots(rng, fmt=DEFAULT_FORMAT):
    return [(fft.quantize(rng.uniform(-0.7, 0.7), fmt), fft.quantize(rng.uniform(-0.7, 0.7), fmt))
            for _ in range(N // 2)]


@pytest.mark.parametrize("rows,slot", [(1, 0), (1, 1), (2, 0)])
def test_encode_and_decode(rows, slot):
    rng = random.Random(rows + 10 * slot)
    pairs = _fixed_slots(rng)
    m = model()
    # input words sign-extended to 64 bits: only the low 29 bits must be read
    m.buffers[0] = [p[0] % (1 << WB) for p in pairs] + [p[1] % (1 << WB) for p in pairs]
    moduli = [Q0, Q1][slot:slot + rows]
    run(m, f"cfg.prime s0, p0\ncfg.prime s1, p1\ncfg.scale 20\nencode b2, b0, s{slot}, rows={rows}\n"
           f"decode b6, b2, s{slot}, rows={rows}")
    assert m.error == ErrorCause.NONE
    expected = ckks_fixed.encode_fixed(pairs, DEFAULT_FORMAT, 20, moduli)
    assert m.buffers[2:2 + rows] == expected
    back = ckks_fixed.decode_fixed(expected, moduli, DEFAULT_FORMAT, 20)
    assert [(signed(m.buffers[6][k]), signed(m.buffers[6][k + N // 2])) for k in range(N // 2)] == back


def test_encode_reads_only_the_format_width():
    rng = random.Random(4)
    pairs = _fixed_slots(rng)
    m = model()
    junk = 1 << 29                              # bit 29 is above the 29-bit format
    m.buffers[0] = [(p[0] % (1 << 29)) | junk for p in pairs] + [p[1] % (1 << 29) for p in pairs]
    run(m, "cfg.prime s0, p0\nencode b2, b0, s0, rows=1")
    assert m.buffers[2] == ckks_fixed.encode_fixed(pairs, DEFAULT_FORMAT, 20, [Q0])[0]


def test_configuration_and_notify():
    shape = EngineShape(4, 2, (Q0, Q1), 20, CKKS_UNITS | {Unit.NETWORK, Unit.RUBATO})
    m = EngineModel(shape, N)
    run(m, "cfg.scale 20\ncfg.rubato 3\ncfg.net.ip 192.168.0.9\ncfg.net.ports 1, 2\ncfg.net.segment 64\n"
           "notify 5\nfence\nnop\nnotify 65535")
    assert m.config == {"scale": 20, "rubato": 3, "net.ip": 0xC0A80009, "net.ports": 1 << 16 | 2,
                        "net.segment": 64}
    assert m.events == [5, 65535] and m.error == ErrorCause.NONE


def test_send_packets_rows_of_buffers_numbered_across_sends():
    shape = EngineShape(6, 2, (Q0, Q1), 20, CKKS_UNITS | {Unit.NETWORK})
    m = EngineModel(shape, N)
    rng = random.Random(3)
    for b in range(6):
        m.buffers[b] = [rng.randrange(Q0) for _ in range(N)]
    run(m, "cfg.net.ip 10.0.0.7\ncfg.net.ports 4000, 5000\ncfg.net.segment 5\ncfg.net.message 9\n"
           "send b1, c0, rows=2, ntt\nsend b3, c1, rows=2, ntt\ncfg.net.message 10\nsend b5, rubato, rows=1, words=7")
    assert m.error == ErrorCause.NONE
    # wire.polynomial_packets, written out here from docs/wire.md's layout: header fields, words and
    # the CRC-32 (zlib's) of both
    import zlib

    def sealed(body):
        return body + struct.pack("<I", zlib.crc32(body))
    want = []
    for kind, base, first in ((1, 1, 0), (2, 3, 2 * ((N + 4) // 5))):
        seq = first
        for row in range(2):
            for off in range(0, N, 5):
                part = m.buffers[base + row][off:off + 5]
                head = struct.pack("<HBBIBBBBHHII", 0x4848, 2, kind, 9, row, 2, 20, 1, seq, len(part), off, N)
                want.append(sealed(head + struct.pack(f"<{len(part)}Q", *part)))
                seq += 1
    for seq, off in enumerate((0, 5)):
        part = m.buffers[5][off:min(off + 5, 7)]
        want.append(sealed(struct.pack("<HBBIBBBBHHII", 0x4848, 2, 3, 10, 0, 1, 0, 0, seq, len(part), off, 7)
                           + struct.pack(f"<{len(part)}Q", *part)))
    assert [p.payload for p in m.packets] == want
    assert {(p.ip_address, p.src_port, p.dst_port) for p in m.packets} == {(0x0A000007, 4000, 5000)}
    with pytest.raises(ParameterError, match="n"):
        EngineModel(dataclasses.replace(shape, n=2 * N), N)


def _rubato_key_block(p, key, nonce, seed, counter):
    return key + [v >> s & 0xFFFFFFFF for v in (nonce, seed, counter) for s in (0, 32)]


def test_rubato_key_stream_and_encryption():
    p = rubato_model.rubato_params("Par-128S")               # n = 16, l = 12
    shape = EngineShape(4, 2, (Q0, Q1), 20, CKKS_UNITS | {Unit.RUBATO}, n=N, rubato_set=3)
    m = EngineModel(shape, N)
    rng = random.Random(8)
    key = [rng.randrange(p.q) for _ in range(p.n)]
    nonce, seed, counter = rng.getrandbits(64), rng.getrandbits(64), (1 << 64) - 2       # the counter wraps
    m.buffers[0] = _rubato_key_block(p, key, nonce, seed, counter) + [0] * (N - p.n - 6)
    scaled = [rng.randrange(-p.q + 1, p.q) for _ in range(3 * p.l)]
    m.buffers[1] = [x % (1 << m.word_bits) for x in scaled] + [7] * (N - 3 * p.l)
    m.buffers[2] = [5] * N
    run(m, "cfg.rubato 3\nrubato.key b0\nrubato.stream b2, blocks=2, counter=1\nrubato.enc b3, b1, blocks=3, noise")
    assert m.error == ErrorCause.NONE
    want = [rubato_model.keystream(p, key, nonce, (counter + 1 + k) % (1 << 64)) for k in range(2)]
    assert m.buffers[2] == want[0] + want[1] + [5] * (N - 2 * p.l)           # words past the blocks kept
    noisy = [rubato_model.keystream(p, key, nonce, (counter + k) % (1 << 64), noise_seed=seed) for k in range(3)]
    assert m.buffers[3][:3 * p.l] == [(z + x) % p.q for z, x in zip(sum(noisy, []), scaled)]
    # the model's decryption gets the message back from the ciphertext words
    block0 = m.buffers[3][:p.l]
    back = rubato_model.decrypt(p, key, nonce, counter, block0)
    near = [(b, x) for b, x in zip(back, scaled) if abs(x) < p.q // 4]      # no wrap-around of centre()
    assert near and all(abs(b - x / p.delta) <= rubato_model.decryption_error_bound(p) for b, x in near)


@pytest.mark.parametrize("what", ["key word >= t", "nonce half >= 2^32", "message word >= t"])
def test_rubato_data_range(what):
    p = rubato_model.rubato_params("Par-128S")
    shape = EngineShape(4, 2, (Q0, Q1), 20, CKKS_UNITS | {Unit.RUBATO}, n=N, rubato_set=3)
    m = EngineModel(shape, N)
    block = _rubato_key_block(p, [1] * p.n, 5, 6, 7)
    if what == "key word >= t":
        block[3] = p.q
    elif what == "nonce half >= 2^32":
        block[p.n + 1] = 1 << 32
    m.buffers[0] = block + [0] * (N - len(block))
    if what == "message word >= t":
        m.buffers[1] = [p.q] + [0] * (N - 1)
    run(m, "rubato.key b0\nrubato.enc b2, b1, blocks=1\nnotify 1")
    assert m.error == ErrorCause.DATA_RANGE and m.events == []
    assert m.error_position == (1 if what == "message word >= t" else 0)
    if what == "message word >= t":                         # still written: z + q - q = z
        assert m.buffers[2][0] == rubato_model.keystream(p, [1] * p.n, 5, 7)[0]


def _state(m):
    return (dict(m.memory), [list(b) for b in m.buffers], m.seed, dict(m.config), list(m.events), dict(m.bound))


def test_first_error_is_kept_later_instructions_are_dropped_soft_reset_clears():
    m = model()
    m.memory[0x10] = 1
    run(m, "cfg.prime s0, p0\nload b1, 0x10\nnotify 1")
    before = _state(m)
    words = asm.assemble("nop\nntt b2, b1, s1\nstore b1, 0x40", m.shape)     # s1 is not bound
    words += [0xFFFF_FFFF_FFFF_FFFF]                                           # unknown opcode
    words += asm.assemble("notify 2\ncfg.prime s1, p1\nldseed 0x10\nload b3, 0x10", m.shape)
    assert m.run(words) == ErrorCause.SLOT_UNBOUND
    assert m.error_position == 4                 # 3 instructions before, then nop, then the ntt
    assert _state(m) == before                   # nothing after the error changed anything
    assert [s.cause for s in m.trace[-len(words):]] == [ErrorCause.NONE, ErrorCause.SLOT_UNBOUND] + \
        [ErrorCause.AFTER_ERROR] * (len(words) - 2)
    m.soft_reset()
    assert m.error == ErrorCause.NONE and m.error_position is None and m.position == 0
    assert m.bound == {}                         # bindings are gone
    run(m, "notify 9\nntt b2, b1, s0")
    assert m.events == [1, 9] and m.error == ErrorCause.SLOT_UNBOUND and m.error_position == 1
    m.soft_reset()
    run(m, "cfg.prime s0, p0\nntt b2, b1, s0")
    assert m.error == ErrorCause.NONE and m.buffers[2] == ntt(m.buffers[1], Q0)


def test_static_causes_reach_the_error_register():
    m = model()
    m.run([0x2B << 58 | 9 << 53])                # mac b9 on 8 buffers
    assert (m.error, m.error_position) == (ErrorCause.BUFFER_RANGE, 0)
    m.soft_reset()
    m.run([0x0A << 58 | 1])                      # cfg.rubato without the Rubato unit
    assert m.error == ErrorCause.NOT_BUILT


def test_bad_construction():
    shape = EngineShape(4, 1, (Q0,), 20)
    with pytest.raises(ParameterError, match="N"):
        EngineModel(shape, 100)
    with pytest.raises(ParameterError, match="word_bits"):
        EngineModel(shape, 64, word_bits=20)
    with pytest.raises(ParameterError, match="log_scale"):
        EngineModel(shape, 64, log_scale=29)     # 2^(29-1-26+29) is not below q
