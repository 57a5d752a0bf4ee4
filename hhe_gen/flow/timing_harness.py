"""The timing harness: a component's ports made register to register (``TimingHarness``,
``harness_verilog``), so that synthesis measures the component and not its pins.

A component's ports are not pins: a 54-bit multiplier has ~160 of them and, left as top-level
ports, would give pad-to-pad timing and might not fit the package. ``TimingHarness`` wraps the
component (the "device under test", DUT) so that every timed path is register to register and
nothing is optimised away:

* every input port (all ``In`` members of the signature, streams included) is loaded from one
  serial shift register fed by a single pin ``din``: each input bit is a distinct flip-flop, so
  no input is constant;
* every output bit is XOR-folded into ``fold`` registered pins ``dout`` (``fold`` defaults to
  ceil(output bits / 4), at most 96, so each fold is one LUT4 deep): every output bit is
  observable;
* the ports named in ``tie_high`` (default: ``en``, the pipeline enable of the arithmetic units)
  are tied to all-ones.

The DUT is kept as its own module (Yosys ``keep_hierarchy``, set by the flows of
:mod:`hhe_gen.flow.synth`) so that the harness neither optimises into it nor hides in its numbers:
the area figures (``LUT4``, ``FF``...) are the DUT's own, from ``stat`` of that module, while
``total`` holds the whole design's figures (DUT + harness; the harness adds exactly
``harness["FF"]`` = input bits + fold flip-flops and about ``fold`` LUTs). The timing of a
combinational DUT (latency 0) includes the harness's one LUT level after it.
"""

from __future__ import annotations

import re

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError

__all__ = ["TimingHarness", "harness_verilog", "default_name", "harness_facts"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MAX_FOLD = 96


class TimingHarness(wiring.Component):
    """Wraps a component so that every path is register to register and nothing is removed.

    Parameters
    ----------
    dut : wiring.Component   the component to measure (clock domain ``sync``)
    fold : int | None        number of registered output pins the outputs are XOR-folded into
                             (default: ceil(output bits / 4), at most 96; 1 .. 96)
    tie_high : iterable of str   dotted member paths tied to all-ones (default ``("en",)``;
                             names that the component does not have are ignored)

    Members
    -------
    din : In(1)        serial input feeding the input shift register
    dout : Out(fold)   registered XOR folds of all output bits

    Attributes
    ----------
    input_bits : int    bits of all input ports except the tied ones (= shift-register length)
    output_bits : int   bits of all output ports
    fold : int
    harness_ff : int    flip-flops the harness itself adds: input_bits + fold

    Latency: not a datapath; the shift register and the fold register are one stage each.
    """

    def __init__(self, dut, *, fold: int | None = None, tie_high=("en",)):
        if not isinstance(dut, wiring.Component):
            raise ParameterError("component", type(dut).__name__,
                                 "an amaranth.lib.wiring.Component (its signature names the ports)")
        self.dut = dut
        self._inputs, self._outputs, self._tied = [], [], []
        tie_high = set(tie_high)
        for path, member, value in dut.signature.flatten(dut):
            name = ".".join(str(p) for p in path)
            value = Value.cast(value)
            if member.flow == In:
                (self._tied if name in tie_high else self._inputs).append((name, value))
            else:
                self._outputs.append((name, value))
        self.input_bits = sum(len(v) for _, v in self._inputs)
        self.output_bits = sum(len(v) for _, v in self._outputs)
        if self.output_bits == 0:
            raise ParameterError("component", type(dut).__name__,
                                 "a component with at least one output bit (else nothing is measured)")
        if fold is None:
            fold = min(-(-self.output_bits // 4), _MAX_FOLD)
        if not isinstance(fold, int) or isinstance(fold, bool) or not 1 <= fold <= _MAX_FOLD:
            raise ParameterError("fold", fold, f"an integer in 1 .. {_MAX_FOLD}")
        self.fold = fold
        self.harness_ff = self.input_bits + fold
        super().__init__({"din": In(1), "dout": Out(fold)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        if self.input_bits:
            chain = Signal(self.input_bits)
            if self.input_bits == 1:
                m.d.sync += chain.eq(self.din)
            else:
                m.d.sync += chain.eq(Cat(self.din, chain[:-1]))
            offset = 0
            for _, value in self._inputs:
                m.d.comb += value.eq(chain[offset:offset + len(value)])
                offset += len(value)
        for _, value in self._tied:
            m.d.comb += value.eq(Const((1 << len(value)) - 1, len(value)))
        bits = Cat(*(v for _, v in self._outputs))
        folds = [None] * self.fold
        for i in range(len(bits)):
            j = i % self.fold
            folds[j] = bits[i] if folds[j] is None else folds[j] ^ bits[i]
        m.d.sync += self.dout.eq(Cat(*(f if f is not None else Const(0, 1) for f in folds)))
        return m


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ParameterError("name", name, "a Verilog identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return name


def default_name(component) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", type(component).__name__.lower())
    return base if _NAME.match(base) else "dut_" + base


def harness_verilog(component, *, name: str | None = None, fold: int | None = None,
                    tie_high=("en",)) -> tuple[str, TimingHarness]:
    """Wrap ``component`` in a ``TimingHarness`` and export it to Verilog.

    Parameters
    ----------
    component : wiring.Component
    name : str | None   top module name (default: the class name, lower case); the component
                        becomes the module ``<name>.dut``
    fold, tie_high      see ``TimingHarness``

    Returns
    -------
    (str, TimingHarness)   the Verilog text and the harness (for its bit counts)

    Raises
    ------
    ParameterError, ToolMissing
    """
    from amaranth.back import verilog

    from hhe_gen.flow.environment import configure_amaranth

    name = _check_name(name if name is not None else default_name(component))
    harness = TimingHarness(component, fold=fold, tie_high=tie_high)
    configure_amaranth()
    return verilog.convert(harness, name=name), harness


def harness_facts(harness: TimingHarness) -> dict:
    """The harness's own numbers, as stored with a run: input_bits, output_bits, fold, FF."""
    return {"input_bits": harness.input_bits, "output_bits": harness.output_bits,
            "fold": harness.fold, "FF": harness.harness_ff}
