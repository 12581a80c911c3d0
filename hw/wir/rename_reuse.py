"""WIR's rename and reuse stages composed (paper Section V-B, V-C, VI-A, VI-B, Figs. 5, 8)."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring

from gpurf.hw.params import ConfiguredComponent

from .configs import DEC_PORTS, INC_PORTS, SOURCES, RenameReuseConfig
from .load_filter import LoadFilter
from .pending_retry import PendingRetry
from .rename_table import RenameTable
from .reuse_buffer import ReuseBuffer

__all__ = ["RenameReuse", "RenameReuseConfig"]


class RenameReuse(ConfiguredComponent, config=RenameReuseConfig):
    """The rename stage and the reuse stage of WIR, one cycle each (paper Fig. 5, VII-E).

    Sub-blocks: ``wir.rename_table`` (``rename``), ``wir.reuse_buffer`` (``reuse``),
    ``wir.load_filter`` (``loads``) and ``wir.pending_retry`` (``retry``). The register
    pool is outside: the reference-count events of the sub-blocks come out on ``inc`` /
    ``dec`` and the pool's answers come in on ``result_saturated`` / ``operand_saturated``
    / ``low_reg``.

    **Pipeline** (an instruction issued in cycle ``t`` leaves on ``out`` in cycle
    ``t + 2``: 2 added cycles):

    - Cycle ``t``, rename stage: ``issue`` (ready/valid; ``ready`` is the rename table's)
      reads the warp's rename-table row (a synchronous read; the read register and the
      stage register holding the rest of the instruction end the stage).
    - Cycle ``t + 1``, reuse stage: the register operands become the sources' physical
      ids; the load filter answers for the instruction's ``kind`` (a store sets its warp's
      flag at the end of the cycle); the reuse buffer is looked up (combinational) and
      reserves on a miss. A pending hit goes into the pending-retry queue in the same
      cycle (queue full: the instruction executes, no reservation). The answer is
      registered and leaves on ``out`` at ``t + 2``.
    - **Re-check** (paper VI-B): in a cycle whose reuse stage holds no instruction (no
      issue in the cycle before: the rename stage was idle) and whose rename table is idle
      (not clearing nor sweeping an exit, so a hit can retire: session 16 found rechecks
      hitting through a sweep overflowing ``wir.backend``'s hit queue), the queue's head
      looks the buffer up again with its stored tag; still pending -> re-queued at the tail (nothing
      leaves), otherwise it leaves on ``out`` one cycle later with ``retried`` set (a hit,
      or a miss that reserves and executes).

    ``out.payload.response``: ``hit`` (skip read/execute; the result register
    ``result``), ``pending`` (the instruction went to the queue; it is not executed now),
    otherwise execute; ``reserved`` says the miss reserved entry ``index`` (fill it at
    retire through ``fill``).

    **Spec interpretations.** An instruction whose register operand has no valid mapping
    (a never-written register) bypasses the buffer: its value has no physical id. Stores
    and control flow carry ``bypass`` (the paper never reuses them); a store sets its
    warp's store flag from the reuse stage, the stage where later loads query it, so
    program order is kept. A re-check uses the tag of the first lookup (its load-filter
    fields included: the instruction is older than any later barrier or store). The
    in-flight source-operand references of the spec (rename to register read) are not
    emitted here: the register-read stage is not part of this composition.

    Attributes
    ----------
    issue : In(stream.Signature(issue_layout))
        Issued instructions.
    retire : In(stream.Signature(rename retire_layout))
        New mappings at retire (to the rename table).
    exit : In(stream.Signature(warp_bits))
        A finished warp (its mappings are released).
    barrier, launch : In(valid_only(load block_layout))
        Barrier releases and block launches (to the load filter).
    fill : In(valid_only(reuse fill_layout))
        Results of reserved entries at retire (to the reuse buffer).
    result_saturated, operand_saturated, low_reg : In(1)
        The register pool's answers (see ``wir.reuse_buffer``).
    out : Out(valid_only(out_layout))
        Instructions leaving the reuse stage.
    probe : Out(preg_bits)
        The reuse buffer's probe (result register of the indexed entry).
    query : Out(ArrayLayout(preg_ref_layout, 3))
        The register operands of this cycle's lookup, for ``operand_saturated``.
    queued : Out(range(retry_depth + 1))
        Instructions in the pending-retry queue.
    inc : Out(ArrayLayout(preg_ref_layout, 6))
        ``[0]`` the rename table's ``ref_inc``, ``[1..5]`` the reuse buffer's ``inc``.
    dec : Out(ArrayLayout(preg_ref_layout, 5))
        ``[0]`` the rename table's ``ref_dec``, ``[1..4]`` the reuse buffer's ``dec``.
    ready : Out(1)
        The rename table's clear after reset is done.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.stage = Signal(config.issue_layout)
        """The rename stage's instruction, used while the rename table's ``renamed`` is
        valid (a formal harness states its contents)."""

    @functools.cached_property
    def rename(self) -> RenameTable:
        """The rename tables (rename stage); built on first use, so that a component only
        inspected for its ports leaves no unused sub-block behind."""
        return RenameTable(**self.config.rename.params())

    @functools.cached_property
    def reuse(self) -> ReuseBuffer:
        """The reuse buffer (reuse stage)."""
        return ReuseBuffer(**self.config.reuse.params())

    @functools.cached_property
    def loads(self) -> LoadFilter:
        """The load-reuse state (reuse stage)."""
        return LoadFilter(**self.config.loads.params())

    @functools.cached_property
    def retry(self) -> PendingRetry:
        """The pending-retry queue."""
        return PendingRetry(**self.config.retry.params())

    def elaborate(self, platform):
        m = Module()
        m.submodules.rename = rename = self.rename
        m.submodules.reuse = reuse = self.reuse
        m.submodules.loads = loads = self.loads
        m.submodules.retry = retry = self.retry
        stage = self._rename_stage(m, rename)
        fresh = self._fresh_lookup(m, stage, rename.renamed, loads)
        self._reuse_stage(m, stage, rename, reuse, retry, fresh)
        self._events(m, rename, reuse)
        wiring.connect(m, wiring.flipped(self.fill), reuse.fill)
        m.d.comb += [
            reuse.result_saturated.eq(self.result_saturated),
            reuse.operand_saturated.eq(self.operand_saturated),
            reuse.low_reg.eq(self.low_reg),
            self.probe.eq(reuse.probe),
            self.queued.eq(retry.count),
        ]
        return m

    def _rename_stage(self, m, rename):
        """Issue into the rename table; the stage register holds the instruction."""
        config, issue = self.config, self.issue
        reg_bits = config.rename.reg_bits
        wiring.connect(m, wiring.flipped(self.retire), rename.retire)
        wiring.connect(m, wiring.flipped(self.exit), rename.exit)
        m.d.comb += [
            self.ready.eq(rename.ready),
            rename.issue.valid.eq(issue.valid),
            rename.issue.payload.warp.eq(issue.payload.warp),
            rename.issue.payload.dst.eq(issue.payload.dst),
            issue.ready.eq(rename.issue.ready),
        ]
        m.d.comb += [rename.issue.payload.src[k].eq(issue.payload.operand[k][:reg_bits])
                     for k in range(SOURCES)]
        stage = self.stage
        with m.If(issue.valid & issue.ready):
            m.d.sync += stage.eq(issue.payload)
        return stage

    def _fresh_lookup(self, m, stage, answer, loads):
        """The reuse-stage instruction's lookup: physical sources, load-filter fields
        (``answer``: the rename table's, valid while the stage holds an instruction)."""
        config = self.config
        staged, renamed = answer.valid, answer.payload
        m.d.comb += [
            loads.query.warp.eq(stage.warp),
            loads.query.tb.eq(stage.tb),
            loads.query.kind.eq(stage.kind),
            loads.store.valid.eq(staged & (stage.store_shared | stage.store_global)),
            loads.store.payload.warp.eq(stage.warp),
            loads.store.payload.shared.eq(stage.store_shared),
            loads.store.payload.global_.eq(stage.store_global),
        ]
        wiring.connect(m, wiring.flipped(self.barrier), loads.barrier)
        wiring.connect(m, wiring.flipped(self.launch), loads.launch)
        fresh = Signal(config.reuse.lookup_layout)
        regs = stage.opcode.regs
        unmapped = Cat(regs[k] & ~renamed.src[k].valid for k in range(SOURCES)).any()
        m.d.comb += [
            fresh.opcode.eq(stage.opcode),
            fresh.tbid.eq(loads.answer.tbid),
            fresh.barrier.eq(loads.answer.barrier),
            fresh.divergent.eq(stage.divergent),
            fresh.bypass.eq(stage.bypass | ~loads.answer.reuse | unmapped),
        ]
        m.d.comb += [fresh.operand[k].eq(Mux(regs[k], renamed.src[k].preg, stage.operand[k]))
                     for k in range(SOURCES)]
        return fresh

    def _reuse_stage(self, m, stage, rename, reuse, retry, fresh):
        """One lookup a cycle (the stage's instruction, else the queue's head); pending
        hits to the queue; the answer registered to ``out``."""
        config = self.config
        staged = rename.renamed.valid
        ticket = config.ticket_layout(retry.recheck.payload)
        retried = Signal(config.reuse.lookup_layout)
        m.d.comb += [retried.opcode.eq(ticket.tag.opcode), retried.tbid.eq(ticket.tag.tbid),
                     retried.barrier.eq(ticket.tag.barrier)]
        m.d.comb += [retried.operand[k].eq(ticket.tag.operand[k]) for k in range(SOURCES)]
        lookup = Signal(config.reuse.lookup_layout)
        recheck = Signal()
        response = reuse.response.payload
        m.d.comb += [
            retry.recheck.ready.eq(~staged & rename.issue.ready),
            recheck.eq(~staged & rename.issue.ready & retry.recheck.valid),
            lookup.eq(Mux(staged, fresh, retried)),
            reuse.lookup.valid.eq(staged | recheck),
            reuse.lookup.payload.eq(lookup),
            retry.still_pending.eq(response.pending),
            retry.enq.valid.eq(staged & response.pending),
        ]
        queued = config.ticket_layout(retry.enq.payload)
        m.d.comb += [
            queued.warp.eq(stage.warp),
            queued.dst.eq(stage.dst),
            queued.dst_entry.eq(rename.renamed.payload.dst),
            queued.tag.opcode.eq(fresh.opcode),
            queued.tag.tbid.eq(fresh.tbid),
            queued.tag.barrier.eq(fresh.barrier),
        ]
        m.d.comb += [queued.tag.operand[k].eq(fresh.operand[k][:config.preg_bits])
                     for k in range(SOURCES)]
        for k in range(SOURCES):
            used = reuse.lookup.valid & lookup.opcode.regs[k]
            m.d.comb += [self.query[k].valid.eq(used),
                         self.query[k].preg.eq(Mux(used, lookup.operand[k][:config.preg_bits],
                                                   0))]
        out = self.out.payload
        m.d.sync += [
            self.out.valid.eq(staged | (recheck & ~response.pending)),
            out.warp.eq(Mux(staged, stage.warp, ticket.warp)),
            out.dst.eq(Mux(staged, stage.dst, ticket.dst)),
            out.dst_entry.eq(Mux(staged, rename.renamed.payload.dst, ticket.dst_entry)),
            out.lookup.eq(lookup),
            out.response.hit.eq(response.hit),
            out.response.pending.eq(staged & response.pending & retry.enq.ready),
            out.response.reserved.eq(response.reserved),
            out.response.index.eq(response.index),
            out.response.result.eq(response.result),
            out.retried.eq(~staged),
        ]

    def _events(self, m, rename, reuse):
        """The sub-blocks' reference events, side by side."""
        m.d.comb += [self.inc[0].eq(rename.ref_inc), self.dec[0].eq(rename.ref_dec)]
        m.d.comb += [self.inc[1 + k].eq(reuse.inc[k]) for k in range(INC_PORTS)]
        m.d.comb += [self.dec[1 + k].eq(reuse.dec[k]) for k in range(DEC_PORTS)]
