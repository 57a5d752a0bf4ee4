"""Keccak-f[1600] in hardware: the round function and an iterative permutation core.

The round function (:func:`keccak_round_hw`) is the combinational network of one round of FIPS 202
(theta, rho, pi, chi, iota) written lane by lane; the iterative core (:class:`KeccakF1600`)
keeps the 1600-bit state in a register and applies ``rounds_per_cycle`` rounds per clock.

State encoding (the same everywhere in hhe-gen): a 1600-bit value whose lane ``i`` (lane
``(x, y)`` at ``i = x + 5*y``) is bits ``64*i .. 64*i+63``.  As an integer this is
``int.from_bytes(state_to_bytes(lanes), "little")`` of :mod:`hhe_gen.models.keccak`, i.e. byte
``b`` of the sponge's state is bits ``8*b .. 8*b+7``.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.keccak import RHO_OFFSETS, ROUND_CONSTANTS
from hhe_gen.params.errors import ParameterError

__all__ = [
    "ROUNDS_PER_CYCLE",
    "STATE_BITS",
    "LANE_BITS",
    "check_rounds_per_cycle",
    "state_lanes",
    "keccak_round_hw",
    "KeccakRounds",
    "KeccakF1600",
]

#: Allowed ``rounds_per_cycle`` values (the divisors of 24).
ROUNDS_PER_CYCLE: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 24)
STATE_BITS = 1600
LANE_BITS = 64
NUM_ROUNDS = 24


def check_rounds_per_cycle(rounds_per_cycle) -> int:
    """Validate ``rounds_per_cycle`` and return it (raises ParameterError otherwise)."""
    if isinstance(rounds_per_cycle, bool) or rounds_per_cycle not in ROUNDS_PER_CYCLE:
        raise ParameterError("rounds_per_cycle", rounds_per_cycle,
                             "one of 1, 2, 3, 4, 6, 8, 12, 24 (a divisor of 24)")
    return int(rounds_per_cycle)


def state_lanes(state: Value) -> list[Value]:
    """The 25 lanes of a 1600-bit state value (lane ``x + 5*y`` is bits 64*i .. 64*i+63)."""
    return [state[LANE_BITS * i:LANE_BITS * (i + 1)] for i in range(25)]


def _rotl(lane: Value, amount: int) -> Value:
    """Rotate a 64-bit lane left by a constant: pure wiring."""
    amount %= LANE_BITS
    if amount == 0:
        return lane
    return Cat(lane[LANE_BITS - amount:], lane[:LANE_BITS - amount])


def keccak_round_hw(m: Module | None, lanes, rc, *, name: str = "rnd",
                    rho_offsets=RHO_OFFSETS) -> list[Value]:
    """Build the combinational network of one Keccak-f[1600] round.

    Written from FIPS 202 section 3.2 in the array view ``A[x][y]`` (independently of the Python
    model's integer shifts): theta (column parities), rho and pi (pure wiring: each lane is
    rotated by ``RHO_OFFSETS`` and moved from ``(x, y)`` to ``(y, 2x + 3y)``), chi (row-wise
    non-linear step) and iota (XOR of the round constant into lane (0, 0)).

    Parameters
    ----------
    m : Module | None
        If a module is given, theta's five D values go on comb signals ``<name>_d*`` in a
        submodule ``theta`` of ``m`` and the 25 output lanes on ``<name>_a*`` in a submodule
        ``chi``: chained rounds then stay a DAG, and the simulator re-evaluates each part once
        per change of its inputs.  With None the result is a plain expression tree (fine for a
        single round).
    lanes : list of 25 Values (64 bits)
        The input state, lane ``(x, y)`` at index ``x + 5*y``.
    rc : Value | int
        The 64-bit iota round constant (a constant, or a signal selecting one at run time).
    name : str
        Prefix of the comb signals.
    rho_offsets : sequence of 25 ints
        Rotation of lane ``x + 5*y`` (FIPS 202's, from the model, unless a test substitutes a
        broken table to check that a proof notices).

    Returns
    -------
    list of 25 Values (64 bits): the state after the round.
    """
    if len(lanes) != 25:
        raise ParameterError("lanes", f"<{len(lanes)} lanes>", "exactly 25 lanes")
    a = [[lanes[x + 5 * y] for y in range(5)] for x in range(5)]
    theta_m = chi_m = None
    if m is not None:
        m.submodules.theta = theta_m = Module()
        m.submodules.chi = chi_m = Module()

    def named(part, value, sig_name):
        if part is None:
            return value
        sig = Signal(LANE_BITS, name=sig_name)
        part.d.comb += sig.eq(value)
        return sig

    # theta: column parities C[x]; D[x] = C[x-1] ^ rot(C[x+1], 1)
    col = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
    d = [named(theta_m, col[(x + 4) % 5] ^ _rotl(col[(x + 1) % 5], 1), f"{name}_d{x}")
         for x in range(5)]
    # rho + pi: B[y][2x+3y] = rot(A[x][y] ^ D[x], r[x][y])
    b = [[None] * 5 for _ in range(5)]
    for x in range(5):
        for y in range(5):
            b[y][(2 * x + 3 * y) % 5] = _rotl(a[x][y] ^ d[x], rho_offsets[x + 5 * y])
    # chi + iota
    out = [None] * 25
    for y in range(5):
        for x in range(5):
            v = b[x][y] ^ (~b[(x + 1) % 5][y] & b[(x + 2) % 5][y])
            if x == 0 and y == 0:
                v = v ^ rc
            out[x + 5 * y] = named(chi_m, v, f"{name}_a{x}_{y}")
    return out


class KeccakRounds(wiring.Component):
    """``rounds_per_cycle`` consecutive Keccak rounds as one combinational block.

    Round ``j`` of the block (j = 0 .. k-1) uses the iota constant of round ``step*k + j``, so
    chaining the block ``24/k`` times with ``step = 0, 1, ...`` computes Keccak-f[1600].

    Parameters
    ----------
    rounds_per_cycle : int
        k, one of :data:`ROUNDS_PER_CYCLE`.

    Members
    -------
    i_state : In(1600)          the state before the block
    step : In(range(24 // k))   which group of k rounds (absent when k = 24)
    o_state : Out(1600)         the state after rounds ``step*k .. step*k + k - 1``

    Latency: combinational (0 cycles).
    """

    # FIPS 202's tables (from the model); a subclass may substitute broken ones (mutation tests)
    _round_constants = ROUND_CONSTANTS
    _rho_offsets = RHO_OFFSETS

    @quiet_on_error
    def __init__(self, rounds_per_cycle: int = 1):
        self.rounds_per_cycle = k = check_rounds_per_cycle(rounds_per_cycle)
        self.steps = NUM_ROUNDS // k
        members = {"i_state": In(STATE_BITS), "o_state": Out(STATE_BITS)}
        if self.steps > 1:
            members["step"] = In(range(self.steps))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        k, steps = self.rounds_per_cycle, self.steps
        lanes = state_lanes(self.i_state)
        for j in range(k):
            if steps == 1:
                rc = Const(self._round_constants[j], LANE_BITS)
            else:
                table = Array(Const(self._round_constants[s * k + j], LANE_BITS)
                              for s in range(steps))
                rc = Signal(LANE_BITS, name=f"rc{j}")
                m.d.comb += rc.eq(table[self.step])
            # one submodule per round (theta and chi inside): the simulator then re-evaluates a
            # part only when its inputs change, not the whole chain once per level of the chain
            stage = Module()
            m.submodules[f"round{j}"] = stage
            lanes = keccak_round_hw(stage, lanes, rc, name=f"r{j}", rho_offsets=self._rho_offsets)
        m.d.comb += self.o_state.eq(Cat(*lanes))
        return m


class KeccakF1600(wiring.Component):
    """Iterative Keccak-f[1600] permutation: a state register and ``rounds_per_cycle`` rounds.

    A state taken from ``i_stream`` is permuted and offered on ``o_stream``.  The first k rounds
    are applied while the input is loaded, so the result is valid exactly ``24 / k`` cycles after
    the input is accepted.  One permutation is in flight at a time; a new input is accepted in
    the cycle the previous result is taken, so back-to-back permutations have an initiation
    interval of ``24 / k`` cycles.

    Parameters
    ----------
    rounds_per_cycle : int
        k, one of 1, 2, 3, 4, 6, 8, 12, 24 (combinational rounds between register stages).

    Members
    -------
    i_stream : In(stream.Signature(1600))
        The state to permute (lane ``x + 5*y`` in bits ``64*i .. 64*i + 63``).
    o_stream : Out(stream.Signature(1600))
        The permuted state.  ``o_stream.payload`` always shows the state register, also while the
        permutation runs (``valid`` low): after ``j`` cycles it holds rounds ``0 .. j*k - 1`` of
        the input, which lets tests check every intermediate state.

    Attributes
    ----------
    latency : int   24 / k cycles from input accepted to output valid
    ii : int        24 / k cycles between accepted inputs (with an always-ready consumer)

    The cycle count never depends on the data.
    """

    @quiet_on_error
    def __init__(self, rounds_per_cycle: int = 1):
        self.rounds_per_cycle = check_rounds_per_cycle(rounds_per_cycle)
        self.latency = self.ii = NUM_ROUNDS // self.rounds_per_cycle
        super().__init__({
            "i_stream": In(stream.Signature(STATE_BITS)),
            "o_stream": Out(stream.Signature(STATE_BITS)),
        })

    def elaborate(self, platform):
        m = Module()
        steps = self.latency
        m.submodules.rounds = rounds = KeccakRounds(self.rounds_per_cycle)
        state = Signal(STATE_BITS)
        busy = Signal()
        done = Signal()
        # 0 whenever idle, so a new input starts at round 0 (one bit at least: no zero-width
        # register in the Verilog export)
        step = Signal(range(max(steps, 2)))

        take_in = self.i_stream.valid & self.i_stream.ready
        m.d.comb += [
            self.i_stream.ready.eq(~busy & (~done | self.o_stream.ready)),
            self.o_stream.valid.eq(done),
            self.o_stream.payload.eq(state),
            rounds.i_state.eq(Mux(take_in, self.i_stream.payload, state)),
        ]
        if steps > 1:
            m.d.comb += rounds.step.eq(step)

        with m.If(self.o_stream.valid & self.o_stream.ready):
            m.d.sync += done.eq(0)
        with m.If(take_in):
            m.d.sync += state.eq(rounds.o_state)
            if steps == 1:
                m.d.sync += done.eq(1)
            else:
                m.d.sync += [busy.eq(1), step.eq(1)]
        with m.Elif(busy):
            m.d.sync += state.eq(rounds.o_state)
            with m.If(step == steps - 1):
                m.d.sync += [busy.eq(0), done.eq(1), step.eq(0)]
            with m.Else():
                m.d.sync += step.eq(step + 1)
        return m
