"""ModAdd / ModSub at 64 bits against (a + b) mod q / (a - b) mod q (:func:`addsub`); see
:mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assume, Const, Mux, Signal

from hhe_gen.flow.proof import ProofResult, proof

from ..common.contract import induction_depth, pipeline_contract
from ..common.sby import run_harness
from .rtl_common import GROUP, arith_cores, operands_below_q, proof_result, skip_without_cores


def primes64():
    from hhe_gen.params import ntt_primes
    return tuple(ntt_primes(1 << 16, 64, 2))


def _addsub_spec(op, moduli, width):
    """(a + b) mod q / (a - b) mod q as a certificate: AnyConst r < q and c in {0, 1} with
    a + b == r + c*q (add) or a + c*q == b + r (sub), for the selected prime."""
    def spec(m, ops):
        a, b = ops["a"], ops["b"]
        sel = ops.get("sel", 0)
        r = Signal(width, name="cert_r")
        c = Signal(name="cert_c")
        m.d.comb += [r.eq(AnyConst(width)), c.eq(AnyConst(1))]
        for i, q in enumerate(moduli):
            cq = Mux(c, Const(q, width), 0)
            cond = ((a + b == r + cq) if op == "add" else (a + cq == b + r)) & (r < q)
            m.d.comb += Assume(cond if len(moduli) == 1 else (sel != i) | cond,
                               f"certificate for prime {i}")
        return r
    return spec


def addsub_expr(op, moduli, width):
    """(a + b) % q / (a + (q - b)) % q as a plain expression (the stream scoreboard's spec)."""
    def spec(ops):
        a, b = ops["a"], ops["b"]
        if op == "add":
            vals = [((a + b) % q)[:width] for q in moduli]
        else:
            vals = [((a + (Const(q, width) - b)[:width]) % q)[:width] for q in moduli]
        return vals[0] if len(moduli) == 1 else Array(vals)[ops["sel"]]
    return spec


def addsub(ctx, op: str, latency: int, mode: str, moduli=None) -> ProofResult:
    """ModAdd/ModSub at 64 bits against (a + b) mod q / (a - b) mod q (certificate spec).

    mode "prove": k-induction, no stalls, depth latency + 2; "bmc": stalls and free inputs,
    depth 6; "cover": the check is reached (and while stalled).  ``moduli`` builds the unit for
    other primes than the specification's (a mutant).
    """
    if (skip := skip_without_cores()) is not None:
        return skip
    arith = arith_cores()
    spec_moduli = primes64()
    cls = arith.ModAdd if op == "add" else arith.ModSub
    dut = cls(spec_moduli if moduli is None else moduli, 64, latency=latency)
    harness = pipeline_contract(dut, _addsub_spec(op, spec_moduli, 64),
                                operand_assumption=operands_below_q(spec_moduli, 64),
                                stalls=mode != "prove")
    depth = {"prove": induction_depth(latency), "bmc": 6, "cover": 6}[mode]
    run = run_harness(harness, ctx.workdir, f"mod{op}", mode=mode, depth=depth, timeout=ctx.timeout)
    return proof_result(run, f"latency {latency}")


for _op in ("add", "sub"):
    for _lat in (0, 1):
        for _mode, _engine in (("prove", "sby-prove"), ("bmc", "sby-bmc")):
            proof(GROUP, f"rtl-mod{_op}-64-lat{_lat}-{_mode}", engine=_engine,
                  quick=_lat == 1 and (_mode == "prove" or _op == "add"), op=_op, latency=_lat,
                  mode=_mode,
                  what=f"Mod{_op.capitalize()}: p == (a {'+' if _op == 'add' else '-'} b) mod q "
                       f"for all a, b < q, both primes, "
                       + ("every cycle from any reachable state (k-induction, no stalls)"
                          if _mode == "prove" else "any stalls and other inputs (BMC)"),
                  size="64-bit ports, two 64-bit primes")(addsub)
proof(GROUP, "rtl-modadd-64-cover", engine="sby-cover", op="add", latency=1, mode="cover",
      what="ModAdd: the checked result is reached, also during a stall",
      size="64 bits, latency 1")(addsub)
proof(GROUP, "mutant-rtl-modadd-64-wrong-prime", engine="sby-bmc", expect="FAIL", op="add",
      latency=1, mode="bmc", moduli=(primes64()[0], primes64()[1] - 2 * (1 << 17)),
      what="MUTANT: ModAdd built for another second prime than the specification's",
      size="64 bits, latency 1")(addsub)
