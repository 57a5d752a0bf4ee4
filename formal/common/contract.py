"""The generic "pipeline contract" harness for raw pipelined units.

A raw unit (see :mod:`hhe_gen.cores.arith`) has input ports, a clock enable ``en`` (every
register advances only when it is 1), an output port and a ``latency``: the output holds the
result of the operands presented ``latency`` *enabled* cycles earlier, and keeps holding it while
``en`` is 0.

The harness proves exactly that, for one operand tuple chosen by the solver:

* tracked operands are ``AnyConst`` (any value, constrained only by ``operand_assumption``, e.g.
  ``a, b < q``), presented once, in a cycle the solver picks (``fire``); in every other cycle the
  inputs are ``AnySeq`` - arbitrary, even out of range - so other data in the pipeline cannot
  disturb the tracked result (no cross-talk, no dependence on history);
* ``en`` is ``AnySeq`` (``stalls=True``: arbitrary stalls anywhere) or constant 1;
* the harness counts enabled cycles since ``fire`` and, from the ``latency``-th one until the
  next enabled cycle, asserts ``output == spec(operands)``;
* ``spec(m, ops)`` builds the expected value as an independent Amaranth expression - a naive
  formula such as ``(a*b) % q`` or a certificate: free ``AnyConst`` values (a quotient k, a
  remainder r) constrained by ``Assume(a*b == k*q + r)`` and ``r < q``, which pins r to a*b mod q
  without a divider for the solver;
* covers: the check happens, and happens while the pipeline is stalled.

Modes: ``bmc`` (from the initial state; with stalls) is exhaustive up to its depth; with
``issue="first"`` and no stalls it is the cheapest full functional check (one checked step);
``prove`` (k-induction) closes for a feed-forward pipeline without stalls (``stalls=False``) at
depth latency + 2: every register is then a function of the last ``latency`` inputs; with
unbounded stalls no finite induction depth suffices without naming the unit's internal state, so
stalls are proven by BMC, or by induction under ``max_stall`` (at most that many disabled cycles
in a row) at depth about (latency + 1) * (max_stall + 1) + 2.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cover, Mux, Shape, Signal, Value

from .sby import formal_module

__all__ = ["pipeline_contract", "induction_depth"]


def induction_depth(latency: int, max_stall: int | None = None) -> int:
    """A k-induction depth that closes the contract for a feed-forward pipeline."""
    per_step = 1 if not max_stall else max_stall + 1
    return (latency + 1) * per_step + 2


def _port_shape(dut, name):
    return Shape.cast(Value.cast(getattr(dut, name)).shape())


def pipeline_contract(dut, spec, *, operands=None, output: str = "p", latency: int | None = None,
                      stalls: bool = True, max_stall: int | None = None,
                      operand_assumption=None, covers: bool = True, issue: str = "any"):
    """Build the contract harness (see the module docstring).

    Parameters
    ----------
    dut : raw unit      ports ``operands`` + ``en`` + ``output``; attribute ``latency``
    spec : callable(m, ops) -> Value
                        the expected output for the tracked operands ``ops`` (dict name -> Value);
                        may add ``Assume`` statements (certificates) to ``m``
    operands : list of str | None   the input ports (default: every input port but ``en``)
    output : str        the output port
    latency : int | None   default ``dut.latency``
    stalls : bool       ``en`` free (True) or always 1
    max_stall : int | None   with stalls: assume at most this many disabled cycles in a row
    operand_assumption : callable(ops) -> Value | None   assumed of the tracked operands
    covers : bool       add the covers
    issue : str         "any": the solver picks the cycle the tracked operands enter;
                        "first": they enter in the first cycle (BMC from the initial state only:
                        the cheapest full-equivalence check, one checked step at depth
                        latency + 1; use with ``stalls=False``)

    Returns
    -------
    Module   for :func:`~hhe_gen.formal.common.sby.run_harness`
    """
    from amaranth.lib import wiring

    m, _ = formal_module()
    m.submodules.dut = dut
    lat = dut.latency if latency is None else latency
    if operands is None:
        operands = [n for n, mb in dut.signature.members.items()
                    if mb.is_port and mb.flow == wiring.In and n != "en"]
    ops = {}
    for n in operands:
        shape = _port_shape(dut, n)
        const = Signal(shape, name=f"op_{n}")
        m.d.comb += const.eq(AnyConst(shape))
        ops[n] = const
    if operand_assumption is not None:
        m.d.comb += Assume(operand_assumption(ops), "tracked operands in range")

    en = Signal(name="h_en")
    m.d.comb += en.eq(AnySeq(1) if stalls else 1)
    if stalls and max_stall:
        idle = Signal(range(max_stall + 1), name="h_idle")
        m.d.sync += idle.eq(Mux(en, 0, idle + 1))
        m.d.comb += Assume(en | (idle < max_stall), "stall bound")
    fire_req = Signal(name="h_fire_req")
    if issue == "any":
        m.d.comb += fire_req.eq(AnySeq(1))
    elif issue == "first":
        first = Signal(init=1, name="h_first")
        m.d.sync += first.eq(0)
        m.d.comb += fire_req.eq(first)
    else:
        raise ValueError(f"issue {issue!r} is not 'any' or 'first'")
    issued = Signal(name="h_issued")
    age = Signal(range(lat + 2), name="h_age")
    fire = Signal(name="h_fire")
    m.d.comb += fire.eq(fire_req & ~issued & en)
    for n in operands:
        port = getattr(dut, n)
        m.d.comb += port.eq(Mux(fire, ops[n], AnySeq(_port_shape(dut, n))))
    m.d.comb += dut.en.eq(en)
    with m.If(fire):
        m.d.sync += [issued.eq(1), age.eq(1)]
    with m.Elif(issued & en & (age <= lat)):
        m.d.sync += age.eq(age + 1)

    check = Signal(name="h_check")
    m.d.comb += check.eq(fire if lat == 0 else issued & (age == lat))
    expected = Signal(_port_shape(dut, output), name="h_expected")
    m.d.comb += expected.eq(spec(m, ops))
    with m.If(check):
        m.d.comb += Assert(getattr(dut, output) == expected, "wrong result after the latency")
    # bookkeeping invariants (make the harness's own state inductive)
    m.d.comb += Assert(issued | (age == 0), "harness: age without an issue")
    if covers:
        m.d.comb += Cover(check)
        if stalls and lat > 0:
            m.d.comb += Cover(check & ~en)
    return m
