"""On-chip samplers fed by the XOF byte stream (installed as ``hhe_gen.cores.sampler``).

Every sampler is a stream component: ``i_stream`` takes the XOF's bytes (W bytes per beat,
little-endian, :func:`byte_stream`), ``o_stream`` gives samples, bit-exact with
:mod:`hhe_gen.models.sampler` (same values, same bytes consumed per value).
"""

from .bytes import ByteGatherer, byte_stream

__all__ = ["ByteGatherer", "byte_stream"]
