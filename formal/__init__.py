"""SymbiYosys property harnesses (installed as ``hhe_gen.formal``)."""
