"""Golden model of ``greener.power_controller``, written from the paper (3.2-3.4, Fig. 5,
Sections 5.6-5.7) and the spec's interpretations, at the block's ports, cycle by cycle.

The register file's power states are a dict of :class:`PowerState` per ``(warp, reg)``;
a wake-up in progress is the cycle from which the register is usable. Populations are
kept by the transitions, as in the RTL (:attr:`PowerController.kept`);
:meth:`PowerController.population` counts them from the states instead, and a test holds
the two equal every cycle of a random stream (the RTL's own populations are proved equal to
its state counts, ``tb/greener/formal_power_controller.py``).
"""

from typing import NamedTuple

from gpurf.golden.model import PortModel
from gpurf.hw.greener.configs import STATES, TRANSITIONS, PowerControllerConfig
from gpurf.hw.greener.layouts import PowerState
from gpurf.hw.ports import codec

__all__ = ["Ports", "PowerController", "SetPort", "decode_state", "next_state"]

_NAME = {PowerState.OFF: "off", PowerState.SLEEP: "sleep", PowerState.ON: "on"}
_MOVE = {(old, new): f"{_NAME[old]}_{_NAME[new]}" for old in _NAME for new in _NAME}


def _by_code() -> tuple[list, list]:
    """:data:`_NAME` and :data:`_MOVE` indexed by the states' codes (``_value_``; a move at
    ``old << 2 | new``): hashing an enum member runs Python code, indexing a list does not
    (:meth:`PowerController.fast_step`)."""
    names, moves = [None] * 4, [None] * 16
    for old, name in _NAME.items():
        names[old.value] = name
        for new in _NAME:
            moves[old.value << 2 | new.value] = _MOVE[old, new]
    return names, moves


_CODE_NAME, _CODE_MOVE = _by_code()
_ON_CODE = PowerState.ON.value
_OFF, _SLEEP, _ON = PowerState.OFF, PowerState.SLEEP, PowerState.ON
_DECODED = {0b00: _OFF, 0b01: _SLEEP}
""":func:`decode_state` of the codes that are not ON."""


class SetPort(NamedTuple):
    """A valid set-state port: its fields, its ``keep_on`` bit, and whether it is a source
    port (``src_set``; the OFF-read check applies) or a destination port."""

    warp: int
    reg: int
    state: int
    keep_on: int
    source: bool


class Ports:
    """Packs the controller's input ports from plain Python values (through the codecs of
    the block's signature); ``params`` are complete (``Block.resolve``)."""

    def __init__(self, params):
        self.config = config = PowerControllerConfig(**params)
        self.warps, self.regs = config.warps, config.regs
        self.src, self.dst = config.src_ports, config.dst_ports
        self.ports = config.codecs
        self._pack_head = codec(config.head_layout).pack
        self._heads: dict[tuple, int] = {}
        """Packed heads by their register lists (a stream repeats its instructions)."""

    def sets(self, name, entries):
        """A packed set-state port array from ``[(warp, reg, state), ...]`` (None = idle)."""
        return self.ports[name].pack([
            0 if entry is None else
            {"valid": 1, "warp": entry[0], "reg": entry[1], "state": entry[2]}
            for entry in entries])

    def heads(self, heads):
        """Packed ``head`` from ``{warp: [regs named: sources then destinations]}``; a list
        entry ``None`` leaves that operand slot invalid."""
        rows = [0] * self.warps
        for w, regs in heads.items():
            rows[w] = self._head(tuple(regs))
        return self.ports["head"].pack(rows)

    def _head(self, regs: tuple) -> int:
        packed = self._heads.get(regs)
        if packed is None:
            if len(self._heads) > 4096:
                self._heads.clear()
            packed = self._heads[regs] = self._pack_head({
                "valid": 1,
                "operand": [0 if reg is None else {"valid": 1, "reg": reg} for reg in regs]})
        return packed

    def inputs(self, *, src=(), dst=(), heads=None, keep_src=0, keep_dst=0):
        return {"src_set": self.sets("src_set", src), "dst_set": self.sets("dst_set", dst),
                "keep_on": self.ports["keep_on"].pack({"src": keep_src, "dst": keep_dst}),
                "head": self.heads(heads or {})}


def decode_state(code: int) -> PowerState:
    """The state a 2-bit code requests: 00 OFF, 01 SLEEP, 11 ON, and the reserved 10 as ON."""
    return {0b00: PowerState.OFF, 0b01: PowerState.SLEEP}.get(code, PowerState.ON)


def next_state(code: int, keep_on: bool, *, policy: str) -> PowerState:
    """The state a set-state port gives its register after the access.

    GReEneR: the encoded state, or ON when the run-time correction (``keep_on``) found
    another in-flight use. Sleep-Reg: always SLEEP (every register sleeps after each
    access; the baseline has no correction).
    """
    if policy == "sleep_reg":
        return PowerState.SLEEP
    return PowerState.ON if keep_on else decode_state(code)


class PowerController(PortModel, config=PowerControllerConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Per edge, in this order of precedence:

    1. Protocol check: a valid source port naming an OFF register (state at the start of
       the cycle) is an error; the first one (lowest port, first cycle) is recorded.
    2. Set-state ports, ``src_set[0..]`` then ``dst_set[0..]``: the first port naming a
       register sets its state (:func:`next_state`); later ports naming it are ignored.
       A set to SLEEP/OFF abandons a wake-up in progress.
    3. Wake-ups: every register a valid head operand names, not set this cycle and not ON,
       turns ON and becomes usable ``sleep_wakeup``/``off_wakeup`` cycles later.
    4. Accounting: each state's register-cycles grow by its population during the cycle;
       every state change counts one ``<from>_<to>`` transition.
    """

    def reset(self):
        config = self.config
        self.state = {(w, r): PowerState.OFF
                      for w in range(config.warps) for r in range(config.regs)}
        self.usable_from: dict[tuple[int, int], int] = {}
        """Registers waking up: the first cycle they are usable."""
        self.cycle = 0
        self.cycles = dict.fromkeys(STATES, 0)
        self.transitions = dict.fromkeys(TRANSITIONS, 0)
        self.kept = {"off": config.warps * config.regs, "sleep": 0, "on": 0}
        """Registers per state, kept by the transitions."""
        self.error: tuple[int, int] | None = None
        self._trace: tuple | None = None
        """The last step's cycle, population, sets, wake-ups and error (formatted only by
        :meth:`line_trace`)."""
        self._heads_bits: int | None = None
        self._heads: list = []
        self._head_codec = codec(config.head_layout)
        self._head_width = config.head_layout.size
        self._head_regs: dict[int, tuple[int, ...] | None] = {}

    # -- ports ------------------------------------------------------------------------------

    def unpack_sets(self, inputs: dict) -> list[SetPort]:
        """Every valid set-state port in priority order: ``src_set[k]`` then
        ``dst_set[k]``."""
        ports, keep_on = self.ports, self.ports["keep_on"].unpack(inputs["keep_on"])
        return [SetPort(port.warp, port.reg, port.state, keep >> k & 1, source)
                for source, name, keep in ((True, "src_set", keep_on.src),
                                           (False, "dst_set", keep_on.dst))
                for k, port in enumerate(ports[name].unpack(inputs[name])) if port.valid]

    def unpack_heads(self, bits: int) -> list[tuple[int, ...] | None]:
        """Per warp: the registers its valid head names (in range), or ``None``. (The last
        answer is kept: a run holds the same heads for many cycles, mostly none.)

        Element ``w`` of the ``head`` array lies at ``w`` times the element's size (an
        :class:`amaranth.lib.data.ArrayLayout`); each element is unpacked by the element's
        codec, and remembered (a stream repeats its instructions)."""
        if bits == self._heads_bits:
            return self._heads
        self._heads_bits = bits
        width = self._head_width
        mask = (1 << width) - 1
        self._heads = [self._head(bits >> (w * width) & mask) for w in range(self.config.warps)]
        return self._heads

    def _head(self, element: int) -> tuple[int, ...] | None:
        """The registers one packed ``head`` element names (``None``: not valid), unpacked
        once per distinct element (``()`` marks one not seen yet: ``None`` is an answer)."""
        regs = self._head_regs.get(element, ())
        if regs == ():
            head = self._head_codec.unpack(element)
            regs = (tuple(op.reg for op in head.operand if op.valid and op.reg < self.config.regs)
                    if head.valid else None)
            if len(self._head_regs) > 4096:
                self._head_regs.clear()
            self._head_regs[element] = regs
        return regs

    def _exists(self, port: SetPort) -> bool:
        return port.warp < self.config.warps and port.reg < self.config.regs

    # -- state ------------------------------------------------------------------------------

    def unusable(self, warp: int, regs) -> list[int]:
        """The registers of ``regs`` not :meth:`usable` (warp ``warp``)."""
        state, since, now, on = self.state, self.usable_from, self.cycle, PowerState.ON
        return [r for r in regs if state[warp, r] is not on or since.get((warp, r), 0) > now]

    def usable(self, warp: int, reg: int) -> bool:
        """ON and past the end of its wake-up."""
        return (self.state[(warp, reg)] is PowerState.ON
                and self.usable_from.get((warp, reg), 0) <= self.cycle)

    def population(self) -> dict[str, int]:
        """Registers per state, counted from the states (``list.count``: identity-fast)."""
        states = list(self.state.values())
        return {_NAME[s]: states.count(s) for s in PowerState}

    def counters(self) -> dict[str, int]:
        """The accounting counters (unwrapped): ``cycles_<state>`` and the transitions, as
        :func:`gpurf.golden.greener.energy.leakage_energy` takes them."""
        return {**{f"cycles_{s}": n for s, n in self.cycles.items()}, **self.transitions}

    def _outputs(self, heads, population) -> dict:
        config = self.config
        ready = sum(1 << w for w, regs in enumerate(heads) if regs is not None
                    and not (regs and self.unusable(w, regs)))
        mask = (1 << config.acct_bits) - 1
        out = {"ready": ready, "error": int(self.error is not None),
               "error_warp": self.error[0] if self.error else 0,
               "error_reg": self.error[1] if self.error else 0}
        for state, count in population.items():
            out[f"acct__pop_{state}"] = count
            out[f"acct__cycles_{state}"] = self.cycles[state] & mask
        for name, count in self.transitions.items():
            out[f"acct__{name}"] = count & mask
        return out

    def step(self, inputs: dict) -> dict:
        ports = self.unpack_sets(inputs)
        heads = self.unpack_heads(inputs["head"])
        population = dict(self.kept)
        outputs = self._outputs(heads, population)
        claimed, woken = self._edge(ports, enumerate(heads), population)
        self._trace = (self.cycle - 1, population, claimed, woken, self.error)
        return outputs

    def fast_step(self, sets: list[SetPort], heads: dict[int, list[int]]) -> None:
        """:meth:`step`'s edge from plain values, for a caller that needs no outputs (the
        golden SM): ``sets`` as :meth:`unpack_sets` gives them (or plain tuples in
        :class:`SetPort`'s field order), ``heads`` the registers each warp's head names (in
        range, at most ``operands``). No line trace. :meth:`_edge`'s three steps inline
        (``tests/test_greener_fast_path.py`` holds them equal to :meth:`step`'s)."""
        config, state, kept = self.config, self.state, self.kept
        cycles = self.cycles  # accrue the populations during the cycle, before its edge
        for name, count in kept.items():
            cycles[name] += count
        warps, regs = config.warps, config.regs
        if self.error is None:
            for warp, reg, _, _, source in sets:
                if source and warp < warps and reg < regs and state[(warp, reg)] is _OFF:
                    self.error = (warp, reg)
                    break
        claimed = set()
        transitions, usable_from = self.transitions, self.usable_from
        sleep_reg = config.policy == "sleep_reg"
        for warp, reg, code, keep, _ in sets:
            key = (warp, reg)
            if warp >= warps or reg >= regs or key in claimed:
                continue
            claimed.add(key)
            new = _SLEEP if sleep_reg else _ON if keep else _DECODED.get(code, _ON)
            old = state[key]
            if old is not new:
                a, b = old._value_, new._value_
                transitions[_CODE_MOVE[a << 2 | b]] += 1
                kept[_CODE_NAME[a]] -= 1
                kept[_CODE_NAME[b]] += 1
                state[key] = new
            if new is not _ON:
                usable_from.pop(key, None)
        cycle = self.cycle
        for warp, named in heads.items():
            for reg in named or ():
                key = (warp, reg)
                old = state[key]
                if old is _ON or key in claimed:
                    continue
                transitions[_CODE_MOVE[old._value_ << 2 | _ON_CODE]] += 1
                kept[_CODE_NAME[old._value_]] -= 1
                kept["on"] += 1
                state[key] = _ON
                usable_from[key] = cycle + (config.sleep_wakeup if old is _SLEEP
                                            else config.off_wakeup)
        self.cycle = cycle + 1

    def _edge(self, ports, heads, population) -> tuple[set, list]:
        """The clock edge (the class docstring's order); ``heads`` as ``(warp, registers)``
        pairs, ``population`` the registers per state during the cycle. Returns the
        registers set and the wake-ups started."""
        self._check_reads(ports)
        claimed = self._apply_sets(ports)
        woken = self._start_wakeups(heads, claimed)
        for state, count in population.items():
            self.cycles[state] += count
        self.cycle += 1
        return claimed, woken

    def _check_reads(self, ports) -> None:
        if self.error is not None:
            return
        for port in ports:
            if (port.source and self._exists(port)
                    and self.state[(port.warp, port.reg)] is PowerState.OFF):
                self.error = (port.warp, port.reg)
                return

    def _move(self, key, new: PowerState) -> None:
        old = self.state[key]
        if old is not new:
            self.transitions[_MOVE[old, new]] += 1
            self.kept[_NAME[old]] -= 1
            self.kept[_NAME[new]] += 1
            self.state[key] = new

    def _apply_sets(self, ports) -> set:
        claimed = set()
        for port in ports:
            key = (port.warp, port.reg)
            if not self._exists(port) or key in claimed:
                continue
            claimed.add(key)
            new = next_state(port.state, bool(port.keep_on), policy=self.config.policy)
            self._move(key, new)
            if new is not PowerState.ON:
                self.usable_from.pop(key, None)
        return claimed

    def _start_wakeups(self, heads, claimed) -> list:
        woken = []
        for warp, regs in heads:
            for reg in regs or ():
                key = (warp, reg)
                old = self.state[key]
                if key in claimed or old is PowerState.ON:
                    continue
                self._move(key, PowerState.ON)
                self.usable_from[key] = self.cycle + self.config.latency(old)
                woken.append((key, _NAME[old]))
        return woken

    def _waking(self, cycle: int) -> list:
        return sorted(k for k, c in self.usable_from.items() if c > cycle)

    def line_trace(self) -> str:
        """The last step, with the wake-ups still in progress after it."""
        if self._trace is None:
            return "power_controller: -"
        cycle, population, claimed, woken, error = self._trace
        return (f"power_controller: cycle {cycle}: pop {population}, sets {sorted(claimed)}, "
                f"wakes {woken}, waking {self._waking(cycle)}, error {error}")
