"""Golden model of ``regless.osu``: ``banks`` golden OSU banks (``golden.regless.osu_bank``)
with the paper's bank mapping ``(warp + reg) & (banks - 1)`` (5.2) and the merge of the
banks' fetch and writeback streams (lowest bank first, an offer not taken stays offered)."""

from functools import cached_property
from typing import NamedTuple

from gpurf.golden.model import PortModel
from gpurf.hw.regless.configs import OsuConfig

from .osu_bank import OsuBank

__all__ = ["LineRef", "Osu"]


class LineRef(NamedTuple):
    """A line of the OSU: ``line`` within ``bank`` (the ``osu_line_layout`` fields)."""

    line: int
    bank: int


class Osu(PortModel, config=OsuConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    :meth:`advance` is the same cycle on unpacked requests (the shard model drives its OSU
    with it); it leaves this cycle's outputs in attributes: the readies of the requests
    (``preload_ready`` per bank), ``read_resp`` and ``read_resp_valid``, ``reserve_resp``
    (``{line, last_use}``), ``acks`` (per bank the acknowledged warp or ``None``), the merged
    offers ``fetch_offer`` and ``writeback_offer`` (dicts, or ``None``) and
    ``protocol_error``; every line is a :class:`LineRef`.
    """

    @cached_property
    def banks(self) -> list[OsuBank]:
        bank = self.config.bank.params()
        return [OsuBank(**bank) for _ in range(self.config.banks)]

    def reset(self):
        for bank in self.banks:
            bank.reset()
        self.offered = {"fetch": None, "writeback": None}
        """Per merged stream: the bank whose offer was not taken last cycle."""
        self.acks: list[int | None] = [None] * self.config.banks
        self.preload_ready = [0] * self.config.banks
        self.read_ready = self.reserve_ready = self.fill_ready = self.release_ready = 0
        self.read_resp_valid, self.read_resp, self.reserve_resp = 0, None, None
        self.fetch_offer = self.writeback_offer = None
        self.protocol_error = 0
        self._preload_keys = tuple([f"preload__{b}__{port}" for b in range(self.config.banks)]
                                   for port in ("valid", "payload", "ready"))

    def usable(self, warp: int, reg: int) -> bool:
        return self.banks[(warp + reg) & (self.config.banks - 1)].usable(warp, reg)

    def usable_registers(self) -> set[tuple[int, int]]:
        """Every register :meth:`usable` holds."""
        return set().union(*(bank.usable_registers() for bank in self.banks))

    def offers(self, name: str) -> bool:
        """Whether ``fetch`` or ``writeback`` (``name``) is offered this cycle (state only)."""
        return self._grant(name) is not None

    def _grant(self, name: str) -> int | None:
        """The bank whose ``name`` offer the OSU shows: the one left waiting, else the
        lowest bank with an offer."""
        if self.offered[name] is not None:
            return self.offered[name]
        for b, bank in enumerate(self.banks):
            if (bank.fetch is not None if name == "fetch"
                    else bank.evict is not None and bank.evict[0] == "held"):
                return b
        return None

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        self.follow(inputs)
        fetch, writeback, reserved = self.fetch_offer, self.writeback_offer, self.reserve_resp
        out = {
            "read__ready": self.read_ready, "reserve__ready": self.reserve_ready,
            "write__ready": 1, "fill__ready": self.fill_ready,
            "release__ready": self.release_ready, "protocol_error": self.protocol_error,
            "read_resp__valid": self.read_resp_valid,
            "read_resp__payload": (None if self.read_resp is None
                                   else ports["read_resp__payload"].pack(self.read_resp)),
            "reserve_resp__valid": int(reserved is not None),
            "reserve_resp__payload": (None if reserved is None
                                      else ports["reserve_resp__payload"].pack(reserved)),
            "preloaded": ports["preloaded"].pack(
                [0 if warp is None else {"valid": 1, "warp": warp} for warp in self.acks]),
            "fetch__valid": int(fetch is not None),
            "fetch__payload": None if fetch is None else ports["fetch__payload"].pack(fetch),
            "writeback__valid": int(writeback is not None),
            "writeback__payload": (None if writeback is None
                                   else ports["writeback__payload"].pack(writeback)),
        }
        out.update(zip(self._preload_keys[2], self.preload_ready, strict=True))
        return out

    def follow(self, inputs: dict) -> None:
        """The cycle of :meth:`step` without forming its outputs (a bench's shadow of the
        block follows its state with it)."""
        ports = self.ports
        write = ports["write__payload"].unpack(inputs["write__payload"])
        fill = ports["fill__payload"].unpack(inputs["fill__payload"])
        valids, payloads, _ = self._preload_keys
        self.advance(
            inputs["read__valid"], ports["read__payload"].unpack(inputs["read__payload"]),
            inputs["reserve__valid"], ports["reserve__payload"].unpack(inputs["reserve__payload"]),
            inputs["write__valid"], write.line, write.data, write.last_use,
            [(inputs[valid], ports[payload].unpack(inputs[payload]))
             for valid, payload in zip(valids, payloads, strict=True)],
            inputs["fill__valid"], fill.line, fill.data,
            inputs["release__valid"], ports["release__payload"].unpack(inputs["release__payload"]),
            inputs["fetch__ready"], inputs["writeback__ready"])

    def advance(self, read_valid, read, reserve_valid, reserve, write_valid, write_line,
                write_data, write_last_use, preloads, fill_valid, fill_line, fill_data,
                release_valid, release, fetch_ready, writeback_ready) -> None:
        """One cycle on unpacked requests (``write_line`` and ``fill_line`` are
        ``{line, bank}`` structs, ``preloads`` a ``(valid, payload)`` pair per bank), given
        with their ``valid`` whether valid or not; then the clock edge."""
        banks, mask = self.banks, self.config.banks - 1
        grant_fetch, grant_wb = self._grant("fetch"), self._grant("writeback")
        self.fetch_offer = self.writeback_offer = None
        if grant_fetch is not None:
            fetch = banks[grant_fetch].fetch
            self.fetch_offer = {"warp": fetch["warp"], "reg": fetch["reg"],
                                "line": LineRef(fetch["line"], grant_fetch),
                                "invalidate": fetch["invalidate"]}
        if grant_wb is not None:
            offer = banks[grant_wb].writeback()
            self.writeback_offer = {**offer, "line": LineRef(offer["line"], grant_wb)}
        self.offered["fetch"] = None if grant_fetch is None or fetch_ready else grant_fetch
        self.offered["writeback"] = None if grant_wb is None or writeback_ready else grant_wb
        self.read_resp_valid, self.read_resp = 0, None
        for bank in banks:
            if bank.read_pending:
                self.read_resp_valid, self.read_resp = 1, bank.output_register
                break
        self.protocol_error = int(any(bank.error for bank in banks))
        targets = {"read": (read.warp + read.reg) & mask,
                   "reserve": (reserve.warp + reserve.reg) & mask,
                   "release": (release.warp + release.reg) & mask,
                   "write": write_line.bank, "fill": fill_line.bank}
        line, data, last_use = write_line.line, write_data, write_last_use
        for b, bank in enumerate(banks):
            preload_valid, preload = preloads[b]
            bank.advance(read_valid and targets["read"] == b, read,
                         reserve_valid and targets["reserve"] == b, reserve,
                         write_valid and targets["write"] == b, line, data, last_use,
                         preload_valid, preload,
                         fill_valid and targets["fill"] == b, fill_line.line, fill_data,
                         release_valid and targets["release"] == b, release,
                         fetch_ready and grant_fetch == b, writeback_ready and grant_wb == b)
        self.read_ready = banks[targets["read"]].read_ready
        self.reserve_ready = banks[targets["reserve"]].reserve_ready
        self.release_ready = banks[targets["release"]].release_ready
        self.fill_ready = banks[targets["fill"]].fill_ready
        self.preload_ready = [bank.preload_ready for bank in banks]
        self.acks = [bank.preloaded for bank in banks]
        self.reserve_resp = None
        for b, bank in enumerate(banks):
            if bank.reserve_resp is not None:
                self.reserve_resp = {"line": LineRef(bank.reserve_resp["line"], b),
                                     "last_use": bank.reserve_resp["last_use"]}
                break

    def line_trace(self) -> str:
        return "osu: " + " | ".join(f"b{b} {bank.line_trace()}"
                                    for b, bank in enumerate(self.banks))
