"""CKKS client cores (installed as ``hhe_gen.cores.ckks``): the encoder (slots -> special IFFT ->
x Delta -> residues per prime) and the decoder (residues of one prime -> centred / Delta ->
special FFT -> slots), bit-exact with :mod:`hhe_gen.models.ckks_fixed` (which equals
:mod:`hhe_gen.models.ckks`'s fixed-point encode/decode)."""

from .decoder import Decoder
from .encoder import Encoder

__all__ = ["Encoder", "Decoder"]
