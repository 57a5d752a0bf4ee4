"""Network cores: the packetizer that puts polynomials into UDP packets of the wire format
(docs/wire.md), and the depacketizer that takes them back in order."""

from .depacketizer import DROP_CODES, Depacketizer
from .packetizer import CFG_LAYOUT, ROW_LAYOUT, UDP_LAYOUT, Packetizer

__all__ = ["Packetizer", "Depacketizer", "DROP_CODES", "CFG_LAYOUT", "ROW_LAYOUT", "UDP_LAYOUT"]
