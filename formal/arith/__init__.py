"""Formal verification of the modular arithmetic (``cores/arith``).

* ``bounds``  - z3 integer-arithmetic proofs of each reducer's algorithm at full width (36..64
  bits): quotient-estimate and correction bounds, constant identities, Montgomery ranges;
* ``primes``  - the prime sets those proofs run over;
* ``rtl``     - SymbiYosys harnesses of the RTL (full equivalence at small widths, the pieces that
  need no full multiplier at full width, stream handshakes, covers, a miter), one module per
  family: ``rtl_common`` (the harness shell), ``rtl_reducers``, ``rtl_addsub``, ``rtl_stream``,
  ``rtl_multiplier``, ``rtl_pieces``, ``rtl_miter``; ``rtl`` imports them in registration order;
* ``proofs``  - registers all of them for ``hhe-gen prove arith``.
"""
