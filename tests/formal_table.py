# amaranth: UnusedElaboratable=no
"""The proofs of the harnesses built on :mod:`gpurf.tb.formal_base` (every mechanism; the
compressor's only under ``--pdr``), run one by one:
``python -m tests.formal_table [KEY...] [--jobs N] [--json] [--slow]`` prints per proof its
verdict, the step at which each cover was reached, a mutant's counterexample step, and wall
and CPU seconds (CPU: SymbiYosys and its solvers, ``RUSAGE_CHILDREN``).
``docs/reliability.md`` quotes it; run on two commits, it shows a refactoring of the
harnesses changed no verdict.

Each harness's default-tier proof, cover and mutants are listed (its first configuration
where a test runs several), with the configurations and depths of the tests that run them
(``tests/test_<mechanism>_<block>.py``, ``tests/test_formal_regless.py``,
``tests/test_formal_wir.py``; an entry's fifth field is its engine when not smtbmc); ``--slow``: the
``slow_formal`` proofs instead; ``--pdr [--timeout S]``: the compositions and the harnesses
that k-induction does not close, by ABC's property-directed reachability (``abc pdr``),
each stopped after ``S`` seconds (default 600; a stopped run is ``TIMEOUT``, and its CPU
time, of processes killed with it, is not counted).
"""

import argparse
import json
import resource
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gpurf.sim.formal import prove
from gpurf.tb.compression import mutants as compression
from gpurf.tb.compression.formal_collector_ext import CollectorExtFormal
from gpurf.tb.compression.formal_indirection_table import IndirectionTableFormal
from gpurf.tb.compression.formal_read_path import ReadPathFormal
from gpurf.tb.compression.formal_write_path import WritePathFormal
from gpurf.tb.greener import mutants as greener
from gpurf.tb.greener.formal_correction_table import CorrectionTableFormal
from gpurf.tb.greener.formal_power_controller import PowerControllerFormal
from gpurf.tb.greener.formal_scoreboard_ext import ScoreboardExtFormal
from gpurf.tb.regless import line_mutants
from gpurf.tb.regless import mutants as regless
from gpurf.tb.regless.formal_banked_rf import BankedRfFormal
from gpurf.tb.regless.formal_capacity_manager import CapacityManagerFormal
from gpurf.tb.regless.formal_compressor import CompressorFormal
from gpurf.tb.regless.formal_osu import OsuFormal
from gpurf.tb.regless.formal_osu_bank import OsuBankFormal
from gpurf.tb.regless.formal_shard import ShardFormal
from gpurf.tb.subcore import mutants as subcore
from gpurf.tb.subcore.formal_operand_collector import OperandCollectorFormal
from gpurf.tb.subcore.formal_rba_scorer import RbaScorerFormal
from gpurf.tb.subcore.formal_subcore_assigner import SubcoreAssignerFormal
from gpurf.tb.subcore.formal_warp_selector import WarpSelectorFormal
from gpurf.tb.wir import mutants as wir
from gpurf.tb.wir.formal_backend import DIRECTED, BackendFormal
from gpurf.tb.wir.formal_load_filter import LoadFilterFormal
from gpurf.tb.wir.formal_pending_retry import PendingRetryFormal
from gpurf.tb.wir.formal_pipeline import PipelineFormal
from gpurf.tb.wir.formal_register_alloc import RegisterAllocFormal
from gpurf.tb.wir.formal_register_pool import RegisterPoolFormal
from gpurf.tb.wir.formal_rename_reuse import RenameReuseFormal
from gpurf.tb.wir.formal_rename_table import RenameTableFormal
from gpurf.tb.wir.formal_reuse_buffer import ReuseBufferFormal
from gpurf.tb.wir.formal_value_signature_buffer import ValueSignatureBufferFormal
from gpurf.tb.wir.formal_verify_cache import VerifyCacheFormal

WS = {"slots": 5, "score_width": 3, "policy": "rba", "rba_greedy": True}
ABC_BMC = "abc bmc3"
"""ABC's bounded model checker: BMC 20 of the WIR compositions, where smtbmc stops near 8."""
KILL_DEPTH = 14
"""BMC depth of the directed backend harness that kills ``HitSourcesKept``."""
CM = {"lines": 2, "regs": 2, "max_entries": 2}

PROOFS = {
    # key: (block, make the harness, depth, mode)
    "operand_collector": ("subcore.operand_collector", lambda: OperandCollectorFormal(), 20,
                          "bmc"),
    "operand_collector_cover": ("subcore.operand_collector", lambda: OperandCollectorFormal(),
                                8, "cover"),
    "operand_collector_AgeNeverCleared": (
        "subcore.operand_collector",
        lambda: OperandCollectorFormal(block=subcore.AgeNeverCleared), 20, "bmc"),
    "operand_collector_WriteIgnored": (
        "subcore.operand_collector",
        lambda: OperandCollectorFormal(block=subcore.WriteIgnored), 20, "bmc"),
    "rba_scorer": ("subcore.rba_scorer", lambda: RbaScorerFormal(score_latency=2), 6, "prove"),
    "rba_scorer_cover": ("subcore.rba_scorer", lambda: RbaScorerFormal(), 4, "cover"),
    "rba_scorer_InvalidOperandCounted": (
        "subcore.rba_scorer", lambda: RbaScorerFormal(block=subcore.InvalidOperandCounted), 6,
        "bmc"),
    "subcore_assigner": ("subcore.subcore_assigner",
                         lambda: SubcoreAssignerFormal(shuffle_like=False), 20, "bmc"),
    "subcore_assigner_cover": ("subcore.subcore_assigner", lambda: SubcoreAssignerFormal(), 8,
                               "cover"),
    "subcore_assigner_TableReversed": (
        "subcore.subcore_assigner", lambda: SubcoreAssignerFormal(block=subcore.TableReversed),
        20, "bmc"),
    "warp_selector": ("subcore.warp_selector",
                      lambda: WarpSelectorFormal(slots=8, policy="rba"), 2, "prove"),
    "warp_selector_cover": ("subcore.warp_selector", lambda: WarpSelectorFormal(**WS), 1,
                            "cover"),
    "warp_selector_TieToHigherIndex": (
        "subcore.warp_selector",
        lambda: WarpSelectorFormal(block=subcore.TieToHigherIndex, **WS), 2, "bmc"),
    "correction_table": ("greener.correction_table", lambda: CorrectionTableFormal(), 8,
                         "prove"),
    "correction_table_cover": ("greener.correction_table", lambda: CorrectionTableFormal(), 8,
                               "cover"),
    "correction_table_SamePcKeepsOn": (
        "greener.correction_table", lambda: CorrectionTableFormal(block=greener.SamePcKeepsOn),
        8, "bmc"),
    "power_controller": ("greener.power_controller", lambda: PowerControllerFormal(regs=2), 6,
                         "prove"),
    "power_controller_sleep_reg": (
        "greener.power_controller",
        lambda: PowerControllerFormal(regs=2, policy="sleep_reg"), 6, "prove"),
    "power_controller_cover": ("greener.power_controller",
                               lambda: PowerControllerFormal(regs=2), 10, "cover"),
    "power_controller_KeepOnIgnored": (
        "greener.power_controller",
        lambda: PowerControllerFormal(block=greener.KeepOnIgnored, regs=2), 6, "bmc"),
    "scoreboard_ext": ("greener.scoreboard_ext", lambda: ScoreboardExtFormal(), 8, "prove"),
    "scoreboard_ext_cover": ("greener.scoreboard_ext", lambda: ScoreboardExtFormal(), 6,
                             "cover"),
    "scoreboard_ext_DestinationsUnchecked": (
        "greener.scoreboard_ext",
        lambda: ScoreboardExtFormal(block=greener.DestinationsUnchecked), 8, "bmc"),
    "collector_ext": ("compression.collector_ext", lambda: CollectorExtFormal(), 20, "bmc"),
    "collector_ext_cover": ("compression.collector_ext", lambda: CollectorExtFormal(), 8,
                            "cover"),
    "collector_ext_FirstPartCollects": (
        "compression.collector_ext",
        lambda: CollectorExtFormal(block=compression.FirstPartCollects), 8, "bmc"),
    "indirection_table": (
        "compression.indirection_table",
        lambda: IndirectionTableFormal(checks=("banks", "priority")), 20, "bmc"),
    "indirection_table_data": (
        "compression.indirection_table", lambda: IndirectionTableFormal(checks=("data",)), 10,
        "bmc"),
    "indirection_table_cover": ("compression.indirection_table",
                                lambda: IndirectionTableFormal(), 6, "cover"),
    "indirection_table_HighestPortWins": (
        "compression.indirection_table",
        lambda: IndirectionTableFormal(block=compression.HighestPortWins), 4, "bmc"),
    "read_path": ("compression.read_path", lambda: ReadPathFormal(), 12, "bmc"),
    "read_path_cover": ("compression.read_path", lambda: ReadPathFormal(), 12, "cover"),
    "read_path_FirstPartCompletes": (
        "compression.read_path", lambda: ReadPathFormal(block=compression.FirstPartCompletes),
        12, "bmc"),
    "write_path": ("compression.write_path", lambda: WritePathFormal(), 20, "bmc"),
    "write_path_cover": ("compression.write_path", lambda: WritePathFormal(), 12, "cover"),
    "write_path_WriteOneCycleLate": (
        "compression.write_path",
        lambda: WritePathFormal(block=compression.WriteOneCycleLate), 12, "bmc"),
    "osu": ("regless.osu", lambda: OsuFormal(), 4, "prove"),
    "osu_cover": ("regless.osu", lambda: OsuFormal(), 10, "cover"),
    "osu_ConflictIgnored": ("regless.osu", lambda: OsuFormal(block=regless.ConflictIgnored), 4,
                            "bmc"),
    "osu_bank": ("regless.osu_bank", lambda: OsuBankFormal(), 4, "prove"),
    "osu_bank_cover": ("regless.osu_bank", lambda: OsuBankFormal(), 8, "cover"),
    "osu_bank_WriteNotMarked": (
        "regless.osu_bank", lambda: OsuBankFormal(block=line_mutants.WriteNotMarked), 4, "bmc"),
    "banked_rf": ("regless.banked_rf", lambda: BankedRfFormal(), 3, "prove"),
    "banked_rf_cover": ("regless.banked_rf", lambda: BankedRfFormal(), 6, "cover"),
    "banked_rf_WarpsAlias": ("regless.banked_rf",
                             lambda: BankedRfFormal(block=regless.WarpsAlias), 6, "bmc"),
    "capacity_manager": ("regless.capacity_manager", lambda: CapacityManagerFormal(**CM), 20,
                         "bmc"),
    "capacity_manager_kind": ("regless.capacity_manager", lambda: CapacityManagerFormal(**CM),
                              2, "prove"),
    "capacity_manager_kind_w3": (
        "regless.capacity_manager",
        lambda: CapacityManagerFormal(**{**CM, "warps": 3, "max_entries": 3}), 2, "prove"),
    "capacity_manager_cover": ("regless.capacity_manager",
                               lambda: CapacityManagerFormal(**CM), 6, "cover"),
    "capacity_manager_OutstandingIgnored": (
        "regless.capacity_manager",
        lambda: CapacityManagerFormal(block=line_mutants.OutstandingIgnored, **CM), 8, "bmc"),
    "capacity_manager_AcksCountedOnce": (
        "regless.capacity_manager",
        lambda: CapacityManagerFormal(block=line_mutants.AcksCountedOnce, **CM), 8, "bmc"),
    **{key: (f"wir.{key.split('_cover')[0].split('_mutant')[0]}", *rest) for key, rest in {
        "register_pool": (lambda: RegisterPoolFormal(), 8, "bmc"),
        "register_pool_cover": (lambda: RegisterPoolFormal(), 11, "cover"),
        "register_pool_mutant": (
            lambda: RegisterPoolFormal(block=wir.SaturationFromMemory), 6, "bmc"),
        "rename_table": (lambda: RenameTableFormal(), 6, "prove"),
        "rename_table_cover": (lambda: RenameTableFormal(), 6, "cover"),
        "rename_table_mutant": (lambda: RenameTableFormal(block=wir.RemapCounted), 6, "bmc"),
        "reuse_buffer": (lambda: ReuseBufferFormal(entries=2), 3, "prove"),
        "reuse_buffer_cover": (lambda: ReuseBufferFormal(entries=2), 6, "cover"),
        "reuse_buffer_mutant": (
            lambda: ReuseBufferFormal(block=wir.ResultReferenceKept, entries=2), 6, "bmc"),
        "value_signature_buffer": (lambda: ValueSignatureBufferFormal(), 4, "prove"),
        "value_signature_buffer_cover": (lambda: ValueSignatureBufferFormal(), 5, "cover"),
        "value_signature_buffer_mutant": (
            lambda: ValueSignatureBufferFormal(block=wir.ReplacedNotReleased), 4, "bmc"),
        "verify_cache": (lambda: VerifyCacheFormal(), 4, "prove"),
        "verify_cache_cover": (lambda: VerifyCacheFormal(), 5, "cover"),
        "verify_cache_mutant": (
            lambda: VerifyCacheFormal(block=wir.LookupIgnoresWrite), 4, "bmc"),
        "load_filter": (lambda: LoadFilterFormal(), 2, "prove"),
        "load_filter_cover": (lambda: LoadFilterFormal(), 8, "cover"),
        "load_filter_mutant": (lambda: LoadFilterFormal(block=wir.CounterWraps), 8, "bmc"),
        "pending_retry": (lambda: PendingRetryFormal(), 20, "bmc"),
        "pending_retry_cover": (lambda: PendingRetryFormal(), 12, "cover"),
        "pending_retry_mutant": (
            lambda: PendingRetryFormal(block=wir.AcceptsWhenFull), 10, "bmc"),
        "register_alloc": (lambda: RegisterAllocFormal(), 3, "prove"),
        "register_alloc_cover": (lambda: RegisterAllocFormal(), 8, "cover"),
        "register_alloc_mutant": (
            lambda: RegisterAllocFormal(block=wir.SaturatedHitVerifies), 6, "bmc"),
        "pipeline": (lambda: PipelineFormal(), 20, "bmc", ABC_BMC),
        "pipeline_cover": (lambda: PipelineFormal(), 10, "cover"),
        "pipeline_mutant_OldMappingKept": (
            lambda: PipelineFormal(block=wir.OldMappingKept), 10, "bmc"),
        "pipeline_mutant_StaleHitTrusted": (
            lambda: PipelineFormal(block=wir.StaleHitTrusted), 10, "bmc"),
        "pipeline_mutant_CacheNotInvalidated": (
            lambda: PipelineFormal(block=wir.CacheNotInvalidated), 12, "bmc", ABC_BMC),
        "rename_reuse": (lambda: RenameReuseFormal(), 20, "bmc", ABC_BMC),
        "rename_reuse_cover": (lambda: RenameReuseFormal(), 14, "cover"),
        "rename_reuse_mutant": (lambda: RenameReuseFormal(block=wir.HitNotCounted), 10, "bmc"),
        "backend": (lambda: BackendFormal(), 8, "bmc", ABC_BMC),
        "backend_mutant_directed": (
            lambda: BackendFormal(block=wir.HitSourcesKept, directed=True, **DIRECTED),
            KILL_DEPTH, "bmc", ABC_BMC),
    }.items()},
    "shard": ("regless.shard", lambda: ShardFormal(), 8, "bmc"),
    "shard_bmc20": ("regless.shard", lambda: ShardFormal(), 20, "bmc", ABC_BMC),
    "compressor_bmc20": ("regless.compressor", lambda: CompressorFormal(), 20, "bmc", ABC_BMC),
    "shard_mutant": ("regless.shard", lambda: ShardFormal(block=regless.WritebacksFirst), 8,
                     "bmc"),
}
"""Every default-tier proof of these harnesses: (block, harness, depth, mode[, engine])."""

SLOW = {
    "subcore_assigner_shuffle": ("subcore.subcore_assigner",
                                 lambda: SubcoreAssignerFormal(shuffle_like=True), 20, "bmc"),
    "warp_selector_rba16": ("subcore.warp_selector",
                            lambda: WarpSelectorFormal(slots=16, policy="rba"), 2, "prove"),
    "indirection_table_source_wait": (
        "compression.indirection_table", lambda: IndirectionTableFormal(checks=("wait",)), 20,
        "bmc"),
    "indirection_table_destination_wait": (
        "compression.indirection_table",
        lambda: IndirectionTableFormal(checks=("wait",), ports=3, buffer=1), 20, "bmc"),
    "indirection_table_destination_data": (
        "compression.indirection_table",
        lambda: IndirectionTableFormal(checks=("data",), ports=3, buffer=1), 10, "bmc"),
    "read_path_20": ("compression.read_path", lambda: ReadPathFormal(), 20, "bmc"),
    "write_path_ports2_20": ("compression.write_path", lambda: WritePathFormal(ports=2), 20,
                             "bmc"),
}
"""The ``slow_formal`` proofs of these harnesses (``--slow``)."""


def _pdr_harnesses():
    """The harnesses tried with ``abc pdr``."""
    return {
        "compressor": ("regless.compressor", CompressorFormal),
        "capacity_manager_small": ("regless.capacity_manager", CapacityManagerFormal),
        "shard": ("regless.shard", ShardFormal),
        "pipeline": ("wir.pipeline", PipelineFormal),
        "rename_reuse": ("wir.rename_reuse", RenameReuseFormal),
        "backend": ("wir.backend", BackendFormal),
        "backend_HitSourcesKept": ("wir.backend",
                                   lambda: BackendFormal(block=wir.HitSourcesKept)),
    }


PDR = ("compressor", "capacity_manager_small", "shard", "pipeline", "rename_reuse",
       "backend", "backend_HitSourcesKept")
"""The ``abc pdr`` runs (``--pdr``), each at its harness's ``SMALL``."""


def run(key: str, root: str, timeout: float = 3600, pdr: bool = False) -> dict:
    """Prove ``PROOFS[key]`` (or ``SLOW``'s, or ``PDR``'s) in ``root``; its verdict,
    covers, failed step and times."""
    if pdr:
        block, make = _pdr_harnesses()[key]
        depth, mode, engine = 20, "prove", "abc pdr"
    else:
        block, make, depth, mode, *engine = {**PROOFS, **SLOW}[key]
        engine = engine[0] if engine else "smtbmc yices"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = prove(make(), name=key, depth=depth, mode=mode, engine=engine, root=Path(root),
                   timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    mode = "pdr" if engine == "abc pdr" else f"{mode} (abc bmc3)" if engine == ABC_BMC else mode
    return {"key": key, "block": block, "mode": mode, "depth": depth, "status": result.status,
            "reached": dict(sorted(result.reached.items(), key=lambda item: item[1])),
            "unreached": list(result.unreached) if mode == "cover" else [],
            "failed_step": result.failed_step,
            "wall": round(result.seconds, 1), "cpu": round(cpu, 1)}


def _row(row: dict) -> str:
    reached = ", ".join(f"{event} {step}" for event, step in row["reached"].items())
    failed = "" if row["failed_step"] is None else f"step {row['failed_step']}"
    mode = row["mode"] if row["mode"] == "pdr" else f"{row['mode']} {row['depth']}"
    return (f"| {row['key']} | {mode} | {row['status']} | "
            f"{reached or failed} | {row['wall']} | {row['cpu']} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.formal_table")
    parser.add_argument("keys", nargs="*", metavar="KEY", help="proofs (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="proofs at once (default 2)")
    parser.add_argument("--json", action="store_true", help="one JSON object per proof")
    parser.add_argument("--slow", action="store_true", help="the slow_formal proofs instead")
    parser.add_argument("--pdr", action="store_true", help="the abc pdr runs instead")
    parser.add_argument("--timeout", type=float, default=600,
                        help="--pdr: seconds per run (default 600)")
    args = parser.parse_args(argv)
    known = PDR if args.pdr else SLOW if args.slow else PROOFS
    unknown = sorted(set(args.keys) - set(known))
    if unknown:
        print(f"formal_table: unknown proof {unknown[0]!r}; known: {', '.join(known)}",
              file=sys.stderr)
        return 2
    keys = args.keys or list(known)
    if not args.json:
        print("| proof | mode, depth | status | covers reached (step) / counterexample | "
              "wall (s) | CPU (s) |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as root, ProcessPoolExecutor(args.jobs) as pool:
        timeout = args.timeout if args.pdr else 3600
        for row in pool.map(run, keys, [root] * len(keys), [timeout] * len(keys),
                            [args.pdr] * len(keys)):
            print(json.dumps(row) if args.json else _row(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
