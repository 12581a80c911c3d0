"""Load-reuse state of WIR: per-warp store flags and per-block barrier counters (paper VI-A)."""

from dataclasses import dataclass

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int, index_bits
from gpurf.hw.signatures import valid_only

from .layouts import (
    LoadKind,
    load_answer_layout,
    load_block_layout,
    load_query_layout,
    load_store_layout,
)

__all__ = ["LoadFilter", "LoadFilterConfig"]


@dataclass(frozen=True)
class LoadFilterConfig:
    """Validated parameters of the load filter and the widths derived from them.

    Shared by :class:`LoadFilter` and its golden model.
    """

    warps: int
    blocks: int
    barrier_bits: int

    def __post_init__(self):
        check_int("warps", self.warps, 1, 64)
        check_int("blocks", self.blocks, 1, 15)
        check_int("barrier_bits", self.barrier_bits, 1, 8)

    @property
    def warp_width(self) -> int:
        return index_bits(self.warps)

    @property
    def tb_width(self) -> int:
        return index_bits(self.blocks)

    @property
    def tbid_bits(self) -> int:
        """The reuse buffer's thread-block id field: block slots plus the null value."""
        return self.blocks.bit_length()

    @property
    def null_tbid(self) -> int:
        return (1 << self.tbid_bits) - 1

    @property
    def saturated(self) -> int:
        """The barrier count that disables load reuse for its block (31 by default)."""
        return (1 << self.barrier_bits) - 1

    @property
    def store_layout(self) -> data.StructLayout:
        return load_store_layout(warp_width=self.warp_width)

    @property
    def block_layout(self) -> data.StructLayout:
        return load_block_layout(warps=self.warps, tb_width=self.tb_width)

    @property
    def query_layout(self) -> data.StructLayout:
        return load_query_layout(warp_width=self.warp_width, tb_width=self.tb_width)

    @property
    def answer_layout(self) -> data.StructLayout:
        return load_answer_layout(tbid_bits=self.tbid_bits, barrier_bits=self.barrier_bits)

    @property
    def state_bits(self) -> int:
        """Flip-flops: two store flags per warp and one counter per block (136 by default;
        the paper leaves them out of its storage figure)."""
        return 2 * self.warps + self.blocks * self.barrier_bits


class LoadFilter(wiring.Component):
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

    Parameters
    ----------
    warps : int
        Warps per SM, 1..64 (default 48).
    blocks : int
        Thread-block slots per SM, 1..15 (default 8).
    barrier_bits : int
        Barrier counter width, 1..8 (default 5).

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

    def __init__(self, *, warps=48, blocks=8, barrier_bits=5):
        self.config = config = LoadFilterConfig(warps=warps, blocks=blocks,
                                                barrier_bits=barrier_bits)
        super().__init__({
            "store": In(valid_only(config.store_layout)),
            "barrier": In(valid_only(config.block_layout)),
            "launch": In(valid_only(config.block_layout)),
            "query": In(config.query_layout),
            "answer": Out(config.answer_layout),
        })
        self.shared_flags = Signal(warps)
        self.global_flags = Signal(warps)
        self.counts = Signal(data.ArrayLayout(barrier_bits, blocks))

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
        warp = _onehot(m, store.payload.warp, self.config.warps, "store_warp", store.valid)
        shared = Mux(store.payload.shared, warp, 0)
        global_ = Mux(store.payload["global"], warp, 0)
        m.d.sync += [
            self.shared_flags.eq(self.shared_flags & ~clear | shared),
            self.global_flags.eq(self.global_flags & ~clear | global_),
        ]

    def _counters(self, m):
        config, barrier, launch = self.config, self.barrier, self.launch
        launched = _onehot(m, launch.payload.tb, config.blocks, "launch_tb", launch.valid)
        passed = _onehot(m, barrier.payload.tb, config.blocks, "barrier_tb", barrier.valid)
        for b in range(config.blocks):
            count = self.counts[b]
            with m.If(launched[b]):
                m.d.sync += count.eq(0)
            with m.Elif(passed[b] & (count != config.saturated)):
                m.d.sync += count.eq(count + 1)

    def _answer(self, m):
        config, query, answer = self.config, self.query, self.answer
        count = Signal(config.barrier_bits)
        block = _onehot(m, query.tb, config.blocks, "query_tb", 1)
        shared_flag, global_flag = Signal(), Signal()
        m.d.comb += [
            count.eq(_or(Mux(block[b], self.counts[b], 0) for b in range(config.blocks))),
            shared_flag.eq(_bit(m, self.shared_flags, query.warp, "shared_flags_row")),
            global_flag.eq(_bit(m, self.global_flags, query.warp, "global_flags_row")),
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


def _bit(m, vector, index, name):
    """Bit ``index`` of ``vector``, shifted into a full-width signal first so the Verilog
    has no truncating shift (WIDTHTRUNC)."""
    shifted = Signal(len(vector), name=name)
    m.d.comb += shifted.eq(vector >> index)
    return shifted[0]


def _onehot(m, index, width, name, enable):
    """``width`` bits with bit ``index`` set when ``enable`` (a full-width shift: no
    comparisons against narrow constants in the Verilog)."""
    onehot = Signal(width, name=name)
    m.d.comb += onehot.eq(Mux(enable, Const(1, width) << index, 0))
    return onehot


def _or(values):
    """The bitwise OR of ``values``."""
    result = 0
    for value in values:
        result = result | value
    return result
