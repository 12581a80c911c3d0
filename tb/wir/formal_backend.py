"""Formal harness of ``wir.backend``: no leak across the whole composition, assume-guarantee,
in a small configuration.

Inputs are free (``AnySeq``; warps, registers and block slots in range) after a reset in
the first cycle, except for the environment's protocol: ``drop`` names only a register it
holds through ``held``, ``release`` only one handed to it on ``sources``, and a result that
reserved a reuse-buffer entry is convergent (its lookup was: a divergent lookup reserves
nothing; the golden model raises otherwise). Without the last, a divergent reserved result
retires ``PINNED`` into its mapping's register and fills the entry with it, an increment
no saturation query gates (session 17's k-induction counterexample on ``count_3``).

**Assumptions (the parts' proven properties).** ``wir.register_pool``'s merge leaders
distinct and ``fresh``/``queued`` at most ``pregs`` (``formal_register_pool.py``); a valid
VSB entry names a handed-out register (``formal_value_signature_buffer.py``); the rename
table's cleared rows are zero while it clears (``formal_rename_table.py``); the
pending-retry queue's count at most its depth (``formal_pending_retry.py``); (session 21)
the pool's ledger while no allocated register has been led (``formal_pool_ledger.py``).

**Guarantees (asserted).** Per physical register ``r``, its holders are the valid
mappings, the valid VSB entries, the reuse buffer's valid entries (register operands; the
result once filled), the reuse hit on the front's ``out`` and those in the hit queue, the
in-flight source references (of the instruction in the reuse stage, of the one on ``out``,
of each pending-retry ticket) and the environment's (held through ``hold``, handed on
``sources``):

- **no leak, counted once**: a register with holders was handed out, is not in the free
  queue and its count (stored counter plus the merge register's pending change) equals its
  holders; a register without holders is free exactly once;
- **the read copy**: every row of the front's rename table equals the pipeline's mapping
  (valid bit; register and pin while valid);
- **the hit queue** never holds more than 3 (session 16), and during an exit sweep the
  queue plus the front's instructions (reuse stage, ``out``) hold at most 3 (session 17:
  a strengthening for k-induction; nothing enters the front while its table sweeps);
- every allocation the decide stage asks for is offered;
- (strengthening, the headroom argument of ``wir.backend``) a handed-out register's count
  is at most the saturation minus one plus :data:`MOST_INCREMENTS`, and a reserved result
  in the register allocator's stages is convergent;
- (strengthening for the counting step, session 19, :meth:`BackendFormal._pool_flow`) the
  free registers cover the results in flight, a leading merge slot names a handed-out
  register with a change its ports can make, and the decide stage's verifies are
  convergent and name their VSB entry's register;
- (the counting step split, session 21, :meth:`BackendFormal._ledgers`) per register and
  group of holders (:data:`LEDGERS`), the group next cycle is itself plus its ports' net
  events; all ports' net events are the groups'; an allocated register is not led by a
  merge slot, and never has been.
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.backend import Backend
from gpurf.hw.wir.configs import DEC_PORTS, INC_PORTS, SOURCES
from gpurf.hw.wir.layouts import AllocKind, LoadKind, Outcome

from ..formal_base import FormalHarness, popcount
from .formal_pool_ledger import net_events
from .formal_register_pool import leaders_distinct, pool_count

__all__ = ["COUNTED", "DIRECTED", "LEDGERS", "MOST_INCREMENTS", "SMALL", "BackendFormal"]

MOST_INCREMENTS = 8
"""The most increments one register takes in one cycle in ``wir.backend``: a verify hit
(+1) and the fill of its reuse-buffer entry (+1), the reuse stage's one lookup (a
reservation naming it as all three operands, +3, or a hit, +1) and an issue naming it as
all three sources (+3); a hold (+1) is refused in the cycle of a verify hit on its register
(``wir.pipeline``'s clash), so with a hold at most 7. Each is refused by a saturation query
of the same cycle (the fill by the verify hit's; the fill of a new register starts it at
3), so a count never exceeds ``saturation - 1 + MOST_INCREMENTS`` (29 of 31 at 5 bits;
``test_headroom_burst_reaches_the_bound``); docs/reliability.md."""

SMALL = {"warps": 1, "regs": 2, "pregs": 4, "lanes": 1, "data_width": 2, "hash_width": 1,
         "entries": 2, "reuse_entries": 2, "imm_bits": 2, "blocks": 1, "barrier_bits": 1,
         "retry_depth": 2, "count_width": 5, "low_water": 1, "verify_cache": 0}
"""The proof configuration: 1 warp x 2 logical registers, 4 physical registers, 2 VSB
and 2 reuse-buffer entries, 2-bit values with 1-bit hashes (collisions), a 2-deep
pending-retry queue, 5-bit counts (the backend's least: saturation from 22). No verify
cache: it holds no reference and decides no outcome (its coherence is proved in
``formal_pipeline.py``), so it would only add state to this proof."""

OWN_INC, OWN_DEC = 3, 4
"""The pipeline's own pool ports before the backend's (``wir.pipeline``): increments share,
install, hold; decrements old mapping, displaced VSB entry, drop, exit sweep."""
_REUSE_INC = OWN_INC
"""The reuse buffer's first port: its reservation's operands, then its hit, then its fill."""
_ISSUE_INC = OWN_INC + INC_PORTS
_HIT_DEC, _RELEASE_DEC = OWN_DEC + DEC_PORTS, OWN_DEC + DEC_PORTS + SOURCES

LEDGERS = {
    "results": ((0, 1, _REUSE_INC + SOURCES), (0, 1, 3)),
    "reuse": ((*range(_REUSE_INC, _REUSE_INC + SOURCES), _REUSE_INC + SOURCES + 1),
              tuple(range(OWN_DEC, OWN_DEC + DEC_PORTS))),
    "sources": (tuple(range(_ISSUE_INC, _ISSUE_INC + SOURCES)),
                tuple(range(_HIT_DEC, _HIT_DEC + SOURCES))),
    "environment": ((2,), (2, *range(_RELEASE_DEC, _RELEASE_DEC + SOURCES))),
}
"""The holders in four groups, each with the pool ports of its events (increment ports,
decrement ports; session 21): ``results`` (the mappings, the VSB entries, the reuse hit on
``out`` and those queued: the share ``inc[0]``, the install ``inc[1]``, the reuse buffer's
hit ``inc[6]``; the retirement's old mapping ``dec[0]``, the VSB's displaced entry
``dec[1]``, the exit sweep's ``dec[3]``; and the allocation), ``reuse`` (the reuse
buffer's entries: the reservation's operands ``inc[3..5]``, the fill ``inc[7]``, a
dropped entry's ``dec[4..7]``), ``sources`` (the in-flight source references: the issue's
``inc[8..10]``, a hit's ``dec[8..10]``), ``environment`` (``hold`` ``inc[2]``, ``drop``
``dec[2]``, ``release`` ``dec[11..13]``). The pipeline gives the pool its own ports
``inc[0..2]`` and ``dec[0..3]`` and then the backend's (``wir.pipeline``); an
instruction's sources handed to the environment on ``sources`` move from ``sources`` to
``environment`` with no event."""

COUNTED = (r"held_not_queued_\d+", r"free_once_\d+", r"count_\d+", r"count_headroom_\d+",
           "allocation_served", "free_covers_flight", r"pending_handed_\d+",
           r"pending_range_\d+", "divergent_not_verified", "verify_names_its_entry",
           r"alloc_unled_\d+", "exclusion_held", r"net_split_\d+",
           *(rf"ledger_{group}_\d+" for group in LEDGERS))
"""The assertions of the counting argument (``prove``'s ``drop``/``assume`` patterns): no
leak counted once, every allocation served, the strengthening they need (session 19) and
the ledgers ``count_r``'s step is split into (session 21, :meth:`BackendFormal._ledgers`).
The harness's other assertions (the structure: the hit queue, the copy, the stages and
queues in range, the flags in flight) are proved first without them, by ABC's ``pdr``;
the counting ones then by k-induction with the structure assumed (docs/reliability.md)."""

DIRECTED = {"regs": 1, "data_width": 1}
"""The configuration of the directed harness (``BackendFormal(directed=True)``): ``SMALL``
with 1 logical register and 1-bit values."""


class BackendFormal(FormalHarness):
    """The backend with free inputs, the environment's protocol and the parts' proven
    invariants assumed, the guarantees above asserted.

    Parameters
    ----------
    directed : bool, optional
        Restrict the environment (:meth:`_directed`) to one instruction with a register
        source, issued again and again, and results that fill the last reservation: a
        sub-environment of the free one in which a reuse hit with a register source is
        reached within BMC's reach (the kill of ``HitSourcesKept``); every assertion is
        unchanged. Default ``False``.
    """

    block = Backend
    SMALL = SMALL

    def __init__(self, *, directed=False, **params):
        self.directed = directed
        super().__init__(**params)

    def check(self, m):
        dut = self.dut
        self._drive(m)
        environment = self._environment(m)
        self.queued_tickets = self._queued(m)
        self._parts(m)
        self._no_leak(m, environment)
        self._pool_flow(m)
        self._copy(m)
        m.d.comb += Assert(dut.count <= 3, "hit_queue_at_most_3")
        with m.If(dut.flight[0]):
            m.d.comb += Assert(dut.count == 0, "no_hit_behind_a_new_result")
        with m.If(dut.flight[1]):
            m.d.comb += Assert(dut.count <= 1, "one_hit_behind_a_decision")
        front = dut.front
        with m.If(dut.sweeping):
            m.d.comb += Assert(dut.count + front.out.valid + front.rename.renamed.valid <= 3,
                               "sweep_holds_at_most_3")
        self._queues(m)
        self._covers(m)

    def _drive(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.issue, dut.result, dut.hold, dut.exit, dut.barrier,
                          dut.launch, dut.drop)
        self.free(m, dut.release)
        if self.directed:
            self._directed(m)
        issue = dut.issue.payload
        m.d.comb += [
            Assume(issue.warp < config.warps), Assume(issue.dst < config.regs),
            Assume(issue.tb < config.blocks),
            Assume(dut.result.payload.warp < config.warps),
            Assume(dut.result.payload.reg < config.regs),
            Assume(dut.hold.payload.warp < config.warps),
            Assume(dut.hold.payload.reg < config.regs),
            Assume(dut.exit.payload < config.warps),
            Assume(dut.barrier.payload.tb < config.blocks),
            Assume(dut.launch.payload.tb < config.blocks),
        ]
        for k in range(SOURCES):
            with m.If(issue.opcode.regs[k]):
                m.d.comb += Assume(issue.operand[k] < config.regs)
        result = dut.result
        with m.If(result.valid & result.ready & result.payload.reserved):
            m.d.comb += Assume(result.payload.mask.all())

    def _directed(self, m):
        """No ``hold``, ``drop``, ``exit``, ``barrier``, ``launch`` nor ``release``; every
        issue the same instruction, its operand 0 register 0 and the others zero
        immediates; a result's reservation (if any) that of the last ``out`` that reserved
        an entry (as the environment of ``tb/wir/test_backend.py`` returns it)."""
        dut = self.dut
        quiet = [dut.hold.valid, dut.drop.valid, dut.exit.valid, dut.barrier.valid,
                 dut.launch.valid, *(dut.release[k].valid for k in range(SOURCES))]
        m.d.comb += [Assume(~valid) for valid in quiet]
        issue = dut.issue.payload
        m.d.comb += [Assume(issue.opcode.regs == 1), Assume(issue.opcode.op == 0),
                     Assume(issue.operand.as_value() == 0), Assume(issue.divergent == 0),
                     Assume(issue.kind == LoadKind.OTHER), Assume(issue.store_shared == 0),
                     Assume(issue.store_global == 0), Assume(issue.bypass == 0)]
        out, result = dut.front.out, dut.result.payload
        lookup, response = out.payload.lookup, out.payload.response
        preg_bits = self.dut.config.preg_bits
        tag = Cat(lookup.opcode, *(lookup.operand[k][:preg_bits] for k in range(SOURCES)),
                  lookup.tbid, lookup.barrier)
        saved = Signal(1 + len(response.index) + len(tag), name="reservation")
        with m.If(out.valid & response.reserved):
            m.d.sync += saved.eq(Cat(1, response.index, tag))
        with m.If(dut.result.valid & result.reserved):
            m.d.comb += Assume(Cat(1, result.index, result.tag) == saved)

    def _environment(self, m):
        """Per register, the references the environment holds (``held`` minus ``drop``,
        ``sources`` minus ``release``), and its protocol."""
        dut, config = self.dut, self.dut.config
        counts = []
        for r in range(config.pregs):
            count = Signal(range(64), name=f"environment_{r}")
            taken = (dut.held.valid & (dut.held.payload == r)) + sum(
                dut.sources[k].valid & (dut.sources[k].preg == r) for k in range(SOURCES))
            ended = (dut.drop.valid & (dut.drop.payload == r)) + sum(
                dut.release[k].valid & (dut.release[k].preg == r) for k in range(SOURCES))
            with m.If(self.running):
                m.d.comb += Assume(count >= ended)
            m.d.sync += count.eq(count + taken - ended)
            counts.append(count)
        return counts

    def _parts(self, m):
        """The parts' proven invariants, assumed."""
        dut = self.dut
        pool, vsb = dut.back.pool, dut.back.alloc.vsb
        config = pool.config
        for _, _, distinct in leaders_distinct(pool):
            m.d.comb += Assume(distinct)
        m.d.comb += [Assume(pool.fresh <= config.pregs), Assume(pool.queued <= config.pregs)]
        for e in range(vsb.config.entries):
            read = vsb.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            with m.If(vsb.valid[e]):
                m.d.comb += Assume(read.data.preg < pool.fresh)
        rename = dut.front.rename
        with m.If(rename.clearing):
            for w, row in enumerate(self._rows(m)):
                with m.If(w < rename.clear_row):
                    m.d.comb += Assume(row.as_value() == 0)
        m.d.comb += Assume(dut.front.retry.count <= dut.config.retry_depth)

    def _rows(self, m):
        rename = self.dut.front.rename
        rows = []
        for w in range(self.dut.config.warps):
            read = rename.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(w)
            rows.append(read.data)
        return rows

    def _holder_groups(self, m, r, environment):
        """Register ``r``'s holders (one-bit terms and counts) in the groups of
        :data:`LEDGERS`."""
        dut = self.dut
        config, front, back = dut.config, dut.front, dut.back
        results = [e.valid & (e.preg == r) for e in back.mapping]
        vsb = back.alloc.vsb
        for e in range(vsb.config.entries):
            read = vsb.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            results.append(vsb.valid[e] & (read.data.preg == r))
        out = front.out.payload
        results.append(front.out.valid & out.response.hit & (out.response.result == r))
        results += [(k < dut.count) & (dut.queue[k].preg == r) for k in range(config.hits)]
        reuse = front.reuse
        tags = config.front.reuse.tag_layout
        entries = []
        for e in range(config.reuse_entries):
            read = reuse.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            view = tags(read.data.tag)
            entries += [reuse.valid[e] & view.opcode.regs[k] & (view.operand[k] == r)
                        for k in range(SOURCES)]
            entries.append(reuse.valid[e] & ~read.data.pending & (read.data.result == r))
        renamed = front.rename.renamed.payload
        sources = [dut.issued[0][k] & (renamed.src[k].preg == r) for k in range(SOURCES)]
        leaves = front.out.valid & ~out.response.pending
        sources += [leaves & Mux(out.retried, out.lookup.opcode.regs[k], dut.issued[1][k])
                    & (out.lookup.operand[k][:config.preg_bits] == r) for k in range(SOURCES)]
        sources += self._tickets(r)
        return {"results": results, "reuse": entries, "sources": sources,
                "environment": [environment[r]]}

    def _tickets(self, r):
        """The pending-retry tickets' register operands naming ``r``."""
        return [inside & ticket.tag.opcode.regs[k] & (ticket.tag.operand[k] == r)
                for inside, ticket in self.queued_tickets for k in range(SOURCES)]

    def _queued(self, m):
        """Per slot of the pending-retry ring: whether it holds a queued ticket, and the
        ticket."""
        config, retry = self.dut.config.front, self.dut.front.retry
        slots = []
        for slot in range(config.retry_depth):
            read = retry.ring.read_port(domain="comb")
            position = Signal(range(config.retry_depth), name=f"ticket_pos_{slot}")
            m.d.comb += [read.addr.eq(slot), position.eq(slot - retry.head)]
            slots.append((position < retry.count, config.ticket_layout(read.data)))
        return slots

    def _no_leak(self, m, environment):
        dut = self.dut
        pool = dut.back.pool
        config = pool.config
        slots = []
        for i in range(config.pregs):
            read = pool.queue.read_port(domain="comb")
            position = Signal(config.preg_bits, name=f"queue_pos_{i}")
            m.d.comb += [position.eq(i - pool.head), read.addr.eq(i)]
            slots.append((position < pool.queued, read.data))
        ledgers = []
        for r in range(config.pregs):
            groups = {}
            for group, terms in self._holder_groups(m, r, environment).items():
                groups[group] = Signal(range(128), name=f"{group}_{r}")
                m.d.comb += groups[group].eq(sum(terms))
            holders = Signal(range(128), name=f"holders_{r}")
            m.d.comb += holders.eq(sum(groups.values()))
            count, hits = pool_count(m, pool, r, range(-64, 128))
            handed = pool.fresh > r
            queued = popcount(Cat(inside & (held == r) for inside, held in slots))
            returning = Cat(hits).any() & (count == 0)
            with m.If(holders != 0):
                m.d.comb += [Assert(handed, f"held_handed_{r}"),
                             Assert(queued == 0, f"held_not_queued_{r}")]
            with m.Else():
                m.d.comb += Assert(~handed + queued + returning == 1, f"free_once_{r}")
            with m.If(handed):
                m.d.comb += [Assert(count == holders, f"count_{r}"),
                             Assert(count < config.saturation + MOST_INCREMENTS,
                                    f"count_headroom_{r}")]
            ledgers.append(self._ledgers(m, r, groups, count, hits))
        self._pool_ledger(m, ledgers)
        m.d.comb += Assert(~pool.alloc.ready | pool.alloc.valid, "allocation_served")

    def _ledgers(self, m, r, groups, count, hits):
        """(The counting step split, session 21) each group of :data:`LEDGERS` next cycle
        is itself plus its ports' net events naming ``r`` (``ledger_{group}_r``; the
        allocation of ``r`` joins ``results``, the sources handed to the environment move
        from ``sources`` to ``environment``); the net events of all ports are the groups'
        (``net_split_r``); an allocated register is not led by a merge slot
        (``alloc_unled_r``, what the pool's ledger assumes). Returns the exclusion and
        the pool's ledger: ``r``'s count next cycle is 1 if allocated else its count (modulo
        ``2**count_width``), plus the net events (``formal_pool_ledger.py``)."""
        dut = self.dut
        pool = dut.back.pool
        allocated = pool.alloc.valid & pool.alloc.ready & (pool.alloc.payload == r)
        given = Signal(range(SOURCES + 1), name=f"given_{r}")
        m.d.comb += given.eq(sum(dut.sources[k].valid & (dut.sources[k].preg == r)
                                 for k in range(SOURCES)))
        moved = {"results": allocated, "sources": -given, "environment": given}
        events = []
        for group, (incs, decs) in LEDGERS.items():
            net = Signal(range(-16, 16), name=f"events_{group}_{r}")
            m.d.comb += net.eq(net_events(pool, r, incs, decs))
            expected = Signal(range(-64, 192), name=f"expected_{group}_{r}")
            m.d.sync += expected.eq(groups[group] + net + moved.get(group, 0))
            with m.If(self.after_reset):
                m.d.comb += Assert(groups[group] == expected, f"ledger_{group}_{r}")
            events.append(net)
        net = Signal(range(-32, 32), name=f"net_{r}")
        m.d.comb += [net.eq(net_events(pool, r)), Assert(net == sum(events), f"net_split_{r}")]
        unled = Signal(name=f"unled_{r}")
        m.d.comb += [unled.eq(~(allocated & Cat(hits).any())), Assert(unled, f"alloc_unled_{r}")]
        following = Signal(range(-64, 128), name=f"count_next_{r}")
        m.d.sync += following.eq(Mux(allocated, 1, count[:pool.config.count_width]) + net)
        return unled, count == following

    def _pool_ledger(self, m, ledgers):
        """The pool's ledger (proved on the pool, ``formal_pool_ledger.py``), assumed for
        every handed-out register while no allocated register has been led so far (the
        pool's proof assumes it; ``exclusion_held`` asserts that it always holds)."""
        pool = self.dut.back.pool
        unled = Cat(exclusion for exclusion, _ in ledgers).all()
        held = Signal(init=1, name="exclusion_so_far")
        m.d.sync += held.eq(held & unled)
        m.d.comb += Assert(held, "exclusion_held")
        for r, (_, ledger) in enumerate(ledgers):
            with m.If(self.after_reset & held & unled & (pool.fresh > r)):
                m.d.comb += Assume(ledger)

    def _pool_flow(self, m):
        """(Strengthening, session 19: what the k-induction step of the counting argument
        needs beside the structure) the free registers cover the results in flight (the
        pipeline takes a result only while more are free than in flight: so every
        allocation is served); a merge slot that leads names a handed-out register, with a
        change its ports can make (a decrement slot ``s``: from ``s - dec_ports`` to
        ``inc_ports``; an increment slot: from 1 to the slots from it on); at the decide
        stage a divergent result never verifies, and a verify whose entry was not written
        last cycle names its VSB entry's register."""
        back = self.dut.back
        pool, vsb, decide = back.pool, back.alloc.vsb, back.alloc.out
        config = pool.config
        m.d.comb += Assert(pool.in_use + popcount(back.carried) <= config.pregs,
                           "free_covers_flight")
        for s in range(config.slots):
            slot = pool.pending[s]
            low, high = ((s - config.dec_ports, config.inc_ports) if s < config.dec_ports
                         else (1, config.slots - s))
            with m.If(slot.leader):
                m.d.comb += [Assert(slot.preg < pool.fresh, f"pending_handed_{s}"),
                             Assert((slot.delta >= low) & (slot.delta <= high),
                                    f"pending_range_{s}")]
        verify = decide.valid & (decide.payload.kind == AllocKind.VERIFY)
        m.d.comb += Assert(~(verify & decide.payload.divergent), "divergent_not_verified")
        index = decide.payload.hash[:vsb.config.index_bits]
        entry = vsb.table.read_port(domain="comb")
        m.d.comb += entry.addr.eq(index)
        with m.If(verify & ~(back.wrote & (back.wrote_index == index))):
            m.d.comb += Assert(vsb.valid.bit_select(index, 1)
                               & (entry.data.preg == decide.payload.preg),
                               "verify_names_its_entry")

    def _queues(self, m):
        """(Strengthening) the hit queue's entries, the pending-retry tickets, the register
        allocator's two stages, the rename stage, ``out`` and the exit sweep name warps and
        registers in range; the ring's tail is its head plus its count."""
        dut, config = self.dut, self.dut.config
        for k in range(config.hits):
            entry = dut.queue[k]
            with m.If(k < dut.count):
                m.d.comb += [Assert(entry.warp < config.warps, f"hit_warp_{k}"),
                             Assert(entry.reg < config.regs, f"hit_reg_{k}")]
        for slot, (inside, ticket) in enumerate(self.queued_tickets):
            with m.If(inside):
                m.d.comb += [Assert(ticket.warp < config.warps, f"ticket_warp_{slot}"),
                             Assert(ticket.dst < config.regs, f"ticket_dst_{slot}")]
        ticket_layout = dut.back.config.ticket_layout
        for s, stage in enumerate(dut.back.alloc.pipe):
            ticket = ticket_layout(stage.ticket)
            with m.If(stage.valid):
                m.d.comb += Assert((ticket.warp < config.warps) & (ticket.reg < config.regs),
                                   f"alloc_ticket_{s}")
        front = dut.front
        with m.If(front.out.valid):
            m.d.comb += Assert((front.out.payload.warp < config.warps)
                               & (front.out.payload.dst < config.regs), "out_in_range")
        with m.If(front.rename.renamed.valid):
            m.d.comb += Assert((front.stage.warp < config.warps)
                               & (front.stage.dst < config.regs), "stage_in_range")
        with m.If(dut.sweeping):
            m.d.comb += Assert(dut.sweep_warp < config.warps, "sweep_warp")
        self._sweep(m)
        self._in_flight(m)
        retry = dut.front.retry
        m.d.comb += Assert(retry.tail == (retry.head + retry.count)[:len(retry.tail)], "tail")

    def _sweep(self, m):
        """(Strengthening) the backend's exit sweep and the rename table's run in lockstep
        (same warp, same register), with no result in flight."""
        dut, rename = self.dut, self.dut.front.rename
        m.d.comb += Assert(rename.sweeping == dut.sweeping, "sweep_lockstep")
        with m.If(dut.sweeping):
            m.d.comb += Assert((rename.sweep_warp == dut.sweep_warp)
                               & (rename.sweep_reg == dut.sweep_reg)
                               & ~dut.flight.any(), "sweep_same_row")

    def _in_flight(self, m):
        """(Strengthening) the backend's flags of the instructions and results in flight
        agree with the parts: ``flight`` is the pipeline's ``carried``, and so are the
        register allocator's stages' valid bits; ``issued[0]`` marks
        the mapped register sources of the instruction in the reuse stage, ``issued[1]``
        register sources of a fresh instruction on ``out``; a stage's result that reserved
        a reuse-buffer entry is convergent (the environment's protocol, so no ``PINNED``
        fill)."""
        dut, front = self.dut, self.dut.front
        renamed, out = front.rename.renamed, front.out
        m.d.comb += Assert(dut.flight == dut.back.carried, "flight")
        for s, stage in enumerate(dut.back.alloc.pipe):
            m.d.comb += Assert(stage.valid == dut.back.carried[s], f"alloc_stage_{s}")
            with m.If(stage.valid & dut.carried[s].reserved):
                m.d.comb += Assert(~stage.divergent, f"reserved_convergent_{s}")
        for k in range(SOURCES):
            mapped = renamed.valid & front.stage.opcode.regs[k] & renamed.payload.src[k].valid
            m.d.comb += Assert(dut.issued[0][k] == mapped, f"issued_{k}")
            with m.If(dut.issued[1][k]):
                m.d.comb += Assert(out.valid & ~out.payload.retried
                                   & out.payload.lookup.opcode.regs[k], f"issued_out_{k}")

    def _copy(self, m):
        """The front's rename table equals the pipeline's mappings (once cleared)."""
        dut, config = self.dut, self.dut.config
        with m.If(~dut.front.rename.clearing):
            for w, row in enumerate(self._rows(m)):
                for reg in range(config.regs):
                    mapping = dut.back.mapping[w * config.regs + reg]
                    m.d.comb += Assert(row[reg].valid == mapping.valid, f"copy_valid_{w}_{reg}")
                    with m.If(mapping.valid):
                        m.d.comb += Assert((row[reg].preg == mapping.preg)
                                           & (row[reg].pin == mapping.pin), f"copy_{w}_{reg}")

    def _covers(self, m):
        """Each outcome; a hit queued behind a decision; a reserved result filling its
        entry; an exit sweep; sources handed and released; a result waiting for the hit
        queue; an issue waiting on a saturated source (out of reset)."""
        dut = self.dut
        retired = dut.retired
        front = dut.front
        self.covers(m, [
            *((retired.valid & (retired.payload.outcome == outcome), outcome.name.lower())
              for outcome in Outcome),
            (dut.count == 2, "two_hits_queued"),
            (front.fill.valid & front.inc[1 + 4].valid, "fill"),
            (dut.sweeping, "exit_sweep"),
            (Cat(dut.sources[k].valid for k in range(SOURCES)).any(), "sources_handed"),
            (Cat(dut.release[k].valid for k in range(SOURCES)).any(), "sources_released"),
            (dut.result.valid & ~dut.result.ready & dut.count.any(), "result_waits_for_hit"),
            (front.out.valid & front.out.payload.response.pending, "pending_queued"),
        ], guard=self.running)

