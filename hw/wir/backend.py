"""WIR's backend composed end to end: rename -> reuse (``wir.rename_reuse``) -> hash -> VSB
-> verify -> allocate/install -> retire (``wir.pipeline``), one register pool and one
reference-count protocol (paper Fig. 5, V-A..V-E, VI-A, VI-B, VII-E; docs/wir.md)."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data

from gpurf.hw.gates import equals
from gpurf.hw.params import ConfiguredComponent

from .configs import BACKEND_HITS, DEC_PORTS, INC_PORTS, SOURCES, BackendConfig
from .layouts import Outcome
from .pipeline import Pipeline
from .rename_reuse import RenameReuse

__all__ = ["Backend", "BackendConfig"]


class Backend(ConfiguredComponent, config=BackendConfig):
    """``wir.rename_reuse`` (``front``) in front of ``wir.pipeline`` (``back``, which holds
    the register pool), with a queue of reuse hits waiting to retire (``hits`` entries
    ``{warp, reg, preg}``), the reservation fields carried beside each result through the
    pipeline, and the exit sweep of the pipeline's mappings.

    **Flow.** ``issue`` -> rename (``t``) -> reuse (``t + 1``) -> ``out`` (``t + 2``), as
    ``wir.rename_reuse``. An ``out`` with ``response.hit`` needs no execution: it enters the
    hit queue and retires through the pipeline's ``reuse`` port (``REUSED``). Any other
    ``out`` is the environment's to execute (or, ``pending``, to wait for its re-check);
    its value comes back on ``result`` with ``reserved``/``index``/``tag`` copied from the
    ``out``, is decided by the pipeline two cycles later, and a reserved one fills its
    reuse-buffer entry with the register it retired to (``fill``, in the decide cycle).
    Every retirement (``retired``) also writes the front's rename table (``retire``), so
    the next issue of the warp renames its sources to the new register.

    **One reference-count protocol** (docs/wir.md): the holders are the pipeline's
    mappings; the VSB entries; the in-flight source references (an instruction's register
    sources from its issue until it leaves on ``out`` as a hit, or until the environment
    ends them on ``release`` after the operand read; a pending hit's while it waits in the
    pending-retry queue; the environment's own through ``hold``/``drop``); the reuse
    buffer's entries (each register operand, and the result once filled); a reuse hit
    from its lookup to its retirement (in ``out``, then in the hit queue: the reuse
    buffer's hit +1, which the mapping takes over). Each takes +1 when it starts holding
    and -1 when it ends. The front's rename table is a **read copy** of the pipeline's mappings (the
    paper's issue-side read ports): it is written with every retirement and swept with
    every exit in the same cycles as the mappings, and holds no reference of its own (its
    ``inc[0]``/``dec[0]`` events are not counted).

    **Saturation.** The pool is queried for the VSB hit (pipeline), the hold (pipeline),
    the reuse buffer's probe and the lookup's register operands (front) and the issue's
    sources (an issue waits while one is saturated), all answered against the counts at
    the start of the cycle (every earlier event included), with ``headroom`` 9. Every
    increment of a register already held is gated by a query of its own cycle: the VSB
    hit's query is made in the decide cycle from the VSB's read register, the cycle of
    the share and of the fill of the shared register; a reuse hit increments at its
    lookup and retires with no event; the other increments (allocation, install, fill of
    a new register) name the register the cycle allocates. So at most 8 increments (a
    share and its fill, a reservation or a hit, three issue sources; a hold clashes with
    the share) name one register in a cycle, and no count passes 29 of 31 (session 17;
    ``tb/wir/formal_backend.py`` ``MOST_INCREMENTS``). This needs the environment's
    protocol: a result that reserved a reuse-buffer entry is convergent (a divergent one
    would retire ``PINNED`` and fill its entry with the pinned register, ungated).

    **Backpressure.** ``result.ready`` is low while the hit queue holds a hit or one
    arrives, while the rename table is not idle (clear after reset, exit sweep) and while
    ``exit`` is offered; so the queue drains (a hit retires in every cycle without a
    decision). ``exit`` is taken when no result is in the pipeline nor a hit queued;
    the front sweeps its table and the backend the mappings, one register a cycle, in
    lockstep. The front re-checks no pending-retry ticket while its rename table sweeps
    (a hit could not retire); the instructions already in the front when a sweep starts
    still arrive, so the queue holds at most 3 (session 16: before that rule it
    overflowed at 8 and 16 registers; docs/reliability.md).

    Attributes
    ----------
    issue : In(stream.Signature(issue_layout))
    barrier, launch : In(valid_only(block_layout))
    out : Out(valid_only(out_layout))
    result : In(stream.Signature(result_layout))
    hold : In(stream.Signature(reg_layout))
    held : Out(valid_only(preg_bits))
    drop : In(valid_only(preg_bits))
    exit : In(stream.Signature(warp_bits))
    sources : Out(ArrayLayout(preg_ref_layout, 3))
        The in-flight source references of the instruction on ``out``, handed to the
        environment (an executed instruction's: it ends them on ``release``).
    release : In(ArrayLayout(preg_ref_layout, 3))
        The end of handed source references (after the operand read).
    retired : Out(valid_only(retired_layout))
    in_use, low_register : Out
        The pool's.
    verify_cached : Out(1)
        The pipeline's: this cycle's verify-read was answered by the verify cache.
    hits : Out(range(5))
        Reuse hits waiting to retire.
    ready : Out(1)
        The rename table's clear after reset is done.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        back = config.back
        self.queue = Signal(data.ArrayLayout(back.reuse_layout, BACKEND_HITS))
        """The reuse hits waiting to retire, oldest first."""
        self.count = Signal(range(BACKEND_HITS + 1))
        self.carried = Signal(data.ArrayLayout(config.fill_layout, 2))
        """The reservation fields of the results in the pipeline's hash and table cycles."""
        self.flight = Signal(2)
        """Valid bits of ``carried``."""
        self.issued = Signal(data.ArrayLayout(SOURCES, 2))
        """Which sources of the instructions issued one and two cycles ago took an in-flight
        reference (register operands with a valid mapping)."""
        self.sweeping = Signal()
        self.sweep_warp = Signal(config.warp_bits)
        self.sweep_reg = Signal(range(config.regs))

    @functools.cached_property
    def front(self) -> RenameReuse:
        return RenameReuse(**self.config.front.params())

    @functools.cached_property
    def back(self) -> Pipeline:
        return Pipeline(**self.config.back.params())

    def elaborate(self, platform):
        m = Module()
        m.submodules.front = front = self.front
        m.submodules.back = back = self.back
        m.d.comb += [self.in_use.eq(back.in_use), self.low_register.eq(back.low_register),
                     self.verify_cached.eq(back.verify_cached),
                     self.ready.eq(front.ready), self.hits.eq(self.count)]
        _copy(m, self.out, front.out)
        self._front_inputs(m)
        self._pool_ports(m)
        self._issue_sources(m)
        self._out_sources(m)
        self._sources(m)
        retiring_hit = self._hit_queue(m)
        self._results(m, retiring_hit)
        self._retire(m)
        self._exit(m)
        return m

    def _front_inputs(self, m):
        front = self.front
        m.d.comb += [front.issue.payload.eq(self.issue.payload),
                     front.low_reg.eq(self.back.low_register)]
        _copy(m, front.barrier, self.barrier)
        _copy(m, front.launch, self.launch)

    def _pool_ports(self, m):
        """The front's reference events and saturation queries to the pipeline's pool."""
        front, back = self.front, self.back
        m.d.comb += [back.inc[k].eq(front.inc[1 + k]) for k in range(INC_PORTS)]
        m.d.comb += [back.dec[k].eq(front.dec[1 + k]) for k in range(DEC_PORTS)]
        m.d.comb += back.query[0].eq(front.probe)
        m.d.comb += [back.query[1 + k].eq(front.query[k].preg) for k in range(SOURCES)]
        operands = Cat(front.query[k].valid & back.saturated[1 + k] for k in range(SOURCES))
        m.d.comb += [front.result_saturated.eq(back.saturated[0]),
                     front.operand_saturated.eq(operands.any())]

    def _issue_sources(self, m):
        """An issue takes an in-flight reference on each register source with a valid
        mapping (the mappings as the rename table reads them, in the same cycle); it waits
        while one of their counts is saturated."""
        config, front, back = self.config, self.front, self.back
        payload = self.issue.payload
        regs = payload.opcode.regs
        mapped = Signal(SOURCES)
        pregs = []
        for k in range(SOURCES):
            source = Signal(config.back.reg_layout, name=f"source_{k}")
            m.d.comb += [source.warp.eq(payload.warp),
                         source.reg.eq(payload.operand[k][:config.back.reg_bits])]
            entry = back.entry_of(m, source, f"source_{k}")
            m.d.comb += [mapped[k].eq(regs[k] & entry.valid),
                         back.query[1 + SOURCES + k].eq(entry.preg)]
            pregs.append(entry.preg)
        saturated = Cat(mapped[k] & back.saturated[1 + SOURCES + k]
                        for k in range(SOURCES)).any()
        m.d.comb += [front.issue.valid.eq(self.issue.valid & ~saturated),
                     self.issue.ready.eq(front.issue.ready & ~saturated)]
        taken = self.issue.valid & self.issue.ready
        for k in range(SOURCES):
            inc = back.inc[INC_PORTS + k]
            m.d.comb += [inc.valid.eq(taken & mapped[k]),
                         inc.preg.eq(Mux(inc.valid, pregs[k], 0))]
        m.d.sync += [self.issued[0].eq(Mux(taken, mapped, 0)),
                     self.issued[1].eq(self.issued[0])]

    def _out_sources(self, m):
        """An instruction leaving on ``out`` (not to the pending-retry queue) ends its
        in-flight source references: a reuse hit's here (it reads no operand), any other's
        by handing them to the environment on ``sources`` (which ends them on ``release``
        after the operand read). A re-check's sources are its register operands (a pending
        hit never has an unmapped source); a fresh instruction's those ``issued`` noted."""
        config, front, back = self.config, self.front, self.back
        out = front.out.payload
        lookup = out.lookup
        regs = lookup.opcode.regs
        leaves = front.out.valid & ~out.response.pending
        hit = out.response.hit
        for k in range(SOURCES):
            held = Signal(name=f"out_source_{k}")
            preg = lookup.operand[k][:config.preg_bits]
            m.d.comb += held.eq(leaves & Mux(out.retried, regs[k], self.issued[1][k]))
            drop = back.dec[DEC_PORTS + k]
            handed = self.sources[k]
            m.d.comb += [drop.valid.eq(held & hit), drop.preg.eq(Mux(drop.valid, preg, 0)),
                         handed.valid.eq(held & ~hit),
                         handed.preg.eq(Mux(handed.valid, preg, 0)),
                         back.dec[DEC_PORTS + SOURCES + k].eq(self.release[k])]

    def _sources(self, m):
        back = self.back
        m.d.comb += [back.hold.valid.eq(self.hold.valid),
                     back.hold.payload.eq(self.hold.payload),
                     self.hold.ready.eq(back.hold.ready)]
        _copy(m, self.held, back.held)
        _copy(m, back.drop, self.drop)

    def _hit_queue(self, m):
        """Reuse hits from ``out`` into the queue; the oldest to the pipeline's ``reuse``
        while the rename table can take its retirement. Returns: a hit arrives now."""
        front, back = self.front, self.back
        arriving = Signal()
        m.d.comb += arriving.eq(front.out.valid & front.out.payload.response.hit)
        entry = Signal(self.config.back.reuse_layout)
        m.d.comb += [entry.warp.eq(front.out.payload.warp), entry.reg.eq(front.out.payload.dst),
                     entry.preg.eq(front.out.payload.response.result)]
        m.d.comb += [back.reuse.valid.eq(self.count.any() & front.retire.ready),
                     back.reuse.payload.eq(self.queue[0])]
        leaving = back.reuse.valid & back.reuse.ready
        shifted = Mux(leaving, self.queue.as_value() >> len(entry.as_value()),
                      self.queue.as_value())
        after = Signal(range(BACKEND_HITS + 1))
        m.d.comb += after.eq(self.count - leaving)
        queue = Signal.like(self.queue)
        m.d.comb += queue.eq(shifted)
        for k in range(BACKEND_HITS):
            with m.If(arriving & equals(after, k)):
                m.d.comb += queue[k].eq(entry)
        m.d.sync += [self.queue.eq(queue), self.count.eq(after + arriving)]
        return arriving

    def _results(self, m, arriving):
        """Results into the pipeline, their reservation fields beside them."""
        back, result = self.back, self.result
        payload = result.payload
        open_ = Signal()
        m.d.comb += [open_.eq(~self.count.any() & ~arriving & self.front.retire.ready
                              & ~self.exit.valid & ~self.sweeping),
                     back.result.valid.eq(result.valid & open_),
                     back.result.payload.warp.eq(payload.warp),
                     back.result.payload.reg.eq(payload.reg),
                     back.result.payload.value.eq(payload.value),
                     back.result.payload.mask.eq(payload.mask),
                     result.ready.eq(back.result.ready & open_)]
        fill = Signal(self.config.fill_layout)
        m.d.comb += [fill.reserved.eq(payload.reserved), fill.index.eq(payload.index),
                     fill.tag.eq(payload.tag)]
        m.d.sync += [self.flight.eq(Cat(result.valid & result.ready, self.flight[0])),
                     self.carried[0].eq(fill), self.carried[1].eq(self.carried[0])]

    def _retire(self, m):
        """Every retirement to the front's rename table; a decided reserved result fills
        its reuse-buffer entry."""
        front, back = self.front, self.back
        retired = back.retired.payload
        divergent = (equals(retired.outcome.as_value(), Outcome.DUMMY_MOV.value)
                     | equals(retired.outcome.as_value(), Outcome.PINNED.value))
        _copy(m, self.retired, back.retired)
        m.d.comb += [front.retire.valid.eq(back.retired.valid),
                     front.retire.payload.warp.eq(retired.warp),
                     front.retire.payload.reg.eq(retired.reg),
                     front.retire.payload.preg.eq(retired.preg),
                     front.retire.payload.divergent.eq(divergent)]
        decided = self.carried[1]
        m.d.comb += [front.fill.valid.eq(self.flight[1] & decided.reserved),
                     front.fill.payload.index.eq(decided.index),
                     front.fill.payload.tag.eq(decided.tag),
                     front.fill.payload.result.eq(retired.preg)]

    def _exit(self, m):
        """An exit when the pipeline is empty: the front sweeps its table, the backend the
        mappings (``unmap``), one register a cycle from the next cycle."""
        config, front, back = self.config, self.front, self.back
        empty = ~self.flight.any() & ~self.count.any()
        m.d.comb += [front.exit.valid.eq(self.exit.valid & empty),
                     front.exit.payload.eq(self.exit.payload),
                     self.exit.ready.eq(front.exit.ready & empty)]
        with m.If(self.exit.valid & self.exit.ready):
            m.d.sync += [self.sweeping.eq(1), self.sweep_warp.eq(self.exit.payload),
                         self.sweep_reg.eq(0)]
        m.d.comb += [back.unmap.valid.eq(self.sweeping),
                     back.unmap.payload.warp.eq(self.sweep_warp),
                     back.unmap.payload.reg.eq(self.sweep_reg)]
        with m.If(self.sweeping):
            m.d.sync += self.sweep_reg.eq(self.sweep_reg + 1)
            with m.If(equals(self.sweep_reg, config.regs - 1)):
                m.d.sync += self.sweeping.eq(0)


def _copy(m, to, source):
    """Drive the valid-only port ``to`` from ``source``."""
    m.d.comb += [to.valid.eq(source.valid), to.payload.eq(source.payload)]
