"""Scoreboard extension of GReEneR: source registers reserved until their power state is
applied (paper Section 3.4, Fig. 5 Labels 2 and 4; Section 5.6)."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import memory

from gpurf.hw.gates import onehot, or_all
from gpurf.hw.params import ConfiguredComponent

from .configs import ScoreboardExtConfig

__all__ = ["ScoreboardExt", "ScoreboardExtConfig"]


class ScoreboardExt(ConfiguredComponent, config=ScoreboardExtConfig):
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

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.occupied = [Signal(config.sources, name=f"occupied_{w}")
                         for w in range(config.warps)]
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
            m.d.comb += cleared.eq(or_all(Mux(hit[w], match, 0) for hit, match in freed))
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
            taken.eq(Mux(transfer, or_all(placement), 0)),
            write.addr.eq(payload.warp),
            write.en.eq(taken),
        ]
        for j in range(config.sources):
            m.d.comb += write.data[j].eq(or_all(
                Mux(place[j], payload.reg[k], 0) for k, place in enumerate(placement)))
        return onehot(m, payload.warp, config.warps, "reserve_warp"), taken

    def _release(self, m, slots, index):
        """Per warp: port ``index`` releases in it; the slots holding its register."""
        config, port = self.config, self.release[index]
        read = slots.read_port(domain="comb")
        m.d.comb += read.addr.eq(port.warp)
        match = Signal(config.sources, name=f"release_{index}_match")
        m.d.comb += match.eq(Cat(reg == port.reg for reg in read.data))
        hit = onehot(m, port.warp, config.warps, f"release_{index}_warp")
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
