"""Packets over a real UDP socket on the loopback: ``hhe-gen net send`` of a ciphertext file and
``hhe-gen net receive`` on the other end give back the same file; garbage datagrams between them
are dropped and counted; a damaged copy of every packet before the genuine one (issue 36) is a
checksum drop and the genuine ciphertext is received; a message with two different payloads for
one position, or a residue >= its prime, is refused and nothing is written; bad options are
refused with the option named."""

import json
import socket
import threading

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.models import ckks
from hhe_gen.net.udp import through_loopback
from hhe_gen.models.wire import Reassembler, ciphertext_packets, parse, seal
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
    assert rx.dropped["short"] == len(payloads) and rx.dropped["checksum"] == len(payloads)


def _damaged(payload, rng):
    """The payload with one bit flipped in a coefficient (as the issue's corrupted copies)."""
    b = bytearray(payload)
    b[24 + rng.randrange(len(b) - 28)] ^= 1 << rng.randrange(8)
    return bytes(b)


def test_damaged_copies_first_then_the_genuine_ones():
    import random
    rng = random.Random(36)
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, 3, TOY.log_scale, segment=20)
    rx = Reassembler(moduli=TOY.moduli)
    msgs = through_loopback([q for p in payloads for q in (_damaged(p, rng), p)], reassembler=rx, timeout=5)
    assert len(msgs) == 1 and not rx.errors
    got = msgs[0].ciphertext(TOY.moduli)
    assert (got.c0, got.c1, got.scale, got.form) == (ct.c0, ct.c1, ct.scale, ct.form)
    assert rx.dropped["checksum"] == len(payloads) == rx.accepted


def _conflicting(payload):
    """Another well-formed payload for the same packet: its first coefficient changed, the CRC
    recomputed (a sender's fault, not the network's)."""
    b = bytearray(payload[:-4])
    b[24] ^= 1
    return seal(bytes(b))


def test_a_conflict_or_a_residue_fails_the_message_without_waiting():
    """Two different payloads for one packet: receive() returns at once with no message, the
    reassembler names the failure; so does a residue >= its prime with the moduli given."""
    import time
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, 3, TOY.log_scale, segment=20)
    rx = Reassembler()
    t0 = time.monotonic()
    msgs = through_loopback([payloads[0], _conflicting(payloads[0])] + payloads[1:], reassembler=rx, timeout=5)
    assert msgs == [] and rx.errors[3].reason == "conflict" and time.monotonic() - t0 < 4
    assert rx.dropped["conflict"] == 1
    big = [list(r) for r in ct.c0]
    big[0][5] = TOY.moduli[0] + 5
    bad = ciphertext_packets(type(ct)(big, ct.c1, ct.scale, ct.form), 4, TOY.log_scale, segment=20)
    rx = Reassembler(moduli=TOY.moduli)
    assert through_loopback(bad, reassembler=rx, timeout=5) == []
    err = rx.errors[4]
    assert (err.reason, err.row, err.index) == ("residue", 0, 5)


def test_cli_receive_keeps_the_genuine_packets_and_refuses_a_conflict(tmp_path):
    """``net receive --port``: damaged copies first, then the genuine packets: the ciphertext file is
    the genuine one (exit 0); a conflicting payload: exit 1 and no file."""
    import random
    import time
    rng = random.Random(7)
    ct = _ciphertext()
    payloads = ciphertext_packets(ct, 3, TOY.log_scale, segment=16)
    for stream, rc in [([q for p in payloads for q in (_damaged(p, rng), p)], 0),
                       ([payloads[1], _conflicting(payloads[1])] + payloads, 1)]:
        dst = tmp_path / f"back{rc}.json"
        port = _free_port()
        status = {}
        t = threading.Thread(target=lambda: status.update(rc=main(["net", "receive", "--port", str(port), "--host",
                                                                    "127.0.0.1", "--timeout", "3", "-o", str(dst)])))
        t.start()
        time.sleep(0.5)
        from hhe_gen.net.udp import send
        send(stream, "127.0.0.1", port)
        t.join(10)
        assert status["rc"] == rc
        if rc == 0:
            back = json.loads(dst.read_text())
            assert (back["c0"], back["c1"]) == (ct.c0, ct.c1)
            assert all(parse(p)[0].message == 3 for p in payloads)
        else:
            assert not dst.exists()


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


def test_cli_receive_with_params_refuses_a_residue_of_its_prime(tmp_path, capsys):
    """``net receive --params``: a message carrying a coefficient >= its row's prime fails (exit 1,
    one error line naming it, no file); without --params the primes are unknown and it is written."""
    from hhe_gen.models.ckks import Ciphertext
    from hhe_gen.net.pcap import UdpDatagram, write_pcap

    ct = _ciphertext()
    bad = Ciphertext([list(r) for r in ct.c0], [list(r) for r in ct.c1], ct.scale, ct.form)
    bad.c0[0][5] = TOY.moduli[0]                       # one past the largest residue of q_0
    path = tmp_path / "cap.pcap"
    write_pcap(path, [UdpDatagram(0x0A000002, 0x0A000064, 4791, 7000, p)
                      for p in ciphertext_packets(bad, 4, TOY.log_scale, segment=20)])
    out = tmp_path / "ct.json"
    capsys.readouterr()
    assert main(["net", "receive", "--pcap", str(path), "--params", "toy", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hhe-gen: error: message 4 failed") and not out.exists()
    assert main(["net", "receive", "--pcap", str(path), "-o", str(out)]) == 0 and out.exists()
