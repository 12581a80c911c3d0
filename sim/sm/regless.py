"""RegLess in the golden SM: operand staging units instead of the register file.

A fast model of the paper's Sections 5.1-5.4 (plain Python, no port packing) riding on
:class:`~gpurf.sim.sm.timing.TimingSM` through two of its hooks: ``power=`` (who may issue,
told of issues and dispatches) and ``values=`` (where register values live, so every operand
read is checked by :mod:`gpurf.sim.sm.values`). :func:`run_regless` runs a workload with it.

One shard per sub-core (scheduler), each a capacity manager (CM), an operand staging unit
(OSU: ``capacity / subcores`` lines of one warp register, in 8 banks; bank of
``(warp slot, reg)`` is ``(slot + reg) % 8``) and a compressor; the SM's L1 backs them.

- **Regions** come from the compiler pass (:func:`gpurf.sim.passes.regless.regions.
  regless_pass`, ``lines_per_bank`` = the OSU's lines per bank, ``max_live_registers`` a
  quarter of a shard's lines as the pass' default does for 128 lines). A warp's dynamic
  instruction stream enters a region each time it reaches the region's first pc.
- **Capacity manager** (5.1), with the golden capacity manager's decisions
  (:class:`gpurf.golden.regless.capacity_manager.CapacityManager`, the hardware truth; the
  paper leaves these details open): the warp stack holds warp slots, every slot from the
  launch with slot 0 on top; a slot drained goes on top (one per cycle, the lowest first,
  the cycle after its region has drained). Each cycle the CM compares the top slot's next
  region's per-bank line usage with the per-bank free counters; if every bank fits, it
  subtracts them (the descriptor's header) and the entries follow one per cycle on the
  region port (no other header meanwhile), each only while its bank's queue holds fewer
  entries than the CM has lines per bank (the golden ``_region_ready``; session 17);
  otherwise it waits (strict stack order). A slot
  without a warp (or whose warp has finished) takes an empty region (a header cycle), drained
  when a warp is placed there (from the cycle the warp is first seen live, as the golden
  shards' driver does: the ports' earlier cycles are stepped without it). Each entry
  reaches its bank's queue the cycle after it was taken; the warp may issue from the cycle
  after the OSU acknowledged the last one, and never before two cycles after the header
  (PRELOADING for a cycle). At the region's last
  ``issue`` its lines and counters go back except one per write still outstanding (5.1:
  "any other registers that were allocated to that region can be freed for other warps, but
  the pending register must stay allocated"), each back the cycle after its ``written``;
  then the slot goes on the stack. The golden CM knows nothing of barriers: a warp waiting
  at one may take its next region.
- **OSU ports** (:mod:`gpurf.sim.sm.regless_ports`, the golden shard's, cycle by cycle):
  the register units' requests (each operand read, at dispatch the releases of last uses,
  a reserve and a write per destination word, then the instruction on the CM's ``issue``
  port) are offered in order on the OSU's ports (4 read, 2 reserve, 2 write, 4 release; one
  request per bank and kind), and each bank takes a write before a read on its data port
  and a read, a reserve, its queue's preload or invalidation, a release in that order on
  its tag port; an invalidation or a preload miss also waits for the bank's fetch register.
  An instruction's ``issue`` waits for its reads, releases and reserves. The CM's ``issue``
  and ``written`` ports and the acknowledgements are where its decisions come from.
- **Metadata** (5.4): a region carries one header instruction (the bank usage and up to 3
  preloads / invalidations), one more per further 3 entries, and one last-use flag
  instruction per 9 instructions of the region; a region of at most 4 instructions and 2
  entries takes a single instruction (:func:`metadata_instructions`). **Interpretation:**
  the paper counts metadata in the instruction stream without saying how it issues; here
  the scheduler spends one issue cycle per metadata instruction right after the region's
  first instruction issues (no warp of that scheduler issues then); the descriptor itself
  is in the metadata store when the warp reaches the stack (the decode stage runs ahead).
  ``metadata=False`` turns the cost off.
- **OSU** (5.2), the golden bank's lines (:class:`~gpurf.sim.sm.regless_ports.PortLine`,
  changed when the ports take a request, since session 13): a reserve or a preload hits
  its register's line or allocates the first free line by index, else the first clean one
  (dropped); with only dirty lines left the first is evicted (read out, offered on
  ``writeback`` after any fetch, then clean) while the request waits. A release frees
  the line (erase) or puts it on the dirty or clean list; an invalidation leaves it. The
  values (:class:`_Line`) follow: a line given to another register drops its values, a
  written-back one is stored compressed or in L1.
- **Compressor and transfer unit** (5.3): the golden ones, stepped every cycle
  (:mod:`gpurf.sim.sm.regless_transfer`): the transfer unit's stages (fetches before
  writebacks; its L1 stage holds :data:`L1_READS_IN_FLIGHT` requests, so that many preload
  misses' L1 reads may be outstanding, answered and filled in order), the compressor's
  cycles per request (bit-vector check or pattern match, tag match, the compressed line's
  L1 refill: 16 cached lines of 15 registers, FIFO, a changed line written back) and the
  shared L1 port. A preload miss
  is acknowledged when its line is filled. A dirty line evicted from the OSU is stored
  compressed when one of the 5 patterns matches the data its ``writeback`` offer carried
  (the golden data store's lanes, :meth:`ReglessSM.written_back`), else written to L1 as a
  full line.
  ``compressor=False``: every request is answered at once, uncompressed (to L1).
- **L1** (6.5): register lines share the SM's L1 (``TimingSM.l1``: one request per cycle,
  FIFO with the data accesses) as write-back lines that need no fetch on a write (a write
  allocates the line without going to L2); a register read that misses in L1 pays the L2
  latency. Register lines have their own addresses (above the data's), one 128-byte line
  per (register, sub-core, warp slot), register-major so a register's lines spread over
  the L1's sets, and one per compressed line. An invalidation reaches L1 (one port cycle)
  only for a register with an L1 copy (paper 6.5; the transfer unit's ``l1_copies``).
  The L1's capacity is the paper's (Table 1: 48 KB, "data accesses bypassed"): register
  lines have 48 KB of LRU sets to themselves, while the data keep the SM's L1 (the gtx980
  preset caches them, in the baseline too); ``l1_bytes=0`` (``sharedl1``) puts register
  lines in the SM's L1 beside the data instead.
  The CM's decisions are made lazily (when the scheduler next asks), in cycle order per
  shard and never past the cycle asked (a release queued later for an earlier cycle is
  still taken in its cycle), so a register request may queue behind a data request of a
  later cycle.
- **Admission**: there is no register file, so registers do not limit the warps an SM holds
  (``registers=0``); warp slots and shared memory still do.

Correctness: the model keeps the values (OSU lines, compressed registers, L1 copies) and
answers :class:`~gpurf.sim.sm.values.RegisterStorage` reads from the OSU only: a read of a
register without a line in its warp's OSU raises :class:`ReglessError`, a stale value is a
:class:`~gpurf.sim.sm.values.ValueMismatchError`. ``lossy=True`` drops dirty lines instead
of writing them back (for the test that shows the check catches it).
"""

import heapq
import itertools
import math
from collections import OrderedDict, defaultdict, deque
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from gpurf.hw.params import check_bool, check_int_choice
from gpurf.hw.regless.layouts import L1Op
from gpurf.sim.passes.regless.regions import ERASE, regless_pass

from .program import BAR
from .regless_ports import Request, ShardPortTiming
from .regless_transfer import MISS_PATH, TransferTiming
from .timing import MEM
from .values import LANES, RegisterStorage
from .warp import ExecutionError

__all__ = ["CAPACITIES", "ReglessConfig", "ReglessError", "ReglessSM", "run_fields",
           "run_on", "run_regless", "shard_params", "store_line"]

BANKS = 8
CAPACITIES = (256, 384, 512, 768, 1024)
"""OSU entries per SM of the capacity sweep (Fig. 13); 512 is the paper's design point."""
COMPRESSED_LINES = 16
SLOTS_PER_LINE = 15
REGISTER_BASE = 1 << 40
"""L1 line numbers of register lines (data lines are addresses / 128, far below)."""
POISON = np.uint32(0xDEADBEEF)
REGISTER_L1_BYTES = 48 * 1024
"""The paper's L1 (Table 1: 48 KB, "data accesses bypassed"): register lines' own."""
L1_READS_IN_FLIGHT = 8
"""Requests a shard's transfer unit holds in its L1 stage (``ShardConfig.
l1_reads_in_flight``): Table 1's L1 takes "one request per cycle" and has 32 MSHRs; split
over the SM's 4 shards that is 8 reads each, enough for the shards together to issue a
register read every cycle at the L1 hit latency (28 cycles)."""
L1_READS = (1, 2, 4, 8, 16, 32)
STALL = 100_000
"""Cycles the SM may go without issuing an instruction before the run stops as deadlocked
(:class:`ReglessError`): far beyond any wait for memory (a preload from L2 is hundreds of
cycles). backprop_forward at paper size and 256 entries deadlocks near cycle 18,800 (every
reserved region belongs to a warp waiting at a barrier whose other warps cannot get
capacity) and used to run on, idle, for hours: docs/regless.md, "Deadlock at a barrier"."""
SOURCES = ("osu", "compressor", "l1", "l2")
WAITS = {
    "drain_alu": "a region's last issue to its last write landing, an ALU or shared-memory "
                 "write last",
    "drain_memory": "the same, a global-memory load last",
    "drain_needed": "of the drains, cycles the next region's first instruction waits for a "
                    "register of it anyway (as on the register file)",
    "barrier": "drained, until on the stack (one slot per cycle, the lowest first; with "
               "hold_barriers also until its barrier has released it)",
    "stack": "on the warp stack (capacity, warps above it, one activation per cycle)",
    "preload_osu": "activation to issuable, every preload from the OSU",
    "preload_beyond_osu": "activation to issuable, a preload from the compressor or L1/L2",
}
"""Warp cycles of :meth:`ReglessSM.summary`'s ``wait_*`` counters (summed over warps)."""


class ReglessError(ExecutionError):
    """The RegLess model broke a rule it relies on (a read without its line, a bank with
    no line to allocate)."""


@dataclass(frozen=True)
class ReglessConfig:
    """RegLess switches.

    Parameters
    ----------
    capacity : int
        OSU entries (warp registers) per SM, one of :data:`CAPACITIES`.
    compressor : bool
        The compressor between the OSU and L1 (off: Fig. 16's "no compressor").
    metadata : bool
        Charge the metadata instructions' fetch (Section 5.4).
    lossy : bool
        Drop dirty lines instead of writing them back (a broken model for tests).
    l1_bytes : int
        L1 capacity register lines have to themselves (the paper's Table 1: a 48 KB L1,
        data accesses bypassed); ``0``: they share the SM's L1 with the data (option
        ``sharedl1``).
    l1_reads : int
        Requests each shard's transfer unit holds in its L1 stage, one of :data:`L1_READS`
        (default :data:`L1_READS_IN_FLIGHT`; option ``reads<N>``; 1: one preload miss's
        read outstanding at a time).
    admit : int
        OSU entries per SM the capacity manager hands out to active regions (its free
        counters, and the lines per bank the compiler pass sizes regions to), one of
        :data:`CAPACITIES` up to ``capacity``; ``0`` (default): ``capacity``. The OSU
        keeps ``capacity`` lines, so the rest only caches inactive warps' registers
        (option ``admit<N>``; an experiment, not the paper's design, docs/regless.md
        "Why srad is not monotonic in capacity"; the fast model only).
    hold_barriers : bool
        A warp waiting at a barrier is not pushed on its warp stack until the barrier has
        released it (the default since session 23; option ``holdbar``), so the capacity
        manager reserves no region for it meanwhile: the capacity manager's ``at_barrier``
        input (:func:`barrier_holds`). Off (option ``nohold``), the rule of sessions 11-22:
        the capacity manager takes a waiting warp's next region, which deadlocks
        backprop_forward at paper size and 256 entries (docs/regless.md, "Deadlock at a
        barrier").
    """

    capacity: int = 512
    compressor: bool = True
    metadata: bool = True
    lossy: bool = False
    l1_bytes: int = REGISTER_L1_BYTES
    l1_reads: int = L1_READS_IN_FLIGHT
    admit: int = 0
    hold_barriers: bool = True

    def __post_init__(self):
        check_int_choice("capacity", self.capacity, CAPACITIES)
        check_int_choice("admit", self.admit,
                         (0, *(c for c in CAPACITIES if c <= self.capacity)))
        check_int_choice("l1_bytes", self.l1_bytes, (0, REGISTER_L1_BYTES))
        check_int_choice("l1_reads", self.l1_reads, L1_READS)
        for name in ("compressor", "metadata", "lossy", "hold_barriers"):
            check_bool(name, getattr(self, name))

    @classmethod
    def parse(cls, text: str) -> "ReglessConfig":
        """``"512"``, ``"384+nocomp"``, ``"nocomp"``, ``"nometa"``, ``"sharedl1"``,
        ``"reads1"``, ``"512+admit384"``, ``"256+nohold"`` (``+``-separated; commas
        separate mechanisms on the command line)."""
        config = cls()
        for part in filter(None, text.split("+")):
            if part.isdigit():
                config = replace(config, capacity=int(part))
            elif part in ("nocomp", "nometa"):
                config = replace(config, **{"compressor" if part == "nocomp"
                                            else "metadata": False})
            elif part == "sharedl1":
                config = replace(config, l1_bytes=0)
            elif part.startswith("reads") and part[5:].isdigit():
                config = replace(config, l1_reads=int(part[5:]))
            elif part.startswith("admit") and part[5:].isdigit():
                config = replace(config, admit=int(part[5:]))
            elif part in ("holdbar", "nohold"):
                config = replace(config, hold_barriers=part == "holdbar")
            else:
                raise ValueError(f"unknown RegLess option {part!r}; expected an OSU "
                                 f"capacity ({', '.join(map(str, CAPACITIES))}), nocomp, "
                                 "nometa, sharedl1, reads<N> (N in "
                                 f"{', '.join(map(str, L1_READS))}), admit<N> (N a "
                                 "capacity up to the OSU's), holdbar or nohold")
        return config


def metadata_instructions(region) -> int:
    """Metadata instructions of ``region`` (Section 5.4, see the module docstring)."""
    entries = region.descriptor()["n_entries"]
    if region.instructions <= 4 and entries <= 2:
        return 1
    return 1 + max(0, -(-(entries - 3) // 3)) + -(-region.instructions // 9)


def compressible(values: np.ndarray) -> bool:
    """Whether one of the compressor's 5 patterns (:data:`gpurf.golden.regless.compressor.
    PATTERNS`) matches the 32 lanes ``values``."""
    lanes = np.arange(LANES, dtype=np.uint32)
    half = lanes % (LANES // 2)
    for stride, halves in ((0, False), (1, False), (4, False), (1, True), (4, True)):
        base = np.where(lanes < LANES // 2, values[0], values[LANES // 2]) if halves \
            else values[0]
        offsets = (half if halves else lanes) * np.uint32(stride)
        if np.array_equal((base + offsets).astype(np.uint32), values):
            return True
    return False


REGS = 64
"""Registers per warp of the golden shard (the block's default, so one Verilator build of
the shard at its defaults replays every kernel's trace; the suite's kernels use at most
36)."""


def shard_params(program, config: ReglessConfig, subcores: int, slots: int) -> dict:
    """The ``regless.shard`` parameters of one sub-core's shard for ``program``."""
    from .timing import static_info

    registers = max(REGS, static_info(program).registers)
    return {"lines": config.capacity // subcores, "banks": BANKS, "warps": slots,
            "regs": 1 << math.ceil(math.log2(registers)), "lanes": LANES, "data_width": 32,
            "compressor_lines": COMPRESSED_LINES, "max_entries": 64, "instructions": 2,
            "l1_reads_in_flight": config.l1_reads}


class _Line:
    """An OSU line: a warp register's 32 lanes, dirty since it came from L1?"""

    __slots__ = ("bank", "dirty", "values")

    def __init__(self, values, bank, *, dirty=False):
        self.values, self.bank, self.dirty = values, bank, dirty


class _WarpState:
    """A warp as its capacity manager sees it."""

    def __init__(self, warp):
        self.warp = warp
        self.key = (warp.block.id, warp.index)
        self.region = None
        """The region being preloaded, issued or drained (``None``: on the stack)."""
        self.usage = ()
        self.left_to_issue = self.left_to_dispatch = self.length = 0
        self.active_at = INF
        self.drained_at = 0
        self.ready_at = 0
        """Cycle the next region's descriptor has been fetched (its metadata)."""
        self.pushed_at = 0
        self.activated_at = 0
        self.entries = 0
        """The region's descriptor entries the OSU has not taken yet."""
        self.bound = 0
        """The earliest cycle the region may be ACTIVE (PRELOADING for a cycle; a miss's
        fill)."""
        self.far = False
        self.last_issue = None
        """Cycle the region's last instruction issued (``None``: no region yet)."""
        self.drain_memory = False
        """The region's last write to land is a memory instruction's."""
        self.landed: dict[int, int] = {}
        """Register -> the cycle its latest write lands."""
        self.outstanding = [0] * BANKS
        """Per bank, writes issued and not yet reported ``written`` (the golden capacity
        manager's counters)."""
        self.draining = False
        self.touched: set[int] = set()
        """Registers the region read or wrote without a last-use flag."""
        self.write_done: dict[int, int] = {}
        """Register -> the cycle its latest write completes in the SM."""
        self.write_req: dict = {}
        """Register -> its latest write request on the ports."""
        self.write_reqs: dict = {}
        """Register -> its write requests whose values the SM has not written yet."""


class _Shard:
    """One sub-core's capacity manager, OSU lists and compressor cache.

    The capacity manager's state follows the golden model's
    (:class:`gpurf.golden.regless.capacity_manager.CapacityManager`): its warp stack holds
    warp slots, every slot from the start with slot 0 on top; a slot's next region is that of
    the warp placed there last, or an empty region when it has none."""

    def __init__(self, index: int, lines_per_bank: int, slots: int = 0):
        self.index = index
        self.lines_per_bank = lines_per_bank
        self.free = [lines_per_bank] * BANKS
        """Per bank, lines no active region has reserved (the CM's counters)."""
        self.stack: list[int] = list(range(slots - 1, -1, -1))
        """Warp slots, top last (reset: slot 0 on top, as the golden capacity manager's)."""
        self.slots: dict[int, _WarpState] = {}
        """Slot -> the warp placed there last."""
        self.empty: dict[int, int] = {}
        """Slots holding an empty region -> the first cycle it is ACTIVE."""
        self.drained: list = []
        """``(cycle, slot)``: slots whose region has drained from ``cycle`` on, waiting to be
        pushed (one per cycle, the lowest slot first)."""
        self.ports: ShardPortTiming | None = None
        """The register units' requests on the golden shard's ports (set per launch)."""
        self.issuer: dict[int, _WarpState] = {}
        """Slot -> the warp whose instruction the ``issue`` port took last."""
        self.header_free = 0
        """The first cycle the region port takes a header (the descriptor's entries stream
        one per cycle after it)."""
        self.streaming: deque = deque()
        """``(bank, entry)``: the entries of the region whose header was taken last, still
        to be taken on the region port (one per cycle, each while its bank's queue has
        room)."""
        self.active = 0
        """Regions reserved and not yet released."""
        self.releases: list = []
        """Heap of ``(cycle, sequence, warp state, lines, drained)``: lines a region frees."""
        self.time = 0
        """The first cycle the CM has not decided yet."""
        self.issue_free = 0
        """The first cycle the scheduler is not issuing metadata instructions."""


INF = float("inf")


def after_barrier(warp, kind) -> bool:
    """Whether the last instruction ``warp`` issued is a barrier (``kind``: the SM's
    instruction kinds by pc)."""
    return bool(warp.pos) and kind[warp.pcs[warp.pos - 1]] == BAR


def barrier_holds(warp, kind, cycle: int) -> bool:
    """Whether a barrier holds ``warp`` off its warp stack in ``cycle``
    (:attr:`ReglessConfig.hold_barriers`): it waits there, or the barrier released it in
    ``cycle`` or later (the capacity manager sees a release from the cycle after it)."""
    return warp.at_bar or (after_barrier(warp, kind) and cycle <= warp.hold)


def store_line(store, line: int) -> None:
    """``line`` written into ``store``'s LRU ``sets`` of ``ways`` (:class:`_RegisterLines`,
    the timing SM's L1): made the most recent, the least recent one of a full set evicted."""
    entries = store.sets[line % len(store.sets)]
    entries[line] = True
    entries.move_to_end(line)
    if len(entries) > store.ways:
        entries.popitem(last=False)


class _RegisterLines:
    """The L1's register lines when data bypass it (Table 1): LRU sets of 128-byte lines,
    ``ways`` per set; the port stays the SM's L1's, shared with the data accesses."""

    def __init__(self, nbytes: int, ways: int):
        self.ways = ways
        self.sets = [OrderedDict() for _ in range(nbytes // 128 // ways)]

    def lookup(self, line: int, allocate: bool) -> bool:
        """Whether ``line`` is here (made most recent); allocate it if not and asked."""
        entries = self.sets[line % len(self.sets)]
        if line in entries:
            entries.move_to_end(line)
            return True
        if allocate:
            entries[line] = True
            if len(entries) > self.ways:
                entries.popitem(last=False)
        return False


class ReglessSM(RegisterStorage):
    """RegLess on the timing model (module docstring): pass it as both ``values=`` and
    ``power=`` of each launch's :class:`~gpurf.sim.sm.timing.TimingSM` (:func:`run_regless`
    does); each launch calls it with its SM, which starts a fresh RegLess state. Counters
    (:attr:`counts`) add up over the launches."""

    def __init__(self, program, config: ReglessConfig = ReglessConfig(), *, subcores: int = 4):
        self.program = program
        self.config = config
        lines = (config.admit or config.capacity) // subcores
        self.lines_per_bank = lines // BANKS
        """The capacity manager's lines per bank (:attr:`ReglessConfig.admit`'s)."""
        self.osu_lines_per_bank = config.capacity // subcores // BANKS
        self.regions = regless_pass(program.kernel, lines_per_bank=self.lines_per_bank,
                                    max_live_registers=max(1, lines // 4))
        self.region_at = {r.start: r for r in self.regions.regions}
        self.metadata = {r.start: metadata_instructions(r) if config.metadata else 0
                         for r in self.regions.regions}
        self.entries = {r.start: [(reg, kind == "preload") for reg, kind in
                                  r.descriptor()["entries"]] for r in self.regions.regions}
        self.flags = self._flags()
        self.usage: dict[tuple, tuple] = {}
        """``(region start, warp slot % 8)`` -> the region's bank usage for that warp."""
        self.counts: dict[str, int] = defaultdict(int)
        self.sm = None

    def _flags(self) -> list:
        """Per pc, ``(source flags, destination flags)``, each ``((reg, erase?), ...)``."""
        code = self.program.kernel.instructions
        keys = self.regions.flow.keys
        out = [((), ())] * len(code)
        for region in self.regions.regions:
            for pc, flags in region.last_use.items():
                dests = {k for v in code[pc].dests for k in keys.get(v, ())}
                out[pc] = tuple(tuple((int(k[1:]), f == ERASE) for k, f in flags.items()
                                      if (k in dests) == is_dest) for is_dest in (False, True))
        return out

    # -- the SM's power hook: who may issue --------------------------------------------
    def __call__(self, sm) -> "ReglessSM":
        """A new launch on ``sm``: fresh shards, warps and values."""
        self.sm = sm
        self.slots = sm.config.slots
        self.shards = [_Shard(i, self.lines_per_bank, sm.config.slots)
                       for i in range(sm.config.subcores)]
        params = shard_params(self.program, self.config, sm.config.subcores, sm.config.slots)
        for shard in self.shards:
            transfer = TransferTiming(params, partial(self._l1_port, shard),
                                      compressor=self.config.compressor, counts=self.counts)
            shard.ports = ShardPortTiming(self, shard, BANKS, self.osu_lines_per_bank,
                                          transfer)
        self.warps: dict[tuple, _WarpState] = {}
        self.lines: dict[tuple, _Line] = {}
        """``(warp key, reg)`` -> the values of its OSU line (which line, and when it
        leaves, is the ports' :class:`~gpurf.sim.sm.regless_ports.PortLine`)."""
        self.l1: dict[tuple, np.ndarray] = {}
        """Register values in L1 (and beyond): the backing store."""
        self.packed: dict[tuple, np.ndarray] = {}
        """Register values stored compressed (the bit vector is its keys)."""
        self.actions: list = []
        self.sequence = itertools.count()
        self.store = _RegisterLines(self.config.l1_bytes, sm.config.l1_ways) \
            if self.config.l1_bytes else sm.l1
        self.counts["launches"] += 1
        self.last_issue = 0
        """The cycle an instruction of the launch last issued (:meth:`_watch`)."""
        return self

    def ready(self, sub, slots: list[int], now: int) -> list[int]:
        """The ``slots`` whose warp's region is staged and not fully issued."""
        self._watch(now)
        self._catch_up(sub, now)
        if self._issuing_metadata(sub, slots, now):
            return []
        out = []
        for slot in slots:
            warp = sub.slots[slot]
            state = self.warps[(warp.block.id, warp.index)]
            if state.left_to_issue and state.active_at <= now:
                out.append(slot)
            else:
                self.counts["region_stall_checks"] += 1
                wait = state.active_at if state.left_to_issue and not state.entries \
                    else now + 1
                warp.wake = max(warp.wake, now + 1, wait)
        return out

    def _watch(self, now: int) -> None:
        """Stop the run once no warp has issued for :data:`STALL` cycles: the capacity
        managers are deadlocked (:meth:`stalled` says how)."""
        if now - self.last_issue > STALL:
            raise ReglessError(f"{self.program.kernel.file}: cycle {now}: no instruction "
                               f"issued since cycle {self.last_issue}, deadlocked: "
                               f"{self.stalled()}")

    def stalled(self) -> str:
        """Per shard, the regions reserved (how many by warps waiting at a barrier), the
        top warp's lines per bank and the free ones."""
        reserved = defaultdict(list)
        for state in self.warps.values():
            if state.region is not None:
                reserved[state.warp.sub.index].append(state.warp.at_bar)
        return "; ".join(f"shard {shard.index}: {len(reserved[shard.index])} regions "
                         f"reserved, {sum(reserved[shard.index])} by warps at a barrier, "
                         f"top warp needs {self._top_usage(shard)}, free {shard.free}"
                         for shard in self.shards)

    def _top_usage(self, shard: _Shard) -> "tuple | None":
        """The lines per bank of the region on top of ``shard``'s stack (``None``: no warp's)."""
        state = self._next(shard, shard.stack[-1]) if shard.stack else None
        return None if state is None else self._usage(state)

    def _issuing_metadata(self, sub, slots: list[int], now: int) -> bool:
        """Whether ``sub``'s issue slot is taken by a region's metadata instructions in
        ``now``; if so, the ``slots``' warps wake when it is free."""
        shard = self.shards[sub.index]
        if shard.issue_free <= now:
            return False
        self.counts["metadata_issue_cycles"] += 1
        for slot in slots:
            warp = sub.slots[slot]
            warp.wake = max(warp.wake, shard.issue_free)
        return True

    def entry_taken(self, shard: _Shard, entry: tuple, cycle: int, hit: bool) -> None:
        """The OSU bank took a descriptor entry of the region in ``cycle``
        (:class:`~gpurf.sim.sm.regless_ports.ShardPortTiming`): a hit or an invalidation is
        acknowledged then, a miss when the transfer unit fills its line (:meth:`filled`).
        The warp is ACTIVE the cycle after the last acknowledgement."""
        state, _, reg, invalidate, _ = entry
        if invalidate:
            self._invalidate(state, reg)
        elif hit:
            self._preload_hit(state, reg)
        else:
            state.far = True
            self._preload(state, reg, (state.warp.slot + reg) % BANKS)
            return
        self._acknowledged(state, cycle)

    def filled(self, shard: _Shard, entry: tuple, cycle: int) -> None:
        """The transfer unit filled a preload miss's line in ``cycle``: acknowledged."""
        self._acknowledged(entry[0], cycle)

    def _acknowledged(self, state: _WarpState, cycle: int) -> None:
        """A preload or invalidation of the region acknowledged in ``cycle``."""
        state.bound = max(state.bound, cycle + 1)
        state.entries -= 1
        if not state.entries:
            state.active_at = state.bound
            self._staged(state, state.bound)

    def _staged(self, state: _WarpState, cycle: int) -> None:
        """The warp's region is staged from ``cycle`` (a hook for the decision log)."""
        self.counts["wait_preload_beyond_osu" if state.far else "wait_preload_osu"] += \
            cycle - state.activated_at

    def issued(self, sub, warp, pc: int, now: int) -> None:
        """``warp`` issued ``pc``: one fewer instruction of its region to issue."""
        self.last_issue = now
        state = self.warps[(warp.block.id, warp.index)]
        if state.left_to_issue == state.length:
            extra = self.metadata[pc]
            self.counts["metadata_instructions"] += extra
            shard = self.shards[sub.index]
            shard.issue_free = now + 1 + extra
        state.left_to_issue -= 1
        if not state.left_to_issue:
            self._region_issued(state, now)

    def _region_issued(self, state: _WarpState, now: int) -> None:
        """The last instruction of ``state``'s region issued in ``now``."""
        state.last_issue = now

    def dispatched(self, sub, warp, pc: int, now: int, done: int) -> int:
        """``pc`` of ``warp`` read its operands in cycle ``now``, lands in ``done``: its
        last-use flags act then; its requests go to the shard's ports as the golden shard's
        register units make them (:meth:`_requests`); the region drains with its last
        dispatch."""
        self._catch_up(sub, now)
        state = self.warps[(warp.block.id, warp.index)]
        writes = self.sm.info.writes[pc]
        landed = done if writes else now
        for reg in writes:
            state.landed[reg] = landed
        if landed > state.drained_at:
            state.drained_at = landed
            state.drain_memory = self.sm.info.unit[pc] == MEM
        state.left_to_dispatch -= 1
        last = not state.left_to_dispatch and not state.left_to_issue
        self._requests(self.shards[sub.index].ports, state, pc, now, done, last)
        return done

    def _requests(self, ports: ShardPortTiming, state: _WarpState, pc: int, now: int,
                  done: int, last: bool) -> None:
        """The requests a dispatch makes (:mod:`gpurf.sim.sm.regless_exact`'s
        ``dispatched``): releases of the sources' last uses, a reserve and a write per
        destination word (the write due the cycle before the SM's writeback completes),
        releases of the registers the region touched without a last-use flag and has no
        write pending for (at its last dispatch), then the ``issue``."""
        slot = state.warp.slot
        sources, dests = (sorted(flags) for flags in self.flags[pc])
        touched = state.touched
        key = state.key
        for reg, erase in sources:
            ports.add(Request("release", slot, reg, now, (slot + reg) % BANKS, dispatch=now,
                              flag=int(erase), owner=(key, reg)))
            touched.discard(reg)
        last_use = {reg for reg, _ in dests}
        writes = self.sm.info.writes[pc]
        new = []
        for k, reg in enumerate(writes):
            bank, flag = (slot + reg) % BANKS, int(reg in last_use)
            reserve = ports.add(Request("reserve", slot, reg, now, bank, dispatch=now,
                                        owner=(key, reg)))
            write = ports.add(Request("write", slot, reg, max(now, done - 1), bank,
                                      flag=flag, owner=(key, reg)))
            write.reserve, write.written = reserve, k == 0
            new.append(write)
            state.write_done[reg] = max(state.write_done.get(reg, 0), done)
            state.write_req[reg] = write
            state.write_reqs.setdefault(reg, deque()).append(write)
            (touched.discard if flag else touched.add)(reg)
        released = {reg for reg, _ in sources}
        touched.update(reg for reg in self.sm.info.reads[pc] if reg not in released)
        if last:
            for reg in sorted(touched):
                self.counts["unflagged_releases"] += 1
                if state.write_done.get(reg, 0) > now:
                    state.write_req[reg].flag = 1
                else:
                    ports.add(Request("release", slot, reg, now, (slot + reg) % BANKS,
                                      dispatch=now, owner=(key, reg)))
            touched.clear()
        issue = ports.add(Request("issue", slot, -1, now, 0, dispatch=now))
        issue.info = (state, bool(writes), (slot + writes[0]) % BANKS if writes else 0, last)
        for write in new:
            write.issue = issue

    def port_cycle(self, shard: _Shard, cycle: int, issue, written, fake) -> None:
        """The capacity manager's ``issue`` and ``written`` ports in ``cycle``, as the golden
        one takes them (``_issue_and_writes``, ``_drained``): an issued instruction with a
        destination counts an outstanding write in its first word's bank; a ``written``
        takes one back and, if the warp was draining, frees its line from the next cycle;
        at the region's last issue its lines go back from the next cycle except one per
        write outstanding; the slot goes on the stack once none is outstanding (a cycle
        later, :meth:`_decide`). An empty region's drain (``fake``) has no write."""
        state = None
        if issue is not None:
            state, has_dst, dst_bank, last = issue.info
            shard.issuer[issue.slot] = state
            if has_dst:
                state.outstanding[dst_bank] += 1
        if written is not None:
            slot, bank = written
            owner = shard.issuer[slot]
            if owner.outstanding[bank] > 0:
                owner.outstanding[bank] -= 1
                if owner.draining:
                    lines = [0] * BANKS
                    lines[bank] = 1
                    self._release(shard, cycle + 1, owner, tuple(lines))
                    if not any(owner.outstanding):
                        self._release(shard, cycle + 1, owner, (0,) * BANKS, drained=True)
        if issue is not None and last:
            state.draining = True
            lines = tuple(u - o for u, o in zip(state.usage, state.outstanding, strict=True))
            self._release(shard, cycle + 1, state, lines)
            if not any(state.outstanding):
                self._release(shard, cycle + 1, state, (0,) * BANKS, drained=True)
        if fake is not None:
            shard.drained.append((cycle + 1, fake))

    def _release(self, shard: _Shard, cycle: int, state: _WarpState, lines: tuple, *,
                 drained: bool = False) -> None:
        heapq.heappush(shard.releases, (cycle, next(self.sequence), state, lines, drained))

    # -- RegisterStorage: the values -----------------------------------------------------
    def write(self, warp, reg, values, lanes, cycle, pc):
        self._apply(cycle)
        key = ((warp.block, warp.warp), reg)
        line = self.lines.get(key)
        if line is None:
            line = self._allocate(key, (warp.slot + reg) % BANKS,
                                  np.full(LANES, POISON, np.uint32))
        line.values = np.where(lanes, values, line.values)
        line.dirty = True
        pending = self.warps[key[0]].write_reqs.get(reg)
        if pending:
            base = self.shards[warp.subcore].ports.base(warp.slot, reg)
            pending.popleft().data = np.where(lanes, values, 0 if base is None else base)

    def read(self, warp, reg, cycle, lanes):
        self._apply(cycle + 0.25)
        shard = self.shards[warp.subcore]
        self._run(shard, cycle)
        shard.ports.add_read(Request("read", warp.slot, reg, cycle, (warp.slot + reg) % BANKS))
        line = self.lines.get(((warp.block, warp.warp), reg))
        if line is None:
            raise ReglessError(f"{self.program.kernel.file}: {warp}, cycle {cycle}: read of "
                               f"R{reg}, which is not in the OSU (lost by RegLess)")
        return line.values

    # -- the capacity manager ------------------------------------------------------------
    def _catch_up(self, sub, now: int) -> None:
        """Land the writes and flags due by ``now``, run the CM and the ports through the
        cycles before ``now``, meet new warps (placed in ``now``: the ports' cycles before it
        must not see them, :meth:`~gpurf.sim.sm.regless_exact.ReglessExactSM._catch_up`),
        then decide ``now``."""
        self.sm.values.read(sub, {}, now)
        self._apply(now + 1)
        shard = self.shards[sub.index]
        self._run(shard, now)
        for warp in sub.live:
            if (warp.block.id, warp.index) not in self.warps:
                state = self.warps[(warp.block.id, warp.index)] = _WarpState(warp)
                self._placed(shard, state, now)
        self._decide(shard, now)

    def _run(self, shard: _Shard, end: int) -> None:
        """The capacity manager's decisions and the ports' cycles before ``end``, a cycle
        at a time (a cycle's decisions see the ports' previous cycle)."""
        ports = shard.ports
        while ports.time < end:
            self._decide(shard, ports.time)
            ports.step(ports.time)

    def _placed(self, shard: _Shard, state: _WarpState, now: int) -> None:
        """A warp placed in its slot. A slot holding an empty region (its last warp had
        finished, or it had none) drains it with an issue (``last``, no destination) in a
        cycle no instruction issues, once the empty region is ACTIVE and not before
        ``now`` (the ports have stepped the cycles before it), then goes on the stack
        (:mod:`gpurf.sim.sm.regless_exact`'s rule for reused slots)."""
        slot = state.warp.slot
        shard.slots[slot] = state
        state.pushed_at = now
        active = shard.empty.pop(slot, None)
        if active is not None:
            shard.ports.fake.append((slot, active))

    def _check_start(self, state: _WarpState) -> None:
        warp = state.warp
        pc = warp.pcs[warp.pos]
        if pc not in self.region_at:
            raise ReglessError(f"{self.program.kernel.file}: block {warp.block.id}, warp "
                               f"{warp.index}: pc {pc} is not the start of a region")

    @staticmethod
    def _runs_in(state: _WarpState, slot: int) -> bool:
        """Whether ``state``'s warp still holds ``slot`` and has instructions left."""
        warp = state.warp
        return warp.pos < len(warp.pcs) and warp.sub is not None and \
            warp.sub.slots[slot] is warp

    def _next(self, shard: _Shard, slot: int) -> "_WarpState | None":
        """The warp whose next region the metadata store answers for ``slot`` (``None``:
        an empty region: no warp, or it has finished)."""
        state = shard.slots.get(slot)
        if state is None or not self._runs_in(state, slot):
            return None
        self._check_start(state)
        return state

    def _decide(self, shard: _Shard, now: int) -> None:
        """The CM's decisions for cycles ``shard.time .. now``, as the golden capacity
        manager makes them (:class:`gpurf.golden.regless.capacity_manager.CapacityManager`):
        lines freed by then count; the stack's top slot's region is taken if it fits and no
        descriptor is streaming (its header in one cycle, then one entry per cycle:
        ``_region_ready``); at the cycle's edge the lowest drained slot goes on the stack
        (``_drained``, one per cycle)."""
        cycle = shard.time
        releases, drained = shard.releases, shard.drained
        while cycle <= now:
            while releases and releases[0][0] <= cycle:
                self._released(shard, *heapq.heappop(releases)[2:], cycle)
            taken = self._stream(shard, cycle)
            if shard.stack and shard.header_free <= cycle:
                slot = shard.stack[-1]
                state = self._next(shard, slot)
                if state is None:
                    shard.stack.pop()
                    shard.empty[slot] = cycle + 2
                    shard.header_free = cycle + 1
                    taken = True
                elif self._fits(shard, state):
                    shard.stack.pop()
                    self._activate(shard, state, cycle)
                    taken = True
            if drained:
                due = [entry for entry in drained if self._push_from(shard, entry) <= cycle]
                if due:
                    entry = min(due, key=lambda e: e[1])
                    drained.remove(entry)
                    self._push(shard, entry[1], cycle + 1)
                    taken = True
            if taken:
                cycle += 1
                continue
            waits = [releases[0][0]] if releases else []
            waits += [self._push_from(shard, entry) for entry in drained]
            if shard.streaming:
                waits.append(cycle + 1)
            if shard.stack and shard.header_free > cycle:
                waits.append(shard.header_free)
            if not waits and not shard.active and shard.stack:
                state = self._next(shard, shard.stack[-1])
                raise ReglessError(f"{self.program.kernel.file}: shard {shard.index}, cycle "
                                   f"{cycle}: the top warp's region needs {self._usage(state)} "
                                   f"lines per bank, {shard.free} are free and no region "
                                   "can release any (capacity manager stuck)")
            cycle = max(cycle + 1, min([*waits, now + 1]))
        shard.time = max(shard.time, cycle)

    def _stream(self, shard: _Shard, cycle: int) -> bool:
        """The region port in ``cycle`` while a descriptor streams: its next entry is taken
        if its bank's queue holds fewer entries than the capacity manager has lines per bank
        at the start of the cycle (the golden ``_region_ready``), and reaches the queue
        from ``cycle + 1``; the next header is taken from the cycle after the last entry.
        Whether an entry was taken."""
        streaming = shard.streaming
        if not streaming:
            return False
        bank, entry = streaming[0]
        queue = shard.ports.queues[bank]
        if len(queue) >= shard.lines_per_bank:
            return False
        streaming.popleft()
        queue.append((cycle + 1, entry))
        if not streaming:
            shard.header_free = cycle + 1
        return True

    def _push_from(self, shard: _Shard, drained: tuple) -> float:
        """The first cycle a ``(cycle, slot)`` of ``shard.drained`` may go on the stack: its
        own, or with :attr:`ReglessConfig.hold_barriers` the cycle after its warp's barrier
        releases it (``INF`` while the barrier waits for other warps; a slot that never held
        a warp waits for none). The release cycle is
        never before the cycle the SM learns it, so no decision already taken sees it."""
        cycle, slot = drained
        state = shard.slots.get(slot)
        if not self.config.hold_barriers or state is None:
            return cycle
        warp = state.warp
        if warp.at_bar:
            return INF
        if after_barrier(warp, self.sm.info.kind):
            return max(cycle, warp.hold + 1)
        return cycle

    def _push(self, shard: _Shard, slot: int, cycle: int) -> None:
        """``slot`` goes on top of the stack, its header offered from ``cycle`` on."""
        state = shard.slots.get(slot)
        if state is not None:
            state.pushed_at = cycle
        shard.stack.append(slot)

    def _usage(self, state: _WarpState) -> tuple:
        """Per bank, the lines the warp's next region reserves (its descriptor's)."""
        warp = state.warp
        key = (warp.pcs[warp.pos], warp.slot % BANKS)
        usage = self.usage.get(key)
        if usage is None:
            usage = self.usage[key] = tuple(
                self.region_at[key[0]].descriptor(key[1])["bank_usage"])
        return usage

    def _fits(self, shard: _Shard, state: _WarpState) -> bool:
        return all(need <= free for need, free in zip(self._usage(state), shard.free,
                                                      strict=True))

    def _released(self, shard: _Shard, state: _WarpState, lines: tuple, drained: bool,
                  cycle: int) -> None:
        """``lines`` (per bank) of a region go back to the counters; once it has
        ``drained``, the warp's slot waits to go on the stack (:meth:`_decide`). A warp at a
        barrier goes too, as in the golden capacity manager, which knows nothing of
        barriers: its next region may be taken while it waits."""
        for bank, need in enumerate(lines):
            shard.free[bank] += need
        if not drained:
            return
        shard.active -= 1
        state.region = None
        state.draining = False
        shard.drained.append((cycle, state.warp.slot))

    def _activate(self, shard: _Shard, state: _WarpState, cycle: int) -> None:
        """Reserve the top warp's region (its header taken in ``cycle``) and run its
        descriptor's entries, as the golden shard does: the entries are taken on the region
        port one per cycle from ``cycle + 1`` (no other header meanwhile), each only while
        its bank's queue has room (:meth:`_stream`), and reach the queue a cycle later; at
        its head the OSU takes an entry and acknowledges a hit (or an invalidation) in the
        same cycle, a miss when its line is filled. The warp is ACTIVE
        (may issue) from the cycle after the last acknowledgement, and not before
        ``cycle + 2`` (PRELOADING for a cycle even without entries: ``_acknowledge``)."""
        warp = state.warp
        start = warp.pcs[warp.pos]
        region = state.region = self.region_at[start]
        state.usage = self._usage(state)
        for bank, need in enumerate(state.usage):
            shard.free[bank] -= need
        shard.active += 1
        length = min(region.instructions, len(warp.pcs) - warp.pos)
        state.left_to_issue = state.left_to_dispatch = state.length = length
        self._count_boundary(state, start, cycle)
        state.drained_at = cycle
        state.drain_memory = False
        self._apply(cycle)
        entries = self.entries[start]
        shard.header_free = INF if entries else cycle + 1
        shard.streaming.extend(((warp.slot + reg) % BANKS,
                                (state, warp.slot, reg, not preload, (state.key, reg)))
                               for reg, preload in entries)
        state.bound = cycle + 2
        state.entries = len(entries)
        state.active_at = INF if entries else state.bound
        state.activated_at = cycle
        state.far = False
        if not entries:
            self._staged(state, state.bound)
        self.counts["activations"] += 1

    def _count_boundary(self, state: _WarpState, start: int, cycle: int) -> None:
        """Where a warp's cycles went between its last region's last issue and this
        activation (:data:`WAITS`)."""
        counts = self.counts
        counts["wait_stack"] += cycle - state.pushed_at
        last = state.last_issue
        if last is None:
            return
        state.last_issue = None
        drained = state.drained_at
        counts["boundaries"] += 1
        counts["wait_drain_memory" if state.drain_memory else "wait_drain_alu"] += \
            drained - last
        needed = max((state.landed.get(reg, 0) for reg in self.sm.info.reads[start]),
                     default=0)
        counts["wait_drain_needed"] += max(0, min(needed, drained + 1) - last - 1)
        counts["wait_barrier"] += state.pushed_at - drained - 1

    # -- preloads, invalidations, evictions ----------------------------------------------
    def _preload_hit(self, state, reg) -> None:
        """A preload found its register's line in the OSU."""
        self.counts["preloads_osu"] += 1
        key = (state.key, reg)
        if key not in self.lines:
            self.counts["preloads_never_stored"] += 1
            self.lines[key] = _Line(np.full(LANES, POISON, np.uint32), 0)

    def _preload(self, state, reg, bank) -> None:
        """A preload miss: ``reg``'s values come back from the compressor, else from L1
        (its timing is the transfer unit's)."""
        key = (state.key, reg)
        if self.config.compressor and key in self.packed:
            self._allocate(key, bank, self.packed[key].copy())
            self.counts["preloads_compressor"] += 1
            return
        values = self.l1.get(key)
        if values is None:
            self.counts["preloads_never_stored"] += 1
            values = np.full(LANES, POISON, np.uint32)
        self._allocate(key, bank, values.copy())

    def _invalidate(self, state, reg) -> None:
        """``reg`` is dead: its compressed and L1 copies go; its OSU line stays where it is
        (the golden bank's invalidation only fills the fetch register)."""
        key = (state.key, reg)
        self.counts["invalidations"] += 1
        self.packed.pop(key, None)
        self.l1.pop(key, None)

    def _allocate(self, key, bank: int, values) -> _Line:
        """The values of ``key``'s new line (the ports chose the line)."""
        line = self.lines[key] = _Line(values, bank)
        return line

    def written_back(self, shard: _Shard, key, cycle: int, *, data) -> None:
        """The ports wrote ``key``'s dirty line back in ``cycle`` (it stays, clean);
        ``data``: the lanes its ``writeback`` offer carried (``None``: zeros), which the
        compressor's pattern match sees (lanes the SM never wrote hold what the golden data
        store holds there, not this model's values)."""
        if key is None:
            return
        line = self.lines.get(key)
        offered = np.zeros(LANES, np.uint32) if data is None else np.asarray(data, np.uint32)
        self._evict(key, np.full(LANES, POISON, np.uint32) if line is None else line.values,
                    compressed=compressible(offered))

    def line_values(self, key):
        """``key``'s values (a preload's fill)."""
        line = self.lines.get(key)
        return None if line is None else line.values

    def displaced(self, shard: _Shard, key, dirty: bool, cycle: int) -> None:
        """The ports' line of ``key`` goes to another register in ``cycle``: dropped if
        clean, evicted (written back) if dirty. Kept when a write of ``key`` is pending on
        the ports with its reserve not yet taken (the SM wrote the new value already)."""
        if key is None:
            return
        state = self.warps.get(key[0])
        pending = state is not None and state.write_req.get(key[1])
        line = self.lines.get(key)
        if not (pending and not pending.reserve.taken):
            self.lines.pop(key, None)
        if dirty:
            self._evict(key, np.full(LANES, POISON, np.uint32) if line is None
                        else line.values)

    def _evict(self, key, values, *, compressed: bool | None = None) -> None:
        """A dirty line leaves the OSU: compressed into the compressor when one of its
        patterns matches (``compressed``: the match on the data the OSU offered; ``None``:
        on ``values``), else to L1 (its timing is the transfer unit's)."""
        self.counts["evictions"] += 1
        if self.config.lossy:
            return
        if compressed is None:
            compressed = compressible(values)
        if self.config.compressor and compressed:
            self.packed[key] = values.copy()
            self.l1.pop(key, None)
            self.counts["evictions_compressed"] += 1
            return
        self.packed.pop(key, None)
        self.l1[key] = values.copy()

    def _line_address(self, shard_index: int, slot: int, reg: int) -> int:
        warps = self.slots * len(self.shards)
        return REGISTER_BASE + reg * warps + shard_index * self.slots + slot

    def _l1_port(self, shard: _Shard, now: int, kind: str, key, op: L1Op) -> int:
        """A request of the shard's transfer unit or compressor on the SM's L1 port in
        ``now`` (one request per cycle, FIFO with the data accesses); a read: the cycle its
        line is there (the L1 hit or miss latency)."""
        sm, l1 = self.sm, self.sm.l1
        line = self._line_address(shard.index, *key) if kind == "r" else \
            REGISTER_BASE + (1 << 36) + shard.index + key * len(self.shards)
        self.counts["l1_register_requests"] += 1
        served = l1.serve(now)
        self.counts["l1_port_wait"] += served - now - 1
        if op == L1Op.READ:
            hit = self.l1_lookup(line)
            if kind == "r":
                self.counts["preloads_l1" if hit else "preloads_l2"] += 1
            return served + (sm.hit_after if hit else sm.miss_after)
        if op == L1Op.INVALIDATE:
            self.counts["invalidations_l1"] += 1
            return served
        self.l1_write(line)
        return served

    def l1_lookup(self, line: int) -> bool:
        """Whether register line ``line`` is in L1 (made the most recent; allocated if
        not): in the register lines' own 48 KB (:attr:`ReglessConfig.l1_bytes`, Table 1's
        L1 with the data bypassed), else in the SM's L1 beside the data (``sharedl1``)."""
        return self.store.lookup(line, True)

    def l1_write(self, line: int) -> None:
        """Register line ``line`` written to L1 (write-back, no fetch on write), in the
        store :meth:`l1_lookup` looks in."""
        if self.config.l1_bytes or self.sm.l1.enabled:
            store_line(self.store, line)

    # -- timed actions on the values ---------------------------------------------------
    def _later(self, when: float, action, *args) -> None:
        heapq.heappush(self.actions, (when, next(self.sequence), action, args))

    def _apply(self, before: float) -> None:
        """Run the actions due before ``before``."""
        actions = self.actions
        while actions and actions[0][0] < before:
            _, _, action, args = heapq.heappop(actions)
            action(*args)


    # -- results -------------------------------------------------------------------------
    def summary(self) -> dict:
        """Counters: preloads by source (``preloads_osu`` ...), evictions, invalidations,
        L1 register requests, activations, metadata instructions."""
        counts = dict(self.counts)
        preloads = sum(counts.get(f"preloads_{s}", 0) for s in SOURCES)
        counts["preloads"] = preloads
        for name in (*(f"preloads_{s}" for s in SOURCES), "evictions", "evictions_compressed",
                     "invalidations", "l1_register_requests", "unflagged_lines",
                     "preloads_never_stored", "l1_port_wait",
                     "boundaries",
                     *(f"wait_{w}" for w in WAITS),
                     "metadata_instructions", "activations", *MISS_PATH):
            counts.setdefault(name, 0)
        return counts


def run_on(storage: ReglessSM, kernel: str, size: str, sm):
    """The run of workload ``kernel`` at ``size`` on the timing SM ``sm`` with RegLess
    ``storage`` (a fast or exact model) as both its ``values`` and ``power`` hooks, and no
    register file of the mechanism's own."""
    from .run import run_kernel

    return run_kernel(kernel, size, timing=sm, values=storage, power=storage,
                      mechanism=lambda p: (p, {"registers": 0}))


def run_fields(kernel: str, size: str, config: ReglessConfig, run) -> dict:
    """What a RegLess ``run`` of ``kernel`` reports beside its counters: ``kernel``,
    ``size``, the configuration's ``capacity``, ``compressor`` and ``metadata``, ``cycles``
    and ``passed`` (outputs equal numpy)."""
    return {"kernel": kernel, "size": size, "capacity": config.capacity,
            "compressor": config.compressor, "metadata": config.metadata,
            "cycles": run.stats["timing"].cycles, "passed": run.passed}


def run_regless(kernel: str, size: str = "test", config: ReglessConfig = ReglessConfig(),
                *, sm=None, baseline: bool = True) -> dict:
    """Run workload ``kernel`` on RegLess (gtx980 preset, or ``sm``) with every operand read
    checked; what ``gpurf sm run KERNEL --timing --mechanism regless[:CONFIG]`` prints.

    Returns :meth:`ReglessSM.summary`'s counters, ``cycles``, ``passed`` (outputs equal
    numpy) and, with ``baseline``, ``baseline_cycles`` (the register file, values checked
    too) and ``runtime`` (RegLess cycles over the baseline's). Raises
    :class:`~gpurf.sim.sm.values.ValueMismatchError` or :class:`ReglessError` when a
    register is lost or stale.
    """
    from .config import load_config
    from .run import load_workload, run_kernel

    sm = sm or load_config(preset="gtx980")
    _, program, _ = load_workload(kernel)
    regless = ReglessSM(program, config, subcores=sm.subcores)
    run = run_on(regless, kernel, size, sm)
    out = regless.summary()
    out.update(run_fields(kernel, size, config, run), regions=len(regless.regions.regions))
    if baseline:
        base = run_kernel(kernel, size, timing=sm, values=True)
        out["baseline_cycles"] = base.stats["timing"].cycles
        out["runtime"] = out["cycles"] / out["baseline_cycles"]
        out["passed"] = out["passed"] and base.passed
    return out
