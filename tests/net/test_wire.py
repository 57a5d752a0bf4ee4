"""The wire format (hhe_gen.models.wire): the header's bytes against the layout written in
docs/wire.md (by hand here, not through the packer), ciphertexts through packets and back in any
order, every drop reason, and a fuzz of malformed payloads between good ones: the good message
still arrives intact and nothing raises."""

import random
import struct

import pytest

from hhe_gen.models import ckks
from hhe_gen.models.wire import (DROP_REASONS, HEADER_BYTES, MAX_COUNT, MAX_PAYLOAD, Header, Kind, Reassembler,
                              ciphertext_packets, parse, polynomial_packets)
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
    want = bytes([0x48, 0x48, 1, 2, 0x04, 0x03, 0x02, 0x01, 2, 3, 50, 1, 0x06, 0x05, 7, 0,
                  0x34, 0x12, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00])
    assert h.pack() == want
    payload = want + struct.pack("<7Q", *range(7))
    assert parse(payload) == (h, list(range(7)))
    assert MAX_COUNT == 181 and HEADER_BYTES + 8 * MAX_COUNT <= MAX_PAYLOAD < HEADER_BYTES + 8 * (MAX_COUNT + 1)


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


def _good(count=4, **kw):
    fields = dict(kind=Kind.CKKS_C0, message=1, row=0, rows=1, sequence=0, count=count, offset=0, total=8) | kw
    return Header(**fields).pack() + struct.pack(f"<{count}Q", *range(count))


def _patched(payload, offset, fmt, value):
    b = bytearray(payload)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


MALFORMED = {
    "short": _good()[:HEADER_BYTES - 1],
    "bad_magic": _patched(_good(), 0, "<H", 0x4849),
    "bad_version": _patched(_good(), 2, "<B", 2),
    "bad_kind": _patched(_good(), 3, "<B", 9),
    "bad_flags": _patched(_good(), 11, "<B", 2),
    "bad_rows": _patched(_good(), 9, "<B", 0),
    "bad_count": _patched(_good(), 14, "<H", 0),
    "length": _good()[:-1],
    "oversized": _good() + bytes(MAX_PAYLOAD),
    "range": _good(offset=6),
    "row": _good(row=1),
}


@pytest.mark.parametrize("reason", sorted(MALFORMED))
def test_every_malformed_header_is_dropped_and_counted(reason):
    rx = Reassembler()
    assert rx.feed(MALFORMED[reason]) is None
    assert rx.dropped[reason] == 1 and sum(rx.dropped.values()) == 1 and rx.accepted == 0


def test_duplicates_overlaps_and_mismatches_are_dropped():
    rx = Reassembler()
    assert rx.feed(_good(sequence=0)) is None
    assert rx.feed(_good(sequence=0)) is None                               # the same packet again
    assert rx.feed(_good(sequence=1, offset=2)) is None                     # coefficients 2, 3 again
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
        m = mutate_payload(rng.choice(good), rng)
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
