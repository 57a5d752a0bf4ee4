"""Bit-exact golden models (pure Python integers) of everything the hardware computes."""
