"""SymbiYosys harnesses of the arithmetic RTL (added as the cores land)."""
