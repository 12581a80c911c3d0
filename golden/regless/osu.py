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
    per port (lists ``read_ready``, ``reserve_ready``, ``write_ready``, ``release_ready``;
    ``preload_ready`` per bank), per read port ``read_resp`` and ``read_resp_valid``, per
    reserve port ``reserve_resp`` (``{line, last_use}`` or ``None``), ``acks`` (per bank
    the acknowledged warp or ``None``), the merged offers ``fetch_offer`` and
    ``writeback_offer`` (dicts, or ``None``) and ``protocol_error``; every line is a
    :class:`LineRef`.
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
        config = self.config
        for kind in ("read", "reserve", "write", "release"):
            setattr(self, f"{kind}_ready", [0] * config.port_count(kind))
        self.fill_ready = 0
        self.read_source: list[int | None] = [None] * config.read_ports
        """Per read port: the bank that took its read last cycle (it answers this cycle)."""
        self.read_resp: list = [None] * config.read_ports
        """Per read port: the value answered this cycle (``None``: none, or a read of a
        line never written, whose value is undefined)."""
        self.read_resp_valid = [0] * config.read_ports
        self.reserve_resp: list = [None] * config.write_ports
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
        fetch, writeback = self.fetch_offer, self.writeback_offer
        out = {"fill__ready": self.fill_ready, "protocol_error": self.protocol_error,
               "preloaded": ports["preloaded"].pack(
                   [0 if warp is None else {"valid": 1, "warp": warp} for warp in self.acks]),
               "fetch__valid": int(fetch is not None),
               "fetch__payload": (None if fetch is None
                                  else ports["fetch__payload"].pack(fetch)),
               "writeback__valid": int(writeback is not None),
               "writeback__payload": (None if writeback is None
                                      else ports["writeback__payload"].pack(writeback))}
        out.update(self.request_outputs(ports))
        out.update(zip(self._preload_keys[2], self.preload_ready, strict=True))
        return out

    def request_outputs(self, ports) -> dict:
        """This cycle's outputs of the request ports (readies and responses), packed with
        ``ports`` (the OSU's codecs or the shard's: the names are the same)."""
        out = {}
        for kind in ("read", "reserve", "write", "release"):
            for i, ready in enumerate(getattr(self, f"{kind}_ready")):
                out[f"{kind}__{i}__ready"] = ready
        for kind, valids in (("read_resp", self.read_resp_valid),
                             ("reserve_resp", [int(r is not None) for r in self.reserve_resp])):
            for i, (valid, resp) in enumerate(zip(valids, getattr(self, kind), strict=True)):
                out[f"{kind}__{i}__valid"] = valid
                out[f"{kind}__{i}__payload"] = (
                    None if resp is None else ports[f"{kind}__{i}__payload"].pack(resp))
        return out

    def unpack_requests(self, inputs: dict, ports) -> dict:
        """The request ports of ``inputs`` unpacked with ``ports``: per kind a list per port
        of ``(valid, payload)`` (keyword arguments of :meth:`advance`)."""
        requests = {}
        for kind in ("read", "reserve", "write", "release"):
            requests[f"{kind}s"] = [
                (inputs[f"{kind}__{i}__valid"],
                 ports[f"{kind}__{i}__payload"].unpack(inputs[f"{kind}__{i}__payload"]))
                for i in range(self.config.port_count(kind))]
        return requests

    def follow(self, inputs: dict) -> None:
        """The cycle of :meth:`step` without forming its outputs (a bench's shadow of the
        block follows its state with it)."""
        ports = self.ports
        fill = ports["fill__payload"].unpack(inputs["fill__payload"])
        valids, payloads, _ = self._preload_keys
        self.advance(
            preloads=[(inputs[valid], ports[payload].unpack(inputs[payload]))
                      for valid, payload in zip(valids, payloads, strict=True)],
            fill_valid=inputs["fill__valid"], fill_line=fill.line, fill_data=fill.data,
            fetch_ready=inputs["fetch__ready"], writeback_ready=inputs["writeback__ready"],
            **self.unpack_requests(inputs, ports))

    def _grants(self, requests, targets) -> list[dict]:
        """Per bank, the lowest-numbered valid port of one kind targeting it: ``{bank:
        port}``; ``requests`` is per port ``(valid, payload)``, ``targets`` its bank."""
        grants = {}
        for i, ((valid, _), bank) in enumerate(zip(requests, targets, strict=True)):
            if valid:
                grants.setdefault(bank, i)
        return grants

    def advance(self, *, reads, reserves, writes, preloads, fill_valid, fill_line, fill_data,
                releases, fetch_ready, writeback_ready) -> None:
        """One cycle on unpacked requests: ``reads``, ``reserves``, ``writes``,
        ``releases`` and ``preloads`` a ``(valid, payload)`` pair per port (``preloads``
        per bank; a write's ``line`` and ``fill_line`` are ``{line, bank}`` structs), given
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
        self.read_resp_valid = [int(b is not None) for b in self.read_source]
        self.read_resp = [None if b is None else banks[b].output_register
                          for b in self.read_source]
        self.protocol_error = int(any(bank.error for bank in banks))
        requests = {"read": reads, "reserve": reserves, "write": writes, "release": releases}
        grants = {}
        for kind, ports in requests.items():
            targets = [p.line.bank if kind == "write" else (p.warp + p.reg) & mask
                       for _, p in ports]
            grants[kind] = self._grants(ports, targets)
        fill_bank = fill_line.bank
        for b, bank in enumerate(banks):
            read, reserve, write, release = (self._offered(kind, requests[kind], grants[kind],
                                                           b)
                                             for kind in ("read", "reserve", "write",
                                                          "release"))
            preload_valid, preload = preloads[b]
            bank.advance(read[0], read[1], reserve[0], reserve[1],
                         write[0], write[1].line.line, write[1].data, write[1].last_use,
                         preload_valid, preload,
                         fill_valid and fill_bank == b, fill_line.line, fill_data,
                         release[0], release[1],
                         fetch_ready and grant_fetch == b, writeback_ready and grant_wb == b)
        self._readies(grants, requests)
        self.fill_ready = banks[fill_bank & mask].fill_ready
        self.preload_ready = [bank.preload_ready for bank in banks]
        self.acks = [bank.preloaded for bank in banks]

    def _offered(self, kind, ports, grants, bank) -> tuple:
        """``(valid, payload)`` the bank sees of one kind: the granted port's, else an
        invalid request with the payload 0 (the RTL's routing passes 0 then)."""
        if bank in grants:
            return ports[grants[bank]]
        return 0, self.ports[f"{kind}__0__payload"].zero

    def _readies(self, grants, requests) -> None:
        """Per port readies, the read sources of next cycle's responses and the reserve
        responses, from the banks' decisions this cycle."""
        banks = self.banks
        for kind, ports in requests.items():
            ready = [0] * len(ports)
            for b, i in grants[kind].items():
                ready[i] = 1 if kind == "write" else getattr(banks[b], f"{kind}_ready")
            setattr(self, f"{kind}_ready", ready)
        self.read_source = [None] * len(requests["read"])
        for b, i in grants["read"].items():
            if self.read_ready[i]:
                self.read_source[i] = b
        self.reserve_resp = [None] * len(requests["reserve"])
        for b, i in grants["reserve"].items():
            resp = banks[b].reserve_resp
            if resp is not None:
                self.reserve_resp[i] = {"line": LineRef(resp["line"], b),
                                        "last_use": resp["last_use"]}

    def line_trace(self) -> str:
        return "osu: " + " | ".join(f"b{b} {bank.line_trace()}"
                                    for b, bank in enumerate(self.banks))
