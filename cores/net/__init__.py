"""Network cores: the packetizer that puts polynomials into UDP packets of the wire format
(docs/wire.md)."""

from .packetizer import CFG_LAYOUT, ROW_LAYOUT, UDP_LAYOUT, Packetizer

__all__ = ["Packetizer", "CFG_LAYOUT", "ROW_LAYOUT", "UDP_LAYOUT"]
