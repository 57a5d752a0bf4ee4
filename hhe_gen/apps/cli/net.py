"""``hhe-gen net``: the accelerator's packets on a real UDP socket (docs/wire.md).

    hhe-gen net receive --port P [--host H] [--timeout S] [--rows R] [--params P] -o ct.json
    hhe-gen net receive --pcap capture.pcap [--port P] [--rows R] [--params P] -o ct.json
    hhe-gen net send --in ct.json --to HOST:PORT [--message ID] [--segment K] [--params P]

``receive`` reassembles one CKKS ciphertext (c0 and c1) from the packets arriving on the port, or
from the UDP datagrams of a capture file (``--pcap``: classic pcap, e.g. ``tcpdump -w``; with
``--port`` only those to that port), and writes it in the interchange format; the packets it
dropped are counted by reason.  A message that failed (two different payloads for one position,
or with ``--params`` a residue >= its row's prime) is named with its reason and exits 1 with no
file, as does no complete message.  ``send`` cuts
a ciphertext file into packets and sends them (the way back: a ciphertext for the accelerator to
decrypt).
"""

from __future__ import annotations

import sys

from hhe_gen.params import ParameterError

from .common import check_output, options_named as _options_named, write_json_output

__all__ = ["register"]


MAX_TIMEOUT = 86400
"""The longest ``--timeout`` of ``net receive``, in seconds."""


def _check_words(d: dict, path: str) -> None:
    """Without --params the primes are unknown: every coefficient must at least be one 64-bit word
    of the wire (a residue of a prime of at most 64 bits)."""
    for name in ("c0", "c1"):
        for i, row in enumerate(d.get(name) or []):
            bad = next((x for x in row if not 0 <= x < 1 << 64), None)
            if bad is not None:
                raise ParameterError(f"{name}[{i}]", bad, f"residues 0 .. q_{i} - 1 < 2^64 (in {path}; give "
                                     "--params P to check each row against its prime q_i)")


def _receive(args) -> int:
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.net.udp import receive
    from hhe_gen.models.wire import Reassembler

    check_output(args.output, ("--pcap", args.pcap))
    if not args.pcap and not (0 < args.timeout <= MAX_TIMEOUT):   # also refuses nan
        raise ParameterError("--timeout", args.timeout, f"seconds of silence, more than 0 and at most {MAX_TIMEOUT} "
                             "(one day)")
    moduli = None
    if args.params is not None:
        from hhe_gen.host.interchange import params_from
        try:
            moduli = list(params_from(args.params).moduli)
        except ParameterError as exc:
            raise ParameterError("--params", args.params, exc.allowed) from None
    rx = Reassembler(rows=args.rows, moduli=moduli)
    skipped = 0
    if args.pcap:
        from hhe_gen.net.pcap import read_udp_payloads
        datagrams, skipped = read_udp_payloads(args.pcap, port=args.port)
        msgs = [m for m in (rx.feed(d.payload) for d in datagrams) if m is not None]
    elif args.port is None:
        raise ParameterError("--port", None, "a UDP port to listen on (or --pcap FILE)")
    else:
        with _options_named({"listen port": "--port", "listen host": "--host"}):
            msgs = receive(args.port, host=args.host, timeout=args.timeout, reassembler=rx,
                           ready=lambda p: console.print(f"listening on udp {args.host}:{p}"))
    rows = [("accepted", rx.accepted)] + [(f"dropped: {k}", v) for k, v in rx.dropped.items() if v]
    if args.pcap:
        rows.append(("capture records skipped (not UDP over IPv4, or another port)", skipped))
    print_table("packets", ["what", "count"], rows)
    for message, error in rx.errors.items():
        console.print(f"message {message} failed: {error}")
    if rx.errors and not msgs:
        print(f"hhe-gen: error: message {next(iter(rx.errors))} failed ({next(iter(rx.errors.values()))}); "
              f"nothing written to {args.output}", file=sys.stderr)
        return 1
    if not msgs:
        console.print("no complete ciphertext in the capture" if args.pcap else
                      f"no complete ciphertext within {args.timeout} s of silence")
        return 1
    ct = msgs[0].ciphertext(moduli)
    write_json_output(ct.to_json(), args.output)
    console.print(f"message {msgs[0].id}: {len(ct.c0)} rows of {len(ct.c0[0])} coefficients -> {args.output}")
    return 0


def _send(args) -> int:
    from hhe_gen.apps.report import console
    from hhe_gen.host.interchange import check_ciphertext_json, in_file, load_json, params_from
    from hhe_gen.models.ckks import Ciphertext
    from hhe_gen.net.udp import send
    from hhe_gen.models.wire import ciphertext_packets

    host, _, port = args.to.rpartition(":")
    if not host or not port.isdigit():
        raise ParameterError("--to", args.to, "HOST:PORT")
    d = load_json(args.input, "--in")
    check_ciphertext_json(d, args.input)
    scale = d.get("scale")
    if not isinstance(scale, (int, float)) or scale < 1 or float(scale) != 2.0 ** (round(scale).bit_length() - 1):
        raise ParameterError("scale", scale, f"a power of two (in {args.input})")
    log_scale = round(scale).bit_length() - 1
    if args.params is not None:   # every row i holds N residues 0 .. q_i - 1 of these parameters
        in_file(Ciphertext.from_json, d, params_from(args.params), path=args.input)
    else:
        _check_words(d, args.input)
    ct = Ciphertext(d["c0"], d["c1"], round(scale), d.get("form", "coeff"))
    with _options_named({"message": "--message", "segment": "--segment", "destination port": "--to",
                         "destination host": "--to"}):
        payloads = ciphertext_packets(ct, args.message, log_scale, segment=args.segment)
        n = send(payloads, host, int(port))
    console.print(f"sent {n} packets of message {args.message} to udp {host}:{port}")
    return 0


def register(sub) -> None:
    """Add ``net receive`` and ``net send``."""
    from hhe_gen.models.wire import MAX_COUNT
    p = sub.add_parser("net", help="the accelerator's packets on a UDP socket (docs/wire.md)")
    ops = p.add_subparsers(dest="net_op", required=True, metavar="receive|send",
                           help="receive a ciphertext from packets, or send one as packets")
    q = ops.add_parser("receive", help="reassemble a ciphertext from UDP packets and write its JSON")
    q.add_argument("--port", type=int, help="UDP port to listen on (with --pcap: take only datagrams to it)")
    q.add_argument("--pcap", metavar="FILE", help="read the datagrams of a capture file (classic pcap) instead")
    q.add_argument("--host", default="0.0.0.0", help="address to listen on (default all)")
    q.add_argument("--timeout", type=float, default=10.0, help="seconds of silence before giving up, more than 0 "
                   f"and at most {MAX_TIMEOUT} (default 10)")
    q.add_argument("--rows", type=int, help="rows the ciphertext must have (default: what the packets say)")
    q.add_argument("--params", help="preset name or parameters JSON file: refuse a message with a residue >= its "
                   "row's prime (default: residues are checked against the 64-bit word only)")
    q.add_argument("-o", "--output", required=True, help="ciphertext JSON to write")
    q.set_defaults(func=_receive)
    q = ops.add_parser("send", help="send a ciphertext JSON as UDP packets")
    q.add_argument("--in", dest="input", required=True, help="ciphertext JSON (interchange format)")
    q.add_argument("--to", required=True, help="HOST:PORT")
    q.add_argument("--message", type=int, default=1, help="message id (default 1)")
    q.add_argument("--segment", type=int, default=MAX_COUNT, help=f"coefficients per packet (default {MAX_COUNT})")
    q.add_argument("--params", help="preset name or parameters JSON file: check that every row i holds residues "
                   "0 .. q_i - 1 (default: only that they fit the wire's 64-bit words)")
    q.set_defaults(func=_send)
