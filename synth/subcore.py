"""Sub-core mechanism reports: the paper's Fig. 13 area comparison and the assignment cost.

Fig. 13 of the RBA paper compares, per sub-core, "the warp issue scheduler, operand
collector and two register file banks" for (a) GTO with 2 CUs, (b) RBA with 2 CUs and
(c) GTO with 4 CUs; the paper reports (b) at +1% and (c) at +27% area over (a).
:class:`IssueStage` composes exactly that from gpurf's blocks, with the banks as
unmapped memories counted as 6T SRAM (Table II: 64 KB of registers per sub-core).
"""

from dataclasses import dataclass
from pathlib import Path

from amaranth import Cat, Module, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out, connect

from gpurf.hw.params import check_choice, check_int, check_int_choice
from gpurf.hw.registry import get_block
from gpurf.hw.subcore.layouts import (
    dispatch_layout,
    issued_operand_layout,
    warp_register_layout,
)
from gpurf.hw.subcore.operand_collector import OperandCollector
from gpurf.hw.subcore.rba_scorer import RbaScorer
from gpurf.hw.subcore.warp_selector import POLICIES, WarpSelector
from gpurf.sim.verilog import BUILD_ROOT

from .costs import CostReport, table
from .flow import SynthReport, synthesize, synthesize_design
from .papers import Papers, paper_values

__all__ = ["FIG13_DESIGNS", "IssueStage", "IssueStageConfig", "cost_data", "cost_markdown",
           "cost_report", "fig13"]


@dataclass(frozen=True)
class IssueStageConfig:
    """Parameters of one sub-core's issue stage (defaults: the paper's Table II)."""

    policy: str
    cus: int
    banks: int
    operands: int
    lanes: int
    data_width: int
    slots: int
    reg_bits: int
    rf_bytes: int

    def __post_init__(self):
        check_choice("policy", self.policy, POLICIES)
        check_int("cus", self.cus, 1, 8)
        check_int_choice("banks", self.banks, (1, 2, 4, 8))
        check_int("rf_bytes", self.rf_bytes, 1024, 1 << 20)
        if self.rows < self.slots or self.rows & (self.rows - 1):
            raise ValueError(f"rf_bytes must give a power-of-two row count of at least "
                             f"{self.slots} rows per bank, not {self.rows}")

    @property
    def row_bytes(self) -> int:
        return self.lanes * self.data_width // 8

    @property
    def rows(self) -> int:
        """Rows of one bank: the sub-core's register bytes over banks and row size."""
        return self.rf_bytes // self.banks // self.row_bytes

    @property
    def warp_width(self) -> int:
        return (self.slots - 1).bit_length()

    @property
    def row_reg_bits(self) -> int:
        """Register-index bits of a bank row: rows are ``{warp, reg // banks}``."""
        return (self.rows - 1).bit_length() - self.warp_width

    @property
    def entry_layout(self) -> data.StructLayout:
        """One warp slot of the warp PC table: state and the next instruction's sources."""
        return data.StructLayout({
            "valid": 1, "ready": 1, "age": self.warp_width,
            "operand": data.ArrayLayout(issued_operand_layout(reg_bits=self.reg_bits),
                                        self.operands),
        })

    @property
    def write_layout(self) -> data.StructLayout:
        return data.StructLayout({
            "en": 1, "row": (self.rows - 1).bit_length(),
            "data": warp_register_layout(lanes=self.lanes, data_width=self.data_width),
        })


class IssueStage(wiring.Component):
    """Warp issue scheduler + operand collector + register-file banks of one sub-core.

    The scheduler selects a warp with :class:`~gpurf.hw.subcore.warp_selector.WarpSelector`
    (GTO: its greedy slot is the last issued warp, kept here; RBA: scores from
    :class:`~gpurf.hw.subcore.rba_scorer.RbaScorer` fed by the collector's queue lengths) and
    issues it to a free CU of :class:`~gpurf.hw.subcore.operand_collector.OperandCollector`;
    each bank is a one-read, one-write memory of ``rows`` warp registers read one cycle
    after the grant (``read_latency=1``), written by the ``write`` ports (writeback).

    Parameters
    ----------
    policy : str
        ``"gto"`` or ``"rba"``.
    cus, banks, operands, lanes, data_width, slots, reg_bits : int
        As in the operand collector.
    rf_bytes : int
        Register-file bytes of the sub-core (Table II: 64 KB).
    """

    def __init__(self, *, policy="gto", cus=2, banks=2, operands=3, lanes=32, data_width=32,
                 slots=16, reg_bits=8, rf_bytes=64 * 1024):
        self.config = config = IssueStageConfig(
            policy=policy, cus=cus, banks=banks, operands=operands, lanes=lanes,
            data_width=data_width, slots=slots, reg_bits=reg_bits, rf_bytes=rf_bytes)
        self._collector = OperandCollector(
            cus=cus, banks=banks, operands=operands, lanes=lanes, data_width=data_width,
            slots=slots, reg_bits=reg_bits, read_latency=1)
        super().__init__({
            "warp": In(data.ArrayLayout(config.entry_layout, slots)),
            "issue_valid": Out(1),
            "issue_slot": Out(range(slots)),
            "write": In(data.ArrayLayout(config.write_layout, banks)),
            "dispatch": Out(stream.Signature(dispatch_layout(
                warp_width=config.warp_width, operands=operands, lanes=lanes,
                data_width=data_width))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.collector = collector = self._collector
        m.submodules.selector = selector = WarpSelector(slots=config.slots,
                                                        policy=config.policy)
        connect(m, wiring.flipped(self.dispatch), collector.dispatch)
        self._schedule(m, selector, collector)
        if config.policy == "rba":
            self._score(m, selector, collector)
        for bank in range(config.banks):
            self._bank(m, bank, collector)
        return m

    def _schedule(self, m, selector, collector):
        """Selector inputs, the greedy (last issued) slot, and the issue toward the CUs."""
        config = self.config
        for i in range(config.slots):
            m.d.comb += [selector.slot[i].valid.eq(self.warp[i].valid),
                         selector.slot[i].ready.eq(self.warp[i].ready),
                         selector.slot[i].age.eq(self.warp[i].age)]
        greedy = Signal(range(config.slots))
        greedy_valid = Signal()
        issue = collector.issue
        m.d.comb += [
            selector.greedy.eq(greedy), selector.greedy_valid.eq(greedy_valid),
            issue.valid.eq(selector.grant_valid),
            issue.payload.warp.eq(selector.grant),
            self.issue_valid.eq(issue.valid & issue.ready),
            self.issue_slot.eq(selector.grant),
        ]
        with m.Switch(selector.grant):
            for i in range(config.slots):
                with m.Case(i):
                    m.d.comb += issue.payload.operand.eq(self.warp[i].operand)
        with m.If(issue.valid & issue.ready):
            m.d.sync += [greedy.eq(selector.grant), greedy_valid.eq(1)]

    def _score(self, m, selector, collector):
        """RBA: per-slot operand banks into the scorer, its stored scores into the selector."""
        config = self.config
        m.submodules.scorer = scorer = RbaScorer(slots=config.slots, operands=config.operands,
                                                 banks=config.banks, cus=config.cus)
        m.d.comb += scorer.queue_len.eq(collector.queue_len)
        for i in range(config.slots):
            m.d.comb += selector.slot[i].score.eq(scorer.score[i])
            for k in range(config.operands):
                source = self.warp[i].operand[k]
                m.d.comb += [scorer.slot[i][k].valid.eq(source.valid),
                             scorer.slot[i][k].bank.eq((source.reg + i) % config.banks)]

    def _bank(self, m, index, collector):
        """One register-file bank: a memory read on the collector's grant, one cycle later;
        a write holds back the collector's read of the bank (write priority)."""
        config = self.config
        port = collector.read[index]
        bank = memory.Memory(shape=warp_register_layout(lanes=config.lanes,
                                                        data_width=config.data_width),
                             depth=config.rows, init=[])
        m.submodules[f"bank{index}"] = bank
        read, write = bank.read_port(), bank.write_port()
        reg_in_bank = port.addr.reg >> (config.banks - 1).bit_length()
        m.d.comb += [
            read.en.eq(port.valid),
            read.addr.eq(Cat(reg_in_bank[:config.row_reg_bits], port.addr.warp)),
            port.data.eq(read.data),
            write.en.eq(self.write[index].en.replicate(len(write.en))),
            collector.write[index].eq(self.write[index].en),
            write.addr.eq(self.write[index].row),
            write.data.eq(self.write[index].data),
        ]


FIG13_DESIGNS = (
    ("(a) GTO, 2 CUs (baseline)", {"policy": "gto", "cus": 2}, None),
    ("(b) RBA, 2 CUs", {"policy": "rba", "cus": 2}, "fig13_rba_area"),
    ("(c) GTO, 4 CUs", {"policy": "gto", "cus": 4}, "fig13_cus4_area"),
)
"""Fig. 13's designs: label, parameters, the key of the paper's area figure
(``synth/papers/subcore.toml``; none for the baseline)."""


def fig13(root: Path | None = None) -> list[tuple[str, SynthReport, str | None]]:
    """Synthesize the three Fig. 13 designs: (label, report, the paper's area figure key)."""
    out = []
    for label, params, paper in FIG13_DESIGNS:
        stage = IssueStage(**params)
        tag = "_".join(f"{k}{v}" for k, v in params.items())
        folder = (root or BUILD_ROOT).resolve() / "reports" / "subcore_fig13" / tag
        report = synthesize_design(stage, name=f"subcore.issue_stage[{tag}]",
                                   top="subcore_issue_stage", folder=folder, params=params)
        out.append((label, report, paper))
    return out


_FIG13_UNITS = {"design": "", "policy": "", "cus": "CUs", "cells": "cells",
                "logic transistors": "transistors", "ff bits": "bits", "memory bits": "bits",
                "total transistors": "transistors", "total vs (a)": "%",
                "logic vs (a)": "%", "paper (area)": "%"}


def _fig13_rows(designs, papers: Papers) -> list[dict]:
    base = designs[0][1]
    return [{"design": label, "policy": r.params["policy"], "cus": r.params["cus"],
             "cells": r.cells, "logic transistors": r.logic_transistors,
             "ff bits": r.ff_bits, "memory bits": r.memory_bits,
             "total transistors": r.transistors,
             "total vs (a)": _percent(r.transistors, base.transistors),
             "logic vs (a)": _percent(r.logic_transistors, base.logic_transistors),
             "paper (area)": papers[paper].value if paper else None}
            for label, r, paper in designs]


def _percent(value: int, base: int) -> float:
    return (value / base - 1) * 100


def cost_data(root: Path | None = None) -> CostReport:
    """``gpurf cost subcore`` as data: Fig. 13 and the paper-stated structures."""
    papers = paper_values("subcore")
    scorer = synthesize(get_block("subcore.rba_scorer"), root=root)
    assigner = synthesize(get_block("subcore.subcore_assigner"), root=root)
    structures = [
        {"structure": "RBA score storage", "block": "subcore.rba_scorer",
         "paper": "16 x 5 = 80 bits per sub-core", "ff bits": scorer.ff_bits,
         "cells": scorer.cells, "logic transistors": scorer.logic_transistors},
        {"structure": "hashed assignment", "block": "subcore.subcore_assigner",
         "paper": "4-byte table + 4:1 mux + two 4-bit shift registers",
         "ff bits": assigner.ff_bits, "cells": assigner.cells,
         "logic transistors": assigner.logic_transistors},
    ]
    return CostReport(
        mechanism="subcore",
        tables={"fig13": table("fig13", _FIG13_UNITS, _fig13_rows(fig13(root), papers)),
                "structures": table("structures", {
                    "structure": "", "block": "", "paper": "", "ff bits": "bits",
                    "cells": "cells", "logic transistors": "transistors"}, structures)},
        papers=papers)


def cost_markdown(report: CostReport) -> str:
    """The Markdown of ``gpurf cost subcore``."""
    lines = [
        "## Fig. 13: scheduler + operand collector + 2 RF banks per sub-core",
        "",
        "Banks: 2 x 256 rows x 1024 bits (64 KB per sub-core, Table II), unmapped, 6T SRAM.",
        "",
        "| design | cells | logic transistors | ff bits | memory bits | total transistors "
        "| total vs (a) | logic vs (a) | paper (area) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report.rows("fig13"):
        paper = row["paper (area)"]
        lines.append(
            f"| {row['design']} | {row['cells']:,} | {row['logic transistors']:,} | "
            f"{row['ff bits']:,} | {row['memory bits']:,} | {row['total transistors']:,} | "
            f"{row['total vs (a)']:+.1f}% | {row['logic vs (a)']:+.1f}% | "
            f"{'-' if paper is None else f'+{paper}%'} |")
    scorer, assigner = report.rows("structures")
    lines += [
        "", "## Paper-stated structures", "",
        "| structure | paper | gpurf (default parameters) |",
        "|---|---|---|",
        f"| {scorer['structure']} | {scorer['paper']} | {scorer['ff bits']} ff bits "
        f"in subcore.rba_scorer (score_latency=1) |",
        f"| {assigner['structure']} | {assigner['paper']} | "
        f"{assigner['ff bits']} ff bits, {assigner['cells']:,} cells, "
        f"{assigner['logic transistors']:,} transistors (subcore.subcore_assigner) |",
    ]
    return "\n".join(lines)


def cost_report(root: Path | None = None) -> str:
    """The Markdown report of ``gpurf cost subcore``."""
    return cost_markdown(cost_data(root))
