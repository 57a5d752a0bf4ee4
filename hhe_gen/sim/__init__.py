"""Simulation drivers (product code, no test-only imports): stream drivers, clocked runs, whole-core runners in Amaranth's simulator and Verilator."""
