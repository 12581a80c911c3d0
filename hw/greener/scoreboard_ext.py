"""Scoreboard extension of GReEneR: source registers reserved until their power state is
applied (paper Section 3.4, Fig. 5 Labels 2 and 4; Section 5.6)."""

import functools
from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int

from .layouts import scoreboard_check_layout, scoreboard_release_layout, scoreboard_reserve_layout

__all__ = ["ScoreboardExt", "ScoreboardExtConfig"]


@dataclass(frozen=True)
class ScoreboardExtConfig:
    """Validated parameters of the scoreboard extension and the widths derived from them.

    Shared by :class:`ScoreboardExt` and its golden model, so both reject the same
    parameters with the same message and agree on every width.
    """

    warps: int
    regs: int
    sources: int
    dests: int
    check_ports: int
    release_ports: int

    def __post_init__(self):
        check_int("warps", self.warps, 2, 64)
        check_int("regs", self.regs, 2, 256)
        check_int("sources", self.sources, 1, 8)
        check_int("dests", self.dests, 1, 8)
        check_int("check_ports", self.check_ports, 1, 8)
        check_int("release_ports", self.release_ports, 1, 8)

    @property
    def warp_width(self) -> int:
        return (self.warps - 1).bit_length()

    @property
    def reg_bits(self) -> int:
        """Bits of a register id: log2(R), rounded up."""
        return (self.regs - 1).bit_length()

    @property
    def storage_bits(self) -> int:
        """The paper's ``4 x W x log2(R)`` register-number bits (``sources`` = 4)."""
        return self.sources * self.warps * self.reg_bits

    @property
    def slot_layout(self) -> data.ArrayLayout:
        """One warp's reservation slots (register ids), slot 0 first."""
        return data.ArrayLayout(self.reg_bits, self.sources)

    @property
    def reserve_layout(self) -> data.StructLayout:
        return scoreboard_reserve_layout(warp_width=self.warp_width, reg_bits=self.reg_bits,
                                         sources=self.sources)

    @property
    def release_layout(self) -> data.StructLayout:
        return scoreboard_release_layout(warp_width=self.warp_width, reg_bits=self.reg_bits)

    @property
    def check_layout(self) -> data.StructLayout:
        return scoreboard_check_layout(warp_width=self.warp_width, reg_bits=self.reg_bits,
                                       sources=self.sources, dests=self.dests)


class ScoreboardExt(wiring.Component):
    """Reservation of source registers (RAR and WAR tracking) until their state is applied.

    Paper 3.4: an instruction may set a source register to SLEEP or OFF after reading it,
    so later instructions that read or write the register wait until the new state is
    applied. The block is the extension only; RAW/WAW tracking of destinations stays in
    the baseline scoreboard.

    Storage: per warp ``sources`` reservation slots of a register id, in an unmapped
    memory of ``sources x warps x log2(R)`` bits, the paper's ``4 x W x log2(R)`` = 1,536
    bits = 192 bytes at 64 warps x 64 registers. **Interpretation:** every register id is a
    real register, so no id can mark an empty slot; each slot has an occupancy bit in
    flip-flops (``sources x warps`` = 256 bits at the defaults), which the paper's figure
    leaves out (reported separately as ``ff_bits``). Flip-flops also make the reservations
    empty right after reset, with no clear window.

    Behaviour and timing (all answers combinational, latency 0, from the state at the
    start of the cycle; changes are visible from the next cycle):

    - **Reserve** (issue, stream): each source operand with its ``valid`` bit set takes one
      free slot of the warp (lowest operand into the lowest free slot). ``reserve.ready`` is
      high when the warp has at least as many free slots as the payload has valid sources
      (**interpretation**: a register named twice takes two slots; both are released
      together). Slots freed on an edge are free from the next cycle.
    - **Release** (``release_ports`` ports, the power controller's source set-state ports):
      ``release[p].valid`` frees every occupied slot of ``release[p].warp`` holding
      ``release[p].reg`` (nothing if none does).
    - **Check** (``check_ports`` ports, one per issue candidate; **interpretation**: per
      query port, not per warp): ``hazard[c]`` when ``check[c].valid`` and some valid source
      or destination register of the candidate is reserved in its warp (RAR / WAR);
      ``full[c]`` when ``check[c].valid`` and the warp has fewer free slots than the
      candidate has valid sources. The issue stage must stall the candidate on either.

    Every ``warp`` input must be below ``warps`` and every register below ``regs``.

    Parameters
    ----------
    warps : int
        Resident warps (W), 2..64 (default 64).
    regs : int
        Registers per thread (R), 2..256 (default 64: 6-bit register ids).
    sources : int
        Source operands of an instruction = reservation slots per warp, 1..8 (default 4).
    dests : int
        Destination operands checked for WAR, 1..8 (default 4).
    check_ports : int
        Issue candidates checked per cycle, 1..8 (default 1).
    release_ports : int
        Source set-state ports releasing reservations, 1..8 (default 4).

    Attributes
    ----------
    reserve : In(stream.Signature(reserve_layout))
        Issued instructions: ``payload.{warp, valid, reg}``.
    release : In(ArrayLayout(release_layout, release_ports))
        Per port: ``valid``, ``warp``, ``reg``.
    check : In(ArrayLayout(check_layout, check_ports))
        Per port: ``valid``, ``warp``, ``src_valid``, ``src``, ``dst_valid``, ``dst``.
    hazard : Out(check_ports)
        Bit ``c``: the candidate touches a reserved source register.
    full : Out(check_ports)
        Bit ``c``: the candidate's sources do not fit in its warp's free slots.
    """

    def __init__(self, *, warps=64, regs=64, sources=4, dests=4, check_ports=1,
                 release_ports=4):
        self.config = config = ScoreboardExtConfig(
            warps=warps, regs=regs, sources=sources, dests=dests, check_ports=check_ports,
            release_ports=release_ports)
        super().__init__({
            "reserve": In(stream.Signature(config.reserve_layout)),
            "release": In(data.ArrayLayout(config.release_layout, release_ports)),
            "check": In(data.ArrayLayout(config.check_layout, check_ports)),
            "hazard": Out(check_ports),
            "full": Out(check_ports),
        })
        self.occupied = [Signal(sources, name=f"occupied_{w}") for w in range(warps)]
        """Per warp: bit ``j`` = slot ``j`` holds a reservation."""

    @functools.cached_property
    def slots(self) -> memory.Memory:
        """The slot memory, one row per warp, created on first use (elaboration or a
        formal harness that adds its own read ports)."""
        config = self.config
        return memory.Memory(shape=config.slot_layout, depth=config.warps, init=[])

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.slots = slots = self.slots
        reserve_warp, taken = self._reserve(m, slots)
        freed = [self._release(m, slots, p) for p in range(config.release_ports)]
        for w, occupied in enumerate(self.occupied):
            cleared = Signal(config.sources, name=f"cleared_{w}")
            m.d.comb += cleared.eq(_or_all(Mux(hit[w], match, 0) for hit, match in freed))
            m.d.sync += occupied.eq((occupied & ~cleared) | Mux(reserve_warp[w], taken, 0))
        for c in range(config.check_ports):
            self._check(m, slots, c)
        return m

    def _occupancy(self, m, warp, name):
        """The occupancy bits of ``warp`` (a case statement: no dynamic indexing)."""
        bits = Signal(self.config.sources, name=name)
        with m.Switch(warp):
            for w, occupied in enumerate(self.occupied):
                with m.Case(w):
                    m.d.comb += bits.eq(occupied)
            with m.Default():
                m.d.comb += bits.eq(0)
        return bits

    def _reserve(self, m, slots):
        """Write the valid sources into free slots; returns the reserving warp (one-hot)
        and the slots taken on this edge."""
        config, payload = self.config, self.reserve.payload
        occupied = self._occupancy(m, payload.warp, "reserve_occupied")
        fits, placement = _allocate(m, occupied, payload.valid, "reserve")
        m.d.comb += self.reserve.ready.eq(fits)
        write = slots.write_port(granularity=1)
        transfer = Signal()
        taken = Signal(config.sources)
        m.d.comb += [
            transfer.eq(self.reserve.valid & fits),
            taken.eq(Mux(transfer, _or_all(placement), 0)),
            write.addr.eq(payload.warp),
            write.en.eq(taken),
        ]
        for j in range(config.sources):
            m.d.comb += write.data[j].eq(_or_all(
                Mux(place[j], payload.reg[k], 0) for k, place in enumerate(placement)))
        return _decode(m, payload.warp, config.warps, "reserve_warp"), taken

    def _release(self, m, slots, index):
        """Per warp: port ``index`` releases in it; the slots holding its register."""
        config, port = self.config, self.release[index]
        read = slots.read_port(domain="comb")
        m.d.comb += read.addr.eq(port.warp)
        match = Signal(config.sources, name=f"release_{index}_match")
        m.d.comb += match.eq(Cat(reg == port.reg for reg in read.data))
        hit = _decode(m, port.warp, config.warps, f"release_{index}_warp")
        valid_hit = Signal(config.warps, name=f"release_{index}_hit")
        m.d.comb += valid_hit.eq(Mux(port.valid, hit, 0))
        return valid_hit, match

    def _check(self, m, slots, index):
        """``hazard`` and ``full`` of issue candidate ``index``."""
        config, check = self.config, self.check[index]
        read = slots.read_port(domain="comb")
        m.d.comb += read.addr.eq(check.warp)
        occupied = self._occupancy(m, check.warp, f"check_{index}_occupied")
        operands = ([(check.src_valid[k], check.src[k]) for k in range(config.sources)]
                    + [(check.dst_valid[k], check.dst[k]) for k in range(config.dests)])
        touched = Signal(len(operands), name=f"check_{index}_touched")
        for i, (valid, reg) in enumerate(operands):
            held = Cat(occupied[j] & (read.data[j] == reg) for j in range(config.sources))
            m.d.comb += touched[i].eq(valid & held.any())
        fits, _ = _allocate(m, occupied, check.src_valid, f"check_{index}")
        m.d.comb += [
            self.hazard[index].eq(check.valid & touched.any()),
            self.full[index].eq(check.valid & ~fits),
        ]


def _allocate(m, occupied, wanted, name):
    """Place each wanted operand (in order) into the lowest still free slot.

    Returns ``fits`` (every wanted operand got a slot) and per operand the one-hot slot.
    """
    free = ~occupied
    placement, fails = [], []
    for k in range(len(wanted)):
        place = Signal(len(occupied), name=f"{name}_place_{k}")
        for j in range(len(occupied)):
            m.d.comb += place[j].eq(wanted[k] & free[j] & ~free[:j].any() if j
                                    else wanted[k] & free[0])
        fails.append(wanted[k] & ~free.any())
        rest = Signal(len(occupied), name=f"{name}_free_{k}")
        m.d.comb += rest.eq(free & ~place)
        free = rest
        placement.append(place)
    fits = Signal(name=f"{name}_fits")
    m.d.comb += fits.eq(~Cat(fails).any())
    return fits, placement


def _decode(m, warp, warps, name):
    """One-hot decode of a warp number (a shift, not a case statement of constants, which
    yosys would turn into a ROM)."""
    onehot = Signal(warps, name=name)
    m.d.comb += onehot.eq((Const(1, warps) << warp)[:warps])
    return onehot


def _or_all(values):
    """Bitwise OR of ``values`` (the AND-OR tail of a one-hot multiplexer)."""
    values = list(values)
    result = values[0]
    for value in values[1:]:
        result = result | value
    return result
