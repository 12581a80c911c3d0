"""Calibration microbenchmarks of the timing model: ``python -m gpurf.sim.sm.calibrate``.

Each row is a microbenchmark, the model's figure and the public figure it should match:

- **Dependent FMA chain** (one warp, ``fma.rn.f32 %f1, %f1, %f1, %f1`` repeated): cycles per
  FMA, from the difference of two chain lengths. Public: 4 cycles on Volta (Jia et al.,
  "Dissecting the NVIDIA Volta GPU architecture via microbenchmarking", 2018).
- **Independent FMAs** (one block of 32 warps, each 8 independent accumulators): warp
  instructions per cycle of the SM in steady state (difference of two loop lengths).
  Public: 64 FP32 lanes per V100 SM, 16 per sub-core (NVIDIA Tesla V100 whitepaper, 2017),
  so 2 warp FMAs per cycle at most.
- **Collector streams** (the golden collector alone, 1-4 CUs, dispatch always ready, one
  issue a cycle, 2 banks, read latency 1): instructions per cycle of a stream of one-read
  instructions, of two-read instructions with the reads in different banks, of bank-conflict
  pairs (both reads in one bank, the bank alternating) and of three-read FMAs (two reads in
  one bank). Public: Accel-Sim's collector cycle (``opndcoll_rfu_t::step``: dispatch, bank
  reads, allocation), under which a CU holding an instruction whose busiest bank has ``k``
  reads turns over every ``k + 1`` cycles, so a stream runs at
  ``min(1, cus / (k + 1), banks * instructions / reads)`` instructions per cycle
  (:func:`accel_sim_ipc`; with ``cus`` CUs in flight the oldest-first bank queues can add
  a cycle, which the table shows where it happens).
- **CUs per sub-core** (``bankconflict`` at size ``test``, GTO, 1-4 CUs): cycles. The
  sub-core paper chose 2 CUs because Accel-Sim with 2 CUs per sub-core matched V100 silicon
  best on seven bank-conflict microbenchmarks (16.2 % mean absolute error); that validation
  needs the silicon and the paper's microbenchmarks and cannot be rerun here.
"""

from dataclasses import dataclass

import click

from gpurf.golden.subcore.operand_collector import OperandCollector, bank_of
from gpurf.sim.ptx.parser import parse_ptx
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.memory import GlobalMemory
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.timing import TimingSM
from gpurf.sim.sm.warp import ThreadBlock

__all__ = ["STREAMS", "Row", "accel_sim_ipc", "calibration", "collector_ipc",
           "dependent_fma_cycles", "independent_fma_ipc"]

_HEAD = ".version 9.0\n.target sm_80\n.address_size 64\n"

STREAMS = {
    "one read": ((0,), (1,)),
    "pair, two banks": ((0, 1), (1, 0)),
    "bank-conflict pair": ((0, 0), (1, 1)),
    "FMA, 3 reads": ((0, 0, 1), (1, 1, 0)),
}
"""Per stream, the banks of the reads of its instructions (alternating between the two)."""


@dataclass(frozen=True)
class Row:
    """One calibration row: the model's figure beside the public one."""

    benchmark: str
    unit: str
    model: float
    public: float | None
    source: str


def _run_micro(body: str, threads: int, registers: int = 8, **config):
    """Timing statistics of a one-block kernel ``body`` (f32 registers ``%f0..``)."""
    text = (f"{_HEAD}.visible .entry k()\n{{\n.reg .f32 %f<{registers}>;\n"
            f".reg .pred %p<2>;\n.reg .b32 %r<4>;\n{body}ret;\n}}\n")
    program = Program(parse_ptx(text, "micro.ptx").kernels["k"])
    memory = GlobalMemory({})
    sm = TimingSM(program, load_config(**config),
                  lambda b: ThreadBlock(program, b, (threads, 1, 1), (1, 1, 1), memory, b""))
    return sm.run_blocks([(0, 0, 0)], 1)


def dependent_fma_cycles(n: int = 64, **config) -> float:
    """Cycles per FMA of one warp's dependent chain (chains of ``n`` and ``2n``)."""
    def chain(k):
        return "mov.f32 %f1, 0f3F800000;\n" + "fma.rn.f32 %f1, %f1, %f1, %f1;\n" * k
    short = _run_micro(chain(n), 32, **config).cycles
    long = _run_micro(chain(2 * n), 32, **config).cycles
    return (long - short) / n


def _independent_body(rounds: int) -> str:
    setup = "".join(f"mov.f32 %f{i}, 0f3F800000;\n" for i in range(10))
    fmas = "".join(f"fma.rn.f32 %f{i}, %f8, %f9, %f{i};\n" for i in range(8))
    return setup + fmas * rounds


def independent_fma_ipc(rounds: int = 32, **config) -> float:
    """Warp instructions per cycle of one 32-warp block, each warp ``8 x rounds``
    independent FMAs (difference of ``rounds`` and ``2 * rounds``)."""
    short = _run_micro(_independent_body(rounds), 1024, registers=10, **config).cycles
    long = _run_micro(_independent_body(2 * rounds), 1024, registers=10, **config).cycles
    return 32 * 8 * rounds / (long - short)


def _registers_in(bank: int, warp: int, banks: int) -> list[int]:
    return [r for r in range(64) if bank_of(r, warp, banks=banks, bank_map="swizzle") == bank]


def collector_ipc(stream: str, cus: int, *, instructions: int = 400, banks: int = 2) -> float:
    """Instructions per cycle of the golden collector on ``stream`` (:data:`STREAMS`) with
    ``cus`` CUs: one issue offered every cycle, dispatch always ready, warps 0..15 in
    turn, distinct registers for the reads of one instruction."""
    oc = OperandCollector(cus=cus, banks=banks, operands=3, lanes=1, data_width=1, slots=16,
                          reg_bits=8, read_latency=1, bank_map="swizzle")
    oc.carries_data = False
    patterns = STREAMS[stream]
    issued = dispatched = cycle = 0
    first = last = None
    while dispatched < instructions:
        grants, offer = oc.grants(), oc.offer()
        issue = None
        if issued < instructions:
            warp = issued % 16
            pools = {b: iter(_registers_in(b, warp, banks)) for b in range(banks)}
            issue = (warp, {i: next(pools[b]) for i, b in
                            enumerate(patterns[issued % len(patterns)])})
        if offer is not None:
            dispatched += 1
            first = cycle if first is None else first
            last = cycle
        if oc.advance(grants, offer, True, issue):
            issued += 1
        cycle += 1
    return (instructions - 1) / (last - first)


def accel_sim_ipc(stream: str, cus: int, *, banks: int = 2) -> float:
    """The issue rate Accel-Sim's collector order allows (module docstring)."""
    patterns = STREAMS[stream]
    busiest = max(max(p.count(b) for b in set(p)) for p in patterns)
    reads = sum(len(p) for p in patterns) / len(patterns)
    return min(1.0, cus / (busiest + 1), banks / reads)


def calibration(*, say=lambda _: None) -> list[Row]:
    """Every calibration row (module docstring)."""
    jia = "Jia et al. 2018 (Volta microbenchmarks)"
    rows = [Row("dependent FMA chain", "cycles per FMA", dependent_fma_cycles(), 4.0, jia)]
    say("independent FMAs")
    rows.append(Row("independent FMAs, 32 warps", "warp-instructions per cycle per SM",
                    independent_fma_ipc(), 2.0, "V100 whitepaper: 16 FP32 lanes per sub-core"))
    for stream in STREAMS:
        for cus in range(1, 5):
            rows.append(Row(f"collector: {stream}, {cus} CU{'s' if cus > 1 else ''}",
                            "instructions per cycle per sub-core", collector_ipc(stream, cus),
                            accel_sim_ipc(stream, cus), "Accel-Sim collector order"))
    for cus in range(1, 5):
        say(f"bankconflict, {cus} CUs")
        run = run_kernel("bankconflict", "test", timing=load_config(cus=cus))
        if not run.passed:
            raise RuntimeError("bankconflict: outputs differ from the numpy reference")
        rows.append(Row(f"bankconflict (size test), {cus} CUs per sub-core", "cycles",
                        run.stats["timing"].cycles, None,
                        "paper: 2 CUs closest to V100 silicon (16.2 % error), not rerunnable"))
    return rows


@click.command()
def main():
    """Print the calibration table (Markdown)."""
    click.echo("| microbenchmark | unit | model | public | source |\n|---|---|---|---|---|")
    for row in calibration(say=lambda text: click.echo(f"... {text}", err=True)):
        public = "" if row.public is None else f"{row.public:g}"
        model = f"{row.model:,}" if isinstance(row.model, int) else f"{row.model:.3f}"
        click.echo(f"| {row.benchmark} | {row.unit} | {model} | {public} | {row.source} |")


if __name__ == "__main__":
    main()
