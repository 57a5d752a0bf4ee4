"""hhe_gen.cores.rubato.schedule.candidate_positions: the accepted candidate words, against the
direct definition (``word & (2^q_bits - 1) < q``) on hashlib's SHAKE256 words, the shipped KAT
files (rc_xof_words_read and the round constants) and hand-made boundary words."""

import hashlib
import json
import random
import struct
from pathlib import Path

import pytest

from hhe_gen.cores.rubato.schedule import block_positions, candidate_positions
from hhe_gen.params import rubato_params

from ._helpers import KAT_DIR, SETS, accepted_positions

KAT_FILES = sorted(Path(KAT_DIR).glob("rubato_*.json"))


def _words(nonce, counter, count):
    stream = hashlib.shake_256(nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest(4 * count)
    return list(struct.unpack(f"<{count}I", stream))


@pytest.mark.parametrize("name", SETS)
def test_hashlib_words(name):
    p = rubato_params(name)
    rng = random.Random(name)
    mask = (1 << p.q_bits) - 1
    for _ in range(5):
        nonce, counter = rng.getrandbits(64), rng.getrandbits(64)
        words = _words(nonce, counter, 2 * p.round_constant_count + 64)
        got = candidate_positions(p.q, p.q_bits, words, p.round_constant_count)
        assert got == [i for i, w in enumerate(words) if w & mask < p.q][:p.round_constant_count]
        assert got == accepted_positions(p, nonce, counter) == block_positions(p, nonce, counter)
        for count in (0, 1, 7):
            assert candidate_positions(p.q, p.q_bits, words, count) == got[:count]


@pytest.mark.parametrize("path", KAT_FILES, ids=[f.stem for f in KAT_FILES])
def test_kat_files(path):
    """The reference's rc_xof_words_read is one past the last position, and the masked words at
    the positions are its round constants."""
    kat = json.loads(path.read_text())
    p = rubato_params(kat["parameter_set"])
    mask = (1 << p.q_bits) - 1
    for v in kat["vectors"]:
        words = _words(v["nonce"], v["counter"], 2 * p.round_constant_count + 64)
        got = candidate_positions(p.q, p.q_bits, words, p.round_constant_count)
        assert got[-1] + 1 == v["rc_xof_words_read"]
        assert got[-1] + 1 - len(got) == v["rc_xof_words_rejected"]
        assert [words[i] & mask for i in got] == [x for row in v["round_constants"] for x in row]


def test_boundary_words():
    """A masked value equal to q is rejected, q - 1 and values above the mask's bits accepted;
    too few accepted words raise."""
    q = rubato_params("Par-80S").q
    assert q.bit_length() == 26
    words = [q, 5, q - 1, (1 << 26) | 3, (1 << 26) - 1, 0xFFFFFFFF, (7 << 26) | q, (1 << 32) - (1 << 26)]
    assert candidate_positions(q, 26, words, 3) == [1, 2, 3]
    assert candidate_positions(q, 26, words, 4) == [1, 2, 3, 7]
    assert candidate_positions(q, 26, words, 0) == []
    assert candidate_positions(q, 26, [q + 1, 0, q], 1) == [1]
    with pytest.raises(ValueError):
        candidate_positions(q, 26, words, 5)
    with pytest.raises(ValueError):
        candidate_positions(q, 26, [q, q, (1 << 26) - 1], 1)
