"""Amaranth components of hhe-gen (installed as ``hhe_gen.cores``)."""
