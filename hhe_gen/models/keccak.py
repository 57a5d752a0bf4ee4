"""Keccak-f[1600] and the SHAKE128/SHAKE256 extendable-output functions (FIPS 202).

This is the golden model of the Keccak core.  It is written from the FIPS 202 definition (the
step mappings theta, rho, pi, chi and iota of section 3.2, the sponge of section 4, the SHAKE
padding of section 6.2); the rotation offsets and round constants are *computed* here from the
definitions (Algorithm 2 and Algorithm 5 of FIPS 202), not copied in.

State layout
------------
The 1600-bit state is a list of 25 lane integers, each in ``[0, 2**64)``.  Lane ``(x, y)`` is at
index ``x + 5*y``.  Bit ``z`` of a lane is bit ``z`` of the integer, and a byte string is loaded
into lanes little-endian: byte ``8*i + k`` of the sponge's block is bits ``8k..8k+7`` of lane ``i``
(FIPS 202 section 3.1.2 / B.1).

Round indexing
--------------
``keccak_round(state, i)`` is ``Rnd(A, i)`` of FIPS 202: theta, rho, pi, chi, then iota with round
index ``i`` (0..23).  Keccak-f[1600] is rounds 0..23 in order.  ``keccak_rounds(state, first,
count)`` applies rounds ``first .. first+count-1``; a hardware core that computes ``k`` rounds per
cycle can be compared after every cycle with ``keccak_rounds(state, k*cycle, k)``.
"""

from __future__ import annotations

from hhe_gen.params.errors import ParameterError

__all__ = [
    "LANE_MASK",
    "ROUND_CONSTANTS",
    "RHO_OFFSETS",
    "keccak_round",
    "keccak_rounds",
    "keccak_f1600",
    "state_from_bytes",
    "state_to_bytes",
    "Shake",
    "shake128",
    "shake256",
]

LANE_MASK = (1 << 64) - 1
NUM_ROUNDS = 24


def _rc_bit(t: int) -> int:
    """FIPS 202 Algorithm 5: the output bit rc(t) of the degree-8 LFSR x^8+x^6+x^5+x^4+1."""
    if t % 255 == 0:
        return 1
    r = [1, 0, 0, 0, 0, 0, 0, 0]
    for _ in range(t % 255):
        r = [0] + r
        r[0] ^= r[8]
        r[4] ^= r[8]
        r[5] ^= r[8]
        r[6] ^= r[8]
        r = r[:8]
    return r[0]


def _round_constant(ir: int) -> int:
    """FIPS 202 Algorithm 6 steps 2-3: the 64-bit iota constant of round ``ir``."""
    rc = 0
    for j in range(7):
        rc |= _rc_bit(j + 7 * ir) << ((1 << j) - 1)
    return rc


def _rho_offsets() -> list[int]:
    """FIPS 202 Algorithm 2: rotation offset of each lane (index x + 5*y), reduced mod 64."""
    offsets = [0] * 25
    x, y = 1, 0
    for t in range(24):
        offsets[x + 5 * y] = ((t + 1) * (t + 2) // 2) % 64
        x, y = y, (2 * x + 3 * y) % 5
    return offsets


ROUND_CONSTANTS: tuple[int, ...] = tuple(_round_constant(i) for i in range(NUM_ROUNDS))
"""The iota constants RC[0..23] (computed from FIPS 202 Algorithm 5)."""

RHO_OFFSETS: tuple[int, ...] = tuple(_rho_offsets())
"""Rotation offset of lane x + 5*y for the rho step (computed from FIPS 202 Algorithm 2)."""

# pi moves lane (x, y) to (y, (2x + 3y) mod 5), i.e. A'[x, y] = A[(x + 3y) mod 5, x].
_PI_DESTINATION: tuple[int, ...] = tuple(
    y + 5 * ((2 * x + 3 * y) % 5) for y in range(5) for x in range(5)
)


def _check_state(state) -> None:
    if len(state) != 25:
        raise ParameterError("state", f"<{len(state)} lanes>", "exactly 25 lanes of 64 bits")


def keccak_round(state: list[int], round_index: int) -> list[int]:
    """One round Rnd(A, ir) of Keccak-f[1600]: theta, rho, pi, chi, iota.

    Parameters
    ----------
    state : list[int]
        25 lanes, lane (x, y) at index ``x + 5*y``, each in ``[0, 2**64)``.
    round_index : int
        ``ir`` in 0..23; selects the iota constant.

    Returns
    -------
    list[int]
        The new state (a new list; the argument is not modified).
    """
    _check_state(state)
    if not 0 <= round_index < NUM_ROUNDS:
        raise ParameterError("round_index", round_index, "an integer in 0..23")
    a = state
    m = LANE_MASK
    # theta: column parities C[x], D[x] = C[x-1] ^ rot(C[x+1], 1), every lane of column x ^= D[x].
    c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
    d = [c[(x - 1) % 5] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & m) for x in range(5)]
    # rho (rotate each lane) and pi (move it), together.
    b = [0] * 25
    for i in range(25):
        v = a[i] ^ d[i % 5]
        r = RHO_OFFSETS[i]
        if r:
            v = ((v << r) | (v >> (64 - r))) & m
        b[_PI_DESTINATION[i]] = v
    # chi: A[x, y] ^= ~A[x+1, y] & A[x+2, y], row by row.
    out = [0] * 25
    for y5 in range(0, 25, 5):
        b0, b1, b2, b3, b4 = b[y5], b[y5 + 1], b[y5 + 2], b[y5 + 3], b[y5 + 4]
        out[y5] = b0 ^ ((b1 ^ m) & b2)
        out[y5 + 1] = b1 ^ ((b2 ^ m) & b3)
        out[y5 + 2] = b2 ^ ((b3 ^ m) & b4)
        out[y5 + 3] = b3 ^ ((b4 ^ m) & b0)
        out[y5 + 4] = b4 ^ ((b0 ^ m) & b1)
    # iota
    out[0] ^= ROUND_CONSTANTS[round_index]
    return out


def keccak_rounds(state: list[int], first: int, count: int) -> list[int]:
    """Apply rounds ``first, first+1, ..., first+count-1`` of Keccak-f[1600].

    Parameters
    ----------
    state : list[int]
        25 lanes (see the module docstring).
    first : int
        Index of the first round to apply (0..23).
    count : int
        Number of rounds; ``first + count`` must not exceed 24.

    Returns
    -------
    list[int]
        The state after those rounds.
    """
    if not (0 <= first <= NUM_ROUNDS and 0 <= count <= NUM_ROUNDS - first):
        raise ParameterError("first/count", (first, count), "0 <= first and first + count <= 24")
    for i in range(first, first + count):
        state = keccak_round(state, i)
    return list(state)


def keccak_f1600(state: list[int], rounds: int = 24) -> list[int]:
    """Keccak-p[1600, rounds] of FIPS 202 (Keccak-f[1600] for ``rounds=24``).

    Following FIPS 202 Algorithm 7, the ``rounds`` applied are the *last* ones, round indices
    ``24-rounds .. 23`` (so ``rounds=12`` is the permutation of KangarooTwelve).  To apply the
    *first* k rounds (a partially finished hardware permutation) use ``keccak_rounds(state, 0, k)``.

    Parameters
    ----------
    state : list[int]
        25 lanes.
    rounds : int
        1..24.

    Returns
    -------
    list[int]
        The permuted state.
    """
    if not 1 <= rounds <= NUM_ROUNDS:
        raise ParameterError("rounds", rounds, "an integer in 1..24")
    return keccak_rounds(state, NUM_ROUNDS - rounds, rounds)


def state_from_bytes(data: bytes) -> list[int]:
    """Load 200 bytes into 25 lanes (little-endian lanes, lane i from bytes 8i..8i+7)."""
    if len(data) != 200:
        raise ParameterError("data", f"<{len(data)} bytes>", "exactly 200 bytes")
    return [int.from_bytes(data[8 * i:8 * i + 8], "little") for i in range(25)]


def state_to_bytes(state: list[int]) -> bytes:
    """The 200-byte string of a state (inverse of :func:`state_from_bytes`)."""
    _check_state(state)
    return b"".join(lane.to_bytes(8, "little") for lane in state)


class Shake:
    """Streaming SHAKE128 / SHAKE256 sponge (FIPS 202 section 6.2).

    The message is absorbed in rate-sized blocks (168 bytes for SHAKE128, 136 for SHAKE256).  On
    the first squeeze the pending bytes are padded with the SHAKE domain bits and pad10*1, i.e.
    byte ``0x1F`` after the message and ``0x80`` ORed into the last byte of the block, then the
    output is read from the first ``rate`` bytes of the state, permuting between blocks.

    Parameters
    ----------
    variant : int
        128 or 256.

    Members
    -------
    variant : int         128 or 256
    rate : int            the rate in bytes (168 or 136)
    permutations : int    how many Keccak-f[1600] calls have been made (useful for cycle models)

    ``absorb`` may be called any number of times before the first ``squeeze``; afterwards it raises
    ``RuntimeError`` until ``reset()`` starts a fresh message.  ``squeeze`` may be called any
    number of times; the concatenation of its results is the XOF output stream.
    """

    def __init__(self, variant: int = 256):
        if variant not in (128, 256):
            raise ParameterError("variant", variant, "128 or 256 (SHAKE128 / SHAKE256)")
        self.variant = variant
        self.rate = 200 - 2 * (variant // 8)
        self.reset()

    def reset(self) -> None:
        """Start a new, empty message (all-zero state)."""
        self._state = [0] * 25
        self._pending = bytearray()  # absorb: bytes not yet XORed in; squeeze: unread output
        self._squeezing = False
        self.permutations = 0

    def _permute(self) -> None:
        self._state = keccak_f1600(self._state)
        self.permutations += 1

    def _xor_block(self, block: bytes) -> None:
        for i in range(len(block) // 8):
            self._state[i] ^= int.from_bytes(block[8 * i:8 * i + 8], "little")

    def absorb(self, data: bytes) -> "Shake":
        """Absorb more message bytes.  Returns ``self`` so calls can be chained.

        Raises
        ------
        RuntimeError
            if squeezing has already started (call ``reset()`` for a new message).
        """
        if self._squeezing:
            raise RuntimeError("Shake.absorb() after squeeze(): call reset() to start a new message")
        self._pending += bytes(data)
        rate = self.rate
        while len(self._pending) >= rate:
            self._xor_block(bytes(self._pending[:rate]))
            del self._pending[:rate]
            self._permute()
        return self

    def _finish_absorbing(self) -> None:
        block = bytearray(self._pending)
        block += bytes(self.rate - len(block))
        block[len(self._pending)] ^= 0x1F
        block[self.rate - 1] ^= 0x80
        self._xor_block(bytes(block))
        self._permute()
        self._pending = bytearray(state_to_bytes(self._state)[:self.rate])
        self._squeezing = True

    def squeeze(self, n: int) -> bytes:
        """Return the next ``n`` bytes of the output stream."""
        if n < 0:
            raise ParameterError("n", n, "a non-negative byte count")
        if not self._squeezing:
            self._finish_absorbing()
        out = bytearray()
        while len(out) < n:
            if not self._pending:
                self._permute()
                self._pending = bytearray(state_to_bytes(self._state)[:self.rate])
            take = min(n - len(out), len(self._pending))
            out += self._pending[:take]
            del self._pending[:take]
        return bytes(out)

    def squeeze_words(self, count: int, nbytes: int) -> list[int]:
        """Read ``count`` consecutive ``nbytes``-byte little-endian unsigned words from the stream."""
        if count < 0:
            raise ParameterError("count", count, "a non-negative word count")
        if nbytes < 1:
            raise ParameterError("nbytes", nbytes, "at least 1 byte per word")
        raw = self.squeeze(count * nbytes)
        return [int.from_bytes(raw[i:i + nbytes], "little") for i in range(0, len(raw), nbytes)]


def shake128(data: bytes, n: int) -> bytes:
    """SHAKE128(data, 8n): the first ``n`` output bytes."""
    return Shake(128).absorb(data).squeeze(n)


def shake256(data: bytes, n: int) -> bytes:
    """SHAKE256(data, 8n): the first ``n`` output bytes."""
    return Shake(256).absorb(data).squeeze(n)
