"""LiteX integration of the hhe-gen accelerator (installed as ``hhe_gen.soc``)."""
