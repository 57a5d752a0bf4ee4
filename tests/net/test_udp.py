"""Packets over a real UDP socket on the loopback: ``hhe-gen net send`` of a ciphertext file and
``hhe-gen net receive`` on the other end give back the same file; garbage datagrams between them
are dropped and counted; bad options are refused with the option named."""

import json
import socket
import threading

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.models import ckks
from hhe_gen.net.udp import receive, send
from hhe_gen.models.wire import Reassembler, ciphertext_packets
from hhe_gen.params import preset

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
    bound = threading.Event()
    port = {}
    out = {}

    def listen():
        out["msgs"] = receive(0, host="127.0.0.1", timeout=5, reassembler=rx,
                              ready=lambda p: (port.update(p=p), bound.set()))

    t = threading.Thread(target=listen)
    t.start()
    assert bound.wait(5)
    mixed = []
    for p in payloads:
        mixed += [b"not a packet", p[:30], p]          # the last good packet ends the reception
    send(mixed, "127.0.0.1", port["p"])
    t.join(10)
    assert len(out["msgs"]) == 1
    got = out["msgs"][0].ciphertext()
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
