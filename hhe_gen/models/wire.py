"""The wire format of hhe-gen's packets: one UDP payload per segment of a polynomial (docs/wire.md).

A payload (version 2) is a 24-byte header, ``count`` coefficients of 8 bytes each and a 4-byte
CRC-32 trailer, every field little-endian (the byte order of the accelerator's 32-bit stream and
of its 64-bit memory words)::

    offset  size  field
     0      2     magic        0x4848 ("HH")
     2      1     version      2
     3      1     kind         1 CKKS c0, 2 CKKS c1, 3 Rubato ciphertext, 4 CKKS slots
     4      4     message      message id (the polynomials of one ciphertext share it)
     8      1     row          prime index of the row (0 for Rubato and slots)
     9      1     rows         rows of each polynomial of the message (1 .. 64)
    10      1     log_scale    CKKS: log2 Delta; otherwise 0
    11      1     flags        bit 0: the coefficients are in NTT form; bits 1 .. 7 zero
    12      2     sequence     packet number within the message, 0, 1, ..
    14      2     count        coefficients in this packet, 1 .. MAX_COUNT
    16      4     offset       index of the first coefficient in its row
    20      4     total        coefficients per row (N; Rubato: the block's length)
    24      8*count            the coefficients, one unsigned 64-bit word each
    24+8*count  4     crc          CRC-32 (IEEE, ``zlib.crc32``) of the bytes 0 .. 23+8*count

A payload is at most 1472 bytes (one Ethernet frame without IP fragmentation), so ``count`` <=
:data:`MAX_COUNT` = 180 (28 + 8 x 180 = 1468).  The packets of a message come in sequence order; a
CKKS ciphertext is every row of c0, then every row of c1, each row in segments of ``segment``
coefficients.

:class:`Reassembler` is the receiving side's model: it takes payloads in any order, drops and
counts what is malformed or corrupted (the reasons of :data:`DROP_REASONS`: nothing malformed ever
reaches a message or raises), and returns each message once it is complete.  A message whose
packets disagree (two different payloads for one position) or, with the moduli given, carry a
residue >= its row's prime fails: it is never returned, :attr:`Reassembler.errors` holds its
:class:`MessageError`.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from enum import IntEnum

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["MAGIC", "VERSION", "HEADER_BYTES", "CRC_BYTES", "MAX_PAYLOAD", "MAX_COUNT", "Kind", "Header",
           "WireError", "MessageError", "DROP_REASONS", "crc32", "seal", "payload_bytes", "parse",
           "polynomial_packets", "ciphertext_packets", "Message", "Reassembler", "stream_beats", "stream_payload"]

MAGIC = 0x4848
VERSION = 2
HEADER_BYTES = 24
CRC_BYTES = 4
"""The CRC-32 trailer after the coefficients."""
MAX_PAYLOAD = 1472
"""Bytes of a UDP payload in one 1500-byte Ethernet frame (1500 - 20 IPv4 - 8 UDP)."""
MAX_COUNT = (MAX_PAYLOAD - HEADER_BYTES - CRC_BYTES) // 8
assert MAX_COUNT == 180
MAX_ROWS = 64
FLAG_NTT = 1
_HEADER = struct.Struct("<HBBIBBBBHHII")
assert _HEADER.size == HEADER_BYTES


class Kind(IntEnum):
    """What a packet's coefficients are."""
    CKKS_C0 = 1
    CKKS_C1 = 2
    RUBATO = 3
    SLOTS = 4


DROP_REASONS = ("short", "checksum", "bad_magic", "bad_version", "bad_kind", "bad_flags", "bad_rows", "bad_count",
                "length", "oversized", "range", "row", "mismatch", "duplicate", "overlap", "conflict",
                "residue", "failed")
"""Why :class:`Reassembler` drops a payload: shorter than a header and its CRC; a CRC-32 trailer
that is not the CRC of the bytes before it; magic; version; kind; flags (reserved bits set); rows
0 or > 64; count 0 or > MAX_COUNT; a payload length other than 28 + 8*count; longer than
MAX_PAYLOAD; offset + count > total (or total 0); row >= rows or a row the receiver was not
configured for; a header that disagrees with the message's first packet (rows, log_scale, flags,
total); an exact repeat of a packet taken (same sequence number, same bytes) or a packet of a
message already complete; coefficients already received, with the same values; another payload
for a position already filled (same sequence number, other bytes; or coefficients already received
with other values: the message fails); a coefficient >= its row's prime (the message fails); a
packet of a message that failed."""


class WireError(ValueError):
    """A malformed payload: ``reason`` is one of :data:`DROP_REASONS`."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class MessageError(ValueError):
    """A message that cannot be delivered: ``reason`` ``conflict`` (two different payloads for one
    position of it) or ``residue`` (a coefficient >= its row's prime); ``message`` its id,
    ``kind``, ``row``, ``index`` the position (index in the row), ``detail`` what was seen."""

    def __init__(self, reason: str, message: int, kind, row: int, index: int, detail: str):
        kind_name = Kind(kind).name if kind is not None else "?"
        super().__init__(f"message {message}: {reason} at {kind_name} row {row} index {index}: {detail}")
        self.reason, self.message, self.kind, self.row, self.index, self.detail = \
            reason, message, kind, row, index, detail


def crc32(data: bytes) -> int:
    """The CRC-32 of the trailer: IEEE 802.3's, reflected, as :func:`zlib.crc32` computes it."""
    return zlib.crc32(data) & 0xFFFFFFFF


def seal(body: bytes) -> bytes:
    """A header and its coefficients with their CRC-32 trailer appended (little-endian)."""
    return bytes(body) + crc32(body).to_bytes(CRC_BYTES, "little")


def payload_bytes(count: int) -> int:
    """Bytes of a payload of ``count`` coefficients: header, coefficients, CRC."""
    return HEADER_BYTES + 8 * count + CRC_BYTES


@dataclass(frozen=True)
class Header:
    """One packet's header (the fields of the module docstring)."""
    kind: int
    message: int
    row: int
    rows: int
    sequence: int
    count: int
    offset: int
    total: int
    log_scale: int = 0
    ntt: bool = False

    def pack(self) -> bytes:
        return _HEADER.pack(MAGIC, VERSION, int(self.kind), self.message, self.row, self.rows, self.log_scale,
                            FLAG_NTT if self.ntt else 0, self.sequence, self.count, self.offset, self.total)


def parse(payload: bytes) -> tuple[Header, list[int]]:
    """A payload's header and coefficients; :class:`WireError` naming the reason if malformed.
    The CRC is checked first, so a payload damaged anywhere (header, coefficients or the CRC
    itself) is a ``checksum`` drop whatever its fields say."""
    if len(payload) > MAX_PAYLOAD:
        raise WireError("oversized", f"{len(payload)} bytes > {MAX_PAYLOAD}")
    if len(payload) < HEADER_BYTES + CRC_BYTES:
        raise WireError("short", f"{len(payload)} bytes < the {HEADER_BYTES}-byte header and {CRC_BYTES}-byte CRC")
    body, trailer = payload[:-CRC_BYTES], int.from_bytes(payload[-CRC_BYTES:], "little")
    if crc32(body) != trailer:
        if payload[:3] == bytes([MAGIC & 0xFF, MAGIC >> 8, 1]) and \
                len(payload) == HEADER_BYTES + 8 * int.from_bytes(payload[14:16], "little"):
            # a whole packet of version 1 (no CRC): say so (a damaged version-2 packet never looks
            # like one: its version byte is one bit flip from 2, never 1)
            raise WireError("bad_version", f"1 != {VERSION} (a version-1 packet, without a CRC)")
        raise WireError("checksum", f"CRC-32 {trailer:#010x} != {crc32(body):#010x} of the bytes before it")
    (magic, version, kind, message, row, rows, log_scale, flags, sequence, count, offset,
     total) = _HEADER.unpack_from(payload)
    if magic != MAGIC:
        raise WireError("bad_magic", f"{magic:#06x} != {MAGIC:#06x}")
    if version != VERSION:
        raise WireError("bad_version", f"{version} != {VERSION}")
    if kind not in Kind._value2member_map_:
        raise WireError("bad_kind", f"{kind} not one of " + ", ".join(f"{k.value} {k.name}" for k in Kind))
    if flags & ~FLAG_NTT:
        raise WireError("bad_flags", f"{flags:#04x}: bits 1 .. 7 are reserved")
    if not 1 <= rows <= MAX_ROWS:
        raise WireError("bad_rows", f"rows {rows} not in 1 .. {MAX_ROWS}")
    if not 1 <= count <= MAX_COUNT:
        raise WireError("bad_count", f"count {count} not in 1 .. {MAX_COUNT}")
    if len(payload) != payload_bytes(count):
        raise WireError("length", f"{len(payload)} bytes for {count} coefficients (want {payload_bytes(count)})")
    if total == 0 or offset + count > total:
        raise WireError("range", f"coefficients {offset} .. {offset + count - 1} of a row of {total}")
    if row >= rows:
        raise WireError("row", f"row {row} of {rows}")
    coefficients = list(struct.unpack_from(f"<{count}Q", payload, HEADER_BYTES))
    return Header(Kind(kind), message, row, rows, sequence, count, offset, total, log_scale,
                  bool(flags & FLAG_NTT)), coefficients


def stream_beats(payload: bytes) -> list[tuple[int, int]]:
    """A non-empty payload as the 32-bit beats of LiteEth's UDP stream: ``(data, last_be)`` each,
    little-endian (the first byte in ``data[0:8]``), the last beat zero-padded with ``last_be``
    one-hot on its last valid byte (0b1000 for a whole word), 0 on the others."""
    if not payload:
        raise ParameterError("payload", payload, "at least one byte (a stream beat carries one or more)")
    padded = bytes(payload) + bytes(-len(payload) % 4)
    words = [int.from_bytes(padded[k:k + 4], "little") for k in range(0, len(padded), 4)]
    return [(w, 0) for w in words[:-1]] + [(words[-1], 1 << ((len(payload) - 1) % 4))]


def stream_payload(words, last_be: int) -> bytes:
    """The payload of a packet's beats (:func:`stream_beats` reversed): the words' bytes, the last
    one cut after the byte ``last_be`` marks."""
    words = list(words)
    size = 4 * (len(words) - 1) + int(last_be).bit_length()
    return b"".join(int(w).to_bytes(4, "little") for w in words)[:size]


def _check_segment(segment: int) -> int:
    return check_int("segment", segment, 1, MAX_COUNT, f"coefficients per packet, 1 .. {MAX_COUNT} "
                     f"(a payload of at most {MAX_PAYLOAD} bytes)")


def polynomial_packets(kind: Kind, message: int, rows_data, *, segment: int = MAX_COUNT, log_scale: int = 0,
                       ntt: bool = False, first_sequence: int = 0, first_row: int = 0,
                       total_rows: int | None = None) -> list[bytes]:
    """The payloads of one polynomial (``rows_data``: its rows, each a list of coefficients < 2^64),
    row by row, each row in segments of ``segment`` coefficients, numbered from
    ``first_sequence``; or of some of its rows: ``rows_data`` are rows ``first_row`` .. of a
    polynomial of ``total_rows`` rows (default: just these)."""
    _check_segment(segment)
    check_int("message", message, 0, (1 << 32) - 1)
    rows_data = [list(r) for r in rows_data]
    if not 1 <= len(rows_data) <= MAX_ROWS or any(len(r) != len(rows_data[0]) or not r for r in rows_data):
        raise ParameterError("rows", f"<{len(rows_data)} rows>", f"1 .. {MAX_ROWS} rows of equal, non-zero length")
    total_rows = len(rows_data) if total_rows is None else total_rows
    check_int("total_rows", total_rows, 1, MAX_ROWS)
    check_int("first_row", first_row, 0, total_rows - len(rows_data),
              f"0 .. {total_rows - len(rows_data)} (its {len(rows_data)} rows among {total_rows})")
    out, sequence = [], first_sequence
    for row, coefficients in enumerate(rows_data, first_row):
        for start in range(0, len(coefficients), segment):
            part = coefficients[start:start + segment]
            header = Header(kind, message, row, total_rows, sequence & 0xFFFF, len(part), start,
                            len(coefficients), log_scale, ntt)
            out.append(seal(header.pack() + struct.pack(f"<{len(part)}Q", *part)))
            sequence += 1
    return out


def ciphertext_packets(ct, message: int, log_scale: int, *, segment: int = MAX_COUNT) -> list[bytes]:
    """The payloads of a CKKS ciphertext (:class:`hhe_gen.models.ckks.Ciphertext`): every row of c0,
    then every row of c1, numbered 0, 1, .. across both."""
    ntt = ct.form == "ntt"
    c0 = polynomial_packets(Kind.CKKS_C0, message, ct.c0, segment=segment, log_scale=log_scale, ntt=ntt)
    return c0 + polynomial_packets(Kind.CKKS_C1, message, ct.c1, segment=segment, log_scale=log_scale, ntt=ntt,
                                   first_sequence=len(c0))


@dataclass
class Message:
    """A message being reassembled: per kind, its rows (None where no coefficient arrived yet), and
    the payload taken for each sequence number."""
    id: int
    rows: int
    total: int
    log_scale: int
    ntt: bool
    polys: dict = field(default_factory=dict)
    sequences: dict = field(default_factory=dict)

    def complete(self, kinds) -> bool:
        return all(k in self.polys and all(None not in row for row in self.polys[k]) for k in kinds)

    def check_residues(self, moduli) -> None:
        """:class:`MessageError` ``residue`` naming the first coefficient >= its row's prime
        (``moduli[row]``; every kind's row r is reduced modulo the same prime)."""
        for kind, poly in self.polys.items():
            for r, row in enumerate(poly):
                q = moduli[r]
                for i, x in enumerate(row):
                    if x is not None and x >= q:
                        raise MessageError("residue", self.id, kind, r, i, f"{x} >= the row's prime {q}")

    def ciphertext(self, moduli=None):
        """The CKKS ciphertext of a complete message (scale 2^log_scale); with ``moduli`` (the
        primes of rows 0, 1, ..) a coefficient >= its row's prime raises :class:`MessageError`."""
        from hhe_gen.models.ckks import Ciphertext
        if moduli is not None:
            if len(moduli) < self.rows:
                raise ParameterError("moduli", f"<{len(moduli)} primes>", f"a prime for each of the {self.rows} rows")
            self.check_residues(moduli)
        return Ciphertext(self.polys[Kind.CKKS_C0], self.polys[Kind.CKKS_C1], 2 ** self.log_scale,
                          "ntt" if self.ntt else "coeff")


class Reassembler:
    """The receiving side: payloads in, complete messages out (module docstring).

    Parameters
    ----------
    kinds : the kinds a complete message has (default: a CKKS ciphertext, c0 and c1)
    rows : int or None   the rows the receiver takes (a packet naming another row count, or a row
                         >= rows, is dropped as "row"); None: what the first packet says
    moduli : list or None   the primes of rows 0, 1, .. (CKKS: the parameter set's moduli; Rubato:
                         [q]).  Given, a packet naming more rows than there are primes is dropped
                         as "row", and a coefficient >= its row's prime fails its message
                         ("residue"); None: any 64-bit word is taken

    A message fails, and is never returned, when one of its packets carries a coefficient >= its
    row's prime (``residue``) or when two different payloads arrive for one position of it
    (``conflict``: the same sequence number with other bytes, or coefficients already received
    with other values; an exact repeat is a harmless ``duplicate``, a repeat of coefficients with
    the same values a harmless ``overlap``).  Which of the two payloads is genuine cannot be known
    (both passed the CRC), so neither is chosen: what arrived of the message is forgotten, the
    packet is counted under its reason and every later packet of the message under ``failed``.

    Members
    -------
    dropped : dict       reason -> payloads dropped for it (every reason of DROP_REASONS, 0 first)
    accepted : int       payloads taken
    errors : dict        message id -> the :class:`MessageError` that failed it, in failing order
    """

    def __init__(self, kinds=(Kind.CKKS_C0, Kind.CKKS_C1), rows: int | None = None, moduli=None):
        self.kinds = tuple(Kind(k) for k in kinds)
        self.rows = rows
        self.moduli = None if moduli is None else [int(q) for q in moduli]
        if self.moduli is not None and (not 1 <= len(self.moduli) <= MAX_ROWS
                                        or any(not 2 <= q <= 1 << 64 for q in self.moduli)):
            raise ParameterError("moduli", moduli, f"1 .. {MAX_ROWS} primes, each 2 .. 2^64")
        self.dropped = dict.fromkeys(DROP_REASONS, 0)
        self.accepted = 0
        self.errors: dict[int, MessageError] = {}
        self._open: dict[int, Message] = {}
        self._done: dict[int, dict] = {}          # complete message id -> its payloads by sequence

    def feed(self, payload: bytes) -> Message | None:
        """Take one payload; the message it completes, if any (each message is returned once; later
        packets of it count as duplicates, or as a conflict if they differ from what was taken)."""
        try:
            header, coefficients = parse(payload)
            return self._take(bytes(payload), header, coefficients)
        except WireError as exc:
            self.dropped[exc.reason] += 1
            return None

    def _fail(self, msg_id: int, error: MessageError):
        self._open.pop(msg_id, None)
        self.errors[msg_id] = error
        raise WireError(error.reason, str(error))

    def _take(self, payload: bytes, h: Header, coefficients) -> Message | None:
        if h.kind not in self.kinds:
            raise WireError("bad_kind", f"kind {h.kind} is not one this receiver reassembles")
        if self.rows is not None and h.rows != self.rows:
            raise WireError("row", f"{h.rows} rows, the receiver takes {self.rows}")
        if self.moduli is not None and h.rows > len(self.moduli):
            raise WireError("row", f"{h.rows} rows, the receiver knows {len(self.moduli)} primes")
        if h.message in self.errors:
            raise WireError("failed", f"message {h.message} failed: {self.errors[h.message]}")
        if h.message in self._done:
            taken = self._done[h.message].get(h.sequence)
            if taken is not None and taken != payload:
                error = MessageError("conflict", h.message, h.kind, h.row, h.offset,
                                     f"packet {h.sequence} differs from the one delivered")
                self.errors.setdefault(h.message, error)
                raise WireError("conflict", str(error))
            raise WireError("duplicate", f"message {h.message} is complete")
        msg = self._open.get(h.message)
        if msg is None:
            msg = Message(h.message, h.rows, h.total, h.log_scale, h.ntt)
        elif (msg.rows, msg.total, msg.log_scale, msg.ntt) != (h.rows, h.total, h.log_scale, h.ntt):
            raise WireError("mismatch", f"packet {h.sequence} disagrees with message {h.message}'s first packet")
        taken = msg.sequences.get(h.sequence)
        if taken is not None:
            if taken == payload:
                raise WireError("duplicate", f"packet {h.sequence} of message {h.message} again")
            self._fail(h.message, MessageError("conflict", h.message, h.kind, h.row, h.offset,
                                               f"packet {h.sequence} arrived twice with different payloads"))
        if h.kind in msg.polys:
            old = msg.polys[h.kind][h.row][h.offset:h.offset + h.count]
            if any(x is not None for x in old):
                for i, (x, y) in enumerate(zip(old, coefficients)):
                    if x is not None and x != y:
                        self._fail(h.message, MessageError(
                            "conflict", h.message, h.kind, h.row, h.offset + i,
                            f"{y} from packet {h.sequence}, {x} from an earlier one"))
                raise WireError("overlap", f"coefficients {h.offset} .. {h.offset + h.count - 1} of row {h.row} "
                                           f"again (the same values)")
        if self.moduli is not None:
            q = self.moduli[h.row]
            for i, x in enumerate(coefficients):
                if x >= q:
                    self._fail(h.message, MessageError("residue", h.message, h.kind, h.row, h.offset + i,
                                                       f"{x} >= the row's prime {q} (packet {h.sequence})"))
        self._open[h.message] = msg
        poly = msg.polys.setdefault(h.kind, [[None] * msg.total for _ in range(msg.rows)])
        poly[h.row][h.offset:h.offset + h.count] = coefficients
        msg.sequences[h.sequence] = payload
        self.accepted += 1
        if msg.complete(self.kinds):
            del self._open[h.message]
            self._done[h.message] = msg.sequences
            return msg
        return None
