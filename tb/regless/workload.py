"""A warp scheduler, register units and L1 around one RegLess shard, running random regions.

:func:`run_regions` is a stimulus (see :mod:`gpurf.tb.harness`): it plays everything outside the
shard — the metadata store answering ``want`` with region descriptors, a GTO-like scheduler
issuing the regions' instructions (reads, reserves, writes 1-10 cycles after the issue,
releases at last use, ``issue`` / ``written`` reports), and L1 with a golden memory and a
random latency — and checks that every value read equals the value last written to that
register. Registers start in L1 with random values; values written follow the compressor's
patterns or not, at random.
"""

from collections import Counter, deque
from dataclasses import dataclass, field

from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import L1Op, RegionWord

__all__ = ["Instruction", "Region", "run_regions", "warp_program"]


@dataclass
class Instruction:
    sources: list[int]
    dest: int | None


@dataclass
class Region:
    """A region of one warp: its instructions, then what the compiler annotates."""

    instructions: list[Instruction]
    inputs: list[int] = field(default_factory=list)
    erase: set[int] = field(default_factory=set)
    """Registers dead after their last read here (erased; invalidated in the next region)."""
    invalidate: list[int] = field(default_factory=list)


def warp_program(config: ShardConfig, rng, regions: int, warp: int,
                 size: tuple[int, int] = (2, 5)) -> list[Region]:
    """Random regions of ``size`` (least, most) registers over the warp's registers, then
    regions reading every live register the program wrote (three per region)."""
    live = set(range(config.regs))
    program, dead, touched = [], [], set()
    for _ in range(regions):
        region = _random_region(config, rng, live, warp, size)
        region.invalidate, dead = dead, sorted(region.erase)
        written = {insn.dest for insn in region.instructions if insn.dest is not None}
        live = (live | written) - region.erase
        touched |= written
        program.append(region)
    for chunk in _chunks(sorted(live & touched), 3):
        program.append(_annotate(Region([Instruction(chunk, None)]), set()))
    return program


def _random_region(config, rng, live, warp, size) -> Region:
    """``size`` registers (as many as fit in the OSU's banks), 1-6 instructions."""
    per_bank = config.lines // config.banks
    while True:
        regs = rng.sample(range(config.regs), min(config.regs, rng.randint(*size)))
        banks = [(warp + r) & (config.banks - 1) for r in regs]
        if max(banks.count(b) for b in banks) <= per_bank:
            break
    defined = {r for r in regs if r in live}
    instructions = []
    for _ in range(rng.randint(1, 6)):
        readable = sorted(defined)
        sources = rng.sample(readable, min(len(readable), rng.randint(0, 2)))
        dest = rng.choice(regs) if rng.random() < 0.8 else None
        instructions.append(Instruction(sources, dest))
        if dest is not None:
            defined.add(dest)
    region = Region(instructions)
    return _annotate(region, {r for r in defined if rng.random() < 0.2})


def _annotate(region: Region, dying: set[int]) -> Region:
    """Inputs (read before written) and, of the dying registers, those whose last access is
    a read (a register last written is evicted by the write's last-use flag)."""
    written, inputs, last = set(), [], {}
    for k, insn in enumerate(region.instructions):
        for r in insn.sources:
            if r not in written and r not in inputs:
                inputs.append(r)
            last[r] = ("read", k)
        if insn.dest is not None:
            written.add(insn.dest)
            last[insn.dest] = ("write", k)
    region.inputs = inputs
    region.erase = {r for r in dying if last.get(r, ("", 0))[0] == "read"}
    return region


def _chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def run_regions(params, rng, cycles, *, warps=None, regions=3, size=(2, 5), limit=200_000,
                stats=None, barriers=0.0):
    """The shard running ``regions`` random regions (plus check regions) on each warp to
    completion; fails if a value read differs from the last one written or after ``limit``
    cycles. ``stats``, a dict, receives the counts of reads checked, preload entries and
    cycles. ``barriers``: per cycle, the chance a random warp is held at a barrier
    (``at_barrier``), each held warp released with a chance of 0.2 per cycle."""
    config = ShardConfig(**params)
    world = _World(config, rng, warps or config.warps, regions, size)
    world.barriers = barriers
    for _ in range(limit):
        if world.finished():
            if stats is not None:
                stats.update(world.counts, cycles=world.now)
            return
        outputs = yield world.inputs()
        world.observe(outputs)
    raise AssertionError(f"shard workload did not finish in {limit} cycles: {world.status()}")


PATTERNS = ("constant", "stride1", "stride4", "half1", "half4", "random", "near")


def warp_value(config: ShardConfig, rng) -> list[int]:
    """Lanes of a value: one of the compressor's patterns, a near miss or random."""
    lanes, mask, half = config.lanes, (1 << config.data_width) - 1, config.lanes // 2
    kind, b0, b1 = rng.choice(PATTERNS), rng.getrandbits(32) & mask, rng.getrandbits(32) & mask
    stride = 4 if kind in ("stride4", "half4") else 0 if kind == "constant" else 1
    if kind == "random":
        return [rng.getrandbits(32) & mask for _ in range(lanes)]
    if kind in ("half1", "half4"):
        return [((b0 if i < half else b1) + stride * (i % half)) & mask for i in range(lanes)]
    value = [(b0 + stride * i) & mask for i in range(lanes)]
    if kind == "near":
        value[rng.randrange(lanes)] ^= 1 << rng.randrange(config.data_width)
    return value


class _L1:
    """L1 with a golden memory: register lines and compressed lines, reads answered in order
    after a random latency, a random ``ready``."""

    def __init__(self, config: ShardConfig, rng, values):
        self.config, self.rng = config, rng
        self.ports = config.codecs
        self.registers = dict(values)
        """Register lines by ``(warp, reg)`` and compressed lines by number, packed as the
        ``l1_response`` payload that answers a read."""
        self.compressed: dict[int, int] = {}
        self.answers: deque = deque()
        self.ready = 1

    def inputs(self, now: int) -> dict:
        self.ready = int(self.rng.random() < 0.7)
        due = self.answers and self.answers[0][0] <= now
        return {"l1_request__ready": self.ready, "l1_response__valid": int(bool(due)),
                "l1_response__payload": self.answers[0][1] if due else 0}

    def observe(self, now: int, inputs: dict, outputs: dict) -> None:
        if inputs["l1_response__valid"] and outputs["l1_response__ready"]:
            self.answers.popleft()
        if outputs["l1_request__valid"] and self.ready:
            self._request(now, self.ports["l1_request__payload"].unpack(
                outputs["l1_request__payload"]))

    def _request(self, now, request):
        addr = request.addr
        store = self.compressed if request.compressed else self.registers
        key = addr if request.compressed else self._ref(addr)
        if request.op == L1Op.READ.value:
            if key not in store and not request.compressed:
                raise AssertionError(f"L1 read of register {key}, which L1 does not hold")
            start = max([now] + [t for t, _ in self.answers])
            self.answers.append((start + self.rng.randint(1, 12), store.get(key, 0)))
        elif request.op == L1Op.WRITE.value:
            store[key] = self.ports["l1_response__payload"].pack(request.data)
        else:
            store.pop(key, None)

    def _ref(self, addr) -> tuple[int, int]:
        """The register of a register line's ``addr`` (a packed ``{warp, reg}``, as the
        ``read`` port's payload)."""
        ref = self.ports["read__0__payload"].unpack(addr)
        return ref.warp, ref.reg


class _Warp:
    """The scheduler's view of one warp: its program, what it has been sent and runs."""

    def __init__(self, number, program):
        self.number, self.program = number, program
        self.sent = 0
        """Regions whose descriptors the CM took."""
        self.started = 0
        self.phase = "waiting"
        self.pc = 0

    @property
    def region(self) -> Region:
        return self.program[self.started - 1]


class _World:
    """Everything outside the shard; ``inputs()`` for a cycle, ``observe()`` its outputs."""

    def __init__(self, config: ShardConfig, rng, warps: int, regions: int, size):
        self.config, self.rng, self.now = config, rng, 0
        self.ports = config.codecs
        self.values = {(w, r): warp_value(config, rng)
                       for w in range(config.warps) for r in range(config.regs)}
        self.l1 = _L1(config, rng, {k: self._pack(v) for k, v in self.values.items()})
        self.warps = [_Warp(w, warp_program(config, rng, regions, w, size) if w < warps else [])
                      for w in range(config.warps)]
        self.exited: set[int] = set()
        self.words: deque = deque()
        self.streaming = False
        """The CM took a header and waits for the region's entries."""
        self.steps: deque = deque()
        self.writes: list = []
        self.pending: set = set()
        self.reads: deque = deque()
        """``(cycle, read port, warp, reg)`` of the reads answered at ``cycle``."""
        self.presented: list = []
        """``(index in steps, port)`` of the steps offered this cycle (port ``None``: the
        issue)."""
        self.ins: dict = {}
        self.want = None
        self.eligible = 0
        self.counts = Counter()
        self.barriers = 0.0
        self.at_barrier = 0
        """The warps held at a barrier (a mask)."""

    # --- per cycle ---------------------------------------------------------------------

    def finished(self) -> bool:
        return (len(self.exited) == len(self.warps) and not self.writes and not self.reads
                and not self.steps)

    def inputs(self) -> dict:
        ins = self.l1.inputs(self.now)
        self._region_word(ins)
        self._front_end(ins)
        self._write(ins)
        if self.barriers:
            self._barrier(ins)
        self.ins = ins
        return ins

    def _barrier(self, ins):
        warps = self.config.warps
        held = {w for w in range(warps) if self.at_barrier >> w & 1 and self.rng.random() >= 0.2}
        if self.rng.random() < self.barriers:
            held.add(self.rng.randrange(warps))
        self.at_barrier = sum(1 << w for w in held)
        ins["at_barrier"] = self.at_barrier

    def observe(self, outputs: dict) -> None:
        ins, now = self.ins, self.now
        if outputs["protocol_error"]:
            raise AssertionError(f"cycle {now}: the OSU flagged a protocol error")
        self._check_read(outputs)
        self.l1.observe(now, ins, outputs)
        if ins.get("region__valid") and outputs["region__ready"]:
            self._word_taken()
        self._step_taken(ins, outputs)
        self._track_eligible(outputs)
        self.want = (self.ports["want__payload"].unpack(outputs["want__payload"]).warp
                     if outputs["want__valid"] else None)
        self.now += 1

    def status(self) -> str:
        return (f"exited {sorted(self.exited)}, warps "
                + ", ".join(f"{w.number}:{w.phase}@{w.started}/{w.sent}" for w in self.warps))

    # --- the metadata store ------------------------------------------------------------

    def _region_word(self, ins):
        """The next region of the warp ``want`` names; until the CM takes the header, the
        header follows ``want``."""
        if not self.streaming:
            self.words = deque(self._descriptor(self.warps[self.want])
                               if self.want is not None else ())
        if self.words:
            ins["region__valid"] = 1
            ins["region__payload"] = self.words[0]

    def _descriptor(self, warp: _Warp) -> list[int]:
        banks, pack = self.config.banks, self.ports["region__payload"].pack
        if warp.sent == len(warp.program):
            return [pack({"kind": RegionWord.HEADER, "warp": warp.number, "done": 1})]
        region = warp.program[warp.sent]
        usage = [0] * banks
        for r in _registers(region):
            usage[(warp.number + r) & (banks - 1)] += 1
        entries = ([(RegionWord.INVALIDATE, r) for r in region.invalidate]
                   + [(RegionWord.PRELOAD, r) for r in region.inputs])
        header = pack({"kind": RegionWord.HEADER, "warp": warp.number,
                       "n_entries": len(entries), "bank_usage": usage})
        return [header] + [pack({"kind": kind, "warp": warp.number, "reg": r})
                           for kind, r in entries]

    def _word_taken(self):
        word = self.ports["region__payload"].unpack(self.words.popleft())
        if word.kind == RegionWord.HEADER.value:
            warp = self.warps[word.warp]
            if word.done:
                self.exited.add(warp.number)
            else:
                warp.sent += 1
        else:
            self.counts[RegionWord(word.kind).name.lower()] += 1
        self.streaming = bool(self.words)

    # --- the scheduler and register units ------------------------------------------------

    def _track_eligible(self, outputs):
        self.eligible = outputs["eligible"]
        for warp in self.warps:
            bit = (self.eligible >> warp.number) & 1
            if warp.phase == "draining" and not bit:
                warp.phase = "waiting"
            elif warp.phase == "waiting" and bit:
                warp.phase, warp.pc = "running", 0
                warp.started += 1

    def _front_end(self, ins):
        """Present the leading steps of the planned instructions at once, each on its own
        port (the OSU's ``read`` and ``release`` arrays); a release, a reserve and an
        ``issue`` wait until every earlier step was taken (a release must not overtake its
        read, nor the destination's write, planned from the reserve, a source's read)."""
        if not self.steps:
            self._next_instruction()
        self.presented = []
        used = Counter()
        for index, step in enumerate(self.steps):
            kind, warp = step[0], step[1]
            if kind in ("release", "reserve", "issue") and index:
                break
            if kind == "issue":
                ins["issue__valid"] = 1
                ins["issue__payload"] = self.ports["issue__payload"].pack(
                    {"warp": warp, "has_dst": int(step[2] is not None),
                     "dst_bank": (warp + (step[2] or 0)) & (self.config.banks - 1),
                     "last": step[3]})
                self.presented.append((index, None))
                break
            port = used[kind]
            if port == self.config.osu.port_count(kind):
                break
            used[kind] += 1
            name = f"{kind}__{port}"
            fields = {"warp": warp, "reg": step[2]}
            if kind == "release":
                fields["erase"] = step[3]
            elif kind == "reserve":
                fields["last_use"] = step[3]
            ins[f"{name}__valid"] = 1
            ins[f"{name}__payload"] = self.ports[f"{name}__payload"].pack(fields)
            self.presented.append((index, name))

    def _next_instruction(self):
        running = [w for w in self.warps if w.phase == "running"]
        for warp in running:
            insn = warp.region.instructions[warp.pc]
            if any((warp.number, r) in self.pending for r in [*insn.sources, insn.dest]):
                continue
            self._plan(warp, insn)
            return

    def _plan(self, warp: _Warp, insn: Instruction):
        region, w, k = warp.region, warp.number, warp.pc
        last = _last_access(region)
        for r in insn.sources:
            self.steps.append(("read", w, r))
            if last[r] == ("read", k):
                self.steps.append(("release", w, r, int(r in region.erase)))
        if insn.dest is not None:
            self.steps.append(("reserve", w, insn.dest, int(last[insn.dest] == ("write", k))))
            self.pending.add((w, insn.dest))
        final = k == len(region.instructions) - 1
        self.steps.append(("issue", w, insn.dest, int(final)))
        warp.pc += 1
        if final:
            warp.phase = "draining"

    def _step_taken(self, ins, outputs):
        taken = []
        for index, name in self.presented:
            step = self.steps[index]
            if name is not None and not outputs[f"{name}__ready"]:
                continue
            taken.append(index)
            kind, w = step[0], step[1]
            if kind == "read":
                self.reads.append((self.now + 1, name, w, step[2]))
            elif kind == "reserve":
                resp = name.replace("reserve", "reserve_resp", 1) + "__payload"
                reserved = self.ports[resp].unpack(outputs[resp])
                value = warp_value(self.config, self.rng)
                due = self.now + self.rng.randint(2, 11)
                self.writes.append([due, w, step[2], reserved.line, value, step[3]])
                self.writes.sort(key=lambda write: write[0])
        for index in reversed(taken):
            del self.steps[index]

    def _write(self, ins):
        if not self.writes or self.writes[0][0] > self.now:
            return
        _, w, r, line, value, last_use = self.writes.pop(0)
        banks = self.config.banks
        port = f"write__{self.rng.randrange(self.config.osu.write_ports)}"
        ins[f"{port}__valid"] = 1
        ins[f"{port}__payload"] = self.ports[f"{port}__payload"].pack(
            {"line": line, "data": value, "last_use": last_use})
        ins["written__valid"] = 1
        ins["written__payload"] = self.ports["written__payload"].pack(
            {"warp": w, "bank": (w + r) & (banks - 1)})
        self.values[(w, r)] = value
        self.pending.discard((w, r))

    def _check_read(self, outputs):
        while self.reads and self.reads[0][0] == self.now:
            _, name, w, r = self.reads.popleft()
            resp = name.replace("read", "read_resp", 1)
            got = self.ports[f"{resp}__payload"].unpack(outputs[f"{resp}__payload"] or 0)
            if not outputs[f"{resp}__valid"] or got != self.values[(w, r)]:
                raise AssertionError(f"cycle {self.now}: warp {w} read r{r} = {got}, "
                                     f"last written {self.values[(w, r)]}")
            self.counts["reads"] += 1

    def _ref(self, warp, reg) -> int:
        return self.ports["read__0__payload"].pack({"warp": warp, "reg": reg})

    def _pack(self, value) -> int:
        return self.ports["l1_response__payload"].pack(value)


def _registers(region: Region) -> set[int]:
    return {r for insn in region.instructions for r in [*insn.sources, insn.dest]
            if r is not None}


def _last_access(region: Region) -> dict:
    last = {}
    for k, insn in enumerate(region.instructions):
        for r in insn.sources:
            last[r] = ("read", k)
        if insn.dest is not None:
            last[insn.dest] = ("write", k)
    return last
