"""Capture files: the accelerator's UDP packets as a classic libpcap file (Ethernet, IPv4, UDP), and
the UDP payloads read back from one (a capture of the accelerator's traffic made by tcpdump or
Wireshark, or written here from a simulation's packets), so that ``hhe-gen net receive --pcap``
reassembles a ciphertext from a capture as from a socket.

Only what the format needs is written and read: the classic pcap header (magic 0xa1b2c3d4 or
0xa1b23c4d, either byte order, link type 1 Ethernet), records of Ethernet II frames (an optional
802.1Q tag), IPv4 without fragmentation, UDP.  Anything else in a capture (other link types, IPv6,
TCP, fragments) is skipped and counted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = ["UdpDatagram", "write_pcap", "read_udp_payloads", "PcapError"]

_LINKTYPE_ETHERNET = 1
_MAGICS = {0xA1B2C3D4: 1e-6, 0xA1B23C4D: 1e-9}


class PcapError(ParameterError):
    """A file that is not a classic pcap capture of Ethernet frames."""

    def __init__(self, path, why: str):
        super().__init__("--pcap", str(path), f"a classic pcap capture of Ethernet frames ({why})")


@dataclass(frozen=True)
class UdpDatagram:
    """One UDP datagram of a capture: addresses (IPv4 as integers), ports and payload."""
    src_ip: int
    dst_ip: int
    src_port: int
    dst_port: int
    payload: bytes


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _frame(d: UdpDatagram, ident: int) -> bytes:
    udp_len = 8 + len(d.payload)
    pseudo = struct.pack("!IIBBH", d.src_ip, d.dst_ip, 0, 17, udp_len)
    udp = struct.pack("!HHHH", d.src_port, d.dst_port, udp_len, 0) + d.payload
    udp = udp[:6] + struct.pack("!H", _checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + udp_len, ident & 0xFFFF, 0x4000, 64, 17, 0, d.src_ip, d.dst_ip)
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    eth = bytes.fromhex("10e2d5000001") + bytes.fromhex("10e2d5000000") + b"\x08\x00"
    return eth + ip + udp


def write_pcap(path, datagrams) -> int:
    """Write ``datagrams`` (:class:`UdpDatagram`) as Ethernet frames to a pcap file, 1 us apart;
    the number written."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, _LINKTYPE_ETHERNET)]
    count = 0
    for k, d in enumerate(datagrams):
        frame = _frame(d, k)
        out.append(struct.pack("<IIII", k // 1_000_000, k % 1_000_000, len(frame), len(frame)) + frame)
        count += 1
    Path(path).write_bytes(b"".join(out))
    return count


def read_udp_payloads(path, *, port: int | None = None) -> tuple[list[UdpDatagram], int]:
    """The UDP datagrams of a capture (to ``port`` if given), in capture order, and how many
    records were skipped (not Ethernet / IPv4 / UDP, fragments, other ports, truncated)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise PcapError(path, exc.strerror or "unreadable") from None
    if len(raw) < 24:
        raise PcapError(path, "shorter than a pcap header")
    for order in "<>":
        magic, _, _, _, _, _, link = struct.unpack_from(order + "IHHiIII", raw)
        if magic in _MAGICS:
            break
    else:
        raise PcapError(path, "no pcap magic number; pcapng is not read: save as pcap")
    if link != _LINKTYPE_ETHERNET:
        raise PcapError(path, f"link type {link}, not Ethernet (1)")
    out, skipped, at = [], 0, 24
    while at + 16 <= len(raw):
        _, _, incl, _ = struct.unpack_from(order + "IIII", raw, at)
        frame = raw[at + 16:at + 16 + incl]
        at += 16 + incl
        datagram = _udp_of(frame)
        if datagram is None or (port is not None and datagram.dst_port != port):
            skipped += 1
        else:
            out.append(datagram)
    return out, skipped


def _udp_of(frame: bytes) -> UdpDatagram | None:
    if len(frame) < 14:
        return None
    ethertype, at = struct.unpack_from("!H", frame, 12)[0], 14
    if ethertype == 0x8100 and len(frame) >= 18:                  # one 802.1Q tag
        ethertype, at = struct.unpack_from("!H", frame, 16)[0], 18
    if ethertype != 0x0800 or len(frame) < at + 20:
        return None
    ver_ihl, _, total, _, frag, _, proto, _, src, dst = struct.unpack_from("!BBHHHBBHII", frame, at)
    ihl = (ver_ihl & 0xF) * 4
    if ver_ihl >> 4 != 4 or proto != 17 or frag & 0x3FFF or ihl < 20 or len(frame) < at + total:
        return None
    udp = frame[at + ihl:at + total]
    if len(udp) < 8:
        return None
    sport, dport, length, _ = struct.unpack_from("!HHHH", udp)
    if length < 8 or length > len(udp):
        return None
    return UdpDatagram(src, dst, sport, dport, bytes(udp[8:length]))
