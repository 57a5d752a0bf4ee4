"""z3 proofs of the reducers' algorithmic bounds at full width (36 .. 64 bits).

A bit-level proof of a*b mod q does not finish above ~12 bits (Barrett) / ~24 bits (Montgomery)
(measured on the project's machines), so at the real widths we prove, with z3's integer arithmetic, the facts
each reducer's correctness rests on; the RTL that implements them is proven separately at small
widths with the same generator (``formal/arith/rtl.py``).  Every function here decides one
statement with the operands *symbolic* (all of them at once, not samples) and returns an
:class:`Outcome`.  Two kinds of statement:

* concrete modulus (one query per prime of a supported form): the operands are symbolic, q and
  the per-prime constants are the numbers the hardware's constant table holds (taken from
  :mod:`hhe_gen.models.modarith`);
* parametric (one query per design size): q itself is symbolic, constrained only by its form,
  which covers every prime of that form at that size, including ones no search listed.

The product x = a*b is represented by a symbolic x in [0, (q-1)^2] (or [0, 2^(2k)) in the
parametric statements), a superset of the products of a, b in [0, q): a statement proven for
every such x holds for every a, b.  (A counterexample x need not be a product; the mutants in
``formal/arith/proofs.py`` are refuted by such x, which is what their harness checks.)

Statements (names as in the functions):

``barrett_quotient``        generic Barrett (also the DNA-HHE one, same mu): with x_hi = x >> (k-1),
                            q_est = (x_hi*mu) >> (k+1) and Q = floor(x/q):
                            Q - 2 <= q_est <= Q, so r0 = x - q_est*q is in [0, 3q) and two
                            corrections suffice; optionally whether one suffices.
``barrett_quotient_symbolic``   the same with q symbolic in (2^(k-1), 2^k) and mu defined by
                            mu*q <= 2^(2k) < (mu+1)*q, for all x < 2^(2k).
``low_bits_difference``     r0 = x - qq computed modulo 2^(k+2) (only the low k+2 bits of x and of
                            the q product are built) equals the true difference whenever that lies
                            in [0, 3q) and q < 2^k.
``special_mu``              DNA-HHE: the shift-add mu product (x_hi << k) + ((x_hi*delta_hi) << s)
                            - x_hi equals x_hi*M for M = floor(2^(2k)/q) (M symbolic, defined by
                            the floor's inequalities), for every x_hi < 2^(k+1).
``special_mu_symbolic``     DNA-HHE eq. 3 for every bnd at once: q = 2^k - 2N*bnd + 1 > 2^(k-1),
                            c = 2N*bnd - 1: floor(2^(2k)/q) = 2^k + Delta - 1 with
                            Delta = 2N*bnd + floor(c^2/q), and Delta = 2N*bnd when c^2 < q.
``special_q_product``       DNA-HHE: (q_est << k) - ((q_est*bnd) << (log_n+1)) + q_est = q_est*q
                            for every q_est < 2^(k+1) (and for q symbolic by its form).
``ntt_montgomery``          ABC-FHE: the shift-add QInv network gives m = t_lo*QInv mod R with
                            QInv*q = +-1 mod R; the shift-add q network gives m*q; d = x -+ m*q is
                            a multiple of R; t = d/R is in (-q, q) (paper form) or [0, 2q)
                            (negated form): one correction.
``montgomery_symbolic``     any Montgomery reduction with q < R: x + m*q = t*R (m in [0, R)) gives
                            0 <= t < 2q; x - m*q = t*R gives -q < t < q.
``qinv_series``             the ABC-FHE geometric series: for q = 1 + 2^v*y (y symbolic),
                            (1 + 2^v y) * sum_{i<T} (-2^v y)^i - 1 = 2^r * z(y) with
                            T = ceil(r/v) (so QInv*q = 1 mod 2^r for every q of that shape).
``word_montgomery``         word-level Montgomery, per word: t' = (t >> w) + m*q_hi + carry with
                            m = -t mod 2^w and the hardware carry lo[w-1] | m[w-1] satisfies
                            t'*2^w = t + m*q, the bound B_i of each word holds, every t_i fits
                            2*width bits and t_L < 2q (one correction).
``word_montgomery_symbolic``   the same step identity and invariant t_i*2^(w*i) = x + M_i*q,
                            0 <= M_i < 2^(w*i), with q = q_hi*2^w + 1 symbolic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

__all__ = [
    "Outcome", "prove",
    "barrett_quotient", "barrett_quotient_symbolic", "low_bits_difference",
    "special_mu", "special_mu_symbolic", "special_q_product", "special_q_product_symbolic",
    "ntt_montgomery", "montgomery_symbolic", "qinv_series",
    "word_montgomery", "word_montgomery_symbolic",
]

#: Default per-query time limit (milliseconds).  Every query here takes well under a second.
TIMEOUT_MS = 60_000


@dataclass
class Outcome:
    """The verdict of one z3 query.

    Members
    -------
    status : str              "PASS" (the statement holds: its negation is unsatisfiable),
                              "FAIL" (z3 found a counterexample) or "UNKNOWN"
    statement : str           what was asked, with the concrete parameters
    counterexample : dict     variable -> int for FAIL (else empty)
    failed : list[str]        for FAIL, which parts of the statement the counterexample breaks
    seconds : float
    """
    status: str
    statement: str
    counterexample: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def __str__(self):
        text = f"{self.status}: {self.statement}"
        if self.failed:
            text += f"; violated: {', '.join(self.failed)}"
        if self.counterexample:
            text += "; counterexample " + ", ".join(f"{k}={v}" for k, v in
                                                     sorted(self.counterexample.items()))
        return text


def prove(statement: str, assumptions, goals: dict, timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """Decide ``assumptions => AND(goals)`` for all values of the free variables.

    Parameters
    ----------
    statement : str        human description (kept in the Outcome)
    assumptions : list     z3 boolean expressions (the domain of the variables, definitions)
    goals : dict           name -> z3 boolean expression; all must follow from the assumptions
    timeout_ms : int

    Returns
    -------
    Outcome   PASS when the negation is unsatisfiable; FAIL with a model and the names of the
              violated goals; UNKNOWN when z3 gives up (the reason is in ``statement``)
    """
    t0 = time.perf_counter()
    solver = z3.Solver()
    solver.set(timeout=int(timeout_ms))
    solver.add(*assumptions)
    solver.add(z3.Not(z3.And(*goals.values())))
    verdict = solver.check()
    seconds = time.perf_counter() - t0
    if verdict == z3.unsat:
        return Outcome("PASS", statement, seconds=seconds)
    if verdict == z3.sat:
        model = solver.model()
        cex = {str(d): model[d].as_long() for d in model.decls()
               if z3.is_int_value(model[d])}
        failed = [name for name, g in goals.items()
                  if z3.is_false(model.eval(g, model_completion=True))]
        return Outcome("FAIL", statement, cex, failed, seconds)
    return Outcome("UNKNOWN", f"{statement} (z3: {solver.reason_unknown()})", seconds=seconds)


def _floor_div(num, den_const: int, name: str):
    """A fresh integer Q and remainder with num = Q*den + rem, 0 <= rem < den (den > 0)."""
    quo, rem = z3.Int(f"{name}"), z3.Int(f"{name}_rem")
    return quo, [num == quo * den_const + rem, rem >= 0, rem < den_const]


def _shift_add(x, terms):
    """sum(sign * x * 2^shift) - a shift-add constant multiplier (terms from the model)."""
    return z3.Sum([s * x * (1 << p) for s, p in terms]) if terms else z3.IntVal(0)


# -- generic Barrett -------------------------------------------------------------------------------
def barrett_quotient(q: int, *, k: int | None = None, mu: int | None = None,
                     corrections: int = 2) -> Outcome:
    """Barrett's quotient estimate is within ``corrections`` of the true quotient, for every x.

    Parameters
    ----------
    q : int             the modulus
    k : int | None      the shift parameter (default bitlen(q), as BarrettReducer)
    mu : int | None     the Barrett constant (default floor(2^(2k)/q)); pass another value to
                        check a mutated constant
    corrections : int   how many conditional subtractions the hardware has (2)

    Statement: for all x in [0, (q-1)^2]: with x_hi = floor(x / 2^(k-1)),
    q_est = floor(x_hi*mu / 2^(k+1)) and Q = floor(x/q):  Q - corrections <= q_est <= Q,
    hence 0 <= x - q_est*q < (corrections+1)*q < 2^(k+2).
    """
    k = q.bit_length() if k is None else k
    mu = (1 << (2 * k)) // q if mu is None else mu
    x = z3.Int("x")
    x_hi, c1 = _floor_div(x, 1 << (k - 1), "x_hi")
    q_est, c2 = _floor_div(x_hi * mu, 1 << (k + 1), "q_est")
    quo, c3 = _floor_div(x, q, "Q")
    r0 = x - q_est * q
    return prove(
        f"Barrett q={q} k={k} mu={mu}: Q-{corrections} <= q_est <= Q for all x <= (q-1)^2",
        [x >= 0, x <= (q - 1) ** 2, *c1, *c2, *c3],
        {"q_est <= Q": q_est <= quo, f"q_est >= Q-{corrections}": q_est >= quo - corrections,
         "r0 < 2^(k+2)": r0 < (1 << (k + 2))})


def barrett_quotient_symbolic(k: int, corrections: int = 2,
                              timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """The Barrett bound for every q of bit length k at once (q symbolic).

    Statement: for all q with 2^(k-1) < q < 2^k, mu with mu*q <= 2^(2k) < (mu+1)*q (that is,
    mu = floor(2^(2k)/q)) and all x < 2^(2k): Q - corrections <= q_est <= Q.
    """
    q, mu, x = z3.Ints("q mu x")
    x_hi, c1 = _floor_div(x, 1 << (k - 1), "x_hi")
    q_est, c2 = _floor_div(x_hi * mu, 1 << (k + 1), "q_est")
    quo, rem = z3.Ints("Q Q_rem")
    return prove(
        f"Barrett, every q in (2^{k - 1}, 2^{k}): Q-{corrections} <= q_est <= Q for all x < 2^{2 * k}",
        [q > 1 << (k - 1), q < 1 << k, mu * q <= 1 << (2 * k), (mu + 1) * q > 1 << (2 * k),
         x >= 0, x < 1 << (2 * k), *c1, *c2, x == quo * q + rem, rem >= 0, rem < q],
        {"q_est <= Q": q_est <= quo, f"q_est >= Q-{corrections}": q_est >= quo - corrections},
        timeout_ms)


def low_bits_difference(k: int, bits: int | None = None) -> Outcome:
    """Only the low ``bits`` (default k+2) bits of x and of q_est*q are needed for r0.

    Statement: for every q < 2^k and all x, qq >= 0 with 0 <= x - qq < 3q:
    (x mod 2^bits - qq mod 2^bits) mod 2^bits = x - qq.
    """
    bits = k + 2 if bits is None else bits
    q, x, qq = z3.Ints("q x qq")
    m = 1 << bits
    diff = (x % m - qq % m) % m
    return prove(f"r0 from the low {bits} bits, every q < 2^{k}",
                 [q >= 3, q < 1 << k, x >= 0, qq >= 0, x - qq >= 0, x - qq < 3 * q],
                 {"low-bit difference exact": diff == x - qq})


# -- DNA-HHE special-prime Barrett -------------------------------------------------------------------
def special_mu(q: int, k: int, log_n: int, *, delta_hi: int | None = None,
               delta_shift: int | None = None, bnd_bits: int = 10) -> Outcome:
    """The shift-add mu product of the special-prime Barrett equals x_hi * floor(2^(2k)/q).

    Parameters
    ----------
    q, k, log_n, bnd_bits   the prime and its form (as SpecialPrimeBarrett)
    delta_hi, delta_shift   the constants the hardware uses (default: the model's); pass others
                            to check a mutated table

    Statement: with M symbolic and M*q <= 2^(2k) < (M+1)*q (so M = mu = floor(2^(2k)/q)), for all
    x_hi in [0, 2^(k+1)): (x_hi << k) + ((x_hi*delta_hi) << s) - x_hi = x_hi*M; moreover
    M = 2^k + Delta - 1 with Delta = delta_hi << s (DNA-HHE eq. 3).
    """
    from hhe_gen.models.modarith import SpecialPrimeBarrett
    model = SpecialPrimeBarrett(q, k, log_n, bnd_bits=bnd_bits)
    delta_hi = model.delta_hi if delta_hi is None else delta_hi
    s = model.delta_shift if delta_shift is None else delta_shift
    x_hi, big_m = z3.Ints("x_hi M")
    p_hw = x_hi * (1 << k) + x_hi * delta_hi * (1 << s) - x_hi
    return prove(
        f"special Barrett q={q} k={k} log_n={log_n}: shift-add mu product = x_hi*floor(2^2k/q)",
        [big_m * q <= 1 << (2 * k), (big_m + 1) * q > 1 << (2 * k),
         x_hi >= 0, x_hi < 1 << (k + 1)],
        {"p = x_hi*mu": p_hw == x_hi * big_m,
         "mu = 2^k + Delta - 1": big_m == (1 << k) + (delta_hi << s) - 1})


def special_mu_symbolic(k: int, log_n: int, bnd_bits: int = 10,
                        timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """DNA-HHE eq. 3 for every bnd at once (bnd symbolic).

    Statement: for all bnd in [1, 2^bnd_bits) with q = 2^k - 2N*bnd + 1 > 2^(k-1), c = 2N*bnd - 1
    and D = floor(c^2/q) (symbolic, by its inequalities): mu = 2^k + Delta - 1 with
    Delta = 2N*bnd + D satisfies mu*q <= 2^(2k) < (mu+1)*q; and c^2 < q implies Delta = 2N*bnd.
    """
    bnd, d = z3.Ints("bnd D")
    two_n = 2 << log_n
    c = two_n * bnd - 1
    q = (1 << k) - c
    mu = (1 << k) + two_n * bnd + d - 1
    return prove(
        f"DNA-HHE mu = 2^k + Delta - 1, k={k}, 2N=2^{log_n + 1}, every bnd < 2^{bnd_bits}",
        [bnd >= 1, bnd < 1 << bnd_bits, q > 1 << (k - 1), d >= 0, d * q <= c * c,
         (d + 1) * q > c * c],
        {"mu = floor(2^2k/q)": z3.And(mu * q <= 1 << (2 * k), (mu + 1) * q > 1 << (2 * k)),
         "c^2 < q => Delta = 2N*bnd": z3.Implies(c * c < q, d == 0)},
        timeout_ms)


def special_q_product(q: int, k: int, log_n: int, *, bnd: int | None = None) -> Outcome:
    """The shift-add q product of the special-prime Barrett equals q_est*q.

    Statement: for all q_est in [0, 2^(k+1)):
    (q_est << k) - ((q_est*bnd) << (log_n+1)) + q_est = q_est*q.  ``bnd`` defaults to the
    prime's own (2^k + 1 - q) / 2N; pass another to check a mutated table.
    """
    two_n = 2 << log_n
    bnd = ((1 << k) + 1 - q) // two_n if bnd is None else bnd
    q_est = z3.Int("q_est")
    qq_hw = q_est * (1 << k) - q_est * bnd * two_n + q_est
    return prove(f"special Barrett q={q} k={k} log_n={log_n}: shift-add q product = q_est*q",
                 [q_est >= 0, q_est < 1 << (k + 1)], {"qq = q_est*q": qq_hw == q_est * q})


def special_q_product_symbolic(k: int, log_n: int, bnd_bits: int = 10) -> Outcome:
    """The shift-add q product for every bnd at once (q_est and bnd symbolic)."""
    bnd, q_est = z3.Ints("bnd q_est")
    two_n = 2 << log_n
    q = (1 << k) - two_n * bnd + 1
    qq_hw = q_est * (1 << k) - q_est * bnd * two_n + q_est
    return prove(f"shift-add q product, k={k}, 2N=2^{log_n + 1}, every bnd < 2^{bnd_bits}",
                 [bnd >= 1, bnd < 1 << bnd_bits, q_est >= 0, q_est < 1 << (k + 1)],
                 {"qq = q_est*q": qq_hw == q_est * q})


# -- ABC-FHE NTT-friendly Montgomery ------------------------------------------------------------------
def ntt_montgomery(q: int, log_n: int, width: int, *, r_bits: int | None = None,
                   negated: bool = False, qinv_terms=None, q_terms=None) -> Outcome:
    """The ABC-FHE shift-add Montgomery reduction, for every x < q^2.

    Parameters
    ----------
    q, log_n, width, r_bits, negated   as NttFriendlyMontgomery
    qinv_terms, q_terms                the shift-add networks (default: the model's); pass others
                                       to check a mutated network

    Statement, with R = 2^r, for all x in [0, (q-1)^2] (t_lo = x mod R):
      * QInv*q = 1 (mod R) (paper form) or = -1 (negated form), QInv = sum of ``qinv_terms``;
      * m = (shift-add of t_lo by qinv_terms) mod R, mq = shift-add of m by q_terms = m*q;
      * d = x - mq (paper) / x + mq (negated) is a multiple of R;
      * t = d / R lies in (-q, q) (paper) / [0, 2q) (negated): one correction gives [0, q).
    """
    from hhe_gen.models.modarith import NttFriendlyMontgomery
    model = NttFriendlyMontgomery(q, log_n, width, r_bits=r_bits, negated=negated)
    qinv_terms = model.qinv_terms if qinv_terms is None else tuple(qinv_terms)
    q_terms = model.q_terms if q_terms is None else tuple(q_terms)
    r = model.r_bits
    big_r = 1 << r
    qinv = sum(s << p for s, p in qinv_terms)
    x = z3.Int("x")
    t_lo = x % big_r
    m = _shift_add(t_lo, qinv_terms) % big_r
    mq = _shift_add(m, q_terms)
    d = x + mq if negated else x - mq
    t = d / big_r                       # z3 integer division: floor for a positive divisor
    target = big_r - 1 if negated else 1
    goals = {
        f"QInv*q = {'-1' if negated else '1'} mod R": z3.IntVal(qinv * q % big_r) == target,
        "mq = m*q": mq == m * q,
        "R divides d": d % big_r == 0,
        "t range": z3.And(t >= 0, t < 2 * q) if negated else z3.And(t > -q, t < q),
    }
    return prove(f"ABC-FHE Montgomery q={q} log_n={log_n} r={r} negated={negated}",
                 [x >= 0, x <= (q - 1) ** 2], goals)


def montgomery_symbolic(r: int, negated: bool, timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """Montgomery's result is below 2q before the final subtraction, for every q < R = 2^r.

    Statement: for all 3 <= q < 2^r, x in [0, (q-1)^2], m in [0, R) and t with
    x + m*q = t*R (negated) / x - m*q = t*R (paper): 0 <= t < 2q / -q < t < q.
    """
    q, x, m, t = z3.Ints("q x m t")
    big_r = 1 << r
    rel = x + m * q == t * big_r if negated else x - m * q == t * big_r
    goal = z3.And(t >= 0, t < 2 * q) if negated else z3.And(t > -q, t < q)
    return prove(f"Montgomery t before the correction, every q < 2^{r}, "
                 f"{'x + m*q' if negated else 'x - m*q'}",
                 [q >= 3, q < big_r, x >= 0, x <= (q - 1) * (q - 1), m >= 0, m < big_r, rel],
                 {"t range": goal}, timeout_ms)


def qinv_series(v: int, r: int, terms: int | None = None, negated: bool = False,
                timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """The geometric-series QInv of ABC-FHE (eq. 9-11, corrected) for every q = 1 + 2^v*y.

    Parameters
    ----------
    v : int       2-adic valuation of q - 1 (v >= 1)
    r : int       R = 2^r
    terms : int | None   T, the number of series terms (default ceil(r/v), the model's choice);
                  pass fewer to check that a too-short series fails
    negated : bool       QInv = -series (then QInv*q = -1 mod R)

    Statement: for all integers y, with x = 2^v*y and S = sum_{i<T} (-x)^i:
    (1 + x)*S - 1 = -(-1)^T * 2^(vT - r) * y^T * 2^r, so QInv*q = +-1 (mod 2^r) (vT >= r).  If
    vT < r the identity with that z cannot hold and the statement is checked directly as
    "2^r divides (1+x)*S - 1" for all y, which z3 refutes.
    """
    terms = -(-r // v) if terms is None else terms
    y = z3.Int("y")
    x = (1 << v) * y
    powers = [z3.IntVal(1)]
    for _ in range(1, max(terms, 1) + 1):
        powers.append(powers[-1] * y)          # y^i as a product (z3's ** is not polynomial)
    series = z3.Sum([(-1) ** i * (1 << (v * i)) * powers[i] for i in range(terms)])
    sign = -1 if negated else 1
    # QInv*q -+ 1 with QInv = +-series: sign * ((1 + x)*series - 1)
    lhs = (1 + x) * series - 1
    if v * terms >= r:
        z = -((-1) ** terms) * (1 << (v * terms - r)) * powers[terms]
        # normalise to a sum of monomials first (z3's som rewriting): an identity becomes 0 == 0
        goal = sign * z3.simplify(lhs - z * (1 << r), som=True) == 0
    else:
        goal = (sign * lhs) % (1 << r) == 0
    return prove(f"QInv series, v={v} r={r} T={terms}{' negated' if negated else ''}: "
                 f"QInv*q = {'-' if negated else ''}1 mod 2^{r} for every q = 1 + 2^{v}*y",
                 [], {"QInv*q = +-1 mod R": goal}, timeout_ms)


# -- word-level Montgomery -------------------------------------------------------------------------
def word_montgomery(q: int, width: int, word_bits: int, *, carry_from_lo_only: bool = False) -> Outcome:
    """Word-level Montgomery ([M19]) per-word bounds for one prime, every x < q^2.

    Statement: with L = ceil(width/w), B_0 = (q-1)^2 and B_{i+1} = floor((B_i + (2^w - 1)*q)/2^w),
    for each word i and all t_i in [0, B_i]: lo = t_i mod 2^w, m = (-lo) mod 2^w,
    carry = lo[w-1] | m[w-1] (the hardware's carry) and t_{i+1} = (t_i >> w) + m*q_hi + carry
    satisfy t_{i+1}*2^w = t_i + m*q and t_{i+1} <= B_{i+1}; every B_i < 2^(2*width); and
    B_L < 2q (so t_L < 2q: one correction).  The identities chain to t_L*R = x + M*q.
    ``carry_from_lo_only`` replaces the carry by lo[w-1] alone (a mutant that must fail).
    """
    from hhe_gen.models.modarith import WordMontgomeryReducer
    model = WordMontgomeryReducer(q, width, word_bits)
    w, q_hi, words = word_bits, model.q_hi, model.words
    bound = (q - 1) ** 2
    t0 = time.perf_counter()
    for i in range(words):
        t = z3.Int(f"t{i}")
        lo = t % (1 << w)
        m = (-lo) % (1 << w)
        half = 1 << (w - 1)
        carry = z3.If(lo >= half if carry_from_lo_only else z3.Or(lo >= half, m >= half), 1, 0)
        t_next = t / (1 << w) + m * q_hi + carry
        next_bound = (bound + ((1 << w) - 1) * q) >> w
        out = prove(f"word Montgomery q={q} w={w} word {i}",
                    [t >= 0, t <= bound],
                    {"t'*2^w = t + m*q": t_next * (1 << w) == t + m * q,
                     f"t' <= B_{i + 1}": t_next <= next_bound})
        if not out.passed:
            out.seconds = time.perf_counter() - t0
            return out
        if bound >= 1 << (2 * width):
            return Outcome("FAIL", f"word Montgomery q={q}: B_{i} = {bound} does not fit "
                           f"2*width = {2 * width} bits", seconds=time.perf_counter() - t0)
        bound = next_bound
    seconds = time.perf_counter() - t0
    statement = f"word Montgomery q={q} width={width} w={w}: {words} words, t_L <= {bound}"
    if bound >= 2 * q:
        return Outcome("FAIL", statement + " is not < 2q", failed=["t_L < 2q"], seconds=seconds)
    return Outcome("PASS", statement + " < 2q", seconds=seconds)


def word_montgomery_symbolic(width: int, word_bits: int, timeout_ms: int = TIMEOUT_MS) -> Outcome:
    """The word-level Montgomery step for every q = q_hi*2^w + 1 < 2^width (q symbolic).

    Statement: for all q_hi >= 1 with q = q_hi*2^w + 1 < 2^width, x in [0, (q-1)^2], word index
    i < L and t, M with t*2^(w*i) = x + M*q, 0 <= M < 2^(w*i): the hardware step t' (as in
    :func:`word_montgomery`) and M' = M + m*2^(w*i) satisfy t'*2^(w*(i+1)) = x + M'*q and
    0 <= M' < 2^(w*(i+1)); and at i + 1 = L (R = 2^(w*L) >= 2^width > q): t' < 2q.
    One query per word index (the invariant at i = 0 holds with M = 0).
    """
    w = word_bits
    words = -(-width // w)
    t0 = time.perf_counter()
    for i in range(words):
        q_hi, x, t, big_m = z3.Ints("q_hi x t M")
        q = q_hi * (1 << w) + 1
        lo = t % (1 << w)
        m = (-lo) % (1 << w)
        half = 1 << (w - 1)
        carry = z3.If(z3.Or(lo >= half, m >= half), 1, 0)
        t_next = t / (1 << w) + m * q_hi + carry
        m_next = big_m + m * (1 << (w * i))
        goals = {"t' invariant": t_next * (1 << (w * (i + 1))) == x + m_next * q,
                 "M' range": z3.And(m_next >= 0, m_next < 1 << (w * (i + 1)))}
        if i + 1 == words:
            goals["t_L < 2q"] = t_next < 2 * q
        out = prove(f"word Montgomery every q < 2^{width}, w={w}, word {i}",
                    [q_hi >= 1, q < 1 << width, x >= 0, x <= (q - 1) * (q - 1), t >= 0,
                     t * (1 << (w * i)) == x + big_m * q, big_m >= 0, big_m < 1 << (w * i)],
                    goals, timeout_ms)
        if not out.passed:
            out.seconds = time.perf_counter() - t0
            return out
    return Outcome("PASS", f"word Montgomery every q < 2^{width}, w={w}: {words} words",
                   seconds=time.perf_counter() - t0)
