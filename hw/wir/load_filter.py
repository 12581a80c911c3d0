"""Load-reuse state of WIR: per-warp store flags and per-block barrier counters (paper VI-A)."""

from amaranth import Module, Mux, Signal
from amaranth.lib import data

from gpurf.hw.gates import bit, onehot
from gpurf.hw.params import ConfiguredComponent

from .configs import LoadFilterConfig
from .layouts import LoadKind

__all__ = ["LoadFilter", "LoadFilterConfig"]


class LoadFilter(ConfiguredComponent, config=LoadFilterConfig):
    """Decides whether a load may look up the reuse buffer, and with which tag fields.

    State (flip-flops, reset to zero): per warp a shared and a global store flag; per
    thread-block slot a saturating ``barrier_bits`` barrier counter.

    - **Query** (combinational, latency 0, state as at the start of the cycle): for an
      ``OTHER`` instruction (arithmetic, and read-only loads, which the paper reuses like
      arithmetic) ``reuse`` = 1, ``tbid`` = null, ``barrier`` = 0. For a ``SHARED`` load
      ``reuse`` = the warp's shared flag is clear and the block's counter is not saturated,
      ``tbid`` = the block slot, ``barrier`` = its count; for a ``GLOBAL`` load the same with
      the global flag and ``tbid`` = null. ``RESERVED`` answers as ``OTHER``.
      **Interpretation:** a saturated counter disables the loads that depend on the
      counter (shared and global), not read-only loads.
    - **Store** (valid-only, from rename): sets the warp's ``shared`` and/or ``global``
      flag at the clock edge.
    - **Barrier** (valid-only): the release of a barrier of block ``tb`` increments its
      counter (saturating) and clears the store flags of the block's ``warps``.
      **Interpretation:** the paper clears a warp's flags "when the warp reaches a barrier"
      and counts barriers per block; a warp waiting at a barrier issues nothing, so clearing
      at the release is the same, and the count must not change before every warp arrived.
    - **Launch** (valid-only): a new block in slot ``tb``: its counter restarts at 0 and its
      ``warps``' flags clear. Launch wins over a barrier of the same slot, and a store
      wins over a clear of the same warp (conservative), all in the same cycle.

    ``query.tb`` and ``tb`` must name a slot below ``blocks``, ``warp`` a warp below
    ``warps``.

    Attributes
    ----------
    store : In(valid_only(store_layout))
        ``payload.{warp, shared, global}``.
    barrier : In(valid_only(block_layout))
        ``payload.{tb, warps}``.
    launch : In(valid_only(block_layout))
        ``payload.{tb, warps}``.
    query : In(query_layout)
        ``{warp, tb, kind}``.
    answer : Out(answer_layout)
        ``{reuse, tbid, barrier}``.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.shared_flags = Signal(config.warps)
        self.global_flags = Signal(config.warps)
        self.counts = Signal(data.ArrayLayout(config.barrier_bits, config.blocks))

    def elaborate(self, platform):
        m = Module()
        self._flags(m)
        self._counters(m)
        self._answer(m)
        return m

    def _flags(self, m):
        """Clear at a barrier or launch of the warp's block, then set by a store."""
        barrier, launch, store = self.barrier, self.launch, self.store
        clear = Signal(self.config.warps)
        m.d.comb += clear.eq(Mux(barrier.valid, barrier.payload.warps, 0)
                             | Mux(launch.valid, launch.payload.warps, 0))
        warp = onehot(m, store.payload.warp, self.config.warps, "store_warp",
                      enable=store.valid)
        shared = Mux(store.payload.shared, warp, 0)
        global_ = Mux(store.payload.global_, warp, 0)
        m.d.sync += [
            self.shared_flags.eq(self.shared_flags & ~clear | shared),
            self.global_flags.eq(self.global_flags & ~clear | global_),
        ]

    def _counters(self, m):
        config, barrier, launch = self.config, self.barrier, self.launch
        launched = onehot(m, launch.payload.tb, config.blocks, "launch_tb", enable=launch.valid)
        passed = onehot(m, barrier.payload.tb, config.blocks, "barrier_tb", enable=barrier.valid)
        for b in range(config.blocks):
            count = self.counts[b]
            with m.If(launched[b]):
                m.d.sync += count.eq(0)
            with m.Elif(passed[b] & (count != config.saturated)):
                m.d.sync += count.eq(count + 1)

    def _answer(self, m):
        config, query, answer = self.config, self.query, self.answer
        count = Signal(config.barrier_bits)
        # An always-true enable, as the former private helper had: without its multiplexer
        # ABC maps wir.rename_reuse's defaults to one more cell.
        block = onehot(m, query.tb, config.blocks, "query_tb", enable=1)
        shared_flag, global_flag = Signal(), Signal()
        m.d.comb += [
            count.eq(_or(Mux(block[b], self.counts[b], 0) for b in range(config.blocks))),
            shared_flag.eq(bit(m, self.shared_flags, query.warp, "shared_flags_row")),
            global_flag.eq(bit(m, self.global_flags, query.warp, "global_flags_row")),
        ]
        open_ = count != config.saturated
        with m.Switch(query.kind):
            with m.Case(LoadKind.SHARED):
                m.d.comb += [answer.reuse.eq(~shared_flag & open_), answer.tbid.eq(query.tb),
                             answer.barrier.eq(count)]
            with m.Case(LoadKind.GLOBAL):
                m.d.comb += [answer.reuse.eq(~global_flag & open_),
                             answer.tbid.eq(config.null_tbid), answer.barrier.eq(count)]
            with m.Default():
                m.d.comb += [answer.reuse.eq(1), answer.tbid.eq(config.null_tbid),
                             answer.barrier.eq(0)]


def _or(values):
    """The bitwise OR of ``values``, from a constant 0.

    Not :func:`gpurf.hw.gates.or_all` (which starts from the first value): the same logic,
    but the other expression tree changes ABC's mapping of ``wir.rename_reuse`` at its
    defaults (18,331 cells instead of 18,330)."""
    result = 0
    for value in values:
        result = result | value
    return result
