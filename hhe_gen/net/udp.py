"""Packets on a real UDP socket: :func:`receive` reassembles messages from a port, :func:`send`
sends payloads (the way back: a ciphertext to the accelerator)."""

from __future__ import annotations

import socket
import time

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from hhe_gen.models.wire import MAX_PAYLOAD, Reassembler

__all__ = ["receive", "send", "through_loopback", "RECEIVE_BUFFER"]


RECEIVE_BUFFER = 8 << 20
"""Bytes of receive buffer :func:`receive` asks for."""


def _endpoint(host: str, port: int, what: str) -> tuple[str, int]:
    check_int(f"{what} port", port, 0, 65535)
    if not isinstance(host, str) or not host:
        raise ParameterError(f"{what} host", host, "an IPv4 address or host name")
    return host, port


def receive(port: int, *, host: str = "0.0.0.0", messages: int = 1, timeout: float = 10.0,
            reassembler: Reassembler | None = None, ready=None, progress=None, moduli=None) -> list:
    """Listen on ``host``:``port`` until ``messages`` messages are complete or failed (or
    ``timeout`` seconds pass without a packet: then what is complete so far); returns the complete
    :class:`~.wire.Message` objects in completion order.  Each payload goes through the
    reassembler (``reassembler``, else a new :class:`~.wire.Reassembler` with ``moduli``): a
    damaged packet (its CRC-32 fails) is dropped and a later good copy taken; a message with two
    different payloads for one position, or a residue >= its prime, fails and is never returned
    (the reassembler's ``errors`` name it and the position).  ``ready(port)`` is called once the socket
    is bound (the port actually bound when ``port`` is 0); ``progress(accepted, dropped)`` after
    every packet.  The socket asks for a receive buffer of :data:`RECEIVE_BUFFER` bytes, so that a
    ciphertext arriving at line rate (a DNA-HHE one is 276 packets, 400 kB) is not dropped while the
    reassembler works (the kernel may cap it: ``net.core.rmem_max``)."""
    rx = reassembler if reassembler is not None else Reassembler(moduli=moduli)
    check_int("messages", messages, 1)
    failed_before = set(rx.errors)
    addr = _endpoint(host, port, "listen")
    done = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(addr)
        except OSError as exc:
            raise ParameterError("--port", port, f"a UDP port this machine can listen on ({exc.strerror})") from None
        sock.settimeout(timeout)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        if ready is not None:
            ready(sock.getsockname()[1])
        while len(done) + len(set(rx.errors) - failed_before - {m.id for m in done}) < messages:
            try:
                payload = sock.recv(MAX_PAYLOAD + 1)       # one byte more: an oversized payload shows
            except socket.timeout:
                break
            msg = rx.feed(payload)
            if msg is not None:
                done.append(msg)
            if progress is not None:
                progress(rx.accepted, sum(rx.dropped.values()))
    return done


def send(payloads, host: str, port: int, *, gap: float = 0.0) -> int:
    """Send every payload as one UDP datagram to ``host``:``port`` (``gap`` seconds between
    them); the number sent."""
    addr = _endpoint(host, port, "destination")
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for payload in payloads:
            sock.sendto(payload, addr)
            sent += 1
            if gap:
                time.sleep(gap)
    return sent


def through_loopback(payloads, *, messages: int = 1, reassembler: Reassembler | None = None,
                     timeout: float = 10.0, moduli=None) -> list:
    """Send ``payloads`` over a UDP socket on the loopback to :func:`receive` (a thread of this
    process, on a free port) until ``messages`` messages are complete; the messages it completed."""
    import threading

    payloads = list(payloads)
    bound, port, out = threading.Event(), {}, {}

    def listen():
        out["messages"] = receive(0, host="127.0.0.1", messages=messages, timeout=timeout,
                                  reassembler=reassembler, moduli=moduli,
                                  ready=lambda p: (port.update(p=p), bound.set()))

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    if not bound.wait(timeout):
        raise RuntimeError("the loopback receiver did not start")
    send(payloads, "127.0.0.1", port["p"])
    listener.join(2 * timeout)
    return out.get("messages", [])
