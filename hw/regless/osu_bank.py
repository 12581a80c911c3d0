"""One bank of RegLess's operand staging unit (paper Section 5.2, Fig. 10)."""

import functools

from amaranth import Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import lowest, onehot, or_all
from gpurf.hw.params import ConfiguredComponent

from .configs import OsuBankConfig

__all__ = ["OsuBank"]


class OsuBank(ConfiguredComponent, config=OsuBankConfig):
    """One OSU bank: tag store, data store, free / clean / dirty lists (paper 5.2, Fig. 10).

    **State.** Tags ``{warp, reg}`` in flip-flops (a tag is valid while its line is not on the
    free list, so the paper's valid bit is the complement of the free bit); the data store is
    an unmapped memory of ``lines`` words of ``lanes x data_width`` bits (one synchronous read
    port, one write port, one access per cycle). Per line, flip-flops ``free``, ``clean``,
    ``dirty``, ``used`` (exactly one set: the three lists of the paper and "in use by a
    region"), ``written`` (the paper's dirty bit: the value is newer than L1's) and
    ``filling`` (in use, waiting for a preload's value). After reset every line is free.

    **Allocation** (a reserve or a preload that misses): the lowest-numbered free line, else
    the lowest-numbered clean line (its value is dropped: L1 has it). With neither, the
    request waits (ready low) and, in a cycle in which no tag operation completes, the
    lowest-numbered dirty line is *chosen for eviction* (one at a time): it is read out in
    the next cycle with a free data port, offered on ``writeback``, and after the transfer
    it moves to the clean list, where the waiting request takes it. **Interpretation:** the
    paper's lists have no stated order; each list is taken lowest line first (the spec's
    arbitration default).

    **Tag port** (one tag operation completes per cycle; priority read > reserve > preload >
    release, the highest-priority request that can complete this cycle wins; every request
    port has its own comparators, so a request that must wait never blocks a lower one —
    **interpretation**: the spec names read > reserve > preload; evict/erase come last).
    A reserve or preload hitting a line that is filling or chosen for eviction waits.

    **Data port** (one access per cycle, priority write > read > fill > eviction read-out, spec
    interpretation; eviction read-out needs a cycle with none of the others). ``write`` is
    always ready. A read waits while a write arrives or while an eviction's value is held in the
    output register (reads stall until the compressor takes it).

    **Operations** (request streams; latency from the transfer):

    - ``read`` ``{warp, reg}``: ``read_resp`` (valid-only) 1 cycle later carries the line's
      data. A read that misses (no tag, or the line is not in use or still filling) still
      transfers, answers garbage and sets the sticky ``protocol_error``.
    - ``reserve`` ``{warp, reg, last_use}``: present -> that line (off its list, in use);
      absent -> an allocated line (in use, not written). ``reserve_resp`` (valid-only, latency
      0) carries ``{line, last_use}``.
    - ``write`` ``{line, data, last_use}`` (always ready): on a line in use and not filling,
      stores the data and sets ``written``; with ``last_use`` the line goes to the dirty list.
      A write to any other line is ignored.
    - ``preload`` ``{warp, reg, invalidate}``: present -> the line leaves its list (in use),
      acknowledged on ``preloaded`` at once; absent -> a line is allocated (in use, filling)
      and ``fetch`` offers ``{warp, reg, line}`` from the next cycle (a one-entry output
      register; the preload waits while it is full and not taken). With ``invalidate`` the
      request goes to ``fetch`` (``line`` 0, ``invalidate`` 1) without a tag lookup and is
      acknowledged at once (paper 5.2.1: routed immediately to L1). A preload that would
      acknowledge waits in a cycle in which a fill transfers (one ``preloaded`` port).
    - ``fill`` ``{line, data}`` (ready when no write or read uses the data port): on a
      filling line stores the data (the line stays in use, clean) and acknowledges the
      line's warp on ``preloaded`` in the same cycle; otherwise ignored.
    - ``release`` ``{warp, reg, erase}``: on a line in use and not filling, ``evict`` moves it
      to the dirty list if written, else the clean list; ``erase`` to the free list (the
      value is dead). Otherwise ignored.
    - ``writeback`` (out): ``{warp, reg, line, data}`` of the line chosen for eviction.

    The effects of one cycle apply in this order (a later one wins on the same line):
    writeback transfer, write, fill, the tag operation; each is decided on the state at the
    start of the cycle.

    **Latencies** (from the request's transfer): ``read_resp`` 1 cycle; ``reserve_resp`` and
    a preload hit's acknowledgement 0; a preload miss's ``fetch`` offer 1 (its
    acknowledgement comes with the fill); an eviction chosen at edge ``t`` is offered on
    ``writeback`` from ``t + 2`` at the earliest, and the waiting allocation completes in
    the cycle after the writeback transfer at the earliest. The data port's output register
    drives both ``read_resp.payload`` and ``writeback.payload.data``, gated to 0 unless one
    of them is valid (the register is not reset).

    Attributes
    ----------
    read : In(stream.Signature(osu_ref_layout))
    read_resp : Out(valid_only(warp_value_layout))
    reserve : In(stream.Signature(osu_reserve_layout))
    reserve_resp : Out(valid_only(osu_reserved_layout))
    write : In(stream.Signature(osu_write_layout))
    preload : In(stream.Signature(osu_preload_layout))
    preloaded : Out(valid_only(warp_bits))
    fetch : Out(stream.Signature(osu_fetch_layout))
    fill : In(stream.Signature(osu_fill_layout))
    release : In(stream.Signature(osu_release_layout))
    writeback : Out(stream.Signature(osu_writeback_layout))
    protocol_error : Out(1)
        Sticky: a read missed.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        lines = config.lines
        self.tags = Signal(data.ArrayLayout(config.ref_layout, lines))
        self.free = Signal(lines, init=(1 << lines) - 1)
        self.clean = Signal(lines)
        self.dirty = Signal(lines)
        self.used = Signal(lines)
        self.written = Signal(lines)
        self.filling = Signal(lines)
        self.chosen = Signal()
        """A dirty line (``evict_line``) is chosen for reuse and waits for a free data-port
        cycle to be read out."""
        self.held = Signal()
        """The chosen line's value sits in the data port's output register, offered on
        ``writeback``."""
        self.evict_line = Signal(config.line_bits)

    @functools.cached_property
    def data(self) -> memory.Memory:
        """The data store (created on first use: elaboration, or a formal harness adding
        its own read ports)."""
        return memory.Memory(shape=self.config.value_layout, depth=self.config.lines, init=[])

    @functools.cached_property
    def data_read(self) -> memory.ReadPort:
        """The data store's synchronous read port; its ``data`` is the data port's output
        register (not reset: the outputs it drives are gated by their valid)."""
        return self.data.read_port(transparent_for=())

    @functools.cached_property
    def data_write(self) -> memory.WritePort:
        return self.data.write_port()

    def elaborate(self, platform):
        m = Module()
        m.submodules.data = self.data
        read_xfer, out_data, read_line = self._read(m)
        tag, fill_xfer, need_evict = self._tag_ops(m, read_xfer)
        fill_eff, write_eff = self._fill(m, tag, fill_xfer)
        wb_done = self._evict(m, read_xfer, read_line, out_data, tag, fill_xfer, need_evict)
        self._lines(m, tag, fill_eff, write_eff, wb_done)
        return m

    # --- helpers ---------------------------------------------------------------------

    def _lookup(self, m, name, payload):
        """Per-line hits of ``(payload.warp, payload.reg)``, whether any hit, and the hit
        line (lowest first; 0 when none)."""
        hits = Signal(self.config.lines, name=f"{name}_hits")
        for i in range(self.config.lines):
            tag = self.tags[i]
            m.d.comb += hits[i].eq(~self.free[i] & (tag.warp == payload.warp)
                                   & (tag.reg == payload.reg))
        return hits, hits.any(), _first(m, hits, self.config.line_bits, f"{name}_line")

    # --- read ------------------------------------------------------------------------

    def _read(self, m):
        """``read``: its transfer, the data port's output register gated to 0 unless it holds
        a value a read or a writeback shows (the register is not reset: no X on the
        outputs), and the line read."""
        out_data = Signal(self.config.lanes * self.config.data_width, name="out_data")
        m.d.comb += out_data.eq(Mux(self.read_resp.valid | self.held,
                                    self.data_read.data.as_value(), 0))
        hits, hit, line = self._lookup(m, "read", self.read.payload)
        ok = Signal()
        xfer = Signal(name="read_xfer")
        held = self.held
        m.d.comb += [
            ok.eq(hit & (hits & self.used & ~self.filling).any()),
            self.read.ready.eq(~self.write.valid & ~held),
            xfer.eq(self.read.valid & self.read.ready),
            self.read_resp.payload.eq(out_data),
        ]
        m.d.sync += self.read_resp.valid.eq(xfer)
        with m.If(xfer & ~ok):
            m.d.sync += self.protocol_error.eq(1)
        return xfer, out_data, line

    # --- tag operations ----------------------------------------------------------------

    def _tag_ops(self, m, read_xfer):
        """Reserve, preload and release: readies, responses, and what changes where; returns
        the tag operation, the fill's transfer and whether an allocation needs an eviction."""
        config = self.config
        tag = _TagOps(config)
        avail = self.free | self.clean
        alloc = Signal(config.lines, name="alloc_pick")
        m.d.comb += alloc.eq(Mux(self.free.any(), lowest(self.free), lowest(self.clean)))
        alloc_line = _first(m, alloc, config.line_bits, "alloc_line")
        evicting = onehot(m, self.evict_line, config.lines, "evict_onehot")
        blocked = self.filling | Mux(self.chosen | self.held, evicting, 0)
        fetch_free = Signal()
        m.d.comb += fetch_free.eq(~self.fetch.valid | self.fetch.ready)
        fill_xfer = Signal(name="fill_xfer")
        m.d.comb += [self.fill.ready.eq(~self.write.valid & ~read_xfer),
                     fill_xfer.eq(self.fill.valid & self.fill.ready)]

        # reserve
        res = self.reserve.payload
        r_hits, r_hit, r_line = self._lookup(m, "reserve", res)
        r_ok = Mux(r_hit, ~(r_hits & blocked).any(), avail.any())
        m.d.comb += [
            self.reserve.ready.eq(~read_xfer & r_ok),
            tag.reserve.eq(self.reserve.valid & self.reserve.ready),
            self.reserve_resp.valid.eq(tag.reserve),
            self.reserve_resp.payload.line.eq(Mux(r_hit, r_line, alloc_line)),
            self.reserve_resp.payload.last_use.eq(res.last_use),
        ]
        # preload
        pre = self.preload.payload
        p_hits, p_hit, _ = self._lookup(m, "preload", pre)
        p_ok = Signal(name="preload_ok")
        m.d.comb += p_ok.eq(Mux(pre.invalidate, fetch_free & ~fill_xfer,
                                Mux(p_hit, ~(p_hits & blocked).any() & ~fill_xfer,
                                    avail.any() & fetch_free)))
        m.d.comb += [
            self.preload.ready.eq(~read_xfer & ~tag.reserve & p_ok),
            tag.preload.eq(self.preload.valid & self.preload.ready),
        ]
        # release
        rel = self.release.payload
        x_hits, _, _ = self._lookup(m, "release", rel)
        m.d.comb += [
            self.release.ready.eq(~read_xfer & ~tag.reserve & ~tag.preload),
            tag.release.eq(self.release.valid & self.release.ready),
        ]
        # effects
        pre_miss = tag.preload & ~pre.invalidate & ~p_hit
        m.d.comb += [
            tag.hit.eq(Mux(tag.reserve & r_hit, r_hits, 0)
                       | Mux(tag.preload & ~pre.invalidate, p_hits, 0)),
            tag.alloc.eq(Mux((tag.reserve & ~r_hit) | pre_miss, alloc, 0)),
            tag.filling.eq(pre_miss),
            tag.erase.eq(rel.erase),
            tag.released.eq(Mux(tag.release, x_hits & self.used & ~self.filling, 0)),
            tag.any.eq(tag.reserve | tag.preload | tag.release),
        ]
        m.d.comb += [tag.key.warp.eq(Mux(tag.reserve, res.warp, pre.warp)),
                     tag.key.reg.eq(Mux(tag.reserve, res.reg, pre.reg))]
        self._fetch(m, tag, pre, alloc_line)
        need = Signal(name="need_evict")
        m.d.comb += need.eq(~avail.any() & ((self.reserve.valid & ~r_hit)
                                             | (self.preload.valid & ~pre.invalidate & ~p_hit)))
        return tag, fill_xfer, need

    def _fetch(self, m, tag, pre, alloc_line):
        """The one-entry output register of preload misses and invalidations."""
        load = tag.preload & (pre.invalidate | tag.filling)
        with m.If(load):
            m.d.sync += [
                self.fetch.valid.eq(1),
                self.fetch.payload.warp.eq(pre.warp),
                self.fetch.payload.reg.eq(pre.reg),
                self.fetch.payload.line.eq(Mux(pre.invalidate, 0, alloc_line)),
                self.fetch.payload.invalidate.eq(pre.invalidate),
            ]
        with m.Elif(self.fetch.ready):
            m.d.sync += self.fetch.valid.eq(0)

    # --- fill and eviction -------------------------------------------------------------

    def _fill(self, m, tag, fill_xfer):
        """Fill and write through the write port; ``preloaded``; returns the per-line fill
        and write effects."""
        write_port = self.data_write
        config = self.config
        fill = self.fill.payload
        fill_eff = Signal(config.lines, name="fill_eff")
        fill_line = onehot(m, fill.line, config.lines, "fill_onehot")
        m.d.comb += fill_eff.eq(Mux(fill_xfer, fill_line & self.filling, 0))
        w = self.write.payload
        write_eff = Signal(config.lines, name="write_eff")
        m.d.comb += [
            self.write.ready.eq(1),
            write_eff.eq(Mux(self.write.valid,
                             onehot(m, w.line, config.lines, "write_onehot")
                             & self.used & ~self.filling, 0)),
            write_port.addr.eq(Mux(self.write.valid, w.line, fill.line)),
            write_port.data.eq(Mux(self.write.valid, w.data.as_value(), fill.data.as_value())),
            write_port.en.eq(write_eff.any() | fill_eff.any()),
        ]
        fill_warp = _select(m, fill_line, [tag.warp for tag in self.tags], config.warp_bits,
                            "fill_warp")
        acked = tag.preload & (self.preload.payload.invalidate | tag.hit.any())
        m.d.comb += [
            self.preloaded.valid.eq(acked | fill_eff.any()),
            self.preloaded.payload.eq(Mux(fill_eff.any(), fill_warp,
                                          self.preload.payload.warp)),
        ]
        return fill_eff, write_eff

    def _evict(self, m, read_xfer, read_line, out_data, tag, fill_xfer, need_evict):
        """The eviction slot: choose, read out, offer on ``writeback``; returns the per-line
        effect of the writeback transfer."""
        read_port = self.data_read
        config = self.config
        candidates = Signal(config.lines, name="evict_candidates")
        m.d.comb += candidates.eq(self.dirty)
        pick = _first(m, lowest(candidates), config.line_bits, "evict_pick")
        read_out = Signal(name="evict_read")
        m.d.comb += read_out.eq(self.chosen & ~self.write.valid & ~read_xfer & ~fill_xfer)
        m.d.comb += [
            read_port.en.eq(read_xfer | read_out),
            read_port.addr.eq(Mux(read_xfer, read_line, self.evict_line)),
        ]
        idle = ~self.chosen & ~self.held
        with m.If(idle & need_evict & ~tag.any & candidates.any()):
            m.d.sync += [self.chosen.eq(1), self.evict_line.eq(pick)]
        with m.If(read_out):
            m.d.sync += [self.chosen.eq(0), self.held.eq(1)]
        with m.If(self.held & self.writeback.ready):
            m.d.sync += self.held.eq(0)
        evicting = onehot(m, self.evict_line, config.lines, "victim_onehot")
        victim = Signal(config.ref_layout, name="evict_tag")
        m.d.comb += victim.eq(_select(m, evicting, [tag.as_value() for tag in self.tags],
                                      config.ref_layout.size, "victim"))
        held = self.held
        m.d.comb += [
            self.writeback.valid.eq(held),
            self.writeback.payload.warp.eq(victim.warp),
            self.writeback.payload.reg.eq(victim.reg),
            self.writeback.payload.line.eq(self.evict_line),
            self.writeback.payload.data.eq(out_data),
        ]
        wb_done = Signal(config.lines, name="wb_done")
        m.d.comb += wb_done.eq(Mux(held & self.writeback.ready, evicting, 0))
        return wb_done

    # --- per-line state ----------------------------------------------------------------

    def _lines(self, m, tag, fill_eff, write_eff, wb_done):
        last_use = self.write.payload.last_use
        for i in range(self.config.lines):
            written_new = self.written[i] | write_eff[i]
            place = (self.free[i], self.clean[i], self.dirty[i], self.used[i])

            def goto(which, i=i, place=place):
                return [bit.eq(int(k == which)) for k, bit in enumerate(place)]

            with m.If(wb_done[i]):
                m.d.sync += [*goto(1), self.written[i].eq(0)]
            with m.If(write_eff[i]):
                m.d.sync += self.written[i].eq(1)
                with m.If(last_use):
                    m.d.sync += goto(2)
            with m.If(fill_eff[i]):
                m.d.sync += self.filling[i].eq(0)
            with m.If(tag.hit[i]):
                m.d.sync += goto(3)
            with m.If(tag.alloc[i]):
                m.d.sync += [*goto(3), self.written[i].eq(0), self.filling[i].eq(tag.filling),
                             self.tags[i].eq(tag.key)]
            with m.If(tag.released[i]):
                with m.If(tag.erase):
                    m.d.sync += [*goto(0), self.written[i].eq(0)]
                with m.Elif(written_new):
                    m.d.sync += goto(2)
                with m.Else():
                    m.d.sync += goto(1)


class _TagOps:
    """The tag operation of one cycle, as per-line masks."""

    def __init__(self, config):
        lines = config.lines
        self.reserve = Signal(name="reserve_xfer")
        self.preload = Signal(name="preload_xfer")
        self.release = Signal(name="release_xfer")
        self.any = Signal(name="tag_xfer")
        self.hit = Signal(lines, name="tag_hit")
        self.alloc = Signal(lines, name="tag_alloc")
        self.released = Signal(lines, name="tag_released")
        self.filling = Signal(name="alloc_filling")
        self.erase = Signal(name="release_erase")
        self.key = Signal(config.ref_layout, name="alloc_key")


def _select(m, selector, values, width, name):
    """The value of ``values`` selected by the one-hot ``selector`` (an AND-OR; 0 when
    none). Not :func:`gpurf.hw.gates.select`, which decodes a binary index through a case
    statement: here the select lines are already one-hot."""
    result = Signal(width, name=name)
    m.d.comb += result.eq(or_all(Mux(selector[i], value, 0) for i, value in enumerate(values)))
    return result


def _first(m, bits, width, name):
    """The index of the lowest set bit of ``bits`` (0 when none), as a priority chain of
    multiplexers (:func:`gpurf.hw.gates.lowest` isolates the bit; this encodes it)."""
    index = Signal(width, name=name)
    first = 0
    for i in reversed(range(len(bits))):
        first = Mux(bits[i], i, first)
    m.d.comb += index.eq(first)
    return index
