"""DSP tiles of the multiplier generator (:mod:`.multiplier`): one DSP-sized partial product,
either a ``*`` that Yosys maps or an ECP5 MULT18X18D primitive (or its Amaranth model) whose
input/output registers take the pipeline registers around the tiles."""

from __future__ import annotations

from amaranth.hdl import Cat, ClockSignal, Const, Instance, Signal, Value

from hhe_gen.params.errors import ParameterError

from .pipeline import Timed

__all__ = ["DSP_MODES", "check_dsp", "tile", "emit_mult18"]

DSP_MODES = ("infer", "primitive", "model")


def check_dsp(dsp, target) -> str:
    if dsp not in DSP_MODES:
        raise ParameterError("dsp", dsp, "one of " + ", ".join(repr(d) for d in DSP_MODES))
    if dsp != "infer" and target != "ecp5":
        raise ParameterError("dsp", dsp, "'infer' unless target = 'ecp5' (MULT18X18D primitives)")
    return dsp


def tile(pipe, mode, x_tv, y_tv, tm, name) -> Timed:
    """One DSP tile x[slice] * y[slice].  "infer": a ``*`` at the current stage (named so that the
    butterfly's tile sharing recognises it); "primitive" / "model": a MULT18X18D whose output
    register is the first register after the tiles (the result is one stage later) and whose input
    registers replace the register right before the tiles when there is one."""
    xs, ys = tm.x, tm.y
    width = xs.width + ys.width
    if mode == "infer":
        return pipe.comb(lambda x, y: x[xs.lo:xs.lo + xs.width] * y[ys.lo:ys.lo + ys.width],
                         x_tv, y_tv, shape=width, name=name)
    reg_out = pipe.registers_after() >= 1
    ex, ey = pipe.earlier(x_tv), pipe.earlier(y_tv)
    reg_in = ex is not None and ey is not None
    xv = ex if reg_in else pipe.now(x_tv)
    yv = ey if reg_in else pipe.now(y_tv)
    xa = Value.cast(xv)[xs.lo:xs.lo + xs.width]
    ya = Value.cast(yv)[ys.lo:ys.lo + ys.width]
    p = Signal(width, name=pipe._name(name))
    emit_mult18(pipe.m, xa, ya, p, pipe.en, reg_in=reg_in, reg_out=reg_out, model=mode == "model",
                name=pipe._name(name + "_dsp"))
    return Timed(p, pipe.stage + (1 if reg_out else 0))


def emit_mult18(m, a, b, p, en, *, reg_in: bool, reg_out: bool, model: bool, name: str):
    """An unsigned ECP5 MULT18X18D: p = a * b (a, b at most 18 bits, zero-extended), inputs
    registered (REG_INPUTA/B on CLK0, CE0 = en) when ``reg_in``, output registered (REG_OUTPUT)
    when ``reg_out``.  ``model``: the same behaviour with Amaranth registers and ``*`` (the
    simulator cannot run the primitive)."""
    if len(a) > 18 or len(b) > 18:
        raise AssertionError("MULT18X18D operands are at most 18 bits")
    if model:
        ar, br = Signal(18, name=f"{name}_a"), Signal(18, name=f"{name}_b")
        prod = Signal(36, name=f"{name}_p")
        if reg_in:
            with m.If(en):
                m.d.sync += [ar.eq(a), br.eq(b)]
        else:
            m.d.comb += [ar.eq(a), br.eq(b)]
        if reg_out:
            with m.If(en):
                m.d.sync += prod.eq(ar * br)
        else:
            m.d.comb += prod.eq(ar * br)
        m.d.comb += p.eq(prod[:len(p)])
        return
    a18 = Cat(a, Const(0, 18 - len(a))) if len(a) < 18 else a
    b18 = Cat(b, Const(0, 18 - len(b))) if len(b) < 18 else b
    prod = Signal(36, name=f"{name}_p")
    clk = "CLK0"
    ports = {f"i_A{i}": a18[i] for i in range(18)}
    ports.update({f"i_B{i}": b18[i] for i in range(18)})
    ports.update({f"i_C{i}": Const(0, 1) for i in range(18)})
    ports.update({f"o_P{i}": prod[i] for i in range(36)})
    m.submodules[name] = Instance(
        "MULT18X18D",
        p_REG_INPUTA_CLK=clk if reg_in else "NONE", p_REG_INPUTA_CE="CE0", p_REG_INPUTA_RST="RST0",
        p_REG_INPUTB_CLK=clk if reg_in else "NONE", p_REG_INPUTB_CE="CE0", p_REG_INPUTB_RST="RST0",
        p_REG_INPUTC_CLK="NONE", p_REG_PIPELINE_CLK="NONE",
        p_REG_OUTPUT_CLK=clk if reg_out else "NONE", p_REG_OUTPUT_CE="CE0", p_REG_OUTPUT_RST="RST0",
        p_GSR="DISABLED", p_RESETMODE="SYNC",
        i_SIGNEDA=Const(0, 1), i_SIGNEDB=Const(0, 1), i_SOURCEA=Const(0, 1), i_SOURCEB=Const(0, 1),
        i_CLK0=ClockSignal("sync"), i_CLK1=Const(0, 1), i_CLK2=Const(0, 1), i_CLK3=Const(0, 1),
        i_CE0=en, i_CE1=Const(1, 1), i_CE2=Const(1, 1), i_CE3=Const(1, 1),
        i_RST0=Const(0, 1), i_RST1=Const(0, 1), i_RST2=Const(0, 1), i_RST3=Const(0, 1),
        **ports)
    m.d.comb += p.eq(prod[:len(p)])
