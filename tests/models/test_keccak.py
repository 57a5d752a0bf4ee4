"""Keccak-f[1600] and SHAKE128/256 model against Python's hashlib (an independent implementation)."""

import hashlib
import random

import pytest

from hhe_gen.models.keccak import (Shake, keccak_f1600, keccak_round, keccak_rounds, shake128,
                                   shake256, state_from_bytes, state_to_bytes)
from hhe_gen.params.errors import ParameterError

HASHLIB = {128: hashlib.shake_128, 256: hashlib.shake_256}
BOUNDARY_LENGTHS = [0, 1, 7, 8, 9, 135, 136, 137, 167, 168, 169, 271, 272, 273, 335, 336, 337, 600]


@pytest.mark.parametrize("length", BOUNDARY_LENGTHS)
def test_one_shot_matches_hashlib_at_rate_boundaries(length):
    rng = random.Random(length)
    data = rng.randbytes(length)
    for out_len in (0, 1, 135, 136, 137, 168, 169, 400):
        assert shake128(data, out_len) == hashlib.shake_128(data).digest(out_len)
        assert shake256(data, out_len) == hashlib.shake_256(data).digest(out_len)


def test_random_lengths_match_hashlib():
    rng = random.Random(2024)
    for _ in range(40):
        data = rng.randbytes(rng.randrange(0, 601))
        out_len = rng.randrange(0, 601)
        variant = rng.choice((128, 256))
        assert Shake(variant).absorb(data).squeeze(out_len) == HASHLIB[variant](data).digest(out_len)


@pytest.mark.parametrize("variant", [128, 256])
def test_random_chunkings_of_absorb_and_squeeze(variant):
    rng = random.Random(variant)
    for _ in range(12):
        data = rng.randbytes(rng.randrange(0, 601))
        total_out = rng.randrange(0, 700)
        xof = Shake(variant)
        pos = 0
        while pos < len(data):
            step = rng.choice((0, 1, 5, 67, 135, 136, 137, 168, 169, 300))
            xof.absorb(data[pos:pos + step])
            pos += step
        out = b""
        while len(out) < total_out:
            out += xof.squeeze(min(rng.choice((0, 1, 3, 100, 136, 168, 169, 250)), total_out - len(out)))
        assert out == HASHLIB[variant](data).digest(total_out)


def test_squeeze_words_little_endian():
    data = b"word reader"
    stream = hashlib.shake_256(data).digest(5 * 3 + 4 * 2)
    xof = Shake(256).absorb(data)
    assert xof.squeeze_words(5, 3) == [stream[3 * i] | stream[3 * i + 1] << 8 | stream[3 * i + 2] << 16
                                       for i in range(5)]
    assert xof.squeeze_words(2, 4) == [int.from_bytes(stream[15 + 4 * i:19 + 4 * i][::-1], "big")
                                       for i in range(2)]


def test_absorb_after_squeeze_raises_and_reset_starts_fresh():
    xof = Shake(256).absorb(b"first")
    xof.squeeze(10)
    with pytest.raises(RuntimeError):
        xof.absorb(b"more")
    xof.reset()
    assert xof.absorb(b"second").squeeze(50) == hashlib.shake_256(b"second").digest(50)


def _padded_block(rate: int) -> bytes:
    """An empty SHAKE message padded by hand: 0x1F, zeros, 0x80 in the last rate byte."""
    block = bytearray(200)
    block[0] ^= 0x1F
    block[rate - 1] ^= 0x80
    return bytes(block)


@pytest.mark.parametrize("variant,rate", [(128, 168), (256, 136)])
def test_permutation_against_hashlib_via_sponge_blocks(variant, rate):
    # Squeezing SHAKE(empty) yields the rate part of f(P), f(f(P)), f(f(f(P))) ...
    state = state_from_bytes(_padded_block(rate))
    expected = HASHLIB[variant](b"").digest(3 * rate)
    for block in range(3):
        state = keccak_f1600(state)
        assert state_to_bytes(state)[:rate] == expected[block * rate:(block + 1) * rate]


def test_round_by_round_composes_to_the_permutation():
    rng = random.Random(7)
    state = [rng.getrandbits(64) for _ in range(25)]
    original = list(state)
    full = keccak_f1600(state)
    stepped = state
    for i in range(24):
        stepped = keccak_round(stepped, i)
    assert stepped == full
    for per_cycle in (1, 2, 3, 4, 6, 8, 12, 24):
        s = state
        for cycle in range(24 // per_cycle):
            s = keccak_rounds(s, cycle * per_cycle, per_cycle)
        assert s == full
    assert keccak_f1600(state, rounds=12) == keccak_rounds(state, 12, 12)
    assert state == original  # the input list was not modified


def test_round_changes_every_lane_position_and_is_not_identity():
    state = [0] * 25
    after = keccak_round(state, 0)
    assert after[0] == 1 and all(x == 0 for x in after[1:])  # only iota acts on the zero state
    assert keccak_round(state, 1)[0] != after[0]


def test_bad_parameters_raise():
    with pytest.raises(ParameterError):
        Shake(224)
    with pytest.raises(ParameterError):
        keccak_round([0] * 24, 0)
    with pytest.raises(ParameterError):
        keccak_round([0] * 25, 24)
    with pytest.raises(ParameterError):
        keccak_f1600([0] * 25, rounds=0)
    with pytest.raises(ParameterError):
        keccak_rounds([0] * 25, 20, 5)
    with pytest.raises(ParameterError):
        Shake(256).squeeze(-1)
