"""The tool flow: YoWASP / Verilator toolchain, synthesis, Verilator builds, Verilog export, proof records."""
