"""Banked indirection table of the static data compression register file (paper 3.2.1-3.2.2)."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import or_all
from gpurf.hw.params import ConfiguredComponent

from .configs import DESTINATION, SOURCE, IndirectionTableConfig
from .layouts import indirection_entry_layout
from .logic import onehot_decode

__all__ = ["DESTINATION", "SOURCE", "IndirectionTable", "IndirectionTableConfig"]


class IndirectionTable(ConfiguredComponent, config=IndirectionTableConfig):
    """Indirection table: ``entries`` entries ``{r0, m0, r1, m1}`` in ``banks`` SRAM banks
    with an arbiter, serving ``ports`` lookups and loaded per kernel.

    Architectural register ``reg`` lives in bank ``reg mod banks``, row ``reg div banks``;
    each bank is an unmapped memory with one read port whose data is registered on the
    grant's edge (a synchronous read: one lookup per bank per cycle, like the register file
    it serves) and one write port (the load port).

    Timing:

    - Each port ``p`` has a *candidate* each cycle: the oldest lookup in its conflict buffer,
      else the incoming lookup when ``lookup_valid[p]``.
    - Each bank grants the lowest-numbered port whose candidate maps to it (spec: fixed
      priority, lowest port first); at most one grant per bank per cycle.
    - A lookup granted in cycle ``t`` shows ``result_valid[p]`` and ``result[p]`` = the
      entry and the lookup's ``tag`` in cycle ``t+1``. It reads the table as it was at the
      start of cycle ``t`` (a load in cycle ``t`` is seen from ``t+1``).
    - ``buffer = 0`` (the source table): ``lookup_ready[p]`` is the grant; an ungranted
      lookup waits with ready low (stream rule).
    - ``buffer = B >= 1`` (the destination table, paper 3.2.1): each port has a B-entry
      FIFO; ``lookup_ready[p]`` is high while the FIFO has room after this cycle's grant (it
      holds fewer than B, or its oldest lookup is granted). An accepted lookup that is not
      granted in its first cycle waits in the FIFO, so a conflict does not stall the
      writeback bus. Results of one port come in acceptance order.
    - ``load`` is always ready and writes one entry per cycle.
    - ``result[p]`` is zero while ``result_valid[p]`` is low. Every result comes exactly
      once per accepted lookup (proved in ``tb/compression/formal_indirection_table.py``).

    The memories are not reset: a kernel's contents are loaded before use (simulation
    starts from zeros). Reset empties the buffers and cancels results in flight.

    Attributes
    ----------
    lookup_valid : In(ports)
        Bit ``p``: port ``p`` offers a lookup.
    lookup : In(ArrayLayout(lookup_layout, ports))
        Per port: ``reg``, ``tag``.
    lookup_ready : Out(ports)
        Bit ``p``: port ``p``'s lookup is accepted on this edge (with its valid bit).
    result_valid : Out(ports)
        Bit ``p``: ``result[p]`` carries a lookup result this cycle.
    result : Out(ArrayLayout(result_layout, ports))
        Per port: ``entry``, ``tag``.
    load : In(stream.Signature(load_layout))
        Kernel contents: ``payload.{reg, entry}``.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        ports, banks, buffer = config.ports, config.banks, config.buffer
        self.grant = Signal(data.ArrayLayout(ports, banks))
        """``grant[b][p]``: bank ``b`` serves port ``p``'s candidate this cycle."""
        self.queue_count = Signal(data.ArrayLayout(range(buffer + 1), ports))
        """Lookups waiting in each port's conflict buffer."""
        self.queue = [[Signal(config.lookup_layout, name=f"queue_{p}_{i}")
                       for i in range(buffer)] for p in range(ports)]
        """Each port's conflict-buffer entries (flip-flops), oldest first."""

    def elaborate(self, platform):
        m = Module()
        config = self.config
        candidates = [self._candidate(m, p) for p in range(config.ports)]
        for b in range(config.banks):
            self._arbitrate(m, b, candidates)
        granted = [Signal(name=f"granted_{p}") for p in range(config.ports)]
        for p in range(config.ports):
            m.d.comb += granted[p].eq(Cat(self.grant[b][p] for b in range(config.banks)).any())
        for p, candidate in enumerate(candidates):
            self._buffer(m, p, candidate, granted[p])
        reads = [self._bank(m, b, candidates) for b in range(config.banks)]
        for p, candidate in enumerate(candidates):
            self._result(m, p, candidate, granted[p], reads)
        m.d.comb += self.load.ready.eq(1)
        return m

    def _candidate(self, m, p):
        """Port ``p``'s candidate: (valid, lookup, bank one-hot, from the buffer)."""
        config = self.config
        valid = Signal(name=f"cand_{p}_valid")
        lookup = Signal(config.lookup_layout, name=f"cand_{p}")
        queued = Signal(name=f"cand_{p}_queued")
        if config.buffer:
            head = self.queue[p][0]
            m.d.comb += queued.eq(self.queue_count[p] != 0)
            m.d.comb += lookup.eq(Mux(queued, head, self.lookup[p]))
        else:
            m.d.comb += lookup.eq(self.lookup[p])
        m.d.comb += valid.eq(queued | self.lookup_valid[p])
        bank = onehot_decode(m, lookup.reg[:config.bank_bits], config.banks, f"cand_{p}_bank")
        return valid, lookup, bank, queued

    def _arbitrate(self, m, b, candidates):
        """Bank ``b`` grants the lowest-numbered port whose candidate maps to it."""
        taken = None
        for p, (valid, _, bank, _) in enumerate(candidates):
            wants = Signal(name=f"bank_{b}_wants_{p}")
            m.d.comb += wants.eq(valid & bank[b])
            m.d.comb += self.grant[b][p].eq(wants if taken is None else wants & ~taken)
            if taken is None:
                taken = wants
            else:
                both = Signal(name=f"bank_{b}_taken_{p}")
                m.d.comb += both.eq(taken | wants)
                taken = both

    def _buffer(self, m, p, candidate, granted):
        """``lookup_ready[p]`` and port ``p``'s conflict-buffer FIFO."""
        config = self.config
        _, _, _, queued = candidate
        if not config.buffer:
            m.d.comb += self.lookup_ready[p].eq(granted)
            return
        count, queue = self.queue_count[p], self.queue[p]
        holds = onehot_decode(m, count, config.buffer + 1, f"queue_{p}_holds")
        accept = Signal(name=f"accept_{p}")
        push = Signal(name=f"push_{p}")
        pop = Signal(name=f"pop_{p}")
        m.d.comb += [
            self.lookup_ready[p].eq(~holds[config.buffer] | (queued & granted)),
            accept.eq(self.lookup_valid[p] & self.lookup_ready[p]),
            pop.eq(queued & granted),
            push.eq(accept & (queued | ~granted)),
        ]
        with m.If(push & ~pop):
            m.d.sync += count.eq(count + 1)
        with m.Elif(pop & ~push):
            m.d.sync += count.eq(count - 1)
        for i in range(config.buffer):
            shifted = queue[i + 1] if i + 1 < config.buffer else queue[i]
            with m.If(push & Mux(pop, holds[i + 1], holds[i])):
                m.d.sync += queue[i].eq(self.lookup[p])
            with m.Elif(pop):
                m.d.sync += queue[i].eq(shifted)

    def _bank(self, m, b, candidates):
        """Bank ``b``'s memory: read for its granted port, written by the load port."""
        config = self.config
        bank = memory.Memory(shape=indirection_entry_layout(), depth=config.rows, init=[])
        m.submodules[f"bank{b}"] = bank
        read, write = bank.read_port(domain="comb"), bank.write_port()
        data_out = Signal(indirection_entry_layout(), name=f"bank_{b}_data")
        row = Signal(range(config.rows), name=f"bank_{b}_row")
        for p, (_, lookup, _, _) in enumerate(candidates):
            with m.If(self.grant[b][p]):
                m.d.comb += row.eq(lookup.reg[config.bank_bits:])
        load = self.load.payload
        load_bank = onehot_decode(m, load.reg[:config.bank_bits], config.banks,
                                  f"load_{b}_bank")
        with m.If(self.grant[b].any()):
            m.d.sync += data_out.eq(read.data)
        m.d.comb += [
            read.addr.eq(row),
            write.addr.eq(load.reg[config.bank_bits:]),
            write.data.eq(load.entry),
            write.en.eq(self.load.valid & load_bank[b]),
        ]
        return data_out

    def _result(self, m, p, candidate, granted, reads):
        """Port ``p``'s result, one cycle after its grant, from the bank it was granted."""
        config = self.config
        _, lookup, bank, _ = candidate
        bank_was = Signal(config.banks, name=f"result_{p}_bank")
        tag = Signal(config.tag_width, name=f"result_{p}_tag")
        m.d.sync += [self.result_valid[p].eq(granted), bank_was.eq(bank), tag.eq(lookup.tag)]
        entry = Signal(indirection_entry_layout(), name=f"result_{p}_entry")
        m.d.comb += entry.eq(or_all(read.as_value() & bank_was[b].replicate(len(read.as_value()))
                                    for b, read in enumerate(reads)))
        m.d.comb += self.result[p].as_value().eq(
            Mux(self.result_valid[p], Cat(entry.as_value(), tag), 0))



def loaded_table(m, params: dict, load) -> IndirectionTable:
    """An :class:`IndirectionTable` of ``params``, added to ``m`` as ``table`` with its
    ``load`` stream driven by the enclosing path's ``load`` port."""
    m.submodules.table = table = IndirectionTable(**params)
    m.d.comb += [table.load.valid.eq(load.valid), table.load.payload.eq(load.payload),
                 load.ready.eq(table.load.ready)]
    return table
