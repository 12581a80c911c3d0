"""Golden model of ``wir.pipeline``: the allocation path of WIR composed from the golden
H3 hash, value signature buffer and register pool, with the rename mappings, the register
file and the reference-count protocol of docs/wir.md, checked every cycle."""

from collections import Counter, deque
from functools import cached_property

from gpurf.golden.model import PortModel
from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import PipelineConfig
from gpurf.hw.wir.layouts import Outcome

from .h3_hash import h3
from .register_pool import ProtocolError, RegisterPool
from .value_signature_buffer import ValueSignatureBuffer
from .verify_cache import VerifyCache

__all__ = ["LeakError", "Pipeline"]


class LeakError(AssertionError):
    """A register's count differs from its holders, or it is both free and held."""


class Pipeline(PortModel, config=PipelineConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge
    and recounts every register's holders (:meth:`check_references`).

    ``pipe[0]`` is the result in the table cycle (its VSB lookup is made now), ``pipe[1]``
    the one decided now (``None``: empty). ``mapping[row]`` is ``(preg, valid, pin)``;
    ``holds`` counts the in-flight source references per register; :attr:`cache` is the
    verify cache (its lines hold packed values), looked up before the register file.
    """

    @cached_property
    def vsb(self) -> ValueSignatureBuffer:
        return ValueSignatureBuffer(**self.config.alloc.vsb.params())

    @cached_property
    def pool(self) -> RegisterPool:
        return RegisterPool(**self.config.pool.params())

    @cached_property
    def cache(self) -> VerifyCache | None:
        """The verify cache's lines (packed values), ``None`` without one."""
        cache = self.config.cache
        return None if cache is None else VerifyCache(**cache.params())

    def reset(self):
        config = self.config
        self.vsb.reset()
        self.pool.reset()
        if self.cache is not None:
            self.cache.reset()
        self.values = codec(config.alloc.value_layout)
        self.masks = config.alloc.hash.masks
        self.pipe: deque = deque([None, None], maxlen=2)
        self.mapping = [(0, 0, 0)] * config.mappings
        self.regfile = [0] * config.pregs
        self.holds: Counter = Counter()
        self.sweep, self.wrote, self.wrote_index = 0, False, 0
        self.checks = 0
        self._last = "reset"
        self.reuse_from_holds = True
        """A reuse hit's reference is one taken through ``hold`` (a composition whose
        reuse hits hold their own references sets this false and counts them)."""

    def row(self, reg) -> int:
        return reg.warp * self.config.regs + reg.reg

    def _unpack(self, inputs, port):
        """The payload of the stream or valid-only ``port`` if valid, else ``None``."""
        if not inputs[f"{port}__valid"]:
            return None
        return self.ports[f"{port}__payload"].unpack(inputs[f"{port}__payload"])

    def _saturated(self, preg) -> bool:
        return self.pool.counts.get(preg, 0) >= self.config.pool.saturation

    def step(self, inputs: dict) -> dict:
        outputs = self.settle(inputs)
        self.commit(inputs)
        self.check_references()
        return outputs

    def settle(self, inputs: dict) -> dict:
        """This cycle's outputs (the state as at the start of the cycle); :meth:`commit`
        then takes the edge. A composition calls the two apart, to settle its other parts
        between them."""
        config, pool = self.config, self.pool
        free = len(pool.free)
        low = free <= config.low_water
        decision = self._decide(low)
        hold = self.ports["hold__payload"].unpack(inputs["hold__payload"])
        held, hold_ready = self._hold(hold, decision)
        held = held if inputs["hold__valid"] else None
        reuse = self._unpack(inputs, "reuse")
        deciding = decision is not None
        reuse_taken = reuse if reuse is not None and not deciding else None
        unmap = self._unpack(inputs, "unmap")
        unmap_taken = unmap if unmap is not None and not deciding and reuse is None else None
        retired = self._retired(decision, reuse_taken)
        outputs = {
            "result__ready": int(free > sum(entry is not None for entry in self.pipe)),
            "reuse__ready": int(not deciding),
            "hold__ready": int(hold_ready),
            "held__valid": int(held is not None),
            "held__payload": None if held is None else self.ports["held__payload"].pack(held),
            "unmap__ready": int(not deciding and reuse is None),
            "retired__valid": int(retired is not None),
            "retired__payload": (None if retired is None
                                 else self.ports["retired__payload"].pack(retired)),
            "in_use": config.pregs - free,
            "low_register": int(low),
            "verify_cached": int(deciding and decision["cached"]),
        }
        if config.extra_query:
            queries = self.ports["query"].unpack(inputs["query"])
            outputs["saturated"] = sum(1 << q for q, preg in enumerate(queries)
                                       if self._saturated(preg))
        result = self._unpack(inputs, "result") if outputs["result__ready"] else None
        self._plan = (decision, result, held, reuse_taken, unmap_taken, low)
        return outputs

    def commit(self, inputs: dict, extra=None) -> None:
        """The clock edge of the cycle :meth:`settle` answered (``inputs``: the same, with
        the extra ``inc`` / ``dec`` ports when configured; or ``extra``, their registers as
        two lists)."""
        decision, result, held, reuse_taken, unmap_taken, low = self._plan
        if extra is None:
            extra = [self._extra(inputs, port) for port in ("inc", "dec")]
        self._edge(decision, result, held, self._unpack(inputs, "drop"), reuse_taken,
                   unmap_taken, low, extra)

    def _extra(self, inputs, port) -> list:
        """The registers named on the extra reference port ``port`` (in port order)."""
        if not getattr(self.config, f"extra_{port}"):
            return []
        return [ref.preg for ref in self.ports[port].unpack(inputs[port]) if ref.valid]

    def _decide(self, low):
        """The decision for ``pipe[1]`` (``None`` when empty), before the edge."""
        config, pool = self.config, self.pool
        leaving = self.pipe[1]
        answer = self.vsb.answer
        probe = answer[1] if answer is not None else 0
        if leaving is None:
            return None
        row = leaving["row"]
        preg, valid, pin = self.mapping[row]
        divergent = leaving["divergent"]
        index = config.alloc.vsb.index(leaving["hash"])
        verify = (answer is not None and answer[0] and not self._saturated(probe)
                  and not (self.wrote and self.wrote_index == index))
        pinned = divergent and valid and pin
        line = self.cache.find(probe) if verify and self.cache is not None else None
        cached = line is not None
        stored = self.cache.lines[line][1] if cached else self.regfile[probe]
        shared = verify and stored == leaving["value"]
        fill = (probe, stored) if verify and self.cache is not None and not cached else None
        failed = verify and not shared
        allocates = not pinned and not shared
        new = None
        if allocates:
            if not pool.free:
                raise LeakError("an allocation found the pool empty despite result.ready")
            new = pool.free[0]
        if pinned:
            outcome, target = Outcome.PINNED, preg
        elif divergent:
            outcome, target = Outcome.DUMMY_MOV, new
        elif shared:
            outcome, target = Outcome.SHARED, probe
        else:
            outcome, target = (Outcome.VERIFY_FAILED if failed else Outcome.ALLOCATED), new
        return {"leaving": leaving, "row": row, "old": (preg, valid, pin), "index": index,
                "outcome": outcome, "target": target, "new": new, "shared": shared,
                "cached": cached, "fill": fill,
                "pinned": pinned, "installs": allocates and not divergent and not low,
                "evicts_own": low and allocates and not divergent}

    def _hold(self, hold, decision):
        """``held`` (the register a hold of ``hold``, if valid and taken, references) and
        ``ready`` (shown whether or not the hold is valid)."""
        preg, valid, _ = self.mapping[self.row(hold)]
        if not valid:
            return None, True
        clash = decision is not None and decision["shared"] and decision["target"] == preg
        if self._saturated(preg) or clash:
            return None, False
        return preg, True

    def _retired(self, decision, reuse):
        if decision is not None:
            leaving = decision["leaving"]
            return {"warp": leaving["warp"], "reg": leaving["reg"],
                    "preg": decision["target"], "outcome": decision["outcome"]}
        if reuse is not None:
            return {"warp": reuse.warp, "reg": reuse.reg, "preg": reuse.preg,
                    "outcome": Outcome.REUSED}
        return None

    def _edge(self, decision, result, held, drop, reuse, unmap, low, extra=((), ())):
        """The clock edge: VSB, pool, register file, mappings, pipeline. ``inc`` and
        ``dec`` are the pool's ports in order (inc: verify hit, VSB, hold; dec: old mapping,
        VSB, drop, unmap): registers released in one cycle queue in port order."""
        config = self.config
        inc, dec = [None] * 3, [None] * 4
        install = evict = None
        if decision is not None:
            inc[0], dec[0] = self._retire(decision)
            self._cache_edge(decision)
            if decision["installs"]:
                install = _Install(decision["leaving"]["hash"], decision["new"])
            elif decision["evicts_own"]:
                evict = decision["index"]
        elif low:
            evict = self.sweep
            self.sweep = (self.sweep + 1) % config.entries
        if held is not None:
            inc[2] = held
            self.holds[held] += 1
        if reuse is not None:
            if self.reuse_from_holds:
                self._take_hold(reuse.preg, "reuse")
            dec[0] = self._remap(self.row(reuse), (reuse.preg, 1, 0))
        if drop is not None:
            self._take_hold(drop, "drop")
            dec[2] = drop
        if unmap is not None:
            preg, _, pin = self.mapping[self.row(unmap)]
            dec[3] = self._remap(self.row(unmap), (preg, 0, pin))
        table = self.pipe[0]
        lookup = table["hash"] if table is not None and not table["divergent"] else None
        vsb = self.vsb.advance(lookup, install=install, evict=evict)
        inc[1], dec[1] = vsb["inc"], vsb["dec"]
        self.wrote = install is not None or evict is not None
        self.wrote_index = decision["index"] if install is not None else (evict or 0)
        self.pool._edge(decision["new"] if decision is not None else None,
                        [p for p in inc if p is not None] + list(extra[0]),
                        [p for p in dec if p is not None] + list(extra[1]))
        self.pipe.appendleft(self._entering(result))
        self._last = f"decision={decision} inc={inc} dec={dec}"

    def _cache_edge(self, decision):
        """The verify cache's edge: a bank verify-read fills it, the register-file write
        (if any) invalidates its register's line."""
        if self.cache is None:
            return
        written = set()
        if decision["pinned"]:
            written.add(decision["old"][0])
        elif not decision["shared"]:
            written.add(decision["new"])
        self.cache.update(decision["fill"], written)

    def _remap(self, row, entry):
        """Set mapping ``row`` to ``entry``; the old register if it was mapped (its
        reference is dropped)."""
        preg, valid, _ = self.mapping[row]
        self.mapping[row] = entry
        return preg if valid else None

    def _retire(self, decision):
        """Write, map and count the decided result: the verify hit's increment and the old
        mapping's decrement (``None``: none)."""
        leaving, row = decision["leaving"], decision["row"]
        preg, valid, _ = decision["old"]
        if decision["pinned"]:
            self.regfile[preg] = self._merge(self.regfile[preg], leaving)
            return None, None
        if leaving["divergent"]:
            old = self.regfile[preg] if valid else 0
            self.regfile[decision["new"]] = self._merge(old, leaving)
        elif not decision["shared"]:
            self.regfile[decision["new"]] = leaving["value"]
        released = self._remap(row, (decision["target"], 1, int(leaving["divergent"])))
        return (decision["target"] if decision["shared"] else None), released

    def _merge(self, old, leaving):
        """The active lanes of the result over ``old`` (the dummy MOV's copy)."""
        width = self.config.data_width
        lane_mask = (1 << width) - 1
        merged = 0
        for lane in range(self.config.lanes):
            source = leaving["value"] if leaving["mask"] >> lane & 1 else old
            merged |= source & (lane_mask << lane * width)
        return merged

    def _entering(self, result):
        if result is None:
            return None
        config = self.config
        value = self.values.pack(result.value)
        full = (1 << config.lanes) - 1
        return {"warp": result.warp, "reg": result.reg, "row": self.row(result),
                "value": value, "mask": result.mask, "divergent": result.mask != full,
                "hash": h3(value, self.masks)}

    def _take_hold(self, preg, port):
        if self.holds[preg] <= 0:
            raise ProtocolError(f"{port} names register {preg}, which has no in-flight "
                                "source reference")
        self.holds[preg] -= 1

    def holders(self) -> Counter:
        """Per register, its holders: valid mappings, VSB entries, in-flight sources."""
        counted = Counter(+self.holds)
        counted.update(preg for preg, valid, _ in self.mapping if valid)
        counted.update(preg for _, preg in self.vsb.entries.values())
        return counted

    def check_references(self, holders: Counter | None = None) -> None:
        """Every register free exactly once or referenced exactly as counted (the pool's
        counts include registers returning to the pool at zero); ``holders``: a
        composition's, else :meth:`holders`."""
        pool, config = self.pool, self.config
        holders = self.holders() if holders is None else holders
        counts = {preg: count for preg, count in pool.counts.items() if count}
        if counts != dict(holders):
            raise LeakError(f"counts {counts} differ from holders {dict(holders)}")
        free = Counter(pool.free) + Counter(pool.returning)
        for preg in range(config.pregs):
            if free[preg] != (preg not in holders):
                raise LeakError(f"register {preg}: free {free[preg]} times, "
                                f"{holders[preg]} holders")
        self.checks += 1

    def line_trace(self) -> str:
        return f"pipeline: mapping={self.mapping} {self._last} {self.pool.line_trace()}"


class _Install:
    """An install of the VSB's golden model: ``hash``, ``preg``, never divergent."""

    divergent = 0

    def __init__(self, hash_value, preg):
        self.hash, self.preg = hash_value, preg

