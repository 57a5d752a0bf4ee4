"""The wire format (hhe_gen.models.wire): the header's bytes and the CRC-32 trailer against the
layout written in docs/wire.md (by hand here and with zlib, not through the packer), ciphertexts
through packets and back in any order, every drop reason, a one-bit flip anywhere is a checksum
drop (a damaged copy before the genuine packet: the genuine message is delivered), two different
payloads for one position fail the message, a residue >= its prime is refused, and a fuzz of
malformed payloads between good ones: the good message still arrives intact and nothing raises."""

import random
import struct
import zlib

import pytest

from hhe_gen.models import ckks
from hhe_gen.models.wire import (DROP_REASONS, HEADER_BYTES, MAX_COUNT, MAX_PAYLOAD, Header, Kind, MessageError,
                              Reassembler, ciphertext_packets, parse, polynomial_packets, seal)
from hhe_gen.models.wire_in_order import InOrderReceiver
from hhe_gen.params import ParameterError, preset
from testsupport import mutate_payload

TOY = preset("toy")


def _ciphertext(seed=1):
    keys = ckks.keygen(TOY, seed=seed)
    pt = ckks.encode(TOY, [0.5, -0.25j, 0.125])
    return ckks.encrypt_pk(TOY, keys, pt, seed=seed + 1, form="ntt")


def test_header_bytes_follow_the_documented_layout():
    h = Header(Kind.CKKS_C1, message=0x01020304, row=2, rows=3, sequence=0x0506, count=7, offset=0x00001234,
               total=0x00002000, log_scale=50, ntt=True)
    want = bytes([0x48, 0x48, 2, 2, 0x04, 0x03, 0x02, 0x01, 2, 3, 50, 1, 0x06, 0x05, 7, 0,
                  0x34, 0x12, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00])
    assert h.pack() == want
    body = want + struct.pack("<7Q", *range(7))
    payload = body + struct.pack("<I", zlib.crc32(body))              # the trailer: zlib's CRC-32
    assert seal(body) == payload
    assert parse(payload) == (h, list(range(7)))
    assert MAX_COUNT == 180 and HEADER_BYTES + 8 * MAX_COUNT + 4 <= MAX_PAYLOAD < HEADER_BYTES + 8 * (MAX_COUNT + 1) + 4


def test_packers_append_zlibs_crc_of_header_and_coefficients():
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, message=9, log_scale=TOY.log_scale, segment=MAX_COUNT)
    payloads += polynomial_packets(Kind.RUBATO, 3, [list(range(400))])          # 180, 180, 40
    for p in payloads:
        h, coefficients = parse(p)
        assert len(p) == HEADER_BYTES + 8 * h.count + 4
        assert p[:HEADER_BYTES] == h.pack() and p[HEADER_BYTES:-4] == struct.pack(f"<{h.count}Q", *coefficients)
        assert struct.unpack("<I", p[-4:])[0] == zlib.crc32(p[:-4])
    assert max(len(p) for p in payloads) == HEADER_BYTES + 8 * MAX_COUNT + 4 <= MAX_PAYLOAD


@pytest.mark.parametrize("segment", [1, 13, 32, MAX_COUNT])
def test_ciphertext_round_trip_in_any_order(segment):
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, message=9, log_scale=TOY.log_scale, segment=segment)
    n, rows = TOY.n, len(TOY.moduli)
    assert len(payloads) == 2 * rows * -(-n // segment)
    assert all(len(p) <= MAX_PAYLOAD for p in payloads)
    assert [parse(p)[0].sequence for p in payloads] == list(range(len(payloads)))
    random.Random(segment).shuffle(payloads)
    rx = Reassembler()
    done = [m for m in map(rx.feed, payloads) if m is not None]
    assert len(done) == 1 and rx.accepted == len(payloads) and sum(rx.dropped.values()) == 0
    got = done[0].ciphertext()
    assert (got.c0, got.c1, got.form, got.scale) == (ct.c0, ct.c1, "ntt", ct.scale)


def _good(count=4, values=None, **kw):
    fields = dict(kind=Kind.CKKS_C0, message=1, row=0, rows=1, sequence=0, count=count, offset=0, total=8) | kw
    return seal(Header(**fields).pack() + struct.pack(f"<{count}Q", *(values or range(count))))


def _patched(payload, offset, fmt, value):
    """The payload with a field patched and its CRC recomputed: malformed, not damaged."""
    b = bytearray(payload[:-4])
    struct.pack_into(fmt, b, offset, value)
    return seal(bytes(b))


MALFORMED = {
    "short": _good()[:HEADER_BYTES + 3],
    "checksum": _good()[:-1] + bytes([_good()[-1] ^ 0x80]),
    "bad_magic": _patched(_good(), 0, "<H", 0x4849),
    "bad_version": _patched(_good(), 2, "<B", 1),                        # version 1: no CRC
    "bad_kind": _patched(_good(), 3, "<B", 9),
    "bad_flags": _patched(_good(), 11, "<B", 2),
    "bad_rows": _patched(_good(), 9, "<B", 0),
    "bad_count": _patched(_good(), 14, "<H", 0),
    "length": seal(_good()[:-12]),
    "oversized": _good() + bytes(MAX_PAYLOAD),
    "range": _good(offset=6),
    "row": _good(row=1),
}


def test_a_version_1_packet_is_named_so():
    """A packet of the old format (version 1: no CRC) fails the CRC, but is counted as bad_version."""
    v1 = struct.pack("<HBBIBBBBHHII", 0x4848, 1, 1, 1, 0, 1, 0, 0, 0, 4, 0, 8) + struct.pack("<4Q", *range(4))
    rx = Reassembler()
    assert rx.feed(v1) is None and rx.dropped["bad_version"] == 1 and sum(rx.dropped.values()) == 1


@pytest.mark.parametrize("reason", sorted(MALFORMED))
def test_every_malformed_header_is_dropped_and_counted(reason):
    rx = Reassembler()
    assert rx.feed(MALFORMED[reason]) is None
    assert rx.dropped[reason] == 1 and sum(rx.dropped.values()) == 1 and rx.accepted == 0


def test_duplicates_overlaps_and_mismatches_are_dropped():
    rx = Reassembler()
    assert rx.feed(_good(sequence=0)) is None
    assert rx.feed(_good(sequence=0)) is None                               # the same packet again
    assert rx.feed(_good(sequence=1, offset=2, values=[2, 3, 0, 1])) is None   # coefficients 2, 3 again, same
    assert rx.feed(_good(sequence=2, offset=4, total=16)) is None           # another row length
    assert rx.feed(_good(kind=Kind.RUBATO, sequence=3, offset=4)) is None   # not a ciphertext kind
    assert [rx.dropped[r] for r in ("duplicate", "overlap", "mismatch", "bad_kind")] == [1, 1, 1, 1]
    assert rx.feed(_good(sequence=4, offset=4)) is None                     # c0 complete, c1 missing
    done = rx.feed(_good(kind=Kind.CKKS_C1, sequence=5, count=8))
    assert done is not None and done.polys[Kind.CKKS_C0] == [[0, 1, 2, 3, 0, 1, 2, 3]]
    assert rx.feed(_good(kind=Kind.CKKS_C1, sequence=6, count=8)) is None   # the message is complete
    assert rx.dropped["duplicate"] == 2
    three = Reassembler(rows=3)
    assert three.feed(_good()) is None and three.dropped["row"] == 1        # the receiver takes 3 rows


def test_fuzz_malformed_between_good_packets():
    """3000 malformed payloads (every one that the reference parse accepts is left out: a
    well-formed packet of the same message with other coefficients is not malformed) between the
    shuffled packets of a good ciphertext: it arrives intact, every drop is counted."""
    ct = _ciphertext(3)
    good = ciphertext_packets(ct, message=7, log_scale=TOY.log_scale, segment=16)
    rng = random.Random(5)
    bad = []
    while len(bad) < 3000:
        m = mutate_payload(rng.choice(good), rng, reseal=rng.random() < 0.5)
        try:
            parse(m)
        except ValueError:
            bad.append(m)
    stream = [(p, True) for p in good] + [(p, False) for p in bad]
    rng.shuffle(stream)
    rx = Reassembler(rows=len(TOY.moduli))
    done = [m for m in (rx.feed(p) for p, _ in stream) if m is not None]
    assert len(done) == 1
    got = done[0].ciphertext()
    assert (got.c0, got.c1) == (ct.c0, ct.c1)
    assert rx.accepted == len(good) and sum(rx.dropped.values()) == len(bad)
    assert set(DROP_REASONS) == set(rx.dropped)


def _flipped(payload, bit):
    b = bytearray(payload)
    b[bit // 8] ^= 1 << bit % 8
    return bytes(b)


def test_every_one_bit_flip_is_a_checksum_drop():
    """Every single bit of a packet (header, coefficients, the CRC itself) flipped in turn: each
    variant is dropped as checksum, by the Reassembler and by the in-order receiver alike."""
    good = polynomial_packets(Kind.CKKS_C0, 5, [[(1 << 64) - 1, 0, 12345]], log_scale=20, ntt=True)[0]
    rx, ordered = Reassembler(), InOrderReceiver(1, 3, kinds=(Kind.CKKS_C0,))
    for bit in range(8 * len(good)):
        bad = _flipped(good, bit)
        assert rx.feed(bad) is None and ordered.feed(bad) == []
    n = 8 * len(good)
    assert rx.dropped["checksum"] == n == sum(rx.dropped.values()) and rx.accepted == 0
    assert ordered.dropped["checksum"] == n == sum(ordered.dropped.values()) and ordered.accepted == 0


def test_a_damaged_copy_first_then_the_genuine_packets():
    """Issue 36: a damaged copy of each packet (one bit flipped, in the header, a coefficient or the
    CRC) arrives before the genuine one: the copies are checksum drops, the genuine ciphertext is
    delivered bit-exact, in any order and in order."""
    ct = _ciphertext(6)
    good = ciphertext_packets(ct, message=11, log_scale=TOY.log_scale, segment=32)
    rng = random.Random(36)
    stream = []
    for k, p in enumerate(good):
        region = [range(0, 8 * HEADER_BYTES), range(8 * HEADER_BYTES, 8 * (len(p) - 4)),
                  range(8 * (len(p) - 4), 8 * len(p))][k % 3]
        stream += [_flipped(p, rng.choice(region)), p]
    rx = Reassembler(rows=len(TOY.moduli), moduli=TOY.moduli)
    done = [m for m in map(rx.feed, stream) if m is not None]
    assert len(done) == 1 and not rx.errors
    got = done[0].ciphertext(TOY.moduli)
    assert (got.c0, got.c1, got.scale, got.form) == (ct.c0, ct.c1, ct.scale, ct.form)
    assert rx.dropped["checksum"] == len(good) == sum(rx.dropped.values()) and rx.accepted == len(good)
    ordered = InOrderReceiver(len(TOY.moduli), TOY.n)
    writes = [w for p in stream for w in ordered.feed(p)]
    assert ordered.messages == 1 and ordered.dropped["checksum"] == len(good)
    assert len(writes) == 2 * len(TOY.moduli) * TOY.n
    assert all(v == (ct.c0, ct.c1)[k][r][i] for k, r, i, v in writes)


@pytest.mark.parametrize("case", ["same_sequence", "overlap", "after_delivery"])
def test_two_payloads_for_one_position_fail_the_message(case):
    """Two different packets, each with a good CRC, for one position of a message: the message
    fails with a conflict naming the row and index, is never delivered, and its later packets are
    counted as failed; another message is unaffected.  An exact repeat stays a duplicate."""
    rx = Reassembler()
    assert rx.feed(_good(sequence=0)) is None
    assert rx.feed(_good(sequence=0)) is None and rx.dropped["duplicate"] == 1       # an exact repeat
    if case == "same_sequence":
        other = _good(sequence=0, values=[0, 1, 9, 3])                   # coefficient 2 differs
        where = 0
    elif case == "overlap":
        other = _good(sequence=1, offset=2, values=[2, 7, 0, 1])          # coefficient 3: 7, not 3
        where = 3
    else:
        rx.feed(_good(sequence=1, offset=4))
        assert rx.feed(_good(kind=Kind.CKKS_C1, sequence=2, count=8)) is not None     # delivered
        other = _good(kind=Kind.CKKS_C1, sequence=2, count=8, values=[1] * 8)
        where = 0
    assert rx.feed(other) is None and rx.dropped["conflict"] == 1
    err = rx.errors[1]
    assert isinstance(err, MessageError) and err.reason == "conflict" and (err.row, err.index) == (0, where)
    assert "row 0" in str(err) and f"index {where}" in str(err)
    if case != "after_delivery":
        # the rest of the message: every packet counted as failed, nothing delivered
        for p in [_good(sequence=1, offset=4), _good(kind=Kind.CKKS_C1, sequence=2, count=8)]:
            assert rx.feed(p) is None
        assert rx.dropped["failed"] == 2
    fine = [_good(message=2, sequence=0, count=8), _good(message=2, kind=Kind.CKKS_C1, sequence=1, count=8)]
    assert [rx.feed(p) is None for p in fine] == [True, False]


def test_a_residue_at_or_above_its_prime_is_refused():
    """With the moduli, a coefficient >= its row's prime fails the message (row and index named)
    and no ciphertext is made of it; without them the Reassembler takes it, and the ciphertext's
    assembly with the moduli refuses it."""
    ct = _ciphertext(8)
    q1 = TOY.moduli[1]
    bad_c1 = [list(r) for r in ct.c1]
    bad_c1[1][37] = q1                                    # row 1's prime itself: one too many
    bad = ckks.Ciphertext(ct.c0, bad_c1, ct.scale, ct.form)
    payloads = ciphertext_packets(bad, message=4, log_scale=TOY.log_scale, segment=16)
    rx = Reassembler(moduli=TOY.moduli)
    assert [m for m in map(rx.feed, payloads) if m is not None] == []
    err = rx.errors[4]
    assert err.reason == "residue" and (err.kind, err.row, err.index) == (Kind.CKKS_C1, 1, 37)
    assert rx.dropped["residue"] == 1 and rx.dropped["failed"] == len(payloads) - rx.accepted - 1
    loose = Reassembler()
    done = [m for m in map(loose.feed, payloads) if m is not None]
    assert len(done) == 1
    with pytest.raises(MessageError, match="row 1 index 37"):
        done[0].ciphertext(TOY.moduli)
    # one below the prime is a residue: taken
    bad_c1[1][37] = q1 - 1
    ok = ciphertext_packets(ckks.Ciphertext(ct.c0, bad_c1, ct.scale, ct.form), message=5,
                            log_scale=TOY.log_scale, segment=16)
    rx = Reassembler(moduli=TOY.moduli)
    assert len([m for m in map(rx.feed, ok) if m is not None]) == 1 and not rx.errors
    with pytest.raises(ParameterError, match="'moduli'"):
        Reassembler(moduli=[])


@pytest.mark.parametrize("kw,name", [({"segment": 0}, "segment"), ({"segment": MAX_COUNT + 1}, "segment"),
                                     ({"message": -1}, "message"), ({"rows_data": []}, "rows")])
def test_bad_packer_parameters(kw, name):
    args = dict(kind=Kind.RUBATO, message=1, rows_data=[[1, 2, 3]]) | kw
    rows = args.pop("rows_data")
    with pytest.raises(ParameterError, match=f"'{name}'"):
        polynomial_packets(args.pop("kind"), args.pop("message"), rows, **args)


def test_stream_beats_and_back():
    """LiteEth's 32-bit beats: little-endian words, the last zero-padded, last_be one-hot on its last
    valid byte; stream_payload undoes it for every length."""
    from hhe_gen.models.wire import stream_beats, stream_payload
    assert stream_beats(bytes([1, 2, 3, 4, 5])) == [(0x04030201, 0), (0x05, 0b0001)]
    assert stream_beats(bytes(range(8))) == [(0x03020100, 0), (0x07060504, 0b1000)]
    for n in range(1, 13):
        payload = bytes(range(7, 7 + n))
        beats = stream_beats(payload)
        assert stream_payload([w for w, _ in beats], beats[-1][1]) == payload
    with pytest.raises(ParameterError, match="payload"):
        stream_beats(b"")
