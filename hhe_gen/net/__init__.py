"""The network side of the accelerator, on the host: UDP sockets (:mod:`.udp`) that send and receive
the packets of the wire format (:mod:`hhe_gen.models.wire`, docs/wire.md) and reassemble them into
the interchange formats.  The format's names are re-exported here for the host's convenience."""

from hhe_gen.models.wire_in_order import IN_ORDER_REASONS, InOrderReceiver
from hhe_gen.models.wire import (CRC_BYTES, DROP_REASONS, HEADER_BYTES, MAX_COUNT, MAX_PAYLOAD, Header, Kind,
                                 Message, MessageError, Reassembler, WireError, ciphertext_packets, crc32, parse,
                                 polynomial_packets)

__all__ = ["IN_ORDER_REASONS", "InOrderReceiver", "CRC_BYTES", "DROP_REASONS", "HEADER_BYTES", "MAX_COUNT", "MAX_PAYLOAD",
           "Header", "Kind", "Message", "MessageError", "Reassembler", "WireError", "ciphertext_packets", "crc32",
           "parse", "polynomial_packets"]
