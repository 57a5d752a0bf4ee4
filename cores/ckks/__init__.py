"""CKKS client cores (installed as ``hhe_gen.cores.ckks``): the encoder (slots -> special IFFT ->
x Delta -> residues per prime) and the decoder (residues of L = 1 .. 8 coprime moduli -> streaming
CRT (:class:`CrtCentre`), centred / Delta -> special FFT -> slots), bit-exact with :mod:`hhe_gen.models.ckks_fixed` (which equals
:mod:`hhe_gen.models.ckks`'s fixed-point encode/decode).

Precision (``hhe-gen bench fft``; measured with the model, which the cores equal bit for bit):
bits = -log2 of the mean / max |error| of the complex slots against the float64 originals,
uniform random slots in the unit disc (real-only slots give the same within 0.1 bit mean), 2 seeds,
Delta = 2^50, one 61-bit prime, half-up rounding (the hardware default).  A = hardware encode ->
float64 (Lattigo) decode, B = float64 encode -> hardware decode, E = hardware encode -> hardware
decode:

======  ======  ===========  ===========  ===========
N       W/F     A mean/max   B mean/max   E mean/max
======  ======  ===========  ===========  ===========
2^10    24/21   17.1 / 12.5  17.5 / 16.0  17.0 / 12.5
2^10    29/26   22.2 / 17.5  22.5 / 20.9  22.1 / 17.5
2^10    32/29   25.1 / 20.6  25.4 / 24.0  25.1 / 20.6
2^10    40/37   33.1 / 28.5  33.5 / 31.8  33.1 / 28.5
2^12    29/26   21.2 / 15.6  21.5 / 19.8  21.1 / 15.6
2^13    24/21   15.7 /  9.5  16.0 / 14.2  15.6 /  9.5
2^13    29/26   20.7 / 14.5  21.0 / 19.3  20.6 / 14.5
2^13    32/29   23.7 / 17.5  24.0 / 22.1  23.6 / 17.5
2^13    36/33   27.7 / 21.5  28.0 / 26.2  27.6 / 21.5
2^14    29/26   20.2 / 13.5  20.5 / 18.6  20.2 / 13.5
2^15    29/26   19.8 / 12.5  20.0 / 18.1  19.7 / 12.5
2^16    29/26   19.3 / 11.5  19.5 / 17.6  19.2 / 11.5
2^16    32/29   22.3 / 14.5  22.5 / 20.6  22.2 / 14.5
2^16    33/30   23.3 / 15.5  23.5 / 21.5  23.2 / 15.5
2^16    33/31   24.3 / 16.5  24.5 / 22.6  24.2 / 16.5
2^16    34/31   24.3 / 16.5  24.5 / 22.6  24.2 / 16.5
2^16    36/33   26.3 / 18.5  26.5 / 24.5  26.2 / 18.5
2^16    40/37   30.3 / 22.5  30.5 / 28.5  30.2 / 22.5
======  ======  ===========  ===========  ===========

* DNA-HHE's 29/26 at N = 2^13: 20.6 bits mean end to end (target >= 20).
* The narrowest format with >= 24 bits mean at N = 2^16 is 33 bits with 31 fraction bits (24.2;
  F = W - 2 suffices: the FFT's intermediates stay in the unit disc, and 33/31 gives exactly the
  34/31 numbers, so nothing overflows); 33/30 gives 23.2.
* The mean is about F - 4 bits (N = 2^10) down to F - 6.8 bits (N = 2^16).  The max is
  limited by the IFFT's half-up halving bias (+1/4 LSB per halving, concentrated into one slot by the
  FFT, see hhe_gen.models.fft): with half-even rounding 34/31 at N = 2^16 gives 24.0 / 21.9 (E mean /
  max) instead of 24.2 / 16.5, and 29/26 at 2^13 20.5 / 18.7 instead of 20.6 / 14.5 - choose
  ``rounding="half-even"`` when the worst slot matters (one more adder per rounding in hardware).
* The decoder over L >= 2 moduli (CRT) decodes exactly what hhe_gen.models.ckks.decode gives for
  the same fixed-point format; for a fresh plaintext (|m| < q_0/2) it equals the one-prime
  decoder.  Lattigo sees the A precision on hardware-encoded, model-encrypted plaintexts
  (tests/interop/test_hw_codec_lattigo.py: DNA-HHE 20.73 mean bits, A = 20.73).
* Structure: both cores are pure compositions (Encoder = SpecialIfft -> ResidueStage, Decoder =
  CrtCentre -> ScaleDownStage -> SpecialFft); see hhe_gen.apps.bench.fft for why (Yosys 0.70)
  and the ECP5 numbers.
"""

from .crt import CrtCentre
from .decoder import Decoder
from .encoder import Encoder

__all__ = ["Encoder", "Decoder", "CrtCentre"]
