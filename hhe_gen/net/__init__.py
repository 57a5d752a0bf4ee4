"""The network side of the accelerator, on the host: the wire format of its UDP packets
(:mod:`.wire`, docs/wire.md) and their reassembly into the interchange formats."""

from .in_order import IN_ORDER_REASONS, InOrderReceiver
from .wire import (DROP_REASONS, HEADER_BYTES, MAX_COUNT, MAX_PAYLOAD, Header, Kind, Message, Reassembler,
                   WireError, ciphertext_packets, parse, polynomial_packets)

__all__ = ["IN_ORDER_REASONS", "InOrderReceiver", "DROP_REASONS", "HEADER_BYTES", "MAX_COUNT", "MAX_PAYLOAD", "Header", "Kind", "Message", "Reassembler",
           "WireError", "ciphertext_packets", "parse", "polynomial_packets"]
