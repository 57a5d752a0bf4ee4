"""The receiving side the accelerator has room for: packets of one message in the order they were
sent (the model of :class:`hhe_gen.cores.net.Depacketizer`).

Where :class:`~.wire.Reassembler` takes packets in any order, an in-order receiver keeps one
cursor: the message, the next sequence number, and the (kind, row, offset) the next packet must
start at, in the order a sender makes them (every row of the first kind, then every row of the
next; each row from offset 0 in segments).  A payload is taken only if its CRC-32 trailer checks and it
is well formed (:func:`~.wire.parse`; a CRC failure is ``checksum``), of the receiver's rows and row
length, and exactly at the cursor; a packet
at the very start (sequence 0, the first kind, row 0, offset 0) starts a new message, leaving an
unfinished one.  Anything else is dropped and counted (``order`` for a packet not at the cursor,
``mismatch`` for other rows or another row length, the parse reasons otherwise), so nothing is
written twice, nothing outside a row, and nothing of a malformed packet.
"""

from __future__ import annotations

from .wire import DROP_REASONS, Kind, WireError, parse

__all__ = ["IN_ORDER_REASONS", "InOrderReceiver"]

IN_ORDER_REASONS = DROP_REASONS + ("order",)


class InOrderReceiver:
    """The in-order receiver of the module docstring.

    Parameters
    ----------
    rows : int      rows of each polynomial (1 .. 64)
    total : int     coefficients per row
    kinds : tuple   the kinds of a message, in sending order (default CKKS c0 then c1)

    Members
    -------
    dropped : dict  reason -> payloads dropped;  accepted : int;  messages : int (completed)
    """

    def __init__(self, rows: int, total: int, kinds=(Kind.CKKS_C0, Kind.CKKS_C1)):
        self.rows, self.total, self.kinds = rows, total, tuple(Kind(k) for k in kinds)
        self.dropped = dict.fromkeys(IN_ORDER_REASONS, 0)
        self.accepted = self.messages = 0
        self.message = None
        self._start()

    def _start(self):
        self.sequence, self.kind, self.row, self.offset = 0, 0, 0, 0

    def feed(self, payload: bytes) -> list[tuple[int, int, int, int]]:
        """Take one payload: the writes it makes, ``(kind index, row, index, coefficient)`` each
        (none when it is dropped)."""
        try:
            h, coefficients = parse(payload)
            if h.kind not in self.kinds:
                raise WireError("bad_kind", f"kind {h.kind} is not one this receiver takes")
            if h.rows != self.rows or h.total != self.total:
                raise WireError("mismatch", f"{h.rows} rows of {h.total}, the receiver takes {self.rows} of {self.total}")
            kind = self.kinds.index(h.kind)
            start = h.sequence == 0 and kind == 0 and h.row == 0 and h.offset == 0
            at_cursor = (self.message == h.message and h.sequence == self.sequence and kind == self.kind
                         and h.row == self.row and h.offset == self.offset)
            if not (start or at_cursor):
                raise WireError("order", f"packet {h.sequence} ({h.kind.name} row {h.row} offset {h.offset}) "
                                         f"is not the next one")
        except WireError as exc:
            self.dropped[exc.reason] += 1
            return []
        if start:
            self.message = h.message
            self._start()
        writes = [(kind, h.row, h.offset + i, c) for i, c in enumerate(coefficients)]
        self.accepted += 1
        self.sequence = (self.sequence + 1) & 0xFFFF
        self.offset += h.count
        if self.offset == self.total:
            self.offset, self.row = 0, self.row + 1
            if self.row == self.rows:
                self.row, self.kind = 0, self.kind + 1
                if self.kind == len(self.kinds):
                    self.messages += 1
                    self.message = None
                    self._start()
        return writes
