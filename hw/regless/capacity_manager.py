"""RegLess's capacity manager: warp state machines, warp stack, per-bank free-line counters
and preload queues (paper Section 5.1, Fig. 9)."""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, fifo

from gpurf.hw.gates import equals, onehot, ripple_add
from gpurf.hw.params import ConfiguredComponent

from .configs import CapacityManagerConfig
from .layouts import RegionWord, WarpState

__all__ = ["CapacityManager"]


class CapacityManager(ConfiguredComponent, config=CapacityManagerConfig):
    """The capacity manager of one shard (paper 5.1, Fig. 9).

    **State** (flip-flops): per warp a :class:`~gpurf.hw.regless.layouts.WarpState`
    (``INACTIVE -> PRELOADING -> ACTIVE -> DRAINING -> INACTIVE``), its region's bank usage,
    its outstanding writes per bank, its pending (not yet acknowledged) entries and an
    ``exited`` bit; the warp stack (a shift register, entry 0 the top, and its fill); the
    per-bank free-line counters ``free``; the descriptor streaming state (region warp,
    entries left). The per-bank queues are :class:`amaranth.lib.fifo.SyncFIFO` of
    ``lines / banks`` entries (paper 5.1: "a queue entry for each line in the OSU banks";
    memories of ``warp_bits + reg_bits + 1`` bits). After reset every warp is INACTIVE, the
    stack holds every warp with warp 0 on top (then 1, 2, ...), ``free[b] = lines / banks``.

    **Activation.** While no region is being streamed and the stack is not empty, ``want``
    shows the top warp; the environment (metadata store) answers on ``region`` with that
    warp's next region: a ``HEADER`` word, then ``n_entries`` entry words. The header is
    taken (``region.ready``) only if its ``warp`` is the top and it is ``done`` (the warp has
    no more regions: it is popped and stays INACTIVE, never pushed again: *exited*) or it
    fits, ``bank_usage[b] <= free[b]`` for every bank. **Interpretation** (spec): strict
    stack order, a top that does not fit blocks the others (no ``skip_blocked``). Since a
    push can change the top, a header offered for the previous top is not taken and the
    environment may withdraw it (the header answers ``want``; the entry words follow the
    stream rule). On a fitting header: ``free[b] -= bank_usage[b]``, the warp is popped and
    becomes PRELOADING with ``pending = n_entries``; the next ``n_entries`` words are taken
    one per cycle, each when the queue of its bank ``(warp + reg) & (banks - 1)`` has room,
    and enqueued as ``{warp, reg, invalidate}`` (``warp`` from the header; ``invalidate``
    for ``INVALIDATE`` words). A ``HEADER`` word while entries are due is not taken.

    **Acknowledgements.** ``preloaded[b]`` (the OSU's per-bank ``{valid, warp}``) decrements
    the warp's pending count (several banks may acknowledge one warp in a cycle).
    PRELOADING -> ACTIVE once ``pending`` is 0 and every entry word was taken (paper: "once
    all of them are completed").

    **Issue and drain.** ``issue`` (ignored unless the warp is ACTIVE): ``has_dst``
    increments ``outstanding[warp][dst_bank]``; ``last`` makes the warp DRAINING and releases
    at once ``usage[b] - outstanding[b]`` lines per bank (counting this cycle's issue and
    write); the warp then holds ``outstanding[b]`` lines. ``written`` (ignored when the
    count is 0) decrements ``outstanding[warp][bank]`` and, if the warp is DRAINING, frees
    one line of that bank. Both in one cycle on the same counter: both apply. *Protocol
    assumption* (the scoreboard's): ``outstanding[w][b] <= usage[w][b]`` (no two writes of
    one register in flight). A DRAINING warp with no outstanding write and its
    ``at_barrier`` bit clear is pushed on the stack (top) and becomes INACTIVE; one push per
    cycle, the lowest-numbered such warp first (the spec's arbitration default), the others
    wait. A push and a pop in one cycle: the popped warp leaves, the pushed one is the new
    top.

    **Barriers.** ``at_barrier`` (from the SM's barrier unit) holds a drained warp off the
    stack while its bit is set, so no region is reserved for a warp that cannot issue.
    **Interpretation** (the paper is silent on barriers): without it the CM takes a waiting
    warp's next region, and backprop_forward at paper size with 256 entries per SM deadlocks
    with every reserved region held by warps at a barrier whose other warps cannot get
    capacity; the paper's rule that "all allocated space is useful to a running warp"
    (Section 2.1) asks for the hold. All zeros: the CM of sessions 11-22.

    **Latencies** (edge ``t`` = the transfer / the input's cycle): header taken at ``t`` ->
    PRELOADING, ``free`` reduced and ``want`` low (entries due) or showing the next top,
    from ``t + 1``; an entry taken at ``t`` -> offered on ``preload[b]`` from ``t + 1``; the
    last acknowledgement at ``t`` -> ACTIVE (``eligible``) from ``t + 1`` (a region without
    entries: ACTIVE from ``t + 2`` after its header); ``issue.last`` at ``t`` -> DRAINING
    and the release in ``free`` from ``t + 1``; a late write at ``t`` -> ``free`` from
    ``t + 1``; the last write at ``t`` -> pushed at ``t + 1`` at the earliest, INACTIVE
    and on the stack from ``t + 2``.

    Attributes
    ----------
    want : Out(valid_only(cm_want_layout))
    region : In(stream.Signature(cm_region_word_layout))
    preload : Out(stream.Signature(osu_preload_layout)).array(banks)
    preloaded : In(ArrayLayout(osu_ack_layout, banks))
    issue : In(valid_only(cm_issue_layout))
    written : In(valid_only(cm_written_layout))
    at_barrier : In(warps)
        Bit ``w``: warp ``w`` waits at a barrier (a drained warp is not pushed).
    eligible : Out(warps)
        Bit ``w``: warp ``w`` is ACTIVE (the GTO scheduler's mask).
    state : Out(ArrayLayout(WarpState, warps))
    free : Out(ArrayLayout(count_bits, banks))
        The free-line counters (flip-flops).
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        warps = config.warps
        per_warp = data.ArrayLayout(config.counts_layout, warps)
        self.usage = Signal(per_warp)
        self.outstanding = Signal(per_warp)
        self.pending = Signal(data.ArrayLayout(config.entry_bits, warps))
        self.exited = Signal(warps)
        self.stack = Signal(data.ArrayLayout(config.warp_bits, warps),
                            init=list(range(warps)))
        self.depth = Signal(config.stack_bits, init=warps)
        """Warps on the stack."""
        self.busy = Signal()
        """Entry words of a taken header are due."""
        self.stream_warp = Signal(config.warp_bits)
        self.remaining = Signal(config.entry_bits)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        queues = [fifo.SyncFIFO(width=config.preload_layout.size,
                                depth=config.lines_per_bank)
                  for _ in range(config.banks)]
        for b, queue in enumerate(queues):
            m.submodules[f"queue{b}"] = queue
        is_state = self._decode_states(m)
        take, done, header_ok = self._headers(m)
        self._entries(m, queues, header_ok)
        acks = self._acks(m)
        drain, dec, after, issue_warp = self._issue(m, is_state)
        push, pushed = self._pushes(m, is_state, self.at_barrier)
        self._states(m, is_state, take & ~done, acks, drain, push)
        self._free(m, is_state, take & ~done, drain, dec, after, issue_warp)
        self._stack(m, take, push, pushed)
        with m.If(take & done):
            m.d.sync += self.exited.eq(self.exited | (Const(1, config.warps) << self.stack[0]))
        return m

    # --- helpers ---------------------------------------------------------------------

    def _decode_states(self, m):
        """Per state, the warps in it (one bit per warp)."""
        masks = {}
        for state in WarpState:
            mask = Signal(self.config.warps, name=f"is_{state.name.lower()}")
            m.d.comb += mask.eq(Cat(equals(self.state[w].as_value(), state.value)
                                    for w in range(self.config.warps)))
            masks[state] = mask
        m.d.comb += self.eligible.eq(masks[WarpState.ACTIVE])
        return masks

    # --- descriptor stream -------------------------------------------------------------

    def _headers(self, m):
        """``want``; whether a header is taken this cycle, whether it is ``done``, and whether
        the word offered is a header that would be taken."""
        config, word = self.config, self.region.payload
        top = self.stack[0]
        m.d.comb += [self.want.valid.eq(~self.busy & self.depth.any()),
                     self.want.payload.warp.eq(top)]
        fits = Signal()
        m.d.comb += fits.eq(Cat(~ripple_add(m, self.free[b], word.bank_usage[b],
                                            config.count_bits + 1, f"fits_{b}",
                                            subtract=True)[-1]
                                for b in range(config.banks)).all())
        header_ok = Signal()
        m.d.comb += header_ok.eq(self.want.valid & is_header(word)
                                 & (word.warp == top) & (word.done | fits))
        take = Signal(name="header_take")
        m.d.comb += take.eq(self.region.valid & header_ok)
        with m.If(take & ~word.done & word.n_entries.any()):
            m.d.sync += [self.busy.eq(1), self.stream_warp.eq(top),
                         self.remaining.eq(word.n_entries)]
        return take, word.done, header_ok

    def _entries(self, m, queues, header_ok):
        """Entry words into the bank queues; ``region.ready``; the queues' read side."""
        config, word = self.config, self.region.payload
        bank = ripple_add(m, self.stream_warp, word.reg, config.bank_bits, "entry_bank")
        select = onehot(m, bank, config.banks, "entry_select")
        room = Signal(config.banks, name="queue_room")
        m.d.comb += room.eq(Cat(queue.w_rdy for queue in queues))
        entry_ok = Signal()
        m.d.comb += entry_ok.eq(self.busy & ~is_header(word)
                                & (room & select).any())
        m.d.comb += self.region.ready.eq(Mux(self.busy, entry_ok, header_ok))
        put = Signal(name="entry_take")
        m.d.comb += put.eq(self.region.valid & entry_ok)
        entry = Signal(config.preload_layout, name="entry")
        m.d.comb += [entry.warp.eq(self.stream_warp), entry.reg.eq(word.reg),
                     entry.invalidate.eq(equals(word.kind.as_value(),
                                                RegionWord.INVALIDATE.value))]
        for b, queue in enumerate(queues):
            out = self.preload[b]
            m.d.comb += [queue.w_en.eq(put & select[b]), queue.w_data.eq(entry),
                         out.valid.eq(queue.r_rdy), out.payload.eq(queue.r_data),
                         queue.r_en.eq(out.ready)]
        left = ripple_add(m, self.remaining, 1, config.entry_bits, "remaining_next",
                          subtract=True)
        with m.If(put):
            m.d.sync += self.remaining.eq(left)
            with m.If(~left.any()):
                m.d.sync += self.busy.eq(0)

    # --- per-warp counters -------------------------------------------------------------

    def _acks(self, m):
        """Per warp, the pending count after this cycle's acknowledgements."""
        config = self.config
        after = []
        for w in range(config.warps):
            count = Const(0, 1)
            for b in range(config.banks):
                ack = self.preloaded[b]
                hit = ack.valid & equals(ack.warp, w)
                count = ripple_add(m, count, hit, (b + 1).bit_length(), f"acks_{w}_{b}")
            after.append(ripple_add(m, self.pending[w], count, config.entry_bits,
                                    f"pending_after_{w}", subtract=True))
        return after

    def _issue(self, m, is_state):
        """``issue`` and ``written``: outstanding counts; returns the warps starting to
        drain (one-hot), the per-(warp, bank) decrements, the per-(warp, bank) outstanding
        counts after this cycle and the one-hot issuing warp."""
        config = self.config
        issue, wr = self.issue.payload, self.written.payload
        issue_warp = onehot(m, issue.warp, config.warps, "issue_warp")
        issue_on = Signal(name="issue_on")
        m.d.comb += issue_on.eq(self.issue.valid & (issue_warp & is_state[WarpState.ACTIVE])
                                .any())
        drain = Signal(config.warps, name="drain_start")
        m.d.comb += drain.eq(Mux(issue_on & issue.last, issue_warp, 0))
        written_warp = onehot(m, wr.warp, config.warps, "written_warp")
        issue_bank = onehot(m, issue.dst_bank, config.banks, "issue_bank")
        written_bank = onehot(m, wr.bank, config.banks, "written_bank")
        dec = Signal(data.ArrayLayout(config.banks, config.warps), name="written_dec")
        outstanding_after = [[None] * config.banks for _ in range(config.warps)]
        for w in range(config.warps):
            for b in range(config.banks):
                held = self.outstanding[w][b]
                inc = issue_on & issue.has_dst & issue_warp[w] & issue_bank[b]
                m.d.comb += dec[w][b].eq(self.written.valid & written_warp[w]
                                         & written_bank[b] & held.any())
                more = ripple_add(m, held, inc, config.count_bits, f"outstanding_inc_{w}_{b}")
                after = ripple_add(m, more, dec[w][b], config.count_bits,
                                   f"outstanding_after_{w}_{b}", subtract=True)
                m.d.sync += held.eq(after)
                outstanding_after[w][b] = after
        return drain, dec, outstanding_after, issue_warp

    def _pushes(self, m, is_state, held):
        """The DRAINING warps with no outstanding write and not ``held`` (a mask: at a
        barrier); the lowest is pushed."""
        config = self.config
        drained = Signal(config.warps, name="drained")
        m.d.comb += drained.eq(Cat(
            is_state[WarpState.DRAINING][w] & ~held[w]
            & ~Cat(self.outstanding[w][b].any() for b in range(config.banks)).any()
            for w in range(config.warps)))
        push = Signal(config.warps, name="push")
        m.d.comb += push.eq(Cat(drained[w] & ~drained[:w].any() if w else drained[0]
                                for w in range(config.warps)))
        pushed = Signal(config.warp_bits, name="pushed_warp")
        first = 0
        for w in reversed(range(config.warps)):
            first = Mux(drained[w], w, first)
        m.d.comb += pushed.eq(first)
        return push, pushed

    def _states(self, m, is_state, activate, acks, drain, push):
        config = self.config
        top = onehot(m, self.stack[0], config.warps, "top_warp")
        word = self.region.payload
        streaming = onehot(m, self.stream_warp, config.warps, "streaming_warp")
        for w in range(config.warps):
            state = self.state[w]
            pending = self.pending[w]
            with m.If(activate & top[w]):
                m.d.sync += [state.eq(WarpState.PRELOADING), pending.eq(word.n_entries),
                             self.usage[w].eq(word.bank_usage)]
            with m.Else():
                m.d.sync += pending.eq(acks[w])
                with m.If(is_state[WarpState.PRELOADING][w] & ~acks[w].any()
                          & ~(self.busy & streaming[w])):
                    m.d.sync += state.eq(WarpState.ACTIVE)
                with m.If(drain[w]):
                    m.d.sync += state.eq(WarpState.DRAINING)
                with m.If(push[w]):
                    m.d.sync += state.eq(WarpState.INACTIVE)

    def _free(self, m, is_state, activate, drain, dec, after, issue_warp):
        """``free[b] -= usage`` of a taken header, ``+= usage - outstanding`` of a warp
        starting to drain, ``+= 1`` per write of a DRAINING warp."""
        config = self.config
        word = self.region.payload
        draining = is_state[WarpState.DRAINING]
        for b in range(config.banks):
            usage, kept, late = 0, 0, 0
            for w in range(config.warps):
                usage = usage | Mux(issue_warp[w], self.usage[w][b], 0)
                kept = kept | Mux(issue_warp[w], after[w][b], 0)
                late = late | (dec[w][b] & draining[w])
            release = ripple_add(m, usage, kept, config.count_bits, f"release_{b}",
                                 subtract=True)
            gain = Signal(config.count_bits, name=f"gain_{b}")
            m.d.comb += gain.eq(Mux(drain.any(), release, 0))
            cost = Signal(config.count_bits, name=f"cost_{b}")
            m.d.comb += cost.eq(Mux(activate, word.bank_usage[b], 0))
            left = ripple_add(m, self.free[b], cost, config.count_bits, f"free_left_{b}",
                              subtract=True)
            freed = ripple_add(m, left, gain, config.count_bits, f"free_gain_{b}")
            m.d.sync += self.free[b].eq(ripple_add(m, freed, late, config.count_bits,
                                                   f"free_next_{b}"))

    def _stack(self, m, take, push, pushed):
        """Pop the top on a taken header, push a drained warp on top."""
        config, stack = self.config, self.stack
        any_push = push.any()
        with m.If(take & any_push):
            m.d.sync += stack[0].eq(pushed)
        with m.Elif(take):
            m.d.sync += [stack[i].eq(stack[i + 1]) for i in range(config.warps - 1)]
            m.d.sync += self.depth.eq(ripple_add(m, self.depth, 1, config.stack_bits,
                                                 "depth_pop", subtract=True))
        with m.Elif(any_push):
            m.d.sync += [stack[i + 1].eq(stack[i]) for i in range(config.warps - 1)]
            m.d.sync += [stack[0].eq(pushed),
                         self.depth.eq(ripple_add(m, self.depth, 1, config.stack_bits,
                                                  "depth_push"))]


def is_header(word):
    """A descriptor word is a ``HEADER``."""
    return equals(word.kind.as_value(), RegionWord.HEADER.value)
