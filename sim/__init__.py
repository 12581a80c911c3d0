"""Everything above the blocks, in layers (docs/architecture.md): the workloads, the PTX front
end, the compiler passes, the golden SM, the tool flows (Verilog generation, cocotb runs,
formal, lint, sweeps) and the command line."""
