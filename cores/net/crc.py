"""CRC-32 of the wire format's trailer (docs/wire.md) over 32-bit little-endian words, one per cycle.

The CRC is IEEE 802.3's as :func:`zlib.crc32` computes it: reflected polynomial 0xEDB88320, the
register starting at all ones, the result inverted.  A stream word carries the payload's bytes
little-endian (the first byte in ``data[0:8]``) and the reflected CRC takes each byte's bit 0
first, so a whole word is its 32 bits in order 0 .. 31: the register after a word is a linear map
(over GF(2)) of the register xor the word, which :func:`crc32_word` builds as 32 xor trees.

:data:`CRC_INIT` is the register at a packet's start; the CRC of the words so far is
``~register``.  The packetizer sends that after the last coefficient; the depacketizer compares
the last word with it.
"""

from __future__ import annotations

from functools import reduce

from amaranth.hdl import Cat

__all__ = ["CRC_POLY", "CRC_INIT", "crc32_word", "crc32_word_model"]

CRC_POLY = 0xEDB88320
CRC_INIT = 0xFFFFFFFF


def crc32_word_model(register: int, word: int) -> int:
    """The register after one 32-bit word (bit by bit, as the reference)."""
    c = (register ^ word) & 0xFFFFFFFF
    for _ in range(32):
        c = (c >> 1) ^ (CRC_POLY if c & 1 else 0)
    return c


def _columns() -> list[list[int]]:
    """For each output bit, the bits of (register ^ word) it is the xor of."""
    cols = [[] for _ in range(32)]
    for j in range(32):
        out = crc32_word_model(1 << j, 0)
        for i in range(32):
            if out >> i & 1:
                cols[i].append(j)
    return cols


_COLUMNS = _columns()


def crc32_word(register, word):
    """The register after ``word`` (Amaranth values of 32 bits): 32 xor trees, no state."""
    x = register ^ word
    return Cat(*(reduce(lambda a, b: a ^ b, [x[j] for j in _COLUMNS[i]]) for i in range(32)))
