"""Packets over a real UDP socket on the loopback: ``hhe-gen net send`` of a ciphertext file and
``hhe-gen net receive`` on the other end give back the same file; garbage datagrams between them
are dropped and counted; bad options are refused with the option named."""

import json
import socket
import threading

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.models import ckks
from hhe_gen.net.udp import through_loopback
from hhe_gen.models.wire import Reassembler, ciphertext_packets
from hhe_gen.params import ParameterError, preset

TOY = preset("toy")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ciphertext():
    keys = ckks.keygen(TOY, seed=4)
    return ckks.encrypt_sk(TOY, keys.sk, ckks.encode(TOY, [0.25, 1j]), seed=5, form="ntt")


def test_receive_reassembles_and_counts_garbage():
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, 3, TOY.log_scale, segment=20)
    rx = Reassembler()
    mixed = []
    for p in payloads:
        mixed += [b"not a packet", p[:30], p]          # the last good packet ends the reception
    msgs = through_loopback(mixed, reassembler=rx, timeout=5)     # receive() in a thread, send() to it
    assert len(msgs) == 1
    got = msgs[0].ciphertext()
    assert (got.c0, got.c1, got.scale, got.form) == (ct.c0, ct.c1, ct.scale, ct.form)
    assert rx.dropped["short"] == len(payloads) and rx.dropped["length"] == len(payloads)


def test_cli_send_and_receive(tmp_path, capsys):
    ct = _ciphertext()
    src, dst = tmp_path / "ct.json", tmp_path / "back.json"
    src.write_text(json.dumps(ct.to_json()))
    port = _free_port()
    status = {}
    t = threading.Thread(target=lambda: status.update(rc=main(["net", "receive", "--port", str(port), "--host",
                                                                "127.0.0.1", "--timeout", "5", "-o", str(dst)])))
    t.start()
    import time
    time.sleep(0.5)                                   # the receiver binds first
    assert main(["net", "send", "--in", str(src), "--to", f"127.0.0.1:{port}", "--segment", "16"]) == 0
    t.join(10)
    assert status["rc"] == 0
    assert json.loads(dst.read_text()) == json.loads(src.read_text())


@pytest.mark.parametrize("argv,option", [
    (["net", "send", "--in", "X", "--to", "nohost"], "--to"),
    (["net", "receive", "--port", "70000", "-o", "x.json"], "port"),
])
def test_bad_options(argv, option, capsys, tmp_path):
    if argv[1] == "send":
        f = tmp_path / "ct.json"
        f.write_text(json.dumps(_ciphertext().to_json()))
        argv = [a if a != "X" else str(f) for a in argv]
    assert main(argv) == 2
    assert option in capsys.readouterr().err


def test_pcap_capture_round_trip_and_cli(tmp_path, capsys):
    """A capture written by hhe_gen.net.pcap (checked here against the frame layout: Ethernet, IPv4
    with its header checksum, UDP with its checksum) reads back to the same payloads, other traffic
    skipped; ``net receive --pcap`` reassembles the ciphertext from it."""
    import struct

    from hhe_gen.net.pcap import UdpDatagram, read_udp_payloads, write_pcap

    ct = _ciphertext()
    payloads = ciphertext_packets(ct, 9, TOY.log_scale, segment=20)
    datagrams = [UdpDatagram(0x0A000002, 0x0A000064, 4791, 7000 if k % 3 else 7001, p) for k, p in
                 enumerate(payloads + [b"not ours"])]
    path = tmp_path / "cap.pcap"
    assert write_pcap(path, datagrams) == len(datagrams)
    raw = path.read_bytes()
    assert struct.unpack_from("<IHHiIII", raw)[0] == 0xA1B2C3D4
    frame = raw[24 + 16:24 + 16 + struct.unpack_from("<IIII", raw, 24)[2]]
    ip = frame[14:34]
    words = struct.unpack("!10H", ip)
    assert sum(words) % 0xFFFF == 0                                 # the IPv4 header checksums to zero
    assert frame[12:14] == b"\x08\x00" and ip[9] == 17 and frame[34 + 2:34 + 4] == (7001).to_bytes(2, "big")
    got, skipped = read_udp_payloads(path)
    assert [d.payload for d in got] == [d.payload for d in datagrams] and skipped == 0
    got, skipped = read_udp_payloads(path, port=7000)
    assert len(got) + skipped == len(datagrams) and all(d.dst_port == 7000 for d in got)
    out = tmp_path / "ct.json"
    assert main(["net", "receive", "--pcap", str(path), "-o", str(out)]) == 0
    back = json.loads(out.read_text())
    assert back["c0"] == ct.c0 and back["c1"] == ct.c1
    with pytest.raises(ParameterError, match="pcap"):
        read_udp_payloads(tmp_path / "ct.json")
