"""The wire format of hhe-gen's packets: one UDP payload per segment of a polynomial (docs/wire.md).

A payload is a 24-byte header and ``count`` coefficients of 8 bytes each, every field
little-endian (the byte order of the accelerator's 32-bit stream and of its 64-bit memory words)::

    offset  size  field
     0      2     magic        0x4848 ("HH")
     2      1     version      1
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

A payload is at most 1472 bytes (one Ethernet frame without IP fragmentation), so ``count`` <=
:data:`MAX_COUNT` = 181.  The packets of a message come in sequence order; a CKKS ciphertext is
every row of c0, then every row of c1, each row in segments of ``segment`` coefficients.

:class:`Reassembler` is the receiving side's model: it takes payloads in any order, drops and
counts what is malformed (the reasons of :data:`DROP_REASONS`: nothing malformed ever reaches a
message or raises), and returns each message once it is complete.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["MAGIC", "VERSION", "HEADER_BYTES", "MAX_PAYLOAD", "MAX_COUNT", "Kind", "Header", "WireError",
           "DROP_REASONS", "parse", "polynomial_packets", "ciphertext_packets", "Message", "Reassembler",
           "stream_beats", "stream_payload"]

MAGIC = 0x4848
VERSION = 1
HEADER_BYTES = 24
MAX_PAYLOAD = 1472
"""Bytes of a UDP payload in one 1500-byte Ethernet frame (1500 - 20 IPv4 - 8 UDP)."""
MAX_COUNT = (MAX_PAYLOAD - HEADER_BYTES) // 8
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


DROP_REASONS = ("short", "bad_magic", "bad_version", "bad_kind", "bad_flags", "bad_rows", "bad_count",
                "length", "oversized", "range", "row", "mismatch", "duplicate", "overlap")
"""Why :class:`Reassembler` drops a payload: shorter than a header; magic; version; kind; flags
(reserved bits set); rows 0 or > 64; count 0 or > MAX_COUNT; a payload length other than
24 + 8*count; longer than MAX_PAYLOAD; offset + count > total (or total 0); row >= rows or a row
the receiver was not configured for; a header that disagrees with the message's first packet
(rows, log_scale, flags, total); a sequence number seen before; coefficients already received."""


class WireError(ValueError):
    """A malformed payload: ``reason`` is one of :data:`DROP_REASONS`."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


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
    """A payload's header and coefficients; :class:`WireError` naming the reason if malformed."""
    if len(payload) > MAX_PAYLOAD:
        raise WireError("oversized", f"{len(payload)} bytes > {MAX_PAYLOAD}")
    if len(payload) < HEADER_BYTES:
        raise WireError("short", f"{len(payload)} bytes < the {HEADER_BYTES}-byte header")
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
    if len(payload) != HEADER_BYTES + 8 * count:
        raise WireError("length", f"{len(payload)} bytes for {count} coefficients (want {HEADER_BYTES + 8 * count})")
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
            out.append(header.pack() + struct.pack(f"<{len(part)}Q", *part))
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
    """A message being reassembled: per kind, its rows (None where no coefficient arrived yet)."""
    id: int
    rows: int
    total: int
    log_scale: int
    ntt: bool
    polys: dict = field(default_factory=dict)
    sequences: set = field(default_factory=set)

    def complete(self, kinds) -> bool:
        return all(k in self.polys and all(None not in row for row in self.polys[k]) for k in kinds)

    def ciphertext(self):
        """The CKKS ciphertext of a complete message (scale 2^log_scale)."""
        from hhe_gen.models.ckks import Ciphertext
        return Ciphertext(self.polys[Kind.CKKS_C0], self.polys[Kind.CKKS_C1], 2 ** self.log_scale,
                          "ntt" if self.ntt else "coeff")


class Reassembler:
    """The receiving side: payloads in, complete messages out (module docstring).

    Parameters
    ----------
    kinds : the kinds a complete message has (default: a CKKS ciphertext, c0 and c1)
    rows : int or None   the rows the receiver takes (a packet naming another row count, or a row
                         >= rows, is dropped as "row"); None: what the first packet says

    Members
    -------
    dropped : dict       reason -> payloads dropped for it (every reason of DROP_REASONS, 0 first)
    accepted : int       payloads taken
    """

    def __init__(self, kinds=(Kind.CKKS_C0, Kind.CKKS_C1), rows: int | None = None):
        self.kinds = tuple(Kind(k) for k in kinds)
        self.rows = rows
        self.dropped = dict.fromkeys(DROP_REASONS, 0)
        self.accepted = 0
        self._open: dict[int, Message] = {}
        self._done: set[int] = set()

    def feed(self, payload: bytes) -> Message | None:
        """Take one payload; the message it completes, if any (each message is returned once; later
        packets of it count as duplicates)."""
        try:
            header, coefficients = parse(payload)
            return self._take(header, coefficients)
        except WireError as exc:
            self.dropped[exc.reason] += 1
            return None

    def _take(self, h: Header, coefficients) -> Message | None:
        if h.kind not in self.kinds:
            raise WireError("bad_kind", f"kind {h.kind} is not one this receiver reassembles")
        if self.rows is not None and h.rows != self.rows:
            raise WireError("row", f"{h.rows} rows, the receiver takes {self.rows}")
        if h.message in self._done:
            raise WireError("duplicate", f"message {h.message} is complete")
        msg = self._open.get(h.message)
        if msg is None:
            msg = self._open[h.message] = Message(h.message, h.rows, h.total, h.log_scale, h.ntt)
        elif (msg.rows, msg.total, msg.log_scale, msg.ntt) != (h.rows, h.total, h.log_scale, h.ntt):
            raise WireError("mismatch", f"packet {h.sequence} disagrees with message {h.message}'s first packet")
        if h.sequence in msg.sequences:
            raise WireError("duplicate", f"packet {h.sequence} of message {h.message} again")
        poly = msg.polys.setdefault(h.kind, [[None] * msg.total for _ in range(msg.rows)])
        row = poly[h.row]
        if any(x is not None for x in row[h.offset:h.offset + h.count]):
            raise WireError("overlap", f"coefficients {h.offset} .. {h.offset + h.count - 1} of row {h.row} again")
        row[h.offset:h.offset + h.count] = coefficients
        msg.sequences.add(h.sequence)
        self.accepted += 1
        if msg.complete(self.kinds):
            del self._open[h.message]
            self._done.add(h.message)
            return msg
        return None
