"""The generated accelerator as a LiteX (Migen) ``Instance``, built from its manifest's port table.

``hhe-gen generate accel`` writes ``<name>.v`` and ``<name>.json``; the manifest's ``ports`` list
every Verilog port with its width and, for the stream payloads, the struct fields (name, offset,
width).  :class:`AcceleratorInstance` reads that table, adds the Verilog to the platform and
presents the ports as LiteX stream endpoints and plain signals, so nothing here repeats the
engine's layouts by hand: a port or a field the table does not have is an error naming it.

Parameters
----------
platform : LiteX platform    the Verilog file is added to it
manifest : dict              the accelerator's manifest (``hhe_gen.soc.accel_instance.load_manifest``)
verilog : path               ``<name>.v``
cd : str                     the clock domain of the accelerator (default "sys")

Members
-------
instr : stream.Endpoint([("data", 64)])                     sink: instruction words
cmd : stream.Endpoint([("addr", 32), ("count", 17), ("write", 1)])   source: memory commands
wdata : stream.Endpoint([("data", 64)])                     source: write beats (``last``)
rdata : stream.Endpoint([("data", 64)])                     sink: read beats (``last``)
udp_tx : stream.Endpoint(eth_udp_user_description(32))      source: packets (network unit built)
udp_rx : stream.Endpoint(eth_udp_user_description(32))      sink: arriving packets
abort : Signal()                                            in: soft reset
status : dict name -> Signal                                out: busy, error, error_cause,
                                                            error_position, notify, notify_code, cycle
completed : list of dict field -> Signal                    out: one per lane (valid, position,
                                                            unit, dispatched, finished)
completed_units : list of str                               the unit of each lane
has_network : bool

Latency
-------
None of its own: wires only.
"""

from __future__ import annotations

import json
from pathlib import Path

from migen import ClockSignal, Instance, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from hhe_gen.params.errors import ParameterError

__all__ = ["load_manifest", "AcceleratorInstance", "STATUS_PORTS"]

STATUS_PORTS = ("busy", "error", "error_cause", "error_position", "notify", "notify_code", "cycle")


def load_manifest(path) -> dict:
    """The manifest JSON at ``path`` (written by ``hhe-gen generate accel``)."""
    path = Path(path)
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError("manifest", str(path), f"a readable accelerator manifest ({exc})") from None
    if manifest.get("core") != "accel" or "ports" not in manifest:
        raise ParameterError("manifest", str(path), "a manifest of `hhe-gen generate accel` (core 'accel', ports)")
    return manifest


def _udp_layout():
    from liteeth.common import eth_udp_user_description
    return eth_udp_user_description(32)


class AcceleratorInstance(LiteXModule):
    """The accelerator's Verilog behind stream endpoints (module docstring)."""

    def __init__(self, platform, manifest: dict, verilog, cd: str = "sys"):
        self.module = manifest["module"]
        self._ports = {row["name"]: row for row in manifest["ports"]}
        self._signals = {}
        self.has_network = "o_udp__payload" in self._ports
        platform.add_source(str(verilog))

        self.instr = stream.Endpoint([("data", 64)])
        self.cmd = stream.Endpoint([("addr", 32), ("count", 17), ("write", 1)])
        self.wdata = stream.Endpoint([("data", 64)])
        self.rdata = stream.Endpoint([("data", 64)])
        self.abort = self._port("abort")
        self.status = {name: self._port(name) for name in STATUS_PORTS}

        self._sink("i_instr", self.instr, {}, payload_is_data=True)
        self._source("mem__cmd", self.cmd, {"addr": "addr", "count": "count", "write": "write"})
        self._source("mem__wdata", self.wdata, {"data": "data", "last": "last"})
        self._sink("mem__rdata", self.rdata, {"data": "data", "last": "last"})
        if self.has_network:
            fields = {"data": "data", "last": "last", "last_be": "last_be", "ip_address": "ip_address",
                      "src_port": "src_port", "dst_port": "dst_port", "length": "length"}
            self.udp_tx = stream.Endpoint(_udp_layout())
            self.udp_rx = stream.Endpoint(_udp_layout())
            self._source("o_udp", self.udp_tx, fields)
            self._sink("i_udp", self.udp_rx, fields)

        row = self._row("completed")
        lanes = self._port("completed")
        self.completed_units = list(manifest.get("interface", {}).get("completed_lanes", []))
        self.completed = []
        for k in range(row["elements"]):
            base = k * row["element_width"]
            self.completed.append({f["name"]: lanes[base + f["offset"]:base + f["offset"] + f["width"]]
                                   for f in row["element_fields"]})

        ports = {"i_clk": ClockSignal(cd), "i_rst": ResetSignal(cd)}
        for name, signal in self._signals.items():
            ports[("i_" if self._ports[name]["dir"] == "in" else "o_") + name] = signal
        self.specials += Instance(self.module, **ports)

    def _row(self, name: str) -> dict:
        row = self._ports.get(name)
        if row is None:
            raise ParameterError("manifest", self.module, f"a port table with the port {name!r}")
        return row

    def _port(self, name: str) -> Signal:
        if name not in self._signals:
            self._signals[name] = Signal(self._row(name)["width"], name=name)
        return self._signals[name]

    def _field(self, port: str, field: str):
        row = self._row(port)
        for f in row.get("fields", []):
            if f["name"] == field:
                return self._port(port)[f["offset"]:f["offset"] + f["width"]]
        raise ParameterError("manifest", self.module, f"a field {field!r} in the port {port!r}")

    def _source(self, prefix: str, ep, fields: dict):
        """The accelerator drives ``prefix`` (valid, payload) into the LiteX source ``ep``."""
        self.comb += [ep.valid.eq(self._port(prefix + "__valid")), self._port(prefix + "__ready").eq(ep.ready)]
        for ours, theirs in fields.items():
            self.comb += getattr(ep, theirs).eq(self._field(prefix + "__payload", ours))

    def _sink(self, prefix: str, ep, fields: dict, payload_is_data: bool = False):
        """The LiteX sink ``ep`` drives the accelerator's ``prefix`` input stream."""
        self.comb += [self._port(prefix + "__valid").eq(ep.valid), ep.ready.eq(self._port(prefix + "__ready"))]
        if payload_is_data:
            self.comb += self._port(prefix + "__payload").eq(ep.data)
        for ours, theirs in fields.items():
            self.comb += self._field(prefix + "__payload", ours).eq(getattr(ep, theirs))
