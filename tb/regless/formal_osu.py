"""Formal harness of ``regless.osu`` (the composition of its banks) in a small configuration.

Assume-guarantee: the banks are the real :class:`~gpurf.hw.regless.osu_bank.OsuBank`, whose
own invariants ``formal_osu_bank`` proves; here every input of the OSU is free (``AnySeq``)
after a reset in the first cycle, and the harness **assumes** of each bank only the stream
rule of its ``fetch`` and ``writeback`` offers (an offer not taken stays, unchanged: true by
construction of the bank's output registers). It **asserts** the OSU's own rules:

- **routing, per request kind and bank** (``read``, ``reserve``, ``write``, ``release``): a
  bank takes a request exactly when one port's request to it transfers, never two ports'
  in one cycle; the bank sees that port's payload; a port transfers only to the bank its
  register (or its line) names;
- **lowest port first**: a port never transfers while a lower-numbered port of its kind
  asks for the same bank, and a port that no lower port blocks is offered to its bank
  (its ``ready`` is the bank's); a port that is not valid is not ready;
- **answers on the right port**: ``read_resp[i]`` is valid exactly the cycle after
  ``read[i]`` transferred, with the value of the bank that took it; ``reserve_resp[i]``
  exactly when ``reserve[i]`` transfers, naming that bank and the bank's line;
- **merged streams** (``fetch``, ``writeback``): the offer names a bank that offers it and
  carries that bank's payload; an offer not taken stays, unchanged.

Covers: a read and a write bank conflict, reads on two banks in one cycle, writes on two
banks in one cycle, a reserve on both reserve ports at once, a preload hit, a preload miss
fetched, an eviction written back, a merged offer waiting while another bank also offers.
"""

from amaranth import Const, Signal
from amaranth.hdl import Assert

from gpurf.hw.regless.osu import Osu

from ..formal_base import FormalHarness

__all__ = ["SMALL", "OsuFormal"]

SMALL = {"lines": 4, "banks": 2, "warps": 2, "regs": 2, "lanes": 1, "data_width": 1,
         "instructions": 2}
"""The proof configuration: 2 banks x 2 lines, 2 warps x 2 registers, one 1-bit lane, the
paper's two instructions per cycle (4 read, 2 reserve, 2 write, 4 release ports)."""

KINDS = ("read", "reserve", "write", "release")


class OsuFormal(FormalHarness):
    """The OSU with free inputs and the rules above (``params`` override SMALL; ``block``
    a mutant class to check that the harness kills it)."""

    block = Osu
    SMALL = SMALL

    def check(self, m):
        dut = self.dut
        self.free_streams(m, *(p for kind in KINDS for p in getattr(dut, kind)),
                          *dut.preload, dut.fill)
        self.free_ready(m, dut.fetch, dut.writeback)
        after_reset = self.after_reset
        self._bank_streams(m, after_reset)
        with m.If(after_reset):
            for kind in KINDS:
                self._routing(m, kind)
            self._reserve_answers(m)
        self._read_answers(m, after_reset)
        self._merged(m, after_reset)
        self._covers(m, after_reset)

    def _target(self, kind, port):
        bits = self.dut.config.bank_bits
        if kind == "write":
            return port.payload.line.bank
        return (port.payload.warp + port.payload.reg)[:bits]

    def _bank_payload_matches(self, kind, bank, port):
        target = getattr(bank, kind).payload
        if kind == "write":
            return ((target.line == port.payload.line.line) & (target.data == port.payload.data)
                    & (target.last_use == port.payload.last_use))
        return target.as_value() == port.payload.as_value()

    def _routing(self, m, kind):
        dut = self.dut
        ports = getattr(dut, kind)
        for b, bank in enumerate(dut.banks):
            target = getattr(bank, kind)
            xfers = [p.valid & p.ready & (self._target(kind, p) == b) for p in ports]
            any_xfer = 0
            for i, port in enumerate(ports):
                asks = port.valid & (self._target(kind, port) == b)
                lower = Const(0, 1)
                for j in range(i):
                    lower = lower | (ports[j].valid & (self._target(kind, ports[j]) == b))
                m.d.comb += Assert(~(xfers[i] & any_xfer))
                m.d.comb += Assert(~(xfers[i] & lower))
                with m.If(asks & ~lower):
                    m.d.comb += [Assert(target.valid),
                                 Assert(self._bank_payload_matches(kind, bank, port)),
                                 Assert(port.ready == target.ready)]
                any_xfer = any_xfer | xfers[i]
            m.d.comb += Assert((target.valid & target.ready) == any_xfer)
        for port in ports:
            m.d.comb += Assert(port.valid | ~port.ready)

    def _read_answers(self, m, after_reset):
        dut = self.dut
        for i, port in enumerate(dut.read):
            took = Signal(name=f"read{i}_took")
            bank = Signal(dut.config.bank_bits, name=f"read{i}_bank")
            m.d.sync += [took.eq(port.valid & port.ready), bank.eq(self._target("read", port))]
            m.d.comb += Assert(~after_reset | (dut.read_resp[i].valid == took))
            for b, osu_bank in enumerate(dut.banks):
                with m.If(took & (bank == b)):
                    m.d.comb += Assert(dut.read_resp[i].payload.as_value()
                                       == osu_bank.read_resp.payload.as_value())

    def _reserve_answers(self, m):
        dut = self.dut
        for i, port in enumerate(dut.reserve):
            resp = dut.reserve_resp[i]
            target = self._target("reserve", port)
            m.d.comb += Assert(resp.valid == (port.valid & port.ready))
            for b, bank in enumerate(dut.banks):
                with m.If(resp.valid & (target == b)):
                    m.d.comb += [Assert(resp.payload.line.bank == b),
                                 Assert(resp.payload.line.line == bank.reserve_resp.payload.line)]

    def _bank_streams(self, m, after_reset):
        """The banks' stream rule, assumed (the guarantee of each bank's output registers)."""
        for b, bank in enumerate(self.dut.banks):
            for name in ("fetch", "writeback"):
                stream = getattr(bank, name)
                self.assume_held(m, stream.valid, stream.ready, stream.payload,
                                 name=f"bank{b}_{name}", guard=after_reset)

    def _merged(self, m, after_reset):
        dut = self.dut
        for name in ("fetch", "writeback"):
            out = getattr(dut, name)
            self.assert_held(m, out.valid, out.ready, out.payload, name=name,
                             guard=after_reset)
            offering = 0
            for b, bank in enumerate(dut.banks):
                source = getattr(bank, name)
                offering = offering | source.valid
                with m.If(out.valid & (out.payload.line.bank == b)):
                    m.d.comb += [Assert(source.valid),
                                 Assert(out.payload.line.line == source.payload.line)]
            m.d.comb += Assert(out.valid == offering)

    def _covers(self, m, after_reset):
        """The events, each after the reset cycle."""
        dut = self.dut
        reads, writes = dut.read, dut.write

        def conflict(kind, ports):
            return (ports[0].valid & ports[1].valid
                    & (self._target(kind, ports[0]) == self._target(kind, ports[1])))

        def parallel(kind, ports):
            return (ports[0].valid & ports[0].ready & ports[1].valid & ports[1].ready)

        waiting = 0
        for b in range(len(dut.banks)):
            others = 0
            for c, bank in enumerate(dut.banks):
                if c != b:
                    others = others | bank.fetch.valid
            waiting = waiting | (dut.banks[b].fetch.valid & others)
        events = [
            (conflict("read", reads) & reads[0].ready, "read_bank_conflict"),
            (conflict("write", writes) & writes[0].ready, "write_bank_conflict"),
            (parallel("read", reads), "reads_on_two_banks"),
            (parallel("write", writes), "writes_on_two_banks"),
            (parallel("reserve", dut.reserve), "two_reserves"),
            (dut.preload[0].valid & dut.preload[0].ready
             & ~dut.preload[0].payload.invalidate & dut.preloaded[0].valid
             & ~dut.fill.valid, "preload_hit"),
            (dut.fetch.valid & dut.fetch.ready & ~dut.fetch.payload.invalidate,
             "preload_miss_fetched"),
            (dut.writeback.valid & dut.writeback.ready, "eviction"),
            (dut.fetch.valid & ~dut.fetch.ready & waiting, "merged_offer_waits"),
        ]
        self.covers(m, events, guard=after_reset)
