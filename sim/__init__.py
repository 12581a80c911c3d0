"""Flows around the blocks: Verilog generation, cocotb runs, golden SM, command line."""
