"""The Rubato keystream core (installed as ``hhe_gen.cores.rubato``).

=================================  =====================================================
:class:`RubatoCore`                key + (nonce, counter) -> l keystream words (+ noise)
:class:`RubatoDatapath`            the n-word state and its four layers, ``lanes`` wide
:mod:`.schedule`                   the layer sequence and the exact cycle formula
:mod:`.lanes`                      shift-and-add Z_q helpers (linear layers, small reduction)
=================================  =====================================================
"""

from .core import RubatoCore, command_layout
from .datapath import Layer, RubatoDatapath
from .schedule import cycles_per_block, phases

__all__ = ["RubatoCore", "RubatoDatapath", "Layer", "command_layout", "cycles_per_block", "phases"]
