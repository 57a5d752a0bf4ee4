"""hhe-gen: a generator of client-side hybrid homomorphic encryption hardware.

Subpackages: ``params`` (validated parameters, prime search, presets), ``models`` (bit-exact
golden models), ``cores`` (Amaranth components), ``formal`` (proof harnesses), ``soc`` (LiteX),
``boards`` (targets).
"""

__version__ = "0.1.0"
